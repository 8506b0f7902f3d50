/*
 * Issue 16's reachability sampler in the simulator (--reach): the wall of
 * cuts (wall_4x4x4.script, 30 cuts at 1 ms) sampled every 5 us to 2 ms, every
 * ordered pair walked through the routers or the tables.
 *  - detour: before the cuts every pair reaches at stretch 1; after them a
 *    fraction stays unreachable to the end, and the pairs that do reach
 *    step around the cuts (stretch > 1);
 *  - table: the fraction drops below 1 while the tables converge, then
 *    every pair reaches again (and stays so), at a stretch above 1 (the
 *    routes go round the wall) and never below 1.
 * And a sample of PAIRS drawn with the seed is the same pairs on a rerun.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_inject.h"
#include "tests/check.h"
#include "tests/sim/sim_case.h"

#define SAMPLES_MAX 20000

struct samples {
    uint32_t count;
    struct reach_sample at[SAMPLES_MAX];
};

static const char *wall_text;
static struct samples detour_samples, table_samples, drawn_a, drawn_b;

static void on_reach(void *context, const struct reach_sample *sample)
{
    struct samples *s = context;
    if (s->count < SAMPLES_MAX)
        s->at[s->count++] = *sample;
}

static void run(bool table, uint32_t pairs, struct samples *out)
{
    struct torus_geometry g;
    CHECK(sim_case_geometry("4x4x4", &g));
    struct sim_params p;
    sim_params_defaults(&p, &g);
    p.routes = true;
    p.routing_table = table;
    p.verbosity = 0;
    p.reach_interval_ns = 5000;
    p.settle_ns = 1000000; /* the tables converge in tens of us: 400 samples */
    p.reach_pairs = pairs;
    p.on_reach = on_reach;
    p.reach_context = out;
    out->count = 0;
    char error[256];
    struct sim *sim = sim_create(&p, error, sizeof error);
    CHECKF(sim != NULL, "%s", error);
    if (sim == NULL)
        return;
    struct fault_script script;
    CHECKF(sim_inject_parse(wall_text, &g, 0, &script, error, sizeof error), "%s", error);
    sim_add_injections(sim, script.items, script.count);
    fault_script_free(&script);
    sim_run(sim, NULL);
    CHECK_EQ(sim_get_stats(sim)->reach_samples, out->count);
    sim_destroy(sim);
}

static const uint64_t cut_ns = 1000000;

int main(int argc, char **argv)
{
    char *text = NULL;
    char error[320];
    if (argc != 2 || !fault_script_read_file(argv[1], &text, error, sizeof error)) {
        fprintf(stderr, "usage: test_sim_reach wall_4x4x4.script (%s)\n", argc == 2 ? error : "");
        return 2;
    }
    wall_text = text;

    run(false, 0, &detour_samples);
    CHECK(detour_samples.count > 100);
    if (detour_samples.count == 0)
        return check_report("sim.reach_wall");
    bool detour_full_before = true;
    double detour_stretch_after = 0;
    for (uint32_t i = 0; i < detour_samples.count; i++) {
        const struct reach_sample *s = &detour_samples.at[i];
        CHECK_EQ(s->tried, 64 * 63);
        if (s->t_ns <= cut_ns) {
            detour_full_before = detour_full_before && s->reached == s->tried &&
                                 reach_sample_stretch_mean(s) == 1.0;
        }
        CHECK(s->reached == 0 || reach_sample_stretch_mean(s) >= 1.0);
        detour_stretch_after = reach_sample_stretch_mean(s);
    }
    const struct reach_sample *detour_last = &detour_samples.at[detour_samples.count - 1];
    printf("detour: %u samples, last fraction %.3f stretch mean %.3f max %.3f\n",
           detour_samples.count, reach_sample_fraction(detour_last), detour_stretch_after,
           detour_last->stretch_max);
    CHECKF(detour_full_before, "a sample before the cuts missed a pair or took a detour");
    CHECKF(reach_sample_fraction(detour_last) < 1.0, "detour reached every pair across the wall");
    CHECKF(detour_stretch_after > 1.0 && detour_last->stretch_max > 1.0,
           "detour: no stretch while detouring");

    run(true, 0, &table_samples);
    CHECK(table_samples.count > 100);
    if (table_samples.count == 0)
        return check_report("sim.reach_wall");
    uint64_t first_short_ns = 0, converged_ns = 0;
    double stretch_converged = 0;
    for (uint32_t i = 0; i < table_samples.count; i++) {
        const struct reach_sample *s = &table_samples.at[i];
        CHECK_EQ(s->tried, 64 * 63);
        CHECK(s->reached == 0 || reach_sample_stretch_mean(s) >= 1.0);
        if (s->reached < s->tried) {
            if (first_short_ns == 0)
                first_short_ns = s->t_ns;
            converged_ns = 0;
        } else if (first_short_ns != 0 && converged_ns == 0) {
            converged_ns = s->t_ns;
            stretch_converged = reach_sample_stretch_mean(s);
        }
    }
    const struct reach_sample *table_last = &table_samples.at[table_samples.count - 1];
    printf("table: %u samples, short from %" PRIu64 " ns, every pair again from %" PRIu64
           " ns at stretch mean %.3f, last max %.3f\n",
           table_samples.count, first_short_ns, converged_ns, stretch_converged,
           table_last->stretch_max);
    CHECKF(first_short_ns > cut_ns, "table: no sample short of a pair after the cuts");
    CHECKF(converged_ns > first_short_ns, "table: never every pair again");
    CHECK_EQ(table_last->reached, table_last->tried);
    CHECKF(stretch_converged > 1.0, "table: no stretch round the wall");

    /* PAIRS drawn with the seed: the same draw twice. */
    run(true, 100, &drawn_a);
    run(true, 100, &drawn_b);
    CHECK_EQ(drawn_a.count, drawn_b.count);
    CHECK(drawn_a.count > 0 && drawn_a.at[0].tried == 100);
    CHECK(memcmp(drawn_a.at, drawn_b.at, drawn_a.count * sizeof drawn_a.at[0]) == 0);
    free(text);
    return check_report("sim.reach_wall");
}
