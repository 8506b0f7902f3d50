/* The expected views (digests as the nodes print them, roots, trees, hop
 * sums), the paper's models, and the agreement verdicts: each kind of
 * disagreement is caught and named.  The torus's sides (emu_sides.h): twin
 * cables, mesh edges, dead nodes as cuts, the primary rule's majority and
 * tie, every-side's views of each side. */
#include <string.h>

#include "membership/membership.h"
#include "qemu/faults/emu_agree.h"
#include "qemu/faults/emu_model.h"
#include "qemu/faults/emu_sides.h"
#include "tests/check.h"

static struct emu_model_params params;

static void setup(unsigned radix, enum membership_layout_kind layout, uint32_t side,
                  uint32_t initial)
{
    uint32_t size[3] = {side, side, side};
    bool mesh[3] = {false, false, false};
    memset(&params, 0, sizeof params);
    CHECK(torus_geometry_init(&params.geometry, 3, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    params.layout = layout;
    params.radix = radix;
    params.initial_members = initial;
}

static void members_except(bool *members, uint32_t count, uint32_t a, uint32_t b)
{
    for (uint32_t i = 0; i < count; i++)
        members[i] = i != a && i != b;
}

static void test_views(void)
{
    setup(4, MEMBERSHIP_LAYOUT_RADIX, 2, 8);
    bool members[8];
    struct emu_model_tree tree;
    /* Digests printed by QEMU nodes of a 2x2x2 torus (radix 4). */
    members_except(members, 8, 99, 99);
    CHECK(emu_model_tree(&params, members, &tree));
    CHECK(tree.digest == 0x3fbc387a3d7380acull && tree.live == 8 && tree.root == 0);
    CHECK(tree.digest == membership_initial_digest(8));
    members_except(members, 8, 7, 99);
    CHECK(emu_model_tree(&params, members, &tree));
    CHECK(tree.digest == 0x5c77d99e64418d7bull && tree.live == 7 && tree.root == 0);
    /* 0 -> 1..4 (farthest: 3, 2 hops), 1 -> 5, 6 (farthest: 6, 3 hops). */
    CHECK(tree.model.levels == 3 && tree.model.level_max_hops[1] == 2 && tree.model.level_max_hops[2] == 3);
    CHECK(tree.model.hop_sum == 5);
    members_except(members, 8, 0, 7);
    CHECK(emu_model_tree(&params, members, &tree));
    CHECK(tree.digest == 0xbe5771a71f5c40d4ull && tree.live == 6 && tree.root == 1);
    CHECK(emu_model_digest(&params, members) == tree.digest);
    members_except(members, 8, 0, 99);
    CHECK(emu_model_tree(&params, members, &tree) && tree.digest == 0xdd9c9043466e4d03ull);
    uint32_t first, last;
    emu_model_ends(&params, members, &first, &last);
    CHECK(first == 1 && last == 7);

    members_except(members, 8, 7, 99);
    CHECK(emu_model_tree(&params, members, &tree));
    ts_model_predict(&tree.model, 100000.0, 1000.0);
    CHECK(tree.model.base_ns == 2.0 * 100000.0 * 2 + 1000.0 * 3);     /* 2 L (H-1) + O_cp H */
    CHECK(tree.model.distance_ns == 2.0 * 100000.0 * 5 + 1000.0 * 3); /* 2 L S + O_cp H */
    CHECK(emu_model_measure_ocp_ns(&params) > 0.0);

    /* A spare outside the initial view changes the digest when it joins. */
    setup(2, MEMBERSHIP_LAYOUT_TORUS, 2, 7);
    members_except(members, 8, 7, 99);
    CHECK(emu_model_digest(&params, members) == membership_initial_digest(7));
    members_except(members, 8, 99, 99);
    CHECK(emu_model_digest(&params, members) ==
          (membership_initial_digest(7) ^ membership_id_digest(7)));
    CHECK(emu_model_tree(&params, members, &tree) && tree.model.levels == 4 && tree.live == 8);
    /* Snake order keeps neighbours in the layout one hop apart. */
    CHECK(tree.model.level_max_hops[1] >= 1);

    /* 512 nodes, radix 4: H = 6 (1+4+16+64+256 = 341 < 512). */
    setup(4, MEMBERSHIP_LAYOUT_RADIX, 8, 512);
    static bool big[512];
    members_except(big, 512, 99999, 99999);
    CHECK(emu_model_tree(&params, big, &tree) && tree.model.levels == 6 && tree.live == 512);
    CHECK(tree.model.hop_sum >= 5 && tree.model.hop_sum <= 5 * 12);
}

static struct emu_view_answer answers[8];
static bool expected[8];

static void all_agree(uint64_t epoch, uint64_t digest, int64_t root, uint32_t live)
{
    memset(answers, 0, sizeof answers);
    for (uint32_t i = 0; i < 8; i++) {
        if (!expected[i])
            continue;
        answers[i].asked = answers[i].answered = answers[i].member = true;
        answers[i].epoch = answers[i].stable_epoch = epoch;
        answers[i].digest = digest;
        answers[i].root = root;
        answers[i].live = live;
    }
}

static void test_agreement(void)
{
    setup(4, MEMBERSHIP_LAYOUT_RADIX, 2, 8);
    struct emu_model_tree tree;
    struct emu_agreement verdict;
    members_except(expected, 8, 0, 99); /* the root was killed */
    CHECK(emu_model_tree(&params, expected, &tree));
    all_agree(5, tree.digest, 1, 7);
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK(verdict.passed && verdict.members == 7 && verdict.asked == 7);
    CHECK(verdict.epoch == 5 && verdict.root == 1 && verdict.reason[0] == '\0');

    answers[3].epoch = 4;
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK(!verdict.passed);
    CHECK_CONTAINS(verdict.reason, "nodes 1 and 3 disagree: epoch 5");

    all_agree(5, tree.digest, 1, 7);
    answers[6].answered = false;
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK(!verdict.passed);
    CHECK_CONTAINS(verdict.reason, "node 6 is expected in the view but did not answer");

    all_agree(5, tree.digest, 1, 7);
    answers[2].asked = answers[2].answered = false;
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK(!verdict.passed && strstr(verdict.reason, "node 2 is expected") != NULL);

    all_agree(5, tree.digest, 1, 7);
    answers[4].joining = true;
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK_CONTAINS(verdict.reason, "node 4 is expected in the view but says member=1 joining=1");

    /* The dead root still answering as a member of an old view. */
    all_agree(5, tree.digest, 1, 7);
    answers[0] = answers[1];
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK_CONTAINS(verdict.reason, "node 0 says it is a member (epoch 5) but was expected out");

    /* Everybody agrees, on the wrong set. */
    all_agree(5, tree.digest ^ 1u, 1, 7);
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK_CONTAINS(verdict.reason, "is not the expected member set (7 live, digest 0x");
    all_agree(5, tree.digest, 2, 7);
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK_CONTAINS(verdict.reason, "the view's root is 2 (expected 1");

    memset(answers, 0, sizeof answers);
    emu_agree_evaluate(answers, 8, expected, &tree, &verdict);
    CHECK(!verdict.passed);
}

/* ---- sides ---- */

static struct torus_geometry ring;

static void ring_of(uint32_t size, bool mesh)
{
    uint32_t sizes[1] = {size};
    bool meshes[1] = {mesh};
    CHECK(torus_geometry_init(&ring, 1, sizes, meshes, NULL) == TORUS_GEOMETRY_OK);
}

/* Cuts the cable at a's link (both ends), as emu_inject_apply does. */
static void cut_cable(const struct torus_geometry *g, uint16_t *cut, uint32_t a, unsigned link)
{
    uint32_t peer = torus_geometry_neighbour(g, a, link);
    CHECK(peer != TORUS_RANK_NONE);
    cut[a] = (uint16_t)(cut[a] | (1u << link));
    cut[peer] = (uint16_t)(cut[peer] | (1u << torus_geometry_opposite_link(link)));
}

static void test_sides_found(void)
{
    bool running[8];
    uint16_t cut[8];
    uint32_t side[8];
    memset(cut, 0, sizeof cut);
    /* 2x2x2 with 3, 0 and 6 dead: node 2's neighbours are exactly those. */
    setup(4, MEMBERSHIP_LAYOUT_RADIX, 2, 8);
    members_except(running, 8, 3, 0);
    running[6] = false;
    CHECK(emu_sides_find(&params.geometry, running, cut, side) == 2);
    CHECK(side[1] == 0 && side[4] == 0 && side[5] == 0 && side[7] == 0 && side[2] == 1);
    CHECK(side[0] == EMU_SIDE_NONE && side[3] == EMU_SIDE_NONE && side[6] == EMU_SIDE_NONE);
    /* Only 3 and 6 dead: 0 still joins 2 to the rest. */
    members_except(running, 8, 3, 6);
    CHECK(emu_sides_find(&params.geometry, running, cut, side) == 1);

    /* A ring of two: twin cables; one cut leaves the other. */
    ring_of(2, false);
    members_except(running, 2, 99, 99);
    memset(cut, 0, sizeof cut);
    cut_cable(&ring, cut, 0, torus_geometry_link(0, TORUS_DIRECTION_PLUS));
    CHECK(emu_sides_find(&ring, running, cut, side) == 1);
    cut_cable(&ring, cut, 0, torus_geometry_link(0, TORUS_DIRECTION_MINUS));
    CHECK(emu_sides_find(&ring, running, cut, side) == 2 && side[0] == 0 && side[1] == 1);

    /* Four in a ring survive one cut (the wrap); four on a mesh do not. */
    ring_of(4, false);
    members_except(running, 4, 99, 99);
    memset(cut, 0, sizeof cut);
    cut_cable(&ring, cut, 1, torus_geometry_link(0, TORUS_DIRECTION_PLUS));
    CHECK(emu_sides_find(&ring, running, cut, side) == 1);
    ring_of(4, true);
    CHECK(torus_geometry_neighbour(&ring, 3, torus_geometry_link(0, TORUS_DIRECTION_PLUS)) ==
          TORUS_RANK_NONE);
    CHECK(emu_sides_find(&ring, running, cut, side) == 2);
    CHECK(side[0] == 0 && side[1] == 0 && side[2] == 1 && side[3] == 1);
    memset(cut, 0, sizeof cut);
    running[1] = false; /* a dead node on a mesh splits it too */
    CHECK(emu_sides_find(&ring, running, cut, side) == 2 && side[0] == 0 && side[2] == 1);
}

static void test_sides_expected(void)
{
    bool running[6], candidates[6], reference_members[6], want[6];
    uint16_t cut[6];
    uint32_t side[6];
    struct emu_sides_expectation e;
    ring_of(6, false);
    members_except(running, 6, 99, 99);
    members_except(candidates, 6, 99, 99);
    members_except(reference_members, 6, 99, 99);
    struct emu_sides_reference reference = {reference_members, 0, false};
    unsigned plus = torus_geometry_link(0, TORUS_DIRECTION_PLUS);
    /* Pairs: 2 of 6 each, no majority, no view. */
    memset(cut, 0, sizeof cut);
    cut_cable(&ring, cut, 1, plus);
    cut_cable(&ring, cut, 3, plus);
    cut_cable(&ring, cut, 5, plus);
    uint32_t sides = emu_sides_find(&ring, running, cut, side);
    CHECK(sides == 3);
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_NO_VIEW && e.sides == 3 && e.reference == 6);
    for (uint32_t id = 0; id < 6; id++)
        CHECK(!want[id]);
    /* Every side its own view under every-side. */
    emu_sides_expect(EMU_SIDES_EVERY_SIDE, 6, side, sides, candidates, &reference, want,
                     &e);
    CHECK(e.expect == EMU_AGREE_EACH_SIDE && e.sides == 3);
    for (uint32_t id = 0; id < 6; id++)
        CHECK(want[id]);
    /* 4 of 6 ({0..3}) hold the view; 4 and 5 are out. */
    memset(cut, 0, sizeof cut);
    cut_cable(&ring, cut, 3, plus);
    cut_cable(&ring, cut, 5, plus);
    sides = emu_sides_find(&ring, running, cut, side);
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_ONE_VIEW && e.primary == side[0] && e.kept == 4);
    CHECK(want[0] && want[3] && !want[4] && !want[5]);
    /* A joined node (not in the reference) rides with its side but does
     * not count for the majority: {3,4,5} keeps 2 of 5 without node 5. */
    reference_members[5] = false;
    candidates[1] = false; /* say it left */
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_ONE_VIEW && e.kept == 4 && e.reference == 5);
    CHECK(want[0] && !want[1] && want[2] && !want[5]);
    members_except(candidates, 6, 99, 99);
    members_except(reference_members, 6, 99, 99);

    /* Halves, 3 and 3: the tie goes to the reference's root. */
    memset(cut, 0, sizeof cut);
    cut_cable(&ring, cut, 2, plus);
    cut_cable(&ring, cut, 5, plus);
    sides = emu_sides_find(&ring, running, cut, side);
    CHECK(sides == 2);
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_ONE_VIEW && e.primary == side[0] && e.kept == 3);
    CHECK(want[2] && !want[3]);
    reference.root = 4;
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_ONE_VIEW && e.primary == side[4] && !want[0] && want[5]);
    /* With no view anywhere since, only a strict majority re-forms one. */
    reference.viewless = true;
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_NO_VIEW && !want[5]);
    reference.viewless = false;
    /* The root dead: its half no longer has half; nobody holds a view. */
    running[4] = false;
    sides = emu_sides_find(&ring, running, cut, side);
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_NO_VIEW);
    /* A tie without the root is no majority: a planted ">=" would pass it. */
    reference.root = 0;
    running[4] = true;
    running[0] = false;
    sides = emu_sides_find(&ring, running, cut, side);
    emu_sides_expect(EMU_SIDES_PRIMARY, 6, side, sides, candidates, &reference, want, &e);
    CHECK(e.expect == EMU_AGREE_NO_VIEW);
}

static void test_sides_evaluated(void)
{
    /* 2x2x2 under every-side with 3, 0, 6 dead: {1,4,5,7} and {2}. */
    setup(4, MEMBERSHIP_LAYOUT_RADIX, 2, 8);
    bool running[8], reference_members[8], candidates[8], side_expected[8];
    uint16_t cut[8];
    uint32_t side[8];
    memset(cut, 0, sizeof cut);
    members_except(running, 8, 3, 0);
    running[6] = false;
    members_except(reference_members, 8, 99, 99);
    memcpy(candidates, running, sizeof candidates);
    struct emu_sides_reference reference = {reference_members, 0, false};
    struct emu_sides_expectation e;
    uint32_t sides = emu_sides_find(&params.geometry, running, cut, side);
    emu_sides_expect(EMU_SIDES_EVERY_SIDE, 8, side, sides, candidates, &reference,
                     side_expected, &e);
    CHECK(e.expect == EMU_AGREE_EACH_SIDE && e.sides == 2);
    struct emu_model_tree big, alone, tree;
    bool only2[8];
    members_except(only2, 8, 99, 99);
    for (uint32_t id = 0; id < 8; id++)
        only2[id] = id == 2;
    memcpy(expected, side_expected, sizeof expected);
    expected[2] = false;
    CHECK(emu_model_tree(&params, expected, &big) && emu_model_tree(&params, only2, &alone));
    all_agree(9, big.digest, 1, 4);
    answers[2] = answers[1];
    answers[2].epoch = 10;
    answers[2].digest = alone.digest;
    answers[2].root = 2;
    answers[2].live = 1;
    struct emu_agreement verdict;
    CHECK(emu_sides_evaluate(&params, &e, side, sides, answers, 8, side_expected, &tree,
                             &verdict));
    CHECKF(verdict.passed, "%s", verdict.reason);
    CHECK(verdict.members == 5 && verdict.live == 4 && verdict.root == 1 && verdict.sides == 2);
    CHECK(verdict.expect == EMU_AGREE_EACH_SIDE && tree.live == 4);
    /* Node 2 still in the big view: its side's view is not its own. */
    answers[2] = answers[1];
    CHECK(emu_sides_evaluate(&params, &e, side, sides, answers, 8, side_expected, &tree,
                              &verdict));
    CHECK(!verdict.passed);
    CHECK_CONTAINS(verdict.reason, "the side of node 2 (1 expected): the view (epoch 9, 4 live");

    /* Under the primary policy, against all eight, {1,4,5,7} is half
     * without the root: no view.  Against the settled view after 3 and 0
     * died (root 1), it is 4 of 6: node 2 must be no member. */
    emu_sides_expect(EMU_SIDES_PRIMARY, 8, side, sides, candidates, &reference, side_expected,
                     &e);
    CHECK(e.expect == EMU_AGREE_NO_VIEW && e.reference == 8);
    members_except(reference_members, 8, 3, 0);
    reference.root = 1;
    emu_sides_expect(EMU_SIDES_PRIMARY, 8, side, sides, candidates, &reference, side_expected,
                     &e);
    CHECK(e.expect == EMU_AGREE_ONE_VIEW && e.kept == 4 && !side_expected[2]);
    CHECK(emu_sides_evaluate(&params, &e, side, sides, answers, 8, side_expected, &tree,
                             &verdict));
    CHECK_CONTAINS(verdict.reason, "node 2 says it is a member (epoch 9) but was expected out");
    answers[2].member = false;
    answers[2].joining = true;
    CHECK(emu_sides_evaluate(&params, &e, side, sides, answers, 8, side_expected, &tree,
                             &verdict));
    CHECKF(verdict.passed, "%s", verdict.reason);
    CHECK(verdict.expect == EMU_AGREE_ONE_VIEW && verdict.members == 4 && verdict.sides == 2);

    /* No view expected: any member fails it, nobody passes it. */
    struct emu_sides_expectation none = e;
    none.expect = EMU_AGREE_NO_VIEW;
    memset(side_expected, 0, sizeof side_expected);
    CHECK(emu_sides_evaluate(&params, &none, side, sides, answers, 8, side_expected, &tree,
                             &verdict));
    CHECK_CONTAINS(verdict.reason, "node 1 says it is a member (epoch 9) but no view was expected");
    for (uint32_t id = 0; id < 8; id++)
        answers[id].member = false;
    CHECK(emu_sides_evaluate(&params, &none, side, sides, answers, 8, side_expected, &tree,
                             &verdict));
    CHECKF(verdict.passed, "%s", verdict.reason);
    CHECK(verdict.members == 0 && verdict.expect == EMU_AGREE_NO_VIEW);
}

static void test_parse_answer(void)
{
    static struct event_line line;
    const char *text = "tori node=3 event=view-state t_ns=5 epoch=12 stable_epoch=11 root=-1 "
                       "live=0 digest=0x00ff member=0 joining=1";
    CHECK(event_line_parse(text, strlen(text), &line, NULL) == EVENT_LINE_OK);
    struct emu_view_answer a;
    memset(&a, 0, sizeof a);
    CHECK(emu_agree_parse_answer(&line, &a));
    CHECK(a.answered && a.epoch == 12 && a.stable_epoch == 11 && a.root == -1);
    CHECK(a.digest == 0xff && !a.member && a.joining);
    const char *bad = "tori node=3 event=view-state t_ns=5 epoch=12 stable_epoch=11 root=2 "
                      "live=8 digest=ff member=1 joining=0";
    CHECK(event_line_parse(bad, strlen(bad), &line, NULL) == EVENT_LINE_OK);
    CHECK(!emu_agree_parse_answer(&line, &a));
    uint64_t value;
    CHECK(emu_agree_parse_hex("0xDEADbeef", &value) && value == 0xdeadbeefull);
    CHECK(!emu_agree_parse_hex("0x", &value) && !emu_agree_parse_hex("0x12345678123456789", &value));
}

int main(void)
{
    test_views();
    test_agreement();
    test_parse_answer();
    test_sides_found();
    test_sides_expected();
    test_sides_evaluated();
    return check_report("emu.agree");
}
