#include "net/torus/network.h"

#include <string.h>

#include "net/torus/driver.h"
#include "net/torus/route.h"

static const char *const counter_names[] = {
#define TORUS_NETWORK_COUNTER_NAME(name, text) text,
    TORUS_NETWORK_COUNTERS(TORUS_NETWORK_COUNTER_NAME)
#undef TORUS_NETWORK_COUNTER_NAME
};

const char *torus_network_counter_name(enum torus_network_counter counter)
{
    return (unsigned)counter < TORUS_NETWORK_COUNTER_COUNT ? counter_names[counter] : "?";
}

static void count(struct torus_network *network, enum torus_network_counter counter)
{
    network->counters[counter]++;
}

/* Link sessions of one boot never reuse an incarnation of an earlier boot. */
static uint32_t link_incarnation(uint32_t boot_incarnation)
{
    return (boot_incarnation << 16) | 1u;
}

void torus_network_init(struct torus_network *network,
                        const struct torus_network_config *config)
{
    memset(network, 0, sizeof *network);
    network->shunned_count = TORUS_ROUTE_SHUNNED_MAX + 1u; /* not told yet */
    network->geometry = config->geometry;
    network->rank = config->rank;
    network->link_mask = config->link_mask &
                         torus_geometry_link_mask(&config->geometry, config->rank);
    network->keyed = config->keyed;
    network->key = config->key;
    const struct torus_frame_key *key = torus_network_key(network);
    uint32_t node_count = torus_geometry_node_count(&network->geometry);
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        torus_dma_ring_init(&network->injection[link], node_count, key);
        if (((network->link_mask >> link) & 1u) == 0)
            continue;
        struct torus_link_config link_config;
        torus_link_config_defaults(&link_config);
        link_config.local_rank = config->rank;
        link_config.peer_rank = torus_geometry_neighbour(&network->geometry,
                                                         config->rank, link);
        link_config.local_link = link;
        link_config.incarnation = link_incarnation(config->incarnation);
        link_config.rto_ns = config->link_rto_ns;
        link_config.retry_limit = config->link_retries;
        if (config->link_lossy_retransmits != 0)
            link_config.lossy_retransmits = config->link_lossy_retransmits;
        if (config->link_lossy_window_ns != 0)
            link_config.lossy_window_ns = config->link_lossy_window_ns;
        link_config.key = key;
        torus_link_init(&network->links[link], &link_config);
    }
    torus_dma_ring_init(&network->reception, node_count, key);
    torus_dma_ring_init(&network->loopback, node_count, key);
    network->routing_table = config->routing_table;
    if (network->routing_table) {
        struct route_table_config table_config = {
            .geometry = network->geometry,
            .rank = network->rank,
            .link_mask = network->link_mask,
            .incarnation = config->incarnation,
            /* cuts are found as the link layers time out, one RTO or so
             * apart: a raise waits that long for the rest of a burst */
            .raise_hold_ns = config->link_rto_ns,
        };
        route_table_init(&network->table, &table_config);
    }
}

void torus_network_set_handler(struct torus_network *network, unsigned type,
                               torus_network_handler handler, void *context)
{
    if (type < TORUS_FRAME_TYPE_COUNT && type != TORUS_FRAME_TYPE_LINK_ACK) {
        network->handler[type] = handler;
        network->handler_context[type] = context;
    }
}

void torus_network_set_link_handler(struct torus_network *network,
                                    torus_network_link_handler handler,
                                    void *context)
{
    network->link_handler = handler;
    network->link_handler_context = context;
}

static void deliver_local(struct torus_network *network,
                          const struct torus_frame_header *header,
                          const uint8_t *payload)
{
    torus_network_handler handler = network->handler[header->type];
    if (handler == NULL) {
        count(network, TORUS_NETWORK_COUNT_NO_HANDLER);
        return;
    }
    count(network, TORUS_NETWORK_COUNT_DELIVERED);
    /* cert: indirect call, targets are the handlers given to set_handler */
    handler(network->handler_context[header->type], header, payload,
            network->now_ns);
}

/*
 * Room an injection ring keeps for membership and control frames: a flood
 * of data must not crowd out the heartbeats that tell the living from the
 * dead.
 */
#define TORUS_NETWORK_RESERVED_SLOTS (CONFIG_RING_SIZE / 4)

/* Received frames handled between two turns of sending: a quarter of a link
 * window (the comm core acks every quarter of its window, the link layer
 * every half). */
#define TORUS_NETWORK_RECEIVE_SLICE (CONFIG_LINK_WINDOW / 4u > 0 ? CONFIG_LINK_WINDOW / 4u : 1u)

static bool ring_has_room(const struct torus_dma_ring *ring, unsigned type)
{
    uint32_t limit = type == TORUS_FRAME_TYPE_MEMBERSHIP || type == TORUS_FRAME_TYPE_CONTROL
                         ? CONFIG_RING_SIZE
                         : CONFIG_RING_SIZE - TORUS_NETWORK_RESERVED_SLOTS;
    return torus_dma_count(ring) < limit;
}

/*
 * With tables: the entry's link, or, for a destination without one,
 * dimension order over productive links only (a link to a shunned node
 * last), never a detour: every hop then brings the frame closer or moves it
 * down the tables' loop-free order (route_table.h).
 */
static int next_hop(const struct torus_network *network, uint32_t destination, int in_link)
{
    if (!network->routing_table)
        return torus_route_next_hop_around(
            &network->geometry, network->rank, destination, network->up_mask,
            network->absent_mask, in_link,
            network->shunned_count <= TORUS_ROUTE_SHUNNED_MAX ? network->shunned : NULL,
            network->shunned_count);
    int link = route_table_next_hop(&network->table, destination);
    if (link != ROUTE_TABLE_DEFAULT)
        return link;
    uint32_t shunned = network->absent_mask &
                       ~torus_route_links_towards(&network->geometry, network->rank, destination);
    link = torus_route_next_hop(&network->geometry, network->rank, destination,
                                network->up_mask & ~shunned);
    if (link != TORUS_ROUTE_NONE)
        return link;
    return torus_route_next_hop(&network->geometry, network->rank, destination,
                                network->up_mask);
}

/* Queues frame on link, the hop next_hop chose (negative: none). */
static enum torus_network_status inject_on(struct torus_network *network, int link,
                                           const uint8_t *frame, size_t length, unsigned type)
{
    if (link < 0) {
        count(network, TORUS_NETWORK_COUNT_NO_ROUTE);
        return TORUS_NETWORK_NO_ROUTE;
    }
    if (!ring_has_room(&network->injection[link], type) ||
        torus_dma_inject(&network->injection[link], frame, length, NULL) != TORUS_DMA_OK) {
        count(network, TORUS_NETWORK_COUNT_RING_FULL);
        return TORUS_NETWORK_FULL;
    }
    return TORUS_NETWORK_OK;
}

static enum torus_network_status send_frame(struct torus_network *network,
                                            uint32_t destination, unsigned type, uint8_t flags,
                                            uint64_t epoch, const void *payload,
                                            size_t length, uint64_t now_ns)
{
    if (destination >= torus_geometry_node_count(&network->geometry) ||
        type == TORUS_FRAME_TYPE_LINK_ACK || type >= TORUS_FRAME_TYPE_COUNT)
        return TORUS_NETWORK_BAD_FRAME;
    struct torus_frame_header header;
    memset(&header, 0, sizeof header);
    header.type = (uint8_t)type;
    header.flags = flags;
    header.ttl = network->routing_table ? route_table_ttl(&network->geometry)
                                        : torus_route_ttl(&network->geometry);
    header.source = network->rank;
    header.destination = destination;
    header.epoch = epoch;
    size_t frame_length = torus_frame_encode(&header, payload, length,
                                             torus_network_key(network),
                                             network->scratch,
                                             sizeof network->scratch);
    if (frame_length == 0)
        return TORUS_NETWORK_BAD_FRAME;
    network->now_ns = now_ns;
    count(network, TORUS_NETWORK_COUNT_SENT);
    if (destination == network->rank) {
        if (!ring_has_room(&network->loopback, type) ||
            torus_dma_inject(&network->loopback, network->scratch, frame_length, NULL) !=
                TORUS_DMA_OK) {
            count(network, TORUS_NETWORK_COUNT_RING_FULL);
            return TORUS_NETWORK_FULL;
        }
        return TORUS_NETWORK_OK;
    }
    return inject_on(network, next_hop(network, destination, -1), network->scratch,
                     frame_length, type);
}

enum torus_network_status torus_network_send(struct torus_network *network,
                                             uint32_t destination, unsigned type,
                                             uint64_t epoch, const void *payload,
                                             size_t length, uint64_t now_ns)
{
    return send_frame(network, destination, type, 0, epoch, payload, length, now_ns);
}

enum torus_network_status torus_network_send_datagram(struct torus_network *network,
                                                      uint32_t destination, unsigned type,
                                                      uint64_t epoch, const void *payload,
                                                      size_t length, uint64_t now_ns)
{
    return send_frame(network, destination, type, TORUS_FRAME_FLAG_DATAGRAM, epoch, payload,
                      length, now_ns);
}

/* The link a frame arrived on, from its destination MAC; -1: not ours. */
static int arrival_link(const struct torus_network *network,
                        const struct torus_frame_header *header)
{
    uint32_t rank;
    unsigned link;
    if (!torus_frame_mac_parse(header->destination_mac, &rank, &link) ||
        rank != network->rank || ((network->link_mask >> link) & 1u) == 0)
        return -1;
    return (int)link;
}

static void on_link_control(void *context, const struct torus_frame_header *header,
                            const uint8_t *payload, uint8_t *frame, size_t length)
{
    (void)payload;
    (void)frame;
    (void)length;
    struct torus_network *network = context;
    int link = arrival_link(network, header);
    if (link < 0) {
        count(network, TORUS_NETWORK_COUNT_FOREIGN_MAC);
        return;
    }
    torus_link_receive(&network->links[link], header, network->now_ns);
}

static void on_data(void *context, const struct torus_frame_header *header,
                    const uint8_t *payload, uint8_t *frame, size_t length)
{
    struct torus_network *network = context;
    int link = arrival_link(network, header);
    if (link < 0) {
        count(network, TORUS_NETWORK_COUNT_FOREIGN_MAC);
        return;
    }
    bool transit = header->destination != network->rank;
    int next = transit ? next_hop(network, header->destination, link) : TORUS_ROUTE_LOCAL;
    if (transit) {
        /* Back-pressure, as a torus router's link-level flow control: a
         * transit frame the next hop has no room for is not acknowledged,
         * so its sender keeps it and sends it again. */
        if (next >= 0 && !ring_has_room(&network->injection[next], header->type)) {
            count(network, TORUS_NETWORK_COUNT_BACKPRESSURE);
            return;
        }
    }
    if (torus_link_receive(&network->links[link], header, network->now_ns) !=
        TORUS_LINK_DELIVER) {
        count(network, TORUS_NETWORK_COUNT_LINK_DROPS);
        return;
    }
    if (!transit && header->type == TORUS_FRAME_TYPE_ROUTE) {
        /* A neighbour's advertisement (counted by the tables when bad). */
        if (network->routing_table)
            route_table_receive(&network->table, (unsigned)link, payload,
                                header->payload_length);
        else
            count(network, TORUS_NETWORK_COUNT_NO_HANDLER);
        return;
    }
    if (!transit) {
        deliver_local(network, header, payload);
        return;
    }
    if (torus_frame_forward(frame, length) != TORUS_FRAME_OK) {
        count(network, TORUS_NETWORK_COUNT_TTL_EXPIRED);
        return;
    }
    if (inject_on(network, next, frame, length, header->type) == TORUS_NETWORK_OK)
        count(network, TORUS_NETWORK_COUNT_FORWARDED);
}

static void on_loopback(void *context, const struct torus_frame_header *header,
                        const uint8_t *payload, uint8_t *frame, size_t length)
{
    (void)frame;
    (void)length;
    deliver_local(context, header, payload);
}

/* The loopback ring's table: every data type goes straight up. */
static const struct torus_dma_dispatch loopback_dispatch = {
    .handler = {
        [TORUS_FRAME_TYPE_PING] = on_loopback,
        [TORUS_FRAME_TYPE_PONG] = on_loopback,
        [TORUS_FRAME_TYPE_MEMBERSHIP] = on_loopback,
        [TORUS_FRAME_TYPE_CONTROL] = on_loopback,
        [TORUS_FRAME_TYPE_FLOOD] = on_loopback,
        [TORUS_FRAME_TYPE_COMM] = on_loopback,
    },
};

/* The fixed table the reception ring dispatches through, by packet type. */
static const struct torus_dma_dispatch network_dispatch = {
    .handler = {
        [TORUS_FRAME_TYPE_LINK_ACK] = on_link_control,
        [TORUS_FRAME_TYPE_PING] = on_data,
        [TORUS_FRAME_TYPE_PONG] = on_data,
        [TORUS_FRAME_TYPE_MEMBERSHIP] = on_data,
        [TORUS_FRAME_TYPE_CONTROL] = on_data,
        [TORUS_FRAME_TYPE_FLOOD] = on_data,
        [TORUS_FRAME_TYPE_COMM] = on_data,
        [TORUS_FRAME_TYPE_ROUTE] = on_data,
    },
};

static unsigned receive_from_drivers(struct torus_network *network)
{
    unsigned work = 0;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if (((network->link_mask >> link) & 1u) == 0)
            continue;
        while (!torus_dma_is_full(&network->reception)) {
            uint8_t *buffer = torus_dma_reserve(&network->reception);
            size_t length = torus_driver_receive(link, buffer, CONFIG_MAX_FRAME);
            if (length == 0)
                break;
            if (((network->cut_mask >> link) & 1u) != 0) {
                count(network, TORUS_NETWORK_COUNT_CUT);
                continue;
            }
            torus_dma_commit(&network->reception, length, NULL);
            work++;
        }
    }
    return work;
}

static void driver_send(struct torus_network *network, unsigned link,
                        const uint8_t *frame, size_t length)
{
    if (((network->cut_mask >> link) & 1u) != 0) {
        count(network, TORUS_NETWORK_COUNT_CUT);
        return;
    }
    count(network, TORUS_NETWORK_COUNT_WIRE);
    if (!torus_driver_send(link, frame, length))
        count(network, TORUS_NETWORK_COUNT_DRIVER_BUSY);
}

static unsigned drain_injection(struct torus_network *network, unsigned link)
{
    unsigned work = 0;
    const uint8_t *frame;
    size_t length;
    struct torus_link *state = &network->links[link];
    while (torus_dma_peek(&network->injection[link], &frame, &length)) {
        /* The link stamps the frame in place; the ring slot stays pristine. */
        memcpy(network->scratch, frame, length);
        enum torus_link_send_status status =
            torus_link_send(state, network->scratch, length, network->now_ns);
        if (status == TORUS_LINK_SEND_WINDOW_FULL)
            break;
        torus_dma_take(&network->injection[link]);
        work++;
        if (status == TORUS_LINK_SEND_OK)
            driver_send(network, link, network->scratch, length);
        else
            count(network, TORUS_NETWORK_COUNT_LINK_NOT_UP);
    }
    return work;
}

static void tell_link(struct torus_network *network, unsigned link,
                      enum torus_network_link_event event)
{
    if (network->link_handler != NULL)
        /* cert: indirect call, target is the handler given to set_link_handler */
        network->link_handler(network->link_handler_context, link,
                              network->links[link].config.peer_rank, event, network->now_ns);
}

static unsigned tick_link(struct torus_network *network, unsigned link)
{
    struct torus_link_outbox outbox;
    struct torus_link *state = &network->links[link];
    unsigned work = torus_link_tick(state, network->now_ns, &outbox);
    for (unsigned i = 0; i < outbox.count; i++)
        driver_send(network, link, outbox.frame[i], outbox.length[i]);
    unsigned events = torus_link_take_events(state);
    if (events == 0)
        return work;
    if ((events & (TORUS_LINK_EVENT_UP | TORUS_LINK_EVENT_DOWN)) != 0) {
        bool up = torus_link_is_up(state);
        if (up)
            network->up_mask |= 1u << link;
        else
            network->up_mask &= ~(1u << link);
        if (network->routing_table)
            route_table_link_changed(&network->table, link, up);
        tell_link(network, link, up ? TORUS_NETWORK_LINK_UP : TORUS_NETWORK_LINK_DOWN);
    }
    if ((events & TORUS_LINK_EVENT_LOSSY) != 0)
        tell_link(network, link, TORUS_NETWORK_LINK_LOSSY);
    return work + 1;
}

/* Advertisements take at most half an injection ring: a burst of them must
 * not crowd out the heartbeats and data behind them (they are many when a
 * wall of cuts falls, and wait their turn without loss). */
static bool advert_has_room(const struct torus_dma_ring *ring)
{
    return torus_dma_count(ring) < CONFIG_RING_SIZE / 2;
}

/* The advertisement the tables owe the far node of link, framed and queued
 * on that link (it is for that neighbour alone); it waits when the ring is
 * full. */
static unsigned advertise(struct torus_network *network, unsigned link)
{
    if (!network->routing_table ||
        ((route_table_pending(&network->table, network->now_ns) >> link) & 1u) == 0 ||
        !advert_has_room(&network->injection[link]))
        return 0;
    size_t length = route_table_advert(&network->table, link, network->advert,
                                       sizeof network->advert, network->now_ns);
    if (length == 0)
        return 0;
    struct torus_frame_header header;
    memset(&header, 0, sizeof header);
    header.type = TORUS_FRAME_TYPE_ROUTE;
    header.ttl = 1;
    header.source = network->rank;
    header.destination = torus_geometry_neighbour(&network->geometry, network->rank, link);
    size_t frame_length = torus_frame_encode(&header, network->advert, length,
                                             torus_network_key(network), network->scratch,
                                             sizeof network->scratch);
    if (frame_length == 0 ||
        inject_on(network, (int)link, network->scratch, frame_length, TORUS_FRAME_TYPE_ROUTE) !=
            TORUS_NETWORK_OK)
        return 0;
    count(network, TORUS_NETWORK_COUNT_SENT);
    return 1;
}

static unsigned send_on_links(struct torus_network *network)
{
    unsigned work = 0;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if (((network->link_mask >> link) & 1u) == 0)
            continue;
        work += advertise(network, link);
        /* Data first, so owed acks ride on it instead of a LINK_ACK. */
        work += drain_injection(network, link);
        work += tick_link(network, link);
    }
    return work;
}

/* One slice of the reception ring.  Kept out of line so that the callback's
 * address is loaded right at the call, where `./tori cert` reads which
 * function the DMA poll dispatches to (hoisted out of the slice loop, it
 * sat in a saved register the call graph cannot follow). */
__attribute__((noinline)) static unsigned receive_slice(struct torus_network *network,
                                                        unsigned slice)
{
    return torus_dma_poll(&network->reception, slice, &network_dispatch, network);
}

unsigned torus_network_poll(struct torus_network *network, unsigned max,
                            uint64_t now_ns)
{
    network->now_ns = now_ns;
    unsigned work = receive_from_drivers(network);
    /* A burst is handled a slice at a time, each slice followed by what it
     * made this node send: an ack owed halfway through a window leaves
     * before the rest of the burst is handled, so that its sender refills
     * the window while this node works instead of after. */
    for (unsigned handled = 0; handled < max;) {
        unsigned slice = max - handled < TORUS_NETWORK_RECEIVE_SLICE
                             ? max - handled
                             : TORUS_NETWORK_RECEIVE_SLICE;
        unsigned done = receive_slice(network, slice);
        if (done == 0)
            break;
        handled += done;
        work += done + send_on_links(network);
    }
    work += torus_dma_poll(&network->loopback, max, &loopback_dispatch, network);
    return work + send_on_links(network);
}

bool torus_network_cut_link(struct torus_network *network, unsigned link, bool cut)
{
    if (link >= CONFIG_MAX_LINKS || ((network->link_mask >> link) & 1u) == 0)
        return false;
    if (cut)
        network->cut_mask |= 1u << link;
    else
        network->cut_mask &= ~(1u << link);
    return true;
}

void torus_network_set_absent_links(struct torus_network *network, uint32_t link_mask)
{
    network->absent_mask = link_mask & network->link_mask;
}

void torus_network_set_shunned_nodes(struct torus_network *network, const uint32_t *ids,
                                     uint32_t count)
{
    network->shunned_count = count;
    for (uint32_t i = 0; i < count && i < TORUS_ROUTE_SHUNNED_MAX; i++)
        network->shunned[i] = ids[i];
}

uint64_t torus_network_next_deadline(const struct torus_network *network)
{
    if (!torus_dma_is_empty(&network->reception) || !torus_dma_is_empty(&network->loopback))
        return 0;
    uint64_t next = UINT64_MAX;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if (((network->link_mask >> link) & 1u) == 0)
            continue;
        const struct torus_link *state = &network->links[link];
        if (!torus_dma_is_empty(&network->injection[link]) &&
            torus_link_in_flight(state) < CONFIG_LINK_WINDOW)
            return 0;
        if (network->routing_table &&
            ((route_table_pending(&network->table, network->now_ns) >> link) & 1u) &&
            advert_has_room(&network->injection[link]))
            return 0; /* an advertisement to send */
        uint64_t deadline = torus_link_next_deadline(state);
        if (deadline < next)
            next = deadline;
    }
    if (network->routing_table && route_table_next_deadline(&network->table) < next)
        next = route_table_next_deadline(&network->table);
    return next;
}
