/*
 * The simulator's model application for the ABARIS policy study (issue 15,
 * ABARIS section 4.3): a job of fixed work W = iterations x iteration_ns,
 * a coordinated checkpoint after every K-th iteration but the last (cost
 * checkpoint_ns each), and on each fault of a node that holds a rank
 *   T_recover = T_elapse + T_load + T_transfer
 * with T_elapse measured by the real protocol in the run (from the fault to
 * the root's recovery-decision reaching the view), T_load fixed, and
 * T_transfer by the decision's action: 0 for RESTART (the node's own copy)
 * and PROMOTE (a mirror already holds it), the checkpoint's bytes over one
 * torus link plus a hop for MIGRATE (from the buddy, a neighbour).  The
 * work since the last complete checkpoint is lost (a checkpoint under way
 * too): every rank goes back to it, the global state being coordinated.
 * As in the paper, a fault while the job recovers costs nothing more.
 *
 * Placement: ranks start on nodes 0..ranks-1, the other nodes are spares.
 * MIGRATE and PROMOTE move the rank to the first spare; the node it leaves
 * is gone, but for a network fault (it is still in the view): it becomes
 * the last spare.  RESTART keeps the rank where it is.  IGNORE of a
 * process or physical fault of a rank's node loses the rank: the job
 * cannot finish (as no spare for a migration).  Pure arithmetic: the
 * simulator feeds it the decisions of the run.
 */
#ifndef SIM_SIM_MODEL_H
#define SIM_SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>


/* The most nodes the model places ranks on (tori-sim refuses more). */
#define SIM_MODEL_MAX_NODES 4096u

/* A torus link's bandwidth (Blue Gene/L: 175 MB/s a direction). */
#define SIM_MODEL_LINK_BYTES_PER_S UINT64_C(175000000)

struct sim_model_params {
    uint32_t iterations;      /* W / iteration_ns */
    uint64_t iteration_ns;
    uint32_t checkpoint_every; /* K (0: no checkpoints) */
    uint64_t checkpoint_ns;   /* C */
    uint64_t load_ns;         /* T_load */
    uint64_t checkpoint_bytes;
    uint64_t link_bytes_per_s;
    uint64_t hop_ns;          /* to the buddy, one hop */
    uint32_t ranks;
    uint32_t nodes;           /* ranks + spares, at most SIM_MODEL_MAX_NODES */
};

enum sim_model_place { SIM_MODEL_SPARE = 0, SIM_MODEL_RANK, SIM_MODEL_GONE };

struct sim_model {
    struct sim_model_params params;
    uint64_t resume_ns;      /* computing again from the checkpoint from here */
    uint32_t saved;          /* iterations in the last complete checkpoint */
    bool finished;
    uint64_t finish_ns;
    bool lost;               /* a rank lost (no spare, or ignored): cannot finish */
    uint32_t lost_node;
    uint8_t place[SIM_MODEL_MAX_NODES];   /* enum sim_model_place */
    uint32_t spares[SIM_MODEL_MAX_NODES]; /* free spares, first one next */
    uint32_t spare_count;
    /* what happened */
    uint32_t recoveries;     /* faults of a rank's node that cost a recovery */
    uint32_t restarts, migrations, promotions;
    uint32_t during_recovery; /* faults while recovering (free, as in the paper) */
    uint64_t elapse_ns;      /* sum of T_elapse */
    uint64_t transfer_ns;    /* sum of T_transfer */
    uint64_t lost_work_ns;   /* computing and checkpointing thrown away */
};

/* The fault-free total: W + checkpoints x C. */
uint64_t sim_model_fault_free_ns(const struct sim_model_params *params);

/* T_transfer of an action (enum recovery_action). */
uint64_t sim_model_transfer_ns(const struct sim_model_params *params, uint8_t action);

void sim_model_init(struct sim_model *model, const struct sim_model_params *params);

/*
 * A fault of node at fault_ns whose recovery the protocol decided at
 * decision_ns (model and action: lib/recovery.h).  Calls must come in the
 * order of fault_ns; a fault after the job finished changes nothing.
 */
void sim_model_fault(struct sim_model *model, uint64_t fault_ns, uint64_t decision_ns,
                     uint32_t node, uint8_t fault_model, uint8_t action);

/* Finishes the job after the last fault; its total time (UINT64_MAX: lost). */
uint64_t sim_model_total_ns(struct sim_model *model);

#endif /* SIM_SIM_MODEL_H */
