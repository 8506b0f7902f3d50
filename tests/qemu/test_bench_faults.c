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

/* --idle-seconds: the failure-detected events of an idle run's events.jsonl. */
static void test_idle_count(void)
{
    char dir[] = "/tmp/test-bench-faults-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(bench_faults_count_detections(dir) == -1); /* no events.jsonl */
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("{\"node\":1,\"event\":\"ready\"}\n"
              "{\"node\":1,\"event\":\"failure-detected\",\"who\":2}\n"
              "{\"node\":3,\"event\":\"view\",\"live\":7}\n"
              "{\"node\":3,\"event\":\"failure-detected\",\"who\":2}\n",
              f);
        fclose(f);
    }
    CHECK(bench_faults_count_detections(dir) == 2);
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
    test_idle_cost();
    return check_report("emu.bench_faults");
}
