/*
 * Routing, for every pair of nodes of every test shape and mesh pattern:
 * with all links up the dimension-order path has exactly the hop distance,
 * corrects dimensions lowest first, breaks ties toward plus and never
 * crosses a mesh edge; with links failed at random (seeded) every hop taken
 * is an up, productive link, the path is still minimal, and "no route" is
 * answered only when no productive link is up.
 */
#include "net/torus/route.h"
#include "tests/check.h"
#include "tests/net/shapes.h"

static void init_shape(struct torus_geometry *g, const struct test_shape *shape,
                       unsigned pattern)
{
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++)
        mesh[d] = test_mesh(pattern, d);
    CHECK_EQ(torus_geometry_init(g, shape->dims, shape->size, mesh, NULL),
             TORUS_GEOMETRY_OK);
}

/* One hop must move one step in one dimension, without wrapping on a mesh. */
static void check_hop(const struct torus_geometry *g, uint32_t from, uint32_t to,
                      unsigned link)
{
    unsigned dim = torus_geometry_link_dim(link);
    for (unsigned d = 0; d < torus_geometry_dims(g); d++) {
        uint32_t a = torus_geometry_coord(g, from, d);
        uint32_t b = torus_geometry_coord(g, to, d);
        if (d != dim) {
            CHECK_EQ(b, a);
            continue;
        }
        uint32_t size = torus_geometry_size(g, d);
        if (torus_geometry_is_mesh(g, d)) {
            CHECK_EQ(b, torus_geometry_link_is_plus(link) ? a + 1 : a - 1);
            CHECK(b < size);
        } else {
            CHECK_EQ(b, torus_geometry_link_is_plus(link) ? (a + 1) % size
                                                          : (a + size - 1) % size);
        }
    }
}

/* Is link productive from here towards destination (shortens the way)? */
static bool productive(const struct torus_geometry *g, uint32_t here,
                       uint32_t destination, unsigned link)
{
    uint32_t next = torus_geometry_neighbour(g, here, link);
    return next != TORUS_RANK_NONE &&
           torus_geometry_distance(g, next, destination) + 1 ==
               torus_geometry_distance(g, here, destination);
}

static void check_all_up(const struct torus_geometry *g)
{
    uint32_t nodes = torus_geometry_node_count(g);
    for (uint32_t source = 0; source < nodes; source++) {
        CHECK_EQ(torus_route_preferred_hop(g, source, source), TORUS_ROUTE_LOCAL);
        CHECK_EQ(torus_route_path_length(g, source, source), 0);
        for (uint32_t destination = 0; destination < nodes; destination++) {
            uint32_t distance = torus_geometry_distance(g, source, destination);
            CHECK_EQ(torus_route_path_length(g, source, destination), distance);
            uint32_t here = source, hops = 0;
            unsigned last_dim = 0;
            while (here != destination && hops <= distance) {
                int link = torus_route_preferred_hop(g, here, destination);
                CHECK(link >= 0 && (unsigned)link < torus_geometry_link_count(g));
                if (link < 0)
                    break;
                unsigned dim = torus_geometry_link_dim((unsigned)link);
                CHECK(dim >= last_dim); /* dimension order */
                last_dim = dim;
                /* It corrects the lowest differing dimension. */
                for (unsigned d = 0; d < dim; d++)
                    CHECK_EQ(torus_geometry_coord(g, here, d),
                             torus_geometry_coord(g, destination, d));
                CHECK(productive(g, here, destination, (unsigned)link));
                int32_t offset = torus_geometry_offset(g, dim,
                                                       torus_geometry_coord(g, here, dim),
                                                       torus_geometry_coord(g, destination, dim));
                CHECK_EQ(torus_geometry_link_is_plus((unsigned)link), offset > 0);
                uint32_t next = torus_geometry_neighbour(g, here, (unsigned)link);
                CHECK(next != TORUS_RANK_NONE);
                if (next == TORUS_RANK_NONE)
                    break;
                check_hop(g, here, next, (unsigned)link);
                here = next;
                hops++;
            }
            CHECK_EQ(here, destination);
            CHECK_EQ(hops, distance);
        }
    }
    CHECK_EQ(torus_route_next_hop(g, nodes, 0, TORUS_ROUTE_ALL_LINKS_UP), TORUS_ROUTE_NONE);
    CHECK_EQ(torus_route_next_hop(g, 0, nodes, TORUS_ROUTE_ALL_LINKS_UP), TORUS_ROUTE_NONE);
    CHECK_EQ(torus_route_path_length(g, 0, nodes), UINT32_MAX);
}

#define MAX_TEST_NODES 256

/* Links fail in pairs (both ends of a cable) with probability percent. */
static void check_with_failures(const struct torus_geometry *g, struct check_rng *rng,
                                unsigned percent, unsigned *delivered, unsigned *refused)
{
    static uint32_t up[MAX_TEST_NODES];
    uint32_t nodes = torus_geometry_node_count(g);
    for (uint32_t r = 0; r < nodes; r++)
        up[r] = torus_geometry_link_mask(g, r);
    for (uint32_t r = 0; r < nodes; r++)
        for (unsigned link = 0; link < torus_geometry_link_count(g); link += 1) {
            uint32_t n = torus_geometry_neighbour(g, r, link);
            /* Decide each cable once, from its plus end. */
            if (n == TORUS_RANK_NONE || !torus_geometry_link_is_plus(link))
                continue;
            if (check_rng_percent(rng, percent)) {
                up[r] &= ~(1u << link);
                up[n] &= ~(1u << (link ^ 1u));
            }
        }
    for (uint32_t source = 0; source < nodes; source++)
        for (uint32_t destination = 0; destination < nodes; destination++) {
            uint32_t distance = torus_geometry_distance(g, source, destination);
            uint32_t here = source, hops = 0;
            for (;;) {
                int link = torus_route_next_hop(g, here, destination, up[here]);
                if (link == TORUS_ROUTE_LOCAL) {
                    CHECK_EQ(here, destination);
                    CHECK_EQ(hops, distance);
                    (*delivered)++;
                    break;
                }
                if (link == TORUS_ROUTE_NONE) {
                    for (unsigned l = 0; l < torus_geometry_link_count(g); l++)
                        if ((up[here] >> l) & 1u)
                            CHECK(!productive(g, here, destination, l));
                    (*refused)++;
                    break;
                }
                CHECK(link >= 0);
                CHECK((up[here] >> link) & 1u);
                CHECK(productive(g, here, destination, (unsigned)link));
                /* The dimension-order link is taken whenever it is up. */
                int preferred = torus_route_preferred_hop(g, here, destination);
                if ((up[here] >> preferred) & 1u)
                    CHECK_EQ(link, preferred);
                here = torus_geometry_neighbour(g, here, (unsigned)link);
                hops++;
                if (hops > distance) {
                    CHECK(hops <= distance);
                    break;
                }
            }
        }
}

static void check_examples(void)
{
    /* 4x4 torus: from (0,0) to (2,3): x ties (2 of 4) -> x+; with x+ down,
     * x- is just as short; with both down, y- (3 -> shorter way is minus). */
    struct torus_geometry g;
    const uint32_t sizes[] = {4, 4};
    CHECK_EQ(torus_geometry_init(&g, 2, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    const uint32_t to_coords[CONFIG_MAX_DIMS] = {2, 3};
    uint32_t to = torus_geometry_rank(&g, to_coords);
    CHECK_EQ(torus_route_next_hop(&g, 0, to, UINT32_MAX), 0);         /* x+ */
    CHECK_EQ(torus_route_next_hop(&g, 0, to, UINT32_MAX & ~1u), 1);   /* x- */
    CHECK_EQ(torus_route_next_hop(&g, 0, to, UINT32_MAX & ~3u), 3);   /* y- */
    CHECK_EQ(torus_route_next_hop(&g, 0, to, 1u << 2), TORUS_ROUTE_NONE); /* only y+ */
    CHECK_EQ(torus_route_next_hop(&g, 0, to, 0), TORUS_ROUTE_NONE);

    /* Size-2 torus dimension: plus and minus both reach the neighbour. */
    const uint32_t two[] = {2};
    CHECK_EQ(torus_geometry_init(&g, 1, two, NULL, NULL), TORUS_GEOMETRY_OK);
    CHECK_EQ(torus_route_next_hop(&g, 0, 1, UINT32_MAX), 0);
    CHECK_EQ(torus_route_next_hop(&g, 0, 1, 2u), 1);
    CHECK_EQ(torus_route_next_hop(&g, 1, 0, UINT32_MAX), 0);
    /* Size-2 mesh: one link only, no alternative. */
    const bool mesh[] = {true};
    CHECK_EQ(torus_geometry_init(&g, 1, two, mesh, NULL), TORUS_GEOMETRY_OK);
    CHECK_EQ(torus_route_next_hop(&g, 0, 1, UINT32_MAX), 0);
    CHECK_EQ(torus_route_next_hop(&g, 0, 1, 2u), TORUS_ROUTE_NONE);
    CHECK_EQ(torus_route_next_hop(&g, 1, 0, UINT32_MAX), 1);
}

int main(void)
{
    struct check_rng rng;
    check_rng_seed(&rng, 20240601);
    unsigned geometries = 0, delivered = 0, refused = 0;
    for (unsigned s = 0; s < TEST_SHAPE_COUNT; s++)
        for (unsigned pattern = 0; pattern < TEST_MESH_PATTERNS; pattern++) {
            struct torus_geometry g;
            init_shape(&g, &test_shapes[s], pattern);
            if (torus_geometry_node_count(&g) > MAX_TEST_NODES) {
                CHECK(torus_geometry_node_count(&g) <= MAX_TEST_NODES);
                continue;
            }
            check_all_up(&g);
            check_with_failures(&g, &rng, 10, &delivered, &refused);
            check_with_failures(&g, &rng, 40, &delivered, &refused);
            geometries++;
            CHECK_BAIL_IF_MANY();
        }
    printf("checked %u geometries; with failed links %u pairs routed, %u refused\n",
           geometries, delivered, refused);
    CHECK(delivered > 0 && refused > 0); /* both outcomes were exercised */
    check_examples();
    return check_report("net.route");
}
