/*
 * Routing tables for fault regions (`--routing table`, issue 16), after
 * Phoenix's DSDV tables (papers/kaneda2004-phoenix-routing.md), as a pure
 * state machine: one struct route_table per node, fed its link changes and
 * its neighbours' advertisements, asked for advertisements to send and for
 * next hops.  No I/O, no clock, no globals, no allocation: every table is
 * static and sized by CONFIG_ROUTE_TABLE_ENTRIES and CONFIG_ROUTE_TABLE_LINKS.
 *
 * Two kinds of record travel between torus neighbours, merged into one
 * advertisement frame per neighbour (as many records as fit):
 *  - link records (originator, link, down or up, seq): a node whose link
 *    goes down or comes back up originates one, with its own link sequence
 *    number; every node keeps the freshest record per (originator, link)
 *    and passes it on, so every node learns the set of failed links;
 *  - route records (destination, hops, seq): a node learns from the link
 *    records (its own too) when a changed cable lies on a dimension-order
 *    route to itself (the dimension-order hop at either end of the cable
 *    towards it is that cable), or, once tables hold routes to it, that
 *    any link changed (a
 *    route to it may have gone through that link); it then takes a fresher
 *    sequence number of its own and advertises itself at 0 hops, and the
 *    record spreads hop by hop as a distance vector: each node that takes
 *    it keeps an entry (destination, next hop link, hops, seq) and
 *    advertises it on.  A sequence number
 *    belongs to its originator: only a node raises its own (the link
 *    records' and the routes to it); the others only copy them.
 * Entries are kept only for those destinations (at every node that hears
 * of them: the granularity is the destination, not the pair): every other
 * destination is routed by dimension order (route.h) and costs nothing.
 *
 * The update rule, for a route record (destination d, hops h, seq s)
 * arriving on link l, candidate hops h + 1:
 *  - s older than the entry's seq: stale, never taken;
 *  - s fresher: taken, whatever its hops;
 *  - s equal: taken when feasible (h below the entry's feasibility hops,
 *    the fewest hops the entry has had at s) and either fewer hops than
 *    the entry's, or the entry has lost its route, or as many hops through
 *    the dimension-order link (so routes go back to dimension order when
 *    the links come back).
 * A next hop whose link goes down loses its route (hops "none"; the
 * feasibility hops stay) until a record passes the rule again; d learns of
 * the failure from the link records and sends a fresher seq.
 *
 * Loop-free at every moment, whatever the order and timing of deliveries.
 * Order states (seq, hops) by "better": fresher seq, or the same seq and
 * fewer hops.  Claim: whenever u's entry for d has a route through
 * neighbour n, then n is d, or n's entry for d has lost its route, or n's
 * state is strictly better than u's.  When u takes the route, n advertised
 * (s, h) and u becomes (s, h + 1), worse.  Afterwards n only takes fresher
 * seqs or fewer hops (better), or loses its route (a dead end), and regains
 * one at the same seq only below its feasibility hops, which were at most
 * its hops when it advertised to u: still better than u.  u itself only
 * takes fresher seqs (the nodes that route through u held older or equal
 * seqs from u, so u stays better than them) or, at the same seq, hops below
 * its feasibility hops (again still better than any node that took u's
 * advertisement).  So along table next hops states strictly improve, and a
 * walk of them ends.  Nodes with no entry for d route by dimension order
 * through productive links only, each hop one closer to d; an entry is
 * never dropped, and a node only routes through a neighbour that
 * advertised d to it, hence holds an entry; so no walk goes from a node
 * with an entry to one without, and a walk is a finite dimension-order
 * part followed by a finite table part.  (A node's own seq starts from its
 * boot incarnation, and jumps past any fresher one it hears for itself, so
 * a restarted node is never stale.)
 *
 * Phoenix's redundant-update elimination: each entry and record has a
 * "told" mask of the links whose far node has it already (it came from
 * there, or was sent there, or that node sent as good at the same seq);
 * an advertisement for a link carries only what its far node lacks, so each
 * entry goes to each neighbour at most once per change.  Merged updates:
 * an advertisement carries every pending record that fits in one frame,
 * and a node's own raise waits a hold time (raise_hold_ns) and for the
 * link records it has yet to pass on, so that a burst costs one.
 *
 * Entries are never freed (a freed entry forgets its seq, and a stale record
 * could then make a loop); when the links come back, the routes become the
 * dimension-order ones again.  A full table refuses new destinations
 * (counted: table_full), which then keep being routed by dimension order.
 */
#ifndef NET_TORUS_ROUTE_TABLE_H
#define NET_TORUS_ROUTE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/geometry.h"

/* route_table_next_hop: no entry, route by dimension order (route.h).  Its
 * other answers are a link, TORUS_ROUTE_LOCAL and TORUS_ROUTE_NONE. */
#define ROUTE_TABLE_DEFAULT (-3)

/*
 * Sequence numbers are compared in serial-number arithmetic (RFC 1982):
 * seq is fresher than `than` when it is ahead of it by less than half the
 * number space, so a node's own seq raised past UINT32_MAX wraps to 0 and
 * is still fresher, where a plain comparison would make every later advert
 * of that node look stale for good (an advert, or an incarnation, near the
 * top of the space would wrap it).  The order holds as long as the seqs of
 * one originator in circulation lie within 2^31 of each other: each change
 * adds one, each restart 2^16.  Exactly half the space apart is neither
 * fresher: such a record is taken as stale.
 */
static inline bool route_table_seq_fresher(uint32_t seq, uint32_t than)
{
    return seq != than && (uint32_t)(seq - than) < 0x80000000u;
}

/* Hops of an entry that has lost its route. */
#define ROUTE_TABLE_HOPS_NONE 0xFFFFu

/* The advertisement format: version, reserved, link record count, route
 * record count (u16 little-endian each), then the records.  A route record's
 * hops are below the node count (as a loop-free path's are) and below
 * ROUTE_TABLE_HOPS_NONE - 1, else the advert is malformed; a table takes no
 * route that long, so all it advertises decodes. */
#define ROUTE_TABLE_FORMAT 1u
#define ROUTE_TABLE_ADVERT_HEADER 6u
#define ROUTE_TABLE_LINK_RECORD 10u  /* originator u32, seq u32, link u8, down u8 */
#define ROUTE_TABLE_ROUTE_RECORD 10u /* destination u32, seq u32, hops u16 */

#define ROUTE_TABLE_COUNTERS(X)                                                 \
    X(ADVERTS_SENT, "adverts_sent")                                             \
    X(ADVERTS_RECEIVED, "adverts_received")                                     \
    X(RECORDS_SENT, "records_sent")                                             \
    X(ROUTES_TAKEN, "routes_taken")     /* route records that changed an entry */ \
    X(ROUTES_STALE, "routes_stale")     /* route records older than the entry */  \
    X(ROUTES_LOST, "routes_lost")       /* entries whose next hop went down */    \
    X(LINKS_LEARNED, "links_learned")   /* link records that changed the table */ \
    X(SEQ_RAISED, "seq_raised")         /* own seq raised: a route to us changed */ \
    X(TABLE_FULL, "table_full")         /* a destination refused: no entry left */ \
    X(ROUTES_TOO_LONG, "routes_too_long") /* records one hop short of the limit: ignored */ \
    X(LINKS_FULL, "links_full")         /* a link record refused: no slot left */  \
    X(BAD_ADVERTS, "bad_adverts")       /* malformed advertisements dropped */

enum route_table_counter {
#define ROUTE_TABLE_COUNTER_ENUM(name, text) ROUTE_TABLE_COUNT_##name,
    ROUTE_TABLE_COUNTERS(ROUTE_TABLE_COUNTER_ENUM)
#undef ROUTE_TABLE_COUNTER_ENUM
    ROUTE_TABLE_COUNTER_COUNT
};

struct route_table_entry {
    uint32_t destination;
    uint32_t seq;      /* the destination's sequence number */
    uint32_t fd_seq;   /* feasibility: the seq of fd_hops */
    uint16_t hops;     /* ROUTE_TABLE_HOPS_NONE: route lost */
    uint16_t fd_hops;  /* fewest hops held at fd_seq */
    uint8_t link;      /* next hop */
    bool in_use;
    uint32_t told;     /* links whose far node has this version */
};

struct route_table_link_record {
    uint32_t originator;
    uint32_t seq; /* the originator's link sequence number */
    uint8_t link; /* the originator's link */
    bool down;
    bool in_use;
    uint32_t told;
};

struct route_table_config {
    struct torus_geometry geometry;
    uint32_t rank;
    uint32_t link_mask;   /* links cabled here */
    uint32_t incarnation; /* boot incarnation: seeds the sequence numbers */
    /* How long a raise of this node's own seq waits once due, so that a
     * burst of link changes (cuts are found one by one, as the link layers
     * time out) costs one computation of the routes to it, not one each:
     * Phoenix's merged updates, in time.  0: at the next advertisement. */
    uint64_t raise_hold_ns;
};

struct route_table {
    struct torus_geometry geometry;
    uint32_t rank;
    uint32_t link_mask;
    uint32_t up_mask;
    uint32_t own_seq;      /* routes to this node */
    bool own_advertised;   /* a changed link lies on a route to this node */
    bool own_raise;        /* own_seq to be raised, at raise_at */
    uint64_t raise_at;     /* UINT64_MAX: not armed yet (by the next advertisement) */
    uint64_t raise_hold_ns;
    uint32_t own_told;
    uint32_t link_seq;     /* this node's link records */
    uint32_t dirty;        /* links with something not yet sent */
    uint32_t entry_count;
    uint64_t counters[ROUTE_TABLE_COUNTER_COUNT];
    struct route_table_link_record links[CONFIG_ROUTE_TABLE_LINKS];
    struct route_table_entry entries[CONFIG_ROUTE_TABLE_ENTRIES];
};

void route_table_init(struct route_table *table, const struct route_table_config *config);

/* A link of this node came up or went down (its session, as the link layer
 * sees it). */
void route_table_link_changed(struct route_table *table, unsigned link, bool up);

/* An advertisement that arrived on link; false (counted) when malformed or
 * the link is not up. */
bool route_table_receive(struct route_table *table, unsigned link, const uint8_t *payload,
                         size_t length);

/*
 * Writes into out the advertisement owed to the far node of link (as many
 * pending records as fit in capacity) and counts them as sent; returns its
 * length, 0 when nothing is owed or the link is not up.  The caller sends
 * it to that neighbour; a frame lost with its link is sent again when the
 * link comes back.
 */
size_t route_table_advert(struct route_table *table, unsigned link, uint8_t *out,
                          size_t capacity, uint64_t now_ns);

/* Links with an advertisement owed at now_ns. */
static inline uint32_t route_table_pending(const struct route_table *table, uint64_t now_ns)
{
    uint32_t due = table->own_raise && table->raise_at != UINT64_MAX && now_ns >= table->raise_at
                       ? table->link_mask
                       : 0u;
    return (table->dirty | due) & table->up_mask;
}

/* When a raise of this node's own seq falls due; UINT64_MAX: none armed. */
static inline uint64_t route_table_next_deadline(const struct route_table *table)
{
    return table->own_raise ? table->raise_at : UINT64_MAX;
}

/* The link to forward on towards destination: a link, TORUS_ROUTE_LOCAL,
 * TORUS_ROUTE_NONE (the entry has lost its route, or bad rank), or
 * ROUTE_TABLE_DEFAULT (no entry: dimension order). */
int route_table_next_hop(const struct route_table *table, uint32_t destination);

/* The TTL a frame leaves with under the tables: routes are loop-free, so
 * a path visits each node at most once; every node count up to 255 is
 * covered (an expiry is a bug, counted as ttl_expired). */
uint8_t route_table_ttl(const struct torus_geometry *geometry);

/* The entry for destination, NULL when none (for tests and tools). */
const struct route_table_entry *route_table_find(const struct route_table *table,
                                                 uint32_t destination);

/* Whether originator's record says its link is down (tests and tools). */
bool route_table_link_is_down(const struct route_table *table, uint32_t originator,
                              unsigned link);

static inline uint64_t route_table_counter(const struct route_table *table,
                                           enum route_table_counter counter)
{
    return (unsigned)counter < ROUTE_TABLE_COUNTER_COUNT ? table->counters[counter] : 0;
}
const char *route_table_counter_name(enum route_table_counter counter);

#endif /* NET_TORUS_ROUTE_TABLE_H */
