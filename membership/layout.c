/*
 * Id <-> layout position (see layout.h).
 *
 * Snake order: going from the slowest dimension to the fastest, a prefix
 * accumulates the positions already fixed; a dimension runs backwards when
 * that prefix is odd.  Every step of the order then moves exactly one
 * coordinate by one (a reflected mixed-radix Gray code).
 *
 * Box order: a descent through the bisection (layout.h), one cut per
 * level, O(dims) each.
 */
#include "membership/layout.h"

#include <string.h>

static const char *const layout_names[MEMBERSHIP_LAYOUT_KINDS] = {"radix", "torus", "box"};

const char *membership_layout_name(enum membership_layout_kind kind)
{
    return (unsigned)kind < MEMBERSHIP_LAYOUT_KINDS ? layout_names[kind] : "?";
}

bool membership_layout_from_name(const char *text, enum membership_layout_kind *kind)
{
    for (unsigned k = 0; text != NULL && k < MEMBERSHIP_LAYOUT_KINDS; k++) {
        if (strcmp(text, layout_names[k]) == 0) {
            *kind = (enum membership_layout_kind)k;
            return true;
        }
    }
    return false;
}

/* Folded coordinate of c on dimension d (see layout.h); a mesh keeps c. */
static uint32_t fold(const struct torus_geometry *g, unsigned d, uint32_t c)
{
    uint32_t n = g->size[d];
    uint32_t ahead = (n + 1u) / 2u;
    if (!g->wraps[d] || c < ahead) {
        return c;
    }
    return ahead + (n - 1u - c);
}

static uint32_t unfold(const struct torus_geometry *g, unsigned d, uint32_t f)
{
    uint32_t n = g->size[d];
    uint32_t ahead = (n + 1u) / 2u;
    if (!g->wraps[d] || f < ahead) {
        return f;
    }
    return n - 1u - (f - ahead);
}

void membership_layout_box_whole(const struct membership_layout *layout,
                                 struct membership_layout_box *box)
{
    const struct torus_geometry *g = &layout->geometry;
    memset(box, 0, sizeof *box);
    for (unsigned d = 0; d < g->dims; d++) {
        box->extent[d] = g->size[d];
    }
    box->size = g->node_count;
}

/* The dimension a box is cut across: its longest, the lowest on ties. */
static unsigned box_cut_dim(const struct torus_geometry *g, const struct membership_layout_box *box)
{
    unsigned best = 0;
    for (unsigned d = 1; d < g->dims; d++) {
        if (box->extent[d] > box->extent[best]) {
            best = d;
        }
    }
    return best;
}

uint32_t membership_layout_box_cut(const struct membership_layout *layout,
                                   const struct membership_layout_box *box)
{
    unsigned d = box_cut_dim(&layout->geometry, box);
    uint32_t extent = box->extent[d];
    return box->start + box->size / extent * ((extent + 1u) / 2u);
}

void membership_layout_box_split(const struct membership_layout *layout,
                                 const struct membership_layout_box *box,
                                 struct membership_layout_box *first,
                                 struct membership_layout_box *second)
{
    unsigned d = box_cut_dim(&layout->geometry, box);
    uint32_t extent = box->extent[d];
    uint32_t head = (extent + 1u) / 2u;
    *first = *box;
    *second = *box;
    first->extent[d] = head;
    first->size = box->size / extent * head;
    first->depth = box->depth + 1u;
    second->lo[d] = box->lo[d] + head;
    second->extent[d] = extent - head;
    second->start = box->start + first->size;
    second->size = box->size - first->size;
    second->depth = box->depth + 1u;
}

static uint32_t box_pos(const struct membership_layout *layout, uint32_t id)
{
    const struct torus_geometry *g = &layout->geometry;
    uint32_t folded[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < g->dims; d++) {
        folded[d] = fold(g, d, (id / g->stride[d]) % g->size[d]);
    }
    struct membership_layout_box box;
    membership_layout_box_whole(layout, &box);
    while (box.size > 1u) {
        struct membership_layout_box first;
        struct membership_layout_box second;
        membership_layout_box_split(layout, &box, &first, &second);
        unsigned d = box_cut_dim(g, &box);
        box = folded[d] < second.lo[d] ? first : second;
    }
    return box.start;
}

static uint32_t box_id(const struct membership_layout *layout, uint32_t pos)
{
    const struct torus_geometry *g = &layout->geometry;
    struct membership_layout_box box;
    membership_layout_box_whole(layout, &box);
    while (box.size > 1u) {
        struct membership_layout_box first;
        struct membership_layout_box second;
        membership_layout_box_split(layout, &box, &first, &second);
        box = pos < second.start ? first : second;
    }
    uint32_t id = 0;
    for (unsigned d = 0; d < g->dims; d++) {
        id += unfold(g, d, box.lo[d]) * g->stride[d];
    }
    return id;
}

uint32_t membership_layout_pos(const struct membership_layout *layout, uint32_t id)
{
    if (layout->kind == MEMBERSHIP_LAYOUT_BOX) {
        return box_pos(layout, id);
    }
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
    if (layout->kind == MEMBERSHIP_LAYOUT_BOX) {
        return box_id(layout, pos);
    }
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
