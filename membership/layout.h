/*
 * Layout order of the members: the order in which the implicit tree lays
 * them out, and in which the next root is chosen when a root fails.
 *
 * - RADIX: id order (position = id), the paper's layout.
 * - TORUS: boustrophedon ("snake") order over the torus coordinates,
 *   dimension 0 fastest and each dimension reversing its direction whenever
 *   the slower ones advance, so that consecutive positions are always one
 *   hop apart and any run of positions is a compact slab of the torus.
 *
 * - BOX: the order of a recursive bisection of the torus box around the
 *   origin (id 0): a box is cut in two across its longest dimension (the
 *   lowest such dimension on ties, the first part taking the larger half),
 *   the first part numbered before the second, down to single nodes.
 *   Coordinates are "folded" first: on a ring of n, 0 .. ceil(n/2)-1
 *   stay, and the rest are numbered backwards from n-1, so that the first
 *   cut of a ring separates the nodes ahead of the origin from those behind
 *   it (wrap-around) and every box of the recursion is a contiguous range
 *   of positions whose first position is the node of the box nearest the
 *   origin, lying on a shortest torus path from the origin to each of its
 *   members (the box's "apex").
 *
 * RADIX and TORUS are computed in O(dims), BOX in O(dims log N).  Also the
 * torus neighbours of a node, for heartbeats.  Pure.
 */
#ifndef MEMBERSHIP_LAYOUT_H
#define MEMBERSHIP_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/geometry.h"

enum membership_layout_kind {
    MEMBERSHIP_LAYOUT_RADIX = 0, /* heap over id order */
    MEMBERSHIP_LAYOUT_TORUS = 1, /* contiguous runs of the snake order */
    MEMBERSHIP_LAYOUT_BOX = 2,   /* recursive bisection of the torus box */
};
#define MEMBERSHIP_LAYOUT_KINDS 3

struct membership_layout {
    enum membership_layout_kind kind;
    struct torus_geometry geometry;
};

/* "radix", "torus", "box"; "?" for anything else. */
const char *membership_layout_name(enum membership_layout_kind kind);

/* The kind named text; false (kind untouched) when text names none. */
bool membership_layout_from_name(const char *text, enum membership_layout_kind *kind);

/* Position of id in the layout order (id < node count). */
uint32_t membership_layout_pos(const struct membership_layout *layout, uint32_t id);

/* Id at a layout position (pos < node count). */
uint32_t membership_layout_id(const struct membership_layout *layout, uint32_t pos);

/* Distinct torus neighbours of id (no self, no duplicates); returns count. */
unsigned membership_layout_neighbours(const struct membership_layout *layout, uint32_t id,
                                      uint32_t out[CONFIG_MAX_LINKS]);

/*
 * A box of the BOX layout's bisection: folded coordinates lo[d] ..
 * lo[d] + extent[d] - 1 in each dimension, positions start .. start + size
 * - 1, depth = cuts from the whole torus.
 */
struct membership_layout_box {
    uint32_t lo[CONFIG_MAX_DIMS];
    uint32_t extent[CONFIG_MAX_DIMS];
    uint32_t start;
    uint32_t size;
    uint32_t depth;
};

/* The whole torus as a box. */
void membership_layout_box_whole(const struct membership_layout *layout,
                                 struct membership_layout_box *box);

/* Position where box (size > 1) is cut: its second part's start.  O(dims). */
uint32_t membership_layout_box_cut(const struct membership_layout *layout,
                                   const struct membership_layout_box *box);

/*
 * Cuts box (size > 1) into its two parts; the second starts at position
 * second->start.  O(dims).
 */
void membership_layout_box_split(const struct membership_layout *layout,
                                 const struct membership_layout_box *box,
                                 struct membership_layout_box *first,
                                 struct membership_layout_box *second);

#endif /* MEMBERSHIP_LAYOUT_H */
