/*
 * The detour router: a frame walks node to node with the arrival link
 * excluded, as the network forwards it.  With every cable up it takes the
 * minimal path; with one cable cut anywhere, every pair is still delivered,
 * in at most the hop distance plus 2 hops, and a frame never turns straight
 * back.  With many cuts it never leaves the torus and the TTL ends it.
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

/* Walks from source to destination; returns hops, or UINT32_MAX past ttl. */
static uint32_t walk(const struct torus_geometry *g, uint32_t source, uint32_t destination,
                     uint32_t cut_rank, unsigned cut_link, uint32_t ttl)
{
    uint32_t here = source;
    int in_link = -1;
    for (uint32_t hops = 0; hops <= ttl; hops++) {
        int link = torus_route_next_hop_detour(g, here, destination,
                                               up_mask(g, here, cut_rank, cut_link), in_link);
        if (link == TORUS_ROUTE_LOCAL)
            return hops;
        if (link < 0)
            return UINT32_MAX;
        uint32_t next = torus_geometry_neighbour(g, here, (unsigned)link);
        if (in_link >= 0) /* never straight back, on any cable */
            CHECK(next != torus_geometry_neighbour(g, here, (unsigned)in_link));
        CHECK(next != TORUS_RANK_NONE);
        in_link = link ^ 1;
        here = next;
    }
    return UINT32_MAX;
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

int main(void)
{
    const uint32_t square[] = {4, 4};
    const uint32_t odd[] = {5, 3, 3};
    const uint32_t pairs[] = {2, 2, 2}; /* size 2: two cables to one neighbour */
    every_single_cut(2, square);
    every_single_cut(3, odd);
    every_single_cut(3, pairs);
    return check_report("test_route_detour");
}
