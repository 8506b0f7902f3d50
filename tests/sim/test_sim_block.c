/*
 * A tree parent and child that cannot reach each other (nothing gets
 * between nodes 1 and 5 of a 4x4x4 torus, radix 4: 5 is 1's child) while
 * every other path works.  Each reports the other; the root checks every
 * report with a probe of its own (issue 20), which both answer, so nobody
 * is removed.  (Before that the child was removed, rejoined in the same
 * place under the same parent and was removed again, a cycle the joiner's
 * backoff slowed down.)  Once the pair can talk again everything agrees.
 */
#include <inttypes.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

int main(void)
{
    /* The suspicion of a live node only extends the run (the settle time
     * counts from the last scripted fault). */
    struct sim_case c = {
        .dims = "4x4x4",
        .radix = 4,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = UINT64_MAX,
        .inject = "block 1 5 at {U*10} for {U*300}; suspect 20 21 at {U*310}",
    };
    struct sim_result r;
    sim_case_run(&c, &r, NULL);
    CHECK(r.ran);
    CHECKF(r.ok, "no agreement after the pair could talk again: %s", r.stats.violation_text);
    CHECK(r.stats.false_detections >= 1); /* the cut was noticed */
    CHECK(membership_get_counters(sim_node(r.sim, 0))->reports_refuted >= 1); /* and checked */
    /* Each turn-away costs two views (the child added, then removed). */
    printf("block: views=%" PRIu32 " stable=%" PRIu32 " joined=%" PRIu32 " messages=%" PRIu64 "\n",
           r.stats.distinct_views, r.stats.stable_count, r.stats.joined, r.stats.sent_total);
    CHECKF(r.stats.distinct_views <= 16, "%" PRIu32 " views while one pair was cut for 300 units",
           r.stats.distinct_views);
    sim_case_free(&r);
    return check_report("sim.block_pair");
}
