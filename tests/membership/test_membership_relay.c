/*
 * Relays (membership/machine/relay.c) through the public API, envelopes
 * built by hand: the relay sends an envelope on once, the target opens it
 * and handles the message inside as from its origin, and every envelope a
 * node would not take is refused and counted: from or for a non-member,
 * one already sent on (a relay never relays a relayed message), one inside
 * another, an inner message at a stale epoch.  And the root's REFUTED: it
 * goes to both ends of a refuted report, names the relay, only the root's
 * is taken; a direct message ends an entry.
 */
#include <stdint.h>
#include <string.h>

#include "membership/membership.h"
#include "tests/check.h"
#include "tests/membership/harness.h"

#define N 64u
#define MEMBERS 60u /* 60..63 are spares: no members */

static struct harness h;

static void start(void)
{
    struct harness_setup setup;
    harness_setup_defaults(&setup);
    uint32_t sizes[3] = {4, 4, 4};
    CHECK(torus_geometry_init(&setup.geometry, 3, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    setup.members = MEMBERS;
    setup.heartbeat_off = true;
    CHECK(harness_start(&h, &setup));
    harness_advance(&h, 1000000);
}

static const struct membership_counters *counters(uint32_t id)
{
    return membership_get_counters(&h.nodes[id]);
}

/* A message of type from origin, in to's epochs, header only. */
static size_t inner_message(uint8_t *buffer, uint32_t to, uint8_t type, uint32_t origin)
{
    struct membership_writer w;
    harness_message_begin(&h, to, type, origin, true, &w, buffer, MEMBERSHIP_MAX_PAYLOAD);
    return w.length;
}

/* An envelope from sender to `to` (flags: MEMBERSHIP_RELAY_*) around inner. */
static size_t envelope(uint8_t *buffer, uint32_t to, uint32_t sender, uint32_t origin,
                       uint32_t target, uint8_t flags, const uint8_t *inner, size_t inner_length)
{
    struct membership_writer w;
    harness_message_begin(&h, to, MEMBERSHIP_MSG_RELAY, sender, true, &w, buffer,
                          MEMBERSHIP_MAX_PAYLOAD);
    membership_put_u32(&w, origin);
    membership_put_u32(&w, target);
    membership_put_u8(&w, flags);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, (uint16_t)inner_length);
    for (size_t i = 0; i < inner_length; i++) {
        membership_put_u8(&w, inner[i]);
    }
    CHECK(!w.overflow);
    return w.length;
}

/* Sends origin's message of type for target through relay to node `to`. */
static void receive_envelope(uint32_t to, uint32_t sender, uint32_t origin, uint32_t target,
                             uint8_t flags, uint8_t type)
{
    uint8_t inner[MEMBERSHIP_MAX_PAYLOAD];
    uint8_t outer[MEMBERSHIP_MAX_PAYLOAD];
    size_t inner_length = inner_message(inner, target, type, origin);
    size_t length = envelope(outer, to, sender, origin, target, flags, inner, inner_length);
    harness_receive(&h, to, outer, length);
}

/* The root (0) tells `to` that peer is alive and reached through relay. */
static void refuted(uint32_t to, uint32_t sender, uint32_t peer, uint32_t relay)
{
    uint8_t buffer[MEMBERSHIP_MAX_PAYLOAD];
    struct membership_writer w;
    harness_message_begin(&h, to, MEMBERSHIP_MSG_REFUTED, sender, true, &w, buffer, sizeof buffer);
    membership_put_u32(&w, peer);
    membership_put_u32(&w, relay);
    harness_receive(&h, to, buffer, w.length);
}

/* 1 asks the relay 0 to carry a probe to 5; 5 opens it, answers through 0. */
static void carried_and_answered(void)
{
    start();
    refuted(5, 0, 1, 0); /* 5's way to 1 */
    harness_window(&h);
    receive_envelope(0, 1, 1, 5, 0, MEMBERSHIP_MSG_HOW_ARE_YOU);
    CHECK(harness_count_sent(&h, 0, MEMBERSHIP_MSG_RELAY, 5) == 1);
    CHECK(counters(0)->relays_forwarded == 1 && counters(0)->relays_refused == 0);
    harness_window(&h);
    receive_envelope(5, 0, 1, 5, MEMBERSHIP_RELAY_FORWARDED, MEMBERSHIP_MSG_HOW_ARE_YOU);
    CHECK(counters(5)->relays_delivered == 1);
    /* The answer goes through the relay the root named. */
    CHECK(harness_count_sent(&h, 5, MEMBERSHIP_MSG_RELAY, 0) == 1);
    CHECK(harness_count_sent(&h, 5, MEMBERSHIP_MSG_I_AM_ALIVE, MEMBERSHIP_NONE) == 0);
    CHECK(counters(5)->relays_sent == 1);
    /* A direct message from 1 ends that: the next answer goes direct. */
    uint8_t buffer[MEMBERSHIP_MAX_PAYLOAD];
    size_t length = inner_message(buffer, 5, MEMBERSHIP_MSG_HOW_ARE_YOU, 1);
    harness_window(&h);
    harness_receive(&h, 5, buffer, length);
    CHECK(harness_count_sent(&h, 5, MEMBERSHIP_MSG_I_AM_ALIVE, 1) == 1);
    CHECK(harness_count_sent(&h, 5, MEMBERSHIP_MSG_RELAY, MEMBERSHIP_NONE) == 0);
}

/* Only members relay and are relayed; a forwarded envelope is not sent on. */
static void forged_refused(void)
{
    start();
    harness_window(&h);
    receive_envelope(0, 61, 61, 5, 0, MEMBERSHIP_MSG_HEARTBEAT); /* from a spare */
    receive_envelope(0, 1, 1, 62, 0, MEMBERSHIP_MSG_HEARTBEAT);  /* for a spare */
    CHECK(counters(0)->relays_refused == 2 && counters(0)->relays_forwarded == 0);
    receive_envelope(5, 61, 1, 5, MEMBERSHIP_RELAY_FORWARDED,
                     MEMBERSHIP_MSG_HOW_ARE_YOU); /* through a spare */
    receive_envelope(5, 0, 61, 5, MEMBERSHIP_RELAY_FORWARDED,
                     MEMBERSHIP_MSG_HOW_ARE_YOU); /* a spare's message */
    CHECK(counters(5)->relays_refused == 2 && counters(5)->relays_delivered == 0);
    /* A relayed relay: 2 is handed an envelope already sent on, for 5. */
    receive_envelope(2, 0, 1, 5, MEMBERSHIP_RELAY_FORWARDED, MEMBERSHIP_MSG_HOW_ARE_YOU);
    CHECK(counters(2)->relays_refused == 1 && counters(2)->relays_forwarded == 0);
    /* Not from its origin, or for the relay itself. */
    receive_envelope(0, 2, 1, 5, 0, MEMBERSHIP_MSG_HEARTBEAT);
    receive_envelope(5, 1, 1, 5, 0, MEMBERSHIP_MSG_HEARTBEAT);
    CHECK(counters(0)->relays_refused == 3 && counters(5)->relays_refused == 3);
    CHECK(h.sent_count == 0); /* nothing was sent on or answered */
    /* An envelope inside an envelope does not even decode. */
    uint8_t inner[MEMBERSHIP_MAX_PAYLOAD];
    uint8_t middle[MEMBERSHIP_MAX_PAYLOAD];
    uint8_t outer[MEMBERSHIP_MAX_PAYLOAD];
    size_t length = inner_message(inner, 5, MEMBERSHIP_MSG_HOW_ARE_YOU, 1);
    length = envelope(middle, 5, 1, 1, 5, 0, inner, length);
    length = envelope(outer, 5, 0, 1, 5, MEMBERSHIP_RELAY_FORWARDED, middle, length);
    uint32_t malformed = counters(5)->drops_malformed;
    harness_receive(&h, 5, outer, length);
    CHECK(counters(5)->drops_malformed == malformed + 1 && h.sent_count == 0);
    /* A node without a view relays nothing. */
    membership_start_join(&h.nodes[3], h.now, &h.out);
    harness_collect(&h, 3);
    harness_window(&h);
    receive_envelope(3, 1, 1, 5, 0, MEMBERSHIP_MSG_HEARTBEAT);
    CHECK(counters(3)->relays_refused == 1 && h.sent_count == 0);
}

/* The message inside meets the checks it would meet directly. */
static void stale_inner_refused(void)
{
    start();
    /* A first change, so that there is an older epoch: 59 dies. */
    struct harness_fault kill = {.kind = HARNESS_FAULT_KILL, .time_ns = h.now, .node = 59};
    harness_fault(&h, &kill);
    CHECK(membership_suspect(&h.nodes[58], 59, h.now, &h.out));
    harness_collect(&h, 58);
    harness_run(&h, h.now + 10000000000ull, 1000000, MEMBERSHIP_NONE, MEMBERSHIP_NONE);
    uint64_t epoch = membership_epoch(&h.nodes[5]);
    CHECK(membership_live_count(&h.nodes[5]) == MEMBERS - 1 && epoch != 0);
    /* 1's change at the initial epoch (0), removing 7, carried by 0 to 5. */
    uint8_t inner[MEMBERSHIP_MAX_PAYLOAD];
    uint8_t outer[MEMBERSHIP_MAX_PAYLOAD];
    struct membership_writer w;
    harness_message_begin(&h, 5, MEMBERSHIP_MSG_FAILED_NODE, 1, true, &w, inner, sizeof inner);
    membership_put_u64(&w, 0);  /* base epoch */
    membership_put_u8(&w, MEMBERSHIP_CHANGE_BASE_STABLE);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 1);  /* failed */
    membership_put_u16(&w, 0);  /* joined */
    membership_put_u16(&w, 0);
    membership_put_u32(&w, MEMBERS - 1);
    membership_put_u32(&w, 0);  /* root after */
    membership_put_u64(&w, 0);  /* digest after */
    membership_put_u32(&w, 7);
    for (unsigned i = 0; i < 16; i++) { /* epoch and stable epoch: the initial view's */
        inner[12 + i] = 0;
    }
    size_t length = envelope(outer, 5, 0, 1, 5, MEMBERSHIP_RELAY_FORWARDED, inner, w.length);
    uint32_t stale = counters(5)->drops_stale;
    harness_window(&h);
    harness_receive(&h, 5, outer, length);
    CHECK(counters(5)->relays_delivered == 1);
    CHECK(counters(5)->drops_stale == stale + 1);
    CHECK(membership_epoch(&h.nodes[5]) == epoch && membership_is_member(&h.nodes[5], 7));
    CHECK(membership_live_count(&h.nodes[5]) == MEMBERS - 1);
    /* As a direct stale message would be, 1 is told. */
    CHECK(harness_count_sent(&h, 5, MEMBERSHIP_MSG_VIEW_NOTICE, 1) == 1);
}

/* Node 1 probes peer: what it sends in a fresh window. */
static void probe_from_1(uint32_t peer)
{
    harness_window(&h);
    CHECK(membership_suspect(&h.nodes[1], peer, h.now, &h.out));
    harness_collect(&h, 1);
    harness_drop_queue(&h);
}

/* REFUTED: only from our root, naming members; then the peer is relayed. */
static void refuted_from_root(void)
{
    start();
    uint32_t unexpected = counters(1)->drops_unexpected;
    refuted(1, 2, 5, 2); /* not from the root */
    CHECK(counters(1)->drops_unexpected == unexpected + 1);
    probe_from_1(5);
    CHECK(harness_count_sent(&h, 1, MEMBERSHIP_MSG_HOW_ARE_YOU, 5) == 1);
    refuted(1, 0, 6, 62); /* a spare for relay */
    refuted(1, 0, 6, 1);  /* ourselves for relay */
    CHECK(counters(1)->drops_unexpected == unexpected + 3);
    refuted(1, 0, 6, 0);
    CHECK(counters(1)->drops_unexpected == unexpected + 3);
    probe_from_1(6);
    CHECK(harness_count_sent(&h, 1, MEMBERSHIP_MSG_RELAY, 0) == 1);
    CHECK(harness_count_sent(&h, 1, MEMBERSHIP_MSG_HOW_ARE_YOU, 6) == 0);
    CHECK(counters(1)->relays_sent == 1);
}

/* The root refutes a report: both ends are told to go through it. */
static void root_tells_both(void)
{
    start();
    uint8_t buffer[MEMBERSHIP_MAX_PAYLOAD];
    struct membership_writer w;
    harness_message_begin(&h, 0, MEMBERSHIP_MSG_NODE_FAILURE, 9, true, &w, buffer, sizeof buffer);
    membership_put_u32(&w, 9);          /* detector */
    membership_put_u32(&w, 1);          /* sequence */
    membership_put_u32(&w, UINT32_MAX); /* no failed root */
    membership_put_u16(&w, 1);
    membership_put_u16(&w, 0);
    membership_put_u32(&w, 5);
    harness_window(&h);
    harness_receive(&h, 0, buffer, w.length);
    harness_deliver(&h); /* the root's probe of 5, and 5's answer */
    CHECK(counters(0)->reports_refuted == 1);
    CHECK(harness_count_sent(&h, 0, MEMBERSHIP_MSG_REFUTED, 9) == 1);
    CHECK(harness_count_sent(&h, 0, MEMBERSHIP_MSG_REFUTED, 5) == 1);
    /* Both hold the entry now: a probe either way goes to the root. */
    harness_window(&h);
    CHECK(membership_suspect(&h.nodes[9], 5, h.now, &h.out));
    harness_collect(&h, 9);
    CHECK(membership_suspect(&h.nodes[5], 9, h.now, &h.out));
    harness_collect(&h, 5);
    CHECK(harness_count_sent(&h, 9, MEMBERSHIP_MSG_RELAY, 0) == 1);
    CHECK(harness_count_sent(&h, 5, MEMBERSHIP_MSG_RELAY, 0) == 1);
    CHECK(harness_count_sent(&h, MEMBERSHIP_NONE, MEMBERSHIP_MSG_HOW_ARE_YOU, MEMBERSHIP_NONE) == 0);
}

int main(void)
{
    carried_and_answered();
    forged_refused();
    stale_inner_refused();
    refuted_from_root();
    root_tells_both();
    return check_report("membership.relay");
}
