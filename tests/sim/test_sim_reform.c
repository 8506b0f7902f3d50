/*
 * Issue 20: no view anywhere is a state the job can leave.  A 4x4x4 torus
 * loses its root (node 0) and is cut in two halves at once: the half with
 * the root's place keeps 31 of the 64 members, the other 32 without the
 * root, so neither side holds a majority of the last completed view and
 * every survivor drops its view.  After the heal, nobody holds a view to
 * rejoin (before: the run ended with no running node holding one).  The
 * survivors re-form one (the lowest live id, node 1, mints it once a
 * majority votes for it) and all 63 end in it, with the simulator's
 * invariants checked after every step.  The same cut without the heal
 * must not re-form anything: no side is a majority.  At 8x8x4, with ids
 * 0-79 dead as well, the lowest live id (80) lies past the first scan of
 * REFORM_SCAN ids: the scans move on, and 176 survivors, a majority of
 * 256, end in one view.
 */
#include <inttypes.h>
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

static void run(const char *dims, const char *inject, enum membership_layout_kind layout,
                uint32_t minter, uint32_t survivors, bool healed)
{
    struct sim_case c = {
        .dims = dims,
        .radix = 4,
        .layout = layout,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = UINT64_MAX,
        .inject = inject,
        .events = true,
    };
    FILE *out = tmpfile();
    CHECK(out != NULL);
    if (out == NULL)
        return;
    struct sim_result r;
    sim_case_run(&c, &r, out);
    CHECK(r.ran);
    CHECKF(r.stats.partitioned == survivors,
           "%s: %" PRIu32 " partitioned events, expected %" PRIu32, inject, r.stats.partitioned,
           survivors);
    if (healed) {
        CHECKF(r.ok, "%s: %s", inject, r.stats.violation_text);
        CHECKF(r.stats.reformed == 1, "%s: %" PRIu32 " views re-formed, expected 1", inject,
               r.stats.reformed);
        CHECKF(r.stats.final_live == survivors && r.stats.final_viewers == survivors,
               "%s: final view of %" PRIu32 " held by %" PRIu32 ", expected %" PRIu32, inject,
               r.stats.final_live, r.stats.final_viewers, survivors);
        /* The event stream says what happened, at the minter. */
        rewind(out);
        char line[512];
        char node[32];
        snprintf(node, sizeof node, " node=%" PRIu32 " ", minter);
        bool seen = false;
        while (fgets(line, sizeof line, out) != NULL) {
            seen = seen || (strstr(line, " event=reformed ") != NULL &&
                            strstr(line, node) != NULL && strstr(line, " members=") != NULL &&
                            strstr(line, " from=") != NULL);
        }
        CHECKF(seen, "%s: no reformed event at node %" PRIu32, inject, minter);
    } else {
        /* Still cut: neither side may re-form (the run ends without a view). */
        CHECKF(r.stats.reformed == 0, "%s: %" PRIu32 " views re-formed, expected 0", inject,
               r.stats.reformed);
    }
    fclose(out);
    sim_case_free(&r);
}

int main(void)
{
    const char *halves = "kill 0 at {U*10}; partition x<2 at {U*10}; heal at {U*300}";
    run("4x4x4", halves, MEMBERSHIP_LAYOUT_RADIX, 1, 63, true);
    run("4x4x4", halves, MEMBERSHIP_LAYOUT_BOX, 1, 63, true);
    run("4x4x4", "kill 0 at {U*10}; partition x<2 at {U*10}", MEMBERSHIP_LAYOUT_RADIX, 1, 63,
        false);
    char inject[2048] = "";
    for (unsigned id = 0; id < 80; id++) {
        char item[32];
        snprintf(item, sizeof item, "kill %u at {U*10}; ", id);
        strncat(inject, item, sizeof inject - strlen(inject) - 1);
    }
    strncat(inject, "partition x<4 at {U*10}; heal at {U*300}", sizeof inject - strlen(inject) - 1);
    run("8x8x4", inject, MEMBERSHIP_LAYOUT_RADIX, 80, 176, true);
    return check_report("sim.reform");
}
