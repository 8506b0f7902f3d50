/*
 * The detour router: a frame walks node to node with the arrival link
 * excluded, as the network forwards it.  With every cable up it takes the
 * minimal path; with one cable cut anywhere, every pair is still delivered,
 * in at most the hop distance plus 2 hops, and a frame never turns straight
 * back.  With many cuts it never leaves the torus and the TTL ends it.
 * A node out of the view is crossed only when every productive way crosses
 * one (it may be alive and the only bridge), and is still reached when it is
 * the destination; dead nodes (out of the view, cables down) are routed
 * around; the twin cable of a down link in a size-2 dimension is a last
 * resort.  Told the shunned nodes (out of the view, links still up: dead
 * but not yet detected by the link layer), the router goes around them
 * wherever a way over other nodes exists, within distance + 2, and
 * crosses one only where it is the only bridge.
 */
#include "net/torus/geometry.h"
#include "net/torus/route.h"
#include "tests/check.h"

/* Link mask of node here with the cable (cut_rank, cut_link) removed. */
static uint32_t up_mask(const struct torus_geometry *g, uint32_t here, uint32_t cut_rank,
                        unsigned cut_link)
{
    uint32_t mask = torus_geometry_link_mask(g, here);
    if (here == cut_rank)
        mask &= ~(1u << cut_link);
    if (torus_geometry_neighbour(g, cut_rank, cut_link) == here &&
        torus_geometry_neighbour(g, here, cut_link ^ 1u) == cut_rank)
        mask &= ~(1u << (cut_link ^ 1u));
    return mask;
}

/* Links of here whose far node is absent (TORUS_RANK_NONE: none). */
static uint32_t links_towards(const struct torus_geometry *g, uint32_t here, uint32_t absent)
{
    return absent == TORUS_RANK_NONE ? 0 : torus_route_links_towards(g, here, absent);
}

/* True if a productive link from here, other than back towards previous,
 * leads to a node other than absent. */
static bool productive_elsewhere(const struct torus_geometry *g, uint32_t here,
                                 uint32_t destination, uint32_t absent, uint32_t previous)
{
    for (unsigned link = 0; link < torus_geometry_link_count(g); link++) {
        uint32_t next = torus_geometry_neighbour(g, here, link);
        if (next == TORUS_RANK_NONE || next == absent || next == previous)
            continue;
        if (torus_geometry_distance(g, next, destination) <
            torus_geometry_distance(g, here, destination))
            return true;
    }
    return false;
}

/* Walks from source to destination; returns hops, or UINT32_MAX past ttl.
 * Nodes next to absent (alive, out of the view) avoid it when they can. */
static uint32_t walk_avoiding(const struct torus_geometry *g, uint32_t source,
                              uint32_t destination, uint32_t cut_rank, unsigned cut_link,
                              uint32_t absent, uint32_t ttl)
{
    uint32_t here = source;
    uint32_t previous = TORUS_RANK_NONE;
    int in_link = -1;
    for (uint32_t hops = 0; hops <= ttl; hops++) {
        int link = torus_route_next_hop_detour(g, here, destination,
                                               up_mask(g, here, cut_rank, cut_link),
                                               links_towards(g, here, absent), in_link);
        if (link == TORUS_ROUTE_LOCAL)
            return hops;
        if (link < 0)
            return UINT32_MAX;
        uint32_t next = torus_geometry_neighbour(g, here, (unsigned)link);
        if (in_link >= 0 && absent == TORUS_RANK_NONE) /* never straight back */
            CHECK(next != torus_geometry_neighbour(g, here, (unsigned)in_link));
        if (next == absent && destination != absent)
            CHECK(!productive_elsewhere(g, here, destination, absent, previous));
        CHECK(next != TORUS_RANK_NONE);
        in_link = link ^ 1;
        previous = here;
        here = next;
    }
    return UINT32_MAX;
}

static uint32_t walk(const struct torus_geometry *g, uint32_t source, uint32_t destination,
                     uint32_t cut_rank, unsigned cut_link, uint32_t ttl)
{
    return walk_avoiding(g, source, destination, cut_rank, cut_link, TORUS_RANK_NONE, ttl);
}

static void every_single_cut(unsigned dims, const uint32_t *sizes)
{
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, dims, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    uint32_t n = torus_geometry_node_count(&g);
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t d = 0; d < n; d++)
            CHECK_EQ(walk(&g, s, d, TORUS_RANK_NONE, 0, 64),
                     torus_geometry_distance(&g, s, d));
    for (uint32_t cut_rank = 0; cut_rank < n; cut_rank++) {
        for (unsigned cut_link = 0; cut_link < 2 * dims; cut_link++) {
            for (uint32_t s = 0; s < n; s++) {
                for (uint32_t d = 0; d < n; d++) {
                    uint32_t hops = walk(&g, s, d, cut_rank, cut_link, 64);
                    CHECK(hops != UINT32_MAX);
                    if (hops != UINT32_MAX)
                        CHECK(hops <= torus_geometry_distance(&g, s, d) + 2);
                }
            }
        }
    }
}

/* Every absent (alive) node, every pair: delivered within 4 hops of the
 * distance, crossing the absent node only where every productive way does;
 * the absent node itself is still reached. */
static void every_absent_node(unsigned dims, const uint32_t *sizes)
{
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, dims, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    uint32_t n = torus_geometry_node_count(&g);
    for (uint32_t absent = 0; absent < n; absent++) {
        for (uint32_t s = 0; s < n; s++) {
            for (uint32_t d = 0; d < n; d++) {
                uint32_t hops = walk_avoiding(&g, s, d, TORUS_RANK_NONE, 0, absent, 64);
                CHECK(hops != UINT32_MAX);
                if (hops != UINT32_MAX)
                    CHECK(hops <= torus_geometry_distance(&g, s, d) + 4);
            }
        }
    }
}

/* 2x2x2: node 7 (1,1,1) to node 1 (1,0,0) goes y first, to node 5.  With
 * that cable down, the twin y cable also reaches 5; the router goes z (node
 * 3) instead, and takes the twin only if z is down too (a productive link
 * beats any detour). */
static void twin_cable_is_last_resort(void)
{
    const uint32_t pairs[] = {2, 2, 2};
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 3, pairs, NULL, NULL) == TORUS_GEOMETRY_OK);
    int preferred = torus_route_preferred_hop(&g, 7, 1);
    CHECK(preferred >= 0 && torus_geometry_link_dim((unsigned)preferred) == 1);
    if (preferred < 0)
        return;
    unsigned y = (unsigned)preferred;
    unsigned z_plus = torus_geometry_link(2, TORUS_DIRECTION_PLUS);
    uint32_t all = torus_geometry_link_mask(&g, 7);
    CHECK_EQ(torus_geometry_neighbour(&g, 7, y), 5);
    int hop = torus_route_next_hop_detour(&g, 7, 1, all & ~(1u << y), 0, -1);
    CHECK(hop >= 0);
    if (hop >= 0)
        CHECK_EQ(torus_geometry_neighbour(&g, 7, (unsigned)hop), 3);
    uint32_t no_z = all & ~(1u << y) & ~(3u << z_plus);
    hop = torus_route_next_hop_detour(&g, 7, 1, no_z, 0, -1);
    CHECK_EQ(hop, (int)(y ^ 1u)); /* a productive twin beats a detour */
    uint32_t only_twin = 1u << (y ^ 1u);
    hop = torus_route_next_hop_detour(&g, 7, 1, only_twin, 0, -1);
    CHECK_EQ(hop, (int)(y ^ 1u));
    /* Towards 5 itself the twin is the way. */
    hop = torus_route_next_hop_detour(&g, 7, 5, all & ~(1u << y), 0, -1);
    CHECK_EQ(hop, (int)(y ^ 1u));
    /* Node 5 out of the view: 7 to 1 goes by 3 though every link is up,
     * 7 to 5 still goes to 5. */
    uint32_t avoid = links_towards(&g, 7, 5);
    CHECK_EQ(avoid, 3u << (y & ~1u));
    hop = torus_route_next_hop_detour(&g, 7, 1, all, avoid, -1);
    CHECK(hop >= 0);
    if (hop >= 0)
        CHECK_EQ(torus_geometry_neighbour(&g, 7, (unsigned)hop), 3);
    hop = torus_route_next_hop_detour(&g, 7, 5, all, avoid, -1);
    CHECK(hop >= 0);
    if (hop >= 0)
        CHECK_EQ(torus_geometry_neighbour(&g, 7, (unsigned)hop), 5);
}

/* 2x2x2 with nodes 3 and 5 dead (their cables down, out of every view)
 * and node 0 alive but out of the view (expelled): 1's only live neighbour
 * is 0, so everything to and from 1 must cross 0.  Node 2, towards 1, goes
 * to 0 (productive, out of the view) rather than detour to 6.  Every pair of
 * live nodes is delivered within 4 hops of the distance. */
static void absent_bridge(void)
{
    const uint32_t pairs[] = {2, 2, 2};
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 3, pairs, NULL, NULL) == TORUS_GEOMETRY_OK);
    uint32_t up2 = torus_geometry_link_mask(&g, 2) & ~torus_route_links_towards(&g, 2, 3);
    int first = torus_route_next_hop_detour(&g, 2, 1, up2, torus_route_links_towards(&g, 2, 0), -1);
    CHECK(first >= 0);
    if (first >= 0)
        CHECK_EQ(torus_geometry_neighbour(&g, 2, (unsigned)first), 0);
    const uint32_t live[] = {0, 1, 2, 4, 6, 7};
    for (unsigned a = 0; a < 6; a++) {
        for (unsigned b = 0; b < 6; b++) {
            uint32_t here = live[a];
            int in_link = -1;
            uint32_t hops = 0;
            for (; hops <= 16; hops++) {
                uint32_t up = torus_geometry_link_mask(&g, here) &
                              ~torus_route_links_towards(&g, here, 3) &
                              ~torus_route_links_towards(&g, here, 5);
                uint32_t avoid = torus_route_links_towards(&g, here, 0);
                int link = torus_route_next_hop_detour(&g, here, live[b], up, avoid, in_link);
                if (link < 0)
                    break;
                in_link = link ^ 1;
                here = torus_geometry_neighbour(&g, here, (unsigned)link);
            }
            CHECKF(here == live[b] && hops <= torus_geometry_distance(&g, live[a], live[b]) + 4,
                   "%u to %u ended at %u after %u hops", live[a], live[b], here, hops);
        }
    }
}

/*
 * Walks every pair of unshunned nodes with the shunned list known at every
 * node and every link up (the links to the dead not yet down): delivered
 * within distance + 2 hops without crossing a shunned node.
 */
static void around_shunned(unsigned dims, const uint32_t *sizes, const uint32_t *shunned,
                           uint32_t count)
{
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, dims, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    uint32_t n = torus_geometry_node_count(&g);
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t d = 0; d < n; d++) {
            bool out = false;
            for (uint32_t i = 0; i < count; i++)
                out = out || s == shunned[i] || d == shunned[i];
            if (out)
                continue;
            uint32_t here = s;
            int in_link = -1;
            uint32_t hops = 0;
            bool crossed = false;
            for (; hops <= torus_route_ttl(&g) && here != d; hops++) {
                uint32_t avoid = 0;
                for (uint32_t i = 0; i < count; i++)
                    avoid |= torus_route_links_towards(&g, here, shunned[i]);
                int link = torus_route_next_hop_around(&g, here, d,
                                                       torus_geometry_link_mask(&g, here),
                                                       avoid, in_link, shunned, count);
                if (link < 0)
                    break;
                here = torus_geometry_neighbour(&g, here, (unsigned)link);
                in_link = link ^ 1;
                for (uint32_t i = 0; i < count; i++)
                    crossed = crossed || here == shunned[i];
            }
            CHECKF(here == d && !crossed && hops <= torus_geometry_distance(&g, s, d) + 2,
                   "%u to %u: ended at %u after %u hops (distance %u)%s", s, d, here, hops,
                   torus_geometry_distance(&g, s, d), crossed ? ", crossed a shunned node" : "");
        }
    }
}

/* Issue 20: on a 2x2x2 torus with 3 and 5 dead and out of the view (their
 * links not yet down), every minimal route between 1 and 7 crosses one of
 * them; 1 -> 0 -> 2 -> 6 -> 7 does not.  On a 4x4 torus, 1 and 3 out: every
 * minimal route from 0 to 2 crosses one. */
static void around_dead_before_links_go_down(void)
{
    const uint32_t pairs[] = {2, 2, 2};
    const uint32_t dead[] = {3, 5};
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 3, pairs, NULL, NULL) == TORUS_GEOMETRY_OK);
    uint32_t avoid = torus_route_links_towards(&g, 1, 3) | torus_route_links_towards(&g, 1, 5);
    int hop = torus_route_next_hop_around(&g, 1, 7, torus_geometry_link_mask(&g, 1), avoid, -1,
                                          dead, 2);
    CHECK(hop >= 0 && torus_geometry_neighbour(&g, 1, (unsigned)hop) == 0);
    around_shunned(3, pairs, dead, 2);
    const uint32_t square[] = {4, 4};
    const uint32_t row[] = {1, 3};
    around_shunned(2, square, row, 2);
    const uint32_t scattered[] = {1, 6, 11, 12};
    around_shunned(2, square, scattered, 4);
    const uint32_t cube[] = {4, 4, 4};
    const uint32_t cross[] = {1, 4, 16, 21, 42};
    around_shunned(3, cube, cross, 5);
}

/* The only bridge: 2x2x2, 3 and 5 dead (links down), 0 alive but out of
 * the view, all three shunned: 1 is reached only through 0, and the list
 * does not make the router detour away from it. */
static void shunned_only_bridge(void)
{
    const uint32_t pairs[] = {2, 2, 2};
    const uint32_t shunned[] = {0, 3, 5};
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 3, pairs, NULL, NULL) == TORUS_GEOMETRY_OK);
    const uint32_t live[] = {0, 1, 2, 4, 6, 7};
    for (unsigned a = 0; a < 6; a++) {
        for (unsigned b = 0; b < 6; b++) {
            uint32_t here = live[a];
            int in_link = -1;
            uint32_t hops = 0;
            for (; hops <= 16 && here != live[b]; hops++) {
                uint32_t up = torus_geometry_link_mask(&g, here) &
                              ~torus_route_links_towards(&g, here, 3) &
                              ~torus_route_links_towards(&g, here, 5);
                uint32_t avoid = torus_route_links_towards(&g, here, 0) |
                                 torus_route_links_towards(&g, here, 3) |
                                 torus_route_links_towards(&g, here, 5);
                int link = torus_route_next_hop_around(&g, here, live[b], up, avoid, in_link,
                                                       shunned, 3);
                if (link < 0)
                    break;
                in_link = link ^ 1;
                here = torus_geometry_neighbour(&g, here, (unsigned)link);
            }
            CHECKF(here == live[b] && hops <= torus_geometry_distance(&g, live[a], live[b]) + 4,
                   "%u to %u ended at %u after %u hops", live[a], live[b], here, hops);
        }
    }
}

int main(void)
{
    const uint32_t square[] = {4, 4};
    const uint32_t odd[] = {5, 3, 3};
    const uint32_t pairs[] = {2, 2, 2}; /* size 2: two cables to one neighbour */
    every_single_cut(2, square);
    every_single_cut(3, odd);
    every_single_cut(3, pairs);
    const uint32_t ring[] = {6};
    const uint32_t mesh_line[] = {4, 3};
    every_absent_node(2, square);
    every_absent_node(3, odd);
    every_absent_node(3, pairs);
    every_absent_node(1, ring);
    every_absent_node(2, mesh_line);
    twin_cable_is_last_resort();
    absent_bridge();
    around_dead_before_links_go_down();
    shunned_only_bridge();
    return check_report("test_route_detour");
}
