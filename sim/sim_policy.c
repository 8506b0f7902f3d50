/* One model run over the real protocol (sim_policy.h). */
#include "sim/sim_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

struct decision_record {
    uint64_t fault_ns;
    uint64_t decided_ns; /* the last node to emit it: the whole view knows */
    uint32_t node;
    uint8_t model;
    uint8_t action;
};

struct decision_log {
    const struct fault *faults;
    size_t fault_count;
    struct decision_record *records;
    size_t count;
    size_t capacity;
    bool overflow;
};

/* The latest drawn fault of node (an end of a cut link too) at or before t. */
static bool fault_before(const struct decision_log *log, uint32_t node, uint64_t t,
                         uint64_t *fault_ns)
{
    for (size_t i = log->fault_count; i-- > 0;) {
        const struct fault *f = &log->faults[i];
        if (f->time_ns <= t &&
            (f->node == node || (f->kind == FAULT_LINK_OFF && f->other == node))) {
            *fault_ns = f->time_ns;
            return true;
        }
    }
    return false;
}

static void on_decision(void *context, uint64_t t_ns, uint32_t at,
                        const struct membership_event_decision *d)
{
    (void)at;
    struct decision_log *log = context;
    uint64_t fault_ns = 0;
    if (!fault_before(log, d->node, t_ns, &fault_ns))
        return; /* not one of the drawn faults (a relaunch's kill) */
    for (size_t i = 0; i < log->count; i++) {
        struct decision_record *r = &log->records[i];
        if (r->node == d->node && r->fault_ns == fault_ns && r->model == d->model) {
            r->decided_ns = t_ns > r->decided_ns ? t_ns : r->decided_ns;
            return;
        }
    }
    if (log->count == log->capacity) {
        log->overflow = true;
        return;
    }
    log->records[log->count++] = (struct decision_record){
        .fault_ns = fault_ns, .decided_ns = t_ns, .node = d->node, .model = d->model,
        .action = d->action};
}

static int by_fault_time(const void *a, const void *b)
{
    const struct decision_record *x = a, *y = b;
    if (x->fault_ns != y->fault_ns)
        return x->fault_ns < y->fault_ns ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node ? 1 : 0;
}

bool sim_policy_run(const struct sim_policy_run *run, struct sim_policy_result *result,
                    char *error, size_t capacity)
{
    memset(result, 0, sizeof *result);
    uint32_t nodes = run->geometry->node_count;
    if (nodes > SIM_MODEL_MAX_NODES) {
        snprintf(error, capacity, "--app model on %u nodes (expected at most %u)",
                 (unsigned)nodes, SIM_MODEL_MAX_NODES);
        return false;
    }
    if (run->spares >= nodes) {
        snprintf(error, capacity, "%u spares on %u nodes leave no rank", (unsigned)run->spares,
                 (unsigned)nodes);
        return false;
    }
    struct sim_params p;
    sim_params_defaults(&p, run->geometry);
    p.seed = run->seed;
    p.verbosity = 0;
    p.heartbeat_ns = 4u * sim_unit_ns(&p);
    p.recovery = run->policy;
    p.launcher_restarts = true;
    p.restart_ns = sim_unit_ns(&p); /* a new process starts */
    struct sim_model_params mp = run->model;
    mp.nodes = nodes;
    mp.ranks = nodes - run->spares;
    mp.hop_ns = p.hop_ns;
    result->fault_free_ns = sim_model_fault_free_ns(&mp);

    size_t fault_capacity = 4096;
    struct fault *faults = calloc(fault_capacity, sizeof *faults);
    struct decision_log log = {.capacity = 4096};
    log.records = calloc(log.capacity, sizeof *log.records);
    if (faults == NULL || log.records == NULL) {
        free(faults);
        free(log.records);
        snprintf(error, capacity, "out of memory");
        return false;
    }
    size_t dropped = 0;
    uint64_t horizon = (uint64_t)(run->horizon != 0 ? run->horizon : 3u) * result->fault_free_ns;
    size_t count = fault_rates_draw(run->rates, run->geometry, run->seed, horizon,
                                    20u * sim_unit_ns(&p), faults, fault_capacity, &dropped);
    if (dropped != 0) {
        free(faults);
        free(log.records);
        snprintf(error, capacity, "the rates draw more than %zu faults (expected lower rates "
                                  "or less work)", fault_capacity);
        return false;
    }
    log.faults = faults;
    log.fault_count = count;
    p.on_decision = on_decision;
    p.decision_context = &log;
    struct sim *sim = sim_create(&p, error, capacity);
    if (sim == NULL) {
        free(faults);
        free(log.records);
        return false;
    }
    sim_add_injections(sim, faults, count);
    bool ok = sim_run(sim, NULL);
    result->violation = !ok;
    if (!ok) {
        snprintf(result->violation_text, sizeof result->violation_text, "%s",
                 sim_get_stats(sim)->violation_text);
    }
    sim_destroy(sim);

    qsort(log.records, log.count, sizeof *log.records, by_fault_time);
    sim_model_init(&result->model, &mp);
    for (size_t i = 0; i < log.count; i++) {
        const struct decision_record *r = &log.records[i];
        result->repeated += r->model == FAULT_MODEL_REPEATED ? 1u : 0u;
        sim_model_fault(&result->model, r->fault_ns, r->decided_ns, r->node, r->model,
                        r->action);
    }
    result->faults = (uint32_t)count;
    result->decisions = (uint32_t)log.count;
    result->total_ns = sim_model_total_ns(&result->model);
    bool overflow = log.overflow;
    free(faults);
    free(log.records);
    if (overflow) {
        snprintf(error, capacity, "more than 4096 recovery decisions (expected lower rates)");
        return false;
    }
    return true;
}
