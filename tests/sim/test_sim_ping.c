/*
 * Issue 16 in the simulator: `ping all at T`, an all-pairs ping among the
 * running nodes at that moment (routes on: each pair's frames follow the
 * routers' hops, there and back).  The summary counts pairs and answers;
 * a pair that does not answer fails the run.  64 nodes (4x4x4).
 */
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

static void run(const char *inject, struct sim_result *r)
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
    sim_case_run(&c, r, NULL);
    CHECK(r->ran);
}

int main(void)
{
    struct sim_result r;

    run("ping all at {U*10}", &r);
    CHECKF(r.ok, "%s", r.stats.violation_text);
    CHECK_EQ(r.stats.pings, 1);
    CHECK_EQ(r.stats.ping_pairs, 64u * 63u);
    CHECK_EQ(r.stats.ping_missing, 0);
    sim_case_free(&r);

    /* After a crash, among the 63 running nodes; twice. */
    run("ping all at {U*5}; kill 5 at {U*10}; ping all at {U*100}", &r);
    CHECKF(r.ok, "%s", r.stats.violation_text);
    CHECK_EQ(r.stats.pings, 2);
    CHECK_EQ(r.stats.ping_pairs, 64u * 63u + 63u * 62u);
    CHECK_EQ(r.stats.ping_missing, 0);
    sim_case_free(&r);

    /* Cut in two: the 2 x 32 x 32 pairs across do not answer: the run fails. */
    run("partition x<2 at {U*10}; ping all at {U*20}", &r);
    CHECK(!r.ok);
    CHECK_EQ(r.stats.ping_missing, 2u * 32u * 32u);
    CHECK(strstr(r.stats.violation_text, "ping all: 2048 of 4032 pairs") != NULL);
    sim_case_free(&r);
    return check_report("sim.ping_all");
}
