/*
 * The reference view for the primary-component rule: the last view known
 * to have completed.  A root may only install a view that keeps a strict
 * majority of it.  Kept as a copy-on-write snapshot of the live bitmap:
 * a word is saved the first time it changes after the snapshot, so taking
 * a snapshot is O(1) (a generation bump) and each change O(1); the count
 * of reference members no longer live is kept as changes happen.
 *
 * Memory: one saved word and one 32-bit stamp per 64 positions.  Pure.
 */
#ifndef MEMBERSHIP_REFERENCE_H
#define MEMBERSHIP_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "membership/view.h"

struct membership_reference {
    uint64_t saved[MEMBERSHIP_VIEW_WORDS];
    uint32_t stamp[MEMBERSHIP_VIEW_WORDS]; /* == generation: saved[] holds the word */
    uint32_t generation;
    uint32_t count;    /* members of the reference view */
    uint32_t lost;     /* of them, no longer live */
    uint32_t root_pos; /* its root (ties go to the side holding it) */
};

/* Snapshot: the reference becomes the current view. */
void membership_reference_take(struct membership_reference *ref, const struct membership_view *view,
                               uint32_t root_pos);

/*
 * After a whole view was fetched: the sender's counts, and the fetched view
 * standing in for the reference's members (only ever errs on the safe side:
 * a later removal may count as lost, a later return may not count back).
 */
void membership_reference_adopt(struct membership_reference *ref, const struct membership_view *view,
                                uint32_t count, uint32_t lost, uint32_t root_pos);

bool membership_reference_contains(const struct membership_reference *ref,
                                   const struct membership_view *view, uint32_t pos);

/* Change the view through these so the reference stays intact. */
bool membership_reference_remove(struct membership_reference *ref, struct membership_view *view,
                                 uint32_t pos);
bool membership_reference_add(struct membership_reference *ref, struct membership_view *view,
                              uint32_t pos);

/* Reference members still live. */
uint32_t membership_reference_kept(const struct membership_reference *ref);

#endif /* MEMBERSHIP_REFERENCE_H */
