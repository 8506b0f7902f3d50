/*
 * The one chaos generator (see chaos.h).  The order in which it draws its
 * random numbers is part of every seed's scenario: tests pin seeds, so a
 * change here changes what those seeds test.
 */
#include "tools/chaos.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/splitmix.h"

#define NS_PER_S 1000000000.0

/* The weights of the kinds, in the order the roll walks them. */
static const struct {
    enum fault_kind kind;
    unsigned weight;
} kind_weights[] = {
    {FAULT_KILL, 25},      {FAULT_RESTART, 20}, {FAULT_HANG, 15},   {FAULT_SUSPECT, 15},
    {FAULT_PARTITION, 12}, {FAULT_LINK_OFF, 13}, {FAULT_REBOOT, 12}, {FAULT_JOIN, 12},
};

#define KIND_COUNT (sizeof kind_weights / sizeof kind_weights[0])

bool chaos_init(struct chaos *chaos, const struct chaos_config *config, char *error,
                size_t capacity)
{
    memset(chaos, 0, sizeof *chaos);
    const struct torus_geometry *g = config->geometry;
    if (g->node_count < 2) {
        snprintf(error, capacity, "chaos needs a torus of at least two nodes");
        return false;
    }
    if ((config->kinds & ~CHAOS_KINDS_ALL) != 0 || config->kinds == 0) {
        snprintf(error, capacity, "chaos kinds 0x%x: expected some of kill, restart, hang, "
                                  "suspect, partition, link, reboot, join",
                 config->kinds);
        return false;
    }
    if (config->hold_ns != 0 && (config->kinds & CHAOS_KIND(FAULT_RESTART)) != 0) {
        snprintf(error, capacity, "chaos: restart is a kill's own undo with a fixed hold "
                                  "(expected it only with drawn holds)");
        return false;
    }
    chaos->config = *config;
    chaos->random = config->seed;
    chaos->count = g->node_count;
    chaos->members = config->members < g->node_count ? config->members : g->node_count;
    chaos->undo_capacity = (size_t)chaos->count + 8u;
    chaos->state = calloc(chaos->count, sizeof *chaos->state);
    chaos->cut = calloc(chaos->count, sizeof *chaos->cut);
    chaos->undo = calloc(chaos->undo_capacity, sizeof *chaos->undo);
    if (chaos->state == NULL || chaos->cut == NULL || chaos->undo == NULL) {
        chaos_free(chaos);
        snprintf(error, capacity, "out of memory");
        return false;
    }
    for (uint32_t id = chaos->members; id < chaos->count; id++)
        chaos->state[id] = CHAOS_SPARE;
    return true;
}

void chaos_free(struct chaos *chaos)
{
    free(chaos->state);
    free(chaos->cut);
    free(chaos->undo);
    chaos->state = NULL;
    chaos->cut = NULL;
    chaos->undo = NULL;
    chaos->undo_count = chaos->undo_capacity = 0;
}

uint64_t chaos_below(struct chaos *chaos, uint64_t bound)
{
    return splitmix64_below(&chaos->random, bound);
}

uint64_t chaos_gap_ns(struct chaos *chaos, double rate_per_s)
{
    double u = ((double)(splitmix64_next(&chaos->random) >> 11) + 0.5) / 9007199254740992.0;
    double seconds = -log(u) / rate_per_s;
    if (seconds > 3600.0)
        seconds = 3600.0;
    return (uint64_t)(seconds * NS_PER_S);
}

/* Nodes dead or hung at once: max(1, members/8), none below four members. */
static uint32_t down_budget(const struct chaos *chaos)
{
    if (chaos->members < 4)
        return 0;
    return chaos->members / 8u > 0 ? chaos->members / 8u : 1u;
}

/* A running node (one that can reboot when rebootable is set), the lowest a third of the time. */
static bool pick_up(struct chaos *chaos, bool rebootable, uint32_t *out)
{
    bool low = chaos_below(chaos, 3) == 0;
    uint32_t start = low ? 0 : (uint32_t)chaos_below(chaos, chaos->count);
    for (uint32_t i = 0; i < chaos->count; i++) {
        uint32_t id = (start + i) % chaos->count;
        if (chaos->state[id] == CHAOS_UP &&
            (!rebootable || (chaos->config.rebootable != NULL && chaos->config.rebootable[id]))) {
            *out = id;
            return true;
        }
    }
    return false;
}

/* A node in state, from a random start. */
static bool pick_in(struct chaos *chaos, enum chaos_node state, uint32_t *out)
{
    uint32_t start = (uint32_t)chaos_below(chaos, chaos->count);
    for (uint32_t i = 0; i < chaos->count; i++) {
        uint32_t id = (start + i) % chaos->count;
        if (chaos->state[id] == state) {
            *out = id;
            return true;
        }
    }
    return false;
}

static bool any_in(const struct chaos *chaos, enum chaos_node state, bool rebootable)
{
    for (uint32_t id = 0; id < chaos->count; id++)
        if (chaos->state[id] == state &&
            (!rebootable || (chaos->config.rebootable != NULL && chaos->config.rebootable[id])))
            return true;
    return false;
}

/* The hold: the fixed one, or drawn as base + [0, spread) units. */
static uint64_t hold(struct chaos *chaos, uint64_t base_units, uint64_t spread_units)
{
    if (chaos->config.hold_ns != 0)
        return chaos->config.hold_ns;
    uint64_t unit = chaos->config.unit_ns;
    return base_units * unit + chaos_below(chaos, spread_units * unit);
}

/* Cables between neighbours a and b (two on a ring of two), and whether one is cut. */
static unsigned pair_cables(const struct chaos *chaos, uint32_t a, uint32_t b, bool *any_cut)
{
    const struct torus_geometry *g = chaos->config.geometry;
    unsigned cables = 0;
    *any_cut = false;
    for (unsigned l = 0; l < torus_geometry_link_count(g); l++) {
        if (torus_geometry_neighbour(g, a, l) == b) {
            cables++;
            *any_cut |= ((chaos->cut[a] >> l) & 1u) != 0;
        }
    }
    return cables;
}

static void set_pair_cut(struct chaos *chaos, uint32_t a, uint32_t b, bool cut)
{
    const struct torus_geometry *g = chaos->config.geometry;
    for (unsigned l = 0; l < torus_geometry_link_count(g); l++) {
        if (torus_geometry_neighbour(g, a, l) != b)
            continue;
        unsigned back = torus_geometry_opposite_link(l);
        if (cut) {
            chaos->cut[a] = (uint16_t)(chaos->cut[a] | (1u << l));
            chaos->cut[b] = (uint16_t)(chaos->cut[b] | (1u << back));
            chaos->cut_cables++;
        } else {
            chaos->cut[a] = (uint16_t)(chaos->cut[a] & ~(1u << l));
            chaos->cut[b] = (uint16_t)(chaos->cut[b] & ~(1u << back));
            chaos->cut_cables--;
        }
    }
}

/* Makes undo pending (room for one per node and more is kept). */
static void add_undo(struct chaos *chaos, const struct fault *undo)
{
    if (chaos->undo_count < chaos->undo_capacity)
        chaos->undo[chaos->undo_count++] = *undo;
}

static enum fault_kind drawn_kind(struct chaos *chaos)
{
    unsigned total = 0;
    for (size_t k = 0; k < KIND_COUNT; k++)
        if (chaos->config.kinds & CHAOS_KIND(kind_weights[k].kind))
            total += kind_weights[k].weight;
    uint64_t roll = chaos_below(chaos, total);
    for (size_t k = 0; k < KIND_COUNT; k++) {
        if ((chaos->config.kinds & CHAOS_KIND(kind_weights[k].kind)) == 0)
            continue;
        if (roll < kind_weights[k].weight)
            return kind_weights[k].kind;
        roll -= kind_weights[k].weight;
    }
    return FAULT_KILL; /* not reached: the roll is below the total */
}

/* A partition of a minority of at most a quarter: a coordinate slab if a dimension allows. */
static bool draw_partition(struct chaos *chaos, struct fault *fault)
{
    const struct torus_geometry *g = chaos->config.geometry;
    int dim = -1;
    for (unsigned d = 0; d < g->dims; d++)
        if (g->size[d] >= 4 && (dim < 0 || chaos_below(chaos, 2) == 0))
            dim = (int)d;
    fault->kind = FAULT_PARTITION;
    fault->dim = dim;
    if (dim >= 0) {
        fault->below = 1u + (uint32_t)chaos_below(chaos, g->size[dim] / 4u);
        return true;
    }
    uint32_t quarter = chaos->members / 4u > 0 ? chaos->members / 4u : 1u;
    fault->below = 1u + (uint32_t)chaos_below(chaos, quarter);
    return fault->below < g->node_count;
}

bool chaos_draw(struct chaos *chaos, uint64_t now_ns, struct fault *fault, struct fault *undo)
{
    memset(fault, 0, sizeof *fault);
    memset(undo, 0, sizeof *undo);
    fault->time_ns = now_ns;
    uint32_t a = 0;
    uint32_t b = 0;
    switch (drawn_kind(chaos)) {
    case FAULT_KILL:
        if (chaos->down >= down_budget(chaos) || !pick_up(chaos, false, &a))
            return false;
        fault->kind = FAULT_KILL;
        fault->node = a;
        chaos->state[a] = CHAOS_DEAD;
        chaos->down++;
        if (chaos->config.hold_ns != 0) {
            *undo = *fault;
            undo->kind = FAULT_RESTART;
            undo->time_ns = now_ns + chaos->config.hold_ns;
        }
        break;
    case FAULT_RESTART:
        if (!pick_in(chaos, CHAOS_DEAD, &a))
            return false;
        fault->kind = FAULT_RESTART;
        fault->node = a;
        chaos->state[a] = CHAOS_UP;
        chaos->down--;
        break;
    case FAULT_HANG: {
        if (chaos->down >= down_budget(chaos) || !pick_up(chaos, false, &a))
            return false;
        uint64_t held = chaos->config.hold_ns;
        if (held == 0)
            held = chaos_below(chaos, 2) == 0 ? hold(chaos, 40, 40) : hold(chaos, 1, 2);
        fault->kind = FAULT_HANG;
        fault->node = a;
        chaos->state[a] = CHAOS_HUNG;
        chaos->down++;
        *undo = *fault;
        undo->kind = FAULT_RESUME;
        undo->time_ns = now_ns + held;
        break;
    }
    case FAULT_SUSPECT:
        if (!pick_up(chaos, false, &a))
            return false;
        b = (uint32_t)chaos_below(chaos, chaos->count);
        if (a == b || chaos->state[b] == CHAOS_SPARE)
            return false;
        fault->kind = FAULT_SUSPECT;
        fault->node = a;
        fault->other = b;
        break;
    case FAULT_PARTITION:
        if (chaos->partitioned || !draw_partition(chaos, fault))
            return false;
        chaos->partitioned = true;
        undo->kind = FAULT_HEAL;
        undo->time_ns = now_ns + hold(chaos, 10, 60);
        break;
    case FAULT_REBOOT:
        if (chaos->down >= down_budget(chaos) || !pick_up(chaos, true, &a))
            return false;
        fault->kind = FAULT_REBOOT; /* undoes itself */
        fault->node = a;
        break;
    case FAULT_JOIN:
        if (!pick_in(chaos, CHAOS_SPARE, &a))
            return false;
        fault->kind = FAULT_JOIN; /* a new member for good */
        fault->node = a;
        chaos->state[a] = CHAOS_UP;
        chaos->members++;
        break;
    case FAULT_LINK_OFF:
    default: {
        if (!pick_up(chaos, false, &a))
            return false;
        const struct torus_geometry *g = chaos->config.geometry;
        unsigned link = (unsigned)chaos_below(chaos, torus_geometry_link_count(g));
        b = torus_geometry_neighbour(g, a, link);
        if (b == TORUS_RANK_NONE || b == a)
            return false;
        /* The hold is drawn before the budget is checked, so that a refused cut
         * leaves the rest of the scenario as it would have been. */
        uint64_t held = hold(chaos, 5, 20);
        bool cut = false;
        unsigned cables = pair_cables(chaos, a, b, &cut);
        if (cut || chaos->cut_cables + cables > CHAOS_MAX_CUT_CABLES)
            return false;
        fault->kind = FAULT_LINK_OFF; /* the pair: every cable between them */
        fault->node = a;
        fault->other = b;
        fault->link = FAULT_LINK_PAIR;
        set_pair_cut(chaos, a, b, true);
        *undo = *fault;
        undo->kind = FAULT_LINK_ON;
        undo->time_ns = now_ns + held;
        break;
    }
    }
    if (undo->kind != 0)
        add_undo(chaos, undo);
    return true;
}

/* Puts an undo's effect on the model. */
static void apply_undo(struct chaos *chaos, const struct fault *undo)
{
    switch (undo->kind) {
    case FAULT_RESTART:
    case FAULT_RESUME:
        chaos->state[undo->node] = CHAOS_UP;
        chaos->down--;
        break;
    case FAULT_LINK_ON:
        set_pair_cut(chaos, undo->node, undo->other, false);
        break;
    case FAULT_HEAL:
        chaos->partitioned = false;
        break;
    default:
        break;
    }
}

bool chaos_take_undo(struct chaos *chaos, uint64_t now_ns, struct fault *undo)
{
    size_t due = SIZE_MAX;
    for (size_t i = 0; i < chaos->undo_count; i++)
        if (chaos->undo[i].time_ns <= now_ns &&
            (due == SIZE_MAX || chaos->undo[i].time_ns < chaos->undo[due].time_ns))
            due = i;
    if (due == SIZE_MAX)
        return false;
    *undo = chaos->undo[due];
    /* Keeps the others in the order they came (equal times: the older first). */
    memmove(&chaos->undo[due], &chaos->undo[due + 1],
            (chaos->undo_count - due - 1) * sizeof *chaos->undo);
    chaos->undo_count--;
    apply_undo(chaos, undo);
    return true;
}

uint64_t chaos_next_undo_ns(const struct chaos *chaos)
{
    uint64_t due = UINT64_MAX;
    for (size_t i = 0; i < chaos->undo_count; i++)
        if (chaos->undo[i].time_ns < due)
            due = chaos->undo[i].time_ns;
    return due;
}

bool chaos_possible(const struct chaos *chaos)
{
    unsigned kinds = chaos->config.kinds;
    bool room = chaos->down < down_budget(chaos);
    bool up = any_in(chaos, CHAOS_UP, false);
    if ((kinds & (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG))) && room && up)
        return true;
    if ((kinds & CHAOS_KIND(FAULT_REBOOT)) && room && any_in(chaos, CHAOS_UP, true))
        return true;
    if ((kinds & CHAOS_KIND(FAULT_RESTART)) && any_in(chaos, CHAOS_DEAD, false))
        return true;
    if ((kinds & CHAOS_KIND(FAULT_SUSPECT)) && up && chaos->members >= 2)
        return true;
    if ((kinds & CHAOS_KIND(FAULT_PARTITION)) && !chaos->partitioned)
        return true;
    if ((kinds & CHAOS_KIND(FAULT_LINK_OFF)) && up && chaos->cut_cables < CHAOS_MAX_CUT_CABLES)
        return true;
    return (kinds & CHAOS_KIND(FAULT_JOIN)) && any_in(chaos, CHAOS_SPARE, false);
}
