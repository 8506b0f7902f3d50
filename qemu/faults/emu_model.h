/*
 * What the launcher expects of a view, and the paper's models of its
 * stabilization time (Varma et al. 2006, section 4 and 7.1).
 *
 * Expected view: for a member set, the digest, root, live count and tree
 * every node must agree on, computed with membership's own pure functions
 * (layout order, implicit tree, digest) for the run's layout and radix.
 *
 * The T_s models of that tree are tools/ts_model.h's.
 */
#ifndef QEMU_FAULTS_EMU_MODEL_H
#define QEMU_FAULTS_EMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "membership/layout.h"
#include "net/torus/geometry.h"
#include "tools/ts_model.h"

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
    struct ts_model model; /* its shape (H, S); its times once ts_model_predict ran */
};

/*
 * The tree of the view holding exactly the ids with members[id] set
 * (members has one entry per node of the geometry).  False when out of
 * memory or the parameters are unusable.
 */
bool emu_model_tree(const struct emu_model_params *params, const bool *members,
                    struct emu_model_tree *out);

/* Each member's depth in the tree of members (depth_by_id[id]; UINT8_MAX
 * for non-members and depths beyond 254).  False when out of memory. */
bool emu_model_depths(const struct emu_model_params *params, const bool *members,
                      uint8_t *depth_by_id);

/* The first and the last member in layout order: the root and a leaf. */
void emu_model_ends(const struct emu_model_params *params, const bool *members, uint32_t *first,
                    uint32_t *last);

/* The digest alone (cheap: no tree). */
uint64_t emu_model_digest(const struct emu_model_params *params, const bool *members);

/*
 * O_cp measured on this (the launcher's) CPU: the mean time to apply one
 * removal to a view of the initial members and recompute one node's tree
 * position, then undo it.  Host-native: QEMU nodes recompute slower, which
 * the results say.
 */
double emu_model_measure_ocp_ns(const struct emu_model_params *params);

#endif /* QEMU_FAULTS_EMU_MODEL_H */
