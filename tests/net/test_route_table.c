/*
 * The Phoenix routing tables (net/torus/route_table.h): the update rule,
 * case by case; each entry sent to each neighbour at most once per change;
 * a wall of cuts converges to shortest routes for every pair, where the
 * detour router loses pairs; no loop at any moment of a randomized
 * sequence of cuts and repairs (every pair walked after every delivery);
 * back to dimension order once every cable is mended.
 */
#include <stdlib.h>

#include "tests/net/route_table_harness.h"

/* ------------------------------------------------------------------ */
/* The update rule                                                      */
/* ------------------------------------------------------------------ */

/* An advertisement of one route record. */
static size_t route_advert(uint8_t *out, uint32_t destination, uint32_t seq, uint16_t hops)
{
    out[0] = ROUTE_TABLE_FORMAT;
    out[1] = 0;
    out[2] = 0;
    out[3] = 0;
    out[4] = 1;
    out[5] = 0;
    uint8_t *p = out + ROUTE_TABLE_ADVERT_HEADER;
    for (unsigned i = 0; i < 4; i++) {
        p[i] = (uint8_t)(destination >> (8 * i));
        p[4 + i] = (uint8_t)(seq >> (8 * i));
    }
    p[8] = (uint8_t)hops;
    p[9] = (uint8_t)(hops >> 8);
    return ROUTE_TABLE_ADVERT_HEADER + ROUTE_TABLE_ROUTE_RECORD;
}

enum via { VIA_DOR, VIA_OTHER };

struct rule_case {
    const char *name;
    enum via first_via;
    uint32_t first_seq;
    uint16_t first_hops;
    bool lose_first; /* the first route's link goes down before the second */
    enum via second_via;
    uint32_t second_seq;
    uint16_t second_hops;
    uint32_t want_seq;
    uint16_t want_hops; /* ROUTE_TABLE_HOPS_NONE: still lost */
    enum via want_via;
};

static const struct rule_case rule_cases[] = {
    {"fresher beats shorter", VIA_DOR, 10, 1, false, VIA_OTHER, 11, 6, 11, 7, VIA_OTHER},
    {"same seq, fewer hops wins", VIA_DOR, 10, 5, false, VIA_OTHER, 10, 2, 10, 3, VIA_OTHER},
    {"same seq, more hops loses", VIA_DOR, 10, 2, false, VIA_OTHER, 10, 5, 10, 3, VIA_DOR},
    {"stale never wins, even at 0 hops", VIA_DOR, 10, 5, false, VIA_OTHER, 9, 0, 10, 6, VIA_DOR},
    {"stale never wins a lost route", VIA_DOR, 10, 5, true, VIA_OTHER, 9, 0, 10,
     ROUTE_TABLE_HOPS_NONE, VIA_DOR},
    {"as many hops: the dimension-order link", VIA_OTHER, 10, 3, false, VIA_DOR, 10, 3, 10, 4,
     VIA_DOR},
    {"as many hops elsewhere: kept", VIA_DOR, 10, 3, false, VIA_OTHER, 10, 3, 10, 4, VIA_DOR},
    {"lost, same seq, below feasibility", VIA_DOR, 10, 3, true, VIA_OTHER, 10, 3, 10, 4,
     VIA_OTHER},
    {"lost, same seq, not below feasibility", VIA_DOR, 10, 3, true, VIA_OTHER, 10, 4, 10,
     ROUTE_TABLE_HOPS_NONE, VIA_DOR},
    {"lost, fresher seq, any hops", VIA_DOR, 10, 1, true, VIA_OTHER, 11, 9, 11, 10, VIA_OTHER},
};

static void test_update_rule(void)
{
    uint32_t sizes[] = {4, 4};
    struct torus_geometry g;
    CHECK_EQ(torus_geometry_init(&g, 2, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    const uint32_t here = 5;        /* (1,1) */
    const uint32_t destination = 7; /* (3,1): two hops in x */
    int dor = torus_route_preferred_hop(&g, here, destination);
    CHECK(dor >= 0);
    unsigned other = torus_geometry_link(1, TORUS_DIRECTION_PLUS);
    CHECK((int)other != dor);
    for (size_t i = 0; i < sizeof rule_cases / sizeof rule_cases[0]; i++) {
        const struct rule_case *c = &rule_cases[i];
        struct route_table table;
        struct route_table_config config = {
            .geometry = g, .rank = here, .link_mask = torus_geometry_link_mask(&g, here)};
        route_table_init(&table, &config);
        for (unsigned l = 0; l < 4; l++)
            route_table_link_changed(&table, l, true);
        unsigned first = c->first_via == VIA_DOR ? (unsigned)dor : other;
        unsigned second = c->second_via == VIA_DOR ? (unsigned)dor : other;
        unsigned want = c->want_via == VIA_DOR ? (unsigned)dor : other;
        uint8_t buffer[64];
        CHECK(route_table_receive(&table, first, buffer,
                                  route_advert(buffer, destination, c->first_seq, c->first_hops)));
        if (c->lose_first)
            route_table_link_changed(&table, first, false);
        CHECK(route_table_receive(&table, second, buffer,
                                  route_advert(buffer, destination, c->second_seq,
                                               c->second_hops)));
        const struct route_table_entry *entry = route_table_find(&table, destination);
        CHECKF(entry != NULL, "%s", c->name);
        if (entry == NULL)
            continue;
        CHECKF(entry->seq == c->want_seq && entry->hops == c->want_hops,
               "%s: seq %" PRIu32 " hops %u, want %" PRIu32 " %u", c->name, entry->seq,
               entry->hops, c->want_seq, c->want_hops);
        if (c->want_hops != ROUTE_TABLE_HOPS_NONE) {
            CHECKF(entry->link == want, "%s: link %u, want %u", c->name, entry->link, want);
            CHECKF(route_table_next_hop(&table, destination) == (int)want, "%s", c->name);
        } else {
            CHECKF(route_table_next_hop(&table, destination) == TORUS_ROUTE_NONE, "%s", c->name);
        }
    }
}

/* Malformed advertisements are refused whole, and counted. */
static void test_bad_adverts(void)
{
    uint32_t sizes[] = {4, 4};
    struct torus_geometry g;
    CHECK_EQ(torus_geometry_init(&g, 2, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    struct route_table table;
    struct route_table_config config = {
        .geometry = g, .rank = 0, .link_mask = torus_geometry_link_mask(&g, 0)};
    route_table_init(&table, &config);
    route_table_link_changed(&table, 0, true);
    uint8_t buffer[64];
    size_t length = route_advert(buffer, 3, 10, 1);
    CHECK(!route_table_receive(&table, 1, buffer, length)); /* link not up */
    CHECK(!route_table_receive(&table, 0, buffer, length - 1));
    CHECK(!route_table_receive(&table, 0, NULL, 0));
    route_advert(buffer, 16, 10, 1); /* no such node */
    CHECK(!route_table_receive(&table, 0, buffer, length));
    route_advert(buffer, 3, 10, ROUTE_TABLE_HOPS_NONE);
    CHECK(!route_table_receive(&table, 0, buffer, length));
    buffer[0] = 2; /* unknown format */
    CHECK(!route_table_receive(&table, 0, buffer, length));
    CHECK_EQ(route_table_counter(&table, ROUTE_TABLE_COUNT_BAD_ADVERTS), 6);
    CHECK(route_table_find(&table, 3) == NULL);
    CHECK_EQ(route_table_next_hop(&table, 3), ROUTE_TABLE_DEFAULT);
}

/* Route lengths (found by fuzz.route_table): a record that made a table
 * hold more hops than its neighbours' decoders take made them refuse its
 * whole adverts, and every other record in them with it.  A route record's
 * hops are below the node count; one that would make a route of node-count
 * hops (longer than any loop-free path) is ignored. */
static void test_route_lengths(void)
{
    uint32_t sizes[] = {4, 4};
    struct torus_geometry g;
    CHECK_EQ(torus_geometry_init(&g, 2, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    static struct route_table tables[2];
    for (uint32_t n = 0; n < 2; n++) {
        struct route_table_config config = {
            .geometry = g, .rank = n, .link_mask = torus_geometry_link_mask(&g, n)};
        route_table_init(&tables[n], &config);
        for (unsigned l = 0; l < torus_geometry_link_count(&g); l++)
            route_table_link_changed(&tables[n], l, true);
    }
    unsigned x_plus = torus_geometry_link(0, TORUS_DIRECTION_PLUS);
    unsigned y_plus = torus_geometry_link(1, TORUS_DIRECTION_PLUS);
    uint8_t buffer[TORUS_FRAME_MAX_PAYLOAD];
    size_t length = route_advert(buffer, 5, 9, ROUTE_TABLE_HOPS_NONE - 2u);
    route_table_receive(&tables[0], y_plus, buffer, length); /* refused now */
    length = route_advert(buffer, 7, 9, 15); /* 16 hops from node 0: too long */
    CHECK(route_table_receive(&tables[0], y_plus, buffer, length));
    length = route_advert(buffer, 6, 9, 2);
    CHECK(route_table_receive(&tables[0], y_plus, buffer, length));
    CHECK(route_table_find(&tables[0], 5) == NULL);
    CHECK(route_table_find(&tables[0], 7) == NULL);
    CHECK_EQ(route_table_counter(&tables[0], ROUTE_TABLE_COUNT_ROUTES_TOO_LONG), 1);

    length = route_table_advert(&tables[0], x_plus, buffer, sizeof buffer, 0);
    CHECK(length > 0);
    CHECKF(route_table_receive(&tables[1], x_plus ^ 1u, buffer, length),
           "node 1 refused node 0's advert");
    const struct route_table_entry *entry = route_table_find(&tables[1], 6);
    CHECK(entry != NULL && entry->hops == 4);
    CHECK(route_table_find(&tables[1], 7) == NULL);
}

/* A node restarts before its record of a dead cable leaves it (found by
 * fuzz.route_table): 0-1's x cable cut, 1 restarts at once, and that
 * cable, never up in 1's new life, is no news there.  0's record of its
 * end must be enough for 0 to raise and be routed around the cut. */
static void test_restart_with_dead_cable(void)
{
    struct harness h;
    harness_init(&h, "4x4", 1);
    unsigned x_plus = torus_geometry_link(0, TORUS_DIRECTION_PLUS);
    CHECK_EQ(harness_far(&h, 0, x_plus), 1);
    harness_cable(&h, 0, x_plus, false);
    struct route_table_config config = {.geometry = h.geometry,
                                        .rank = 1,
                                        .link_mask = torus_geometry_link_mask(&h.geometry, 1),
                                        .incarnation = 2};
    route_table_init(&h.tables[1], &config);
    for (unsigned l = 0; l < h.links; l++)
        if (l != torus_geometry_opposite_link(x_plus))
            route_table_link_changed(&h.tables[1], l, true);
    harness_settle(&h, 100000);
    uint32_t hops = 0;
    CHECK_EQ(harness_walk(&h, 1, 0, &hops), WALK_DELIVERED);
    uint64_t loops = 0;
    uint64_t undelivered = 0;
    harness_walk_all(&h, &loops, &undelivered);
    CHECK_EQ(loops, 0);
    CHECK_EQ(undelivered, 0);
    harness_free(&h);
}

/* One link record (originator, seq, link, down) and one route record
 * (destination, seq, hops) in one advertisement. */
static size_t link_and_route_advert(uint8_t *out, uint32_t originator, uint32_t link_seq,
                                    unsigned link, bool down, uint32_t destination,
                                    uint32_t seq, uint16_t hops)
{
    uint8_t route[ROUTE_TABLE_ADVERT_HEADER + ROUTE_TABLE_ROUTE_RECORD];
    route_advert(route, destination, seq, hops);
    out[0] = ROUTE_TABLE_FORMAT;
    out[1] = 0;
    out[2] = 1;
    out[3] = 0;
    out[4] = 1;
    out[5] = 0;
    uint8_t *p = out + ROUTE_TABLE_ADVERT_HEADER;
    for (unsigned i = 0; i < 4; i++) {
        p[i] = (uint8_t)(originator >> (8 * i));
        p[4 + i] = (uint8_t)(link_seq >> (8 * i));
    }
    p[8] = (uint8_t)link;
    p[9] = down ? 1u : 0u;
    memcpy(p + ROUTE_TABLE_LINK_RECORD, route + ROUTE_TABLE_ADVERT_HEADER,
           ROUTE_TABLE_ROUTE_RECORD);
    return ROUTE_TABLE_ADVERT_HEADER + ROUTE_TABLE_LINK_RECORD + ROUTE_TABLE_ROUTE_RECORD;
}

/* Sequence numbers near the top of the space (issue 20): node 0, in its
 * 65535th life (seqs from 0xFFFF0000), and its neighbour 1 hear of 0's
 * routes and y- link at UINT32_MAX; 0 jumps past that, wrapping to 0, and
 * 1 must take what 0 then sends as fresher, not as stale for good. */
static void test_seq_wrap(void)
{
    CHECK(route_table_seq_fresher(0, UINT32_MAX));
    CHECK(route_table_seq_fresher(0x10001u, UINT32_MAX));
    CHECK(!route_table_seq_fresher(UINT32_MAX, 0));
    CHECK(!route_table_seq_fresher(7, 7));
    CHECK(!route_table_seq_fresher(0x80000000u, 0) && !route_table_seq_fresher(0, 0x80000000u));

    uint32_t sizes[] = {4, 4};
    struct torus_geometry g;
    CHECK_EQ(torus_geometry_init(&g, 2, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    static struct route_table tables[2];
    for (uint32_t n = 0; n < 2; n++) {
        struct route_table_config config = {.geometry = g,
                                            .rank = n,
                                            .link_mask = torus_geometry_link_mask(&g, n),
                                            .incarnation = n == 0 ? 0xFFFFu : 1u};
        route_table_init(&tables[n], &config);
        for (unsigned l = 0; l < torus_geometry_link_count(&g); l++)
            route_table_link_changed(&tables[n], l, true);
    }
    unsigned x_plus = torus_geometry_link(0, TORUS_DIRECTION_PLUS);
    unsigned y_plus = torus_geometry_link(1, TORUS_DIRECTION_PLUS);
    unsigned y_minus = torus_geometry_link(1, TORUS_DIRECTION_MINUS);
    CHECK_EQ(torus_geometry_neighbour(&g, 0, x_plus), 1);
    uint8_t buffer[TORUS_FRAME_MAX_PAYLOAD];
    size_t length = link_and_route_advert(buffer, 0, UINT32_MAX, y_minus, true, 0, UINT32_MAX, 2);
    CHECK(route_table_receive(&tables[1], y_plus, buffer, length));
    CHECK(route_table_receive(&tables[0], y_plus, buffer, length));
    CHECK(route_table_link_is_down(&tables[1], 0, y_minus));

    /* 0 says its y- link is up and advertises itself, both past UINT32_MAX
     * (its raise waits for its link record to go out on every link). */
    unsigned others[] = {x_plus ^ 1u, y_plus, y_minus};
    for (unsigned i = 0; i < 3; i++)
        CHECK(route_table_advert(&tables[0], others[i], buffer, sizeof buffer, 0) > 0);
    length = route_table_advert(&tables[0], x_plus, buffer, sizeof buffer, 0);
    CHECK(length > 0);
    CHECK_EQ(tables[0].own_seq, 0); /* wrapped */
    CHECK(route_table_receive(&tables[1], x_plus ^ 1u, buffer, length));
    CHECKF(!route_table_link_is_down(&tables[1], 0, y_minus),
           "0's link record after the wrap taken as stale");
    const struct route_table_entry *entry = route_table_find(&tables[1], 0);
    CHECK(entry != NULL);
    CHECKF(entry != NULL && entry->seq == tables[0].own_seq && entry->hops == 1,
           "0's route after the wrap taken as stale: seq %u hops %u, 0 sent %u",
           entry != NULL ? entry->seq : 0u, entry != NULL ? entry->hops : 0u, tables[0].own_seq);
    CHECK_EQ(route_table_next_hop(&tables[1], 0), (int)(x_plus ^ 1u));
}

/* ------------------------------------------------------------------ */
/* A wall of cuts                                                       */
/* ------------------------------------------------------------------ */

/* Hop distances from source over the cables up (BFS); UINT32_MAX: cut off. */
static void distances_from(const struct harness *h, uint32_t source, uint32_t *distance,
                           uint32_t *queue)
{
    for (uint32_t n = 0; n < h->nodes; n++)
        distance[n] = UINT32_MAX;
    uint32_t head = 0;
    uint32_t tail = 0;
    distance[source] = 0;
    queue[tail++] = source;
    while (head < tail) {
        uint32_t here = queue[head++];
        for (unsigned l = 0; l < h->links; l++) {
            if (((h->tables[here].up_mask >> l) & 1u) == 0)
                continue;
            uint32_t next = harness_far(h, here, l);
            if (distance[next] == UINT32_MAX) {
                distance[next] = distance[here] + 1;
                queue[tail++] = next;
            }
        }
    }
}

/* The detour router (route.h) from source to destination, as the network
 * forwards with `--routing detour`: true when it arrives within the TTL. */
static bool detour_arrives(const struct harness *h, uint32_t source, uint32_t destination)
{
    uint32_t here = source;
    int in_link = -1;
    uint32_t ttl = torus_route_ttl(&h->geometry);
    for (uint32_t hops = 0; hops <= ttl; hops++) {
        int link = torus_route_next_hop_detour(&h->geometry, here, destination,
                                               h->tables[here].up_mask, 0, in_link);
        if (link == TORUS_ROUTE_LOCAL)
            return true;
        if (link < 0)
            return false;
        here = harness_far(h, here, (unsigned)link);
        in_link = link ^ 1;
    }
    return false;
}

/* Every x cable across both x boundaries of a 4x4x4 torus (x 3|0 and 1|2)
 * cut but the one at y = z = 0 of each: 30 cuts. */
static void wall_of_cuts(struct harness *h, bool up)
{
    unsigned x_plus = torus_geometry_link(0, TORUS_DIRECTION_PLUS);
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t z = 0; z < 4; z++) {
            if (y == 0 && z == 0)
                continue;
            const uint32_t xs[] = {1, 3};
            for (unsigned i = 0; i < 2; i++) {
                uint32_t coords[CONFIG_MAX_DIMS] = {xs[i], y, z};
                harness_cable(h, torus_geometry_rank(&h->geometry, coords), x_plus, up);
            }
        }
}

/* Every pair's walk is the dimension-order route. */
static void check_dimension_order(const struct harness *h, const char *when)
{
    uint64_t off = 0;
    for (uint32_t s = 0; s < h->nodes; s++)
        for (uint32_t d = 0; d < h->nodes; d++) {
            uint32_t here = s;
            for (uint32_t step = 0; step <= h->nodes && here != d; step++) {
                int link = route_table_next_hop(&h->tables[here], d);
                if (link == ROUTE_TABLE_DEFAULT)
                    link = torus_route_preferred_hop(&h->geometry, here, d);
                if (link != torus_route_preferred_hop(&h->geometry, here, d)) {
                    off++;
                    break;
                }
                here = harness_far(h, here, (unsigned)link);
            }
        }
    CHECKF(off == 0, "%s: %" PRIu64 " pairs off dimension order", when, off);
}

static void test_wall_of_cuts(void)
{
    struct harness h;
    harness_init(&h, "4x4x4", 16);
    harness_settle(&h, 100000);
    CHECK_EQ(h.deliveries, 0); /* nothing failed, nothing said */
    wall_of_cuts(&h, false);

    /* The detour router loses pairs across the wall. */
    uint64_t detour_lost = 0;
    for (uint32_t s = 0; s < h.nodes; s++)
        for (uint32_t d = 0; d < h.nodes; d++)
            detour_lost += !detour_arrives(&h, s, d);
    CHECKF(detour_lost > 0, "the detour router reaches every pair");

    /* Walked every so often on the way (the randomized tests below walk
     * after every delivery), and at the end. */
    uint64_t loops = 0;
    uint64_t undelivered = 0;
    for (uint64_t i = 0; i < 400000; i++) {
        if (!harness_step(&h))
            break;
        if (i % 512 == 0)
            harness_walk_all(&h, &loops, &undelivered);
    }
    CHECK_EQ(loops, 0);
    loops = 0;
    undelivered = 0;
    harness_walk_all(&h, &loops, &undelivered);
    CHECK_EQ(loops, 0);
    CHECK_EQ(undelivered, 0);

    /* Shortest routes over what is left, for every pair. */
    uint32_t *distance = calloc(h.nodes, sizeof *distance);
    uint32_t *queue = calloc(h.nodes, sizeof *queue);
    uint64_t longer = 0;
    for (uint32_t s = 0; s < h.nodes; s++) {
        distances_from(&h, s, distance, queue);
        for (uint32_t d = 0; d < h.nodes; d++) {
            uint32_t hops = 0;
            if (harness_walk(&h, s, d, &hops) == WALK_DELIVERED && hops != distance[d])
                longer++;
        }
    }
    CHECK_EQ(longer, 0);
    free(distance);
    free(queue);

    /* Each entry went to each neighbour at most once per change, and the
     * records went merged, several a frame. */
    CHECK_EQ(h.duplicate_sends, 0);
    uint64_t adverts = 0;
    uint64_t records = 0;
    for (uint32_t n = 0; n < h.nodes; n++) {
        adverts += route_table_counter(&h.tables[n], ROUTE_TABLE_COUNT_ADVERTS_SENT);
        records += route_table_counter(&h.tables[n], ROUTE_TABLE_COUNT_RECORDS_SENT);
        CHECK_EQ(route_table_counter(&h.tables[n], ROUTE_TABLE_COUNT_TABLE_FULL), 0);
        CHECK_EQ(route_table_counter(&h.tables[n], ROUTE_TABLE_COUNT_LINKS_FULL), 0);
    }
    CHECKF(records > 2 * adverts, "%" PRIu64 " records in %" PRIu64 " adverts", records,
           adverts);

    /* Mended: back to dimension order. */
    wall_of_cuts(&h, true);
    harness_settle(&h, 400000);
    check_dimension_order(&h, "wall mended");
    CHECK_EQ(h.duplicate_sends, 0);
    harness_free(&h);
}

/* ------------------------------------------------------------------ */
/* Randomized cuts and repairs                                          */
/* ------------------------------------------------------------------ */

static void test_random_cuts(const char *dims, uint64_t seed, unsigned events)
{
    struct harness h;
    harness_init(&h, dims, seed);
    uint64_t rng = seed * 7919u + 1u;
    size_t cables = (size_t)h.nodes * h.links;
    bool *cut = calloc(cables, sizeof *cut);
    uint64_t loops = 0;
    uint64_t undelivered = 0;
    for (unsigned e = 0; e < events; e++) {
        /* A plus link names its cable: cut one that is up, or mend one. */
        uint32_t node = (uint32_t)splitmix64_below(&rng, h.nodes);
        unsigned link = (unsigned)splitmix64_below(&rng, h.links) & ~1u;
        size_t cable = (size_t)node * h.links + link;
        cut[cable] = !cut[cable];
        harness_cable(&h, node, link, !cut[cable]);
        unsigned deliveries = (unsigned)splitmix64_below(&rng, 40);
        for (unsigned i = 0; i < deliveries; i++) {
            if (!harness_step(&h))
                break;
            harness_walk_all(&h, &loops, &undelivered);
        }
    }
    for (uint64_t i = 0; i < 500000; i++) {
        if (!harness_step(&h))
            break;
        harness_walk_all(&h, &loops, &undelivered);
    }
    CHECKF(loops == 0, "%s seed %" PRIu64 ": %" PRIu64 " looping walks", dims, seed, loops);
    CHECK_EQ(h.duplicate_sends, 0);
    /* Settled: every pair the cables still join is delivered. */
    uint32_t *distance = calloc(h.nodes, sizeof *distance);
    uint32_t *queue = calloc(h.nodes, sizeof *queue);
    uint64_t lost = 0;
    for (uint32_t s = 0; s < h.nodes; s++) {
        distances_from(&h, s, distance, queue);
        for (uint32_t d = 0; d < h.nodes; d++) {
            uint32_t hops = 0;
            if (distance[d] != UINT32_MAX && harness_walk(&h, s, d, &hops) != WALK_DELIVERED)
                lost++;
        }
    }
    CHECKF(lost == 0, "%s seed %" PRIu64 ": %" PRIu64 " joined pairs undelivered", dims, seed,
           lost);
    free(distance);
    free(queue);
    /* Every cable mended: back to dimension order. */
    for (size_t cable = 0; cable < cables; cable++)
        if (cut[cable])
            harness_cable(&h, (uint32_t)(cable / h.links), (unsigned)(cable % h.links), true);
    harness_settle(&h, 500000);
    check_dimension_order(&h, dims);
    free(cut);
    harness_free(&h);
}

int main(void)
{
    test_update_rule();
    test_bad_adverts();
    test_seq_wrap();
    test_route_lengths();
    test_restart_with_dead_cable();
    test_wall_of_cuts();
    for (uint64_t seed = 1; seed <= 6; seed++) {
        test_random_cuts("4x4", seed, 40);
        test_random_cuts("4x3x2", seed, 30);
    }
    return check_report("net.route_table");
}
