/*
 * The live set of a membership view as a bitmap over layout positions
 * (0..positions-1), with a Fenwick tree of per-word population counts so
 * that rank (live positions below p) and select (the k-th live position)
 * cost O(log(N/64)) and a single change costs O(log(N/64)).
 *
 * Memory: one bit per position plus one 32-bit count per 64 positions,
 * sized by CONFIG_MAX_NODES.  Pure: no I/O, no globals, no allocation.
 */
#ifndef MEMBERSHIP_VIEW_H
#define MEMBERSHIP_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "config/tori_config.h"

#define MEMBERSHIP_VIEW_WORDS ((CONFIG_MAX_NODES + 63) / 64)

/* "No such position": select past the end, no successor, empty view. */
#define MEMBERSHIP_POS_NONE UINT32_MAX

struct membership_view {
    uint64_t words[MEMBERSHIP_VIEW_WORDS];
    /* Fenwick tree over words[]: fenwick[i-1] covers words (i - lowbit(i), i]. */
    uint32_t fenwick[MEMBERSHIP_VIEW_WORDS];
    uint32_t positions; /* valid positions, <= CONFIG_MAX_NODES */
    uint32_t word_count;
    uint32_t live;      /* number of live positions */
};

/* Empties the view and sets its size (positions <= CONFIG_MAX_NODES). */
void membership_view_reset(struct membership_view *view, uint32_t positions);

/* Recomputes the index and count after words[] was written directly: O(N/64). */
void membership_view_rebuild(struct membership_view *view);

bool membership_view_is_live(const struct membership_view *view, uint32_t pos);

/* Marks pos live / not live; returns false when nothing changed.  O(log N). */
bool membership_view_add(struct membership_view *view, uint32_t pos);
bool membership_view_remove(struct membership_view *view, uint32_t pos);

/* Live positions strictly below pos (pos may equal positions). */
uint32_t membership_view_rank(const struct membership_view *view, uint32_t pos);

/* The k-th live position (k from 0), MEMBERSHIP_POS_NONE when k >= live. */
uint32_t membership_view_select(const struct membership_view *view, uint32_t k);

/* First live position >= pos, or MEMBERSHIP_POS_NONE. */
uint32_t membership_view_next_live(const struct membership_view *view, uint32_t pos);

/*
 * First live position in [from, to) (from < positions), or
 * MEMBERSHIP_POS_NONE: O(1) when one lies in from's word, else O(log N).
 */
uint32_t membership_view_first_live_in(const struct membership_view *view, uint32_t from,
                                       uint32_t to);

/* First position >= pos that is not live, or view->positions. */
uint32_t membership_view_next_dead(const struct membership_view *view, uint32_t pos);

/* Copies live set and index (same capacity); O(N/64). */
void membership_view_copy(struct membership_view *to, const struct membership_view *from);

#endif /* MEMBERSHIP_VIEW_H */
