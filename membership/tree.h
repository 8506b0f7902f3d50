/*
 * The implicit membership tree, derived by every node from the view alone.
 * Members are numbered by rank (0..live-1) in layout order; the tree is a
 * function of (live set, radix, layout kind) only, so every node holding the
 * same view computes the same tree, with no messages.
 *
 * - RADIX layout: an a-ary heap over ranks: parent(r) = (r-1)/a, children
 *   a*r+1 .. a*r+a.  Root = rank 0 = lowest live id (the paper's tree).
 * - TORUS layout: "runs": the subtree of a node is a contiguous run of ranks
 *   starting with the node itself; the rest of the run is cut into a chunks
 *   whose sizes differ by at most one, and each chunk is a child's subtree.
 *   Consecutive ranks are close in the torus (snake order), so parents and
 *   children are close too.
 *
 * - BOX layout: the subtree of a node is again a contiguous range of
 *   positions starting with itself, cut where the layout's bisection cuts
 *   (layout.h): the radix-1 shallowest cuts inside the range, so that every
 *   child but the first heads a box (or a box's prefix) of which it is the
 *   apex, on a shortest path from the origin to all of its box.  The first
 *   child, the next live member after the parent, heads the rest of the
 *   parent's own box.  A cut that would leave a child more members than
 *   its levels can hold falls back to the runs cut for that subtree.
 *
 * RADIX and TORUS trees have exactly the minimum height: levels(L) = the
 * smallest h with 1 + a + ... + a^(h-1) >= L (for runs: a run of k <= C(h)
 * members leaves k-1 <= a*C(h-1), so each chunk fits in height h-1).  The
 * BOX tree is given levels(L) + 1 and each subtree one level fewer than its
 * parent, checked at every cut, so it has at most one level more.  Hence
 * depth <= ceil(log_a L) + 1 whatever changes came before.
 *
 * Locating a node costs O(log_a L) steps plus one select per child:
 * O(a log N) with the view's index; BOX adds the cuts of the bisection on
 * the way down, O(dims log N) in all, and a count (rank) for a chunk only
 * when its positions alone exceed its capacity: O(a log_a N log N) at worst.
 * Pure.
 */
#ifndef MEMBERSHIP_TREE_H
#define MEMBERSHIP_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "membership/layout.h"
#include "membership/view.h"

struct membership_tree_links {
    uint32_t rank;           /* index of the node among live members */
    uint32_t depth;          /* 0 at the root */
    uint32_t parent;         /* layout position, MEMBERSHIP_POS_NONE at the root */
    uint32_t child_count;
    uint32_t children[CONFIG_TREE_RADIX_MAX]; /* layout positions */
    uint32_t subtree_levels; /* levels of the subtree rooted here (1: leaf) */
    uint32_t subtree_size;   /* members of the subtree rooted here, itself included */
};

/* True for 2, 4, 8, 16 (and any power of two up to CONFIG_TREE_RADIX_MAX). */
bool membership_tree_radix_valid(unsigned radix);

/* Levels (height counted in nodes) of a tree of live members; 0 when empty. */
uint32_t membership_tree_levels(uint32_t live, unsigned radix);

/* Levels the tree of a layout may use: the minimum, or one more (BOX). */
uint32_t membership_tree_max_levels(uint32_t live, enum membership_layout_kind kind,
                                    unsigned radix);

/*
 * Parent, children, depth of the live member at layout position pos.
 * Returns false when pos is not live.
 */
bool membership_tree_locate(const struct membership_view *view,
                            const struct membership_layout *layout, unsigned radix, uint32_t pos,
                            struct membership_tree_links *out);

/*
 * The TORUS ("runs") tree over ranks 0..count-1 alone (0 < count, rank <
 * count, radix valid): the shape membership_tree_locate gives a view of
 * count live members, with ranks where it gives positions (parent
 * MEMBERSHIP_POS_NONE at rank 0).  Child j's subtree is the run of ranks
 * from children[j] up to children[j+1] (the last one up to rank +
 * subtree_size).  For trees over other rank spaces (communicators).
 */
void membership_tree_runs(uint32_t count, unsigned radix, uint32_t rank,
                          struct membership_tree_links *out);

/* Root of the tree (first live position), MEMBERSHIP_POS_NONE when empty. */
uint32_t membership_tree_root(const struct membership_view *view);

#endif /* MEMBERSHIP_TREE_H */
