/*
 * The implicit tree: layouts are bijections with one-hop steps (snake
 * order); after long random sequences of failures and joins the tree of
 * every layout and radix is a proper tree over exactly the live members,
 * with minimum height (<= ceil(log_a L) + 1), and two nodes that reached
 * the same live set by different histories compute the same tree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membership/layout.h"
#include "membership/tree.h"
#include "membership/view.h"
#include "net/torus/geometry.h"
#include "tests/check.h"

static struct membership_view incremental;
static struct membership_view rebuilt;

static bool make_geometry(struct torus_geometry *g, unsigned dims, const uint32_t *sizes, bool mesh)
{
    bool flags[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        flags[d] = mesh;
    }
    return torus_geometry_init(g, dims, sizes, flags, NULL) == TORUS_GEOMETRY_OK;
}

static void check_layout(unsigned dims, const uint32_t *sizes, bool mesh)
{
    struct membership_layout layout;
    if (!make_geometry(&layout.geometry, dims, sizes, mesh)) {
        return; /* larger than CONFIG_MAX_NODES in this build */
    }
    uint32_t n = layout.geometry.node_count;
    for (unsigned kind = 0; kind < MEMBERSHIP_LAYOUT_KINDS; kind++) {
        layout.kind = (enum membership_layout_kind)kind;
        for (uint32_t pos = 0; pos < n; pos++) {
            uint32_t id = membership_layout_id(&layout, pos);
            CHECKF(id < n && membership_layout_pos(&layout, id) == pos, "bijection at %u", pos);
            if (kind == MEMBERSHIP_LAYOUT_TORUS && pos + 1 < n) {
                uint32_t next = membership_layout_id(&layout, pos + 1);
                CHECKF(torus_geometry_distance(&layout.geometry, id, next) == 1,
                       "snake step %u -> %u is not one hop", pos, pos + 1);
            }
        }
    }
    uint32_t neighbours[CONFIG_MAX_LINKS];
    unsigned count = membership_layout_neighbours(&layout, 0, neighbours);
    for (unsigned i = 0; i < count; i++) {
        CHECK(torus_geometry_distance(&layout.geometry, 0, neighbours[i]) == 1);
        for (unsigned j = 0; j < i; j++) {
            CHECK(neighbours[i] != neighbours[j]);
        }
    }
}

static uint32_t ceil_log(uint32_t live, unsigned radix)
{
    uint32_t levels = 0;
    uint64_t reach = 1;
    while (reach < live) {
        reach *= radix;
        levels++;
    }
    return levels;
}

/* Checks the whole tree of a view (positions of layout). */
static void check_tree(const struct membership_view *v, const struct membership_view *other,
                       const struct membership_layout *layout, unsigned radix)
{
    enum membership_layout_kind kind = layout->kind;
    uint32_t live = v->live;
    uint32_t levels = membership_tree_levels(live, radix);
    CHECKF(levels <= ceil_log(live, radix) + 1u, "levels %u for %u live, radix %u", levels, live,
           radix);
    uint32_t max_depth = 0;
    uint64_t child_total = 0;
    for (uint32_t k = 0; k < live; k++) {
        uint32_t pos = membership_view_select(v, k);
        struct membership_tree_links links;
        struct membership_tree_links same;
        CHECK(membership_tree_locate(v, layout, radix, pos, &links));
        CHECK(links.rank == k);
        /* Same live set, other history: same tree. */
        CHECK(membership_tree_locate(other, layout, radix, pos, &same));
        CHECK(links.rank == same.rank && links.depth == same.depth &&
              links.parent == same.parent && links.child_count == same.child_count &&
              links.subtree_levels == same.subtree_levels);
        for (uint32_t c = 0; c < links.child_count && c < same.child_count; c++) {
            CHECK(links.children[c] == same.children[c]);
        }
        if (links.depth > max_depth) {
            max_depth = links.depth;
        }
        child_total += links.child_count;
        CHECK(links.child_count <= radix);
        if (k == 0) {
            CHECK(links.parent == MEMBERSHIP_POS_NONE && links.depth == 0);
            CHECK(pos == membership_tree_root(v));
        } else {
            struct membership_tree_links parent;
            CHECK(membership_tree_locate(v, layout, radix, links.parent, &parent));
            bool listed = false;
            for (uint32_t c = 0; c < parent.child_count; c++) {
                listed = listed || parent.children[c] == pos;
            }
            CHECKF(listed, "position %u not a child of its parent %u", pos, links.parent);
            CHECK(parent.depth + 1 == links.depth);
            CHECK(parent.subtree_levels >= links.subtree_levels + 1);
        }
        if (kind == MEMBERSHIP_LAYOUT_RADIX && k > 0) {
            /* The paper's heap: parent (r-1)/a, root = lowest live id. */
            CHECK(links.parent == membership_view_select(v, (k - 1) / radix));
        }
        uint32_t deepest_child = 0;
        uint32_t size = 1;
        for (uint32_t c = 0; c < links.child_count; c++) {
            struct membership_tree_links child;
            CHECK(membership_tree_locate(v, layout, radix, links.children[c], &child));
            if (child.subtree_levels > deepest_child) {
                deepest_child = child.subtree_levels;
            }
            size += child.subtree_size;
        }
        if (kind == MEMBERSHIP_LAYOUT_BOX) {
            /* An upper bound (it times the waits for acks). */
            CHECK(links.subtree_levels >= deepest_child + 1);
        } else {
            CHECK(links.subtree_levels == deepest_child + 1);
        }
        CHECKF(links.subtree_size == size, "subtree size %u, children add to %u", links.subtree_size,
               size);
        if (k == 0) {
            CHECK(links.subtree_size == live);
        }
    }
    CHECK(child_total + 1 == live || live == 0);
    if (kind == MEMBERSHIP_LAYOUT_BOX) {
        /* At most one level over the minimum: depth <= ceil(log_a L) + 1. */
        CHECKF(live == 0 || (max_depth + 1 <= levels + 1 && max_depth <= ceil_log(live, radix) + 1),
               "box height %u, minimum %u (live %u radix %u)", max_depth + 1, levels, live, radix);
        CHECK(max_depth + 1 <= membership_tree_max_levels(live, kind, radix));
    } else {
        CHECKF(live == 0 || max_depth + 1 == levels, "height %u, expected %u (live %u radix %u)",
               max_depth + 1, levels, live, radix);
    }
}

/* Every layout over the positions of g, in turn. */
static void check_trees(const struct membership_view *v, const struct membership_view *other,
                        const struct torus_geometry *g, unsigned radix)
{
    struct membership_layout layout = {.geometry = *g};
    for (unsigned kind = 0; kind < MEMBERSHIP_LAYOUT_KINDS; kind++) {
        layout.kind = (enum membership_layout_kind)kind;
        check_tree(v, other, &layout, radix);
    }
}

/*
 * The BOX tree's paths over a view: hops[k] the torus hops down the tree
 * from the root to member k, relays[k] how many of those steps go to a
 * first child (the next live member after its parent, relaying the rest of
 * the parent's own box), parent_of[k] the parent's rank.  Parents come
 * before their children in rank order.
 */
static uint32_t box_hops[CONFIG_MAX_NODES];
static uint32_t box_relays[CONFIG_MAX_NODES];
static uint32_t box_parent[CONFIG_MAX_NODES];

static void box_paths(const struct membership_view *v, const struct membership_layout *layout,
                      unsigned radix)
{
    const struct torus_geometry *g = &layout->geometry;
    for (uint32_t k = 0; k < v->live; k++) {
        uint32_t pos = membership_view_select(v, k);
        struct membership_tree_links links;
        CHECK(membership_tree_locate(v, layout, radix, pos, &links));
        box_hops[k] = 0;
        box_relays[k] = 0;
        box_parent[k] = UINT32_MAX;
        if (k == 0) {
            continue;
        }
        uint32_t up = membership_view_rank(v, links.parent);
        CHECK(up < k);
        struct membership_tree_links parent;
        CHECK(membership_tree_locate(v, layout, radix, links.parent, &parent));
        box_parent[k] = up;
        box_hops[k] = box_hops[up] + torus_geometry_distance(g, membership_layout_id(layout, pos),
                                                             membership_layout_id(layout, links.parent));
        box_relays[k] = box_relays[up] + (parent.children[0] == pos ? 1u : 0u);
    }
}

static uint32_t eccentricity(const struct torus_geometry *g, uint32_t id)
{
    uint32_t ecc = 0;
    for (uint32_t other = 0; other < g->node_count; other++) {
        uint32_t d = torus_geometry_distance(g, id, other);
        ecc = d > ecc ? d : ecc;
    }
    return ecc;
}

/*
 * No member missing: the root is id 0, the origin of the bisection.  A
 * member reached through children that head boxes only (no relay) is on a
 * shortest torus path; each relay step adds at most 2 hops (it is one hop
 * from its parent).  All of them shortest is not possible with fan-out <= a
 * when the root has more than a torus neighbours (each neighbour, one hop
 * away, would have to be the root's child).  Also the tree's longest path
 * against the root's eccentricity, the term of T_s the tree decides.
 */
static void check_box_full(const struct torus_geometry *g, unsigned radix, bool print)
{
    struct membership_layout layout = {.kind = MEMBERSHIP_LAYOUT_BOX, .geometry = *g};
    uint32_t n = g->node_count;
    membership_view_reset(&incremental, n);
    for (uint32_t p = 0; p < n; p++) {
        membership_view_add(&incremental, p);
    }
    CHECK(membership_layout_id(&layout, membership_tree_root(&incremental)) == 0);
    box_paths(&incremental, &layout, radix);
    uint32_t shortest = 0;
    uint32_t worst = 0;
    uint32_t longest = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id = membership_layout_id(&layout, membership_view_select(&incremental, k));
        uint32_t excess = box_hops[k] - torus_geometry_distance(g, 0, id);
        CHECKF(box_relays[k] > 0 || excess == 0,
               "id %u: %u hops over its distance without a relay (a=%u)", id, excess, radix);
        CHECKF(excess <= 2u * box_relays[k], "id %u: %u hops over, %u relays (a=%u)", id, excess,
               box_relays[k], radix);
        shortest += excess == 0 ? 1u : 0u;
        worst = excess > worst ? excess : worst;
        longest = box_hops[k] > longest ? box_hops[k] : longest;
    }
    if (print) {
        printf("box a=%-2u %5u nodes: %5.1f%% shortest, at most %2u hops over, longest path %u, "
               "eccentricity %u\n",
               radix, n, 100.0 * shortest / n, worst, longest, eccentricity(g, 0));
    }
}

/*
 * A hole absorbed: after any one member h (not the root) fails, every
 * member outside h's old subtree keeps its parent, so its path (shortest
 * or not) is unchanged; h's place goes to the next member of its chunk.
 */
static void check_box_hole(const struct torus_geometry *g, unsigned radix, uint32_t hole_id)
{
    static uint32_t hops_before[CONFIG_MAX_NODES];
    static uint32_t parent_before[CONFIG_MAX_NODES];
    static bool under_hole[CONFIG_MAX_NODES];
    struct membership_layout layout = {.kind = MEMBERSHIP_LAYOUT_BOX, .geometry = *g};
    uint32_t n = g->node_count;
    uint32_t hole = membership_layout_pos(&layout, hole_id);
    membership_view_reset(&incremental, n);
    for (uint32_t p = 0; p < n; p++) {
        membership_view_add(&incremental, p);
    }
    box_paths(&incremental, &layout, radix);
    for (uint32_t k = 0; k < n; k++) {
        hops_before[k] = box_hops[k];
        parent_before[k] = box_parent[k];
        under_hole[k] = k == hole || (k > 0 && under_hole[box_parent[k]]);
    }
    membership_view_remove(&incremental, hole);
    box_paths(&incremental, &layout, radix);
    for (uint32_t k = 0; k + 1 < n; k++) {
        uint32_t was = k < hole ? k : k + 1u; /* rank before the hole */
        if (under_hole[was]) {
            continue;
        }
        uint32_t parent_was = box_parent[k] == UINT32_MAX ? UINT32_MAX
                              : box_parent[k] < hole      ? box_parent[k]
                                                          : box_parent[k] + 1u;
        CHECKF(parent_was == parent_before[was] && box_hops[k] == hops_before[was],
               "member at position %u moved when position %u failed", was, hole);
    }
}

static void random_history(const struct torus_geometry *g, uint32_t steps,
                           unsigned long long seed)
{
    uint32_t n = g->node_count;
    static uint8_t live[CONFIG_MAX_NODES];
    unsigned long long rng = seed;
    membership_view_reset(&incremental, n);
    for (uint32_t p = 0; p < n; p++) {
        membership_view_add(&incremental, p);
        live[p] = 1;
    }
    for (uint32_t step = 0; step < steps; step++) {
        uint32_t p = (uint32_t)(test_random(&rng) % n);
        /* Mostly failures, some joins: the live set drifts down and back. */
        if (test_random(&rng) % 3 != 0) {
            if (incremental.live > 1) {
                membership_view_remove(&incremental, p);
                live[p] = 0;
            }
        } else {
            membership_view_add(&incremental, p);
            live[p] = 1;
        }
    }
    membership_view_reset(&rebuilt, n);
    for (uint32_t p = 0; p < n; p++) {
        if (live[p]) {
            rebuilt.words[p / 64] |= UINT64_C(1) << (p % 64);
        }
    }
    membership_view_rebuild(&rebuilt);
    CHECK(rebuilt.live == incremental.live);
    static const unsigned radices[] = {2, 4, 8, 16};
    for (unsigned r = 0; r < 4; r++) {
        check_trees(&incremental, &rebuilt, g, radices[r]);
    }
}

int main(void)
{
    static const uint32_t cube[] = {4, 4, 4};
    static const uint32_t odd[] = {3, 5, 2};
    static const uint32_t bgl[] = {16, 8, 8};
    static const uint32_t big[] = {64, 32, 32};
    static const uint32_t six[] = {2, 3, 2, 2, 3, 2};
    check_layout(3, cube, false);
    check_layout(3, odd, false);
    check_layout(3, odd, true);
    check_layout(3, bgl, false);
    check_layout(3, big, false);
    check_layout(6, six, true);
    check_layout(1, odd + 1, false);

    CHECK(membership_tree_radix_valid(2) && membership_tree_radix_valid(16));
    CHECK(!membership_tree_radix_valid(3) && !membership_tree_radix_valid(1) &&
          !membership_tree_radix_valid(32) && !membership_tree_radix_valid(0));
    CHECK(membership_tree_levels(0, 4) == 0);
    CHECK(membership_tree_levels(1, 4) == 1);
    CHECK(membership_tree_levels(5, 4) == 2);
    CHECK(membership_tree_levels(6, 4) == 3);
    CHECK(membership_tree_levels(1023, 2) == 10);

    /* Every live-set size from 1 to 200, all radices and layouts. */
    static const uint32_t slab[] = {8, 8, 4};
    struct torus_geometry g256;
    CHECK(make_geometry(&g256, 3, slab, false));
    membership_view_reset(&incremental, 256);
    membership_view_reset(&rebuilt, 256);
    for (uint32_t p = 0; p < 200; p++) {
        membership_view_add(&incremental, p * 1u);
        membership_view_add(&rebuilt, p * 1u);
        static const unsigned radices[] = {2, 4, 8, 16};
        for (unsigned r = 0; r < 4; r++) {
            check_trees(&incremental, &rebuilt, &g256, radices[r]);
        }
    }
    struct torus_geometry g;
    CHECK(make_geometry(&g, 3, cube, false));
    random_history(&g, 500, 1);
    CHECK(make_geometry(&g, 3, bgl, false));
    random_history(&g, 5000, 2);
    static const uint32_t k16[] = {16, 16, 16};
    CHECK(make_geometry(&g, 3, k16, false));
    random_history(&g, 20000, 3);
    if (make_geometry(&g, 3, big, false)) {
        random_history(&g, 60000, 4);
    }
    /* The BOX tree's paths, no member missing, then one missing. */
    static const uint32_t shapes[][3] = {{4, 4, 4},  {16, 8, 8}, {16, 16, 16},
                                         {64, 32, 32}, {3, 5, 7}, {6, 6, 6}};
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int mesh = 0; mesh < 2; mesh++) {
            if ((mesh && shapes[i][0] > 16) || !make_geometry(&g, 3, shapes[i], mesh)) {
                continue;
            }
            for (unsigned a = 2; a <= 16; a *= 2) {
                /* 65,536 nodes: the radix only (time). */
                if (g.node_count <= 4096 || a == 4) {
                    check_box_full(&g, a, !mesh && shapes[i][0] >= 16);
                }
            }
            if (g.node_count <= 4096) {
                unsigned long long rng = 7 + i;
                for (int h = 0; h < 4; h++) {
                    uint32_t hole = 1u + (uint32_t)(test_random(&rng) % (g.node_count - 1u));
                    check_box_hole(&g, 4, hole);
                    check_box_hole(&g, 2, hole);
                }
            }
        }
    }
    return check_report("membership.tree");
}
