/*
 * The node's torus network: its links, their rings and the software router.
 *
 *   send ──encode──► route ──► injection ring[link] ──► link layer ──► driver
 *   driver ──► reception ring ──poll(max)──► by packet type:
 *       LINK_ACK            → that link's reliability state
 *       data, for us        → link layer (once, in order) → local handler[type]
 *       data, in transit    → link layer → forward: route ──► injection ring
 *
 * The arrival link of a frame is read from its destination MAC (each NIC's
 * address names its node and link), so one reception ring serves all links.
 * With a job key every frame is tagged (SipHash-2-4, see frame.h) and a
 * frame whose tag fails is counted (bad_tag) and dropped by the ring's poll,
 * before the link layer or anything else reads it.
 * Routing: dimension order with local detours (route.h), or with
 * `--routing table` the tables of route_table.h, whose advertisements go
 * one hop as ROUTE frames, tagged like every frame, and whose routes are
 * loop-free (a frame's TTL expiring is then a bug, counted).
 * Frames for a link that is not up are dropped and counted: the layer above
 * (membership) owns end-to-end recovery, as the link layer owns per-hop
 * recovery.  Everything is static and sized by CONFIG_MAX_LINKS and
 * CONFIG_RING_SIZE; nothing blocks.
 */
#ifndef NET_TORUS_NETWORK_H
#define NET_TORUS_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/dma.h"
#include "net/torus/frame.h"
#include "net/torus/geometry.h"
#include "net/torus/link.h"
#include "net/torus/route.h"
#include "net/torus/route_table.h"

enum torus_network_status {
    TORUS_NETWORK_OK = 0,
    TORUS_NETWORK_FULL,      /* the injection ring of the next hop is full */
    TORUS_NETWORK_NO_ROUTE,  /* no productive link is up towards it */
    TORUS_NETWORK_BAD_FRAME, /* bad destination, type, or payload too big */
};

/* Network-level counters, one list for the enum and the names. */
#define TORUS_NETWORK_COUNTERS(X)                                            \
    X(SENT, "sent")                 /* frames this node originated */        \
    X(DELIVERED, "delivered")       /* frames for this node, handed up */    \
    X(FORWARDED, "forwarded")       /* transit frames passed on */           \
    X(NO_ROUTE, "no_route")         /* dropped: no productive link up */     \
    X(RING_FULL, "ring_full")       /* dropped: injection ring full */       \
    X(LINK_NOT_UP, "link_not_up")   /* dropped from a ring: link went down */\
    X(TTL_EXPIRED, "ttl_expired")   /* transit frame out of hops */          \
    X(FOREIGN_MAC, "foreign_mac")   /* arrived with another node's MAC */    \
    X(LINK_DROPS, "link_drops")     /* refused by the link layer */          \
    X(NO_HANDLER, "no_handler")     /* for us, but nobody takes the type */  \
    X(DRIVER_BUSY, "driver_busy")   /* device full: left to retransmission */\
    X(CUT, "cut")                   /* lost on a link cut on purpose */    \
    X(BACKPRESSURE, "backpressure") /* transit refused: next ring full */ \
    X(WIRE, "wire")                 /* every frame handed to the driver */

enum torus_network_counter {
#define TORUS_NETWORK_COUNTER_ENUM(name, text) TORUS_NETWORK_COUNT_##name,
    TORUS_NETWORK_COUNTERS(TORUS_NETWORK_COUNTER_ENUM)
#undef TORUS_NETWORK_COUNTER_ENUM
    TORUS_NETWORK_COUNTER_COUNT
};

/* A frame for this node: header, payload, and the link it arrived on. */
typedef void (*torus_network_handler)(void *context,
                                      const struct torus_frame_header *header,
                                      const uint8_t *payload, uint64_t now_ns);

/* What befell a link. */
enum torus_network_link_event {
    TORUS_NETWORK_LINK_UP,
    TORUS_NETWORK_LINK_DOWN,
    TORUS_NETWORK_LINK_LOSSY, /* up, but resending past its loss limit */
};

/* A link came up, went down or turned lossy (neighbour is the rank at its
 * far end). */
typedef void (*torus_network_link_handler)(void *context, unsigned link,
                                           uint32_t neighbour,
                                           enum torus_network_link_event event,
                                           uint64_t now_ns);

struct torus_network_config {
    struct torus_geometry geometry;
    uint32_t rank;
    uint32_t link_mask;      /* links the driver found cabled */
    uint32_t incarnation;    /* boot incarnation: seeds link sessions */
    uint64_t link_rto_ns;
    uint32_t link_retries;
    /* Loss limit of every link (link.h): more than this many resends within
     * the window is a LOSSY event; 0: the link layer's defaults. */
    uint32_t link_lossy_retransmits;
    uint64_t link_lossy_window_ns;
    bool keyed;                 /* frames carry a SipHash tag under key */
    struct torus_frame_key key; /* the job key (issue 20); never printed */
    bool routing_table;         /* `--routing table`: route_table.h; else detours */
};

struct torus_network {
    struct torus_geometry geometry;
    uint32_t rank;
    uint32_t link_mask;
    uint32_t up_mask; /* links whose session is UP */
    uint32_t cut_mask; /* links cut on purpose: every frame in or out lost */
    uint32_t absent_mask; /* links to nodes out of the view or suspected: transit last */
    /* The nodes the membership shuns, for routes around them (route.h);
     * shunned_count > TORUS_ROUTE_SHUNNED_MAX: not known, routes go without. */
    uint32_t shunned[TORUS_ROUTE_SHUNNED_MAX];
    uint32_t shunned_count;
    uint64_t now_ns;  /* time of the poll being served, for handlers */
    bool keyed;
    struct torus_frame_key key; /* rings and links point here when keyed */
    uint64_t counters[TORUS_NETWORK_COUNTER_COUNT];
    torus_network_handler handler[TORUS_FRAME_TYPE_COUNT];
    void *handler_context[TORUS_FRAME_TYPE_COUNT];
    torus_network_link_handler link_handler;
    void *link_handler_context;
    struct torus_link links[CONFIG_MAX_LINKS];
    struct torus_dma_ring injection[CONFIG_MAX_LINKS];
    struct torus_dma_ring reception;
    /* Frames this node sends to itself, delivered on the next pass: never
     * inline, so a handler that sends cannot re-enter itself. */
    struct torus_dma_ring loopback;
    uint8_t scratch[CONFIG_MAX_FRAME];
    /* `--routing table`: this node's tables, and room to write an
     * advertisement before it is framed. */
    bool routing_table;
    struct route_table table;
    uint8_t advert[TORUS_FRAME_MAX_PAYLOAD];
};

/* Brings up the link state of every cabled link (they start handshaking). */
void torus_network_init(struct torus_network *network,
                        const struct torus_network_config *config);

/* Takes frames of one type addressed to this node (init only). */
void torus_network_set_handler(struct torus_network *network, unsigned type,
                               torus_network_handler handler, void *context);
void torus_network_set_link_handler(struct torus_network *network,
                                    torus_network_link_handler handler,
                                    void *context);

/*
 * Sends payload to destination as a frame of type, routed over the torus.
 * A frame for this node itself is delivered on the next poll pass.
 */
enum torus_network_status torus_network_send(struct torus_network *network,
                                             uint32_t destination, unsigned type,
                                             uint64_t epoch, const void *payload,
                                             size_t length, uint64_t now_ns);

/*
 * The same, as a datagram (TORUS_FRAME_FLAG_DATAGRAM, see link.h): no link
 * on the way keeps, acknowledges or resends it, so it may be lost; for
 * messages that the next one makes good (heartbeats).
 */
enum torus_network_status torus_network_send_datagram(struct torus_network *network,
                                                      uint32_t destination, unsigned type,
                                                      uint64_t epoch, const void *payload,
                                                      size_t length, uint64_t now_ns);

/*
 * One pass: receive from every driver, dispatch up to max received frames,
 * run the link layers' timers, drain the injection rings onto the links.
 * The received frames are dispatched a few at a time, each few followed by
 * the sending, so that an ack a handler owes mid-burst leaves mid-burst.
 * Returns the work done (0: idle).
 */
unsigned torus_network_poll(struct torus_network *network, unsigned max,
                            uint64_t now_ns);

/*
 * Cuts (or mends) a link as a fault injector would cut its cable: from now
 * on every frame sent or received on it is lost, and the link layer finds
 * out the usual way.  False for a link this node does not have.
 */
bool torus_network_cut_link(struct torus_network *network, unsigned link, bool cut);

/*
 * Links whose far node this node's membership shuns (out of its view, or
 * suspected dead): routes take them only when no other productive link is
 * up, or when that node is the destination (a dead node forwards nothing,
 * and the link layer alone takes its retransmission budget to find out;
 * see torus_route_next_hop_detour).
 */
void torus_network_set_absent_links(struct torus_network *network, uint32_t link_mask);

/*
 * The nodes this node's membership shuns (out of its view, or suspected;
 * membership_shunned_nodes): routes go around them wherever a way over
 * other nodes leads on (torus_route_next_hop_around).  count may exceed
 * TORUS_ROUTE_SHUNNED_MAX (ids then unread): routes go without the list.
 */
void torus_network_set_shunned_nodes(struct torus_network *network, const uint32_t *ids,
                                     uint32_t count);

/* The routing tables (NULL: `--routing detour`), for stats and tests. */
static inline const struct route_table *torus_network_route_table(
    const struct torus_network *network)
{
    return network->routing_table ? &network->table : NULL;
}

/* When torus_network_poll next has timed work; UINT64_MAX: none. */
uint64_t torus_network_next_deadline(const struct torus_network *network);

static inline bool torus_network_link_is_up(const struct torus_network *network,
                                            unsigned link)
{
    return link < CONFIG_MAX_LINKS && ((network->up_mask >> link) & 1u) != 0;
}
static inline uint64_t torus_network_counter(const struct torus_network *network,
                                             enum torus_network_counter counter)
{
    return (unsigned)counter < TORUS_NETWORK_COUNTER_COUNT ? network->counters[counter] : 0;
}
const char *torus_network_counter_name(enum torus_network_counter counter);

/* The key frames are tagged with; NULL when the network is keyless. */
static inline const struct torus_frame_key *torus_network_key(const struct torus_network *network)
{
    return network->keyed ? &network->key : NULL;
}

#endif /* NET_TORUS_NETWORK_H */
