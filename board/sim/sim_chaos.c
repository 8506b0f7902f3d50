/*
 * Chaos scenarios (see sim_chaos.h).
 */
#include "board/sim/sim_chaos.h"

#include <stdlib.h>
#include <string.h>

void sim_rng_seed(struct sim_rng *rng, uint64_t seed)
{
    rng->state = seed ^ UINT64_C(0x5851f42d4c957f2d);
}

uint64_t sim_rng_next(struct sim_rng *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t sim_rng_below(struct sim_rng *rng, uint64_t bound)
{
    return sim_rng_next(rng) % bound;
}

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
static bool pick_up(struct chaos_state *s, struct sim_rng *rng, uint32_t *out)
{
    bool low = sim_rng_below(rng, 3) == 0;
    uint32_t start = low ? 0 : (uint32_t)sim_rng_below(rng, s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t id = (start + i) % s->n;
        if (s->state[id] == CHAOS_UP) {
            *out = id;
            return true;
        }
    }
    return false;
}

static bool pick_dead(struct chaos_state *s, struct sim_rng *rng, uint32_t *out)
{
    uint32_t start = (uint32_t)sim_rng_below(rng, s->n);
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
                          uint64_t window_ns, struct sim_injection *out, size_t capacity)
{
    struct sim_rng rng;
    sim_rng_seed(&rng, seed);
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
        times[i] = unit + sim_rng_below(&rng, window_ns > unit ? window_ns - unit : 1);
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
        struct sim_injection *item = &out[count];
        memset(item, 0, sizeof *item);
        item->time_ns = t;
        uint64_t roll = sim_rng_below(&rng, 100);
        uint32_t a;
        uint32_t b;
        if (roll < 25) {
            if (s.down >= s.down_budget || !pick_up(&s, &rng, &a)) {
                continue;
            }
            item->kind = SIM_INJECT_KILL;
            item->node = a;
            s.state[a] = CHAOS_DEAD;
            s.down++;
        } else if (roll < 45) {
            if (!pick_dead(&s, &rng, &a)) {
                continue;
            }
            item->kind = SIM_INJECT_JOIN;
            item->node = a;
            s.state[a] = CHAOS_UP;
            s.down--;
        } else if (roll < 60) {
            if (s.down >= s.down_budget || !pick_up(&s, &rng, &a)) {
                continue;
            }
            bool long_hang = sim_rng_below(&rng, 2) == 0;
            item->kind = SIM_INJECT_HANG;
            item->node = a;
            item->duration_ns = long_hang ? 40u * unit + sim_rng_below(&rng, 40u * unit)
                                          : unit + sim_rng_below(&rng, 2u * unit);
            s.state[a] = CHAOS_HUNG;
            s.busy_until[a] = t + item->duration_ns;
            s.down++;
        } else if (roll < 75) {
            if (!pick_up(&s, &rng, &a)) {
                continue;
            }
            b = (uint32_t)sim_rng_below(&rng, s.n);
            if (a == b) {
                continue;
            }
            item->kind = SIM_INJECT_SUSPECT;
            item->node = a;
            item->other = b;
        } else if (roll < 87) {
            if (s.partitioned) {
                continue;
            }
            /* Cut a minority of at most a quarter: a coordinate slab if a dim allows. */
            int dim = -1;
            for (unsigned d = 0; d < g->dims; d++) {
                if (g->size[d] >= 4 && (dim < 0 || sim_rng_below(&rng, 2) == 0)) {
                    dim = (int)d;
                }
            }
            item->kind = SIM_INJECT_PARTITION;
            item->dim = dim;
            if (dim >= 0) {
                uint32_t size = g->size[dim];
                item->below = 1u + (uint32_t)sim_rng_below(&rng, size / 4u);
            } else {
                item->below = 1u + (uint32_t)sim_rng_below(&rng, s.n / 4u > 0 ? s.n / 4u : 1u);
                if (item->below >= g->node_count) {
                    continue;
                }
            }
            uint64_t length = 10u * unit + sim_rng_below(&rng, 60u * unit);
            s.partitioned = true;
            s.partition_until = t + length;
            count++;
            struct sim_injection *heal = &out[count];
            memset(heal, 0, sizeof *heal);
            heal->kind = SIM_INJECT_HEAL;
            heal->time_ns = t + length;
            count++;
            continue;
        } else {
            if (!pick_up(&s, &rng, &a)) {
                continue;
            }
            unsigned link = (unsigned)sim_rng_below(&rng, torus_geometry_link_count(g));
            b = torus_geometry_neighbour(g, a, link);
            if (b == TORUS_RANK_NONE || b == a) {
                continue;
            }
            item->kind = SIM_INJECT_LINK_OFF;
            item->node = a;
            item->other = b;
            count++;
            struct sim_injection *on = &out[count];
            *on = *item;
            on->kind = SIM_INJECT_LINK_ON;
            on->time_ns = t + 5u * unit + sim_rng_below(&rng, 20u * unit);
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
