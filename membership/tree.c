/*
 * Implicit tree over the live members (see tree.h).
 */
#include "membership/tree.h"

bool membership_tree_radix_valid(unsigned radix)
{
    return radix >= 2 && radix <= CONFIG_TREE_RADIX_MAX && (radix & (radix - 1u)) == 0;
}

uint32_t membership_tree_levels(uint32_t live, unsigned radix)
{
    uint64_t capacity = 0;
    uint64_t width = 1;
    uint32_t levels = 0;
    while (capacity < live) {
        capacity += width;
        width *= radix;
        levels++;
    }
    return levels;
}

uint32_t membership_tree_root(const struct membership_view *view)
{
    return membership_view_select(view, 0);
}

/* Start and size of chunk j when a run of size k starting at lo is cut. */
static void run_chunk(uint32_t lo, uint32_t k, unsigned radix, uint32_t j, uint32_t *start,
                      uint32_t *size)
{
    uint32_t q = (k - 1u) / radix;
    uint32_t rem = (k - 1u) % radix;
    *start = lo + 1u + j * q + (j < rem ? j : rem);
    *size = q + (j < rem ? 1u : 0u);
}

static void locate_heap(const struct membership_view *view, unsigned radix, uint32_t rank,
                        struct membership_tree_links *out)
{
    uint32_t live = view->live;
    out->parent = rank == 0 ? MEMBERSHIP_POS_NONE
                            : membership_view_select(view, (rank - 1u) / radix);
    uint32_t depth = 0;
    for (uint32_t r = rank; r > 0; r = (r - 1u) / radix) {
        depth++;
    }
    out->depth = depth;
    out->child_count = 0;
    uint64_t first = (uint64_t)rank * radix + 1u;
    for (uint32_t j = 0; j < radix && first + j < live; j++) {
        out->children[out->child_count++] = membership_view_select(view, (uint32_t)(first + j));
    }
    /* The leftmost path is the deepest in a heap; each level is one rank block. */
    uint32_t levels = 1;
    uint64_t size = 1;
    uint64_t width = radix;
    for (uint64_t r = first; r < live; r = r * radix + 1u) {
        levels++;
        size += (r + width <= live) ? width : live - r;
        width *= radix;
    }
    out->subtree_levels = levels;
    out->subtree_size = (uint32_t)size;
}

void membership_tree_runs(uint32_t count, unsigned radix, uint32_t rank,
                          struct membership_tree_links *out)
{
    uint32_t lo = 0;
    uint32_t k = count;
    uint32_t depth = 0;
    uint32_t parent_rank = MEMBERSHIP_POS_NONE;
    while (lo != rank) {
        uint32_t q = (k - 1u) / radix;
        uint32_t rem = (k - 1u) % radix;
        uint32_t offset = rank - lo - 1u;
        uint32_t j;
        if (offset < rem * (q + 1u)) {
            j = offset / (q + 1u);
        } else {
            j = rem + (offset - rem * (q + 1u)) / q;
        }
        parent_rank = lo;
        run_chunk(lo, k, radix, j, &lo, &k);
        depth++;
    }
    out->rank = rank;
    out->depth = depth;
    out->parent = parent_rank;
    out->child_count = 0;
    if (k > 1u) {
        for (uint32_t j = 0; j < radix; j++) {
            uint32_t start;
            uint32_t size;
            run_chunk(lo, k, radix, j, &start, &size);
            if (size == 0) {
                break;
            }
            out->children[out->child_count++] = start;
        }
    }
    out->subtree_levels = membership_tree_levels(k, radix);
    out->subtree_size = k;
}

/* The runs tree over ranks, then ranks turned into layout positions. */
static void locate_runs(const struct membership_view *view, unsigned radix, uint32_t rank,
                        struct membership_tree_links *out)
{
    membership_tree_runs(view->live, radix, rank, out);
    if (out->parent != MEMBERSHIP_POS_NONE) {
        out->parent = membership_view_select(view, out->parent);
    }
    for (uint32_t j = 0; j < out->child_count; j++) {
        out->children[j] = membership_view_select(view, out->children[j]);
    }
}

bool membership_tree_locate(const struct membership_view *view,
                            enum membership_layout_kind kind, unsigned radix, uint32_t pos,
                            struct membership_tree_links *out)
{
    if (!membership_tree_radix_valid(radix) || !membership_view_is_live(view, pos)) {
        return false;
    }
    uint32_t rank = membership_view_rank(view, pos);
    if (kind == MEMBERSHIP_LAYOUT_TORUS) {
        locate_runs(view, radix, rank, out);
    } else {
        out->rank = rank;
        locate_heap(view, radix, rank, out);
    }
    return true;
}
