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
 * Both are bijections on 0..node_count-1, computed in O(dims).  Also the
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
};

struct membership_layout {
    enum membership_layout_kind kind;
    struct torus_geometry geometry;
};

/* Position of id in the layout order (id < node count). */
uint32_t membership_layout_pos(const struct membership_layout *layout, uint32_t id);

/* Id at a layout position (pos < node count). */
uint32_t membership_layout_id(const struct membership_layout *layout, uint32_t pos);

/* Distinct torus neighbours of id (no self, no duplicates); returns count. */
unsigned membership_layout_neighbours(const struct membership_layout *layout, uint32_t id,
                                      uint32_t out[CONFIG_MAX_LINKS]);

#endif /* MEMBERSHIP_LAYOUT_H */
