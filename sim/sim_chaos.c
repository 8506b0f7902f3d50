/*
 * Chaos scenarios (see sim_chaos.h).
 */
#include "sim/sim_chaos.h"

#include <stdlib.h>
#include <string.h>

#include "tools/splitmix.h"

enum { CHAOS_UP = 0, CHAOS_DEAD, CHAOS_HUNG };

struct chaos_state {
    uint32_t n;
    uint8_t *state;
    uint64_t *busy_until; /* hung until / dead-since bookkeeping */
    uint32_t down;        /* dead or hung */
    uint32_t down_budget;
    bool partitioned;
    uint64_t partition_until;
};

static int compare_times(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A running node, favouring low ids a third of the time (roots, chains). */
static bool pick_up(struct chaos_state *s, uint64_t *rng, uint32_t *out)
{
    bool low = splitmix64_below(rng, 3) == 0;
    uint32_t start = low ? 0 : (uint32_t)splitmix64_below(rng, s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t id = (start + i) % s->n;
        if (s->state[id] == CHAOS_UP) {
            *out = id;
            return true;
        }
    }
    return false;
}

static bool pick_dead(struct chaos_state *s, uint64_t *rng, uint32_t *out)
{
    uint32_t start = (uint32_t)splitmix64_below(rng, s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t id = (start + i) % s->n;
        if (s->state[id] == CHAOS_DEAD) {
            *out = id;
            return true;
        }
    }
    return false;
}

size_t sim_chaos_generate(const struct sim_params *params, uint64_t seed, unsigned events,
                          uint64_t window_ns, struct fault *out, size_t capacity)
{
    /* The constant keeps every seed's scenario what it was before the generator moved to tools/. */
    uint64_t rng = seed ^ UINT64_C(0x5851f42d4c957f2d);
    const struct torus_geometry *g = &params->geometry;
    uint64_t unit = sim_unit_ns(params);
    struct chaos_state s;
    s.n = params->members < g->node_count ? params->members : g->node_count;
    s.state = calloc(s.n, 1);
    s.busy_until = calloc(s.n, sizeof(uint64_t));
    if (s.state == NULL || s.busy_until == NULL || capacity < 2 || s.n < 2) {
        free(s.state);
        free(s.busy_until);
        return 0;
    }
    s.down = 0;
    s.down_budget = s.n / 8u > 0 ? s.n / 8u : 1u;
    if (s.n < 4) {
        s.down_budget = 0;
    }
    s.partitioned = false;
    s.partition_until = 0;
    uint64_t *times = calloc(events > 0 ? events : 1, sizeof(uint64_t));
    if (times == NULL) {
        free(s.state);
        free(s.busy_until);
        return 0;
    }
    for (unsigned i = 0; i < events; i++) {
        times[i] = unit + splitmix64_below(&rng, window_ns > unit ? window_ns - unit : 1);
    }
    qsort(times, events, sizeof times[0], compare_times);
    size_t count = 0;
    for (unsigned i = 0; i < events && count + 2 < capacity; i++) {
        uint64_t t = times[i];
        /* Resumed hangs are running again (their rejoin is the protocol's business). */
        for (uint32_t id = 0; id < s.n; id++) {
            if (s.state[id] == CHAOS_HUNG && s.busy_until[id] <= t) {
                s.state[id] = CHAOS_UP;
                s.down--;
            }
        }
        if (s.partitioned && s.partition_until <= t) {
            s.partitioned = false;
        }
        struct fault *item = &out[count];
        memset(item, 0, sizeof *item);
        item->time_ns = t;
        uint64_t roll = splitmix64_below(&rng, 100);
        uint32_t a;
        uint32_t b;
        if (roll < 25) {
            if (s.down >= s.down_budget || !pick_up(&s, &rng, &a)) {
                continue;
            }
            item->kind = FAULT_KILL;
            item->node = a;
            s.state[a] = CHAOS_DEAD;
            s.down++;
        } else if (roll < 45) {
            if (!pick_dead(&s, &rng, &a)) {
                continue;
            }
            item->kind = FAULT_RESTART; /* a killed node boots again */
            item->node = a;
            s.state[a] = CHAOS_UP;
            s.down--;
        } else if (roll < 60) {
            if (s.down >= s.down_budget || !pick_up(&s, &rng, &a)) {
                continue;
            }
            bool long_hang = splitmix64_below(&rng, 2) == 0;
            item->kind = FAULT_HANG;
            item->node = a;
            item->duration_ns = long_hang ? 40u * unit + splitmix64_below(&rng, 40u * unit)
                                          : unit + splitmix64_below(&rng, 2u * unit);
            s.state[a] = CHAOS_HUNG;
            s.busy_until[a] = t + item->duration_ns;
            s.down++;
        } else if (roll < 75) {
            if (!pick_up(&s, &rng, &a)) {
                continue;
            }
            b = (uint32_t)splitmix64_below(&rng, s.n);
            if (a == b) {
                continue;
            }
            item->kind = FAULT_SUSPECT;
            item->node = a;
            item->other = b;
        } else if (roll < 87) {
            if (s.partitioned) {
                continue;
            }
            /* Cut a minority of at most a quarter: a coordinate slab if a dim allows. */
            int dim = -1;
            for (unsigned d = 0; d < g->dims; d++) {
                if (g->size[d] >= 4 && (dim < 0 || splitmix64_below(&rng, 2) == 0)) {
                    dim = (int)d;
                }
            }
            item->kind = FAULT_PARTITION;
            item->dim = dim;
            if (dim >= 0) {
                uint32_t size = g->size[dim];
                item->below = 1u + (uint32_t)splitmix64_below(&rng, size / 4u);
            } else {
                item->below = 1u + (uint32_t)splitmix64_below(&rng, s.n / 4u > 0 ? s.n / 4u : 1u);
                if (item->below >= g->node_count) {
                    continue;
                }
            }
            uint64_t length = 10u * unit + splitmix64_below(&rng, 60u * unit);
            s.partitioned = true;
            s.partition_until = t + length;
            count++;
            struct fault *heal = &out[count];
            memset(heal, 0, sizeof *heal);
            heal->kind = FAULT_HEAL;
            heal->time_ns = t + length;
            count++;
            continue;
        } else {
            if (!pick_up(&s, &rng, &a)) {
                continue;
            }
            unsigned link = (unsigned)splitmix64_below(&rng, torus_geometry_link_count(g));
            b = torus_geometry_neighbour(g, a, link);
            if (b == TORUS_RANK_NONE || b == a) {
                continue;
            }
            item->kind = FAULT_LINK_OFF;
            item->node = a;
            item->other = b;
            item->link = FAULT_LINK_PAIR;
            count++;
            struct fault *on = &out[count];
            *on = *item;
            on->kind = FAULT_LINK_ON;
            on->time_ns = t + 5u * unit + splitmix64_below(&rng, 20u * unit);
            count++;
            continue;
        }
        count++;
    }
    free(times);
    free(s.state);
    free(s.busy_until);
    return count;
}
