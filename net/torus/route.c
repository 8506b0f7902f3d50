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

/* The links of here that shorten the distance to destination. */
static uint32_t productive_links(const struct torus_geometry *geometry, uint32_t here,
                                 uint32_t destination)
{
    uint32_t mask = 0;
    uint32_t distance = torus_geometry_distance(geometry, here, destination);
    for (unsigned link = 0; link < torus_geometry_link_count(geometry); link++) {
        uint32_t next = torus_geometry_neighbour(geometry, here, link);
        if (next != TORUS_RANK_NONE && torus_geometry_distance(geometry, next, destination) < distance)
            mask |= 1u << link;
    }
    return mask;
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

/*
 * The nodes on minimal paths from one node to a destination, as a box of
 * cells: in each dimension a cell index l counts down to 0 at the
 * destination, and every productive hop lowers one index, so visiting the
 * cells in index order sees each cell after the cells it leads to.  A
 * dimension not half way round has l = the steps still to go that way; one
 * half way round an even torus (either way is minimal) has l over the whole
 * ring: l = 2r - 1 at r steps past the destination going plus (r <= k/2),
 * l = 2(k - r) beyond, so both ways count down.
 */
struct route_box {
    unsigned dims;
    uint32_t span[CONFIG_MAX_DIMS];    /* cells per dimension */
    uint32_t radix[CONFIG_MAX_DIMS];   /* index step per dimension */
    uint32_t target[CONFIG_MAX_DIMS];  /* the destination's coordinates */
    int32_t way[CONFIG_MAX_DIMS];      /* +1/-1: the way to the destination; 0: tie */
    uint32_t cells;
};

/* Cells a lookahead may visit (two bits each on the stack); a larger box
 * has so many minimal paths that it is taken as clear. */
#define ROUTE_BOX_CELLS 1024u

static bool box_init(const struct torus_geometry *g, uint32_t from, uint32_t destination,
                     struct route_box *box)
{
    box->dims = torus_geometry_dims(g);
    box->cells = 1;
    for (unsigned d = 0; d < box->dims; d++) {
        uint32_t a = torus_geometry_coord(g, from, d);
        uint32_t b = torus_geometry_coord(g, destination, d);
        int32_t offset = torus_geometry_offset(g, d, a, b);
        bool tie = torus_geometry_offset_is_tie(g, d, a, b);
        box->target[d] = b;
        box->way[d] = tie ? 0 : offset >= 0 ? 1 : -1;
        box->span[d] = tie ? torus_geometry_size(g, d)
                           : (uint32_t)(offset < 0 ? -offset : offset) + 1u;
        box->radix[d] = box->cells;
        if (box->span[d] > ROUTE_BOX_CELLS / box->cells)
            return false;
        box->cells *= box->span[d];
    }
    return true;
}

/* The cell of node, or UINT32_MAX when it lies on no minimal path. */
static uint32_t box_cell(const struct torus_geometry *g, const struct route_box *box,
                         uint32_t node)
{
    uint32_t cell = 0;
    for (unsigned d = 0; d < box->dims; d++) {
        uint32_t k = torus_geometry_size(g, d);
        uint32_t c = torus_geometry_coord(g, node, d);
        uint32_t l;
        if (box->way[d] == 0) {
            uint32_t r = (c + k - box->target[d]) % k;
            l = r == 0 ? 0 : r <= k / 2u ? 2u * r - 1u : 2u * (k - r);
        } else if (!torus_geometry_is_torus(g, d)) {
            int32_t steps = ((int32_t)box->target[d] - (int32_t)c) * box->way[d];
            l = steps < 0 ? UINT32_MAX : (uint32_t)steps;
        } else {
            l = box->way[d] > 0 ? (box->target[d] + k - c) % k : (c + k - box->target[d]) % k;
        }
        if (l >= box->span[d])
            return UINT32_MAX;
        cell += l * box->radix[d];
    }
    return cell;
}

/* The index of dimension d in cell. */
static uint32_t box_index(const struct route_box *box, uint32_t cell, unsigned d)
{
    return cell / box->radix[d] % box->span[d];
}

static bool bit(const uint32_t *bits, uint32_t i)
{
    return (bits[i / 32u] >> (i % 32u)) & 1u;
}

/*
 * True if a minimal path leads from `from` to destination over no shunned
 * node and not over `also` (the node asking, for a detour that must not come
 * back through it).  `from` itself and the destination are not checked.
 */
static bool clear_minimal_path(const struct torus_geometry *g, uint32_t from,
                               uint32_t destination, const uint32_t *shunned,
                               uint32_t shunned_count, uint32_t also)
{
    struct route_box box;
    if (from == destination || !box_init(g, from, destination, &box))
        return true;
    uint32_t blocked[ROUTE_BOX_CELLS / 32u] = {0};
    bool any = false;
    for (uint32_t i = 0; i <= shunned_count; i++) {
        uint32_t node = i < shunned_count ? shunned[i] : also;
        if (node == from || node == destination || node >= torus_geometry_node_count(g))
            continue;
        uint32_t cell = box_cell(g, &box, node);
        if (cell != UINT32_MAX) {
            blocked[cell / 32u] |= 1u << (cell % 32u);
            any = true;
        }
    }
    if (!any)
        return true;
    /* good: a clear minimal path leads from the cell; cell 0 is the
     * destination, the last cell is `from`. */
    uint32_t good[ROUTE_BOX_CELLS / 32u] = {0};
    good[0] = 1u;
    for (uint32_t cell = 1; cell < box.cells; cell++) {
        if (bit(blocked, cell))
            continue;
        bool onward = false;
        for (unsigned d = 0; d < box.dims && !onward; d++) {
            uint32_t l = box_index(&box, cell, d);
            if (l == 0)
                continue;
            uint32_t base = cell - l * box.radix[d];
            if (box.way[d] != 0) {
                onward = bit(good, base + (l - 1u) * box.radix[d]);
                continue;
            }
            /* Half way round: both ways; elsewhere two cells closer. */
            uint32_t k = box.span[d];
            onward = bit(good, base + (l >= 2u ? l - 2u : 0u) * box.radix[d]) ||
                     (l == k - 1u && bit(good, base + (k - 2u) * box.radix[d]));
        }
        if (onward)
            good[cell / 32u] |= 1u << (cell % 32u);
    }
    return bit(good, box.cells - 1u);
}

/* The links in mask whose far node has a clear minimal path on. */
static uint32_t clear_links(const struct torus_geometry *g, uint32_t here,
                            uint32_t destination, uint32_t mask, const uint32_t *shunned,
                            uint32_t shunned_count)
{
    uint32_t clear = 0;
    for (unsigned link = 0; mask != 0 && link < torus_geometry_link_count(g); link++) {
        if (((mask >> link) & 1u) == 0)
            continue;
        uint32_t next = torus_geometry_neighbour(g, here, link);
        if (next != TORUS_RANK_NONE &&
            clear_minimal_path(g, next, destination, shunned, shunned_count, here))
            clear |= 1u << link;
    }
    return clear;
}

int torus_route_next_hop_around(const struct torus_geometry *geometry, uint32_t here,
                                uint32_t destination, uint32_t link_up_mask,
                                uint32_t avoid_mask, int in_link, const uint32_t *shunned,
                                uint32_t shunned_count)
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
     * With the shunned nodes known: first a way to a node neither shunned
     * nor behind a down twin from which a minimal path leads on over no
     * shunned node - productive, else a detour (which must not lead back
     * through here).  Each such hop either shortens the distance or, after
     * a detour, lands where every later hop does, so once every node shuns
     * the same nodes a frame arrives within distance + 2 hops and never
     * loops.  Where no such way exists (a shunned node is the only bridge),
     * the rules below as without the list.
     */
    if (shunned != NULL) {
        const uint32_t ways[] = {
            usable & ~back & ~avoid & ~twins,
            usable & ~back & ~avoid,
        };
        for (unsigned i = 0; i < sizeof ways / sizeof ways[0]; i++) {
            uint32_t productive = ways[i] & productive_links(geometry, here, destination);
            int hop = torus_route_next_hop(
                geometry, here, destination,
                clear_links(geometry, here, destination, productive, shunned, shunned_count));
            if (hop != TORUS_ROUTE_NONE)
                return hop;
        }
        for (unsigned i = 0; i < sizeof ways / sizeof ways[0]; i++) {
            uint32_t sideways = ways[i] & ~productive_links(geometry, here, destination);
            int hop = detour(geometry, clear_links(geometry, here, destination, sideways,
                                                   shunned, shunned_count));
            if (hop != TORUS_ROUTE_NONE)
                return hop;
        }
    }
    /*
     * Best first.  A productive way through a node out of the view beats
     * any detour that may lead nowhere: that node may be alive (expelled,
     * rejoining) and the only bridge, and detours that shun it wander until
     * the TTL ends them.  A U-turn comes last.
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

int torus_route_next_hop_detour(const struct torus_geometry *geometry,
                                uint32_t here, uint32_t destination,
                                uint32_t link_up_mask, uint32_t avoid_mask, int in_link)
{
    return torus_route_next_hop_around(geometry, here, destination, link_up_mask, avoid_mask,
                                       in_link, NULL, 0);
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
