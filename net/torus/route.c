#include "net/torus/route.h"

/* Productive links from here to destination in the order they are tried:
 * dimensions low to high, each its shortest way first, then the other way
 * when the dimension is a tie on an even torus.  Returns the count. */
static unsigned productive_links(const struct torus_geometry *g, uint32_t here,
                                 uint32_t destination,
                                 unsigned links[CONFIG_MAX_LINKS])
{
    unsigned count = 0;
    for (unsigned dim = 0; dim < torus_geometry_dims(g); dim++) {
        uint32_t from = torus_geometry_coord(g, here, dim);
        uint32_t to = torus_geometry_coord(g, destination, dim);
        int32_t offset = torus_geometry_offset(g, dim, from, to);
        if (offset == 0)
            continue;
        unsigned way = offset > 0 ? TORUS_DIRECTION_PLUS : TORUS_DIRECTION_MINUS;
        links[count++] = torus_geometry_link(dim, way);
        if (torus_geometry_offset_is_tie(g, dim, from, to))
            links[count++] = torus_geometry_link(dim, way ^ 1u);
    }
    return count;
}

int torus_route_next_hop(const struct torus_geometry *geometry, uint32_t here,
                         uint32_t destination, uint32_t link_up_mask)
{
    uint32_t nodes = torus_geometry_node_count(geometry);
    if (here >= nodes || destination >= nodes)
        return TORUS_ROUTE_NONE;
    if (here == destination)
        return TORUS_ROUTE_LOCAL;
    unsigned links[CONFIG_MAX_LINKS];
    unsigned count = productive_links(geometry, here, destination, links);
    uint32_t usable = link_up_mask & torus_geometry_link_mask(geometry, here);
    for (unsigned i = 0; i < count; i++)
        if ((usable >> links[i]) & 1u)
            return (int)links[i];
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
