/*
 * tori-bench-membership: what the membership protocol costs, as ratios.
 *
 *   tori-bench-membership [--max-nodes N] [--iterations K]
 *
 * 1. O_cp, the local recomputation after a change, versus N up to 65,536:
 *    (a) "core": one change to the live set (remove or re-add a member,
 *        index and digest) plus recomputing a member's place in the tree
 *        (parent, children, depth), the member drawn at random per change;
 *    (b) "receive": membership_receive() of a whole FAILED_NODE or
 *        NEW_NODE_JOIN message at a member: decode, validate, apply,
 *        recompute the tree and watch set, forward to the children.
 *    Both relative to N = 64 in the same run, beside log2(N)/log2(64), and
 *    a least-squares fit a + b log2(N) with its worst residual.
 * 2. T_s versus N in the simulator with the paper's BG/L figures (4.6 us
 *    per hop, 2 us per message), single failure, both layouts, radix 2/4/8,
 *    with the paper's base and distance models and the critical-path model
 *    beside it.
 * 3. Bytes of membership state per node at this build's CONFIG_MAX_NODES.
 *
 * Timings are wall-clock (this is a benchmark, not a test), the best of 7
 * runs, printed next to ratios; the simulator figures are exact and
 * reproducible.
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
    uint64_t ts_ns;
    uint32_t messages;
    struct ts_model model;
};

static struct ts_result bench_ts(const struct torus_geometry *g, enum membership_layout_kind kind,
                                 unsigned radix)
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
    uint32_t dead = g->node_count / 2 + 1;
    struct fault items[2];
    memset(items, 0, sizeof items);
    items[0].kind = FAULT_KILL;
    items[0].time_ns = 1000000;
    items[0].node = dead;
    items[1].kind = FAULT_SUSPECT;
    items[1].time_ns = 1000000;
    items[1].node = torus_geometry_neighbour(g, dead, 0);
    items[1].other = dead;
    sim_add_injections(sim, items, 2);
    r.ok = sim_run(sim, NULL);
    const struct sim_stats *s = sim_get_stats(sim);
    r.ok = r.ok && s->stable_count == 1;
    r.ts_ns = s->last_stable.ts_ns;
    r.messages = s->last_stable.messages;
    r.model = s->last_stable.model;
    sim_destroy(sim);
    return r;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b == 0 ? 0.0 : (double)a / (double)b;
}

int main(int argc, char **argv)
{
    uint32_t max_nodes = CONFIG_MAX_NODES;
    uint32_t iterations = 200000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-nodes") == 0 && i + 1 < argc) {
            max_nodes = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            iterations = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, TOOL ": unknown option '%s' (expected --max-nodes N, --iterations K)\n",
                    argv[i]);
            return 2;
        }
    }
    if (iterations < 100) {
        fprintf(stderr, TOOL ": --iterations %u is too few (expected at least 100)\n", iterations);
        return 2;
    }

    printf("== O_cp: local view and tree recomputation per change (radix 4) ==\n");
    printf("%-9s %6s | %-27s | %-27s | %-27s | log2(N)/6\n", "dims", "N", "core radix (ns, x N=64)",
           "core torus (ns, x N=64)", "receive radix (ns, x N=64)");
    double base_core[2] = {0, 0};
    double base_recv = 0;
    double fit_n[SIZE_COUNT], fit_cost[3][SIZE_COUNT];
    size_t fitted = 0;
    for (size_t i = 0; i < SIZE_COUNT; i++) {
        struct torus_geometry g;
        if (sizes[i].nodes > max_nodes || !geometry(sizes[i].dims, &g)) {
            continue;
        }
        /* The best of 7 runs: the machine may be shared. */
        double core_radix = 1e18;
        double core_torus = 1e18;
        double recv = 1e18;
        for (int rep = 0; rep < 7; rep++) {
            core_radix = fmin(core_radix, bench_core(&g, MEMBERSHIP_LAYOUT_RADIX, 4,
                                                     iterations));
            core_torus = fmin(core_torus, bench_core(&g, MEMBERSHIP_LAYOUT_TORUS, 4,
                                                     iterations));
            recv = fmin(recv, bench_receive(&g, MEMBERSHIP_LAYOUT_RADIX, 4, iterations / 10));
        }
        if (i == 0) {
            base_core[0] = core_radix;
            base_core[1] = core_torus;
            base_recv = recv;
        }
        printf("%-9s %6u | %8.1f ns  x%6.2f        | %8.1f ns  x%6.2f        | %8.1f ns  x%6.2f        | %5.2f\n",
               sizes[i].dims, g.node_count, core_radix, core_radix / base_core[0], core_torus,
               core_torus / base_core[1], recv, recv / base_recv,
               log2((double)g.node_count) / 6.0);
        fit_n[fitted] = g.node_count;
        fit_cost[0][fitted] = core_radix;
        fit_cost[1][fitted] = core_torus;
        fit_cost[2][fitted] = recv;
        fitted++;
    }
    static const char *const fit_names[3] = {"core radix", "core torus", "receive radix"};
    printf("fit a + b log2(N) (ns):");
    for (int c = 0; c < 3; c++) {
        struct log_fit f = fit_log(fit_n, fit_cost[c], fitted);
        printf("%s %s %.1f + %.2f log2 N (worst residual %.0f%%)", c == 0 ? "" : ";", fit_names[c],
               f.a, f.b, 100.0 * f.worst_residual);
    }
    printf("\n");

    printf("\n== T_s, single failure, simulator with BG/L figures (L = 4.6 us/hop, O_cp = 2 us/message) ==\n");
    printf("models: base 2L(H-1)+O_cp*H; distance 2L*sum(max hops per level)+O_cp*H;"
           " path max_v(2L*hops(v)+2*O_cp*depth(v))\n");
    printf("%-9s %6s %-5s %2s %3s %5s | %9s %8s | %6s %7s %6s | %5s %5s\n", "dims", "N", "tree",
           "a", "H", "msgs", "T_s(us)", "T_s/L", "/base", "/dist", "/path", "hops", "path");
    uint64_t first_ts[2][3];
    memset(first_ts, 0, sizeof first_ts);
    for (size_t i = 0; i < SIZE_COUNT; i++) {
        struct torus_geometry g;
        if (sizes[i].nodes > max_nodes || !geometry(sizes[i].dims, &g)) {
            continue;
        }
        static const unsigned radices[] = {2, 4, 8};
        for (unsigned a = 0; a < 3; a++) {
            uint64_t radix_ts = 0;
            for (int kind = 0; kind < 2; kind++) {
                struct ts_result r = bench_ts(&g, (enum membership_layout_kind)kind, radices[a]);
                if (!r.ok) {
                    printf("%-9s %6u %-5s %2u: simulation failed\n", sizes[i].dims, g.node_count,
                           kind ? "torus" : "radix", radices[a]);
                    continue;
                }
                if (first_ts[kind][a] == 0) {
                    first_ts[kind][a] = r.ts_ns;
                }
                printf("%-9s %6u %-5s %2u %3u %5u | %9.1f %8.1f | %6.2f %7.3f %6.3f | %5u %5u",
                       sizes[i].dims, g.node_count, kind ? "torus" : "radix", radices[a],
                       r.model.levels, r.messages, r.ts_ns / 1000.0, ratio(r.ts_ns, 4600),
                       ratio(r.ts_ns, (uint64_t)r.model.base_ns), ratio(r.ts_ns, (uint64_t)r.model.distance_ns),
                       ratio(r.ts_ns, (uint64_t)r.model.path_ns), r.model.hop_sum, r.model.path_hops);
                if (kind == 0) {
                    radix_ts = r.ts_ns;
                    printf("\n");
                } else {
                    printf("  torus/radix T_s %.3f\n", ratio(r.ts_ns, radix_ts));
                }
            }
        }
    }

    printf("\n== membership state per node at CONFIG_MAX_NODES=%u ==\n", (unsigned)CONFIG_MAX_NODES);
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
    return 0;
}
