/*
 * A tree parent and child that cannot reach each other (nothing gets
 * between nodes 1 and 5 of a 4x4x4 torus, radix 4: 5 is 1's child) while
 * every other path works.  The child is reported and removed; each time it
 * rejoins it lands in the same place under the same parent and is removed
 * again.  Without backoff that cycle ran every ~25 units for as long as the
 * pair stayed cut (a join round and a removal round each time); the joiner
 * now waits longer after each such turn-away, so the cycle slows down, and
 * once the pair can talk again everything converges.
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
    CHECK(r.stats.expelled + r.stats.joined >= 1); /* the cut was noticed */
    /* Each turn-away costs two views (the child added, then removed). */
    printf("block: views=%" PRIu32 " stable=%" PRIu32 " joined=%" PRIu32 " messages=%" PRIu64 "\n",
           r.stats.distinct_views, r.stats.stable_count, r.stats.joined, r.stats.sent_total);
    CHECKF(r.stats.distinct_views <= 16, "%" PRIu32 " views while one pair was cut for 300 units",
           r.stats.distinct_views);
    sim_case_free(&r);
    return check_report("sim.block_pair");
}
