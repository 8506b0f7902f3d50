/* The expected views (digests as the nodes print them, roots, trees, hop
 * sums), the paper's models, and the agreement verdicts: each kind of
 * disagreement is caught and named. */
#include <string.h>

#include "membership/membership.h"
#include "qemu/faults/emu_agree.h"
#include "qemu/faults/emu_model.h"
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
    return check_report("emu.agree");
}
