/* Fault scripts: good scripts parse into sorted actions, every bad one is
 * refused with one line naming the item, and the checks against a torus
 * (ranges, spares, boards, links, order of events) catch what cannot
 * happen. */
#include <string.h>

#include "qemu/faults/emu_inject.h"
#include "tests/check.h"

#define NS_PER_MS 1000000ull

static char error[320];

/* A 3x3x3 torus: room for every node and link direction the parse tests name. */
static struct torus_geometry cube;

static void cube_init(void)
{
    uint32_t size[3] = {3, 3, 3};
    bool mesh[3] = {false, false, false};
    CHECK(torus_geometry_init(&cube, 3, size, mesh, NULL) == TORUS_GEOMETRY_OK);
}

static void expect_syntax_error(const char *text, const char *part)
{
    struct emu_script script;
    error[0] = '\0';
    CHECK(!emu_inject_parse(text, &cube, &script, error, sizeof error));
    CHECK_CONTAINS(error, part);
    CHECK(strchr(error, '\n') == NULL);
    CHECK(script.actions == NULL && script.count == 0);
}

static void test_parse(void)
{
    struct emu_script script;
    CHECK(emu_inject_parse("kill 3 at 2s; hang 5 at 4s for 1s; link 6 x+ off at 6s; "
                           "link 6 x+ on at 8s; reboot 2 at 9s; restart 3 at 11s; "
                           "join 8 at 12s;",
                           &cube, &script, error, sizeof error));
    CHECK(script.count == 8); /* the hang's "for" adds a resume */
    const struct emu_action *a = script.actions;
    CHECK(a[0].kind == EMU_ACTION_KILL && a[0].node == 3 && a[0].at_ns == 2000 * NS_PER_MS);
    CHECK(a[1].kind == EMU_ACTION_HANG && a[1].node == 5 && a[1].at_ns == 4000 * NS_PER_MS);
    CHECK(a[2].kind == EMU_ACTION_RESUME && a[2].node == 5 && a[2].at_ns == 5000 * NS_PER_MS);
    CHECK(a[3].kind == EMU_ACTION_LINK_OFF && a[3].node == 6 && a[3].link == 0);
    CHECK(a[4].kind == EMU_ACTION_LINK_ON && a[4].at_ns == 8000 * NS_PER_MS);
    CHECK(a[5].kind == EMU_ACTION_REBOOT && a[6].kind == EMU_ACTION_RESTART);
    CHECK(a[7].kind == EMU_ACTION_JOIN && a[7].node == 8 && a[7].at_ns == 12000 * NS_PER_MS);
    CHECK(strcmp(a[0].text, "kill 3 at 2s") == 0);
    CHECK_CONTAINS(a[2].text, "resume 5");
    char described[EMU_ACTION_TEXT_MAX];
    emu_action_describe(&a[3], described, sizeof described);
    CHECK(strcmp(described, "link 6 x+ off") == 0);
    emu_script_free(&script);

    /* Sorted by time; equal times keep the script's order. */
    CHECK(emu_inject_parse("kill 5 at 1.5s; kill 3 at 500ms; kill 4 at 1500ms; kill 1 at 0",
                           &cube, &script, error, sizeof error));
    CHECK(script.count == 4 && script.actions[0].node == 1 && script.actions[0].at_ns == 0);
    CHECK(script.actions[1].node == 3 && script.actions[1].at_ns == 500 * NS_PER_MS);
    CHECK(script.actions[2].node == 5 && script.actions[3].node == 4);
    CHECK(script.actions[2].at_ns == 1500 * NS_PER_MS);
    emu_script_free(&script);

    CHECK(emu_inject_parse("  link 2 z- off at 1m for 250ms  ", &cube, &script, error, sizeof error));
    CHECK(script.count == 2 && script.actions[0].link == 5);
    CHECK(script.actions[1].kind == EMU_ACTION_LINK_ON &&
          script.actions[1].at_ns == 60250 * NS_PER_MS);
    emu_script_free(&script);
}

/* Faults timed by the job wait beside the clock's schedule: by iteration
 * in on_progress, by recovery in on_recovery (delay in at_ns, "for D" kept
 * as the hold), each watching its node or, for one that brings a node
 * back, the whole job. */
static void test_timed_by_job(void)
{
    struct emu_script script;
    CHECK(emu_inject_parse("kill 3 at iteration 100; kill 5 at recovery; "
                           "hang 6 at recovery + 2ms for 1s; restart 3 at recovery + 1s; "
                           "kill 1 at 3s",
                           &cube, &script, error, sizeof error));
    CHECK(script.count == 1 && script.actions[0].node == 1 && !script.actions[0].at_recovery);
    CHECK(script.on_progress_count == 1 && script.on_progress[0].iteration == 100);
    CHECK(script.on_recovery_count == 3);
    if (script.on_recovery_count == 3) {
        const struct emu_action *r = script.on_recovery;
        CHECK(r[0].kind == EMU_ACTION_KILL && r[0].at_recovery && r[0].at_ns == 0 &&
              r[0].watch == 5 && r[0].hold_ns == 0 && r[0].iteration == 0);
        CHECK(strcmp(r[0].text, "kill 5 at recovery") == 0);
        CHECK(r[1].kind == EMU_ACTION_HANG && r[1].watch == 6 &&
              r[1].at_ns == 2 * NS_PER_MS && r[1].hold_ns == 1000 * NS_PER_MS);
        CHECK(r[2].kind == EMU_ACTION_RESTART && r[2].watch == EMU_WATCH_JOB &&
              r[2].at_ns == 1000 * NS_PER_MS);
        /* The undo of a hang timed by recovery is timed by the clock. */
        struct emu_action undo;
        emu_action_undo(&r[1], r[1].hold_ns, 5 * NS_PER_MS, &undo);
        CHECK(undo.kind == EMU_ACTION_RESUME && !undo.at_recovery && undo.at_ns == 5 * NS_PER_MS);
    }
    /* They are checked as they fire, not against the clock's schedule. */
    CHECK(emu_inject_check(&script, &cube, 0, NULL, error, sizeof error));
    emu_script_free(&script);
}

static void test_syntax_errors(void)
{
    expect_syntax_error("kil 3 at 2s", "'kil 3 at 2s': unknown action 'kil' (expected kill, "
                                       "hang, resume, link, reboot, restart, join, suspect, "
                                       "block, partition, heal, appkill, leave, cut or ping)");
    expect_syntax_error("kill 3 at 2s; hang five at 1s", "'hang five at 1s': 'five' is not a "
                                                         "node number");
    expect_syntax_error("kill at 2s", "'kill at 2s': 'at' is not a node number");
    expect_syntax_error("kill", "kill needs a node number");
    expect_syntax_error("kill 3 2s", "expected 'at TIME' or 'at iteration N' where '2s' is");
    expect_syntax_error("kill 3 at", "'(end)' is not a time");
    expect_syntax_error("kill 3 at 2x", "'2x' is not a time");
    expect_syntax_error("kill 3 at -1s", "'-1s' is not a time");
    expect_syntax_error("kill 3 at 2s for 1s", "'for' applies to hang, link ... off, block and cut only");
    expect_syntax_error("hang 3 at 2s for 0", "'0' is not a duration");
    expect_syntax_error("link 3 q+ off at 1s", "'q+' is not a link direction");
    expect_syntax_error("link 3 x+ down at 1s", "'down' after the link: expected off or on");
    expect_syntax_error("link 3 x+ on at 1s for 1s", "'for' applies to hang, link ... off, block");
    expect_syntax_error("kill 3 at 2s now", "unexpected 'now' at the end");
    expect_syntax_error(" ; ;", "the script is empty");
    expect_syntax_error("kill 3 at 2s; kill\t\x01 at 1s", "not printable ASCII");
    expect_syntax_error("kill 99999999999 at 1s", "is not a node number");
    /* The language's kinds the launcher cannot carry out, refused in one line. */
    expect_syntax_error("suspect 1 2 at 1s", "'suspect 1 2 at 1s': the launcher cannot inject "
                                             "suspect");
    expect_syntax_error("kill 1 at 1s; partition x<1 at 2s", "cannot inject partition");
    expect_syntax_error("heal at 2s", "cannot inject heal");
    expect_syntax_error("block 1 2 at 1s for 1s", "cannot inject block");
    expect_syntax_error("kill 27 at 1s", "'kill 27 at 1s': node 27 does not exist");
}

static bool check_on_2x2x2(const char *text, uint32_t spares, const bool *qemu)
{
    uint32_t size[3] = {2, 2, 2};
    bool mesh[3] = {false, false, false};
    struct torus_geometry geometry;
    CHECK(torus_geometry_init(&geometry, 3, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    struct emu_script script;
    error[0] = '\0';
    bool ok = emu_inject_parse(text, &geometry, &script, error, sizeof error) &&
              emu_inject_check(&script, &geometry, spares, qemu, error, sizeof error);
    CHECK(strchr(error, '\n') == NULL);
    emu_script_free(&script);
    return ok;
}

static void test_semantics(void)
{
    bool all_qemu[8] = {true, true, true, true, true, true, true, true};
    bool no_qemu[8] = {false};
    CHECK(check_on_2x2x2("kill 3 at 2s; hang 5 at 4s for 1s; link 6 x+ off at 6s; "
                         "link 6 x+ on at 8s; reboot 2 at 9s; restart 3 at 11s; "
                         "join 7 at 12s",
                         1, all_qemu));
    CHECK(!check_on_2x2x2("kill 8 at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "'kill 8 at 1s': node 8 does not exist (expected 0..7)");
    CHECK(!check_on_2x2x2("restart 3 at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "'restart 3 at 1s': node 3 is running (expected a killed node)");
    CHECK(!check_on_2x2x2("kill 3 at 1s; kill 3 at 2s", 0, all_qemu));
    CHECK_CONTAINS(error, "'kill 3 at 2s': node 3 is killed (expected a running node)");
    /* Order is by time, not by writing. */
    CHECK(!check_on_2x2x2("restart 3 at 2s; kill 3 at 3s", 0, all_qemu));
    CHECK(check_on_2x2x2("restart 3 at 3s; kill 3 at 2s", 0, all_qemu));
    CHECK(!check_on_2x2x2("join 6 at 1s", 1, all_qemu));
    CHECK_CONTAINS(error, "node 6 is not a spare (expected one of the last 1 ranks");
    CHECK(!check_on_2x2x2("join 6 at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "no spares: see --spares");
    CHECK(!check_on_2x2x2("join 7 at 1s; join 7 at 2s", 1, all_qemu));
    CHECK_CONTAINS(error, "spare 7 is running");
    CHECK(!check_on_2x2x2("kill 7 at 1s", 1, all_qemu));
    CHECK_CONTAINS(error, "node 7 is a spare not started yet");
    CHECK(!check_on_2x2x2("reboot 2 at 1s", 0, no_qemu));
    CHECK_CONTAINS(error, "node 2 is a host process (expected a QEMU node");
    CHECK(!check_on_2x2x2("hang 2 at 1s; reboot 2 at 2s", 0, all_qemu));
    CHECK_CONTAINS(error, "node 2 is hung (expected a running node)");
    CHECK(!check_on_2x2x2("resume 2 at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "expected a hung node");
    CHECK(!check_on_2x2x2("link 2 u+ off at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "node 2 has no link u+");
    CHECK(!check_on_2x2x2("link 2 x+ on at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "link x+ of node 2 is already up");
    /* The same cable from its other end: 2 x+ is 3 x-. */
    CHECK(!check_on_2x2x2("link 2 x+ off at 1s; link 3 x- off at 2s", 0, all_qemu));
    CHECK_CONTAINS(error, "link x- of node 3 is already cut");
    CHECK(check_on_2x2x2("link 2 x+ off at 1s; link 3 x- on at 2s", 0, all_qemu));
    /* A link named by its ends is every cable between them: two on a ring of two. */
    CHECK(check_on_2x2x2("link 2 3 off at 1s; link 2 x+ on at 2s; link 2 x- on at 3s", 0,
                         all_qemu));
    CHECK(!check_on_2x2x2("link 2 3 off at 1s; link 3 x+ off at 2s", 0, all_qemu));
    CHECK_CONTAINS(error, "link x+ of node 3 is already cut");
    CHECK(!check_on_2x2x2("link 2 5 off at 1s", 0, all_qemu));
    CHECK_CONTAINS(error, "nodes 2 and 5 are not torus neighbours");
    /* A node that left halts: nothing more happens to it but a restart. */
    CHECK(check_on_2x2x2("leave 3 at 1s; restart 3 at 2s; leave 3 at 3s", 0, all_qemu));
    CHECK(!check_on_2x2x2("leave 3 at 1s; kill 3 at 2s", 0, all_qemu));
    CHECK_CONTAINS(error, "'kill 3 at 2s': node 3 is gone (it left) (expected a running node)");
    CHECK(!check_on_2x2x2("kill 3 at 1s; leave 3 at 2s", 0, all_qemu));
    CHECK_CONTAINS(error, "'leave 3 at 2s': node 3 is killed (expected a running node)");
    /* A cut belongs to the cable: its node may die and come back meanwhile. */
    CHECK(check_on_2x2x2("link 2 x+ off at 1s; kill 2 at 2s; restart 2 at 3s; "
                         "link 2 x+ on at 4s",
                         0, no_qemu));
}

static void test_world(void)
{
    uint32_t size[2] = {3, 1};
    bool mesh[2] = {true, false};
    struct torus_geometry geometry;
    CHECK(torus_geometry_init(&geometry, 2, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    struct emu_inject_world world;
    CHECK(emu_inject_world_init(&world, &geometry, 1, NULL));
    CHECK(world.count == 3 && world.state[2] == EMU_INJECT_NOT_STARTED);
    struct emu_action action;
    memset(&action, 0, sizeof action);
    action.kind = EMU_ACTION_LINK_OFF;
    action.node = 0;
    action.link = 1; /* x- at a mesh edge */
    CHECK(!emu_inject_apply(&world, &action, error, sizeof error));
    CHECK_CONTAINS(error, "node 0 has no link x-");
    action.link = 0;
    CHECK(emu_inject_apply(&world, &action, error, sizeof error));
    CHECK(world.cut[0] == 1u && world.cut[1] == 2u);
    action.kind = EMU_ACTION_JOIN;
    action.node = 2;
    CHECK(emu_inject_apply(&world, &action, error, sizeof error));
    CHECK(world.state[2] == EMU_INJECT_RUNNING);
    emu_inject_world_free(&world);
}

int main(void)
{
    cube_init();
    test_parse();
    test_timed_by_job();
    test_syntax_errors();
    test_semantics();
    test_world();
    return check_report("emu.inject");
}
