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

/* Links from here whose far node another link from here reaches too, and
 * that other link is down: in a size-2 dimension both cables lead to the
 * same neighbour, and when one stops answering the neighbour itself is the
 * likelier culprit, so its twin is a poor second choice. */
static uint32_t twins_of_down_links(const struct torus_geometry *geometry, uint32_t here,
                                    uint32_t cabled, uint32_t link_up_mask)
{
    uint32_t down = cabled & ~link_up_mask;
    uint32_t twins = 0;
    for (unsigned dim = 0; down != 0 && dim < torus_geometry_dims(geometry); dim++) {
        unsigned plus = torus_geometry_link(dim, TORUS_DIRECTION_PLUS);
        unsigned pair = (1u << plus) | (1u << (plus ^ 1u));
        if ((cabled & pair) != pair || (down & pair) == 0 ||
            torus_geometry_neighbour(geometry, here, plus) !=
                torus_geometry_neighbour(geometry, here, plus ^ 1u))
            continue;
        twins |= pair;
    }
    return twins;
}

/* Drops from mask the links whose far node is the destination itself. */
static uint32_t except_towards(const struct torus_geometry *geometry, uint32_t here,
                               uint32_t destination, uint32_t mask)
{
    if (mask == 0)
        return 0;
    return mask & ~torus_route_links_towards(geometry, here, destination);
}

/* A detour: any usable link, higher dimensions first.  A detour in a higher
 * dimension leaves the blocked dimension the lowest one to correct at the
 * next node, which then takes a parallel cable. */
static int detour(const struct torus_geometry *geometry, uint32_t usable)
{
    for (unsigned link = torus_geometry_link_count(geometry); link-- > 0;)
        if ((usable >> link) & 1u)
            return (int)link;
    return TORUS_ROUTE_NONE;
}

int torus_route_next_hop_detour(const struct torus_geometry *geometry,
                                uint32_t here, uint32_t destination,
                                uint32_t link_up_mask, uint32_t avoid_mask, int in_link)
{
    uint32_t nodes = torus_geometry_node_count(geometry);
    if (here >= nodes || destination >= nodes)
        return TORUS_ROUTE_NONE;
    if (here == destination)
        return TORUS_ROUTE_LOCAL;
    uint32_t cabled = torus_geometry_link_mask(geometry, here);
    uint32_t usable = link_up_mask & cabled;
    /* Back to the node it came from, on any cable: in a size-2 dimension
     * both links reach the same neighbour. */
    uint32_t back = 0;
    if (in_link >= 0 && in_link < CONFIG_MAX_LINKS) {
        uint32_t previous = torus_geometry_neighbour(geometry, here, (unsigned)in_link);
        back = torus_route_links_towards(geometry, here, previous);
    }
    uint32_t avoid = except_towards(geometry, here, destination, avoid_mask & usable);
    uint32_t twins = except_towards(geometry, here, destination,
                                    twins_of_down_links(geometry, here, cabled, link_up_mask) &
                                        usable);
    /*
     * Best first.  A productive way through a node out of the view beats
     * any detour: that node may be alive (expelled, rejoining) and the only
     * bridge, and detours that shun it wander until the TTL ends them.  A
     * U-turn comes last.
     */
    const uint32_t productive[] = {
        usable & ~back & ~avoid & ~twins,
        usable & ~back & ~avoid,
        usable & ~back,
    };
    for (unsigned i = 0; i < sizeof productive / sizeof productive[0]; i++) {
        int hop = torus_route_next_hop(geometry, here, destination, productive[i]);
        if (hop != TORUS_ROUTE_NONE)
            return hop;
    }
    const uint32_t detours[] = {
        usable & ~back & ~avoid & ~twins,
        usable & ~back & ~avoid,
        usable & ~back,
        usable,
    };
    for (unsigned i = 0; i < sizeof detours / sizeof detours[0]; i++) {
        int hop = detour(geometry, detours[i]);
        if (hop != TORUS_ROUTE_NONE)
            return hop;
    }
    return TORUS_ROUTE_NONE;
}

/* Detours a frame can afford beyond the diameter. */
#define TORUS_ROUTE_DETOUR_HOPS 8u

uint8_t torus_route_ttl(const struct torus_geometry *geometry)
{
    uint32_t ttl = torus_geometry_diameter(geometry) + TORUS_ROUTE_DETOUR_HOPS;
    return (uint8_t)(ttl < 255u ? ttl : 255u);
}

uint32_t torus_route_links_towards(const struct torus_geometry *geometry, uint32_t here,
                                   uint32_t node)
{
    uint32_t mask = 0;
    for (unsigned link = 0; link < torus_geometry_link_count(geometry); link++)
        if (torus_geometry_neighbour(geometry, here, link) == node)
            mask |= 1u << link;
    return mask;
}
