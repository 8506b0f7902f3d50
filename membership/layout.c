/*
 * Id <-> layout position (see layout.h).
 *
 * Snake order: going from the slowest dimension to the fastest, a prefix
 * accumulates the positions already fixed; a dimension runs backwards when
 * that prefix is odd.  Every step of the order then moves exactly one
 * coordinate by one (a reflected mixed-radix Gray code).
 */
#include "membership/layout.h"

uint32_t membership_layout_pos(const struct membership_layout *layout, uint32_t id)
{
    if (layout->kind != MEMBERSHIP_LAYOUT_TORUS) {
        return id;
    }
    const struct torus_geometry *g = &layout->geometry;
    uint32_t prefix = 0;
    for (unsigned i = g->dims; i-- > 0;) {
        uint32_t size = g->size[i];
        uint32_t c = (id / g->stride[i]) % size;
        uint32_t digit = (prefix & 1u) ? size - 1u - c : c;
        prefix = prefix * size + digit;
    }
    return prefix;
}

uint32_t membership_layout_id(const struct membership_layout *layout, uint32_t pos)
{
    if (layout->kind != MEMBERSHIP_LAYOUT_TORUS) {
        return pos;
    }
    const struct torus_geometry *g = &layout->geometry;
    uint32_t id = 0;
    uint32_t rest = pos; /* pos / (size[0] * ... * size[i-1]) */
    for (unsigned i = 0; i < g->dims; i++) {
        uint32_t size = g->size[i];
        uint32_t digit = rest % size;
        rest /= size;
        uint32_t c = (rest & 1u) ? size - 1u - digit : digit;
        id += c * g->stride[i];
    }
    return id;
}

unsigned membership_layout_neighbours(const struct membership_layout *layout, uint32_t id,
                                      uint32_t out[CONFIG_MAX_LINKS])
{
    const struct torus_geometry *g = &layout->geometry;
    unsigned count = 0;
    for (unsigned link = 0; link < torus_geometry_link_count(g) && link < CONFIG_MAX_LINKS;
         link++) {
        uint32_t n = torus_geometry_neighbour(g, id, link);
        if (n == TORUS_RANK_NONE || n == id) {
            continue;
        }
        bool seen = false;
        for (unsigned k = 0; k < count; k++) {
            seen = seen || out[k] == n;
        }
        if (!seen) {
            out[count++] = n;
        }
    }
    return count;
}
