/* The one recovery policy parser (tools/job_options.h): the contract's
 * example, defaults, the canonical text read back, and a one-line error
 * for each way a policy can be wrong. */
#include <string.h>

#include "tests/check.h"
#include "tools/job_options.h"

static void parses(const char *text, struct recovery_policy *policy)
{
    char error[400] = "";
    CHECKF(job_options_parse_recovery(text, policy, error, sizeof error), "'%s': %s", text,
           error);
}

static void refuses(const char *text, const char *fragment)
{
    struct recovery_policy policy;
    char error[400] = "";
    CHECKF(!job_options_parse_recovery(text, &policy, error, sizeof error), "'%s' accepted",
           text);
    CHECK_CONTAINS(error, "--recovery '");
    CHECK_CONTAINS(error, fragment);
    CHECK(strchr(error, '\n') == NULL);
}

/* --lossy-link COUNT/MS into the job block's link loss limit. */
static void check_lossy_link(void)
{
    struct job_options options = {.app = "stencil", .default_iterations = 1,
                                  .max_iterations = 100, .lossy_link = "200/2500"};
    struct job job;
    char error[400] = "";
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.link_lossy_retransmits, 200);
    CHECK_EQ(job.link_lossy_window_ms, 2500);
    options.lossy_link = NULL;
    CHECK(job_options_build(&options, &job, error, sizeof error));
    CHECK(job.link_lossy_retransmits == 0 && job.link_lossy_window_ms == 0); /* defaults */
    static const char *const bad[] = {"64", "/1000", "64/", "0/1000", "64/0", "65536/1",
                                      "64/1000/2", "x/1000", "12345678901234567890/1"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        options.lossy_link = bad[i];
        CHECKF(!job_options_build(&options, &job, error, sizeof error), "'%s' accepted",
               bad[i]);
        CHECK_CONTAINS(error, "--lossy-link '");
        CHECK_CONTAINS(error, "COUNT/MS");
        CHECK(strchr(error, '\n') == NULL);
    }
}

int main(void)
{
    check_lossy_link();
    struct recovery_policy p;
    parses("process=restart; physical=migrate; network=ignore; repeated(3 in 60s)=migrate", &p);
    CHECK_EQ(p.version, RECOVERY_POLICY_VERSION);
    CHECK_EQ(p.action[FAULT_MODEL_PROCESS - 1], RECOVERY_RESTART);
    CHECK_EQ(p.action[FAULT_MODEL_PHYSICAL - 1], RECOVERY_MIGRATE);
    CHECK_EQ(p.action[FAULT_MODEL_NETWORK - 1], RECOVERY_IGNORE);
    CHECK_EQ(p.action[FAULT_MODEL_REPEATED - 1], RECOVERY_MIGRATE);
    CHECK_EQ(p.repeat_count, 3);
    CHECK_EQ(p.repeat_window_s, 60);
    CHECK_EQ(p.quarantine_limit, 6); /* 2K by default */
    char text[200];
    job_options_format_recovery(&p, text, sizeof text);
    CHECK(strcmp(text, "process=restart; physical=migrate; network=ignore; "
                       "repeated(3 in 60s)=migrate; quarantine=6") == 0);
    struct recovery_policy again;
    parses(text, &again);
    CHECK(memcmp(&again, &p, sizeof p) == 0);

    /* Omitted models: ignore; spaces are free; an explicit quarantine. */
    parses("  physical = promote ;repeated( 2 in 65535s )=restart; quarantine=3 ", &p);
    CHECK_EQ(p.action[FAULT_MODEL_PROCESS - 1], RECOVERY_IGNORE);
    CHECK_EQ(p.action[FAULT_MODEL_PHYSICAL - 1], RECOVERY_PROMOTE);
    CHECK(p.repeat_count == 2 && p.repeat_window_s == 65535 && p.quarantine_limit == 3);
    CHECK(recovery_policy_uses(&p, RECOVERY_PROMOTE) && !recovery_policy_uses(&p, RECOVERY_MIGRATE));

    /* PROMOTE's pairing: spares share the ranks in blocks, the first `most`
     * of each block mirrored. */
    uint32_t index;
    CHECK_EQ(recovery_mirror_node(3, 7, 8, 8, &index), 7u); /* 2x2x2, one spare */
    CHECK_EQ(index, 3u);
    CHECK_EQ(recovery_mirror_node(2, 6, 8, 8, &index), 6u); /* spares 6, 7: 0-2 and 3-5 */
    CHECK_EQ(index, 2u);
    CHECK_EQ(recovery_mirror_node(3, 6, 8, 8, &index), 7u);
    CHECK_EQ(index, 0u);
    CHECK_EQ(recovery_mirror_node(5, 6, 8, 8, &index), 7u);
    CHECK_EQ(index, 2u);
    CHECK_EQ(recovery_mirror_node(5, 7, 9, 2, &index), 8u); /* block 4-6, past its first 2 */
    CHECK_EQ(recovery_mirror_node(6, 7, 9, 2, &index), UINT32_MAX);
    CHECK_EQ(recovery_mirror_node(0, 8, 8, 8, &index), UINT32_MAX); /* no spare */
    CHECK_EQ(recovery_mirror_node(8, 8, 9, 8, &index), UINT32_MAX); /* no such rank */
    for (uint32_t ranks = 1; ranks < 40; ranks++) {
        for (uint32_t nodes = ranks + 1; nodes < ranks + 6; nodes++) {
            uint32_t seen[64] = {0};
            for (uint32_t r = 0; r < ranks; r++) {
                uint32_t node = recovery_mirror_node(r, ranks, nodes, 64, &index);
                CHECK(node >= ranks && node < nodes);
                CHECK_EQ(index, seen[node - ranks]++); /* consecutive places */
            }
        }
    }
    parses("repeated(200 in 1s)=ignore", &p);
    CHECK_EQ(p.quarantine_limit, 0); /* 2K > 255: no quarantine */
    parses("none", &p);
    CHECK_EQ(p.version, 0);
    job_options_format_recovery(&p, text, sizeof text);
    CHECK(strcmp(text, "none") == 0);

    refuses("", "is no MODEL=ACTION");
    refuses("process=restart;", "is no MODEL=ACTION");
    refuses("proc=restart", "'proc=restart' names no fault model");
    refuses("none=restart", "names no fault model");
    refuses("left=restart", "'left=restart' names no fault model"); /* a leave is no fault */
    refuses("process=reboot", "names no action");
    refuses("process=restart; process=ignore", "gives a model twice");
    refuses("repeated=migrate", "needs its count and window");
    refuses("physical(3 in 60s)=migrate", "takes no count");
    refuses("repeated(0 in 60s)=migrate", "K 1..255");
    refuses("repeated(256 in 60s)=migrate", "K 1..255");
    refuses("repeated(3 in 0s)=migrate", "N 1..65535");
    refuses("repeated(3 in 65536s)=migrate", "N 1..65535");
    refuses("repeated(3 in 60)=migrate", "repeated(K in Ns)");
    refuses("repeated(3 in 1m)=migrate", "repeated(K in Ns)");
    refuses("quarantine=4", "needs repeated(K in Ns)");
    refuses("repeated(3 in 60s)=migrate; quarantine=3", "above the repeated count");
    refuses("repeated(3 in 60s)=migrate; quarantine=256", "limit in 2..255");

    /* Through the job options: the job block gets it, validated. */
    struct job_options options = {.app = "stencil", .recovery = "physical=migrate",
                                  .default_iterations = 10, .max_iterations = 100};
    struct job job;
    char error[400] = "";
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.recovery.action[FAULT_MODEL_PHYSICAL - 1], RECOVERY_MIGRATE);
    /* A rank handed on (restart, migrate, promote) keeps the communicators'
     * ranks: rebuild by default; an explicit --comm-mode stands; ignore
     * alone leaves MPI's abort. */
    CHECK_EQ(job.comm_mode, JOB_COMM_REBUILD);
    options.recovery = "process=restart";
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.comm_mode, JOB_COMM_REBUILD);
    options.recovery = "network=ignore";
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.comm_mode, JOB_COMM_ABORT);
    options.recovery = "physical=migrate";
    options.comm_mode = "shrink";
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.comm_mode, JOB_COMM_SHRINK);
    options.comm_mode = NULL;
    options.recovery = "physical=explode";
    CHECK(!job_options_build(&options, &job, error, sizeof error));
    CHECK_CONTAINS(error, "--recovery 'physical=explode' is invalid");

    /* --routing (issue 16), through the same job options. */
    options.recovery = NULL;
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.routing_mode, JOB_ROUTING_DETOUR);
    options.routing = "table";
    CHECKF(job_options_build(&options, &job, error, sizeof error), "%s", error);
    CHECK_EQ(job.routing_mode, JOB_ROUTING_TABLE);
    options.routing = "dsdv";
    CHECK(!job_options_build(&options, &job, error, sizeof error));
    CHECK_CONTAINS(error, "--routing 'dsdv' is invalid");
    CHECK_CONTAINS(error, "detour or table");
    CHECK(strchr(error, '\n') == NULL);
    return check_report("test_recovery_options");
}
