#define _POSIX_C_SOURCE 200809L
/* The one fault language (tools/fault.h): every kind parses, prints back
 * to text that parses to the same item (parse(print(x)) == x), bad items
 * are refused in one line naming them, and the checks against a torus
 * catch nodes, links and cuts it does not have. */
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tools/fault.h"

#define MS 1000000ull

static char error[320];

/* Every kind and form, with and without "for D". */
static const struct fault every_kind[] = {
    {.kind = FAULT_KILL, .time_ns = 0, .node = 3},
    {.kind = FAULT_HANG, .time_ns = 1500 * MS, .node = 5},
    {.kind = FAULT_HANG, .time_ns = 2 * MS, .node = 5, .duration_ns = 250000},
    {.kind = FAULT_RESUME, .time_ns = 4000 * MS, .node = 5},
    {.kind = FAULT_LINK_OFF, .time_ns = 1 * MS, .node = 2, .other = 3, .link = FAULT_LINK_PAIR},
    {.kind = FAULT_LINK_ON, .time_ns = 9 * MS, .node = 2, .other = 3, .link = FAULT_LINK_PAIR},
    {.kind = FAULT_LINK_OFF, .time_ns = 6000 * MS, .node = 6, .link = 0,
     .duration_ns = 2000 * MS},
    {.kind = FAULT_LINK_ON, .time_ns = 60250 * MS, .node = 6, .link = 5},
    {.kind = FAULT_REBOOT, .time_ns = 9000 * MS, .node = 2},
    {.kind = FAULT_RESTART, .time_ns = 11000 * MS, .node = 3},
    {.kind = FAULT_JOIN, .time_ns = 12000 * MS, .node = 7},
    {.kind = FAULT_SUSPECT, .time_ns = 3 * MS, .node = 1, .other = 4},
    {.kind = FAULT_BLOCK, .time_ns = 4 * MS, .node = 0, .other = 7, .duration_ns = 37 * MS},
    {.kind = FAULT_PARTITION, .time_ns = 5 * MS, .dim = 1, .below = 1},
    {.kind = FAULT_PARTITION, .time_ns = 5 * MS, .dim = -1, .below = 3},
    {.kind = FAULT_HEAL, .time_ns = 123456789},
    /* Timed by the application's progress: any kind, "for D" from the firing. */
    {.kind = FAULT_KILL, .iteration = 100, .node = 3},
    {.kind = FAULT_HANG, .iteration = 20, .node = 3, .duration_ns = 100 * MS},
    {.kind = FAULT_LINK_OFF, .iteration = 4294967295u, .node = 6, .link = 1,
     .duration_ns = 1500 * MS},
    {.kind = FAULT_BLOCK, .iteration = 1, .node = 0, .other = 7, .duration_ns = 2 * MS},
    {.kind = FAULT_HEAL, .iteration = 7},
    /* Issue 15: a process fault. */
    {.kind = FAULT_APPKILL, .time_ns = 2 * MS, .node = 5},
    {.kind = FAULT_APPKILL, .iteration = 120, .node = 3},
    /* Issue 16: a leave; groups; a plane cut. */
    {.kind = FAULT_LEAVE, .time_ns = 2 * MS, .node = 3},
    {.kind = FAULT_KILL, .time_ns = 30000 * MS, .select_count = 1,
     .select = {{.dim = 0, .op = FAULT_GE, .value = 4}}},
    {.kind = FAULT_RESTART, .time_ns = 35000 * MS, .select_count = 3,
     .select = {{.dim = 0, .op = FAULT_GE, .value = 4},
                {.dim = 1, .op = FAULT_LT, .value = 2},
                {.dim = -1, .op = FAULT_GT, .value = 9}}},
    {.kind = FAULT_HANG, .time_ns = 1 * MS, .duration_ns = 5 * MS, .select_count = 2,
     .select = {{.dim = 2, .op = FAULT_EQ, .value = 0}, {.dim = 1, .op = FAULT_LE, .value = 1}}},
    {.kind = FAULT_LEAVE, .iteration = 40, .select_count = 1,
     .select = {{.dim = -1, .op = FAULT_LT, .value = 2}}},
    {.kind = FAULT_CUT, .time_ns = 10000 * MS, .dim = 0, .plane = 3, .plane_next = 4, .keep = 2},
    {.kind = FAULT_PING, .time_ns = 7 * MS},
    {.kind = FAULT_PING, .iteration = 30},
    {.kind = FAULT_CUT, .time_ns = 1 * MS, .dim = 2, .plane = 3, .plane_next = 0,
     .duration_ns = 4 * MS},
    /* Issue 14: timed by the job's first recovery, with and without a delay. */
    {.kind = FAULT_KILL, .at_recovery = true, .node = 5},
    {.kind = FAULT_HANG, .at_recovery = true, .time_ns = 2 * MS, .node = 5,
     .duration_ns = 300 * MS},
    {.kind = FAULT_LINK_OFF, .at_recovery = true, .time_ns = 1500 * MS, .node = 6, .link = 1,
     .duration_ns = 1500 * MS},
    {.kind = FAULT_KILL, .at_recovery = true, .select_count = 1,
     .select = {{.dim = 0, .op = FAULT_GE, .value = 1}}},
};
#define KINDS (sizeof every_kind / sizeof every_kind[0])

static void test_round_trip(void)
{
    /* The whole list through the printer (a file) and the parser. */
    FILE *file = tmpfile();
    CHECK(file != NULL);
    CHECK(fault_script_write(file, every_kind, KINDS));
    rewind(file);
    char text[4096];
    size_t length = fread(text, 1, sizeof text - 1, file);
    text[length] = '\0';
    fclose(file);
    struct fault_script script;
    CHECK(fault_script_parse(text, &script, error, sizeof error));
    CHECK(script.count == KINDS);
    for (size_t i = 0; i < KINDS && i < script.count; i++) {
        char shown[FAULT_TEXT_MAX];
        fault_format(&every_kind[i], shown, sizeof shown);
        if (!fault_equal(&script.items[i], &every_kind[i]))
            printf("item %zu '%s' does not come back the same\n", i, shown);
        CHECK(fault_equal(&script.items[i], &every_kind[i]));
    }
    fault_script_free(&script);

    /* The printed forms, exactly. */
    char shown[FAULT_TEXT_MAX];
    fault_format(&every_kind[2], shown, sizeof shown);
    CHECK(strcmp(shown, "hang 5 at 2ms for 250us") == 0);
    fault_format(&every_kind[4], shown, sizeof shown);
    CHECK(strcmp(shown, "link 2 3 off at 1ms") == 0);
    fault_format(&every_kind[6], shown, sizeof shown);
    CHECK(strcmp(shown, "link 6 x+ off at 6s for 2s") == 0);
    fault_format(&every_kind[14], shown, sizeof shown);
    CHECK(strcmp(shown, "partition id<3 at 5ms") == 0);
    fault_format(&every_kind[15], shown, sizeof shown);
    CHECK(strcmp(shown, "heal at 123456789ns") == 0);
    fault_format(&every_kind[16], shown, sizeof shown);
    CHECK(strcmp(shown, "kill 3 at iteration 100") == 0);
    fault_format(&every_kind[17], shown, sizeof shown);
    CHECK(strcmp(shown, "hang 3 at iteration 20 for 100ms") == 0);
    fault_format(&every_kind[18], shown, sizeof shown);
    CHECK(strcmp(shown, "link 6 x- off at iteration 4294967295 for 1500ms") == 0);
    fault_format(&every_kind[22], shown, sizeof shown);
    CHECK(strcmp(shown, "appkill 3 at iteration 120") == 0);
    fault_format(&every_kind[25], shown, sizeof shown);
    CHECK(strcmp(shown, "restart x>=4,y<2,id>9 at 35s") == 0);
    fault_format(&every_kind[26], shown, sizeof shown);
    CHECK(strcmp(shown, "hang z=0,y<=1 at 1ms for 5ms") == 0);
    fault_format(&every_kind[KINDS - 8], shown, sizeof shown);
    CHECK(strcmp(shown, "cut x=3|4 except 2 at 10s") == 0);
    fault_format(&every_kind[KINDS - 6], shown, sizeof shown);
    CHECK(strcmp(shown, "ping all at iteration 30") == 0);
    fault_format(&every_kind[KINDS - 5], shown, sizeof shown);
    CHECK(strcmp(shown, "cut z=3|0 at 1ms for 4ms") == 0);
    fault_format(&every_kind[KINDS - 4], shown, sizeof shown);
    CHECK(strcmp(shown, "kill 5 at recovery") == 0);
    fault_format(&every_kind[KINDS - 3], shown, sizeof shown);
    CHECK(strcmp(shown, "hang 5 at recovery + 2ms for 300ms") == 0);
    fault_format(&every_kind[KINDS - 2], shown, sizeof shown);
    CHECK(strcmp(shown, "link 6 x- off at recovery + 1500ms for 1500ms") == 0);
    fault_format(&every_kind[KINDS - 1], shown, sizeof shown);
    CHECK(strcmp(shown, "kill x>=1 at recovery") == 0);
    CHECK(fault_timed_by_job(&every_kind[KINDS - 4]) && fault_timed_by_job(&every_kind[16]));
    CHECK(!fault_timed_by_job(&every_kind[0]));
    /* The recovery is not a time: "at recovery + 2ms" differs from "at 2ms". */
    struct fault by_clock = every_kind[KINDS - 3];
    by_clock.at_recovery = false;
    CHECK(!fault_equal(&by_clock, &every_kind[KINDS - 3]));
    /* An iteration is not a time: "at iteration 20" differs from "at 20ns". */
    struct fault by_time = every_kind[17];
    by_time.iteration = 0;
    by_time.time_ns = 20;
    CHECK(!fault_equal(&by_time, &every_kind[17]));

    /* Written forms come back in the printer's words; ';', lines, comments. */
    CHECK(fault_script_parse("kill 3 at 1.5s;hang 2 at 0.5ms for 1000us # a comment; kill 9\n"
                             "\n  partition x<2 at 1ms ; heal at 2ms;",
                             &script, error, sizeof error));
    CHECK(script.count == 4);
    if (script.count == 4) {
        fault_format(&script.items[0], shown, sizeof shown);
        CHECK(strcmp(shown, "kill 3 at 1500ms") == 0);
        fault_format(&script.items[1], shown, sizeof shown);
        CHECK(strcmp(shown, "hang 2 at 500us for 1ms") == 0);
        CHECK(script.items[2].kind == FAULT_PARTITION && script.items[2].dim == 0);
    }
    fault_script_free(&script);
    /* The delay written "+D" or "+ D"; the example. */
    CHECK(fault_script_parse("kill 3 at iteration 100; kill 5 at recovery;"
                             "hang 2 at recovery +5ms for 1s; kill 4 at recovery + 0",
                             &script, error, sizeof error));
    CHECK(script.count == 4);
    if (script.count == 4) {
        CHECK(script.items[1].at_recovery && script.items[1].time_ns == 0 &&
              script.items[1].iteration == 0 && script.items[1].node == 5);
        fault_format(&script.items[2], shown, sizeof shown);
        CHECK(strcmp(shown, "hang 2 at recovery + 5ms for 1s") == 0);
        fault_format(&script.items[3], shown, sizeof shown);
        CHECK(strcmp(shown, "kill 4 at recovery") == 0);
    }
    fault_script_free(&script);
    CHECK(fault_script_parse(" ; \n# nothing\n", &script, error, sizeof error));
    CHECK(script.count == 0);
}

static void expect_error(const char *text, const char *part)
{
    struct fault_script script;
    error[0] = '\0';
    CHECK(!fault_script_parse(text, &script, error, sizeof error));
    CHECK_CONTAINS(error, part);
    CHECK(strchr(error, '\n') == NULL);
    CHECK(script.items == NULL && script.count == 0);
}

static void test_errors(void)
{
    expect_error("kil 3 at 2s", "'kil 3 at 2s': unknown action 'kil' (expected kill, hang, "
                                "resume, link, reboot, restart, join, suspect, block, "
                                "partition, heal, appkill, leave, cut or ping)");
    expect_error("kill 3 at 2s; hang five at 1s", "'hang five at 1s': 'five' is not a node");
    expect_error("kill 1 at 5", "'kill 1 at 5': '5' is not a time");
    expect_error("kill 3 at 2s for 1s", "'for' applies to hang, link ... off, block and cut only");
    /* Groups and cuts. */
    expect_error("kill x=>4 at 1s", "'kill x=>4 at 1s': 'x=>4' is not a node or a group "
                                    "(expected a rank like 3, or coordinates like x>=4,y<2");
    expect_error("kill q>=4 at 1s", "'q>=4' is not a node or a group");
    expect_error("kill x>=4, at 1s", "'x>=4,' is not a node or a group");
    expect_error("kill 3,4 at 1s", "'3,4' is not a node number");
    expect_error("kill x>=4,y<1,z<1,x<9,y>0 at 1s", "is not a node or a group");
    expect_error("kill x>=-1 at 1s", "is not a node or a group");
    expect_error("suspect x>=4 2 at 1s", "'x>=4' is not a node number");
    expect_error("cut x=3 at 1s", "'x=3' is not a plane (expected D=A|B");
    expect_error("cut id=3|4 at 1s", "'id=3|4' is not a plane");
    expect_error("cut x=3|4 except at 1s", "'at' is not a number of cables to keep");
    expect_error("cut x=3|4 at 1s except 2", "unexpected 'except' at the end");
    expect_error("ping 3 at 1s", "'ping 3 at 1s': '3' after ping: expected all");
    expect_error("ping all at 1s for 1s", "'for' applies to hang");
    expect_error("link 3 x+ on at 1s for 1s", "'for' applies to hang");
    expect_error("block 3 4 at 1ms", "block needs 'for D'");
    expect_error("block 3 3 at 1ms for 1ms", "names node 3 twice");
    expect_error("suspect 2 2 at 1ms", "names node 2 twice");
    expect_error("link 2 2 off at 1ms", "names node 2 twice");
    expect_error("link 3 q+ off at 1s", "'q+' is not a link direction or a node");
    expect_error("partition q<2 at 1ms", "'q<2' is not a cut");
    expect_error("partition x<0 at 1ms", "'x<0' is not a cut");
    expect_error("heal 3 at 1ms", "expected 'at TIME' or 'at iteration N' where '3' is");
    expect_error("kill 3 at iteration 0", "'kill 3 at iteration 0': '0' is not an iteration "
                                          "(expected a count in 1..4294967295)");
    expect_error("kill 3 at iteration", "'(end)' is not an iteration");
    expect_error("kill 3 at iteration 4294967296", "'4294967296' is not an iteration");
    expect_error("kill 3 at iteration 2s", "'2s' is not an iteration");
    expect_error("kill 3 at iteration 20 for 1s", "'for' applies to hang");
    expect_error("kill 3 at iterations 20", "'iterations' is not a time (expected a time "
                                            "like 250us, 1.5ms, 2s or 2m, 0, iteration N or "
                                            "recovery)");
    expect_error("kill 5 at recovery +", "'kill 5 at recovery +': '(end)' is not a delay "
                                         "after the recovery (expected a time like 250us");
    expect_error("kill 5 at recovery + soon", "'soon' is not a delay after the recovery");
    expect_error("kill 5 at recovery +2", "'2' is not a delay after the recovery");
    expect_error("kill 5 at recovery 2ms", "'kill 5 at recovery 2ms': '2ms' after 'at "
                                           "recovery' (expected '+ D', 'for D' or the end");
    expect_error("kill 5 at recovery + 2ms now", "unexpected 'now' at the end");
    expect_error("kill 5 at recovery for 1s", "'for' applies to hang");
    expect_error("kill 5 at recoveries", "'recoveries' is not a time");
    expect_error("hang 3 at 1s for 0", "'0' is not a duration");
    expect_error("kill 3 at 2s now", "unexpected 'now' at the end");
    expect_error("kill 3 at 2s; kill\t\x01 at 1s", "not printable ASCII");
}

static void expect_torus_error(const struct torus_geometry *g, const char *text,
                               const char *part)
{
    struct fault_script script;
    CHECK(fault_script_parse(text, &script, error, sizeof error));
    error[0] = '\0';
    CHECK(!fault_script_check_torus(&script, g, error, sizeof error));
    CHECK_CONTAINS(error, part);
    fault_script_free(&script);
}

static void test_torus(void)
{
    uint32_t size[2] = {4, 4};
    bool mesh[2] = {false, false};
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 2, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    struct fault_script script;
    CHECK(fault_script_parse("link 0 1 off at 1ms; link 0 3 on at 1ms; link 5 y- off at 1ms; "
                             "partition y<3 at 1ms; partition id<15 at 1ms; suspect 15 0 at 0",
                             &script, error, sizeof error));
    CHECK(fault_script_check_torus(&script, &g, error, sizeof error));
    fault_script_free(&script);
    expect_torus_error(&g, "kill 16 at 1ms", "'kill 16 at 1ms': node 16 does not exist "
                                             "(expected 0..15)");
    expect_torus_error(&g, "suspect 0 16 at 1ms", "node 16 does not exist");
    expect_torus_error(&g, "link 0 5 off at 1ms", "nodes 0 and 5 are not torus neighbours");
    expect_torus_error(&g, "link 1 z+ off at 1s", "node 1 has no link z+");
    expect_torus_error(&g, "partition z<1 at 1ms", "the torus has no dimension z");
    expect_torus_error(&g, "partition x<4 at 1ms", "expected 0 < K < 4");
    expect_torus_error(&g, "partition id<16 at 1ms", "expected 0 < K < 16");
    expect_torus_error(&g, "kill x>=4 at 1ms", "'kill x>=4 at 1ms': the group holds no node of "
                                              "the torus");
    expect_torus_error(&g, "kill z=0 at 1ms", "the torus has no dimension z");
    expect_torus_error(&g, "cut x=1|3 at 1ms", "planes 1 and 3 are not neighbours");
    expect_torus_error(&g, "cut z=0|1 at 1ms", "the torus has no dimension z");
    expect_torus_error(&g, "cut y=2|3 except 4 at 1ms", "except 4 keeps every one of its 4 "
                                                        "cables");
}

/* Groups and cuts spelled out on a 4x4 torus, in node order. */
static void test_expand(void)
{
    uint32_t size[2] = {4, 4};
    bool mesh[2] = {false, true}; /* y is a mesh: no cable from y=3 to y=0 */
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 2, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    struct fault_script script, out;
    CHECK(fault_script_parse("kill x>=2,y=1 at 1ms; cut x=3|0 except 1 at 2ms for 1ms; "
                             "leave 9 at 3ms",
                             &script, error, sizeof error));
    CHECK(fault_script_check_torus(&script, &g, error, sizeof error));
    CHECK(fault_script_expand(&script, &g, &out, error, sizeof error));
    CHECK_EQ(out.count, 2u + 3u + 1u);
    CHECK(out.items[0].kind == FAULT_KILL && out.items[0].node == 6);
    CHECK(out.items[1].kind == FAULT_KILL && out.items[1].node == 7);
    /* the cut's cables: x+ of 3, 7, 11, 15 but the first */
    for (unsigned i = 0; i < 3; i++) {
        const struct fault *c = &out.items[2 + i];
        CHECK(c->kind == FAULT_LINK_OFF && c->link == 0 && c->node == 7u + 4u * i);
        CHECK(c->time_ns == 2 * MS && c->duration_ns == 1 * MS);
        char text[FAULT_TEXT_MAX];
        fault_format(c, text, sizeof text);
        CHECK(strncmp(text, "link ", 5) == 0);
    }
    CHECK(out.items[5].kind == FAULT_LEAVE && out.items[5].node == 9);
    fault_script_free(&out);
    fault_script_free(&script);
    expect_torus_error(&g, "cut y=3|0 at 1ms", "planes 3 and 0 are not neighbours");
}

static void test_file(void)
{
    char *text = NULL;
    CHECK(!fault_script_read_file("/nonexistent/script", &text, error, sizeof error));
    CHECK_CONTAINS(error, "/nonexistent/script: cannot be read");
    char path[] = "/tmp/tori-fault-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *file = fdopen(fd, "w");
    CHECK(file != NULL && fault_script_write(file, every_kind, KINDS));
    fclose(file);
    CHECK(fault_script_read_file(path, &text, error, sizeof error));
    struct fault_script script;
    CHECK(text != NULL && fault_script_parse(text, &script, error, sizeof error));
    CHECK(script.count == KINDS);
    fault_script_free(&script);
    free(text);
    remove(path);
}

int main(void)
{
    test_round_trip();
    test_errors();
    test_torus();
    test_expand();
    test_file();
    return check_report("tools.fault");
}
