/*
 * The simulator's invariants of the failure semantics (issue 14), checked
 * as the model applications go (sim_app.h): every rank reports the rank map
 * of each communicator it computes on and every collective's outcome, and
 * the checker keeps, per communicator epoch, the first map and, per
 * collective, the outcomes seen.  Violations:
 *   - a map holding a node twice, or not holding the reporting node at its
 *     rank (no duplicate rank);
 *   - two maps for one communicator epoch (one rank map per epoch);
 *   - two results of one collective (allreduce, bcast, agree: every OK the
 *     same bytes; agree: the same flag), or two ranks running different
 *     collectives at one place;
 *   - at the end, a strict collective (allreduce, gather, agree) that
 *     returned OK at one survivor and an error at another (never mixed;
 *     survivors: ranks whose application finished).
 * Pure bookkeeping: no simulator state, so tests feed it directly.
 */
#ifndef SIM_SIM_FT_H
#define SIM_SIM_FT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim_app.h"

struct sim_ft;

struct sim_ft_counts {
    uint64_t maps;        /* maps checked (one per rank and communicator) */
    uint64_t epochs;      /* distinct communicator epochs */
    uint64_t outcomes;    /* collective outcomes checked */
    uint64_t collectives; /* distinct collectives */
    uint64_t agrees;      /* agree outcomes checked */
};

/* NULL when out of memory. */
struct sim_ft *sim_ft_create(uint32_t node_count);
void sim_ft_destroy(struct sim_ft *ft);

/*
 * Node `node`, rank `rank` of a communicator of epoch `epoch` (0: WORLD)
 * whose rank r is nodes[r] (UINT32_MAX: a gap).  False with a one-line
 * reason in why.
 */
bool sim_ft_map(struct sim_ft *ft, uint64_t epoch, const uint32_t *nodes, uint32_t size,
                uint32_t node, uint32_t rank, char *why, size_t capacity);

/* One collective's outcome at node.  False with a reason in why. */
bool sim_ft_outcome(struct sim_ft *ft, uint32_t node, const struct sim_app_outcome *outcome,
                    char *why, size_t capacity);

/* At the end: survived[node] for the ranks that finished.  False with a
 * reason in why. */
bool sim_ft_final(const struct sim_ft *ft, const bool *survived, char *why, size_t capacity);

const struct sim_ft_counts *sim_ft_get_counts(const struct sim_ft *ft);

#endif /* SIM_SIM_FT_H */
