/*
 * Simulator test helpers (see sim_case.h).
 */
#include "tests/sim/sim_case.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_inject.h"

bool sim_case_geometry(const char *dims, struct torus_geometry *g)
{
    unsigned count = 0;
    uint32_t sizes[CONFIG_MAX_DIMS];
    if (torus_geometry_parse_dims(dims, &count, sizes, NULL) != TORUS_GEOMETRY_OK) {
        return false;
    }
    return torus_geometry_init(g, count, sizes, NULL, NULL) == TORUS_GEOMETRY_OK;
}

/* Replaces every "{U}", "{U*k}" or "{U*k+m}" with k units (+ m ns), in ns. */
static void expand(const char *text, uint64_t unit, char *out, size_t capacity)
{
    size_t o = 0;
    for (const char *p = text; *p != '\0' && o + 32 < capacity;) {
        if (p[0] == '{' && p[1] == 'U') {
            uint64_t factor = 1;
            uint64_t addend = 0;
            char *q = (char *)p + 2;
            if (*q == '*') {
                factor = strtoull(q + 1, &q, 10);
            }
            if (*q == '+') {
                addend = strtoull(q + 1, &q, 10);
            }
            if (*q == '}') {
                o += (size_t)snprintf(out + o, capacity - o, "%" PRIu64 "ns",
                                      factor * unit + addend);
                p = q + 1;
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

void sim_case_run(const struct sim_case *c, struct sim_result *r, FILE *out)
{
    memset(r, 0, sizeof *r);
    struct torus_geometry g;
    if (!sim_case_geometry(c->dims, &g)) {
        return;
    }
    struct sim_params p;
    sim_params_defaults(&p, &g);
    p.radix = c->radix;
    p.layout = c->layout;
    p.policy = c->policy;
    p.members = c->members != 0 ? c->members : g.node_count;
    p.verbosity = c->views ? 2 : c->events ? 1 : 0;
    if (c->link_detect_ns != UINT64_MAX) {
        p.link_detect_ns = c->link_detect_ns;
    }
    p.routes = c->routes;
    p.recovery = c->recovery;
    p.seed_count = c->seed_count;
    memcpy(p.seeds, c->seeds, sizeof p.seeds);
    r->unit_ns = sim_unit_ns(&p);
    p.heartbeat_ns = c->heartbeats ? 4u * r->unit_ns : 0;
    r->nodes = g.node_count;
    char error[256];
    struct sim *sim = sim_create(&p, error, sizeof error);
    if (sim == NULL) {
        fprintf(stderr, "sim_create: %s\n", error);
        return;
    }
    if (c->inject != NULL) {
        char text[8192]; /* long scripts: one kill per dead node */
        expand(c->inject, r->unit_ns, text, sizeof text);
        struct fault_script script;
        if (!sim_inject_parse(text, &g, 0, &script, error, sizeof error)) {
            fprintf(stderr, "inject: %s\n", error);
            sim_destroy(sim);
            return;
        }
        sim_add_injections(sim, script.items, script.count);
        fault_script_free(&script);
    }
    r->ran = true;
    r->ok = sim_run(sim, out);
    r->stats = *sim_get_stats(sim);
    r->sim = sim;
}

void sim_case_free(struct sim_result *r)
{
    sim_destroy(r->sim);
    r->sim = NULL;
}
