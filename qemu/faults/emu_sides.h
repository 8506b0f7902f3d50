/*
 * What the agreement check expects of a torus split into sides (issue 18).
 *
 * A side is a connected group of running nodes over live cables: a cable
 * joins the two ends of one link (a size-2 dimension has twin cables
 * between the same two nodes, both must be cut), a mesh has no cable past
 * its edges, and `link ... off` cuts a cable at both ends.  A killed, hung,
 * left or not yet started node carries no traffic, so it splits the torus
 * as a cut would: node 2 of a 2x2x2 torus with 0, 3 and 6 dead is a side
 * of its own.
 *
 * The expectation, from the candidates (the nodes the faults leave in the
 * view: emu_faults.c's expected set) and the last settled view:
 *   - primary policy: the side holding a strict majority of the last
 *     settled view's members (or exactly half of them and its root) is
 *     expected in one view, its candidates only; the other sides' nodes
 *     must not claim membership.  No such side: no view is expected
 *     anywhere (every side drops its view, `partitioned`); once a side
 *     has a strict majority again (re-forming has no tie rule) the nodes
 *     re-form one view (`reformed`, after membership's re-forming
 *     silence: see emu_faults.c);
 *   - every-side policy: each side agrees on a view of exactly its own
 *     candidates.
 * Pure: no clock, no I/O; the caller owns every array.
 */
#ifndef QEMU_FAULTS_EMU_SIDES_H
#define QEMU_FAULTS_EMU_SIDES_H

#include <stdbool.h>
#include <stdint.h>

#include "net/torus/geometry.h"
#include "qemu/faults/emu_agree.h"
#include "qemu/faults/emu_model.h"

#define EMU_SIDE_NONE UINT32_MAX

/*
 * side_of[id] for every node (EMU_SIDE_NONE when not running): sides are
 * numbered from 0 in the order of their lowest id.  cut[id] bit L: the
 * cable at id's link L is cut (emu_inject_world's cut).  Returns the number
 * of sides; UINT32_MAX when out of memory.
 */
uint32_t emu_sides_find(const struct torus_geometry *geometry, const bool *running,
                        const uint16_t *cut, uint32_t *side_of);

enum emu_sides_policy { EMU_SIDES_PRIMARY, EMU_SIDES_EVERY_SIDE };

/* The last settled view: its members and root (the reference). */
struct emu_sides_reference {
    const bool *members; /* [count] */
    uint32_t root;       /* UINT32_MAX: none */
    bool viewless;       /* no view anywhere since: only re-forming gives one,
                          * and it needs a strict majority (no tie rule) */
};

struct emu_sides_expectation {
    enum emu_agree_expect expect;
    uint32_t sides;         /* sides holding a candidate */
    uint32_t primary;       /* EMU_AGREE_ONE_VIEW: the side expected in the view */
    uint32_t kept;          /* ... its members of the reference */
    uint32_t reference;     /* members of the reference */
};

/*
 * Narrows candidates[] into expected[] (the nodes expected in a view) and
 * says which kind of agreement the check must find.
 */
void emu_sides_expect(enum emu_sides_policy policy, uint32_t count, const uint32_t *side_of,
                      uint32_t side_count, const bool *candidates,
                      const struct emu_sides_reference *reference, bool *expected,
                      struct emu_sides_expectation *out);

/*
 * The agreement check under an expectation: one view of expected[] (or
 * none) as emu_agree_evaluate judges it, or, for EMU_AGREE_EACH_SIDE, each
 * side's own view of its expected nodes (a node's answer counts for its
 * side only).  The record's view fields are the largest side's.  False
 * when an expected view cannot be computed (out of memory).
 */
bool emu_sides_evaluate(const struct emu_model_params *params,
                        const struct emu_sides_expectation *expectation,
                        const uint32_t *side_of, uint32_t side_count,
                        const struct emu_view_answer *answers, uint32_t count,
                        const bool *expected, struct emu_model_tree *tree,
                        struct emu_agreement *out);

#endif /* QEMU_FAULTS_EMU_SIDES_H */
