/*
 * Issue 20: re-forming under the every-side policy.  A 2x2x2 torus is cut
 * in two halves (x=0: nodes 0,2,4,6; x=1: nodes 1,3,5,7); each side forms
 * its own view.  After the heal the x=0 side's view wins: the x=1 side
 * fetches it (it becomes their reference, without them) and is expelled by
 * it.  If the winners die before the losers got back in, nobody holds a
 * view, and nobody was in the reference the survivors held: before the fix
 * no one re-formed and the run ended with no view at all.  Now a member's
 * new life re-forms under every-side, asking every id: node 1, the lowest
 * survivor, mints one view and all four survivors end in it.
 *
 * That state lasts some 26 us of simulated time, so the kill time sweeps
 * KILL_TIMES points, KILL_STEP_NS apart, from the heal on (1.28 ms: past
 * the heal's heartbeats at a quarter rate to non-member neighbours); at
 * least one must land in it, and every run must end in agreement with the
 * four survivors in one view.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

#define KILL_TIMES 641u
#define KILL_STEP_NS 2000u
#define HEAL_UNITS 400u

/* The `reformed` events of a run's event stream: how many, and the last's node and members. */
static unsigned reformed_events(FILE *out, unsigned *node, unsigned *members)
{
    rewind(out);
    char line[512];
    unsigned count = 0;
    while (fgets(line, sizeof line, out) != NULL) {
        const char *n = strstr(line, " node=");
        const char *m = strstr(line, " members=");
        if (strstr(line, " event=reformed ") == NULL || n == NULL || m == NULL) {
            continue;
        }
        count++;
        if (sscanf(n, " node=%u", node) != 1 || sscanf(m, " members=%u", members) != 1) {
            *node = *members = 0;
        }
    }
    return count;
}

int main(void)
{
    unsigned in_state = 0;
    for (unsigned k = 0; k < KILL_TIMES; k++) {
        char inject[256];
        unsigned m = k * KILL_STEP_NS;
        snprintf(inject, sizeof inject,
                 "partition x<1 at {U*10}; heal at {U*%u}; kill 0 at {U*%u+%u}; "
                 "kill 2 at {U*%u+%u}; kill 4 at {U*%u+%u}; kill 6 at {U*%u+%u}",
                 HEAL_UNITS, HEAL_UNITS, m, HEAL_UNITS, m, HEAL_UNITS, m, HEAL_UNITS, m);
        struct sim_case c = {
            .dims = "2x2x2",
            .radix = 4,
            .layout = MEMBERSHIP_LAYOUT_RADIX,
            .policy = MEMBERSHIP_POLICY_EVERY_SIDE,
            .heartbeats = true,
            .link_detect_ns = UINT64_MAX,
            .inject = inject,
            .events = true,
        };
        FILE *out = tmpfile();
        CHECK(out != NULL);
        if (out == NULL)
            return check_report("sim.reform_every_side");
        struct sim_result r;
        sim_case_run(&c, &r, out);
        CHECK(r.ran);
        CHECKF(r.ok, "kill at heal+%u ns: %s", m, r.stats.violation_text);
        CHECKF(r.stats.final_live == 4 && r.stats.final_viewers == 4,
               "kill at heal+%u ns: final view of %" PRIu32 " held by %" PRIu32
               ", expected the 4 survivors",
               m, r.stats.final_live, r.stats.final_viewers);
        unsigned node = 0, members = 0;
        unsigned events = reformed_events(out, &node, &members);
        CHECKF(events == r.stats.reformed, "kill at heal+%u ns: %u reformed lines, %" PRIu32
               " counted", m, events, r.stats.reformed);
        if (r.stats.reformed > 0) {
            in_state++;
            CHECKF(r.stats.reformed == 1 && node == 1 && members == 4,
                   "kill at heal+%u ns: %" PRIu32 " views re-formed, the last by node %u "
                   "with %u members, expected one by node 1 with all 4",
                   m, r.stats.reformed, node, members);
        }
        fclose(out);
        sim_case_free(&r);
    }
    printf("sim.reform_every_side: %u of %u kill times left no view and re-formed one\n",
           in_state, KILL_TIMES);
    CHECKF(in_state >= 1, "no kill time of %u left the survivors without a view: the sweep "
           "misses the state it tests", KILL_TIMES);
    return check_report("sim.reform_every_side");
}
