/* tori-bench-faults' pieces: configurations and their timeouts, the crash
 * script, reading fault records, the medians, and counting an idle run's
 * failure detections. */
#define _GNU_SOURCE /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/personality.h"
#include "qemu/bench/bench_faults.h"
#include "tests/check.h"

static char error[320];

static void test_configs(void)
{
    struct bench_faults_config c;
    CHECK(bench_faults_parse_config("qemu-2x2x2", 6, &c, error, sizeof error));
    CHECK(strcmp(c.board, "qemu") == 0 && strcmp(c.dims, "2x2x2") == 0 && c.nodes == 8);
    CHECK(c.heartbeat_ms == PERSONALITY_DEFAULT_HEARTBEAT_MS &&
          c.detect_timeout_ms == PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS && c.link_rto_ms == 0);
    CHECK(bench_faults_parse_config("qemu-4x4x4", 6, &c, error, sizeof error));
    CHECK(c.nodes == 64 && c.heartbeat_ms == 100 && c.detect_timeout_ms == 1000);
    CHECK(c.link_rto_ms == 25 && c.link_retries == 10);
    CHECK(bench_faults_parse_config("host-8x8x8", 2, &c, error, sizeof error));
    CHECK(c.nodes == 512 && c.heartbeat_ms == 500 && c.detect_timeout_ms == 5000 && c.kills == 2);
    CHECK(bench_faults_parse_config("mixed-2x2x2@20/200", 6, &c, error, sizeof error));
    CHECK(c.heartbeat_ms == 20 && c.detect_timeout_ms == 200);
    CHECK(strcmp(c.name, "mixed-2x2x2@20-200") == 0 && strcmp(c.dims, "2x2x2") == 0);
    struct {
        const char *text, *part;
    } bad[] = {
        {"2x2x2", "is not a configuration (expected BOARD-DIMS"},
        {"arm-2x2x2", "unknown board 'arm'"},
        {"qemu-2x0", "'2x0' is not a torus shape"},
        {"host-2", "has 2 nodes (expected at least 3)"},
        {"qemu-2x2x2@50/20", "'50/20' is not HEARTBEAT/DETECT"},
        {"qemu-2x2x2@fast", "'fast' is not HEARTBEAT/DETECT"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error[0] = '\0';
        CHECK(!bench_faults_parse_config(bad[i].text, 6, &c, error, sizeof error));
        CHECK_CONTAINS(error, bad[i].part);
    }
}

static void test_script(void)
{
    struct bench_faults_config c;
    CHECK(bench_faults_parse_config("qemu-2x2x2", 4, &c, error, sizeof error));
    char script[1024];
    unsigned gap = bench_faults_script(&c, script, sizeof script);
    CHECK(gap == 1000);
    CHECK(strcmp(script, "kill 7 at 1000ms; restart 7 at 2000ms; kill 5 at 3000ms; "
                         "restart 5 at 4000ms; kill 1 at 5000ms; restart 1 at 6000ms; "
                         "kill 0 at 7000ms; restart 0 at 8000ms") == 0);
    CHECK(bench_faults_parse_config("host-8x8x8", 10, &c, error, sizeof error));
    bench_faults_script(&c, script, sizeof script);
    CHECK_CONTAINS(script, "kill 511 at 1000ms; restart 511 at 11000ms; kill 257 at");
    CHECK_CONTAINS(script, "kill 255 at");
}

static const char *const kill_line =
    "{\"record\":\"fault\",\"index\":1,\"action\":\"kill\",\"node\":7,\"text\":\"kill 7 at 1s\","
    "\"injected_ns\":1000,\"injected\":true,\"group\":1,\"detection\":{\"at_ns\":51000,"
    "\"after_ns\":50000,\"detector\":3,\"cause\":\"heartbeat\",\"node_detect_ns\":49000},"
    "\"stable\":{\"at_ns\":61000,\"root\":0,\"epoch\":9,\"ts_ns\":2000,\"messages\":12,"
    "\"episode_messages\":12,\"rounds\":1,\"live\":7,\"levels\":3,\"count\":1},"
    "\"recovery_ns\":60000,\"rejoined_ns\":null,\"expelled_ns\":null,\"model\":{"
    "\"one_hop_ns\":100,\"ocp_ns\":0.5,\"levels\":3,\"hop_sum\":5,\"base_ns\":400,"
    "\"distance_ns\":1000},\"ratio\":2.000,\"views\":[],\"agreement\":{\"result\":\"pass\","
    "\"settled\":true,\"reason\":\"\"}}\n";

static void test_records(void)
{
    struct bench_faults_sample s;
    CHECK(bench_faults_parse_record(kill_line, &s));
    CHECK(strcmp(s.action, "kill") == 0 && s.node == 7 && s.passed);
    CHECK(s.detected && s.detection_ns == 50000 && s.stable && s.ts_ns == 2000 && s.rounds == 1);
    CHECK(s.recovery_ns == 60000 && s.model_ns == 1000.0 && s.one_hop_ns == 100.0);
    CHECK(s.levels == 3 && s.hop_sum == 5);
    CHECK(!bench_faults_parse_record("{\"record\":\"summary\",\"faults\":2}", &s));
    CHECK(!bench_faults_parse_record("not json", &s));
    CHECK(!bench_faults_parse_record("", &s));

    struct bench_faults_sample samples[4];
    CHECK(bench_faults_parse_record(kill_line, &samples[0]));
    samples[1] = samples[0];
    samples[1].ts_ns = 4000;
    samples[1].rounds = 2;
    samples[1].detection_ns = 70000;
    samples[2] = samples[0];
    strcpy(samples[2].action, "restart");
    samples[2].ts_ns = 9000;
    samples[3] = samples[0];
    samples[3].stable = false;
    samples[3].passed = false;
    samples[3].detection_ns = 60000;
    struct bench_faults_summary summary;
    memset(&summary, 0, sizeof summary);
    bench_faults_summarize(samples, 4, &summary);
    CHECK(summary.faults == 4 && summary.checks == 4 && summary.checks_passed == 3);
    CHECK(summary.kills == 3 && summary.detected == 3 && summary.stabilized == 2);
    CHECK(summary.multi_round == 1);
    CHECK(summary.ts_ns == 3000.0 && summary.detection_ns == 60000.0);
    CHECK(summary.model_ns == 1000.0 && summary.ratio == 3.0 && summary.ts_over_l == 30.0);
    CHECK(summary.rejoin_ts_ns == 9000.0 && summary.levels == 3 && summary.hop_sum == 5);
}

/* Writes text as <dir>/events.jsonl. */
static void write_events(const char *dir, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static void remove_events(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    remove(path);
    rmdir(dir);
}

/* --idle-seconds: the failure-detected events and view changes of an idle
 * run's events.jsonl (no ping in it). */
static void test_idle_count(void)
{
    char dir[] = "/tmp/test-bench-faults-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct bench_faults_ping run = {.status = 3};
    CHECK(!bench_faults_read_events(dir, 8, &run)); /* no events.jsonl */
    CHECK(!run.read && run.status == 3 && bench_faults_ping_failed(&run));
    write_events(dir, "{\"event\":\"ready\",\"node\":1}\n"
                      "{\"event\":\"failure-detected\",\"node\":1,\"who\":2}\n"
                      "{\"event\":\"view\",\"node\":3,\"epoch\":4,\"live\":8}\n"
                      "{\"event\":\"view\",\"node\":3,\"epoch\":5,\"live\":7}\n"
                      "{\"event\":\"view\",\"node\":4,\"epoch\":5,\"live\":7}\n"
                      "{\"event\":\"failure-detected\",\"node\":3,\"who\":2}\n");
    CHECK(bench_faults_read_events(dir, 8, &run));
    CHECK(run.read && run.status == 3);
    CHECK_EQ(run.detections, 2);
    CHECK_EQ(run.view_changes, 1);
    CHECK_EQ(run.done, 0);
    CHECK_EQ(run.duration_ns, 0);
    remove_events(dir);
}

/*
 * --ping: a recorded all-pairs ping of 3 nodes (6 ordered pairs): 1->2
 * failed, 2->1 never answered, 0->1 answered twice, one line out of
 * range; node 2 falsely detected node 1 and two view changes followed.
 * The duration runs from the first `started` to the last `ping-done`.
 */
static const char *const ping_events =
    "{\"event\":\"started\",\"node\":0,\"t_ns\":5,\"emu_ns\":1200000000,\"as\":\"member\"}\n"
    "{\"event\":\"started\",\"node\":1,\"t_ns\":5,\"emu_ns\":1000000000,\"as\":\"member\"}\n"
    "{\"event\":\"view\",\"node\":1,\"t_ns\":6,\"emu_ns\":1000000001,\"epoch\":1}\n"
    "{\"event\":\"started\",\"node\":2,\"t_ns\":5,\"emu_ns\":1100000000,\"as\":\"member\"}\n"
    "{\"event\":\"ping\",\"node\":0,\"t_ns\":9,\"emu_ns\":1300000000,\"dst\":1,\"hops\":1,"
    "\"rtt_ns\":500000,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":0,\"t_ns\":9,\"emu_ns\":1300000000,\"dst\":1,\"hops\":1,"
    "\"rtt_ns\":500000,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":0,\"t_ns\":9,\"emu_ns\":1400000000,\"dst\":2,\"hops\":1,"
    "\"rtt_ns\":500000,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":0,\"t_ns\":9,\"emu_ns\":1400000000,\"dst\":9,\"hops\":1,"
    "\"rtt_ns\":500000,\"ok\":1}\n"
    "{\"event\":\"ping-done\",\"node\":0,\"t_ns\":9,\"emu_ns\":3000000000,\"ok\":2,"
    "\"failed\":0}\n"
    "{\"event\":\"failure-detected\",\"node\":2,\"t_ns\":9,\"emu_ns\":3100000000,\"who\":1,"
    "\"detector\":2,\"cause\":\"heartbeat\"}\n"
    "{\"event\":\"view\",\"node\":0,\"t_ns\":6,\"emu_ns\":3200000000,\"epoch\":2}\n"
    "{\"event\":\"view\",\"node\":2,\"t_ns\":6,\"emu_ns\":3200000000,\"epoch\":2}\n"
    "{\"event\":\"view\",\"node\":0,\"t_ns\":6,\"emu_ns\":3300000000,\"epoch\":3}\n"
    "{\"event\":\"ping\",\"node\":1,\"t_ns\":9,\"emu_ns\":3400000000,\"dst\":0,\"hops\":1,"
    "\"rtt_ns\":500000,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":1,\"t_ns\":9,\"emu_ns\":4400000000,\"dst\":2,\"hops\":1,"
    "\"rtt_ns\":0,\"ok\":0}\n"
    "{\"event\":\"ping-done\",\"node\":1,\"t_ns\":9,\"emu_ns\":4500000000,\"ok\":1,"
    "\"failed\":1}\n"
    "{\"event\":\"ping\",\"node\":2,\"t_ns\":9,\"emu_ns\":3500000000,\"dst\":0,\"hops\":1,"
    "\"rtt_ns\":500000,\"ok\":1}\n"
    "{\"event\":\"ping-fan\",\"node\":2,\"t_ns\":9,\"emu_ns\":9000000000,\"ok\":1}\n"
    "{\"event\":\"ping-done\",\"node\":2,\"t_ns\":9,\"emu_ns\":4000000000,\"ok\":1,"
    "\"failed\":0}\n";

/* Its floor: every pair answered, no detection, 1.75 s. */
static const char *const floor_events =
    "{\"event\":\"started\",\"node\":0,\"t_ns\":5,\"emu_ns\":2000000000,\"as\":\"member\"}\n"
    "{\"event\":\"view\",\"node\":0,\"t_ns\":6,\"emu_ns\":2000000001,\"epoch\":1}\n"
    "{\"event\":\"ping\",\"node\":0,\"emu_ns\":2100000000,\"dst\":1,\"hops\":1,\"rtt_ns\":5,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":0,\"emu_ns\":2100000000,\"dst\":2,\"hops\":1,\"rtt_ns\":5,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":1,\"emu_ns\":2100000000,\"dst\":0,\"hops\":1,\"rtt_ns\":5,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":1,\"emu_ns\":2100000000,\"dst\":2,\"hops\":1,\"rtt_ns\":5,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":2,\"emu_ns\":2100000000,\"dst\":0,\"hops\":1,\"rtt_ns\":5,\"ok\":1}\n"
    "{\"event\":\"ping\",\"node\":2,\"emu_ns\":2100000000,\"dst\":1,\"hops\":1,\"rtt_ns\":5,\"ok\":1}\n"
    "{\"event\":\"ping-done\",\"node\":0,\"emu_ns\":3000000000,\"ok\":2,\"failed\":0}\n"
    "{\"event\":\"ping-done\",\"node\":1,\"emu_ns\":3750000000,\"ok\":2,\"failed\":0}\n"
    "{\"event\":\"ping-done\",\"node\":2,\"emu_ns\":3500000000,\"ok\":2,\"failed\":0}\n";

/* --ping: the two runs read, judged, set side by side and reported. */
static void test_ping(void)
{
    char dir[] = "/tmp/test-bench-faults-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct bench_faults_summary s;
    memset(&s, 0, sizeof s);
    CHECK(bench_faults_parse_config("host-3", 1, &s.config, error, sizeof error));
    s.ping = true;
    write_events(dir, ping_events);
    CHECK(bench_faults_read_events(dir, s.config.nodes, &s.ping_run));
    CHECK_EQ(s.ping_run.pairs, 6);
    CHECK_EQ(s.ping_run.answered, 4); /* 1->2 failed, 2->1 missing, 0->1 once */
    CHECK_EQ(s.ping_run.detections, 1);
    CHECK_EQ(s.ping_run.view_changes, 2);
    CHECK_EQ(s.ping_run.done, 3);
    CHECK_EQ(s.ping_run.duration_ns, 3500000000ull); /* 1.0 s -> 4.5 s */
    CHECK(bench_faults_ping_failed(&s.ping_run)); /* a pair unanswered, tori-emu exit 0 */
    write_events(dir, floor_events);
    CHECK(bench_faults_read_events(dir, s.config.nodes, &s.ping_floor));
    CHECK_EQ(s.ping_floor.answered, 6);
    CHECK_EQ(s.ping_floor.detections, 0);
    CHECK_EQ(s.ping_floor.view_changes, 0);
    CHECK_EQ(s.ping_floor.duration_ns, 1750000000ull);
    CHECK(!bench_faults_ping_failed(&s.ping_floor));
    s.ping_floor.status = 1; /* tori-emu failed it: so does the benchmark */
    CHECK(bench_faults_ping_failed(&s.ping_floor));
    s.ping_floor.status = 0;
    bench_faults_ping_ratio(&s);
    CHECK(s.ping_ratio > 1.9999 && s.ping_ratio < 2.0001);
    remove_events(dir);

    /* The record and the table say all of it. */
    char text[8192];
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f != NULL) {
        bench_faults_write_json(&s, f);
        bench_faults_print_table(&s, 1, f);
        rewind(f);
        size_t length = fread(text, 1, sizeof text - 1, f);
        text[length] = '\0';
        fclose(f);
        CHECK_CONTAINS(text, "\"ping\":{\"heartbeat_ms\":10,\"detect_timeout_ms\":60,"
                             "\"status\":0,\"duration_ns\":3500000000,\"pairs\":6,"
                             "\"answered\":4,\"ping_done\":3,\"false_detections\":1,"
                             "\"view_changes\":2}");
        CHECK_CONTAINS(text, "\"ping_floor\":{\"heartbeat_ms\":15000,"
                             "\"detect_timeout_ms\":60000,\"status\":0,"
                             "\"duration_ns\":1750000000,\"pairs\":6,\"answered\":6,");
        CHECK_CONTAINS(text, "\"ping_ratio\":2.000,");
        CHECK_CONTAINS(text, "host-3                   10/60    3.500         4/6     1     2"
                             "    0    1.750         6/6     0     0    0    2.00");
        CHECK_CONTAINS(text, "host-3: the ping left 2 of 6 pairs unanswered");
        CHECK_CONTAINS(text, "host-3: the ping had 1 false detections and 2 view changes");
    }
}

/* --ping: the floor takes the link timings the launcher gave the ping. */
static void test_link_timings(void)
{
    char dir[] = "/tmp/test-bench-faults-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    unsigned rto = 0, retries = 0;
    CHECK(!bench_faults_read_link_timings(dir, &rto, &retries)); /* no personality */
    struct personality p;
    memset(&p, 0, sizeof p);
    personality_set_defaults(&p);
    p.dims = 3;
    for (unsigned d = 0; d < 3; d++)
        p.dim_size[d] = 4;
    p.member_count = 64;
    p.link_rto_ms = 111;
    p.link_retries = 8;
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    char path[128];
    snprintf(path, sizeof path, "%s/node0.personality", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
        fwrite(block, 1, sizeof block, f);
        fclose(f);
    }
    CHECK(bench_faults_read_link_timings(dir, &rto, &retries));
    CHECK_EQ(rto, 111);
    CHECK_EQ(retries, 8);
    f = fopen(path, "wb"); /* a damaged block is no answer */
    if (f != NULL) {
        block[20] ^= 0xff;
        fwrite(block, 1, sizeof block, f);
        fclose(f);
    }
    CHECK(!bench_faults_read_link_timings(dir, &rto, &retries));
    remove(path);
    rmdir(dir);
}

/* --idle-seconds: the idle run's cost, from tori-emu's cpu.json and each
 * node's first and last stats (issue 20). */
static void test_idle_cost(void)
{
    char dir[] = "/tmp/test-bench-faults-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    struct bench_faults_summary summary;
    memset(&summary, 0, sizeof summary);
    bench_faults_read_idle_cost(dir, &summary); /* neither file */
    CHECK(summary.idle_cpu_per_node == -1 && summary.idle_frames_per_node == -1);
    char cpu[128], events[128];
    snprintf(cpu, sizeof cpu, "%s/cpu.json", dir);
    snprintf(events, sizeof events, "%s/events.jsonl", dir);
    FILE *f = fopen(cpu, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("{\"nodes\":2,\"window_s\":10.000,\"cpu_s\":0.500,\"cpu_per_node_s\":0.025000}\n",
              f);
        fclose(f);
    }
    f = fopen(events, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        /* Node 0: 1000 frames in 10 s; node 1: 3000 in 10 s; node 2 has a
         * single stats (no window) and is left out; other lines ignored. */
        fputs("{\"event\":\"stats\",\"node\":0,\"t_ns\":5000000000,\"sent\":9,\"wire\":500}\n"
              "{\"event\":\"stats\",\"node\":1,\"t_ns\":6000000000,\"wire\":100}\n"
              "{\"event\":\"view\",\"node\":1,\"t_ns\":7000000000,\"wire\":99999}\n"
              "{\"event\":\"stats\",\"node\":2,\"t_ns\":6000000000,\"wire\":100}\n"
              "{\"event\":\"stats\",\"node\":0,\"t_ns\":15000000000,\"sent\":9,\"wire\":1500}\n"
              "{\"event\":\"stats\",\"node\":1,\"t_ns\":16000000000,\"wire\":3100}\n",
              f);
        fclose(f);
    }
    bench_faults_read_idle_cost(dir, &summary);
    CHECK(summary.idle_cpu_per_node > 0.0249 && summary.idle_cpu_per_node < 0.0251);
    CHECK(summary.idle_frames_per_node > 199.9 && summary.idle_frames_per_node < 200.1);
    remove(cpu);
    remove(events);
    rmdir(dir);
}

int main(void)
{
    test_configs();
    test_script();
    test_records();
    test_idle_count();
    test_ping();
    test_link_timings();
    test_idle_cost();
    return check_report("emu.bench_faults");
}
