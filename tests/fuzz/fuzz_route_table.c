/*
 * The Phoenix routing tables (net/torus/route_table.h) of a small torus,
 * driven by the input: genuine advertisements delivered in any order (each
 * cable a FIFO each way, as the link layer delivers), cables cut and
 * mended, nodes restarted with a new incarnation, time, and three kinds of
 * foreign advertisement: raw bytes, well-formed records with any values
 * (sequence numbers anywhere in the 32-bit space), and genuine ones edited
 * on the wire.  What must hold:
 *  - a refused advertisement changes nothing but the counters;
 *  - an entry with a route has a next hop that is cabled and up, and hops
 *    from 1 to below the node count; route_table_find finds it, and
 *    entry_count counts the entries;
 *  - while no foreign advertisement was accepted, no sequence number goes
 *    backwards (route_table_seq_fresher): a node's own, its link
 *    records', and every entry's.  (Serial numbers are an order within
 *    half the space only: a forger's advert can carry several records
 *    that each step forward and together go round the circle);
 *  - every advertisement a table writes is well formed and its far node
 *    accepts it;
 *  - while no foreign advertisement was accepted, every walk of the tables
 *    (an entry's link, else dimension order) ends: no loop; and once every
 *    advert is delivered and none is owed (the settle op), every pair the
 *    cables up join is delivered.
 */
#include <string.h>

#include "net/torus/frame.h"
#include "net/torus/route.h"
#include "net/torus/route_table.h"
#include "tests/fuzz/fuzz.h"

#define MAX_NODES 16u
#define MAX_LINKS (2u * 3u)
#define WIRE_FRAMES 4u /* adverts in flight per direction of a cable */
#define ADVERT_SIZE 256u /* small frames: more records than fit, merged updates split */

struct wire {
    unsigned head;
    unsigned count;
    uint16_t length[WIRE_FRAMES];
    uint8_t bytes[WIRE_FRAMES][ADVERT_SIZE];
};

static const char *const shapes[] = {"4x4", "3x2x2", "2x2x2", "6"};

static struct torus_geometry geometry;
static uint32_t nodes;
static unsigned links;
static struct route_table tables[MAX_NODES];
static struct route_table before; /* a table before a foreign advert */
static uint32_t incarnation[MAX_NODES];
static struct wire wires[MAX_NODES][MAX_LINKS]; /* sent by node on link */
/* The last seqs seen: own, link records', and each entry's (valid when
 * entry_seen). */
static uint32_t own_seq[MAX_NODES];
static uint32_t link_seq[MAX_NODES];
static uint32_t entry_seq[MAX_NODES][MAX_NODES];
static bool entry_seen[MAX_NODES][MAX_NODES];
static uint8_t scratch[TORUS_FRAME_MAX_PAYLOAD];
static bool foreign; /* a foreign advert was taken: seqs and loops unchecked */

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t value)
{
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(value >> (8 * i));
}

static uint32_t far_node(uint32_t node, unsigned link)
{
    return torus_geometry_neighbour(&geometry, node, link);
}

static bool is_up(uint32_t node, unsigned link)
{
    return ((tables[node].up_mask >> link) & 1u) != 0;
}

/* No seq of node went backwards since the last look. */
static void check_node(uint32_t node)
{
    const struct route_table *t = &tables[node];
    FUZZ_CHECK(foreign || t->own_seq == own_seq[node] ||
                   route_table_seq_fresher(t->own_seq, own_seq[node]),
               "node %u: own seq %u after %u", node, t->own_seq, own_seq[node]);
    FUZZ_CHECK(foreign || t->link_seq == link_seq[node] ||
                   route_table_seq_fresher(t->link_seq, link_seq[node]),
               "node %u: link seq %u after %u", node, t->link_seq, link_seq[node]);
    own_seq[node] = t->own_seq;
    link_seq[node] = t->link_seq;
    uint32_t in_use = 0;
    for (uint32_t i = 0; i < CONFIG_ROUTE_TABLE_ENTRIES; i++) {
        const struct route_table_entry *e = &t->entries[i];
        if (!e->in_use)
            continue;
        in_use++;
        uint32_t d = e->destination;
        FUZZ_CHECK(d < nodes && d != node, "node %u: an entry for %u", node, d);
        FUZZ_CHECK(route_table_find(t, d) == e, "node %u: entry for %u not found", node, d);
        if (e->hops != ROUTE_TABLE_HOPS_NONE) {
            FUZZ_CHECK(e->hops >= 1 && e->hops < nodes,
                       "node %u: %u hops to %u", node, e->hops, d);
            FUZZ_CHECK(e->link < links && is_up(node, e->link),
                       "node %u: route to %u through link %u, down", node, d, e->link);
            FUZZ_CHECK(route_table_next_hop(t, d) == e->link, "node %u: next hop to %u", node, d);
        } else {
            FUZZ_CHECK(route_table_next_hop(t, d) == TORUS_ROUTE_NONE,
                       "node %u: lost route to %u has a next hop", node, d);
        }
        FUZZ_CHECK(foreign || !entry_seen[node][d] || e->seq == entry_seq[node][d] ||
                       route_table_seq_fresher(e->seq, entry_seq[node][d]),
                   "node %u: seq of %u went from %u to %u", node, d, entry_seq[node][d], e->seq);
        entry_seq[node][d] = e->seq;
        entry_seen[node][d] = true;
    }
    FUZZ_CHECK(in_use == t->entry_count, "node %u: %u entries, counted %u", node, in_use,
               t->entry_count);
}

/* An advertisement a table wrote: well formed, every record in range. */
static void check_advert(uint32_t node, const uint8_t *bytes, size_t length)
{
    FUZZ_CHECK(length >= ROUTE_TABLE_ADVERT_HEADER && length <= ADVERT_SIZE,
               "node %u: advert of %zu bytes", node, length);
    FUZZ_CHECK(bytes[0] == ROUTE_TABLE_FORMAT && bytes[1] == 0, "node %u: header", node);
    size_t link_records = (size_t)(bytes[2] | bytes[3] << 8);
    size_t routes = (size_t)(bytes[4] | bytes[5] << 8);
    FUZZ_CHECK(link_records + routes > 0 &&
                   length == ROUTE_TABLE_ADVERT_HEADER + link_records * ROUTE_TABLE_LINK_RECORD +
                                 routes * ROUTE_TABLE_ROUTE_RECORD,
               "node %u: %zu bytes for %zu + %zu records", node, length, link_records, routes);
    const uint8_t *p = bytes + ROUTE_TABLE_ADVERT_HEADER + link_records * ROUTE_TABLE_LINK_RECORD;
    for (size_t i = 0; i < routes; i++, p += ROUTE_TABLE_ROUTE_RECORD) {
        uint32_t d = get_u32(p);
        uint16_t hops = (uint16_t)(p[8] | p[9] << 8);
        FUZZ_CHECK(d < nodes && hops < nodes &&
                       (hops == 0) == (d == node),
                   "node %u: route record (%u, %u hops)", node, d, hops);
        if (d == node)
            FUZZ_CHECK(get_u32(p + 4) == tables[node].own_seq, "node %u: own record's seq",
                       node);
    }
}

/* Every advertisement node owes, onto its cables (while there is room:
 * the link layer never loses a frame on a cable that stays up). */
static void collect(uint32_t node, uint64_t now)
{
    for (unsigned link = 0; link < links; link++) {
        struct wire *w = &wires[node][link];
        if (w->count == WIRE_FRAMES || ((route_table_pending(&tables[node], now) >> link) & 1u) == 0)
            continue;
        unsigned slot = (w->head + w->count) % WIRE_FRAMES;
        size_t length = route_table_advert(&tables[node], link, w->bytes[slot], ADVERT_SIZE, now);
        if (length == 0)
            continue;
        check_advert(node, w->bytes[slot], length);
        w->length[slot] = (uint16_t)length;
        w->count++;
    }
    check_node(node);
}

/* Delivers bytes to node on link (from its far node, or forged: then
 * taken, they make the run foreign before the table is looked at):
 * false when refused, and then the table must be as it was. */
static bool receive(uint32_t node, unsigned link, const uint8_t *bytes, size_t length,
                    bool forged)
{
    memcpy(&before, &tables[node], sizeof before);
    bool taken = route_table_receive(&tables[node], link, bytes, length);
    foreign |= taken && forged;
    if (!taken) {
        memcpy(before.counters, tables[node].counters, sizeof before.counters);
        FUZZ_CHECK(memcmp(&before, &tables[node], sizeof before) == 0,
                   "node %u: a refused advert changed the table", node);
    }
    check_node(node);
    return taken;
}

/* The oldest advert node sent on link, delivered, maybe edited first. */
static void deliver(uint32_t node, unsigned link, struct fuzz_input *in, bool edit)
{
    struct wire *w = &wires[node][link];
    if (w->count == 0)
        return;
    size_t length = w->length[w->head];
    memcpy(scratch, w->bytes[w->head], length);
    w->head = (w->head + 1u) % WIRE_FRAMES;
    w->count--;
    bool forged = false;
    if (edit) {
        const uint8_t *sent = w->bytes[(w->head + WIRE_FRAMES - 1u) % WIRE_FRAMES];
        unsigned edits = 1u + fuzz_u8(in) % 4u;
        for (unsigned k = 0; k < edits; k++)
            scratch[fuzz_u8(in) % length] = fuzz_u8(in);
        forged = memcmp(scratch, sent, length) != 0;
    }
    uint32_t far = far_node(node, link);
    bool taken = receive(far, torus_geometry_opposite_link(link), scratch, length, forged);
    FUZZ_CHECK(forged || taken, "node %u refused node %u's advert", far, node);
}

/* Cuts or mends the cable of node's link, both ends, losing what was on it. */
static void cable(uint32_t node, unsigned link, bool up)
{
    uint32_t far = far_node(node, link);
    unsigned far_link = torus_geometry_opposite_link(link);
    route_table_link_changed(&tables[node], link, up);
    route_table_link_changed(&tables[far], far_link, up);
    memset(&wires[node][link], 0, sizeof wires[node][link]);
    memset(&wires[far][far_link], 0, sizeof wires[far][far_link]);
    check_node(node);
    check_node(far);
}

/* The node restarts: its cables go down and come back, its table starts
 * again from a later incarnation. */
static void restart(uint32_t node, uint16_t hold_ns)
{
    uint32_t up = tables[node].up_mask;
    for (unsigned link = 0; link < links; link++)
        if ((up >> link) & 1u)
            cable(node, link, false);
    incarnation[node]++;
    struct route_table_config config = {.geometry = geometry,
                                        .rank = node,
                                        .link_mask = torus_geometry_link_mask(&geometry, node),
                                        .incarnation = incarnation[node],
                                        .raise_hold_ns = hold_ns};
    route_table_init(&tables[node], &config);
    own_seq[node] = tables[node].own_seq;
    link_seq[node] = tables[node].link_seq;
    memset(entry_seen[node], 0, sizeof entry_seen[node]);
    for (unsigned link = 0; link < links; link++)
        if ((up >> link) & 1u)
            cable(node, link, true);
}

/* Well-formed records with any values, mostly in range. */
static size_t forge(struct fuzz_input *in, uint8_t *out)
{
    unsigned link_records = fuzz_u8(in) % 4u;
    unsigned routes = fuzz_u8(in) % 4u;
    out[0] = ROUTE_TABLE_FORMAT;
    out[1] = 0;
    out[2] = (uint8_t)link_records;
    out[3] = 0;
    out[4] = (uint8_t)routes;
    out[5] = 0;
    uint8_t *p = out + ROUTE_TABLE_ADVERT_HEADER;
    for (unsigned i = 0; i < link_records; i++, p += ROUTE_TABLE_LINK_RECORD) {
        put_u32(p, fuzz_u8(in) % (nodes + 1u));
        put_u32(p + 4, fuzz_u32(in));
        p[8] = (uint8_t)(fuzz_u8(in) % (links + 1u));
        p[9] = fuzz_u8(in) % 3u;
    }
    for (unsigned i = 0; i < routes; i++, p += ROUTE_TABLE_ROUTE_RECORD) {
        put_u32(p, fuzz_u8(in) % (nodes + 1u));
        put_u32(p + 4, fuzz_u32(in));
        uint16_t hops = fuzz_u16(in);
        p[8] = (uint8_t)hops;
        p[9] = (uint8_t)(hops >> 8);
    }
    return (size_t)(p - out);
}

/* Every pair walked as the network forwards (an entry's link, else
 * dimension order over the links up): each walk ends.  Per destination,
 * a node whose walk is known to end ends every walk that reaches it. */
static void check_walks(void)
{
    enum { UNKNOWN, ON_WALK, ENDS };
    uint8_t state[MAX_NODES];
    uint32_t path[MAX_NODES];
    for (uint32_t d = 0; d < nodes; d++) {
        memset(state, UNKNOWN, sizeof state);
        for (uint32_t s = 0; s < nodes; s++) {
            uint32_t length = 0;
            uint32_t here = s;
            while (state[here] == UNKNOWN) {
                state[here] = ON_WALK;
                path[length++] = here;
                int link = route_table_next_hop(&tables[here], d);
                if (link == ROUTE_TABLE_DEFAULT)
                    link = torus_route_next_hop(&geometry, here, d, tables[here].up_mask);
                if (link < 0)
                    break;
                here = far_node(here, (unsigned)link);
                FUZZ_CHECK(state[here] != ON_WALK, "a loop from %u to %u through %u", s, d, here);
            }
            for (uint32_t k = 0; k < length; k++)
                state[path[k]] = ENDS;
        }
    }
}

/* Every advert owed sent and delivered, time past every hold, until
 * nothing is owed or in flight: true when that happened in rounds. */
static bool settle(uint64_t *now, uint16_t hold_ns)
{
    for (unsigned round = 0; round < 64u * MAX_NODES; round++) {
        *now += (uint64_t)hold_ns + 1u;
        bool busy = false;
        for (uint32_t n = 0; n < nodes; n++) {
            collect(n, *now);
            /* A raise armed with a link up falls due next round. */
            busy |= route_table_pending(&tables[n], *now) != 0 ||
                    (tables[n].up_mask != 0 &&
                     route_table_next_deadline(&tables[n]) != UINT64_MAX);
        }
        for (uint32_t n = 0; n < nodes; n++)
            for (unsigned l = 0; l < links; l++)
                while (wires[n][l].count > 0) {
                    deliver(n, l, NULL, false);
                    busy = true;
                }
        if (!busy)
            return true;
    }
    return false;
}

/* Settled with genuine adverts only: every pair that the cables up join
 * is delivered by the walk. */
static void check_joined_pairs(void)
{
    uint32_t distance[MAX_NODES];
    uint32_t queue[MAX_NODES];
    for (uint32_t s = 0; s < nodes; s++) {
        for (uint32_t n = 0; n < nodes; n++)
            distance[n] = UINT32_MAX;
        uint32_t head = 0, tail = 0;
        distance[s] = 0;
        queue[tail++] = s;
        while (head < tail) {
            uint32_t here = queue[head++];
            for (unsigned l = 0; l < links; l++) {
                uint32_t next = far_node(here, l);
                if (is_up(here, l) && distance[next] == UINT32_MAX) {
                    distance[next] = distance[here] + 1u;
                    queue[tail++] = next;
                }
            }
        }
        for (uint32_t d = 0; d < nodes; d++) {
            if (distance[d] == UINT32_MAX)
                continue;
            uint32_t here = s;
            for (uint32_t taken = 0; here != d && taken <= nodes; taken++) {
                int link = route_table_next_hop(&tables[here], d);
                if (link == ROUTE_TABLE_DEFAULT)
                    link = torus_route_next_hop(&geometry, here, d, tables[here].up_mask);
                FUZZ_CHECK(link >= 0, "settled: %u to %u stops at %u (%d)", s, d, here, link);
                here = far_node(here, (unsigned)link);
            }
            FUZZ_CHECK(here == d, "settled: %u to %u loops", s, d);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in;
    fuzz_input_init(&in, data, size);
    unsigned count = 0;
    uint32_t sizes[CONFIG_MAX_DIMS];
    const char *shape = shapes[fuzz_u8(&in) % (sizeof shapes / sizeof shapes[0])];
    FUZZ_CHECK(torus_geometry_parse_dims(shape, &count, sizes, NULL) == TORUS_GEOMETRY_OK, "%s",
               shape);
    FUZZ_CHECK(torus_geometry_init(&geometry, count, sizes, NULL, NULL) == TORUS_GEOMETRY_OK,
               "%s", shape);
    nodes = torus_geometry_node_count(&geometry);
    links = torus_geometry_link_count(&geometry);
    FUZZ_CHECK(nodes <= MAX_NODES && links <= MAX_LINKS, "%s too big", shape);
    /* Any incarnation: seqs start anywhere in the space, near its top too. */
    uint16_t first_incarnation = fuzz_u16(&in);
    uint16_t hold_ns = fuzz_u16(&in);
    memset(wires, 0, sizeof wires);
    memset(entry_seen, 0, sizeof entry_seen);
    for (uint32_t n = 0; n < nodes; n++) {
        incarnation[n] = (uint32_t)first_incarnation + n;
        struct route_table_config config = {.geometry = geometry,
                                            .rank = n,
                                            .link_mask = torus_geometry_link_mask(&geometry, n),
                                            .incarnation = incarnation[n],
                                            .raise_hold_ns = hold_ns};
        route_table_init(&tables[n], &config);
        own_seq[n] = tables[n].own_seq;
        link_seq[n] = tables[n].link_seq;
    }
    for (uint32_t n = 0; n < nodes; n++)
        for (unsigned l = 0; l < links; l++)
            route_table_link_changed(&tables[n], l, true);
    uint64_t now = 0;
    foreign = false;
    for (unsigned step = 0; step < 2048 && !fuzz_input_done(&in); step++) {
        uint8_t op = fuzz_u8(&in);
        uint8_t which = fuzz_u8(&in);
        uint32_t node = which % nodes;
        unsigned link = (unsigned)(which / nodes) % links;
        switch (op % 11u) {
        case 0:
        case 1: deliver(node, link, &in, false); break;
        case 2: collect(node, now); break;
        case 3:
            for (uint32_t n = 0; n < nodes; n++)
                collect(n, now);
            break;
        case 4: now += (uint64_t)fuzz_u16(&in) * 16u; break;
        case 5: cable(node, link, !is_up(node, link)); break;
        case 6: restart(node, hold_ns); break;
        case 7: deliver(node, link, &in, true); break;
        case 8: {
            size_t length = forge(&in, scratch);
            receive(node, link, scratch, length, true);
            break;
        }
        case 10: /* forged seqs need not settle: then no check to make */
            if (!foreign) {
                FUZZ_CHECK(settle(&now, hold_ns), "genuine adverts did not settle");
                check_joined_pairs();
            }
            break;
        default: {
            size_t got = 0;
            const uint8_t *bytes = fuzz_bytes(&in, fuzz_u8(&in), &got);
            receive(node, link, bytes, got, true);
            break;
        }
        }
        if (!foreign && step % 32u == 31u) /* walks are the costly check */
            check_walks();
    }
    if (!foreign)
        check_walks();
    return 0;
}
