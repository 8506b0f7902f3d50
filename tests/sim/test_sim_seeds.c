/*
 * Issue 16 in the simulator: seed nodes (Phoenix's hubs).  On a 4x4x4
 * torus whose last node (63) is a spare, nodes 1-29 of the initial view
 * are killed; then the spare joins (heartbeats off: no neighbour's
 * heartbeat tells it whom to ask).  Without seeds it asks its last view (the
 * initial one) in turn from a per-node offset and waits out each dead
 * contact; with a live seed it asks the seed first and is in at once: it
 * sends fewer join requests and gets in sooner.
 */
#include <inttypes.h>
#include <stdio.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

#define SPARE 63u

struct join_cost {
    uint32_t requests;
    uint64_t end_ns;
};

static struct join_cost run(const uint32_t *seeds, uint32_t seed_count)
{
    struct sim_case c = {
        .dims = "4x4x4",
        .radix = 4,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .members = 63,
        .heartbeats = false, /* no heartbeat from a neighbour hints the spare */
        .link_detect_ns = UINT64_MAX,
        .inject = "kill id>=1,id<30 at {U*10}; join 63 at {U*200}",
        .seed_count = seed_count,
    };
    for (uint32_t i = 0; i < seed_count; i++)
        c.seeds[i] = seeds[i];
    struct sim_result r;
    sim_case_run(&c, &r, NULL);
    CHECK(r.ran);
    CHECKF(r.ok, "%s", r.stats.violation_text);
    CHECK_EQ(r.stats.final_live, 63u - 29u + 1u); /* the spare is in */
    struct join_cost cost = {0, 0};
    if (r.sim != NULL) {
        cost.requests = membership_get_counters(sim_node(r.sim, SPARE))->joins_sent;
        cost.end_ns = r.stats.end_ns;
    }
    sim_case_free(&r);
    return cost;
}

int main(void)
{
    static const uint32_t seeds[] = {0, 61};
    struct join_cost without = run(NULL, 0);
    struct join_cost with = run(seeds, 2);
    printf("spare's join requests: %" PRIu32 " without seeds, %" PRIu32 " with seeds 0,61\n",
           without.requests, with.requests);
    CHECK(with.requests == 1);
    CHECK(without.requests > 10u * with.requests);
    CHECK(without.end_ns > with.end_ns);
    /* A dead seed costs one request: 1 is dead, 61 redirects to the root. */
    static const uint32_t dead_first[] = {1, 61};
    struct join_cost past_dead = run(dead_first, 2);
    CHECK_EQ(past_dead.requests, 3);
    return check_report("sim.seeds");
}
