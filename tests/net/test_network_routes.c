/*
 * `--routing table` through the whole network stack: sixteen networks of a
 * 4x4 torus in one process over a fake driver (this file implements
 * driver.h; each cable a queue each way), keyed.  Every x cable across both
 * x boundaries is cut but the one at y = 0 (6 cuts); once the link layers
 * have seen the cuts and the tables have settled, every node sends a frame
 * to every other: all 240 arrive, none out of TTL or without a route, the
 * tables' advertisements went as route frames (tagged: no bad tags), and
 * the routes through the wall are not the dimension-order ones.
 */
#include <stdlib.h>
#include <string.h>

#include "net/torus/driver.h"
#include "net/torus/network.h"
#include "net/torus/route.h"
#include "tests/check.h"

#define MS 1000000ull
#define NODES 16u
#define LINKS 4u
#define QUEUE 256u

struct fake_queue {
    size_t length[QUEUE];
    uint8_t bytes[QUEUE][CONFIG_MAX_FRAME];
    unsigned head, count;
};

static struct torus_geometry geometry;
static struct fake_queue *queues; /* [node * LINKS + link]: sent by node on link */
static unsigned current;          /* the node whose network is being polled */

bool torus_driver_init(const struct torus_geometry *g, uint32_t rank, uint32_t *link_mask,
                       const char **error)
{
    (void)error;
    *link_mask = torus_geometry_link_mask(g, rank);
    return true;
}

bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length)
{
    struct fake_queue *q = &queues[current * LINKS + link];
    if (q->count == QUEUE)
        return false; /* the device is full: the link layer sends it again */
    unsigned at = (q->head + q->count) % QUEUE;
    q->length[at] = length;
    memcpy(q->bytes[at], frame, length);
    q->count++;
    return true;
}

size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity)
{
    uint32_t far = torus_geometry_neighbour(&geometry, current, link);
    struct fake_queue *q = &queues[far * LINKS + (link ^ 1u)];
    if (q->count == 0)
        return 0;
    size_t length = q->length[q->head];
    if (length <= capacity)
        memcpy(buffer, q->bytes[q->head], length);
    q->head = (q->head + 1u) % QUEUE;
    q->count--;
    return length <= capacity ? length : 0;
}

const struct torus_driver_counters *torus_driver_counters(unsigned link)
{
    (void)link;
    static const struct torus_driver_counters none;
    return &none;
}

const char *torus_driver_name(void)
{
    return "fake";
}

static struct torus_network *networks;
static uint8_t arrived[NODES][NODES]; /* [destination][source] */

static void on_ping(void *context, const struct torus_frame_header *header,
                    const uint8_t *payload, uint64_t now_ns)
{
    (void)payload;
    (void)now_ns;
    unsigned node = (unsigned)(uintptr_t)context;
    CHECK(header->destination == node);
    if (header->source < NODES)
        arrived[node][header->source]++;
}

static uint64_t run(uint64_t now, uint64_t until)
{
    for (; now < until; now += 100000u) {
        for (current = 0; current < NODES; current++)
            torus_network_poll(&networks[current], 64, now);
    }
    return now;
}

/* Every node sends one frame to every other (in turns, so that no ring
 * overflows). */
static uint64_t send_all_pairs(uint64_t now)
{
    for (uint32_t s = 0; s < NODES; s++) {
        for (uint32_t d = 0; d < NODES; d++) {
            current = s;
            if (d != s)
                CHECK_EQ(torus_network_send(&networks[s], d, TORUS_FRAME_TYPE_PING, 0, "ping", 4,
                                            now),
                         TORUS_NETWORK_OK);
        }
        now = run(now, now + MS);
    }
    return now;
}

static uint64_t total(enum torus_network_counter counter)
{
    uint64_t sum = 0;
    for (unsigned n = 0; n < NODES; n++)
        sum += torus_network_counter(&networks[n], counter);
    return sum;
}

int main(void)
{
    uint32_t sizes[2] = {4, 4};
    CHECK_EQ(torus_geometry_init(&geometry, 2, sizes, NULL, NULL), TORUS_GEOMETRY_OK);
    queues = calloc(NODES * LINKS, sizeof *queues);
    networks = calloc(NODES, sizeof *networks);
    if (queues == NULL || networks == NULL)
        return 1;
    for (current = 0; current < NODES; current++) {
        struct torus_network_config config;
        memset(&config, 0, sizeof config);
        config.geometry = geometry;
        config.rank = current;
        config.incarnation = 1;
        config.link_rto_ns = 2 * MS;
        config.link_retries = 3;
        config.keyed = true;
        for (unsigned i = 0; i < TORUS_FRAME_KEY_BYTES; i++)
            config.key.bytes[i] = (uint8_t)(0x5a ^ (i * 37u));
        config.routing_table = true;
        CHECK(torus_driver_init(&geometry, current, &config.link_mask, NULL));
        torus_network_init(&networks[current], &config);
        torus_network_set_handler(&networks[current], TORUS_FRAME_TYPE_PING, on_ping,
                                  (void *)(uintptr_t)current);
    }
    uint64_t now = run(0, 50 * MS);
    for (unsigned n = 0; n < NODES; n++)
        CHECK_EQ(networks[n].up_mask, 0xFu);
    CHECK_EQ(total(TORUS_NETWORK_COUNT_SENT), 0); /* all up, nothing to say */

    /* The wall: x+ of x = 1 and x = 3 cut for y = 1..3, at both ends. */
    unsigned x_plus = torus_geometry_link(0, TORUS_DIRECTION_PLUS);
    for (uint32_t y = 1; y < 4; y++)
        for (uint32_t x = 1; x < 4; x += 2) {
            uint32_t node = x + 4 * y;
            uint32_t far = torus_geometry_neighbour(&geometry, node, x_plus);
            CHECK(torus_network_cut_link(&networks[node], x_plus, true));
            CHECK(torus_network_cut_link(&networks[far], x_plus ^ 1u, true));
        }
    /* Links have no keepalive here: a first round of frames across finds
     * the cuts (the link layers time out), and is partly lost. */
    now = send_all_pairs(now);
    now = run(now, now + 300 * MS);
    CHECK(total(TORUS_NETWORK_COUNT_DELIVERED) < NODES * (NODES - 1));
    memset(arrived, 0, sizeof arrived);
    uint64_t delivered = total(TORUS_NETWORK_COUNT_DELIVERED);

    /* Settled: the routes across go through the one cable left. */
    const struct route_table *at5 = torus_network_route_table(&networks[5]); /* (1,1) */
    CHECK(at5 != NULL);
    if (at5 != NULL) {
        CHECK_EQ(route_table_next_hop(at5, 6), torus_geometry_link(1, TORUS_DIRECTION_MINUS));
        CHECK(route_table_next_hop(at5, 6) != torus_route_preferred_hop(&geometry, 5, 6));
    }

    now = send_all_pairs(now);
    now = run(now, now + 100 * MS);
    CHECK_EQ(total(TORUS_NETWORK_COUNT_DELIVERED) - delivered, NODES * (NODES - 1));
    unsigned missing = 0;
    for (unsigned d = 0; d < NODES; d++)
        for (unsigned s = 0; s < NODES; s++)
            if (s != d && arrived[d][s] != 1)
                missing++;
    CHECK_EQ(missing, 0);
    CHECK_EQ(total(TORUS_NETWORK_COUNT_TTL_EXPIRED), 0);
    CHECK_EQ(total(TORUS_NETWORK_COUNT_NO_ROUTE), 0);
    uint64_t adverts = 0;
    uint64_t bad_tags = 0;
    for (unsigned n = 0; n < NODES; n++) {
        const struct route_table *table = torus_network_route_table(&networks[n]);
        if (table != NULL)
            adverts += route_table_counter(table, ROUTE_TABLE_COUNT_ADVERTS_RECEIVED);
        bad_tags += networks[n].reception.counters.frames.count[TORUS_FRAME_DROP_BAD_TAG];
    }
    CHECK(adverts > 0);
    CHECK_EQ(bad_tags, 0);
    free(networks);
    free(queues);
    return check_report("net.network_routes");
}
