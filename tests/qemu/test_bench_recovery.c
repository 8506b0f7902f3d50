/* tori-bench-recovery's arithmetic: the phases of one run from a recorded
 * fault record and event stream (lines as tori-emu writes them), the
 * target, medians over runs, and the simulator's lines. */
#include <string.h>

#include "qemu/bench/bench_recovery.h"
#include "tests/check.h"

/* A kill at iteration 100 on a 2x2x2 host torus: detection 58.3 ms, T_s
 * 1.984 ms, the root's stable 60.479 ms after the kill. */
static const char *const kill_record =
    "{\"record\":\"fault\",\"index\":1,\"action\":\"kill\",\"node\":3,\"text\":\"kill 3 at "
    "iteration 100\",\"injected_ns\":559624664,\"injected\":true,\"at_iteration\":100,"
    "\"iteration\":100,\"group\":1,\"detection\":{\"at_ns\":617924708,\"after_ns\":58300044,"
    "\"detector\":2,\"cause\":\"heartbeat\",\"node_detect_ns\":60083121},\"stable\":{"
    "\"at_ns\":620103914,\"root\":0,\"epoch\":68719476737,\"ts_ns\":1984036,\"messages\":12,"
    "\"rounds\":1,\"live\":7,\"levels\":3,\"count\":1},\"recovery_ns\":60479250,"
    "\"rejoined_ns\":null}\n";

/* Each node's own clock: rank 0 on node 0 (iterations 20 ms apart until
 * the crash, 60 ms across it), node 1 and node 5 recover. */
static const char *const stream[] = {
    "{\"event\":\"app-start\",\"node\":1,\"t_ns\":500,\"emu_ns\":1,\"app\":\"allreduce\","
    "\"rank\":1,\"size\":8}",
    "{\"event\":\"app-start\",\"node\":0,\"t_ns\":400,\"emu_ns\":1,\"app\":\"allreduce\","
    "\"rank\":0,\"size\":8}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":100000000,\"emu_ns\":2,\"iteration\":20}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":190000000,\"emu_ns\":2,\"iteration\":40}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":310000000,\"emu_ns\":2,\"iteration\":60}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":410000000,\"emu_ns\":2,\"iteration\":80}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":520000000,\"emu_ns\":2,\"iteration\":100}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":900000000,\"emu_ns\":2,\"iteration\":120}",
    "{\"event\":\"app-progress\",\"node\":1,\"t_ns\":800000000,\"emu_ns\":2,\"iteration\":40}",
    /* a rank's comm-detected line names the view that cut it (the crash's) */
    "{\"event\":\"comm-detected\",\"node\":1,\"t_ns\":7000000,\"emu_ns\":3,"
    "\"epoch\":68719476737,\"comm\":\"0x100\",\"failed\":1}",
    "{\"event\":\"comm\",\"node\":1,\"t_ns\":7000000,\"emu_ns\":3,\"comm\":\"0x100\",\"epoch\":0,"
    "\"size\":8,\"rank\":1,\"digest\":\"0x790723dc\",\"state\":\"detected\"}",
    "{\"event\":\"comm-detected\",\"node\":5,\"t_ns\":50000000,\"emu_ns\":3,"
    "\"epoch\":68719476737,\"comm\":\"0x100\",\"failed\":1}",
    "{\"event\":\"comm\",\"node\":5,\"t_ns\":50000000,\"emu_ns\":3,\"comm\":\"0x100\",\"epoch\":0,"
    "\"size\":8,\"rank\":5,\"digest\":\"0x790723dc\",\"state\":\"detected\"}",
    "{\"event\":\"comm\",\"node\":1,\"t_ns\":9000000,\"emu_ns\":4,\"comm\":\"0x101\",\"epoch\":1,"
    "\"size\":7,\"rank\":1,\"digest\":\"0xdcb16eeb\",\"state\":\"recovered\"}",
    "{\"event\":\"comm\",\"node\":5,\"t_ns\":75000000,\"emu_ns\":4,\"comm\":\"0x101\",\"epoch\":1,"
    "\"size\":7,\"rank\":4,\"digest\":\"0xdcb16eeb\",\"state\":\"recovered\"}",
    /* a later comm line of the new communicator changes nothing */
    "{\"event\":\"comm\",\"node\":5,\"t_ns\":95000000,\"emu_ns\":4,\"comm\":\"0x101\",\"epoch\":1,"
    "\"size\":7,\"rank\":4,\"digest\":\"0xdcb16eeb\",\"state\":\"recovered\"}",
    "{\"event\":\"app-recovered\",\"node\":1,\"t_ns\":12000000,\"emu_ns\":5,\"rank\":1,"
    "\"size\":7,\"rebuild_ns\":1500000,\"resume_ns\":2500000}",
    "{\"event\":\"app-recovered\",\"node\":5,\"t_ns\":80000000,\"emu_ns\":5,\"rank\":4,"
    "\"size\":7,\"rebuild_ns\":10000000,\"resume_ns\":4000000}",
    "not json at all",
};

static void record(struct bench_recovery_events *events)
{
    bench_recovery_events_clear(events);
    bench_recovery_take_fault(events, "{\"record\":\"summary\",\"faults\":1}\n");
    bench_recovery_take_fault(events, kill_record);
    for (size_t i = 0; i < sizeof stream / sizeof stream[0]; i++)
        bench_recovery_take_event(events, stream[i]);
}

static bool near(double value, double want)
{
    return value > want - 1.0 && value < want + 1.0;
}

static void test_phases(void)
{
    static struct bench_recovery_events events;
    record(&events);
    CHECK(events.fault_seen && events.kill_iteration == 100 && events.rank0_node == 0);
    CHECK(events.progress == 6 && events.recovered_ranks == 2);
    struct bench_recovery_phases p;
    bench_recovery_phases(&events, &p);
    CHECK(p.complete && p.ranks == 2);
    CHECK(near(p.detection_ns, 58300044) && near(p.ts_ns, 1984036));
    CHECK(near(p.view_ns, 60479250) && !p.one_clock); /* no stable line */
    /* the slowest spans: node 5, whose rebuild started 16 ms after its
     * view (80 - 4 - 10 - 50), was done at 25 ms and resumed at 30 ms
     * (node 1: 1, 2 and 5 ms) */
    CHECK(near(p.noticed_ns, 60479250 + 16000000.0));
    CHECK(near(p.rebuilt_ns, 60479250 + 25000000.0));
    CHECK(near(p.resumed_ns, 60479250 + 30000000.0));
    /* iterations before the crash: 4.5, 6, 5, 5.5 ms each: median 5.25 ms
     * (the span across the crash, 19 ms, is left out), over 3 allreduces */
    CHECK(near(p.allreduce_ns, 1750000));
    double target = bench_recovery_target_ns(&p);
    CHECK(near(target, 1.2 * (58300044 + 1984036) + 1750000));
    CHECK(p.resumed_ns > target); /* 90.5 ms against 74.1 ms: missed */

    /* A rebuild made inside the call (it rode on the result round): node
     * 5's communicator came 70 us before the noticed time its
     * app-recovered line gives (66 ms: that line is stamped after the
     * span's clock read), so it noticed by then, not never. */
    events.rebuilt_at[5] = 65930000;
    bench_recovery_phases(&events, &p);
    CHECK(p.complete);
    CHECK(near(p.noticed_ns, 60479250 + 15930000.0) && near(p.rebuilt_ns, 60479250 + 15930000.0));
    CHECK(near(p.resumed_ns, 60479250 + 30000000.0));
    events.rebuilt_at[5] = 75000000;

    /* A rank that saw the failure but never resumed: no resume time. */
    events.resumed_at[5] = 0;
    bench_recovery_phases(&events, &p);
    CHECK(!p.complete && p.resumed_ns == 0 && p.rebuilt_ns == 0 && p.noticed_ns == 0);
    /* No fault record: nothing is complete. */
    record(&events);
    events.stable = false;
    bench_recovery_phases(&events, &p);
    CHECK(!p.complete && p.view_ns == 0);
}

/* The same crash with the crash's stable line: each node's times move to
 * the launcher's clock by its least emu_ns - t_ns, and the failure there
 * is the stable line's emu_ns less recovery_ns (5,000 - 60.47925 ms). */
static const char *const stream_one_clock[] = {
    "{\"event\":\"stable\",\"node\":0,\"t_ns\":1000000000,\"emu_ns\":5000000000,"
    "\"epoch\":68719476737,\"ts_ns\":1984036}",
    /* an earlier view's stable line is not the crash's */
    "{\"event\":\"stable\",\"node\":0,\"t_ns\":900,\"emu_ns\":4000000,\"epoch\":0}",
    /* node 1: offsets 4,983.5 and 4,983 ms: the least counts */
    "{\"event\":\"app-progress\",\"node\":1,\"t_ns\":6000000,\"emu_ns\":4989500000,"
    "\"iteration\":40}",
    "{\"event\":\"comm-detected\",\"node\":1,\"t_ns\":7000000,\"emu_ns\":4990000000,"
    "\"epoch\":68719476737}",
    "{\"event\":\"comm\",\"node\":1,\"t_ns\":7000000,\"emu_ns\":4990000000,\"comm\":\"0x100\","
    "\"state\":\"detected\"}",
    "{\"event\":\"comm\",\"node\":1,\"t_ns\":9000000,\"emu_ns\":4993000000,\"comm\":\"0x101\","
    "\"state\":\"recovered\"}",
    "{\"event\":\"app-recovered\",\"node\":1,\"t_ns\":12000000,\"emu_ns\":4996000000,"
    "\"rebuild_ns\":1500000,\"resume_ns\":2500000}",
    /* node 5: offsets 4,960 and 4,965 ms */
    "{\"event\":\"comm-detected\",\"node\":5,\"t_ns\":50000000,\"emu_ns\":5010000000,"
    "\"epoch\":68719476737}",
    "{\"event\":\"comm\",\"node\":5,\"t_ns\":50000000,\"emu_ns\":5010000000,\"comm\":\"0x100\","
    "\"state\":\"detected\"}",
    "{\"event\":\"comm\",\"node\":5,\"t_ns\":75000000,\"emu_ns\":5036000000,\"comm\":\"0x101\","
    "\"state\":\"recovered\"}",
    "{\"event\":\"app-recovered\",\"node\":5,\"t_ns\":80000000,\"emu_ns\":5045000000,"
    "\"rebuild_ns\":10000000,\"resume_ns\":4000000}",
};

static void test_one_clock(void)
{
    static struct bench_recovery_events events;
    bench_recovery_events_clear(&events);
    bench_recovery_take_fault(&events, kill_record);
    for (size_t i = 0; i < sizeof stream_one_clock / sizeof stream_one_clock[0]; i++)
        bench_recovery_take_event(&events, stream_one_clock[i]);
    CHECK(events.stable_epoch == 68719476737ull && events.stable_lines == 2);
    CHECK(events.clock_known[1] && events.clock_offset[1] == 4983000000ll);
    CHECK(events.clock_known[5] && events.clock_offset[5] == 4960000000ll);
    struct bench_recovery_phases p;
    bench_recovery_phases(&events, &p);
    CHECK(p.one_clock && near(p.view_ns, 60479250));
    /* node 5 is the slowest: its rebuild began at 66 ms on its clock, 4,960
     * ms later on the launcher's, 86.47925 ms after the failure; rebuilt at
     * 75 and resumed at 80 ms on its clock (node 1: 8, 9, 12 ms, 4,983 ms
     * later: 51.5 to 55.5 ms after the failure) */
    CHECK(near(p.noticed_ns, 86479250));
    CHECK(near(p.rebuilt_ns, 95479250));
    CHECK(near(p.resumed_ns, 100479250));

    /* Without the crash's stable line: the spans from each rank's view,
     * added to the root's stable (node 5: 16, 25, 30 ms). */
    events.stable_line_epoch[0] = 1;
    bench_recovery_phases(&events, &p);
    CHECK(!p.one_clock && near(p.resumed_ns, 60479250 + 30000000.0));
    /* A rank whose clock is unknown: the same. */
    events.stable_line_epoch[0] = 68719476737ull;
    events.clock_known[5] = false;
    bench_recovery_phases(&events, &p);
    CHECK(!p.one_clock && near(p.noticed_ns, 60479250 + 16000000.0));
}

/*
 * Two crashes in one run (the benchmark's default): kill 3 at iteration
 * 100 (view epoch 10), then kill 5 at 160 (epoch 20), under rebuild with
 * two spares.  Node 6 adopts rank 3 at the first (a spare then: its
 * comm-detected has no comm line state=detected, it recovers nothing) and
 * is a rank at the second; node 7 adopts rank 5 at the second.  Each
 * crash's phases come from its own kill record and the ranks its view cut.
 */
static const char *const kill_records[] = {
    "{\"record\":\"fault\",\"index\":1,\"action\":\"kill\",\"node\":3,\"at_iteration\":100,"
    "\"injected\":true,\"detection\":{\"after_ns\":60000000},\"stable\":{\"epoch\":10,"
    "\"ts_ns\":40000000},\"recovery_ns\":100000000}\n",
    "{\"record\":\"fault\",\"index\":2,\"action\":\"kill\",\"node\":5,\"at_iteration\":160,"
    "\"injected\":true,\"detection\":{\"after_ns\":58000000},\"stable\":{\"epoch\":20,"
    "\"ts_ns\":12000000},\"recovery_ns\":70000000}\n",
};

/* node's lines for one crash (view epoch, own-clock times in ms) */
#define CUT(node, epoch, at, rebuilt, resumed)                                                    \
    "{\"event\":\"comm-detected\",\"node\":" #node ",\"t_ns\":" #at "000000,\"epoch\":" #epoch "}", \
    "{\"event\":\"comm\",\"node\":" #node ",\"t_ns\":" #at "000000,\"state\":\"detected\"}",    \
    "{\"event\":\"comm\",\"node\":" #node ",\"t_ns\":" #rebuilt "000000,\"state\":\"recovered\"}", \
    "{\"event\":\"app-recovered\",\"node\":" #node ",\"t_ns\":" #resumed                       \
    "000000,\"rebuild_ns\":1000000,\"resume_ns\":2000000}"

static const char *const stream_two[] = {
    "{\"event\":\"app-start\",\"node\":0,\"t_ns\":400,\"rank\":0,\"size\":6}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":100000000,\"iteration\":80}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":190000000,\"iteration\":100}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":400000000,\"iteration\":120}",
    "{\"event\":\"app-progress\",\"node\":0,\"t_ns\":450000000,\"iteration\":140}",
    CUT(0, 10, 300, 320, 322),
    CUT(1, 10, 301, 325, 327),
    "{\"event\":\"comm-detected\",\"node\":6,\"t_ns\":302000000,\"epoch\":10}",
    "{\"event\":\"comm\",\"node\":6,\"t_ns\":326000000,\"state\":\"recovered\"}",
    CUT(0, 20, 600, 610, 615),
    CUT(1, 20, 601, 611, 640),
    CUT(6, 20, 602, 612, 614),
    "{\"event\":\"comm-detected\",\"node\":7,\"t_ns\":603000000,\"epoch\":20}",
    "{\"event\":\"comm\",\"node\":7,\"t_ns\":613000000,\"state\":\"recovered\"}",
};

static void read_two(struct bench_recovery_events *events, unsigned failure)
{
    bench_recovery_events_clear(events);
    events->failure = failure;
    for (size_t i = 0; i < 2; i++)
        bench_recovery_take_fault(events, kill_records[i]);
    for (size_t i = 0; i < sizeof stream_two / sizeof stream_two[0]; i++)
        bench_recovery_take_event(events, stream_two[i]);
}

static void test_two_failures(void)
{
    static struct bench_recovery_events events;
    struct bench_recovery_phases p;
    read_two(&events, 1);
    CHECK(events.fault_seen && events.stable_epoch == 10 && events.kill_iteration == 100);
    /* the spare recovers nothing */
    CHECK(events.recovered_ranks == 2 && events.detected_at[6] == 0);
    bench_recovery_phases(&events, &p);
    CHECK(p.complete && near(p.detection_ns, 60e6) && near(p.ts_ns, 40e6));
    /* spans on own clocks from each rank's view (no stable lines): node 1
     * noticed 23 ms after it (327 - 3 - 301), rebuilt at 24, resumed at 26 */
    CHECK(near(p.noticed_ns, 100e6 + 23e6) && near(p.rebuilt_ns, 100e6 + 24e6));
    CHECK(near(p.resumed_ns, 100e6 + 26e6));
    /* 90 ms for 20 iterations before the first kill (3 allreduces each) */
    CHECK(near(p.allreduce_ns, 90e6 / 20.0 / 3.0));

    read_two(&events, 2);
    CHECK(events.fault_seen && events.stable_epoch == 20 && events.kill_iteration == 160);
    CHECK(events.recovered_ranks == 3 && events.detected_at[6] == 602000000u);
    CHECK(events.detected_at[7] == 0); /* the second crash's spare */
    bench_recovery_phases(&events, &p);
    CHECK(p.complete && near(p.detection_ns, 58e6) && near(p.ts_ns, 12e6));
    CHECK(near(p.view_ns, 70e6));
    /* node 1 is the slowest: rebuilt 10 ms after its view (its
     * app-recovered line less its spans, 36 ms, comes after: noticed by
     * then), resumed at 39; the allreduce is still the one before the
     * first kill (the spans after it are left out) */
    CHECK(near(p.noticed_ns, 70e6 + 10e6) && near(p.rebuilt_ns, 70e6 + 10e6));
    CHECK(near(p.resumed_ns, 70e6 + 39e6));
    CHECK(near(p.allreduce_ns, 90e6 / 20.0 / 3.0));

    /* A run with one kill has no second crash to measure. */
    bench_recovery_events_clear(&events);
    events.failure = 2;
    bench_recovery_take_fault(&events, kill_records[0]);
    for (size_t i = 0; i < sizeof stream_two / sizeof stream_two[0]; i++)
        bench_recovery_take_event(&events, stream_two[i]);
    bench_recovery_phases(&events, &p);
    CHECK(!events.fault_seen && !p.complete);
}

static void test_median(void)
{
    struct bench_recovery_phases runs[3];
    memset(runs, 0, sizeof runs);
    const double resumed[3] = {90e6, 70e6, 80e6};
    for (unsigned r = 0; r < 3; r++) {
        runs[r].complete = true;
        runs[r].detection_ns = 50e6 + r;
        runs[r].ts_ns = 2e6;
        runs[r].view_ns = 52e6;
        runs[r].rebuilt_ns = 60e6;
        runs[r].resumed_ns = resumed[r];
        runs[r].allreduce_ns = 1e6;
        runs[r].ranks = 7;
    }
    struct bench_recovery_phases m;
    bench_recovery_median(runs, 3, &m);
    CHECK(m.complete && near(m.resumed_ns, 80e6) && near(m.detection_ns, 50e6 + 1));
    runs[0].complete = false; /* an incomplete run is left out */
    bench_recovery_median(runs, 3, &m);
    CHECK(m.complete && near(m.resumed_ns, 75e6));
    runs[1].complete = runs[2].complete = false;
    bench_recovery_median(runs, 3, &m);
    CHECK(!m.complete && m.resumed_ns == 0);
}

/* A rebuild run at 64 ranks (tori-sim --json, the lines the benchmark
 * reads): the spare's join view is stable before the kill and is not the
 * crash's view; a failure-detected before the kill is not its detection. */
static const char *const sim_rebuild[] = {
    "{\"t_ns\":87600,\"node\":63,\"event\":\"joined\",\"epoch\":\"0000001000000000\",\"root\":0}",
    "{\"t_ns\":161400,\"node\":0,\"event\":\"stable\",\"epoch\":\"0000001000000000\","
    "\"live\":64,\"levels\":4,\"ts_ns\":106800,\"confirm_ns\":0}",
    "{\"t_ns\":700000,\"node\":5,\"event\":\"failure-detected\",\"who\":9,\"cause\":\"probe\"}",
    "{\"t_ns\":852800,\"node\":3,\"event\":\"inject\",\"what\":\"kill\",\"iteration\":2}",
    "{\"t_ns\":1163600,\"node\":0,\"event\":\"failure-detected\",\"who\":3,\"detect_ns\":300800,"
    "\"cause\":\"probe\"}",
    "{\"t_ns\":1163700,\"node\":2,\"event\":\"failure-detected\",\"who\":3}",
    "{\"t_ns\":1279600,\"node\":0,\"event\":\"stable\",\"epoch\":\"0000002000000000\","
    "\"live\":63,\"levels\":4,\"ts_ns\":116000,\"confirm_ns\":9200}",
    "{\"t_ns\":1290000,\"node\":0,\"event\":\"stable\",\"epoch\":\"0000003000000000\","
    "\"live\":63,\"levels\":4,\"ts_ns\":5000}",
    "{\"event\":\"summary\",\"t_ns\":30932800,\"steps\":11008,\"ok\":true}",
    "{\"event\":\"recovery\",\"mode\":\"rebuild\",\"msg\":\"nop\",\"survivors\":63,"
    "\"rebuilds\":62,\"adopted\":1,\"maps\":126,\"comm_epochs\":2,\"outcomes\":1006,"
    "\"agrees\":63,\"kill_ns\":852800,\"noticed_ns\":1526400,\"rebuilt_ns\":1658800,"
    "\"resumed_ns\":1863600}",
    "{\"event\":\"app\",\"app\":\"allreduce\",\"ranks\":64,\"finished\":63,\"ok\":63,"
    "\"digests\":1,\"digest\":\"6c0bbd2c\",\"iterations\":2,\"done_ns\":2456400,"
    "\"comm_frames\":5165,\"comm_bytes\":689976,\"comm_messages\":2398,\"result\":\"ok\"}",
};

static void take_all(struct bench_recovery_sim *sim, const char *const *lines, size_t count)
{
    bench_recovery_sim_clear(sim);
    for (size_t i = 0; i < count; i++)
        bench_recovery_sim_take(sim, lines[i]);
}

static void test_sim(void)
{
    /* The crash-free job: one allreduce is its span over 3 per iteration. */
    struct bench_recovery_sim job;
    const char *const job_lines[] = {
        "{\"event\":\"app\",\"app\":\"allreduce\",\"ranks\":64,\"finished\":64,\"iterations\":20,"
        "\"done_ns\":6254000,\"comm_frames\":15372,\"comm_bytes\":750456,"
        "\"comm_messages\":7560,\"result\":\"ok\"}",
    };
    take_all(&job, job_lines, 1);
    CHECK(job.app && job.ranks == 64 && job.messages == 7560 && !job.killed);
    CHECK(near(bench_recovery_sim_allreduce_ns(&job), 6254000.0 / 60.0));
    /* 7560 messages over 60 allreduces: 126 = 2 (64 - 1), the plain tree */
    CHECK(near(bench_recovery_sim_messages_per_allreduce(&job), 126.0));

    struct bench_recovery_sim run;
    size_t count = sizeof sim_rebuild / sizeof sim_rebuild[0];
    take_all(&run, sim_rebuild, count);
    CHECK(run.killed && run.kill_ns == 852800);
    CHECK(run.detected && run.detection_ns == 310800);
    /* the crash's view, not the spare's earlier one nor a later one */
    CHECK(run.stable && run.ts_ns == 116000 && run.view_ns == 426800);
    CHECK(run.recovered && run.survivors == 63);
    CHECK(run.noticed_ns == 673600 && run.rebuilt_ns == 806000 && run.resumed_ns == 1010800);
    struct bench_recovery_phases p;
    double allreduce = bench_recovery_sim_allreduce_ns(&job);
    bench_recovery_sim_phases(&run, allreduce, &p);
    CHECK(p.complete && p.ranks == 63);
    CHECK(near(p.detection_ns, 310800) && near(p.ts_ns, 116000) && near(p.view_ns, 426800));
    CHECK(near(p.noticed_ns, 673600) && near(p.rebuilt_ns, 806000) &&
          near(p.resumed_ns, 1010800));
    CHECK(near(p.allreduce_ns, 6254000.0 / 60.0));
    /* 1.2 x (0.3108 + 0.116) + 0.1042 = 0.6164 ms against 1.0108: missed */
    CHECK(near(bench_recovery_target_ns(&p), 1.2 * (310800 + 116000) + 6254000.0 / 60.0));
    CHECK(p.resumed_ns > bench_recovery_target_ns(&p));
    /* Without the crash-free run's allreduce there is no target. */
    bench_recovery_sim_phases(&run, 0.0, &p);
    CHECK(!p.complete);

    /* A run that never recovered: its recovery line has no times. */
    const char *never[sizeof sim_rebuild / sizeof sim_rebuild[0]];
    memcpy(never, sim_rebuild, sizeof never);
    never[9] = "{\"event\":\"recovery\",\"mode\":\"shrink\",\"msg\":\"nop\",\"survivors\":0,"
               "\"rebuilds\":0,\"adopted\":0,\"maps\":64,\"comm_epochs\":1,\"outcomes\":10,"
               "\"agrees\":0}";
    take_all(&run, never, count);
    CHECK(run.detected && run.stable && !run.recovered && run.resumed_ns == 0);
    bench_recovery_sim_phases(&run, allreduce, &p);
    CHECK(!p.complete && p.resumed_ns == 0 && p.noticed_ns == 0 && p.view_ns > 0);
    /* nor does a run with no recovery line (tori-sim failed) */
    take_all(&run, sim_rebuild, 9);
    bench_recovery_sim_phases(&run, allreduce, &p);
    CHECK(!run.recovered && !p.complete);
    /* a recovery timed from another kill than the one the run dated */
    never[9] = "{\"event\":\"recovery\",\"mode\":\"rebuild\",\"survivors\":63,"
               "\"kill_ns\":900000,\"noticed_ns\":1526400,\"rebuilt_ns\":1658800,"
               "\"resumed_ns\":1863600}";
    take_all(&run, never, count);
    CHECK(!run.recovered);
    /* no kill at all: nothing after it is dated */
    take_all(&run, sim_rebuild + 4, count - 4);
    CHECK(!run.killed && !run.detected && !run.stable && !run.recovered);
}

/* tori-comm-loop's line: its figures, and anything else refused. */
static void test_loop(void)
{
    struct bench_recovery_loop loop;
    CHECK(bench_recovery_loop_take(
        &loop, "{\"tool\":\"comm-loop\",\"ft\":0,\"ranks\":16,\"iterations\":9,"
               "\"pingpong_ns\":1311.9,\"pingpong_messages\":2.000,\"pingpong_frames\":3.0,"
               "\"allreduce_ns\":20223.8,\"allreduce_messages\":30.000,"
               "\"allreduce_frames\":60.0,\"barrier_ns\":19419.1,\"barrier_messages\":30.0,"
               "\"barrier_frames\":60.0}\n"));
    CHECK(loop.seen && !loop.ft);
    CHECK_EQ(loop.ranks, 16);
    CHECK(loop.figure[BENCH_LOOP_PINGPONG_NS] > 1311.8 && loop.figure[BENCH_LOOP_PINGPONG_NS] < 1312.0);
    CHECK(loop.figure[BENCH_LOOP_BARRIER_NS] > 19419.0 && loop.figure[BENCH_LOOP_BARRIER_NS] < 19419.2);
    CHECK(loop.figure[BENCH_LOOP_ALLREDUCE_MESSAGES] == 30.0);
    /* a missing figure, another tool, a bad ft: not a measurement */
    CHECK(!bench_recovery_loop_take(&loop, "{\"tool\":\"comm-loop\",\"ft\":1,\"ranks\":16,"
                                           "\"pingpong_ns\":5}"));
    CHECK(!loop.seen);
    CHECK(!bench_recovery_loop_take(&loop, "{\"tool\":\"other\",\"ft\":1,\"ranks\":16}"));
    CHECK(!bench_recovery_loop_take(&loop, "not json"));
    CHECK(bench_recovery_ratio(1428.4, 1253.2) > 1.1397 && bench_recovery_ratio(1428.4, 1253.2) < 1.1399);
    CHECK(bench_recovery_ratio(0, 5) == 0.0 && bench_recovery_ratio(5, 0) == 0.0);
}

static void test_pingpong(void)
{
    struct bench_recovery_pingpong run;
    memset(&run, 0, sizeof run);
    const char *const lines[] = {
        "{\"event\":\"app-pingpong\",\"node\":0,\"t_ns\":5,\"emu_ns\":1,\"bytes\":0,"
        "\"rounds\":32,\"rtt_ns\":65517}",
        "{\"event\":\"app-pingpong\",\"node\":0,\"t_ns\":6,\"emu_ns\":1,\"bytes\":1,"
        "\"rounds\":32,\"rtt_ns\":70000}",
        "{\"event\":\"app-barrier\",\"node\":0,\"t_ns\":7,\"emu_ns\":1,\"rounds\":32,"
        "\"median_ns\":704660}",
        "{\"event\":\"app-allreduce\",\"node\":1,\"t_ns\":8,\"emu_ns\":1,\"rounds\":32,"
        "\"median_ns\":1}",
        "{\"event\":\"app-allreduce\",\"node\":0,\"t_ns\":8,\"emu_ns\":1,\"rounds\":32,"
        "\"median_ns\":790258}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        bench_recovery_pingpong_take(&run, lines[i]);
    CHECK(run.rtt0_ns == 65517 && run.barrier_ns == 704660 && run.allreduce_ns == 790258);
}

int main(void)
{
    test_phases();
    test_one_clock();
    test_two_failures();
    test_median();
    test_sim();
    test_pingpong();
    test_loop();
    return check_report("emu.bench_recovery");
}
