/* Fault rates per group of nodes: the parser and the seeded draw (fault_rates.h). */
#include "tools/fault_rates.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/splitmix.h"

static const char *const kind_names[FAULT_RATE_KINDS] = {"process", "physical", "network"};

static bool rates_error(char *error, size_t capacity, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static bool rates_error(char *error, size_t capacity, const char *format, ...)
{
    char text[200];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    snprintf(error, capacity, "--fault-rates: %s (expected %s)", text, FAULT_RATES_EXPECTED);
    return false;
}

/* [begin, end) without the spaces around it, copied into out (cut to fit). */
static void trimmed(const char *begin, const char *end, char *out, size_t capacity)
{
    while (begin < end && (*begin == ' ' || *begin == '\t'))
        begin++;
    while (end > begin && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t length = (size_t)(end - begin);
    if (length >= capacity)
        length = capacity - 1u;
    memcpy(out, begin, length);
    out[length] = '\0';
}

/* "0.5", "20" -> thousandths; false for anything else or out of range. */
static bool parse_milli(const char *text, uint64_t *milli)
{
    uint64_t whole = 0, value = 0;
    const char *c = text;
    if (*c < '0' || *c > '9')
        return false;
    for (; *c >= '0' && *c <= '9'; c++) {
        whole = whole * 10u + (uint64_t)(*c - '0');
        if (whole > FAULT_RATES_MAX_MILLI / 1000u)
            return false;
    }
    value = whole * 1000u;
    if (*c == '.') {
        uint64_t scale = 100;
        c++;
        if (*c < '0' || *c > '9')
            return false;
        for (; *c >= '0' && *c <= '9'; c++) {
            if (scale == 0 && *c != '0')
                return false; /* finer than a thousandth */
            value += (uint64_t)(*c - '0') * scale;
            scale /= 10u;
        }
    }
    if (*c != '\0' || value > FAULT_RATES_MAX_MILLI)
        return false;
    *milli = value;
    return true;
}

static bool parse_group(const char *begin, const char *end, struct fault_rates *rates,
                        char *error, size_t capacity)
{
    char text[160];
    trimmed(begin, end, text, sizeof text);
    char *colon = strchr(text, ':');
    if (colon == NULL)
        return rates_error(error, capacity, "'%s' has no group (a group, ':', then rates)",
                           text);
    if (rates->count == FAULT_RATES_GROUPS)
        return rates_error(error, capacity, "more than %u groups", FAULT_RATES_GROUPS);
    struct fault_rates_group *g = &rates->groups[rates->count];
    memset(g, 0, sizeof *g);
    char name[48];
    trimmed(text, colon, name, sizeof name);
    if (strcmp(name, "default") == 0) {
        g->is_default = true;
        for (unsigned i = 0; i < rates->count; i++)
            if (rates->groups[i].is_default)
                return rates_error(error, capacity, "two default groups");
    } else if (!fault_parse_cut(name, &g->dim, &g->below)) {
        return rates_error(error, capacity, "'%s' is not a group", name);
    }
    bool seen[FAULT_RATE_KINDS] = {false};
    const char *item = colon + 1;
    for (;;) {
        const char *comma = strchr(item, ',');
        const char *item_end = comma != NULL ? comma : item + strlen(item);
        char clause[64];
        trimmed(item, item_end, clause, sizeof clause);
        char *equals = strchr(clause, '=');
        if (equals == NULL)
            return rates_error(error, capacity, "'%s' in group '%s' is not MODEL=RATE", clause,
                               name);
        *equals = '\0';
        char model[24], value[32];
        trimmed(clause, equals, model, sizeof model);
        trimmed(equals + 1, equals + 1 + strlen(equals + 1), value, sizeof value);
        unsigned kind = 0;
        while (kind < FAULT_RATE_KINDS && strcmp(kind_names[kind], model) != 0)
            kind++;
        if (kind == FAULT_RATE_KINDS)
            return rates_error(error, capacity, "'%s' in group '%s' is not a fault model", model,
                               name);
        if (seen[kind])
            return rates_error(error, capacity, "%s given twice in group '%s'", model, name);
        seen[kind] = true;
        if (!parse_milli(value, &g->milli[kind]))
            return rates_error(error, capacity, "%s rate '%s' in group '%s' is not a rate",
                               model, value, name);
        if (comma == NULL)
            break;
        item = comma + 1;
    }
    rates->count++;
    return true;
}

bool fault_rates_parse(const char *text, struct fault_rates *rates, char *error,
                       size_t capacity)
{
    memset(rates, 0, sizeof *rates);
    if (text == NULL || strspn(text, " \t") == strlen(text))
        return rates_error(error, capacity, "no group");
    const char *begin = text;
    for (;;) {
        const char *semicolon = strchr(begin, ';');
        const char *end = semicolon != NULL ? semicolon : begin + strlen(begin);
        if (!parse_group(begin, end, rates, error, capacity))
            return false;
        if (semicolon == NULL)
            return true;
        begin = semicolon + 1;
    }
}

bool fault_rates_check_torus(const struct fault_rates *rates,
                             const struct torus_geometry *geometry, char *error,
                             size_t capacity)
{
    static const char letters[] = "xyzuvw";
    for (unsigned i = 0; i < rates->count; i++) {
        const struct fault_rates_group *g = &rates->groups[i];
        if (g->is_default)
            continue;
        if (g->dim >= (int)geometry->dims)
            return rates_error(error, capacity, "the torus has no dimension %c for group %c<%" PRIu32,
                               letters[g->dim], letters[g->dim], g->below);
        uint32_t limit = g->dim < 0 ? geometry->node_count : geometry->size[g->dim];
        /* The group's name built apart: GCC 12's printf checking under
         * -fsanitize crashed on a "%.*s" of a conditional pointer here. */
        char name[3] = {'i', 'd', '\0'};
        if (g->dim >= 0) {
            name[0] = letters[g->dim];
            name[1] = '\0';
        }
        if (g->below >= limit)
            return rates_error(error, capacity, "group %s<%" PRIu32 " holds every node", name,
                               g->below);
    }
    return true;
}

const struct fault_rates_group *fault_rates_for(const struct fault_rates *rates,
                                                const struct torus_geometry *geometry,
                                                uint32_t node)
{
    static const struct fault_rates_group none;
    const struct fault_rates_group *fallback = &none;
    for (unsigned i = 0; i < rates->count; i++) {
        const struct fault_rates_group *g = &rates->groups[i];
        if (g->is_default) {
            if (fallback == &none)
                fallback = g;
            continue;
        }
        uint32_t value = g->dim < 0 ? node : torus_geometry_coord(geometry, node, (unsigned)g->dim);
        if (value < g->below)
            return g;
    }
    return fallback;
}

/* An exponential gap for a rate (thousandths per second), in ns. */
static uint64_t draw_gap_ns(uint64_t *state, uint64_t milli)
{
    double u = ((double)(splitmix64_next(state) >> 11) + 1.0) / 9007199254740993.0; /* (0,1] */
    double gap = -log(u) * 1e12 / (double)milli;
    return gap >= 1e18 ? UINT64_C(1000000000000000000) : (uint64_t)gap + 1u;
}

static int by_time(const void *a, const void *b)
{
    const struct fault *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

size_t fault_rates_draw(const struct fault_rates *rates, const struct torus_geometry *geometry,
                        uint64_t seed, uint64_t horizon_ns, uint64_t link_hold_ns,
                        struct fault *items, size_t capacity, size_t *dropped)
{
    size_t count = 0;
    *dropped = 0;
    unsigned links = torus_geometry_link_count(geometry);
    for (uint32_t node = 0; node < geometry->node_count; node++) {
        const struct fault_rates_group *g = fault_rates_for(rates, geometry, node);
        /* One stream per node and model: a node's faults do not depend on the others'. */
        uint64_t death = horizon_ns;
        /* physical first: a node's death ends its other faults */
        static const unsigned order[FAULT_RATE_KINDS] = {FAULT_RATE_PHYSICAL, FAULT_RATE_PROCESS,
                                                         FAULT_RATE_NETWORK};
        for (unsigned o = 0; o < FAULT_RATE_KINDS; o++) {
            unsigned kind = order[o];
            uint64_t state = seed ^ (UINT64_C(0x5ab1e5) + node * UINT64_C(0x10001) + kind);
            uint64_t t = 0;
            while (g->milli[kind] != 0) {
                t += draw_gap_ns(&state, g->milli[kind]);
                if (t >= death)
                    break;
                struct fault f = {.time_ns = t, .node = node, .dim = 0};
                if (kind == FAULT_RATE_PROCESS) {
                    f.kind = FAULT_APPKILL;
                } else if (kind == FAULT_RATE_PHYSICAL) {
                    f.kind = FAULT_KILL;
                } else {
                    uint32_t far = TORUS_RANK_NONE;
                    for (unsigned tries = 0; far == TORUS_RANK_NONE && tries < 4u * links; tries++)
                        far = torus_geometry_neighbour(
                            geometry, node, (unsigned)splitmix64_below(&state, links));
                    if (far == TORUS_RANK_NONE)
                        continue;
                    f.kind = FAULT_LINK_OFF;
                    f.link = FAULT_LINK_PAIR;
                    f.other = far;
                    f.duration_ns = link_hold_ns;
                }
                if (count < capacity)
                    items[count++] = f;
                else
                    (*dropped)++;
                if (kind == FAULT_RATE_PHYSICAL) {
                    death = t;
                    break;
                }
            }
        }
    }
    qsort(items, count, sizeof *items, by_time);
    return count;
}
