/*
 * What the launcher expects of a view, and the paper's models of its
 * stabilization time (Varma et al. 2006, section 4 and 7.1).
 *
 * Expected view: for a member set, the digest, root, live count and tree
 * every node must agree on, computed with membership's own pure functions
 * (layout order, implicit tree, digest) for the run's layout and radix.
 *
 * Models, with L the one-hop latency (half the median one-hop round trip
 * measured at start-up) and O_cp the local recalculation time:
 *   base:      T_s = 2 L (H - 1) + O_cp H
 *   distance:  T_s = 2 L S + O_cp H,  S = sum over the H-1 parent-child
 *              levels of the largest torus hop count between a parent and
 *              its child at that level
 * The paper's printed distance formula multiplies S by (H - 1) once more;
 * S already runs over the levels (and its BG/L figures match the form
 * above), so the launcher uses the sum alone.
 */
#ifndef QEMU_EMU_MODEL_H
#define QEMU_EMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "membership/layout.h"
#include "net/torus/geometry.h"

#define EMU_MODEL_MAX_LEVELS 40

struct emu_model_params {
    struct torus_geometry geometry;
    enum membership_layout_kind layout;
    unsigned radix;
    uint32_t initial_members; /* ids 0..initial_members-1 form the first view */
};

struct emu_model_tree {
    uint32_t live;
    uint32_t root;     /* id; UINT32_MAX for an empty set */
    uint64_t digest;   /* as the nodes print it */
    uint32_t levels;   /* H */
    uint32_t hop_sum;  /* S */
    uint32_t level_max_hops[EMU_MODEL_MAX_LEVELS]; /* [d]: parent at depth d-1 to child at d */
};

/*
 * The tree of the view holding exactly the ids with members[id] set
 * (members has one entry per node of the geometry).  False when out of
 * memory or the parameters are unusable.
 */
bool emu_model_tree(const struct emu_model_params *params, const bool *members,
                    struct emu_model_tree *out);

/* The first and the last member in layout order: the root and a leaf. */
void emu_model_ends(const struct emu_model_params *params, const bool *members, uint32_t *first,
                    uint32_t *last);

/* The digest alone (cheap: no tree). */
uint64_t emu_model_digest(const struct emu_model_params *params, const bool *members);

struct emu_model_prediction {
    double base_ns;
    double distance_ns;
};

void emu_model_predict(const struct emu_model_tree *tree, double one_hop_ns, double ocp_ns,
                       struct emu_model_prediction *out);

/*
 * O_cp measured on this (the launcher's) CPU: the mean time to apply one
 * removal to a view of the initial members and recompute one node's tree
 * position, then undo it.  Host-native: QEMU nodes recompute slower, which
 * the results say.
 */
double emu_model_measure_ocp_ns(const struct emu_model_params *params);

#endif /* QEMU_EMU_MODEL_H */
