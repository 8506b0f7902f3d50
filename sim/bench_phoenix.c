/*
 * tori-bench-phoenix: Kaneda et al.'s Phoenix experiments (2004, Figs. 4-6
 * and the discovery measurement of issue 16) on the simulator, beside the
 * paper's figures.
 *
 *   tori-bench-phoenix [--quick] [--json FILE]
 *
 * 1. Routes after a wall of cuts (Figs. 4 and 5): on each torus, every x
 *    cable across two x planes cut but one at each, at 100 us, mended 1 ms
 *    later.  Every ordered pair is routed every 5 us (tori-sim --reach):
 *    the time from the cut until 90 % and then every pair is reachable
 *    (construction), the stretch then, and the time from the mend until
 *    every pair goes by dimension order again (repair), for three
 *    baselines:
 *    - detour: dimension order with local detours (the default router);
 *    - table: the Phoenix routing tables (--routing table), with the
 *      advertisements they cost;
 *    - central: one node (0) learns the link map, computes every route
 *      and ships them, modelled: the link-down notice, the reports of both
 *      ends of every changed cable travelling the shortest surviving path
 *      to node 0 (hop_ns a hop) and handled one by one (cp_ns each), one
 *      breadth-first search per destination (cp_ns each, as a message's
 *      handling), and a table sent to every node (cp_ns each at node 0,
 *      then the farthest node's hops).  Its routes are shortest paths of
 *      the surviving cables (their stretch computed here), so it is the
 *      lower bound of stretch, at the price of one node doing all.
 * 2. Kill half, restart half (Fig. 6): on 8x7x4 (224 nodes, the paper's
 *    224 processes), `kill x>=4` at 1 ms and `restart x>=4` 5 ms later (the
 *    paper's 30 s and 35 s), every pair of running nodes routed every
 *    10 us: the reachable fraction and the stretch over time, detour and
 *    table side by side.
 * 3. Discovery through seeds (Fig. 7's question): on 16x8x8, the last node
 *    a spare; none of the initial view dies, or ids 1-479, or ids
 *    512-1022, then the spare joins, without seeds and with seeds 0 and
 *    500: its join requests and its join latency (from the `join` to its
 *    `joined`).
 *
 * Messages count the whole run, the cut and the mend: advertisements, or
 * the central computation's reports and tables.
 *
 * --quick: 4x4x4 everywhere (the CTest's run).  Times are the simulator's
 * virtual time (hop 4.6 us, cp 2 us: BG/L), exact and reproducible, at the
 * sampling's resolution (5 us, 10 us).  --json FILE: one JSON line per row.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membership/membership.h"
#include "net/torus/geometry.h"
#include "net/torus/route.h"
#include "sim/sim.h"
#include "sim/sim_inject.h"

#define TOOL "tori-bench-phoenix"
#define SAMPLES_MAX 4096
#define CUT_AT_NS UINT64_C(100000)
#define MEND_AFTER_NS UINT64_C(1000000)
#define WALL_SAMPLE_NS UINT64_C(5000)
#define HALF_KILL_NS UINT64_C(1000000)
#define HALF_RESTART_NS UINT64_C(6000000)
#define HALF_SAMPLE_NS UINT64_C(10000)

static FILE *json;

struct samples {
    uint32_t count;
    struct reach_sample at[SAMPLES_MAX];
};

static void on_reach(void *context, const struct reach_sample *sample)
{
    struct samples *s = context;
    if (s->count < SAMPLES_MAX)
        s->at[s->count++] = *sample;
}

static bool geometry_of(const char *dims, struct torus_geometry *g)
{
    unsigned count = 0;
    uint32_t size[CONFIG_MAX_DIMS];
    return torus_geometry_parse_dims(dims, &count, size, NULL) == TORUS_GEOMETRY_OK &&
           torus_geometry_init(g, count, size, NULL, NULL) == TORUS_GEOMETRY_OK;
}

/* One simulator run of script, sampled every interval up to end_ns; false on a bad
 * script or no memory (a message printed). */
static bool run_sampled(const struct torus_geometry *g, bool routes_table, const char *script,
                        uint64_t interval_ns, uint64_t end_ns, struct samples *out,
                        struct sim_stats *stats, struct fault_script *parsed)
{
    struct sim_params p;
    sim_params_defaults(&p, g);
    p.routes = true;
    p.routing_table = routes_table;
    p.verbosity = 0;
    p.reach_interval_ns = interval_ns;
    p.reach_end_ns = end_ns; /* the membership may settle long after: not sampled */
    p.on_reach = on_reach;
    p.reach_context = out;
    out->count = 0;
    char error[320];
    struct fault_script faults;
    if (!sim_inject_parse(script, g, 0, &faults, error, sizeof error)) {
        fprintf(stderr, TOOL ": '%s': %s\n", script, error);
        return false;
    }
    struct sim *sim = sim_create(&p, error, sizeof error);
    if (sim == NULL) {
        fprintf(stderr, TOOL ": %s\n", error);
        fault_script_free(&faults);
        return false;
    }
    sim_add_injections(sim, faults.items, faults.count);
    /* The detour's membership may fail across a wall: measured anyway, its
     * violation told in one line by the caller (the trace goes nowhere). */
    FILE *quiet = fopen("/dev/null", "w");
    sim_run(sim, quiet);
    if (quiet != NULL)
        fclose(quiet);
    *stats = *sim_get_stats(sim);
    sim_destroy(sim);
    if (parsed != NULL)
        *parsed = faults;
    else
        fault_script_free(&faults);
    return true;
}

/* ---- 1. the wall of cuts ---- */

struct wall_result {
    bool agreed; /* the membership ended in agreement */
    uint64_t ready90_ns, ready_ns, repair_ns; /* UINT64_MAX: never */
    double fraction_min, stretch_mean, stretch_max;
    uint64_t adverts;
};

/* From the samples: construction after the cut, repair after the mend.
 * Until the link layers notice the cut (noticed_ns), the simulator's
 * routers still use the cables: those samples are left out. */
static void wall_measure(const struct samples *s, uint64_t cut_ns, uint64_t mend_ns,
                         uint64_t noticed_ns, struct wall_result *r)
{
    r->ready90_ns = r->ready_ns = r->repair_ns = UINT64_MAX;
    r->fraction_min = 1.0;
    r->stretch_mean = r->stretch_max = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const struct reach_sample *x = &s->at[i];
        double fraction = reach_sample_fraction(x);
        if (x->t_ns >= cut_ns + noticed_ns && x->t_ns <= mend_ns) {
            if (fraction < r->fraction_min)
                r->fraction_min = fraction;
            if (fraction >= 0.9 && r->ready90_ns == UINT64_MAX)
                r->ready90_ns = x->t_ns - cut_ns;
            /* every pair from here to the mend */
            if (fraction < 1.0)
                r->ready_ns = UINT64_MAX;
            else if (r->ready_ns == UINT64_MAX)
                r->ready_ns = x->t_ns - cut_ns;
            r->stretch_mean = reach_sample_stretch_mean(x);
            r->stretch_max = x->stretch_max;
        } else if (x->t_ns > mend_ns) {
            bool dimension_order = fraction == 1.0 && x->stretch_max == 1.0;
            if (!dimension_order)
                r->repair_ns = UINT64_MAX;
            else if (r->repair_ns == UINT64_MAX)
                r->repair_ns = x->t_ns - mend_ns;
        }
    }
}

/* The cables the script takes down (both ends' links), as a mask per node. */
static void cut_links(const struct torus_geometry *g, const struct fault_script *f,
                      uint32_t *down)
{
    for (size_t i = 0; i < f->count; i++) {
        const struct fault *x = &f->items[i];
        if (x->kind != FAULT_LINK_OFF)
            continue;
        uint32_t cables = torus_route_links_towards(g, x->node, x->other);
        for (unsigned l = 0; l < torus_geometry_link_count(g); l++) {
            if (((cables >> l) & 1u) != 0) {
                down[x->node] |= 1u << l;
                down[torus_geometry_neighbour(g, x->node, l)] |= 1u << (l ^ 1u);
            }
        }
    }
}

/* Hop distances from source over the cables not down (UINT32_MAX: cut off). */
static void bfs(const struct torus_geometry *g, const uint32_t *down, uint32_t source,
                uint32_t *distance, uint32_t *queue)
{
    uint32_t n = g->node_count, head = 0, tail = 0;
    for (uint32_t i = 0; i < n; i++)
        distance[i] = UINT32_MAX;
    distance[source] = 0;
    queue[tail++] = source;
    while (head < tail) {
        uint32_t here = queue[head++];
        for (unsigned l = 0; l < torus_geometry_link_count(g); l++) {
            uint32_t next = torus_geometry_neighbour(g, here, l);
            if (next == TORUS_RANK_NONE || ((down[here] >> l) & 1u) != 0 ||
                distance[next] != UINT32_MAX)
                continue;
            distance[next] = distance[here] + 1u;
            queue[tail++] = next;
        }
    }
}

struct central_result {
    uint64_t ready_ns;
    double fraction_before; /* reachable by dimension order until the tables come */
    double stretch_mean, stretch_max;
    uint32_t reports;
};

/*
 * The central computation's time after a change of the cables cut in
 * down_now (mask per node) from the link map before, and the stretch of
 * its shortest-path routes over down_now.
 */
static void central_model(const struct torus_geometry *g, const struct sim_params *p,
                          const uint32_t *changed, const uint32_t *down_now,
                          struct central_result *r)
{
    uint32_t n = g->node_count;
    uint32_t *distance = calloc(n, sizeof *distance);
    uint32_t *queue = calloc(n, sizeof *queue);
    if (distance == NULL || queue == NULL) {
        fprintf(stderr, TOOL ": out of memory\n");
        exit(1);
    }
    /* the reports: one per end of every changed cable, to node 0 */
    bfs(g, down_now, 0, distance, queue);
    uint32_t reports = 0, farthest_report = 0, eccentricity = 0;
    for (uint32_t id = 0; id < n; id++) {
        if (distance[id] != UINT32_MAX && distance[id] > eccentricity)
            eccentricity = distance[id];
        for (uint32_t m = changed[id]; m != 0; m &= m - 1u) {
            reports++;
            if (distance[id] != UINT32_MAX && distance[id] > farthest_report)
                farthest_report = distance[id];
        }
    }
    r->reports = reports;
    /* until its tables arrive, dimension order: the pairs whose route
     * crosses a cable down are lost */
    uint64_t crossing = 0;
    uint32_t all_links = (1u << torus_geometry_link_count(g)) - 1u;
    for (uint32_t a = 0; a < n; a++) {
        for (uint32_t b = 0; b < n; b++) {
            for (uint32_t here = a; here != b;) {
                int link = torus_route_next_hop(g, here, b, all_links);
                if (link < 0 || ((down_now[here] >> link) & 1u) != 0) {
                    crossing++;
                    break;
                }
                here = torus_geometry_neighbour(g, here, (unsigned)link);
            }
        }
    }
    r->fraction_before = 1.0 - (double)crossing / ((double)n * (double)(n - 1u));
    r->ready_ns = p->link_detect_ns + (uint64_t)farthest_report * p->hop_ns +
                  (uint64_t)reports * p->cp_ns      /* handled at node 0 */
                  + (uint64_t)n * p->cp_ns          /* a search per destination */
                  + (uint64_t)n * p->cp_ns          /* a table per node, sent */
                  + (uint64_t)eccentricity * p->hop_ns;
    /* its routes: shortest surviving paths */
    double sum = 0, max = 0;
    uint64_t pairs = 0;
    for (uint32_t b = 0; b < n; b++) {
        bfs(g, down_now, b, distance, queue);
        for (uint32_t a = 0; a < n; a++) {
            if (a == b || distance[a] == UINT32_MAX)
                continue;
            double stretch = (double)distance[a] / (double)torus_geometry_distance(g, a, b);
            sum += stretch;
            max = stretch > max ? stretch : max;
            pairs++;
        }
    }
    r->stretch_mean = pairs > 0 ? sum / (double)pairs : 0;
    r->stretch_max = max;
    free(distance);
    free(queue);
}

static void print_time(const char *label, uint64_t ns)
{
    if (ns == UINT64_MAX)
        printf(" %s=%9s", label, "never");
    else
        printf(" %s=%6.1f us", label, (double)ns / 1000.0);
}

static void json_time(const char *key, uint64_t ns)
{
    if (ns == UINT64_MAX)
        fprintf(json, ",\"%s\":null", key);
    else
        fprintf(json, ",\"%s\":%" PRIu64, key, ns);
}

/* The central model's figures for the script's cables. */
static bool central_for(const struct torus_geometry *g, const struct fault_script *parsed,
                        uint32_t *cables, struct central_result *construct,
                        struct central_result *repair)
{
    struct sim_params p;
    sim_params_defaults(&p, g);
    uint32_t *none = calloc(g->node_count, sizeof *none);
    uint32_t *down = calloc(g->node_count, sizeof *down);
    if (none == NULL || down == NULL) {
        fprintf(stderr, TOOL ": out of memory\n");
        free(none);
        free(down);
        return false;
    }
    cut_links(g, parsed, down);
    *cables = 0;
    for (uint32_t id = 0; id < g->node_count; id++)
        *cables += (uint32_t)__builtin_popcount(down[id]);
    *cables /= 2u;
    central_model(g, &p, down, down, construct);
    central_model(g, &p, down, none, repair);
    free(none);
    free(down);
    return true;
}

static void wall_row(const char *dims, uint32_t nodes, uint32_t cables, const char *routing,
                     const struct wall_result *r, const struct central_result *central)
{
    printf("     %-8s", routing);
    print_time("90%", r->ready90_ns);
    print_time("all", r->ready_ns);
    printf(" stretch %.3f (max %.3f)", r->stretch_mean, r->stretch_max);
    print_time("repair", r->repair_ns);
    if (r->ready_ns != UINT64_MAX && central != NULL)
        printf("  %.2fx central's time", (double)r->ready_ns / (double)central->ready_ns);
    printf("  (lowest fraction %.3f, %" PRIu64 " messages%s)\n", r->fraction_min, r->adverts,
           central == NULL ? "" : r->agreed ? "; membership agrees" : "; membership fails");
    if (json != NULL) {
        fprintf(json, "{\"series\":\"wall\",\"dims\":\"%s\",\"nodes\":%" PRIu32
                      ",\"cables\":%" PRIu32 ",\"routing\":\"%s\"",
                dims, nodes, cables, routing);
        json_time("ready90_ns", r->ready90_ns);
        json_time("ready_ns", r->ready_ns);
        json_time("repair_ns", r->repair_ns);
        fprintf(json, ",\"fraction_min\":%.4f,\"stretch_mean\":%.4f,\"stretch_max\":%.4f"
                      ",\"messages\":%" PRIu64 "}\n",
                r->fraction_min, r->stretch_mean, r->stretch_max, r->adverts);
    }
}

static bool wall_section(const char *const *dims, unsigned dims_count)
{
    printf("1. Routes after a wall of cuts (paper, Figs. 4-5, 400 processes: routes ready\n"
           "   within 2.3x the offline configuration's time and 1.5x the master's, which\n"
           "   computes every route; over 90%% of pairs reachable at 10 s of 14 s)\n");
    static struct samples samples;
    for (unsigned d = 0; d < dims_count; d++) {
        struct torus_geometry g;
        if (!geometry_of(dims[d], &g))
            return false;
        /* the x planes 1|2 and size-1|0, every cable but one cut at each */
        char script[200];
        snprintf(script, sizeof script,
                 "cut x=1|2 except 1 at %" PRIu64 "ns for %" PRIu64 "ns; "
                 "cut x=%" PRIu32 "|0 except 1 at %" PRIu64 "ns for %" PRIu64 "ns",
                 CUT_AT_NS, MEND_AFTER_NS, g.size[0] - 1u, CUT_AT_NS, MEND_AFTER_NS);
        uint64_t mend = CUT_AT_NS + MEND_AFTER_NS;
        struct wall_result result[2];
        struct central_result construct, repair;
        uint32_t cables = 0;
        for (int table = 0; table < 2; table++) {
            struct sim_stats stats;
            struct fault_script parsed;
            if (!run_sampled(&g, table != 0, script, WALL_SAMPLE_NS,
                             CUT_AT_NS + MEND_AFTER_NS + 200000u, &samples, &stats,
                             &parsed))
                return false;
            struct sim_params p;
            sim_params_defaults(&p, &g);
            wall_measure(&samples, CUT_AT_NS, mend, p.link_detect_ns, &result[table]);
            result[table].adverts = stats.route_adverts;
            result[table].agreed = !stats.violation;
            bool ok = table != 0 || central_for(&g, &parsed, &cables, &construct, &repair);
            fault_script_free(&parsed);
            if (!ok)
                return false;
        }
        printf("   %s (%" PRIu32 " nodes), %" PRIu32 " cables cut at 100 us, mended 1 ms later:\n",
               dims[d], g.node_count, cables);
        struct wall_result central = {
            .agreed = true, .ready90_ns = construct.ready_ns, .ready_ns = construct.ready_ns,
            .repair_ns = repair.ready_ns, .fraction_min = construct.fraction_before,
            .stretch_mean = construct.stretch_mean, .stretch_max = construct.stretch_max,
            .adverts = 2u * construct.reports + 2u * g.node_count};
        wall_row(dims[d], g.node_count, cables, "central", &central, NULL);
        wall_row(dims[d], g.node_count, cables, "detour", &result[0], &construct);
        wall_row(dims[d], g.node_count, cables, "table", &result[1], &construct);
        printf("     (central: modelled, %" PRIu32 " reports to node 0, a search and a table "
               "per node; its stretch is the shortest paths')\n",
               construct.reports);
    }
    return true;
}

/* ---- 2. kill half, restart half ---- */

struct half_result {
    uint64_t after_kill_ns, after_restart_ns; /* to every running pair (and stretch 1) */
    double fraction_min_kill, fraction_min_restart, stretch_max;
};

static void half_measure(const struct samples *s, struct half_result *r)
{
    r->after_kill_ns = r->after_restart_ns = UINT64_MAX;
    r->fraction_min_kill = r->fraction_min_restart = 1.0;
    r->stretch_max = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const struct reach_sample *x = &s->at[i];
        double fraction = reach_sample_fraction(x);
        bool whole = fraction == 1.0 && x->stretch_max <= 1.0;
        if (x->stretch_max > r->stretch_max)
            r->stretch_max = x->stretch_max;
        uint64_t *ready = NULL;
        uint64_t since = 0;
        if (x->t_ns > HALF_KILL_NS && x->t_ns <= HALF_RESTART_NS) {
            ready = &r->after_kill_ns;
            since = HALF_KILL_NS;
            r->fraction_min_kill = fraction < r->fraction_min_kill ? fraction : r->fraction_min_kill;
        } else if (x->t_ns > HALF_RESTART_NS) {
            ready = &r->after_restart_ns;
            since = HALF_RESTART_NS;
            r->fraction_min_restart =
                fraction < r->fraction_min_restart ? fraction : r->fraction_min_restart;
        }
        if (ready != NULL) {
            if (!whole)
                *ready = UINT64_MAX;
            else if (*ready == UINT64_MAX)
                *ready = x->t_ns - since;
        }
    }
}

static bool half_section(const char *dims)
{
    static struct samples runs[2];
    struct torus_geometry g;
    if (!geometry_of(dims, &g))
        return false;
    uint32_t half = g.size[0] / 2u;
    char script[160];
    snprintf(script, sizeof script, "kill x>=%" PRIu32 " at %" PRIu64 "ns; restart x>=%" PRIu32
             " at %" PRIu64 "ns", half, HALF_KILL_NS, half, HALF_RESTART_NS);
    printf("\n2. Kill half, restart half (paper, Fig. 6: 224 processes, 112 killed at 30 s\n"
           "   and restarted at 35 s; \"updated rapidly\"): %s (%" PRIu32
           " nodes),\n   '%s', every pair of running nodes routed every 10 us\n",
           dims, g.node_count, script);
    struct half_result result[2];
    for (int table = 0; table < 2; table++) {
        struct sim_stats stats;
        if (!run_sampled(&g, table != 0, script, HALF_SAMPLE_NS, HALF_RESTART_NS + 500000u,
                         &runs[table], &stats,
                         NULL))
            return false;
        half_measure(&runs[table], &result[table]);
        if (stats.violation)
            printf("     %s: membership fails: %s\n", table ? "table" : "detour",
                   stats.violation_text);
    }
    printf("     %8s  %-23s  %-23s\n", "t (ms)", "detour: fraction stretch",
           "table: fraction stretch");
    for (uint32_t i = 0; i < runs[0].count && i < runs[1].count; i++) {
        uint64_t t = runs[0].at[i].t_ns;
        bool shown = (t >= HALF_KILL_NS - HALF_SAMPLE_NS && t <= HALF_KILL_NS + 4 * HALF_SAMPLE_NS) ||
                     (t >= HALF_RESTART_NS - HALF_SAMPLE_NS &&
                      t <= HALF_RESTART_NS + 4 * HALF_SAMPLE_NS) ||
                     t == HALF_KILL_NS / 2u || t == (HALF_KILL_NS + HALF_RESTART_NS) / 2u ||
                     i + 1 == runs[0].count;
        if (!shown)
            continue;
        printf("     %8.3f  %8.3f %6" PRIu64 " %7.3f  %8.3f %6" PRIu64 " %7.3f\n", (double)t / 1e6,
               reach_sample_fraction(&runs[0].at[i]), runs[0].at[i].tried,
               reach_sample_stretch_mean(&runs[0].at[i]), reach_sample_fraction(&runs[1].at[i]),
               runs[1].at[i].tried, reach_sample_stretch_mean(&runs[1].at[i]));
        if (json != NULL) {
            for (int table = 0; table < 2; table++) {
                const struct reach_sample *x = &runs[table].at[i];
                fprintf(json, "{\"series\":\"half\",\"dims\":\"%s\",\"routing\":\"%s\","
                              "\"t_ns\":%" PRIu64 ",\"pairs\":%" PRIu64 ",\"fraction\":%.4f,"
                              "\"stretch_mean\":%.4f,\"stretch_max\":%.4f}\n",
                        dims, table ? "table" : "detour", x->t_ns, x->tried,
                        reach_sample_fraction(x), reach_sample_stretch_mean(x), x->stretch_max);
            }
        }
    }
    for (int table = 0; table < 2; table++) {
        const struct half_result *r = &result[table];
        printf("     %-6s", table ? "table" : "detour");
        print_time("every pair after the kill", r->after_kill_ns);
        print_time("after the restart", r->after_restart_ns);
        printf(" (lowest fraction %.3f, %.3f; stretch max %.3f)\n", r->fraction_min_kill,
               r->fraction_min_restart, r->stretch_max);
    }
    printf("     (fraction: of the ordered pairs of nodes running at the sample; the pairs\n"
           "     column counts them)\n");
    return true;
}

/* ---- 3. discovery through seeds ---- */

struct seeds_result {
    uint32_t requests;
    uint64_t latency_ns;
    bool joined;
};

/* A block of the initial view that dies before the spare joins: ids first..last. */
struct dead_block {
    uint32_t first, last; /* last < first: none */
};

static bool seeds_run(const struct torus_geometry *g, struct dead_block dead,
                      const uint32_t *seeds, uint32_t seed_count, struct seeds_result *r)
{
    uint32_t spare = g->node_count - 1u;
    struct sim_params p;
    sim_params_defaults(&p, g);
    p.members = spare;
    p.verbosity = 0;
    p.heartbeat_ns = 0; /* no neighbour's heartbeat hints the spare */
    p.settle_ns = UINT64_C(3000000000); /* a spare asking dead contacts one by one takes long */
    p.seed_count = seed_count;
    for (uint32_t i = 0; i < seed_count; i++)
        p.seeds[i] = seeds[i];
    uint64_t unit = sim_unit_ns(&p);
    uint64_t join_ns = 200u * unit;
    char script[160];
    uint32_t killed = dead.last >= dead.first ? dead.last - dead.first + 1u : 0;
    if (killed > 0)
        snprintf(script, sizeof script,
                 "kill id>=%" PRIu32 ",id<=%" PRIu32 " at %" PRIu64 "ns; join %" PRIu32
                 " at %" PRIu64 "ns",
                 dead.first, dead.last, 10u * unit, spare, join_ns);
    else
        snprintf(script, sizeof script, "join %" PRIu32 " at %" PRIu64 "ns", spare, join_ns);
    char error[320];
    struct fault_script faults;
    if (!sim_inject_parse(script, g, 0, &faults, error, sizeof error)) {
        fprintf(stderr, TOOL ": '%s': %s\n", script, error);
        return false;
    }
    struct sim *sim = sim_create(&p, error, sizeof error);
    if (sim == NULL) {
        fprintf(stderr, TOOL ": %s\n", error);
        fault_script_free(&faults);
        return false;
    }
    sim_add_injections(sim, faults.items, faults.count);
    fault_script_free(&faults);
    bool ok = sim_run(sim, NULL);
    const struct sim_stats *s = sim_get_stats(sim);
    r->requests = membership_get_counters(sim_node(sim, spare))->joins_sent;
    r->joined = ok && s->final_live == spare - killed + 1u;
    r->latency_ns = s->last_joined_ns > join_ns ? s->last_joined_ns - join_ns : 0;
    if (!ok)
        fprintf(stderr, TOOL ": seeds run: %s\n", s->violation_text);
    sim_destroy(sim);
    return true;
}

static bool seeds_section(const char *dims, const struct dead_block *blocks,
                          uint32_t block_count, const uint32_t *seeds, uint32_t seed_count)
{
    struct torus_geometry g;
    if (!geometry_of(dims, &g))
        return false;
    char seeds_text[64] = "";
    for (uint32_t i = 0; i < seed_count; i++)
        snprintf(seeds_text + strlen(seeds_text), sizeof seeds_text - strlen(seeds_text),
                 "%s%" PRIu32, i ? "," : "", seeds[i]);
    printf("\n3. Discovery through seeds (paper, Fig. 7: node discovery's overhead is\n"
           "   negligible): %s, node %" PRIu32 " a spare joining\n", dims, g.node_count - 1u);
    printf("     %-28s %-12s %9s %14s\n", "initial view", "seeds", "requests", "join latency");
    for (uint32_t b = 0; b < block_count; b++) {
        for (int seeded = 0; seeded < 2; seeded++) {
            struct seeds_result r;
            struct dead_block dead = blocks[b];
            uint32_t k = dead.last >= dead.first ? dead.last - dead.first + 1u : 0;
            if (!seeds_run(&g, dead, seeds, seeded ? seed_count : 0, &r))
                return false;
            char view[40];
            if (k > 0)
                snprintf(view, sizeof view, "ids %" PRIu32 "-%" PRIu32 " dead", dead.first,
                         dead.last);
            else
                snprintf(view, sizeof view, "all alive");
            printf("     %-28s %-12s %9" PRIu32 " %11.1f us%s\n", view,
                   seeded ? seeds_text : "none", r.requests, (double)r.latency_ns / 1000.0,
                   r.joined ? "" : "  (did not join)");
            if (json != NULL)
                fprintf(json, "{\"series\":\"seeds\",\"dims\":\"%s\",\"first_dead\":%" PRIu32 ",\"dead\":%" PRIu32
                              ",\"seeds\":\"%s\",\"requests\":%" PRIu32 ",\"latency_ns\":%" PRIu64
                              ",\"joined\":%s}\n",
                        dims, dead.first, k, seeded ? seeds_text : "", r.requests, r.latency_ns,
                        r.joined ? "true" : "false");
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    bool quick = false;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc && argv[i + 1][0] != '\0') {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: " TOOL " [--quick] [--json FILE]\n"
                   "  Phoenix's experiments on the simulator: routes after a wall of cuts\n"
                   "  (detour, table, central), kill half and restart half, seeds.\n"
                   "  --quick      4x4x4 only (the test's run)\n"
                   "  --json FILE  one JSON line per row\n");
            return 0;
        } else {
            fprintf(stderr, TOOL ": %s '%s' (expected --quick or --json FILE)\n",
                    strcmp(argv[i], "--json") == 0 ? "--json needs a file" : "unknown option",
                    argv[i]);
            return 2;
        }
    }
    if (json_path != NULL && (json = fopen(json_path, "w")) == NULL) {
        fprintf(stderr, TOOL ": --json '%s' cannot be written\n", json_path);
        return 2;
    }
    static const char *const full_walls[] = {"4x4x4", "8x7x4"};
    static const char *const quick_walls[] = {"4x4x4"};
    /* Seeds alive in every row; the dead stay a minority (the primary
     * policy's view needs a majority): the low ids, or the high half, where
     * the spare's first life starts asking (membership/machine/join.c). */
    static const uint32_t full_seeds[] = {0, 500};
    static const uint32_t quick_seeds[] = {0, 30};
    static const struct dead_block full_blocks[] = {{1, 0}, {1, 479}, {512, 1022}};
    static const struct dead_block quick_blocks[] = {{1, 0}, {1, 29}, {32, 62}};
    printf(TOOL ": simulator, hop 4.6 us, cp 2 us, link-down notice 10 us (BG/L); times are "
           "virtual\n\n");
    bool ok = quick ? wall_section(quick_walls, 1) && half_section("4x4x4") &&
                          seeds_section("4x4x4", quick_blocks, 3, quick_seeds, 2)
                    : wall_section(full_walls, 2) && half_section("8x7x4") &&
                          seeds_section("16x8x8", full_blocks, 3, full_seeds, 2);
    if (json != NULL && fclose(json) != 0) {
        fprintf(stderr, TOOL ": --json '%s': write failed\n", json_path);
        return 1;
    }
    return ok ? 0 : 1;
}
