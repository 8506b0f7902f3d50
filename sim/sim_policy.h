/*
 * One run of the model application (sim/sim_model.h) over the real
 * protocol: faults drawn from per-group rates (tools/fault_rates.h) with a
 * seed, the membership run deciding each fault's model and action under a
 * recovery policy (the root's decisions, escalation to REPEATED included),
 * the launcher restarting on RESTART, and the model charged for each
 * decision about a node that holds a rank.  tori-sim --app model and
 * --policy-study, and the tests.
 */
#ifndef SIM_SIM_POLICY_H
#define SIM_SIM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/recovery.h"
#include "net/torus/geometry.h"
#include "sim/sim_model.h"
#include "tools/fault_rates.h"

struct sim_policy_run {
    const struct torus_geometry *geometry;
    uint32_t spares;                  /* the last nodes; the ranks on the others */
    struct sim_model_params model;    /* ranks, nodes and hop_ns filled by the run */
    const struct fault_rates *rates;
    struct recovery_policy policy;
    uint64_t seed;
    unsigned horizon;                 /* faults drawn over horizon x the fault-free time */
};

struct sim_policy_result {
    uint64_t total_ns;      /* UINT64_MAX: a rank lost, the job cannot finish */
    uint64_t fault_free_ns;
    uint32_t faults;        /* drawn */
    uint32_t decisions;     /* distinct decisions of the run */
    uint32_t repeated;      /* of them escalated to REPEATED */
    bool violation;         /* the protocol's invariants broke */
    char violation_text[256];
    struct sim_model model; /* the model's counts */
};

/* Runs it; false with a one-line reason (bad parameters, no memory). */
bool sim_policy_run(const struct sim_policy_run *run, struct sim_policy_result *result,
                    char *error, size_t capacity);

#endif /* SIM_SIM_POLICY_H */
