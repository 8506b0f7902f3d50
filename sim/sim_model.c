/* The policy study's model application: its arithmetic (sim_model.h). */
#include "sim/sim_model.h"

#include <string.h>

#include "lib/recovery.h"

/* Checkpoints after iterations K, 2K, ... below the last one. */
static uint32_t checkpoints_between(const struct sim_model_params *p, uint32_t from, uint32_t to)
{
    if (p->checkpoint_every == 0 || p->iterations == 0)
        return 0;
    uint32_t last = to < p->iterations ? to : p->iterations - 1u;
    uint32_t below = from / p->checkpoint_every;
    uint32_t upto = last / p->checkpoint_every;
    return upto > below ? upto - below : 0;
}

uint64_t sim_model_fault_free_ns(const struct sim_model_params *params)
{
    return (uint64_t)params->iterations * params->iteration_ns +
           (uint64_t)checkpoints_between(params, 0, params->iterations) * params->checkpoint_ns;
}

uint64_t sim_model_transfer_ns(const struct sim_model_params *params, uint8_t action)
{
    if (action != RECOVERY_MIGRATE || params->link_bytes_per_s == 0)
        return 0;
    return params->checkpoint_bytes * UINT64_C(1000000000) / params->link_bytes_per_s +
           params->hop_ns;
}

void sim_model_init(struct sim_model *model, const struct sim_model_params *params)
{
    memset(model, 0, sizeof *model);
    model->params = *params;
    for (uint32_t node = 0; node < params->nodes && node < SIM_MODEL_MAX_NODES; node++) {
        if (node < params->ranks) {
            model->place[node] = SIM_MODEL_RANK;
        } else {
            model->place[node] = SIM_MODEL_SPARE;
            model->spares[model->spare_count++] = node;
        }
    }
}

/*
 * Computes from the last checkpoint at resume_ns up to until_ns: the
 * checkpoints completed on the way (saved), and whether the work is done
 * (finish_ns).  Returns the time the last checkpoint completed.
 */
static uint64_t compute_until(struct sim_model *model, uint64_t until_ns)
{
    const struct sim_model_params *p = &model->params;
    uint64_t t = model->resume_ns;
    uint64_t saved_at = t;
    for (uint32_t i = model->saved; i < p->iterations;) {
        /* the next checkpoint (or the end) */
        uint32_t next = p->iterations;
        if (p->checkpoint_every != 0) {
            uint32_t k = (i / p->checkpoint_every + 1u) * p->checkpoint_every;
            next = k < p->iterations ? k : p->iterations;
        }
        uint64_t reach = t + (uint64_t)(next - i) * p->iteration_ns;
        if (next < p->iterations)
            reach += p->checkpoint_ns;
        if (reach > until_ns)
            return saved_at;
        t = reach;
        i = next;
        if (next == p->iterations) {
            model->finished = true;
            model->finish_ns = t;
            return t;
        }
        model->saved = next;
        saved_at = t;
    }
    model->finished = true;
    model->finish_ns = t;
    return t;
}

void sim_model_fault(struct sim_model *model, uint64_t fault_ns, uint64_t decision_ns,
                     uint32_t node, uint8_t fault_model, uint8_t action)
{
    const struct sim_model_params *p = &model->params;
    if (model->finished || model->lost || node >= p->nodes || node >= SIM_MODEL_MAX_NODES ||
        model->place[node] != SIM_MODEL_RANK)
        return;
    if (fault_model == FAULT_MODEL_NETWORK && action == RECOVERY_IGNORE)
        return; /* no view change, the rank computes on */
    if (fault_ns < model->resume_ns) {
        model->during_recovery++;
        return;
    }
    uint64_t saved_at = compute_until(model, fault_ns);
    if (model->finished)
        return;
    if (action == RECOVERY_IGNORE) {
        model->lost = true;
        model->lost_node = node;
        return;
    }
    if (action == RECOVERY_MIGRATE || action == RECOVERY_PROMOTE) {
        if (model->spare_count == 0) {
            model->lost = true;
            model->lost_node = node;
            return;
        }
        uint32_t spare = model->spares[0];
        memmove(&model->spares[0], &model->spares[1],
                (model->spare_count - 1u) * sizeof model->spares[0]);
        model->spare_count--;
        model->place[spare] = SIM_MODEL_RANK;
        model->place[node] = SIM_MODEL_GONE;
        if (fault_model == FAULT_MODEL_NETWORK) {
            model->place[node] = SIM_MODEL_SPARE;
            model->spares[model->spare_count++] = node;
        }
        if (action == RECOVERY_MIGRATE)
            model->migrations++;
        else
            model->promotions++;
    } else {
        model->restarts++;
    }
    uint64_t elapse = decision_ns > fault_ns ? decision_ns - fault_ns : 0;
    uint64_t transfer = sim_model_transfer_ns(p, action);
    model->recoveries++;
    model->elapse_ns += elapse;
    model->transfer_ns += transfer;
    model->lost_work_ns += fault_ns - saved_at;
    model->resume_ns = fault_ns + elapse + p->load_ns + transfer;
}

uint64_t sim_model_total_ns(struct sim_model *model)
{
    if (model->lost)
        return UINT64_MAX;
    if (!model->finished)
        compute_until(model, UINT64_MAX);
    return model->finish_ns;
}
