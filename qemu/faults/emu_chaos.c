#define _GNU_SOURCE
#include "qemu/faults/emu_chaos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/splitmix.h"

/* The kinds --chaos takes, as the generator's mask bits. */
static const struct {
    const char *name;
    enum fault_kind kind;
} kind_names[] = {
    {"kill", FAULT_KILL}, {"hang", FAULT_HANG}, {"link", FAULT_LINK_OFF},
    {"reboot", FAULT_REBOOT}, {"join", FAULT_JOIN},
};

static bool kind_of(const char *name, unsigned *bit)
{
    for (size_t k = 0; k < sizeof kind_names / sizeof kind_names[0]; k++) {
        if (strcmp(name, kind_names[k].name) == 0) {
            *bit = CHAOS_KIND(kind_names[k].kind);
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
    spec->kinds = CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG) | CHAOS_KIND(FAULT_LINK_OFF) |
                  CHAOS_KIND(FAULT_REBOOT);
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
            unsigned bit;
            if (in_kinds && kind_of(token, &bit)) {
                spec->kinds |= bit;
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
            unsigned bit;
            ok = kind_of(value, &bit);
            expected = "kill, hang, link, reboot or join";
            if (ok) {
                spec->kinds = bit;
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
    spec->given = given;
    return true;
}

bool emu_chaos_init(struct emu_chaos *chaos, const struct emu_chaos_spec *spec,
                    const struct torus_geometry *geometry, uint32_t spares, const bool *qemu,
                    uint64_t now_ns, uint64_t default_hold_ns, char *error, size_t capacity)
{
    memset(chaos, 0, sizeof *chaos);
    chaos->spec = *spec;
    if (chaos->spec.hold_ns == 0)
        chaos->spec.hold_ns = default_hold_ns;
    struct chaos_config config = {
        .geometry = geometry,
        .members = geometry->node_count - spares,
        .seed = spec->seed,
        .kinds = spec->kinds,
        .hold_ns = chaos->spec.hold_ns,
        .unit_ns = 0,
        .rebootable = qemu,
    };
    if (!chaos_init(&chaos->generator, &config, error, capacity))
        return false;
    chaos->begin_ns = now_ns;
    chaos->next_ns = now_ns + chaos_gap_ns(&chaos->generator, chaos->spec.rate);
    return true;
}

void emu_chaos_free(struct emu_chaos *chaos)
{
    chaos_free(&chaos->generator);
}

static bool starting_over(const struct emu_chaos *chaos, uint64_t now_ns)
{
    if (chaos->spec.count != 0 && chaos->started >= chaos->spec.count)
        return true;
    return chaos->spec.duration_ns != 0 && now_ns - chaos->begin_ns >= chaos->spec.duration_ns;
}

uint64_t emu_chaos_next_due(const struct emu_chaos *chaos, uint64_t now_ns)
{
    if (chaos->queued > 0)
        return now_ns;
    uint64_t due = starting_over(chaos, now_ns) || chaos->stuck ? UINT64_MAX : chaos->next_ns;
    uint64_t undo = chaos_next_undo_ns(&chaos->generator);
    return undo < due ? undo : due;
}

bool emu_chaos_done(const struct emu_chaos *chaos, uint64_t now_ns)
{
    return (starting_over(chaos, now_ns) || chaos->stuck) && chaos->queued == 0 &&
           chaos_next_undo_ns(&chaos->generator) == UINT64_MAX;
}

/* The fault's actions, labelled, the first in *out and the others queued. */
static bool take(struct emu_chaos *chaos, const struct fault *item, uint64_t now_ns,
                 const char *suffix, struct emu_action *out)
{
    struct emu_action actions[EMU_INJECT_ACTIONS_MAX];
    unsigned count = emu_inject_actions(item, chaos->generator.config.geometry, actions);
    if (count == 0)
        return false; /* not reached: the spec holds only kinds the launcher carries out */
    for (unsigned i = 0; i < count; i++) {
        actions[i].at_ns = now_ns;
        actions[i].order = chaos->order++;
        char described[EMU_ACTION_TEXT_MAX], label[EMU_ACTION_TEXT_MAX + 32];
        emu_action_describe(&actions[i], described, sizeof described);
        snprintf(label, sizeof label, "%s (%s)", described, suffix);
        emu_action_set_text(&actions[i], label);
    }
    *out = actions[0];
    for (unsigned i = 1; i < count; i++)
        chaos->queue[chaos->queued++] = actions[i];
    return true;
}

bool emu_chaos_next(struct emu_chaos *chaos, uint64_t now_ns, struct emu_action *out)
{
    if (chaos->queued > 0) {
        *out = chaos->queue[0];
        chaos->queued--;
        memmove(&chaos->queue[0], &chaos->queue[1], chaos->queued * sizeof chaos->queue[0]);
        return true;
    }
    struct fault item, undo;
    if (chaos_take_undo(&chaos->generator, now_ns, &item))
        return take(chaos, &item, now_ns, "chaos undo", out);
    if (starting_over(chaos, now_ns) || chaos->stuck || now_ns < chaos->next_ns)
        return false;
    chaos->next_ns = now_ns + chaos_gap_ns(&chaos->generator, chaos->spec.rate);
    if (chaos_draw(&chaos->generator, now_ns, &item, &undo)) {
        chaos->started++;
        return take(chaos, &item, now_ns, "chaos", out);
    }
    /* Nothing this time; with nothing possible and nothing to undo, never again. */
    chaos->stuck = chaos_next_undo_ns(&chaos->generator) == UINT64_MAX &&
                   !chaos_possible(&chaos->generator);
    return false;
}
