/* The policy study's model application: its arithmetic on hand-computed
 * cases, and the --fault-rates parser's one-line errors. */
#include <stdio.h>
#include <string.h>

#include "lib/recovery.h"
#include "sim/sim_model.h"
#include "tools/fault_rates.h"

static int failures;
#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);              \
            failures++;                                                          \
        }                                                                        \
    } while (0)

int main(void)
{
    /* 100 iterations of 10 ns, a checkpoint after 20, 40, 60, 80 (not 100): 5 ns each. */
    struct sim_model_params p = {.iterations = 100, .iteration_ns = 10, .checkpoint_every = 20,
                                 .checkpoint_ns = 5, .load_ns = 7, .checkpoint_bytes = 175,
                                 .link_bytes_per_s = 175000000, .hop_ns = 3, .ranks = 2,
                                 .nodes = 3};
    CHECK(sim_model_fault_free_ns(&p) == 1000 + 4 * 5);
    struct sim_model m;
    sim_model_init(&m, &p);
    CHECK(sim_model_total_ns(&m) == 1020);
    /* One fault at 500 on node 1 (a rank), decided at 530, RESTART: the last
     * checkpoint (40 iterations) completed at 410; 90 ns lost, then
     * T_recover = 30 + 7 + 0, then 60 iterations and the checkpoints at 60 and 80. */
    sim_model_init(&m, &p);
    sim_model_fault(&m, 500, 530, 1, FAULT_MODEL_PROCESS, RECOVERY_RESTART);
    CHECK(m.lost_work_ns == 90);
    CHECK(m.resume_ns == 537);
    CHECK(sim_model_total_ns(&m) == 537 + 600 + 10);
    CHECK(sim_model_total_ns(&m) == 1020 + 37 + 90);
    /* MIGRATE: 175 bytes at 175 MB/s is 1000 ns, plus a hop; the rank moves to node 2. */
    sim_model_init(&m, &p);
    sim_model_fault(&m, 500, 530, 0, FAULT_MODEL_PHYSICAL, RECOVERY_MIGRATE);
    CHECK(sim_model_total_ns(&m) == 1020 + 30 + 7 + 1003 + 90);
    CHECK(m.place[2] == SIM_MODEL_RANK && m.place[0] == SIM_MODEL_GONE);
    /* A spare's fault costs nothing; a network fault ignored neither. */
    sim_model_init(&m, &p);
    sim_model_fault(&m, 500, 530, 2, FAULT_MODEL_PROCESS, RECOVERY_RESTART);
    sim_model_fault(&m, 600, 630, 1, FAULT_MODEL_NETWORK, RECOVERY_IGNORE);
    CHECK(sim_model_total_ns(&m) == 1020);

    /* The rates parser. */
    struct fault_rates rates;
    char error[400];
    CHECK(fault_rates_parse("x<2: process=20, physical=0.5; default: process=2", &rates, error,
                            sizeof error));
    CHECK(rates.count == 2 && rates.groups[0].dim == 0 && rates.groups[0].below == 2);
    CHECK(rates.groups[0].milli[FAULT_RATE_PHYSICAL] == 500);
    CHECK(rates.groups[1].is_default && rates.groups[1].milli[FAULT_RATE_PROCESS] == 2000);
    static const char *const bad[] = {
        "", "x<2 process=1", "q<2: process=1", "x<2: disk=1", "x<2: process=fast",
        "x<2: process=1, process=2", "default: process=1; default: physical=1", "x<2: process",
        "x<2: process=0.0001"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error[0] = '\0';
        CHECK(!fault_rates_parse(bad[i], &rates, error, sizeof error));
        CHECK(strncmp(error, "--fault-rates: ", 15) == 0 && strchr(error, '\n') == NULL);
        printf("'%s' -> %s\n", bad[i], error);
    }
    /* The draw: faults only where a group gives a rate, in time order,
     * the same for a seed; a killed node draws nothing after its death. */
    static const uint32_t sizes[3] = {2, 2, 4};
    static const bool mesh[3] = {false, false, false};
    struct torus_geometry geometry;
    struct torus_geometry_error geometry_error;
    CHECK(torus_geometry_init(&geometry, 3, sizes, mesh, &geometry_error) == TORUS_GEOMETRY_OK);
    CHECK(fault_rates_parse("z<2: process=200, physical=20, network=100", &rates, error,
                            sizeof error));
    CHECK(fault_rates_check_torus(&rates, &geometry, error, sizeof error));
    CHECK(!fault_rates_check_torus(&(struct fault_rates){.count = 1, .groups = {{.dim = 2,
                                                                                  .below = 4}}},
                                   &geometry, error, sizeof error));
    static struct fault drawn[2][512];
    size_t dropped = 0, count = 0;
    for (int k = 0; k < 2; k++) {
        count = fault_rates_draw(&rates, &geometry, 7, UINT64_C(100000000), 1000, drawn[k], 512,
                                 &dropped);
        CHECK(dropped == 0);
    }
    CHECK(count > 20 && memcmp(drawn[0], drawn[1], count * sizeof drawn[0][0]) == 0);
    unsigned kinds[3] = {0};
    uint64_t died[16];
    for (unsigned n = 0; n < 16; n++)
        died[n] = UINT64_MAX;
    for (size_t i = 0; i < count; i++) {
        const struct fault *f = &drawn[0][i];
        CHECK(f->node < 8); /* z < 2: ids 0..7 */
        CHECK(i == 0 || drawn[0][i - 1].time_ns <= f->time_ns);
        CHECK(f->time_ns < died[f->node]);
        kinds[0] += f->kind == FAULT_APPKILL;
        kinds[1] += f->kind == FAULT_KILL;
        kinds[2] += f->kind == FAULT_LINK_OFF;
        if (f->kind == FAULT_KILL)
            died[f->node] = f->time_ns;
        if (f->kind == FAULT_LINK_OFF)
            CHECK(torus_geometry_distance(&geometry, f->node, f->other) == 1 &&
                  f->duration_ns == 1000);
    }
    CHECK(kinds[0] > 0 && kinds[2] > 0 && kinds[1] <= 8);
    printf("drawn: %zu faults, %u appkill, %u kill, %u link off\n", count, kinds[0], kinds[1],
           kinds[2]);
    printf("%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
