/*
 * Issue 16 in the simulator: a graceful leave (`leave N`).  64 nodes,
 * heartbeats on, routes on.  The leaver asks the root to remove it and
 * halts once out: no failure-detected anywhere, no recovery decision (with
 * or without a policy, a leave is no fault), a `left` event at every
 * member and at the leaver, and the view without it.
 */
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"
#include "tools/job_options.h"

static void run(const char *inject, const char *policy, struct sim_result *r)
{
    struct sim_case c = {
        .dims = "4x4x4",
        .radix = 4,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = UINT64_MAX,
        .routes = true,
        .inject = inject,
    };
    char error[400] = "";
    CHECKF(job_options_parse_recovery(policy, &c.recovery, error, sizeof error), "%s", error);
    sim_case_run(&c, r, NULL);
    CHECK(r->ran);
    CHECKF(r->ok, "'%s': %s", inject, r->stats.violation_text);
}

static void check_no_fault(const struct sim_result *r)
{
    CHECK_EQ(r->stats.failures_detected, 0);
    CHECK_EQ(r->stats.false_detections, 0);
    CHECK_EQ(r->stats.expelled, 0);
    for (unsigned m = 0; m < FAULT_MODEL_LIMIT; m++) {
        CHECK_EQ(r->stats.faults_classified[m], 0);
        CHECK_EQ(r->stats.decisions[m], 0);
    }
}

int main(void)
{
    struct sim_result r;

    /* A leaf leaves: 63 members and the leaver say left; it halts. */
    run("leave 5 at {U*10}", "none", &r);
    check_no_fault(&r);
    CHECK_EQ(r.stats.left_events, 64);
    CHECK_EQ(r.stats.nodes_left, 1);
    CHECK_EQ(r.stats.final_live, 63);
    sim_case_free(&r);

    /* The root leaves, under a policy: still no decision (a leave is not
     * counted or decided), the next member takes over and removes it. */
    run("leave 0 at {U*10}", "process=restart; physical=restart", &r);
    check_no_fault(&r);
    CHECK_EQ(r.stats.left_events, 64);
    CHECK_EQ(r.stats.nodes_left, 1);
    CHECK_EQ(r.stats.final_live, 63);
    sim_case_free(&r);

    /* A leave and a crash together, under a policy: the crash is decided
     * (physical) at every member, the leave is not. */
    run("leave 5 at {U*10}; kill 9 at {U*10}", "physical=restart", &r);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PHYSICAL], 62);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_LEFT], 0);
    CHECK_EQ(r.stats.nodes_left, 1);
    CHECK_EQ(r.stats.final_live, 62);
    sim_case_free(&r);
    return check_report("sim.leave");
}
