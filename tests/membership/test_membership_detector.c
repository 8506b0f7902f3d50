/*
 * The failure detector's timing rule, through the public API on a ring of
 * eight nodes (radix 4: node 1's children are 5, 6 and 7; its ring
 * neighbours are 0 and 2).  A watched torus neighbour that falls silent is
 * suspected after the heartbeat timeout; a member watched from further away
 * only after twice that, because its heartbeats may be crossing a dead node
 * that its neighbours are about to report, after which routes avoid it; it
 * is sent every other heartbeat.
 */
#include <stdint.h>
#include <string.h>

#include "membership/membership.h"
#include "tests/check.h"

#define N 8u
#define MS 1000000ull
#define TIMEOUT (60 * MS)

static struct membership nodes[N];
static struct membership_outbox out;

struct packet {
    uint32_t from;
    uint32_t to;
    uint16_t length;
    uint8_t bytes[MEMBERSHIP_MAX_PAYLOAD];
};
static struct packet queue[1024];
static unsigned queued;
static unsigned sent_from_1[N]; /* heartbeats node 1 sent, by destination */

static void start(bool watch_torus_neighbours)
{
    uint32_t ring[1] = {N};
    for (uint32_t id = 0; id < N; id++) {
        struct membership_config c;
        membership_config_defaults(&c);
        CHECK(torus_geometry_init(&c.geometry, 1, ring, NULL, NULL) == TORUS_GEOMETRY_OK);
        c.node_id = id;
        c.member_count = N;
        c.radix = 4;
        c.watch_torus_neighbours = watch_torus_neighbours;
        membership_config_timeouts_ms(&c, 10, 60);
        CHECK(membership_init(&nodes[id], &c) == MEMBERSHIP_INIT_OK);
    }
    queued = 0;
    memset(sent_from_1, 0, sizeof sent_from_1);
}

/* Queues what node `from` wrote; true if it reported `who` as failed. */
static bool collect(uint32_t from, uint32_t who)
{
    bool reported = false;
    for (uint32_t i = 0; i < out.message_count && queued < 1024; i++) {
        const struct membership_outgoing *m = &out.messages[i];
        struct packet *p = &queue[queued++];
        if (from == 1 && membership_outbox_payload(&out, i)[1] == MEMBERSHIP_MSG_HEARTBEAT)
            sent_from_1[m->destination]++;
        p->from = from;
        p->to = m->destination;
        p->length = (uint16_t)m->length;
        memcpy(p->bytes, membership_outbox_payload(&out, i), m->length);
    }
    for (uint32_t i = 0; i < out.event_count; i++) {
        const struct membership_event *e = &out.events[i];
        reported = reported || (from == 1 && e->type == MEMBERSHIP_EVENT_FAILURE_DETECTED &&
                                e->u.failure.who == who);
    }
    CHECK(out.dropped_messages == 0);
    membership_outbox_clear(&out);
    return reported;
}

/* Runs until `until` in 1 ms steps, frames delivered at once except those
 * from `silent` to node 1.  Returns when node 1 first reported `silent`
 * (0: never). */
static uint64_t detection_at_node1(uint32_t silent, uint64_t until)
{
    for (uint64_t now = 1; now <= until; now += MS) {
        bool reported = false;
        for (uint32_t id = 0; id < N; id++) {
            if (membership_next_deadline(&nodes[id]) <= now)
                membership_tick(&nodes[id], now, &out);
            reported = collect(id, silent) || reported;
        }
        for (unsigned i = 0; i < queued; i++) {
            const struct packet p = queue[i];
            if (p.from == silent && p.to == 1)
                continue;
            membership_receive(&nodes[p.to], p.bytes, p.length, now, &out);
            reported = collect(p.to, silent) || reported;
        }
        queued = 0;
        if (reported)
            return now;
    }
    return 0;
}

int main(void)
{
    /* Node 2, a ring neighbour of 1: suspected one timeout after it fell
     * silent (it was last heard at the start). */
    start(true);
    uint64_t at = detection_at_node1(2, 3 * TIMEOUT);
    CHECK(at > TIMEOUT && at <= TIMEOUT + 12 * MS);
    /* Meanwhile node 1 beat every 10 ms to its neighbour 0, every 20 ms to
     * its far children. */
    CHECK_EQ(sent_from_1[0], 7);
    CHECK_EQ(sent_from_1[5], 4);

    /* Node 6, a child of 1 three hops away: not before two timeouts. */
    start(true);
    at = detection_at_node1(6, 3 * TIMEOUT);
    CHECK(at > 2 * TIMEOUT && at <= 2 * TIMEOUT + 12 * MS);

    /* Without torus neighbours watching (nobody adjacent watches 6 then),
     * the tree's own watch is the only one: one timeout. */
    start(false);
    at = detection_at_node1(6, 3 * TIMEOUT);
    CHECK(at > TIMEOUT && at <= TIMEOUT + 12 * MS);
    return check_report("test_membership_detector");
}
