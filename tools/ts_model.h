/*
 * The models of the stabilization time T_s (Varma et al. 2006, sections 4
 * and 7.1), one implementation for the simulator, the launcher and the
 * benchmarks.  With L the one-hop latency and O_cp the local recalculation
 * time, for the implicit tree of a view of H levels:
 *   base:          T_s = 2 L (H - 1) + O_cp H
 *   distance:      T_s = 2 L S + O_cp H,  S = sum over the H-1 parent-child
 *                  levels of the largest torus hop count between a parent
 *                  and its child at that level
 *   critical path: T_s = max over members v of 2 L hops(v) + 2 O_cp depth(v),
 *                  hops(v) the torus hops of v's path up to the root
 *   contention:    T_s = sum over levels d of 2 L(k_d) hops_d + O_cp H, the
 *                  distance model with the one-hop latency measured while a
 *                  parent exchanges with k nodes at once (the paper's section
 *                  7, Figures 6-8), k_d the largest fan-out of a parent at
 *                  depth d-1; L(k) of the smallest measured k' >= k_d
 * The paper's printed distance formula multiplies S by (H - 1) once more;
 * S already runs over the levels (and its BG/L figures match the form
 * above), so the sum alone is used.
 */
#ifndef TOOLS_TS_MODEL_H
#define TOOLS_TS_MODEL_H

#include <stdint.h>

#include "membership/layout.h"
#include "membership/view.h"

#define TS_MODEL_MAX_LEVELS 64
#define TS_MODEL_FANS 4 /* fan-outs measured for the contention model */

/* L(k): one-hop latency while a parent exchanges with fanout[i] nodes at once. */
struct ts_fan_latency {
    unsigned count;                  /* measured entries, fan-outs ascending */
    unsigned fanout[TS_MODEL_FANS];
    double hop_ns[TS_MODEL_FANS];
};

struct ts_model {
    uint32_t levels;    /* H */
    uint32_t hop_sum;   /* S */
    uint32_t level_max_hops[TS_MODEL_MAX_LEVELS]; /* [d]: parent at depth d-1 to child at d */
    uint32_t level_max_fanout[TS_MODEL_MAX_LEVELS]; /* [d]: children of a parent at d-1 */
    uint32_t path_hops; /* hops of the critical path (for the weights given) */
    double base_ns;
    double distance_ns;
    double path_ns;
    double contention_ns; /* 0 until ts_model_predict_contention */
};

/*
 * The tree of view (positions of layout, radix) and the three models with
 * one-hop latency hop_ns and recalculation time cp_ns (either may be 0 when
 * only the tree's shape is wanted; ts_model_predict fills the times later).
 */
void ts_model_compute(const struct membership_view *view, const struct membership_layout *layout,
                      unsigned radix, double hop_ns, double cp_ns, struct ts_model *model);

/* The base and distance times of an already computed tree for L and O_cp. */
void ts_model_predict(struct ts_model *model, double hop_ns, double cp_ns);

/*
 * The contention model of an already computed tree: L(k) per level from
 * fans (fan-outs beyond the largest measured use the largest).  Leaves
 * contention_ns 0 when fans holds nothing.
 */
void ts_model_predict_contention(struct ts_model *model, const struct ts_fan_latency *fans,
                                 double cp_ns);

#endif /* TOOLS_TS_MODEL_H */
