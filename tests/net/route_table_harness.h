/*
 * A small pure harness for route_table tests: one table per node of a
 * torus, each cable a FIFO each way (as the link layer delivers: once, in
 * order, or lost with the link), deliveries in a seeded random order, and
 * walks of every pair through the tables as the network forwards (an
 * entry's link, else dimension order over the links up).
 */
#ifndef TESTS_NET_ROUTE_TABLE_HARNESS_H
#define TESTS_NET_ROUTE_TABLE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/torus/frame.h"
#include "net/torus/route.h"
#include "net/torus/route_table.h"
#include "tests/check.h"

struct harness_message {
    struct harness_message *next;
    size_t length;
    uint8_t bytes[TORUS_FRAME_MAX_PAYLOAD];
};

/* One direction of a cable: frames sent by a node on one of its links. */
struct harness_queue {
    struct harness_message *head;
    struct harness_message *tail;
    unsigned count;
};

struct harness {
    struct torus_geometry geometry;
    uint32_t nodes;
    unsigned links;
    struct route_table *tables;   /* [nodes] */
    struct harness_queue *queues; /* [nodes * links]: sent by node on link */
    uint64_t deliveries;
    uint64_t in_flight;
    uint64_t rng;
    /* The last version of each entry each node sent on each link since that
     * link last changed: [nodes * links * nodes] (seq, hops), 0: none. */
    uint64_t *last_sent;
    uint64_t duplicate_sends;
};

static inline uint64_t harness_version(uint32_t seq, uint16_t hops)
{
    return ((uint64_t)seq << 16 | hops) + 1u;
}

static inline void harness_init(struct harness *h, const char *dims, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    unsigned count = 0;
    uint32_t sizes[CONFIG_MAX_DIMS];
    CHECK(torus_geometry_parse_dims(dims, &count, sizes, NULL) == TORUS_GEOMETRY_OK);
    CHECK(torus_geometry_init(&h->geometry, count, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    h->nodes = torus_geometry_node_count(&h->geometry);
    h->links = torus_geometry_link_count(&h->geometry);
    h->tables = calloc(h->nodes, sizeof *h->tables);
    h->queues = calloc((size_t)h->nodes * h->links, sizeof *h->queues);
    h->last_sent = calloc((size_t)h->nodes * h->links * h->nodes, sizeof *h->last_sent);
    h->rng = seed;
    for (uint32_t n = 0; n < h->nodes; n++) {
        struct route_table_config config = {
            .geometry = h->geometry,
            .rank = n,
            .link_mask = torus_geometry_link_mask(&h->geometry, n),
            .incarnation = 1,
        };
        route_table_init(&h->tables[n], &config);
        for (unsigned l = 0; l < h->links; l++)
            route_table_link_changed(&h->tables[n], l, true);
    }
}

static inline void harness_drop_queue(struct harness *h, struct harness_queue *q)
{
    h->in_flight -= q->count;
    while (q->head != NULL) {
        struct harness_message *m = q->head;
        q->head = m->next;
        free(m);
    }
    q->tail = NULL;
    q->count = 0;
}

static inline void harness_free(struct harness *h)
{
    for (size_t i = 0; i < (size_t)h->nodes * h->links; i++)
        harness_drop_queue(h, &h->queues[i]);
    free(h->queues);
    free(h->tables);
    free(h->last_sent);
}

static inline uint32_t harness_far(const struct harness *h, uint32_t node, unsigned link)
{
    return torus_geometry_neighbour(&h->geometry, node, link);
}

/* Forgets what node sent on link: a link change starts a new round. */
static inline void harness_forget_sent(struct harness *h, uint32_t node, unsigned link)
{
    memset(&h->last_sent[((size_t)node * h->links + link) * h->nodes], 0,
           h->nodes * sizeof *h->last_sent);
}

/* Cuts (up false) or mends a cable, both ends, losing what was on it. */
static inline void harness_cable(struct harness *h, uint32_t node, unsigned link, bool up)
{
    uint32_t far = harness_far(h, node, link);
    unsigned far_link = link ^ 1u;
    route_table_link_changed(&h->tables[node], link, up);
    route_table_link_changed(&h->tables[far], far_link, up);
    harness_drop_queue(h, &h->queues[(size_t)node * h->links + link]);
    harness_drop_queue(h, &h->queues[(size_t)far * h->links + far_link]);
    harness_forget_sent(h, node, link);
    harness_forget_sent(h, far, far_link);
}

/* Every advertisement node owes, into the queues; counts resends of a
 * version. */
static inline void harness_collect_node(struct harness *h, uint32_t n)
{
    {
        struct route_table *t = &h->tables[n];
        for (unsigned link = 0; link < h->links; link++) {
            if (((route_table_pending(t, h->deliveries) >> link) & 1u) == 0)
                continue;
            struct harness_message *m = malloc(sizeof *m);
            m->next = NULL;
            m->length = route_table_advert(t, link, m->bytes, sizeof m->bytes, h->deliveries);
            if (m->length == 0) {
                free(m);
                continue;
            }
            unsigned link_records = (unsigned)(m->bytes[2] | m->bytes[3] << 8);
            unsigned routes = (unsigned)(m->bytes[4] | m->bytes[5] << 8);
            const uint8_t *p = m->bytes + ROUTE_TABLE_ADVERT_HEADER +
                               link_records * ROUTE_TABLE_LINK_RECORD;
            for (unsigned i = 0; i < routes; i++, p += ROUTE_TABLE_ROUTE_RECORD) {
                uint32_t d = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24;
                uint32_t seq = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                               (uint32_t)p[7] << 24;
                uint16_t hops = (uint16_t)(p[8] | p[9] << 8);
                uint64_t *last = &h->last_sent[((size_t)n * h->links + link) * h->nodes + d];
                if (*last == harness_version(seq, hops))
                    h->duplicate_sends++;
                *last = harness_version(seq, hops);
            }
            struct harness_queue *q = &h->queues[(size_t)n * h->links + link];
            if (q->tail != NULL)
                q->tail->next = m;
            else
                q->head = m;
            q->tail = m;
            q->count++;
            h->in_flight++;
        }
    }
}

static inline void harness_collect(struct harness *h)
{
    for (uint32_t n = 0; n < h->nodes; n++)
        harness_collect_node(h, n);
}

/* Delivers the oldest frame of one non-empty queue, chosen at random;
 * UINT32_MAX when every queue is empty, else the node it went to. */
static inline uint32_t harness_deliver_one(struct harness *h)
{
    size_t total = (size_t)h->nodes * h->links;
    size_t start = (size_t)(splitmix64_below(&h->rng, total));
    for (size_t i = 0; i < total; i++) {
        size_t at = (start + i) % total;
        struct harness_queue *q = &h->queues[at];
        if (q->head == NULL)
            continue;
        struct harness_message *m = q->head;
        q->head = m->next;
        if (q->head == NULL)
            q->tail = NULL;
        q->count--;
        h->in_flight--;
        uint32_t node = (uint32_t)(at / h->links);
        unsigned link = (unsigned)(at % h->links);
        uint32_t far = harness_far(h, node, link);
        CHECK(route_table_receive(&h->tables[far], link ^ 1u, m->bytes, m->length));
        free(m);
        h->deliveries++;
        return far;
    }
    return UINT32_MAX;
}

enum harness_walk { WALK_DELIVERED, WALK_DEAD_END, WALK_LOOP };

/* Follows the forwarding from source to destination: an entry's link, else
 * dimension order over the links up (productive only).  *hops: taken. */
static inline enum harness_walk harness_walk(const struct harness *h, uint32_t source,
                                             uint32_t destination, uint32_t *hops)
{
    uint32_t here = source;
    for (uint32_t taken = 0; taken <= h->nodes; taken++) {
        const struct route_table *t = &h->tables[here];
        int link = route_table_next_hop(t, destination);
        if (link == ROUTE_TABLE_DEFAULT)
            link = torus_route_next_hop(&h->geometry, here, destination, t->up_mask);
        if (link == TORUS_ROUTE_LOCAL) {
            *hops = taken;
            return WALK_DELIVERED;
        }
        if (link < 0)
            return WALK_DEAD_END;
        here = harness_far(h, here, (unsigned)link);
    }
    return WALK_LOOP;
}

/* Every pair walked; counts loops and undelivered pairs. */
static inline void harness_walk_all(const struct harness *h, uint64_t *loops,
                                    uint64_t *undelivered)
{
    for (uint32_t s = 0; s < h->nodes; s++)
        for (uint32_t d = 0; d < h->nodes; d++) {
            uint32_t hops;
            enum harness_walk result = harness_walk(h, s, d, &hops);
            if (result == WALK_LOOP)
                (*loops)++;
            else if (result != WALK_DELIVERED)
                (*undelivered)++;
        }
}

/* One step, as nodes' poll loops take them: one frame delivered, after
 * which its receiver sends what it owes half the time (merging what it
 * learned meanwhile); when nothing is in flight every node sends.  False
 * when nothing is owed or in flight. */
static inline bool harness_step(struct harness *h)
{
    if (h->in_flight == 0)
        harness_collect(h);
    uint32_t node = harness_deliver_one(h);
    if (node == UINT32_MAX)
        return false;
    if (splitmix64_below(&h->rng, 2) == 0)
        harness_collect_node(h, node);
    return true;
}

/* Steps until nothing is owed or in flight (at most max deliveries). */
static inline void harness_settle(struct harness *h, uint64_t max)
{
    for (uint64_t i = 0; i < max; i++)
        if (!harness_step(h))
            return;
    CHECKF(false, "did not settle in %" PRIu64 " deliveries", max);
}

#endif /* TESTS_NET_ROUTE_TABLE_HARNESS_H */
