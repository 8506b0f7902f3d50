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

uint32_t membership_tree_max_levels(uint32_t live, enum membership_layout_kind kind,
                                    unsigned radix)
{
    uint32_t levels = membership_tree_levels(live, radix);
    return kind == MEMBERSHIP_LAYOUT_BOX && levels > 0 ? levels + 1u : levels;
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

/* Members a subtree of h levels can hold: 1 + a + ... + a^(h-1), saturated. */
static uint32_t tree_capacity(uint32_t levels, unsigned radix)
{
    uint64_t capacity = 0;
    uint64_t width = 1;
    for (uint32_t h = 0; h < levels && capacity < UINT32_MAX; h++) {
        capacity += width;
        width *= radix;
    }
    return capacity < UINT32_MAX ? (uint32_t)capacity : UINT32_MAX;
}

/*
 * A chunk of positions [start, end) of a BOX subtree's range, with a box
 * of the bisection that holds it (the cuts below are looked for from
 * there), its first live position (the child) and, once counted, its live
 * members.
 */
struct box_chunk {
    uint32_t start;
    uint32_t end;
    struct membership_layout_box box;
    bool cut;  /* box's own cut lies strictly inside (start, end) */
    uint32_t head;
};

/* Narrows c->box to the first box whose cut falls strictly inside the chunk. */
static void box_chunk_descend(const struct membership_layout *layout, struct box_chunk *c)
{
    c->cut = false;
    while (c->box.size > 1u) {
        uint32_t cut = membership_layout_box_cut(layout, &c->box);
        if (cut > c->start && cut < c->end) {
            c->cut = true; /* most chunks are whole boxes: no copy */
            return;
        }
        struct membership_layout_box first;
        struct membership_layout_box second;
        membership_layout_box_split(layout, &c->box, &first, &second);
        if (second.start <= c->start) {
            c->box = second;
        } else if (second.start >= c->end) {
            c->box = first;
        } else {
            c->cut = true;
            return;
        }
    }
}

/*
 * The children's ranges of the BOX subtree headed by s over positions
 * [s, end), box holding them, allowed levels budget (itself included).
 * Geometric cuts first: the radix-1 shallowest cuts of the bisection that
 * fall strictly inside (s+1, end) (deepest ties: the rightmost first), so
 * that every chunk but the first is a box, or a prefix of one, starting
 * with its apex.  If a chunk then holds more live members than budget-1
 * levels can (holes left it unbalanced), the "runs" cut of the live members
 * instead: equal counts, which always fit.  Empty chunks are dropped.
 * Returns the chunk count; with toward a live position inside the range
 * (not MEMBERSHIP_POS_NONE), only the chunk holding it, in chunks[0].
 */
static uint32_t box_chunks(const struct membership_view *view,
                           const struct membership_layout *layout, unsigned radix, uint32_t s,
                           uint32_t end, const struct membership_layout_box *box, uint32_t budget,
                           uint32_t toward, struct box_chunk chunks[CONFIG_TREE_RADIX_MAX])
{
    if (s + 1u >= end) {
        return 0;
    }
    uint32_t count = 1;
    chunks[0] = (struct box_chunk){.start = s + 1u, .end = end, .box = *box,
                                   .head = MEMBERSHIP_POS_NONE};
    box_chunk_descend(layout, &chunks[0]);
    while (count < radix) {
        uint32_t best = count;
        for (uint32_t i = 0; i < count; i++) {
            if (chunks[i].cut && (best == count || chunks[i].box.depth <= chunks[best].box.depth)) {
                best = i;
            }
        }
        if (best == count) {
            break;
        }
        struct membership_layout_box first;
        struct membership_layout_box second;
        membership_layout_box_split(layout, &chunks[best].box, &first, &second);
        for (uint32_t i = count; i > best + 1u; i--) {
            chunks[i] = chunks[i - 1u];
        }
        count++;
        chunks[best + 1u] = (struct box_chunk){.start = second.start, .end = chunks[best].end,
                                               .box = second, .head = MEMBERSHIP_POS_NONE};
        chunks[best].end = second.start;
        chunks[best].box = first;
        box_chunk_descend(layout, &chunks[best]);
        box_chunk_descend(layout, &chunks[best + 1u]);
    }
    uint32_t capacity = tree_capacity(budget - 1u, radix);
    bool fits = true;
    for (uint32_t i = 0; i < count && fits; i++) {
        fits = chunks[i].end - chunks[i].start <= capacity ||
               membership_view_rank(view, chunks[i].end) -
                       membership_view_rank(view, chunks[i].start) <= capacity;
    }
    if (!fits) {
        uint32_t lo = membership_view_rank(view, s);
        uint32_t k = membership_view_rank(view, end) - lo;
        count = 0;
        for (uint32_t j = 0; j < radix; j++) {
            uint32_t first_rank;
            uint32_t size;
            run_chunk(lo, k, radix, j, &first_rank, &size);
            if (size == 0) {
                break;
            }
            chunks[count] = (struct box_chunk){.start = membership_view_select(view, first_rank),
                                               .end = end, .box = *box,
                                               .head = MEMBERSHIP_POS_NONE};
            if (count > 0) {
                chunks[count - 1u].end = chunks[count].start;
            }
            count++;
        }
        for (uint32_t i = 0; i < count; i++) {
            box_chunk_descend(layout, &chunks[i]);
        }
    }
    if (toward != MEMBERSHIP_POS_NONE) {
        /* Only the chunk holding the live position toward: it is not empty. */
        uint32_t i = 0;
        while (i + 1u < count && chunks[i].end <= toward) {
            i++;
        }
        chunks[0] = chunks[i];
        chunks[0].head = membership_view_first_live_in(view, chunks[0].start, chunks[0].end);
        return 1;
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count; i++) {
        chunks[i].head = membership_view_first_live_in(view, chunks[i].start, chunks[i].end);
        if (chunks[i].head != MEMBERSHIP_POS_NONE) {
            chunks[kept++] = chunks[i];
        }
    }
    return kept;
}

/*
 * The BOX tree: the root (first live position) heads every position; a
 * subtree headed by s over [s, end) gives its children the chunks of
 * box_chunks, each headed by its first live position.  The root may use
 * one level more than the minimum (levels(L) + 1), so that geometric cuts
 * usually fit; each level below gets one fewer.
 */
static void locate_box(const struct membership_view *view, const struct membership_layout *layout,
                       unsigned radix, uint32_t pos, struct membership_tree_links *out)
{
    struct box_chunk chunks[CONFIG_TREE_RADIX_MAX];
    struct membership_layout_box box;
    membership_layout_box_whole(layout, &box);
    uint32_t s = membership_view_select(view, 0);
    uint32_t end = view->positions;
    uint32_t budget = membership_tree_levels(view->live, radix) + 1u;
    uint32_t depth = 0;
    uint32_t parent = MEMBERSHIP_POS_NONE;
    for (;;) {
        uint32_t toward = s == pos ? MEMBERSHIP_POS_NONE : pos;
        uint32_t count = box_chunks(view, layout, radix, s, end, &box, budget, toward, chunks);
        if (s == pos) {
            out->child_count = count;
            for (uint32_t i = 0; i < count; i++) {
                out->children[i] = chunks[i].head;
            }
            break;
        }
        parent = s;
        s = chunks[0].head;
        end = chunks[0].end;
        box = chunks[0].box;
        budget--;
        depth++;
    }
    out->depth = depth;
    out->parent = parent;
    out->subtree_size = membership_view_rank(view, end) - out->rank;
    /* An upper bound: what the budget allows, and no more than its members. */
    out->subtree_levels = out->child_count == 0 ? 1u
                          : budget < out->subtree_size ? budget
                                                        : out->subtree_size;
}

bool membership_tree_locate(const struct membership_view *view,
                            const struct membership_layout *layout, unsigned radix, uint32_t pos,
                            struct membership_tree_links *out)
{
    if (!membership_tree_radix_valid(radix) || !membership_view_is_live(view, pos)) {
        return false;
    }
    uint32_t rank = membership_view_rank(view, pos);
    enum membership_layout_kind kind = layout->kind;
    if (kind == MEMBERSHIP_LAYOUT_BOX) {
        out->rank = rank;
        locate_box(view, layout, radix, pos, out);
    } else if (kind == MEMBERSHIP_LAYOUT_TORUS) {
        locate_runs(view, radix, rank, out);
    } else {
        out->rank = rank;
        locate_heap(view, radix, rank, out);
    }
    return true;
}
