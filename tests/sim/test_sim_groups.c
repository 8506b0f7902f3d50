/*
 * Issue 16 in the simulator: group faults and plane cuts of the one fault
 * language (tools/fault.h), spelled out before the run.  64 nodes (4x4x4),
 * heartbeats on.
 *   kill x>=2, then restart x>=2: half the torus goes and comes back
 *   cut x=3|0 except 1 for a while: 15 of the 16 cables across the plane
 *   go down (and come back), nobody is removed
 */
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

/* Runs inject; counts the `inject` lines whose what= is `what`. */
static unsigned run(const char *inject, const char *what, struct sim_result *r)
{
    struct sim_case c = {
        .dims = "4x4x4",
        .radix = 4,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = UINT64_MAX,
        .inject = inject,
    };
    FILE *out = tmpfile();
    CHECK(out != NULL);
    sim_case_run(&c, r, out);
    CHECK(r->ran);
    CHECKF(r->ok, "'%s': %s", inject, r->stats.violation_text);
    rewind(out);
    char line[512], key[64];
    snprintf(key, sizeof key, "event=inject what=%s", what);
    unsigned count = 0;
    while (fgets(line, sizeof line, out) != NULL) {
        const char *at = strstr(line, key);
        char next = at != NULL ? at[strlen(key)] : 'x';
        count += next == ' ' || next == '\n' ? 1u : 0u;
    }
    fclose(out);
    return count;
}

int main(void)
{
    struct sim_result r;

    CHECK_EQ(run("kill x>=2 at {U*10}", "kill", &r), 32);
    CHECK_EQ(r.stats.final_live, 32);
    sim_case_free(&r);

    CHECK_EQ(run("kill x>=2 at {U*10}; restart x>=2 at {U*200}", "restart", &r), 32);
    CHECK_EQ(r.stats.joined, 32);
    CHECK_EQ(r.stats.final_live, 64);
    sim_case_free(&r);

    /* Two predicates: the 8 nodes with x >= 2 and y = 1 (an id among them: 6). */
    CHECK_EQ(run("kill x>=2,y=1 at {U*10}", "kill", &r), 8);
    CHECK_EQ(r.stats.final_live, 56);
    sim_case_free(&r);

    CHECK_EQ(run("cut x=3|0 except 1 at {U*10} for {U*40}", "link-off", &r), 15);
    CHECK_EQ(r.stats.final_live, 64);
    CHECK_EQ(r.stats.false_detections, 0);
    sim_case_free(&r);
    return check_report("sim.groups");
}
