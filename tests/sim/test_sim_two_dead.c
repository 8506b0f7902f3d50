/*
 * Issue 20: a mistaken report costs a probe, never a live member - and a
 * detector that stays quiet: two dead nodes on every short route cost no
 * report at all.
 *
 * On a 2x2x2 torus nodes 3 and 5 are both torus neighbours of 7 and of 1
 * (7's parent in the radix-4 tree, and its far watcher).  With both dead,
 * every minimal route between 1 and 7, and the root's route to 7 (0, 1,
 * then 3 or 5), crosses a dead node.  The routers used to prefer such a
 * route to a detour until the link layer declared the links to the dead
 * down (on QEMU 9 RTOs, 90 ms, plus the tick lateness of TCG, against a
 * far timeout of 120 ms): node 1 reported 7 every timeout, and each report
 * cost the root a probe (which goes around, through a live neighbour of
 * the suspect: before that the root expelled 7, 3 runs in 4 on QEMU).
 * Now the routers go around the nodes their membership shuns wherever a
 * way over other nodes leads on (1 -> 0 -> 2 -> 6 -> 7), so once 3 and 5
 * are suspected or out of the view, nothing between 1 and 7 crosses them.
 *
 * Each case: heartbeats every 4 units (a far member's timeout 32), the
 * links to the dead declared down after `links` units; kill 3 and 5.
 * Expected: exactly 3 and 5 removed, no expulsion, no rejoin, 7 in every
 * view installed anywhere (the views' live counts never fall below 6); the
 * routes lost messages (before the dead were suspected), and no live node
 * was reported, hence no probe for a report, however late the links go down.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

struct two_dead_case {
    uint32_t links;     /* units until the links to the dead go down */
    const char *inject; /* the two kills */
};

static const struct two_dead_case cases[] = {
    {16, "kill 3 at {U*10}; kill 5 at {U*10}"},
    {48, "kill 3 at {U*10}; kill 5 at {U*10}"},
    {96, "kill 3 at {U*10}; kill 5 at {U*10}"},
    {48, "kill 3 at {U*10}; kill 5 at {U*14}"},
    {96, "kill 3 at {U*10}; kill 5 at {U*30}"},
};

static uint64_t refuted(const struct sim_result *r)
{
    uint64_t sum = 0;
    for (uint32_t id = 0; id < r->nodes; id++) {
        sum += membership_get_counters(sim_node(r->sim, id))->reports_refuted;
    }
    return sum;
}

/* The fewest live members of any view installed anywhere, 0 when none. */
static unsigned fewest_live(FILE *events)
{
    unsigned fewest = 0;
    char line[512];
    rewind(events);
    while (fgets(line, sizeof line, events) != NULL) {
        const char *live = strstr(line, " live=");
        if (strstr(line, " event=view ") == NULL || live == NULL) {
            continue;
        }
        unsigned n = (unsigned)strtoul(live + 6, NULL, 10);
        fewest = fewest == 0 || n < fewest ? n : fewest;
    }
    return fewest;
}

static void run(const struct two_dead_case *tc)
{
    struct torus_geometry g;
    CHECK(sim_case_geometry("2x2x2", &g));
    struct sim_params p;
    sim_params_defaults(&p, &g);
    uint64_t unit = sim_unit_ns(&p);
    struct sim_case c = {
        .dims = "2x2x2",
        .radix = 4,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = tc->links * unit,
        .routes = true,
        .inject = tc->inject,
        .views = true,
    };
    FILE *out = tmpfile();
    CHECK(out != NULL);
    if (out == NULL) {
        return;
    }
    struct sim_result r;
    sim_case_run(&c, &r, out);
    const struct sim_stats *s = &r.stats;
    CHECKF(r.ran && r.ok, "links %" PRIu32 "U, %s: %s", tc->links, tc->inject, s->violation_text);
    uint64_t refutations = r.sim != NULL ? refuted(&r) : 0;
    unsigned fewest = fewest_live(out);
    fclose(out);
    printf("links down after %3" PRIu32 "U, %-36s lost on the way %-4" PRIu64
           " live reported %-2" PRIu32 " refuted %-2" PRIu64 " expelled %" PRIu32
           " fewest live in a view %u, final %" PRIu32 "\n",
           tc->links, tc->inject, s->dropped_route, s->false_detections, refutations,
           s->expelled, fewest, s->final_live);
    CHECKF(s->dropped_route > 0, "links %" PRIu32 "U: nothing lost on the way", tc->links);
    CHECKF(s->expelled == 0 && s->joined == 0,
           "links %" PRIu32 "U, %s: %" PRIu32 " expelled, %" PRIu32 " rejoined", tc->links,
           tc->inject, s->expelled, s->joined);
    CHECKF(fewest == 6, "links %" PRIu32 "U, %s: a view of %u live (7 removed)", tc->links,
           tc->inject, fewest);
    CHECKF(s->final_live == 6, "links %" PRIu32 "U: final view of %" PRIu32, tc->links,
           s->final_live);
    CHECKF(s->false_detections == 0 && refutations == 0,
           "links %" PRIu32 "U, %s: live nodes reported %" PRIu32 " times, %" PRIu64
           " reports refuted (each a probe): routes crossed the dead",
           tc->links, tc->inject, s->false_detections, refutations);
    sim_case_free(&r);
}

int main(void)
{
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&cases[i]);
    }
    return check_report("sim.routes_two_dead");
}
