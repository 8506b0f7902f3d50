/*
 * Issue 15 in the simulator: each fault kind classified into its model
 * under a recovery policy, with the root's decision at every member that
 * installs the change.  64 nodes, heartbeats on, routes on.
 *   appkill -> process (the node leaves the view, stays up, out of the job;
 *   two at once: both leave, the one whose request was lost asks again)
 *   kill    -> physical
 *   link off, the far node reachable around it -> network, no view change
 *   reboots in a row -> repeated, then quarantine: the rejoin is refused
 */
#include <inttypes.h>
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

int main(void)
{
    const char *policy = "process=restart; physical=migrate; network=ignore; "
                         "repeated(2 in 60s)=promote; quarantine=3";
    struct sim_result r;

    run("appkill 5 at {U*10}", policy, &r);
    CHECK_EQ(r.stats.faults_classified[FAULT_MODEL_PROCESS], 1);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PROCESS], 63); /* every member left */
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PHYSICAL], 0);
    CHECK_EQ(r.stats.false_detections, 0);
    CHECK_EQ(r.stats.final_live, 63);
    sim_case_free(&r);

    /* Two process faults at once: the root removes one while the other's
     * request (no sequence) is lost; that node asks again while it is in
     * the view, as a node's glue does, and both leave. */
    run("appkill 5 at {U*10}; appkill 9 at {U*10}", policy, &r);
    CHECK_EQ(r.stats.faults_classified[FAULT_MODEL_PROCESS], 2);
    CHECK_EQ(r.stats.final_live, 62);
    sim_case_free(&r);

    run("kill 5 at {U*10}", policy, &r);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PHYSICAL], 63);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PROCESS], 0);
    CHECK_EQ(r.stats.final_live, 63);
    sim_case_free(&r);

    /* 5 and 6 are torus neighbours: each end probes the other around the
     * cut, gets an answer, and says network; nobody leaves the view. */
    run("link 5 6 off at {U*10}", policy, &r);
    CHECK_EQ(r.stats.faults_classified[FAULT_MODEL_NETWORK], 2);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_NETWORK], 2);
    CHECK_EQ(r.stats.failures_detected, 0);
    CHECK_EQ(r.stats.distinct_views, 0);
    CHECK_EQ(r.stats.final_live, 64);
    sim_case_free(&r);

    /* Three reboots (kill, restart): physical, then repeated, then repeated
     * and quarantined; the fourth life is refused and stays out. */
    run("kill 5 at {U*10}; restart 5 at {U*100}; kill 5 at {U*300}; restart 5 at {U*400}; "
        "kill 5 at {U*600}; restart 5 at {U*700}",
        policy, &r);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PHYSICAL], 63);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_REPEATED], 2 * 63);
    CHECK_EQ(r.stats.joins_refused, 1);
    CHECK_EQ(r.stats.final_live, 63);
    sim_case_free(&r);

    /* No policy: the same faults, no decisions, no classification. */
    run("appkill 5 at {U*10}; link 9 10 off at {U*10}", "none", &r);
    CHECK_EQ(r.stats.decisions[FAULT_MODEL_PROCESS], 0);
    CHECK_EQ(r.stats.faults_classified[FAULT_MODEL_NETWORK], 0);
    CHECK_EQ(r.stats.final_live, 63);
    sim_case_free(&r);
    return check_report("sim.recovery_models");
}
