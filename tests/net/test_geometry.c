/*
 * Geometry: rank/coordinate round trips, neighbours (existence at mesh
 * edges and in size-1 and size-2 dimensions, symmetry), hop distance checked
 * against a breadth-first search of the link graph, link names, init
 * validation and the dims-string parser.
 */
#include <stdlib.h>

#include "net/torus/geometry.h"
#include "tests/check.h"
#include "tests/net/shapes.h"

#define MAX_TEST_NODES 256

static void init_shape(struct torus_geometry *g, const struct test_shape *shape,
                       unsigned pattern)
{
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++)
        mesh[d] = test_mesh(pattern, d);
    struct torus_geometry_error error;
    CHECK_EQ(torus_geometry_init(g, shape->dims, shape->size, mesh, &error),
             TORUS_GEOMETRY_OK);
    CHECK_EQ(error.status, TORUS_GEOMETRY_OK);
}

/* Which neighbour should exist, worked out from first principles. */
static uint32_t expected_neighbour(const struct test_shape *shape, unsigned pattern,
                                   const uint32_t coords[CONFIG_MAX_DIMS],
                                   unsigned link)
{
    unsigned dim = link / 2;
    bool plus = (link % 2) == 0;
    uint32_t size = shape->size[dim];
    uint32_t c[CONFIG_MAX_DIMS];
    memcpy(c, coords, sizeof(c));
    if (size == 1)
        return TORUS_RANK_NONE;
    if (plus) {
        if (c[dim] + 1 == size) {
            if (test_mesh(pattern, dim))
                return TORUS_RANK_NONE;
            c[dim] = 0;
        } else {
            c[dim]++;
        }
    } else {
        if (c[dim] == 0) {
            if (test_mesh(pattern, dim))
                return TORUS_RANK_NONE;
            c[dim] = size - 1;
        } else {
            c[dim]--;
        }
    }
    uint32_t rank = 0, stride = 1;
    for (unsigned d = 0; d < shape->dims; d++) {
        rank += c[d] * stride;
        stride *= shape->size[d];
    }
    return rank;
}

static void check_shape(const struct test_shape *shape, unsigned pattern)
{
    struct torus_geometry g;
    init_shape(&g, shape, pattern);
    uint32_t nodes = torus_geometry_node_count(&g);
    uint32_t expected_nodes = 1;
    for (unsigned d = 0; d < shape->dims; d++)
        expected_nodes *= shape->size[d];
    CHECK_EQ(nodes, expected_nodes);
    CHECK_EQ(torus_geometry_dims(&g), shape->dims);
    CHECK_EQ(torus_geometry_link_count(&g), 2 * shape->dims);
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        bool used = d < shape->dims;
        CHECK_EQ(torus_geometry_size(&g, d), used ? shape->size[d] : 1);
        CHECK_EQ(torus_geometry_is_mesh(&g, d), used && test_mesh(pattern, d));
        CHECK_EQ(torus_geometry_is_torus(&g, d), used && !test_mesh(pattern, d));
    }
    if (nodes > MAX_TEST_NODES) {
        CHECK(nodes <= MAX_TEST_NODES);
        return;
    }

    for (uint32_t rank = 0; rank < nodes; rank++) {
        /* Coordinates by hand: dimension 0 varies fastest. */
        uint32_t expected[CONFIG_MAX_DIMS] = {0};
        uint32_t rest = rank;
        for (unsigned d = 0; d < shape->dims; d++) {
            expected[d] = rest % shape->size[d];
            rest /= shape->size[d];
        }
        uint32_t coords[CONFIG_MAX_DIMS];
        CHECK(torus_geometry_coords(&g, rank, coords));
        CHECK(memcmp(coords, expected, sizeof(coords)) == 0);
        CHECK_EQ(torus_geometry_rank(&g, coords), rank);
        for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++)
            CHECK_EQ(torus_geometry_coord(&g, rank, d), expected[d]);

        uint32_t mask = 0;
        for (unsigned link = 0; link < CONFIG_MAX_LINKS + 2; link++) {
            uint32_t n = torus_geometry_neighbour(&g, rank, link);
            uint32_t want = link < 2 * shape->dims
                                ? expected_neighbour(shape, pattern, coords, link)
                                : TORUS_RANK_NONE;
            CHECK_EQ(n, want);
            if (n == TORUS_RANK_NONE)
                continue;
            mask |= 1u << link;
            /* The cable comes back on the opposite link. */
            CHECK_EQ(torus_geometry_neighbour(&g, n, torus_geometry_opposite_link(link)),
                     rank);
            CHECK_EQ(torus_geometry_distance(&g, rank, n), 1);
            CHECK(n != rank);
            /* A size-2 torus dimension: both links, one neighbour. */
            unsigned dim = torus_geometry_link_dim(link);
            if (shape->size[dim] == 2 && torus_geometry_is_torus(&g, dim))
                CHECK_EQ(torus_geometry_neighbour(&g, rank, link ^ 1u), n);
        }
        CHECK_EQ(torus_geometry_link_mask(&g, rank), mask);
    }
    CHECK_EQ(torus_geometry_neighbour(&g, nodes, 0), TORUS_RANK_NONE);
    CHECK_EQ(torus_geometry_link_mask(&g, nodes), 0);
    uint32_t coords[CONFIG_MAX_DIMS];
    CHECK(!torus_geometry_coords(&g, nodes, coords));
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++)
        coords[d] = 0;
    coords[shape->dims - 1] = shape->size[shape->dims - 1];
    CHECK_EQ(torus_geometry_rank(&g, coords), TORUS_RANK_NONE);

    /* Hop distance = breadth-first distance over the links. */
    static uint32_t bfs[MAX_TEST_NODES];
    static uint32_t queue[MAX_TEST_NODES];
    uint32_t diameter = 0;
    for (uint32_t source = 0; source < nodes; source++) {
        for (uint32_t i = 0; i < nodes; i++)
            bfs[i] = UINT32_MAX;
        unsigned head = 0, tail = 0;
        bfs[source] = 0;
        queue[tail++] = source;
        while (head < tail) {
            uint32_t at = queue[head++];
            for (unsigned link = 0; link < 2 * shape->dims; link++) {
                uint32_t n = torus_geometry_neighbour(&g, at, link);
                if (n != TORUS_RANK_NONE && bfs[n] == UINT32_MAX) {
                    bfs[n] = bfs[at] + 1;
                    queue[tail++] = n;
                }
            }
        }
        CHECK_EQ(tail, nodes); /* connected */
        for (uint32_t target = 0; target < nodes; target++) {
            CHECK_EQ(torus_geometry_distance(&g, source, target), bfs[target]);
            if (bfs[target] > diameter)
                diameter = bfs[target];
        }
    }
    CHECK_EQ(torus_geometry_diameter(&g), diameter);
    CHECK_EQ(torus_geometry_distance(&g, 0, nodes), UINT32_MAX);
}

static void check_offsets(void)
{
    struct torus_geometry g;
    const uint32_t sizes[] = {8, 7, 8};
    const bool mesh[] = {false, false, true};
    CHECK_EQ(torus_geometry_init(&g, 3, sizes, mesh, NULL), TORUS_GEOMETRY_OK);
    CHECK_EQ(torus_geometry_offset(&g, 0, 1, 3), 2);
    CHECK_EQ(torus_geometry_offset(&g, 0, 1, 7), (uint64_t)(int64_t)-2);
    CHECK_EQ(torus_geometry_offset(&g, 0, 7, 1), 2);
    CHECK_EQ(torus_geometry_offset(&g, 0, 0, 4), 4); /* a tie goes plus */
    CHECK_EQ(torus_geometry_offset(&g, 0, 5, 1), 4);
    CHECK(torus_geometry_offset_is_tie(&g, 0, 5, 1));
    CHECK(!torus_geometry_offset_is_tie(&g, 0, 5, 2));
    CHECK(!torus_geometry_offset_is_tie(&g, 0, 5, 5));
    CHECK_EQ(torus_geometry_offset(&g, 1, 0, 4), (uint64_t)(int64_t)-3); /* odd: no tie */
    CHECK(!torus_geometry_offset_is_tie(&g, 1, 0, 4));
    CHECK_EQ(torus_geometry_offset(&g, 2, 0, 7), 7); /* mesh: no wrap */
    CHECK_EQ(torus_geometry_offset(&g, 2, 7, 0), (uint64_t)(int64_t)-7);
    CHECK(!torus_geometry_offset_is_tie(&g, 2, 0, 4));
    CHECK_EQ(torus_geometry_offset(&g, 5, 0, 0), 0); /* unused dimension */
}

static void check_link_names(void)
{
    const char *names[] = {"x+", "x-", "y+", "y-", "z+", "z-",
                           "u+", "u-", "v+", "v-", "w+", "w-"};
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        CHECK(strcmp(torus_geometry_link_name(link), names[link]) == 0);
        unsigned parsed = 99;
        CHECK(torus_geometry_link_from_name(names[link], &parsed));
        CHECK_EQ(parsed, link);
        CHECK_EQ(torus_geometry_link_dim(link), link / 2);
        CHECK_EQ(torus_geometry_link_is_plus(link), link % 2 == 0);
        CHECK_EQ(torus_geometry_link(link / 2, link % 2), link);
    }
    CHECK(strcmp(torus_geometry_link_name(CONFIG_MAX_LINKS), "?") == 0);
    const char *bad[] = {"", "x", "x+ ", "a+", "x*", "X+", "+x", "xx", "w+-", "y"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsigned parsed = 77;
        CHECK(!torus_geometry_link_from_name(bad[i], &parsed));
        CHECK_EQ(parsed, 77);
    }
    unsigned parsed = 77;
    CHECK(!torus_geometry_link_from_name(NULL, &parsed));
}

static void check_init_errors(void)
{
    struct torus_geometry g;
    struct torus_geometry_error error;
    const uint32_t sizes[CONFIG_MAX_DIMS + 1] = {2, 2, 2, 2, 2, 2, 2};
    CHECK_EQ(torus_geometry_init(&g, 0, sizes, NULL, &error), TORUS_GEOMETRY_BAD_DIM_COUNT);
    CHECK_EQ(error.value, 0);
    CHECK_EQ(torus_geometry_node_count(&g), 1); /* left usable */
    CHECK_EQ(torus_geometry_init(&g, CONFIG_MAX_DIMS + 1, sizes, NULL, &error),
             TORUS_GEOMETRY_BAD_DIM_COUNT);
    CHECK_EQ(torus_geometry_init(&g, 2, NULL, NULL, &error), TORUS_GEOMETRY_BAD_DIM_COUNT);
    const uint32_t zero[] = {4, 0, 3};
    CHECK_EQ(torus_geometry_init(&g, 3, zero, NULL, &error), TORUS_GEOMETRY_ZERO_SIZE);
    CHECK_EQ(error.dim, 1);
    char text[160];
    torus_geometry_format_error(&error, text, sizeof(text));
    CHECK_CONTAINS(text, "dimension y has size 0");
    const uint32_t huge[] = {CONFIG_MAX_NODES, 2};
    CHECK_EQ(torus_geometry_init(&g, 2, huge, NULL, &error), TORUS_GEOMETRY_TOO_MANY_NODES);
    CHECK_EQ(error.value, (uint64_t)CONFIG_MAX_NODES * 2);
    const uint32_t enormous[] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    CHECK_EQ(torus_geometry_init(&g, 3, enormous, NULL, &error),
             TORUS_GEOMETRY_TOO_MANY_NODES);
    const uint32_t largest[] = {CONFIG_MAX_NODES};
    CHECK_EQ(torus_geometry_init(&g, 1, largest, NULL, &error), TORUS_GEOMETRY_OK);
    CHECK_EQ(torus_geometry_node_count(&g), CONFIG_MAX_NODES);
    CHECK_EQ(torus_geometry_init(&g, CONFIG_MAX_DIMS, sizes, NULL, &error), TORUS_GEOMETRY_OK);
    CHECK_EQ(torus_geometry_init(&g, 1, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    CHECK(strcmp(torus_geometry_status_text(TORUS_GEOMETRY_TOO_MANY_NODES), "too many nodes") == 0);
    CHECK(strcmp(torus_geometry_status_text(TORUS_GEOMETRY_STATUS_COUNT), "?") == 0);
}

struct parse_case {
    const char *text;
    enum torus_geometry_status status;
    unsigned dims;
    uint32_t size[CONFIG_MAX_DIMS];
    const char *message; /* part of the formatted error */
};

static void check_parser(void)
{
    static const struct parse_case cases[] = {
        {"2x2x2", TORUS_GEOMETRY_OK, 3, {2, 2, 2}, "ok"},
        {"16x8x8", TORUS_GEOMETRY_OK, 3, {16, 8, 8}, "ok"},
        {"1", TORUS_GEOMETRY_OK, 1, {1}, "ok"},
        {"4X4", TORUS_GEOMETRY_OK, 2, {4, 4}, "ok"},
        {"007x2", TORUS_GEOMETRY_OK, 2, {7, 2}, "ok"},
        {"65536", TORUS_GEOMETRY_OK, 1, {65536}, "ok"},
        {"1x2x3x4x5x6", TORUS_GEOMETRY_OK, 6, {1, 2, 3, 4, 5, 6}, "ok"},
        {"2x0", TORUS_GEOMETRY_ZERO_SIZE, 0, {0}, "dimension y has size 0"},
        {"0", TORUS_GEOMETRY_ZERO_SIZE, 0, {0}, "dimension x has size 0"},
        {"2xx2", TORUS_GEOMETRY_SYNTAX, 0, {0}, "unexpected 'x' at position 2"},
        {"7 dims", TORUS_GEOMETRY_SYNTAX, 0, {0}, "unexpected ' ' at position 1"},
        {"", TORUS_GEOMETRY_SYNTAX, 0, {0}, "unexpected end at position 0"},
        {"2x", TORUS_GEOMETRY_SYNTAX, 0, {0}, "unexpected end at position 2"},
        {"x2", TORUS_GEOMETRY_SYNTAX, 0, {0}, "unexpected 'x' at position 0"},
        {"-2", TORUS_GEOMETRY_SYNTAX, 0, {0}, "unexpected '-'"},
        {"2x-2", TORUS_GEOMETRY_SYNTAX, 0, {0}, "position 2"},
        {"2 x 2", TORUS_GEOMETRY_SYNTAX, 0, {0}, "position 1"},
        {"2x2\n", TORUS_GEOMETRY_SYNTAX, 0, {0}, "character code 10"},
        {"1x1x1x1x1x1x1", TORUS_GEOMETRY_BAD_DIM_COUNT, 0, {0}, "7 dimensions (expected 1 to 6"},
        {"1000x1000", TORUS_GEOMETRY_TOO_MANY_NODES, 0, {0}, "1000000 nodes (expected at most 65536)"},
        {"65537", TORUS_GEOMETRY_TOO_MANY_NODES, 0, {0}, "65537 nodes"},
        {"99999999999999999999999", TORUS_GEOMETRY_TOO_MANY_NODES, 0, {0}, "2^40 or more nodes"},
        {"4096x4096x4096x4096", TORUS_GEOMETRY_TOO_MANY_NODES, 0, {0}, "2^40 or more"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct parse_case *c = &cases[i];
        unsigned dims = 99;
        uint32_t size[CONFIG_MAX_DIMS] = {0};
        struct torus_geometry_error error;
        enum torus_geometry_status status =
            torus_geometry_parse_dims(c->text, &dims, size, &error);
        if (status != c->status)
            fprintf(stderr, "parsing '%s'\n", c->text);
        CHECK_EQ(status, c->status);
        CHECK_EQ(error.status, c->status);
        char text[200];
        size_t length = torus_geometry_format_error(&error, text, sizeof(text));
        CHECK_EQ(length, strlen(text));
        CHECK_CONTAINS(text, c->message);
        if (status == TORUS_GEOMETRY_OK) {
            CHECK_EQ(dims, c->dims);
            for (unsigned d = 0; d < c->dims; d++)
                CHECK_EQ(size[d], c->size[d]);
            struct torus_geometry g;
            CHECK_EQ(torus_geometry_init(&g, dims, size, NULL, NULL), TORUS_GEOMETRY_OK);
        } else {
            CHECK_EQ(dims, 0);
        }
    }
    unsigned dims = 5;
    uint32_t size[CONFIG_MAX_DIMS];
    CHECK_EQ(torus_geometry_parse_dims(NULL, &dims, size, NULL), TORUS_GEOMETRY_SYNTAX);

    /* The message builder truncates and always terminates. */
    struct torus_geometry_error error;
    CHECK_EQ(torus_geometry_parse_dims("1000x1000", &dims, size, &error),
             TORUS_GEOMETRY_TOO_MANY_NODES);
    char tiny[8];
    memset(tiny, 'Z', sizeof(tiny));
    CHECK_EQ(torus_geometry_format_error(&error, tiny, sizeof(tiny)), 7);
    CHECK(strcmp(tiny, "1000000") == 0);
    CHECK_EQ(torus_geometry_format_error(&error, tiny, 0), 0);
    CHECK_EQ(tiny[0], '1');
}

int main(void)
{
    unsigned geometries = 0;
    for (unsigned s = 0; s < TEST_SHAPE_COUNT; s++)
        for (unsigned pattern = 0; pattern < TEST_MESH_PATTERNS; pattern++) {
            check_shape(&test_shapes[s], pattern);
            geometries++;
            CHECK_BAIL_IF_MANY();
        }
    printf("checked %u geometries\n", geometries);
    check_offsets();
    check_link_names();
    check_init_errors();
    check_parser();
    return check_report("net.geometry");
}
