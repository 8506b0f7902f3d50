/*
 * Issue 16's wall of cuts, in the simulator (wall_4x4x4.script): a 4x4x4
 * torus with every x cable across both x boundaries (x 3|0 and 1|2) cut
 * but the one at y = z = 0 of each, 30 cuts at 1 ms.  At the end every ordered pair of
 * nodes is routed as a message would be (sim_reach_all_pairs).  With the
 * routers' detours (--routing detour) pairs are lost, out of TTL; with the
 * routing tables (--routing table) every pair is delivered, no frame ever
 * runs out of TTL, and the membership run ends in agreement.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_inject.h"
#include "tests/check.h"
#include "tests/sim/sim_case.h"

/* tests/sim/wall_4x4x4.script, the README's too. */
static const char *wall_text;

static void run(bool table, struct sim_reach *reach, struct sim_stats *stats, bool *ok)
{
    struct torus_geometry g;
    CHECK(sim_case_geometry("4x4x4", &g));
    struct sim_params p;
    sim_params_defaults(&p, &g);
    p.routes = true;
    p.routing_table = table;
    p.verbosity = 0;
    char error[256];
    struct sim *sim = sim_create(&p, error, sizeof error);
    CHECKF(sim != NULL, "%s", error);
    if (sim == NULL)
        return;
    struct fault_script script;
    CHECKF(sim_inject_parse(wall_text, &g, 0, &script, error, sizeof error), "%s", error);
    CHECK_EQ(script.count, 30);
    sim_add_injections(sim, script.items, script.count);
    fault_script_free(&script);
    *ok = sim_run(sim, NULL);
    sim_reach_all_pairs(sim, reach);
    *stats = *sim_get_stats(sim);
    sim_destroy(sim);
}

int main(int argc, char **argv)
{
    char *text = NULL;
    char error[320];
    if (argc != 2 || !fault_script_read_file(argv[1], &text, error, sizeof error)) {
        fprintf(stderr, "usage: test_sim_wall wall_4x4x4.script (%s)\n", argc == 2 ? error : "");
        return 2;
    }
    wall_text = text;
    struct sim_reach detour, table;
    struct sim_stats detour_stats, table_stats;
    bool detour_ok = false, table_ok = false;
    run(false, &detour, &detour_stats, &detour_ok);
    run(true, &table, &table_stats, &table_ok);
    printf("detour: %" PRIu64 " of %" PRIu64 " pairs delivered, %" PRIu64 " out of TTL\n",
           detour.delivered, detour.pairs, detour.ttl_expired);
    printf("table:  %" PRIu64 " of %" PRIu64 " pairs delivered, %" PRIu64
           " out of TTL, %" PRIu64 " advertisements\n",
           table.delivered, table.pairs, table.ttl_expired, table_stats.route_adverts);
    /* First, the detour router does not reach every pair across the wall. */
    CHECK_EQ(detour.pairs, 64 * 63);
    CHECKF(detour.delivered < detour.pairs && detour.ttl_expired > 0,
           "the detour router reached every pair");
    /* The tables do, and no frame ever ran out of hops. */
    CHECK_EQ(table.pairs, 64 * 63);
    CHECK_EQ(table.delivered, table.pairs);
    CHECK_EQ(table.ttl_expired, 0);
    CHECK_EQ(table_stats.ttl_expired, 0);
    CHECK(table_stats.route_adverts > 0);
    CHECKF(table_ok, "%s", table_stats.violation_text);
    free(text);
    return check_report("sim.wall_of_cuts");
}
