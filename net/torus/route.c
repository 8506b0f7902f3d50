#include "net/torus/route.h"

/*
 * Candidates are tried in a fixed order: dimensions low to high, each its
 * shortest way first, then the other way when the dimension is a tie on an
 * even torus.  Only productive links are candidates, and a productive link
 * always exists in the geometry (it never points past a mesh edge, and a
 * size-1 dimension is never off by anything), so the mask alone decides.
 */
int torus_route_next_hop(const struct torus_geometry *geometry, uint32_t here,
                         uint32_t destination, uint32_t link_up_mask)
{
    uint32_t nodes = torus_geometry_node_count(geometry);
    if (here >= nodes || destination >= nodes)
        return TORUS_ROUTE_NONE;
    if (here == destination)
        return TORUS_ROUTE_LOCAL;
    for (unsigned dim = 0; dim < torus_geometry_dims(geometry); dim++) {
        uint32_t from = torus_geometry_coord(geometry, here, dim);
        uint32_t to = torus_geometry_coord(geometry, destination, dim);
        if (from == to)
            continue;
        int32_t offset = torus_geometry_offset(geometry, dim, from, to);
        unsigned way = offset > 0 ? TORUS_DIRECTION_PLUS : TORUS_DIRECTION_MINUS;
        unsigned link = torus_geometry_link(dim, way);
        if ((link_up_mask >> link) & 1u)
            return (int)link;
        if (torus_geometry_offset_is_tie(geometry, dim, from, to) &&
            ((link_up_mask >> (link ^ 1u)) & 1u))
            return (int)(link ^ 1u);
    }
    return TORUS_ROUTE_NONE;
}

int torus_route_preferred_hop(const struct torus_geometry *geometry,
                              uint32_t here, uint32_t destination)
{
    return torus_route_next_hop(geometry, here, destination,
                                TORUS_ROUTE_ALL_LINKS_UP);
}

uint32_t torus_route_path_length(const struct torus_geometry *geometry,
                                 uint32_t source, uint32_t destination)
{
    uint32_t nodes = torus_geometry_node_count(geometry);
    uint32_t here = source;
    for (uint32_t hops = 0; hops <= nodes; hops++) {
        int link = torus_route_preferred_hop(geometry, here, destination);
        if (link == TORUS_ROUTE_LOCAL)
            return hops;
        if (link < 0)
            return UINT32_MAX;
        here = torus_geometry_neighbour(geometry, here, (unsigned)link);
    }
    return UINT32_MAX;
}

int torus_route_next_hop_detour(const struct torus_geometry *geometry,
                                uint32_t here, uint32_t destination,
                                uint32_t link_up_mask, int in_link)
{
    uint32_t usable = link_up_mask & torus_geometry_link_mask(geometry, here);
    if (in_link >= 0 && in_link < CONFIG_MAX_LINKS) {
        /* Not back to the node it came from, on any cable: in a size-2
         * dimension both links reach the same neighbour. */
        uint32_t previous = torus_geometry_neighbour(geometry, here, (unsigned)in_link);
        for (unsigned link = 0; link < torus_geometry_link_count(geometry); link++)
            if (torus_geometry_neighbour(geometry, here, link) == previous)
                usable &= ~(1u << link);
    }
    int hop = torus_route_next_hop(geometry, here, destination, usable);
    if (hop != TORUS_ROUTE_NONE || here >= torus_geometry_node_count(geometry) ||
        destination >= torus_geometry_node_count(geometry))
        return hop;
    /* A detour in a higher dimension leaves the blocked dimension the
     * lowest one to correct at the next node, which takes a parallel cable. */
    for (unsigned link = torus_geometry_link_count(geometry); link-- > 0;)
        if ((usable >> link) & 1u)
            return (int)link;
    return TORUS_ROUTE_NONE;
}
