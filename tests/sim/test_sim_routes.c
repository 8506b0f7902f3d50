/*
 * Issue 11: a live member expelled because a child's ack could not arrive.
 *
 * On a real torus a message is routed hop by hop, and a node that has just
 * died still sits on routes until its neighbours' routers learn of it: the
 * tree messages of the round that removes it (a change on its way down, an
 * ack on its way up) can be lost in it.  A parent took one missing ack for
 * a death and reported the child: on host 2x2x2 tori, 'kill 5' cost live
 * node 6 its place in half the runs.  The simulator delivered by hop
 * distance and could not lose such a message; with routes on it follows
 * the routers' hops and loses what crosses a dead node.
 *
 * Each case kills one node; the round that removes it must not report,
 * expel or re-add anyone else, although messages are lost on the way
 * (dropped_route > 0).  Before the fix every one of them reported a live
 * member (cause=ack) and expelled it.  Two mechanisms, each pinned:
 *  - a node routes around a neighbour its detector suspects, not only one
 *    out of its view: the dead node's neighbours suspect it before the
 *    change removing it reaches them, and no tree message is lost at all
 *    (no child had to be asked again);
 *  - a parent whose child's ack is late sends the change again with a
 *    probe, and reports the child only if it stays silent: needed where
 *    a route crosses the dead node before anyone on it shuns it.  (8x4x4:
 *    root 0's change to its child 2, whose only minimal route crosses the
 *    dead 1, was lost until the link to 1 went down, and 0 asked 2 again;
 *    since issue 20 the router goes around a shunned node wherever a way
 *    over other nodes leads on, and nothing is asked again.)
 *
 * Heartbeats every 4 units (timeout 16); a dead neighbour's links go down
 * after one heartbeat timeout.  On the nodes that takes 9 link RTOs (90 ms
 * against a 60 ms timeout), but the simulator's timeout is 4 heartbeats
 * rather than 6, and a member watched from afar gets two timeouts: later
 * than this, far heartbeats whose only minimal route crosses the dead node
 * time out before the routes go around it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

struct route_case {
    const char *dims;
    unsigned radix;
    uint32_t dead;
    bool asks; /* a late child must be asked again (else: nothing may be lost) */
    const char *what;
};

static const struct route_case cases[] = {
    {"2x2x2", 2, 1, false,
     "the change from 2 to its leaf 5 crosses 3, which routes it through 1 unless it goes "
     "around the neighbour it suspects (it installs the view only later)"},
    {"4x4x2", 4, 30, false, "the ack of leaf 28 to its parent 6 crossed the dead node"},
    {"4x4x4", 2, 13, false, "the ack of leaf 58 to its parent 29 crossed the dead node"},
    {"8x4x4", 2, 1, false,
     "root 0's change to its child 2: the only minimal route crosses 1, which 0 shuns; it "
     "goes around"},
};

static uint32_t acks_asked(const struct sim_result *r)
{
    uint32_t sum = 0;
    for (uint32_t id = 0; id < r->nodes; id++) {
        sum += membership_get_counters(sim_node(r->sim, id))->acks_asked;
    }
    return sum;
}

static void run(const struct route_case *rc)
{
    struct torus_geometry g;
    CHECK(sim_case_geometry(rc->dims, &g));
    struct sim_params p;
    sim_params_defaults(&p, &g);
    uint64_t unit = sim_unit_ns(&p);
    char inject[64];
    snprintf(inject, sizeof inject, "kill %" PRIu32 " at {U*10}", rc->dead);
    struct sim_case c = {
        .dims = rc->dims,
        .radix = rc->radix,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = 16u * unit,
        .routes = true,
        .inject = inject,
    };
    struct sim_result r;
    sim_case_run(&c, &r, NULL);
    const struct sim_stats *s = &r.stats;
    CHECKF(r.ran && r.ok, "%s a=%u kill %" PRIu32 ": %s", rc->dims, rc->radix, rc->dead,
           s->violation_text);
    uint32_t asked = r.sim != NULL ? acks_asked(&r) : 0;
    printf("%-6s a=%u kill %-3" PRIu32 " lost on the way %-4" PRIu64 " children asked again %-2" PRIu32
           " false detections %" PRIu32 " expelled %" PRIu32 ": %s\n",
           rc->dims, rc->radix, rc->dead, s->dropped_route, asked, s->false_detections,
           s->expelled, rc->what);
    CHECKF(s->dropped_route > 0, "%s: nothing was lost on the way (routes off?)", rc->dims);
    CHECKF(s->false_detections == 0, "%s a=%u kill %" PRIu32 ": %" PRIu32
           " live members reported", rc->dims, rc->radix, rc->dead, s->false_detections);
    CHECKF(s->expelled == 0 && s->joined == 0, "%s a=%u kill %" PRIu32 ": %" PRIu32
           " live members expelled", rc->dims, rc->radix, rc->dead, s->expelled);
    CHECK(s->stable_count >= 1);
    CHECK(s->final_live == g.node_count - 1);
    if (rc->asks) {
        CHECKF(asked > 0, "%s: the lost change was not sent again", rc->dims);
    } else {
        CHECKF(asked == 0, "%s: %" PRIu32 " children asked again: a tree message crossed the "
               "suspected node", rc->dims, asked);
    }
    sim_case_free(&r);
}

int main(void)
{
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&cases[i]);
    }
    return check_report("sim.routes_dead_transit");
}
