#define _GNU_SOURCE
#include "qemu/faults/emu_chaos.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/splitmix.h"

#define NS_PER_S 1000000000ull
#define MAX_CUT_CABLES 2

static const char *const kind_names[EMU_CHAOS_KINDS] = {"kill", "hang", "link", "reboot",
                                                        "join"};

static bool kind_of(const char *name, unsigned *kind)
{
    for (unsigned k = 0; k < EMU_CHAOS_KINDS; k++) {
        if (strcmp(name, kind_names[k]) == 0) {
            *kind = k;
            return true;
        }
    }
    return false;
}

static bool parse_rate(const char *text, double *rate)
{
    if (*text == '\0' || strspn(text, "0123456789.") != strlen(text))
        return false;
    char *end = NULL;
    double value = strtod(text, &end);
    if (end == NULL || *end != '\0' || !(value >= 0.001 && value <= 1000.0))
        return false;
    *rate = value;
    return true;
}

bool emu_chaos_parse(const char *text, struct emu_chaos_spec *spec, char *error,
                     size_t capacity)
{
    memset(spec, 0, sizeof *spec);
    spec->seed = 1;
    spec->rate = 1.0;
    spec->kinds = (1u << EMU_CHAOS_KILL) | (1u << EMU_CHAOS_HANG) | (1u << EMU_CHAOS_LINK) |
                  (1u << EMU_CHAOS_REBOOT);
    char copy[512];
    char echo[CLI_ECHO_MAX + 4];
    if (strlen(text) >= sizeof copy) {
        snprintf(error, capacity, "the spec is too long (expected e.g. "
                                  "seed=1,rate=0.5,kinds=kill,hang)");
        return false;
    }
    snprintf(copy, sizeof copy, "%s", text);
    bool in_kinds = false;
    unsigned given = 0;
    char *save = NULL;
    for (char *token = strtok_r(copy, ",", &save); token != NULL;
         token = strtok_r(NULL, ",", &save)) {
        char *equals = strchr(token, '=');
        if (equals == NULL) {
            unsigned kind;
            if (in_kinds && kind_of(token, &kind)) {
                spec->kinds |= 1u << kind;
                continue;
            }
            snprintf(error, capacity, "'%s' is not KEY=VALUE%s (expected seed, rate, kinds, "
                                      "count, duration, hold)",
                     cli_echo(token, echo), in_kinds ? " nor a fault kind" : "");
            return false;
        }
        *equals = '\0';
        const char *key = token, *value = equals + 1;
        static const char *const keys[] = {"seed", "rate", "kinds", "count", "duration", "hold"};
        unsigned which = 0;
        while (which < 6 && strcmp(key, keys[which]) != 0)
            which++;
        if (which == 6) {
            snprintf(error, capacity, "unknown key '%s' (expected seed, rate, kinds, count, "
                                      "duration, hold)",
                     cli_echo(key, echo));
            return false;
        }
        if ((given >> which) & 1u) {
            snprintf(error, capacity, "'%s' is given twice (expected it once)", key);
            return false;
        }
        given |= 1u << which;
        in_kinds = false;
        uint64_t number = 0;
        bool ok = true;
        const char *expected = "";
        switch (which) {
        case 0:
            ok = cli_parse_u64(value, 0, UINT64_MAX, &spec->seed);
            expected = "a whole number";
            break;
        case 1:
            ok = parse_rate(value, &spec->rate);
            expected = "faults per second in 0.001..1000, like 0.5";
            break;
        case 2: {
            unsigned kind;
            ok = kind_of(value, &kind);
            expected = "kill, hang, link, reboot or join";
            if (ok) {
                spec->kinds = 1u << kind;
                in_kinds = true;
            }
            break;
        }
        case 3:
            ok = cli_parse_u64(value, 1, 1000000, &number);
            spec->count = (uint32_t)number;
            expected = "a count in 1..1000000";
            break;
        case 4:
            ok = cli_parse_time_ns(value, false, &spec->duration_ns);
            expected = "a duration like 30s or 5m";
            break;
        default:
            ok = cli_parse_time_ns(value, false, &spec->hold_ns);
            expected = "a duration like 1s or 500ms";
            break;
        }
        if (!ok) {
            snprintf(error, capacity, "%s='%s' is invalid (expected %s)", key,
                     cli_echo(value, echo), expected);
            return false;
        }
    }
    return true;
}

static uint32_t below(struct emu_chaos *chaos, uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)splitmix64_below(&chaos->random, n);
}

static uint64_t exponential_gap(struct emu_chaos *chaos)
{
    double u = ((double)(splitmix64_next(&chaos->random) >> 11) + 0.5) / 9007199254740992.0;
    double seconds = -log(u) / chaos->spec.rate;
    if (seconds > 3600.0)
        seconds = 3600.0;
    return (uint64_t)(seconds * (double)NS_PER_S);
}

void emu_chaos_init(struct emu_chaos *chaos, const struct emu_chaos_spec *spec,
                    uint64_t now_ns, uint64_t default_hold_ns)
{
    memset(chaos, 0, sizeof *chaos);
    chaos->spec = *spec;
    if (chaos->spec.hold_ns == 0)
        chaos->spec.hold_ns = default_hold_ns;
    chaos->random = spec->seed;
    chaos->begin_ns = now_ns;
    chaos->next_ns = now_ns + exponential_gap(chaos);
}

static bool starting_over(const struct emu_chaos *chaos, uint64_t now_ns)
{
    if (chaos->spec.count != 0 && chaos->started >= chaos->spec.count)
        return true;
    return chaos->spec.duration_ns != 0 && now_ns - chaos->begin_ns >= chaos->spec.duration_ns;
}

static unsigned pending_undos(const struct emu_chaos *chaos)
{
    unsigned n = 0;
    for (unsigned i = 0; i < EMU_CHAOS_UNDO_MAX; i++)
        n += chaos->undo[i].used;
    return n;
}

uint64_t emu_chaos_next_due(const struct emu_chaos *chaos, uint64_t now_ns)
{
    uint64_t due = starting_over(chaos, now_ns) ? UINT64_MAX : chaos->next_ns;
    for (unsigned i = 0; i < EMU_CHAOS_UNDO_MAX; i++)
        if (chaos->undo[i].used && chaos->undo[i].due_ns < due)
            due = chaos->undo[i].due_ns;
    return due;
}

bool emu_chaos_done(const struct emu_chaos *chaos, uint64_t now_ns)
{
    return (starting_over(chaos, now_ns) || chaos->stuck) && pending_undos(chaos) == 0;
}

static void finish(struct emu_chaos *chaos, struct emu_action *action, uint64_t now_ns,
                   const char *suffix)
{
    action->at_ns = now_ns;
    action->order = chaos->order++;
    char described[EMU_ACTION_TEXT_MAX], label[EMU_ACTION_TEXT_MAX + 32];
    emu_action_describe(action, described, sizeof described);
    snprintf(label, sizeof label, "%s (%s)", described, suffix);
    emu_action_set_text(action, label);
}

static uint32_t count_state(const struct emu_inject_world *world, enum emu_inject_state state)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < world->count; r++)
        n += world->state[r] == state;
    return n;
}

static uint32_t cut_cables(const struct emu_inject_world *world)
{
    uint32_t ends = 0;
    for (uint32_t r = 0; r < world->count; r++)
        ends += (uint32_t)__builtin_popcount(world->cut[r]);
    return ends / 2u;
}

/* A random node in state (and with no cut cable when whole is set). */
static uint32_t pick_node(struct emu_chaos *chaos, const struct emu_inject_world *world,
                          enum emu_inject_state state, bool whole, bool qemu_only)
{
    uint32_t candidates = 0;
    for (uint32_t r = 0; r < world->count; r++)
        candidates += world->state[r] == state && (!whole || world->cut[r] == 0) &&
                      (!qemu_only || world->qemu[r]);
    if (candidates == 0)
        return UINT32_MAX;
    uint32_t chosen = below(chaos, candidates);
    for (uint32_t r = 0; r < world->count; r++) {
        if (world->state[r] == state && (!whole || world->cut[r] == 0) &&
            (!qemu_only || world->qemu[r])) {
            if (chosen == 0)
                return r;
            chosen--;
        }
    }
    return UINT32_MAX;
}

/* An uncut cable between two running nodes, as (node, link). */
static bool cable_usable(const struct emu_inject_world *world, uint32_t node, unsigned link)
{
    uint32_t peer = torus_geometry_neighbour(world->geometry, node, link);
    return peer != TORUS_RANK_NONE && world->state[node] == EMU_INJECT_RUNNING &&
           world->state[peer] == EMU_INJECT_RUNNING && ((world->cut[node] >> link) & 1u) == 0;
}

static bool pick_cable(struct emu_chaos *chaos, const struct emu_inject_world *world,
                       struct emu_action *out)
{
    uint32_t candidates = 0;
    for (uint32_t r = 0; r < world->count; r++)
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
            candidates += cable_usable(world, r, l);
    if (candidates == 0)
        return false;
    uint32_t chosen = below(chaos, candidates);
    for (uint32_t r = 0; r < world->count; r++)
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
            if (cable_usable(world, r, l) && chosen-- == 0) {
                out->node = r;
                out->link = l;
                return true;
            }
    return false;
}

static bool add_undo(struct emu_chaos *chaos, const struct emu_action *action, uint64_t due)
{
    for (unsigned i = 0; i < EMU_CHAOS_UNDO_MAX; i++) {
        if (!chaos->undo[i].used) {
            chaos->undo[i].used = true;
            chaos->undo[i].due_ns = due;
            chaos->undo[i].action = *action;
            return true;
        }
    }
    return false;
}

/* Draws a new fault of kind; false when none of that kind can happen now. */
static bool draw(struct emu_chaos *chaos, struct emu_inject_world *world, unsigned kind,
                 uint64_t now_ns, struct emu_action *out)
{
    memset(out, 0, sizeof *out);
    uint32_t members = world->count - count_state(world, EMU_INJECT_NOT_STARTED);
    uint32_t down_limit = members / 8u > 1u ? members / 8u : 1u;
    uint32_t down = count_state(world, EMU_INJECT_KILLED) + count_state(world, EMU_INJECT_HUNG);
    struct emu_action undo;
    bool has_undo = true;
    switch (kind) {
    case EMU_CHAOS_KILL:
    case EMU_CHAOS_HANG:
        if (down >= down_limit || members < 3)
            return false;
        out->node = pick_node(chaos, world, EMU_INJECT_RUNNING, true, false);
        out->kind = kind == EMU_CHAOS_KILL ? EMU_ACTION_KILL : EMU_ACTION_HANG;
        undo = *out;
        undo.kind = kind == EMU_CHAOS_KILL ? EMU_ACTION_RESTART : EMU_ACTION_RESUME;
        break;
    case EMU_CHAOS_REBOOT:
        if (down >= down_limit || members < 3)
            return false;
        out->node = pick_node(chaos, world, EMU_INJECT_RUNNING, true, true);
        out->kind = EMU_ACTION_REBOOT;
        has_undo = false;
        break;
    case EMU_CHAOS_JOIN:
        out->node = pick_node(chaos, world, EMU_INJECT_NOT_STARTED, false, false);
        out->kind = EMU_ACTION_JOIN;
        has_undo = false;
        break;
    case EMU_CHAOS_LINK:
    default:
        if (cut_cables(world) >= MAX_CUT_CABLES || !pick_cable(chaos, world, out))
            return false;
        out->kind = EMU_ACTION_LINK_OFF;
        undo = *out;
        undo.kind = EMU_ACTION_LINK_ON;
        break;
    }
    if (out->node == UINT32_MAX)
        return false;
    char reason[200];
    if (!emu_inject_apply(world, out, reason, sizeof reason))
        return false;
    if (has_undo && !add_undo(chaos, &undo, now_ns + chaos->spec.hold_ns))
        return false; /* cannot happen: fewer faults than slots are ever open */
    finish(chaos, out, now_ns, "chaos");
    return true;
}

bool emu_chaos_next(struct emu_chaos *chaos, struct emu_inject_world *world, uint64_t now_ns,
                    struct emu_action *out)
{
    /* Undos first, oldest due first. */
    int due = -1;
    for (unsigned i = 0; i < EMU_CHAOS_UNDO_MAX; i++)
        if (chaos->undo[i].used && chaos->undo[i].due_ns <= now_ns &&
            (due < 0 || chaos->undo[i].due_ns < chaos->undo[due].due_ns))
            due = (int)i;
    if (due >= 0) {
        *out = chaos->undo[due].action;
        chaos->undo[due].used = false;
        char reason[200];
        if (!emu_inject_apply(world, out, reason, sizeof reason))
            return false;
        finish(chaos, out, now_ns, "chaos undo");
        return true;
    }
    if (starting_over(chaos, now_ns) || now_ns < chaos->next_ns)
        return false;
    /* Try the drawn kind first, then the others in a random order. */
    unsigned kinds[EMU_CHAOS_KINDS], count = 0;
    for (unsigned k = 0; k < EMU_CHAOS_KINDS; k++)
        if ((chaos->spec.kinds >> k) & 1u)
            kinds[count++] = k;
    for (unsigned i = count; i > 1; i--) {
        unsigned j = below(chaos, i);
        unsigned t = kinds[i - 1];
        kinds[i - 1] = kinds[j];
        kinds[j] = t;
    }
    for (unsigned i = 0; i < count; i++) {
        if (draw(chaos, world, kinds[i], now_ns, out)) {
            chaos->started++;
            chaos->next_ns = now_ns + exponential_gap(chaos);
            return true;
        }
    }
    /* Nothing possible now (too many down): try again after the next undo;
     * with nothing left to undo, nothing will ever be possible. */
    chaos->stuck = pending_undos(chaos) == 0;
    chaos->next_ns = now_ns + exponential_gap(chaos);
    return false;
}
