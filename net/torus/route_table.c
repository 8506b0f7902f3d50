#include "net/torus/route_table.h"

#include <string.h>

#include "net/torus/route.h"

static const char *const counter_names[] = {
#define ROUTE_TABLE_COUNTER_NAME(name, text) text,
    ROUTE_TABLE_COUNTERS(ROUTE_TABLE_COUNTER_NAME)
#undef ROUTE_TABLE_COUNTER_NAME
};

const char *route_table_counter_name(enum route_table_counter counter)
{
    return (unsigned)counter < ROUTE_TABLE_COUNTER_COUNT ? counter_names[counter] : "?";
}

static void count(struct route_table *table, enum route_table_counter counter)
{
    table->counters[counter]++;
}

/* A node's sequence numbers start from its boot incarnation, so that a
 * restarted node's are fresher than its earlier life's (16 bits of changes
 * per life). */
static uint32_t first_seq(uint32_t incarnation)
{
    return incarnation << 16;
}

void route_table_init(struct route_table *table, const struct route_table_config *config)
{
    memset(table, 0, sizeof *table);
    table->geometry = config->geometry;
    table->rank = config->rank;
    table->link_mask = config->link_mask & torus_geometry_link_mask(&config->geometry,
                                                                    config->rank);
    table->own_seq = first_seq(config->incarnation);
    table->raise_at = UINT64_MAX;
    table->raise_hold_ns = config->raise_hold_ns;
    table->link_seq = first_seq(config->incarnation);
}

/* Something changed that the far nodes of the links not in told lack. */
static void owe(struct route_table *table, uint32_t told)
{
    table->dirty |= table->link_mask & ~told;
}

/* Open addressing by destination; entries are never freed, so a probe
 * sequence never has holes. */
static uint32_t slot_of(uint32_t destination)
{
    return (destination * 2654435761u) & (CONFIG_ROUTE_TABLE_ENTRIES - 1u);
}

/* The slot of destination's entry, or of the free slot where it would go
 * (CONFIG_ROUTE_TABLE_ENTRIES: neither, the table is full). */
static uint32_t lookup(const struct route_table *table, uint32_t destination)
{
    uint32_t slot = slot_of(destination);
    for (uint32_t probe = 0; probe < CONFIG_ROUTE_TABLE_ENTRIES; probe++) {
        uint32_t at = (slot + probe) & (CONFIG_ROUTE_TABLE_ENTRIES - 1u);
        const struct route_table_entry *entry = &table->entries[at];
        if (!entry->in_use || entry->destination == destination)
            return at;
    }
    return CONFIG_ROUTE_TABLE_ENTRIES;
}

const struct route_table_entry *route_table_find(const struct route_table *table,
                                                 uint32_t destination)
{
    uint32_t at = lookup(table, destination);
    if (at == CONFIG_ROUTE_TABLE_ENTRIES || !table->entries[at].in_use)
        return NULL;
    return &table->entries[at];
}

/* The index of originator's record of link, -1: none. */
static int link_index(const struct route_table *table, uint32_t originator, unsigned link)
{
    for (unsigned i = 0; i < CONFIG_ROUTE_TABLE_LINKS; i++) {
        const struct route_table_link_record *record = &table->links[i];
        if (record->in_use && record->originator == originator && record->link == link)
            return (int)i;
    }
    return -1;
}

static struct route_table_link_record *find_link(struct route_table *table, uint32_t originator,
                                                 unsigned link)
{
    int i = link_index(table, originator, link);
    return i < 0 ? NULL : &table->links[i];
}

/* A slot for a new link record: a free one, else one saying "up" (a link
 * back up routes as if never recorded; forgetting it costs at most a
 * needless seq raise should a stale "down" come back). */
static struct route_table_link_record *new_link(struct route_table *table)
{
    struct route_table_link_record *up = NULL;
    for (unsigned i = 0; i < CONFIG_ROUTE_TABLE_LINKS; i++) {
        struct route_table_link_record *record = &table->links[i];
        if (!record->in_use)
            return record;
        if (!record->down && up == NULL)
            up = record;
    }
    return up;
}

bool route_table_link_is_down(const struct route_table *table, uint32_t originator,
                              unsigned link)
{
    int i = link_index(table, originator, link);
    return i >= 0 && table->links[i].down;
}

/* This node's routes changed: a fresher seq, advertised to every neighbour.
 * Taken when the next advertisement is written, so that the changes learned
 * meanwhile (a wall of cuts arrives as many records) cost one seq, and one
 * computation of the routes, not one each: Phoenix's merged updates. */
static void raise_own_seq(struct route_table *table)
{
    table->own_advertised = true;
    if (!table->own_raise) {
        table->own_raise = true;
        table->raise_at = UINT64_MAX; /* armed by the next advertisement */
        owe(table, 0);
    }
}

/* Whether the cable of originator's link lies on a dimension-order route
 * to this node, either way: the hop at originator towards it is that
 * link, or the hop at the far end is the far end's link of the cable.
 * Either end's record is enough: the other's may never be sent (its node
 * restarted before sending it, and a link that never comes up is no
 * news). */
static bool cable_on_route_here(const struct route_table *table, uint32_t originator,
                                unsigned link)
{
    const struct torus_geometry *g = &table->geometry;
    if (torus_route_preferred_hop(g, originator, table->rank) == (int)link)
        return true;
    if (((torus_geometry_link_mask(g, originator) >> link) & 1u) == 0)
        return false;
    uint32_t far = torus_geometry_neighbour(g, originator, link);
    return torus_route_preferred_hop(g, far, table->rank) == (int)torus_geometry_opposite_link(link);
}

/* A link record, new or fresher (or this node's own): if the cable lies on
 * a dimension-order route to this node, or the tables hold routes to it
 * (one may have gone through that link, and it only comes back with a
 * fresher seq), the routes to it must be computed again. */
static void link_learned(struct route_table *table, uint32_t originator, unsigned link)
{
    if (table->own_advertised || cable_on_route_here(table, originator, link))
        raise_own_seq(table);
}

/* This node's own link record, with a fresher seq. */
static void originate_link(struct route_table *table, unsigned link, bool down)
{
    struct route_table_link_record *record = find_link(table, table->rank, link);
    if (record == NULL)
        record = new_link(table);
    if (record == NULL) {
        count(table, ROUTE_TABLE_COUNT_LINKS_FULL);
        return;
    }
    record->in_use = true;
    record->originator = table->rank;
    record->link = (uint8_t)link;
    record->down = down;
    record->seq = ++table->link_seq;
    record->told = 0;
    owe(table, 0);
    count(table, ROUTE_TABLE_COUNT_LINKS_LEARNED);
    link_learned(table, table->rank, link);
}

void route_table_link_changed(struct route_table *table, unsigned link, bool up)
{
    if (link >= CONFIG_MAX_LINKS || ((table->link_mask >> link) & 1u) == 0)
        return;
    uint32_t bit = 1u << link;
    if (((table->up_mask & bit) != 0) == up)
        return;
    if (up) {
        table->up_mask |= bit;
    } else {
        table->up_mask &= ~bit;
        /* The far node must be told everything again when the link is back. */
        table->own_told &= ~bit;
        for (unsigned i = 0; i < CONFIG_ROUTE_TABLE_LINKS; i++)
            table->links[i].told &= ~bit;
        for (uint32_t i = 0; i < CONFIG_ROUTE_TABLE_ENTRIES; i++) {
            struct route_table_entry *entry = &table->entries[i];
            entry->told &= ~bit;
            if (entry->in_use && entry->link == link && entry->hops != ROUTE_TABLE_HOPS_NONE) {
                entry->hops = ROUTE_TABLE_HOPS_NONE;
                count(table, ROUTE_TABLE_COUNT_ROUTES_LOST);
            }
        }
        table->dirty |= bit;
    }
    /* A link coming up for the first time is no news: only failures, and
     * their ends, are advertised. */
    if (!up || find_link(table, table->rank, link) != NULL)
        originate_link(table, link, !up);
}

/* ------------------------------------------------------------------ */
/* Receiving                                                            */
/* ------------------------------------------------------------------ */

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void put_u32(uint8_t *p, uint32_t value)
{
    p[0] = (uint8_t)value;
    p[1] = (uint8_t)(value >> 8);
    p[2] = (uint8_t)(value >> 16);
    p[3] = (uint8_t)(value >> 24);
}

static void put_u16(uint8_t *p, uint16_t value)
{
    p[0] = (uint8_t)value;
    p[1] = (uint8_t)(value >> 8);
}

static void receive_link_record(struct route_table *table, unsigned from, uint32_t originator,
                                uint32_t seq, unsigned link, bool down)
{
    uint32_t bit = 1u << from;
    if (originator == table->rank) {
        if (((table->link_mask >> link) & 1u) == 0)
            return; /* no such link here: nothing to say about it */
        /* An earlier life's record of ours, as fresh as ours or fresher:
         * say again how the link is, with a fresher seq. */
        struct route_table_link_record *mine = find_link(table, originator, link);
        if (mine != NULL && seq == mine->seq) {
            mine->told |= bit; /* our own, back */
            return;
        }
        if (seq == table->link_seq || route_table_seq_fresher(seq, table->link_seq)) {
            table->link_seq = seq;
            bool is_down = ((table->up_mask >> link) & 1u) == 0;
            if (mine != NULL || down != is_down)
                originate_link(table, link, is_down);
        }
        return;
    }
    struct route_table_link_record *record = find_link(table, originator, link);
    /* An older record: the sender has ours, or will (it is owed to every
     * link not told). */
    if (record != NULL && seq != record->seq && !route_table_seq_fresher(seq, record->seq))
        return;
    if (record != NULL && seq == record->seq) {
        record->told |= bit;
        return;
    }
    if (record == NULL) {
        record = new_link(table);
        if (record == NULL) {
            count(table, ROUTE_TABLE_COUNT_LINKS_FULL);
            return;
        }
    }
    record->in_use = true;
    record->originator = originator;
    record->link = (uint8_t)link;
    record->seq = seq;
    record->down = down;
    record->told = bit;
    owe(table, bit);
    count(table, ROUTE_TABLE_COUNT_LINKS_LEARNED);
    link_learned(table, originator, link);
}

/* Takes the route (seq, hops) through link for entry. */
static void take(struct route_table *table, struct route_table_entry *entry, unsigned link,
                 uint32_t seq, uint16_t hops)
{
    /* The version last advertised again (a lost route regained as it was):
     * the neighbours told have it still. */
    bool same = entry->seq == seq && entry->fd_seq == seq && entry->fd_hops == hops &&
                (entry->hops == hops || entry->hops == ROUTE_TABLE_HOPS_NONE);
    if (seq != entry->fd_seq || hops < entry->fd_hops) {
        entry->fd_seq = seq;
        entry->fd_hops = hops;
    }
    entry->seq = seq;
    entry->hops = hops;
    entry->link = (uint8_t)link;
    entry->told = (same ? entry->told : 0) | 1u << link; /* it came from there */
    owe(table, entry->told);
    count(table, ROUTE_TABLE_COUNT_ROUTES_TAKEN);
}

/* Route records' and entries' hops are below this: below the node count,
 * as a loop-free path's are, and below ROUTE_TABLE_HOPS_NONE - 1. */
static uint32_t hops_limit(const struct route_table *table)
{
    uint32_t nodes = torus_geometry_node_count(&table->geometry);
    return nodes < ROUTE_TABLE_HOPS_NONE - 1u ? nodes : ROUTE_TABLE_HOPS_NONE - 1u;
}

static void receive_route_record(struct route_table *table, unsigned from, uint32_t destination,
                                 uint32_t seq, uint16_t hops)
{
    uint32_t bit = 1u << from;
    if (destination == table->rank) {
        /* Someone holds a seq of ours fresher than ours: an earlier life's. */
        if (route_table_seq_fresher(seq, table->own_seq)) {
            table->own_seq = seq;
            raise_own_seq(table);
        }
        return;
    }
    /* No loop-free path is that long; taken, it would be advertised at a
     * length the neighbours refuse, and with it the rest of the advert. */
    if (hops + 1u >= hops_limit(table)) {
        count(table, ROUTE_TABLE_COUNT_ROUTES_TOO_LONG);
        return;
    }
    uint16_t candidate = (uint16_t)(hops + 1u);
    uint32_t at = lookup(table, destination);
    if (at == CONFIG_ROUTE_TABLE_ENTRIES) {
        count(table, ROUTE_TABLE_COUNT_TABLE_FULL);
        return;
    }
    struct route_table_entry *entry = &table->entries[at];
    if (!entry->in_use) {
        memset(entry, 0, sizeof *entry);
        entry->in_use = true;
        entry->destination = destination;
        table->entry_count++;
        take(table, entry, from, seq, candidate);
        return;
    }
    if (route_table_seq_fresher(seq, entry->seq)) {
        take(table, entry, from, seq, candidate);
        return;
    }
    if (seq != entry->seq) {
        count(table, ROUTE_TABLE_COUNT_ROUTES_STALE); /* the sender gets ours, owed */
        return;
    }
    bool feasible = seq != entry->fd_seq || hops < entry->fd_hops;
    if (feasible && (entry->hops == ROUTE_TABLE_HOPS_NONE || candidate < entry->hops)) {
        take(table, entry, from, seq, candidate);
        return;
    }
    if (feasible && candidate == entry->hops && from != entry->link &&
        torus_route_preferred_hop(&table->geometry, table->rank, destination) == (int)from) {
        entry->link = (uint8_t)from; /* as good, and the dimension-order way */
        entry->told |= bit;
        return;
    }
    /* The sender's is as good as ours: ours would be no news there.  (When
     * ours is better, it is owed to the sender already or on its way.) */
    if (entry->hops == ROUTE_TABLE_HOPS_NONE || entry->hops >= hops)
        entry->told |= bit;
}

bool route_table_receive(struct route_table *table, unsigned link, const uint8_t *payload,
                         size_t length)
{
    if (link >= CONFIG_MAX_LINKS || ((table->up_mask >> link) & 1u) == 0 || payload == NULL ||
        length < ROUTE_TABLE_ADVERT_HEADER || payload[0] != ROUTE_TABLE_FORMAT ||
        payload[1] != 0) {
        count(table, ROUTE_TABLE_COUNT_BAD_ADVERTS);
        return false;
    }
    size_t links = get_u16(payload + 2);
    size_t routes = get_u16(payload + 4);
    if (length != ROUTE_TABLE_ADVERT_HEADER + links * ROUTE_TABLE_LINK_RECORD +
                      routes * ROUTE_TABLE_ROUTE_RECORD) {
        count(table, ROUTE_TABLE_COUNT_BAD_ADVERTS);
        return false;
    }
    /* Every record checked before any is used: a bad one refuses the lot. */
    uint32_t nodes = torus_geometry_node_count(&table->geometry);
    const uint8_t *p = payload + ROUTE_TABLE_ADVERT_HEADER;
    for (size_t i = 0; i < links; i++, p += ROUTE_TABLE_LINK_RECORD) {
        if (get_u32(p) >= nodes || p[8] >= torus_geometry_link_count(&table->geometry) ||
            p[9] > 1) {
            count(table, ROUTE_TABLE_COUNT_BAD_ADVERTS);
            return false;
        }
    }
    for (size_t i = 0; i < routes; i++, p += ROUTE_TABLE_ROUTE_RECORD) {
        if (get_u32(p) >= nodes || get_u16(p + 8) >= hops_limit(table)) {
            count(table, ROUTE_TABLE_COUNT_BAD_ADVERTS);
            return false;
        }
    }
    count(table, ROUTE_TABLE_COUNT_ADVERTS_RECEIVED);
    /* Link records first: they may raise this node's own seq. */
    p = payload + ROUTE_TABLE_ADVERT_HEADER;
    for (size_t i = 0; i < links; i++, p += ROUTE_TABLE_LINK_RECORD)
        receive_link_record(table, link, get_u32(p), get_u32(p + 4), p[8], p[9] != 0);
    for (size_t i = 0; i < routes; i++, p += ROUTE_TABLE_ROUTE_RECORD)
        receive_route_record(table, link, get_u32(p), get_u32(p + 4), get_u16(p + 8));
    return true;
}

/* ------------------------------------------------------------------ */
/* Advertising                                                          */
/* ------------------------------------------------------------------ */

/* Link records some neighbour up has not had yet: while a burst of link
 * changes floods through, this node is mid-burst, and raising its own seq
 * now would start a computation of its routes that the next record makes
 * obsolete. */
static unsigned links_untold(const struct route_table *table)
{
    unsigned untold = 0;
    for (unsigned i = 0; i < CONFIG_ROUTE_TABLE_LINKS; i++)
        if (table->links[i].in_use && (table->up_mask & ~table->links[i].told) != 0)
            untold++;
    return untold;
}

size_t route_table_advert(struct route_table *table, unsigned link, uint8_t *out,
                          size_t capacity, uint64_t now_ns)
{
    if (link >= CONFIG_MAX_LINKS || capacity < ROUTE_TABLE_ADVERT_HEADER + ROUTE_TABLE_LINK_RECORD)
        return 0;
    uint32_t bit = 1u << link;
    if ((route_table_pending(table, now_ns) & bit) == 0)
        return 0;
    if (table->own_raise && table->raise_at == UINT64_MAX)
        table->raise_at = now_ns + table->raise_hold_ns;
    size_t room = (capacity - ROUTE_TABLE_ADVERT_HEADER) / ROUTE_TABLE_LINK_RECORD;
    size_t links = 0;
    size_t routes = 0;
    bool all = true;
    uint8_t *p = out + ROUTE_TABLE_ADVERT_HEADER;
    for (unsigned i = 0; i < CONFIG_ROUTE_TABLE_LINKS; i++) {
        struct route_table_link_record *record = &table->links[i];
        if (!record->in_use || (record->told & bit) != 0)
            continue;
        if (links == room) {
            all = false;
            break;
        }
        put_u32(p, record->originator);
        put_u32(p + 4, record->seq);
        p[8] = record->link;
        p[9] = record->down ? 1u : 0u;
        p += ROUTE_TABLE_LINK_RECORD;
        record->told |= bit;
        links++;
    }
    /* Route records after the link records (same size, so one room). */
    if (table->own_raise && now_ns >= table->raise_at && links_untold(table) == 0) {
        table->own_raise = false;
        table->raise_at = UINT64_MAX;
        table->own_seq++;
        table->own_told = 0;
        owe(table, 0);
        count(table, ROUTE_TABLE_COUNT_SEQ_RAISED);
    }
    if (table->own_advertised && (table->own_told & bit) == 0) {
        if (links + routes == room) {
            all = false;
        } else {
            put_u32(p, table->rank);
            put_u32(p + 4, table->own_seq);
            put_u16(p + 8, 0);
            p += ROUTE_TABLE_ROUTE_RECORD;
            table->own_told |= bit;
            routes++;
        }
    }
    for (uint32_t i = 0; all && i < CONFIG_ROUTE_TABLE_ENTRIES; i++) {
        struct route_table_entry *entry = &table->entries[i];
        if (!entry->in_use || entry->hops == ROUTE_TABLE_HOPS_NONE || (entry->told & bit) != 0)
            continue;
        if (links + routes == room) {
            all = false;
            break;
        }
        put_u32(p, entry->destination);
        put_u32(p + 4, entry->seq);
        put_u16(p + 8, entry->hops);
        p += ROUTE_TABLE_ROUTE_RECORD;
        entry->told |= bit;
        routes++;
    }
    /* A raise still waiting is owed through route_table_pending once due. */
    if (all)
        table->dirty &= ~bit;
    if (links + routes == 0)
        return 0;
    out[0] = ROUTE_TABLE_FORMAT;
    out[1] = 0;
    put_u16(out + 2, (uint16_t)links);
    put_u16(out + 4, (uint16_t)routes);
    count(table, ROUTE_TABLE_COUNT_ADVERTS_SENT);
    table->counters[ROUTE_TABLE_COUNT_RECORDS_SENT] += links + routes;
    return (size_t)(p - out);
}

int route_table_next_hop(const struct route_table *table, uint32_t destination)
{
    if (destination >= torus_geometry_node_count(&table->geometry))
        return TORUS_ROUTE_NONE;
    if (destination == table->rank)
        return TORUS_ROUTE_LOCAL;
    const struct route_table_entry *entry = route_table_find(table, destination);
    if (entry == NULL)
        return ROUTE_TABLE_DEFAULT;
    if (entry->hops == ROUTE_TABLE_HOPS_NONE || ((table->up_mask >> entry->link) & 1u) == 0)
        return TORUS_ROUTE_NONE;
    return entry->link;
}

uint8_t route_table_ttl(const struct torus_geometry *geometry)
{
    uint32_t ttl = torus_route_ttl(geometry);
    uint32_t nodes = torus_geometry_node_count(geometry);
    if (nodes > ttl)
        ttl = nodes;
    return (uint8_t)(ttl < 255u ? ttl : 255u);
}
