/*
 * tori-bench-membership: what the membership protocol costs, as ratios.
 *
 *   tori-bench-membership [--max-nodes N] [--iterations K] [--no-timing] [--json FILE]
 *
 * 1. O_cp, the local recomputation after a change, versus N up to 65,536
 *    (wall-clock; --no-timing leaves it out):
 *    (a) "core": one change to the live set (remove or re-add a member,
 *        index and digest) plus recomputing a member's place in the tree
 *        (parent, children, depth), the member drawn at random per change;
 *    (b) "receive": membership_receive() of a whole FAILED_NODE or
 *        NEW_NODE_JOIN message at a member: decode, validate, apply,
 *        recompute the tree and watch set, forward to the children.
 *    Both relative to N = 64 in the same run, beside log2(N)/log2(64), and
 *    a least-squares fit a + b log2(N) with its worst residual.
 * 2. T_s versus N in the simulator with the paper's BG/L figures (4.6 us
 *    per hop, 2 us per message), single failure, every layout, radix 2/4/8,
 *    with the paper's base and distance models and the critical-path model
 *    beside it: the paper's Figures 4 (a = 2) and 5 (a = 4), which read
 *    hundreds of microseconds at 1,024 nodes.
 * 3. T_s over the physical bound of any tree round, 2 L ecc(root) + 2 O_cp
 *    log_a(N) (down and back up; ecc(root) the root's largest hop distance),
 *    per layout, radix 4, after a single failure, a root failure and two
 *    failures at once, at 4,096 and 65,536 nodes (or the largest size within
 *    --max-nodes).
 * 4. Bytes of membership state per node at this build's CONFIG_MAX_NODES.
 *
 * Timings are wall-clock (this is a benchmark, not a test), the best of 7
 * runs, printed next to ratios; the simulator figures are exact and
 * reproducible.  --json FILE also writes what sections 1 and 2 print as
 * JSON lines, keyed by series and layout name, for tools/plot/tori-plot.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime: a host tool */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"
#include "membership/codec.h"
#include "membership/membership.h"
#include "membership/tree.h"
#include "membership/view.h"
#include "net/torus/geometry.h"
#include "tools/cli.h"

#define TOOL "tori-bench-membership"

struct size {
    const char *dims;
    uint32_t nodes;
};

static const struct size sizes[] = {
    {"4x4x4", 64},         {"8x8x4", 256},      {"8x8x8", 512},      {"16x8x8", 1024},
    {"16x16x16", 4096},    {"32x32x16", 16384}, {"64x32x32", 65536},
};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static bool geometry(const char *dims, struct torus_geometry *g)
{
    unsigned count = 0;
    uint32_t s[CONFIG_MAX_DIMS];
    return torus_geometry_parse_dims(dims, &count, s, NULL) == TORUS_GEOMETRY_OK &&
           torus_geometry_init(g, count, s, NULL, NULL) == TORUS_GEOMETRY_OK;
}

static uint64_t rng_state = 12345;
static uint32_t rng(uint32_t bound)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((rng_state >> 33) % bound);
}

/*
 * 1a: index + tree recomputation per change, in ns.  The member doing the
 * work is drawn at random for every change: a leaf, an inner node and the
 * root locate themselves at different costs, so a single fixed member would
 * measure where it happens to sit in the tree at this N rather than N.
 */
static double bench_core(const struct torus_geometry *g, enum membership_layout_kind kind,
                         unsigned radix, uint32_t iterations)
{
    struct membership_layout layout = {.kind = kind, .geometry = *g};
    uint32_t n = g->node_count;
    static struct membership_view view;
    membership_view_reset(&view, n);
    for (uint32_t p = 0; p < n; p++) {
        membership_view_add(&view, p);
    }
    uint64_t digest = 0;
    uint32_t sink = 0;
    uint64_t start = now_ns();
    for (uint32_t i = 0; i < iterations; i++) {
        uint32_t self = rng(n);
        uint32_t victim = rng(n);
        if (victim == self) {
            victim = (victim + 1) % n;
        }
        struct membership_tree_links links;
        membership_view_remove(&view, victim);
        digest ^= membership_id_digest(victim);
        membership_tree_locate(&view, &layout, radix, self, &links);
        sink += links.child_count + links.parent;
        membership_view_add(&view, victim);
        digest ^= membership_id_digest(victim);
        membership_tree_locate(&view, &layout, radix, self, &links);
        sink += links.child_count + links.parent;
    }
    uint64_t elapsed = now_ns() - start;
    if (sink == 42 && digest == 42) {
        printf(" ");
    }
    return (double)elapsed / (2.0 * iterations);
}

/*
 * Least-squares fit cost = a + b log2(N) over the sizes measured; the largest
 * relative residual says how well "logarithmic" describes the column (a
 * column growing like N or log^2 N leaves a residual that grows with N).
 */
struct log_fit {
    double a, b, worst_residual;
};

static struct log_fit fit_log(const double *n, const double *cost, size_t count)
{
    struct log_fit f = {0, 0, 0};
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < count; i++) {
        double x = log2(n[i]);
        sx += x;
        sy += cost[i];
        sxx += x * x;
        sxy += x * cost[i];
    }
    double d = (double)count * sxx - sx * sx;
    if (count < 2 || d == 0) {
        return f;
    }
    f.b = ((double)count * sxy - sx * sy) / d;
    f.a = (sy - f.b * sx) / (double)count;
    for (size_t i = 0; i < count; i++) {
        double model = f.a + f.b * log2(n[i]);
        double r = fabs(cost[i] - model) / model;
        if (r > f.worst_residual) {
            f.worst_residual = r;
        }
    }
    return f;
}

/* 1b: membership_receive of a change message at a member, in ns. */
static double bench_receive(const struct torus_geometry *g, enum membership_layout_kind kind,
                            unsigned radix, uint32_t iterations)
{
    static struct membership node;
    static struct membership_outbox out;
    struct membership_config c;
    membership_config_defaults(&c);
    c.geometry = *g;
    c.member_count = g->node_count;
    c.radix = radix;
    c.layout = kind;
    c.heartbeat_ns = 0;
    uint32_t n = g->node_count;
    c.node_id = n / 3;
    if (membership_init(&node, &c) != MEMBERSHIP_INIT_OK) {
        return 0;
    }
    uint32_t root = membership_root(&node);
    uint64_t base_digest = membership_digest(&node);
    uint8_t (*messages)[128] = malloc((size_t)iterations * 128);
    uint16_t *lengths = malloc(sizeof(uint16_t) * iterations);
    if (messages == NULL || lengths == NULL) {
        return 0;
    }
    /* A chain of changes: remove v, re-add v, remove w, ... */
    uint64_t epoch = membership_epoch(&node);
    uint32_t victim = 0;
    for (uint32_t i = 0; i < iterations; i++) {
        bool removing = (i % 2) == 0;
        if (removing) {
            do {
                victim = rng(n);
            } while (victim == c.node_id || victim == root || victim == 1u);
        }
        uint64_t next = MEMBERSHIP_EPOCH(i + 1u, 0, 0);
        struct membership_writer w;
        struct membership_header h = {
            .type = removing ? MEMBERSHIP_MSG_FAILED_NODE : MEMBERSHIP_MSG_NEW_NODE_JOIN,
            .flags = MEMBERSHIP_FLAG_HAS_VIEW,
            .sender = 1,
            .epoch = next,
            .stable_epoch = 0,
        };
        membership_writer_init(&w, messages[i], 128);
        membership_put_header(&w, &h);
        membership_put_u64(&w, epoch);
        membership_put_u8(&w, 0);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, removing ? 1 : 0);
        membership_put_u16(&w, removing ? 0 : 1);
        membership_put_u16(&w, 0);
        membership_put_u32(&w, removing ? n - 1 : n);
        membership_put_u32(&w, root);
        membership_put_u64(&w, removing ? base_digest ^ membership_id_digest(victim) : base_digest);
        membership_put_u32(&w, victim);
        if (!removing) {
            membership_put_u32(&w, 7);
        }
        lengths[i] = (uint16_t)w.length;
        epoch = next;
    }
    uint64_t start = now_ns();
    for (uint32_t i = 0; i < iterations; i++) {
        membership_receive(&node, messages[i], lengths[i], 1000u + i, &out);
        membership_outbox_clear(&out);
    }
    uint64_t elapsed = now_ns() - start;
    bool ok = membership_epoch(&node) == epoch && membership_live_count(&node) == n;
    free(messages);
    free(lengths);
    if (!ok) {
        fprintf(stderr, TOOL ": the receive chain did not apply (epoch %" PRIx64 ")\n",
                membership_epoch(&node));
        return -1;
    }
    return (double)elapsed / iterations;
}

struct ts_result {
    bool ok;
    uint32_t root; /* id of the root that completed the view */
    uint32_t rounds;
    uint64_t ts_ns;
    uint64_t confirm_ns; /* of ts_ns: the root's wait for evidence */
    uint32_t messages;
    struct ts_model model;
};

/* What fails, all at 1 ms, each dead node suspected at once by two of its
 * neighbours (x- and x+), as a crash is: two detectors are the evidence the
 * root needs (issue 20), so no probe wait is paid. */
enum ts_case { TS_SINGLE, TS_ROOT, TS_TWO, TS_CASES };
static const char *const ts_case_names[TS_CASES] = {"single", "root", "two"};

static struct ts_result bench_ts(const struct torus_geometry *g, enum membership_layout_kind kind,
                                 unsigned radix, enum ts_case which)
{
    struct ts_result r;
    memset(&r, 0, sizeof r);
    struct sim_params p;
    sim_params_defaults(&p, g);
    p.radix = radix;
    p.layout = kind;
    p.hop_ns = 4600;
    p.cp_ns = 2000;
    p.link_detect_ns = 0;
    p.heartbeat_ns = 0;
    p.verbosity = 0;
    char error[256];
    struct sim *sim = sim_create(&p, error, sizeof error);
    if (sim == NULL) {
        fprintf(stderr, TOOL ": %s\n", error);
        return r;
    }
    uint32_t dead[2] = {which == TS_ROOT ? 0 : g->node_count / 2 + 1, g->node_count / 4 + 3};
    unsigned count = which == TS_TWO ? 2 : 1;
    struct fault items[6];
    memset(items, 0, sizeof items);
    for (unsigned i = 0; i < count; i++) {
        items[3 * i].kind = FAULT_KILL;
        items[3 * i].time_ns = 1000000;
        items[3 * i].node = dead[i];
        for (unsigned k = 1; k <= 2; k++) {
            items[3 * i + k].kind = FAULT_SUSPECT;
            items[3 * i + k].time_ns = 1000000;
            items[3 * i + k].node = torus_geometry_neighbour(g, dead[i], k - 1u);
            items[3 * i + k].other = dead[i];
        }
    }
    sim_add_injections(sim, items, 3 * count);
    r.ok = sim_run(sim, NULL);
    const struct sim_stats *s = sim_get_stats(sim);
    r.ok = r.ok && s->stable_count == 1 && s->final_live == g->node_count - count;
    r.root = s->last_stable.root;
    r.rounds = s->last_stable.rounds;
    r.ts_ns = s->last_stable.ts_ns;
    r.confirm_ns = s->last_stable.confirm_ns;
    r.messages = s->last_stable.messages;
    r.model = s->last_stable.model;
    sim_destroy(sim);
    return r;
}

/* --json FILE: one JSON line per figure printed (NULL: none). */
static FILE *records;

static void record_ocp(const char *dims, uint32_t n, const char *series, double ns)
{
    if (records != NULL)
        fprintf(records,
                "{\"record\":\"bench-membership-ocp\",\"dims\":\"%s\",\"nodes\":%u,"
                "\"series\":\"%s\",\"ns\":%.1f}\n",
                dims, n, series, ns);
}

static void record_fit(const char *series, const struct log_fit *f)
{
    if (records != NULL)
        fprintf(records,
                "{\"record\":\"bench-membership-ocp-fit\",\"series\":\"%s\",\"a_ns\":%.3f,"
                "\"b_ns\":%.3f,\"worst_residual\":%.4f}\n",
                series, f->a, f->b, f->worst_residual);
}

static void record_ts(const char *dims, uint32_t n, const char *layout, unsigned radix,
                      const struct ts_result *r)
{
    if (records != NULL)
        fprintf(records,
                "{\"record\":\"bench-membership-ts\",\"dims\":\"%s\",\"nodes\":%u,"
                "\"layout\":\"%s\",\"radix\":%u,\"hop_ns\":4600,\"cp_ns\":2000,"
                "\"levels\":%u,\"messages\":%u,\"ts_ns\":%" PRIu64 ",\"base_ns\":%.0f,"
                "\"distance_ns\":%.0f,\"path_ns\":%.0f,\"hop_sum\":%u,\"path_hops\":%u}\n",
                dims, n, layout, radix, r->model.levels, r->messages, r->ts_ns,
                r->model.base_ns, r->model.distance_ns, r->model.path_ns, r->model.hop_sum,
                r->model.path_hops);
}

static double ratio(uint64_t a, uint64_t b)
{
    return b == 0 ? 0.0 : (double)a / (double)b;
}

/* Largest hop distance from id: its eccentricity on the torus. */
static uint32_t eccentricity(const struct torus_geometry *g, uint32_t id)
{
    uint32_t ecc = 0;
    for (unsigned d = 0; d < g->dims; d++) {
        uint32_t n = g->size[d];
        uint32_t c = (id / g->stride[d]) % n;
        ecc += g->wraps[d] ? n / 2u : (c > n - 1u - c ? c : n - 1u - c);
    }
    return ecc;
}

#define HOP_NS 4600.0
#define CP_NS 2000.0

/* 1: O_cp per layout (wall-clock). */
static void print_ocp(uint32_t max_nodes, uint32_t iterations)
{
    printf("== O_cp: local view and tree recomputation per change (radix 4) ==\n");
    printf("%-9s %6s | %-20s | %-20s | %-20s | %-20s | log2(N)/6\n", "dims", "N",
           "core radix (ns, xN64)", "core torus (ns, xN64)", "core box (ns, xN64)",
           "receive radix (ns, xN64)");
    double base[4] = {0, 0, 0, 0};
    double fit_n[SIZE_COUNT], fit_cost[4][SIZE_COUNT];
    size_t fitted = 0;
    for (size_t i = 0; i < SIZE_COUNT; i++) {
        struct torus_geometry g;
        if (sizes[i].nodes > max_nodes || !geometry(sizes[i].dims, &g)) {
            continue;
        }
        /* The best of 7 runs: the machine may be shared. */
        double cost[4] = {1e18, 1e18, 1e18, 1e18};
        for (int rep = 0; rep < 7; rep++) {
            for (unsigned kind = 0; kind < MEMBERSHIP_LAYOUT_KINDS; kind++) {
                cost[kind] = fmin(cost[kind], bench_core(&g, (enum membership_layout_kind)kind, 4,
                                                         iterations));
            }
            cost[3] = fmin(cost[3], bench_receive(&g, MEMBERSHIP_LAYOUT_RADIX, 4, iterations / 10));
        }
        printf("%-9s %6u", sizes[i].dims, g.node_count);
        for (int c = 0; c < 4; c++) {
            if (fitted == 0) {
                base[c] = cost[c];
            }
            printf(" | %8.1f ns x%6.2f   ", cost[c], cost[c] / base[c]);
            fit_cost[c][fitted] = cost[c];
        }
        printf(" | %5.2f\n", log2((double)g.node_count) / 6.0);
        static const char *const series[4] = {"core radix", "core torus", "core box",
                                              "receive radix"};
        for (int c = 0; c < 4; c++) {
            record_ocp(sizes[i].dims, g.node_count, series[c], cost[c]);
        }
        fit_n[fitted] = g.node_count;
        fitted++;
    }
    static const char *const fit_names[4] = {"core radix", "core torus", "core box",
                                             "receive radix"};
    printf("fit a + b log2(N) (ns):");
    for (int c = 0; c < 4; c++) {
        struct log_fit f = fit_log(fit_n, fit_cost[c], fitted);
        printf("%s %s %.1f + %.2f log2 N (worst residual %.0f%%)", c == 0 ? "" : ";", fit_names[c],
               f.a, f.b, 100.0 * f.worst_residual);
        record_fit(fit_names[c], &f);
    }
    printf("\n\n");
}

/* 2: the paper's Figures 4 and 5 (and a = 8), every layout. */
static void print_figures(uint32_t max_nodes)
{
    printf("== T_s, single failure, simulator with BG/L figures (L = 4.6 us/hop, O_cp = 2 us/message):"
           " the paper's Figures 4 (a = 2) and 5 (a = 4) ==\n");
    printf("paper (BG/L, 2 x 8x8x8 midplanes): T_s of hundreds of microseconds up to 1,024 nodes, "
           "growing as log N; its distance model fits, its base model falls short\n");
    printf("models: base 2L(H-1)+O_cp*H; distance 2L*sum(max hops per level)+O_cp*H;"
           " path max_v(2L*hops(v)+2*O_cp*depth(v))\n");
    printf("%-9s %6s %-5s %2s %3s %5s | %9s %9s %9s | %6s %7s %6s | %5s %5s | %s\n", "dims", "N",
           "tree", "a", "H", "msgs", "T_s(us)", "base(us)", "dist(us)", "/base", "/dist", "/path",
           "hops", "path", "T_s / radix tree's");
    for (size_t i = 0; i < SIZE_COUNT; i++) {
        struct torus_geometry g;
        if (sizes[i].nodes > max_nodes || !geometry(sizes[i].dims, &g)) {
            continue;
        }
        static const unsigned radices[] = {2, 4, 8};
        for (unsigned a = 0; a < 3; a++) {
            uint64_t radix_ts = 0;
            for (unsigned kind = 0; kind < MEMBERSHIP_LAYOUT_KINDS; kind++) {
                const char *name = membership_layout_name((enum membership_layout_kind)kind);
                struct ts_result r = bench_ts(&g, (enum membership_layout_kind)kind, radices[a],
                                              TS_SINGLE);
                if (!r.ok) {
                    printf("%-9s %6u %-5s %2u: simulation failed\n", sizes[i].dims, g.node_count,
                           name, radices[a]);
                    continue;
                }
                record_ts(sizes[i].dims, g.node_count, name, radices[a], &r);
                if (kind == MEMBERSHIP_LAYOUT_RADIX) {
                    radix_ts = r.ts_ns;
                }
                printf("%-9s %6u %-5s %2u %3u %5u | %9.1f %9.1f %9.1f | %6.2f %7.3f %6.3f | %5u %5u"
                       " | %.3f\n",
                       sizes[i].dims, g.node_count, name, radices[a], r.model.levels, r.messages,
                       r.ts_ns / 1000.0, r.model.base_ns / 1000.0, r.model.distance_ns / 1000.0,
                       ratio(r.ts_ns, (uint64_t)r.model.base_ns),
                       ratio(r.ts_ns, (uint64_t)r.model.distance_ns),
                       ratio(r.ts_ns, (uint64_t)r.model.path_ns), r.model.hop_sum,
                       r.model.path_hops, ratio(r.ts_ns, radix_ts));
            }
        }
    }
    printf("\n");
}

/* 3: T_s over the bound of any tree round, per layout and case. */
static void print_bound(uint32_t max_nodes)
{
    const unsigned radix = 4;
    printf("== T_s over the physical bound 2 L ecc(root) + 2 O_cp log_a(N), radix 4, BG/L figures"
           " (target for box: within 1.2x) ==\n");
    printf("%-9s %6s %-6s %-5s | %4s %9s | %9s %6s | %5s %5s | %6s %s\n", "dims", "N", "case",
           "tree", "ecc", "bound(us)", "T_s(us)", "/bound", "path", "H", "rounds",
           "confirm(us)");
    /* 4,096 and 65,536 nodes, or the largest size within max_nodes. */
    size_t picked[2];
    size_t count = 0;
    for (size_t i = 0; i < SIZE_COUNT; i++) {
        if ((sizes[i].nodes == 4096 || sizes[i].nodes == 65536) && sizes[i].nodes <= max_nodes) {
            picked[count++] = i;
        }
    }
    for (size_t i = SIZE_COUNT; count == 0 && i-- > 0;) {
        if (sizes[i].nodes <= max_nodes) {
            picked[count++] = i;
        }
    }
    for (size_t p = 0; p < count; p++) {
        struct torus_geometry g;
        if (!geometry(sizes[picked[p]].dims, &g)) {
            continue;
        }
        for (unsigned which = 0; which < TS_CASES; which++) {
            for (unsigned kind = 0; kind < MEMBERSHIP_LAYOUT_KINDS; kind++) {
                const char *name = membership_layout_name((enum membership_layout_kind)kind);
                struct ts_result r = bench_ts(&g, (enum membership_layout_kind)kind, radix,
                                              (enum ts_case)which);
                if (!r.ok) {
                    printf("%-9s %6u %-6s %-5s: simulation failed\n", sizes[picked[p]].dims,
                           g.node_count, ts_case_names[which], name);
                    continue;
                }
                uint32_t ecc = eccentricity(&g, r.root);
                double bound = 2.0 * HOP_NS * ecc +
                               2.0 * CP_NS * log((double)g.node_count) / log((double)radix);
                printf("%-9s %6u %-6s %-5s | %4u %9.1f | %9.1f %6.2f | %5u %5u | %6u %.1f\n",
                       sizes[picked[p]].dims, g.node_count, ts_case_names[which], name, ecc,
                       bound / 1000.0, r.ts_ns / 1000.0, r.ts_ns / bound, r.model.path_hops,
                       r.model.levels, r.rounds, r.confirm_ns / 1000.0);
            }
        }
    }
    printf("(two failures: the second failure's reports reach the root while the first's round"
           " is in flight, and a round removing both supersedes it; rounds counts both)\n\n");
}

int main(int argc, char **argv)
{
    unsigned max_nodes = CONFIG_MAX_NODES;
    unsigned iterations = 200000;
    bool no_timing = false;
    const char *json_path = NULL, *max_nodes_text = NULL, *iterations_text = NULL;
    char error[160];
    const struct cli_option options[] = {
        {"--max-nodes", &max_nodes_text, NULL},
        {"--iterations", &iterations_text, NULL},
        {"--json", &json_path, NULL},
        {"--no-timing", NULL, &no_timing},
    };
    switch (cli_scan(argc, argv, options, sizeof options / sizeof options[0], error,
                     sizeof error)) {
    case CLI_SCAN_HELP:
        printf("usage: " TOOL " [--max-nodes N] [--iterations K] [--no-timing] [--json FILE]\n");
        return 0;
    case CLI_SCAN_ERROR:
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    case CLI_SCAN_OK:
        break;
    }
    const struct cli_unsigned_option numbers[] = {
        {"--max-nodes", max_nodes_text, 8, CONFIG_MAX_NODES, &max_nodes},
        {"--iterations", iterations_text, 100, UINT32_MAX, &iterations},
    };
    if (!cli_parse_unsigned_options(numbers, sizeof numbers / sizeof numbers[0], error,
                                    sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    }
    if (json_path != NULL && (records = fopen(json_path, "we")) == NULL) {
        fprintf(stderr, TOOL ": cannot create --json file '%s' (expected a writable path)\n",
                json_path);
        return 2;
    }
    if (!no_timing) {
        print_ocp(max_nodes, iterations);
    }
    print_figures(max_nodes);
    print_bound(max_nodes);
    printf("== membership state per node at CONFIG_MAX_NODES=%u ==\n", (unsigned)CONFIG_MAX_NODES);
    struct membership *m = NULL;
    printf("total                      %8zu bytes (%.1f KiB)\n", sizeof(struct membership),
           sizeof(struct membership) / 1024.0);
    printf("  live view (bitmap+index) %8zu\n", sizeof m->view);
    printf("  reference view (COW)     %8zu\n", sizeof m->ref);
    printf("  state transfer staging   %8zu\n", sizeof m->sync);
    printf("  coordinator queues       %8zu\n", sizeof m->coord);
    printf("  round (change copy)      %8zu\n", sizeof m->round);
    printf("  subtree sweep            %8zu\n", sizeof m->sweep);
    printf("  census (minority check)  %8zu\n", sizeof m->census);
    printf("  detector (watch/probes/suspects/search) %zu\n",
           sizeof m->watch + sizeof m->probes + sizeof m->suspects + sizeof m->search);
    printf("per member: %.2f bytes (%u members); outbox (caller's) %zu bytes\n",
           (double)sizeof(struct membership) / CONFIG_MAX_NODES, (unsigned)CONFIG_MAX_NODES,
           sizeof(struct membership_outbox));
    if (records != NULL && fclose(records) != 0) {
        fprintf(stderr, TOOL ": cannot write --json file '%s'\n", json_path);
        return 1;
    }
    return 0;
}
