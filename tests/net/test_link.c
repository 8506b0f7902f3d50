/*
 * Link reliability.  First hand-driven checks of the handshake, the window,
 * NAKs, timeouts and refusals; then two link ends joined by a simulated
 * channel in virtual time (seeded, deterministic) that loses, duplicates,
 * reorders and corrupts frames:
 *   - every data frame is delivered exactly once and in order, both ways,
 *     also across the 2^32 wrap of sequence numbers;
 *   - an idle link sends only keepalives, one each way per interval, and
 *     stays up; a stopped peer ends its silent session;
 *   - a dead peer is declared down (retry_limit + 1) * rto after the last
 *     progress, exactly to the simulation step;
 *   - a crashed and rebooted peer (new incarnation) resynchronises, whether
 *     it returns before or after it was declared down;
 *   - a stopped-then-resumed peer's stale frames are dropped as stale, and
 *     the link comes back up.
 */
#include <stdlib.h>

#include "net/torus/link.h"
#include "tests/check.h"

#define US ((uint64_t)1000)
#define MS (1000 * US)

/* ------------------------------------------------------------------ */
/* Hand-driven checks                                                  */
/* ------------------------------------------------------------------ */

static struct torus_link hand_a, hand_b;
/* hand_config's rto is 1 ms and the keepalive interval its default. */
#define HAND_KEEPALIVE (TORUS_LINK_KEEPALIVE_RTOS * MS)
static struct torus_link_outbox hand_out;

static void hand_config(struct torus_link_config *c, uint32_t rank, uint32_t incarnation)
{
    torus_link_config_defaults(c);
    c->local_rank = rank;
    c->peer_rank = 1 - rank;
    c->local_link = rank == 0 ? 0 : 1; /* 0's x+ is cabled to 1's x- */
    c->incarnation = incarnation;
    c->rto_ns = 1 * MS;
    c->retry_limit = 3;
    c->ack_delay_ns = 100 * US;
}

static size_t data_frame(uint32_t source, uint8_t type, uint32_t tag, uint8_t *out)
{
    struct torus_frame_header h;
    memset(&h, 0, sizeof(h));
    h.type = type;
    h.ttl = 1;
    h.source = source;
    h.destination = 1 - source;
    uint8_t payload[8];
    for (unsigned i = 0; i < 4; i++)
        payload[i] = (uint8_t)(tag >> (8 * i));
    memset(payload + 4, 0xC3, 4);
    return torus_frame_encode(&h, payload, sizeof(payload), NULL, out, CONFIG_MAX_FRAME);
}

static uint32_t frame_tag(const uint8_t *frame)
{
    const uint8_t *p = frame + TORUS_FRAME_HEADER_SIZE;
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* Decodes frame and hands it to link; the verdict. */
static enum torus_link_verdict hand_receive(struct torus_link *link, const uint8_t *frame,
                                            size_t length, uint64_t now)
{
    struct torus_frame_header h;
    enum torus_frame_status s = torus_frame_decode(frame, length, 2, NULL, &h, NULL);
    CHECK_EQ(s, TORUS_FRAME_OK);
    if (s != TORUS_FRAME_OK)
        return TORUS_LINK_VERDICT_COUNT;
    return torus_link_receive(link, &h, now);
}

/* Ticks from and delivers everything to to; returns frames moved. */
static unsigned hand_pump(struct torus_link *from, struct torus_link *to, uint64_t now)
{
    torus_link_tick(from, now, &hand_out);
    unsigned n = hand_out.count;
    static uint8_t copy[TORUS_LINK_OUTBOX_SIZE][CONFIG_MAX_FRAME];
    static uint16_t lengths[TORUS_LINK_OUTBOX_SIZE];
    for (unsigned i = 0; i < n; i++) {
        memcpy(copy[i], hand_out.frame[i], hand_out.length[i]);
        lengths[i] = hand_out.length[i];
    }
    for (unsigned i = 0; i < n; i++)
        hand_receive(to, copy[i], lengths[i], now);
    return n;
}

static void hand_handshake(uint64_t now)
{
    struct torus_link_config c;
    hand_config(&c, 0, 10);
    CHECK(torus_link_init(&hand_a, &c));
    hand_config(&c, 1, 20);
    CHECK(torus_link_init(&hand_b, &c));
    CHECK_EQ(hand_pump(&hand_a, &hand_b, now), 1); /* SYN(10,0) */
    CHECK_EQ(hand_pump(&hand_b, &hand_a, now), 1); /* SYN(20,10): A up */
    CHECK(torus_link_is_up(&hand_a));
    CHECK(!torus_link_is_up(&hand_b));
    CHECK_EQ(hand_pump(&hand_a, &hand_b, now), 1); /* ACK(10,20): B up */
    CHECK(torus_link_is_up(&hand_b));
    CHECK_EQ(torus_link_take_events(&hand_a), TORUS_LINK_EVENT_UP);
    CHECK_EQ(torus_link_take_events(&hand_b), TORUS_LINK_EVENT_UP);
    CHECK_EQ(torus_link_take_events(&hand_a), 0);
    CHECK_EQ(hand_pump(&hand_b, &hand_a, now), 0); /* nothing more is owed */
    /* ... but a keepalive, if the link idles that long after the last frame. */
    CHECK_EQ(torus_link_next_deadline(&hand_a), now + HAND_KEEPALIVE);
    CHECK_EQ(torus_link_next_deadline(&hand_b), now + HAND_KEEPALIVE);
}

static void check_hand_basics(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    struct torus_link_config c;
    hand_config(&c, 0, 0);
    c.rto_ns = 0;
    CHECK(!torus_link_init(&hand_a, &c));
    hand_config(&c, 0, 0);
    c.local_link = CONFIG_MAX_LINKS;
    CHECK(!torus_link_init(&hand_a, &c));

    hand_config(&c, 0, 0); /* incarnation 0 becomes 1 */
    CHECK(torus_link_init(&hand_a, &c));
    CHECK_EQ(hand_a.local_incarnation, 1);
    CHECK_EQ(torus_link_state(&hand_a), TORUS_LINK_SYNCING);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 0);
    size_t length = data_frame(0, TORUS_FRAME_TYPE_PING, 1, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_NOT_UP);
    /* SYN probes every probe interval (= rto) until heard. */
    CHECK_EQ(torus_link_tick(&hand_a, 0, &hand_out), 1);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 1 * MS);
    CHECK_EQ(torus_link_tick(&hand_a, 1 * MS - 1, &hand_out), 0);
    CHECK_EQ(torus_link_tick(&hand_a, 1 * MS, &hand_out), 1);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_SYNS_SENT), 2);
    struct torus_frame_header h;
    CHECK_EQ(torus_frame_decode(hand_out.frame[0], hand_out.length[0], 2, NULL, &h, NULL),
             TORUS_FRAME_OK);
    CHECK_EQ(h.type, TORUS_FRAME_TYPE_LINK_ACK);
    CHECK_EQ(h.flags, TORUS_FRAME_FLAG_SYN);
    CHECK_EQ(h.link_sender_incarnation, 1);
    CHECK_EQ(h.link_receiver_incarnation, 0);

    hand_handshake(0);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_UP_EVENTS), 1);

    /* Refusals: LINK_ACK is the link's own, malformed frames, full window. */
    length = data_frame(0, TORUS_FRAME_TYPE_LINK_ACK, 0, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_BAD_FRAME);
    length = data_frame(0, TORUS_FRAME_TYPE_PING, 0, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length - 1, 0), TORUS_LINK_SEND_BAD_FRAME);
    CHECK_EQ(torus_link_send(&hand_a, NULL, 0, 0), TORUS_LINK_SEND_BAD_FRAME);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_BAD_FRAMES), 3);
    static uint8_t sent[CONFIG_LINK_WINDOW][CONFIG_MAX_FRAME];
    size_t sent_length = 0;
    for (uint32_t i = 0; i < CONFIG_LINK_WINDOW; i++) {
        sent_length = data_frame(0, TORUS_FRAME_TYPE_PING, i, sent[i]);
        CHECK_EQ(torus_link_send(&hand_a, sent[i], sent_length, 0), TORUS_LINK_SEND_OK);
    }
    CHECK_EQ(torus_link_in_flight(&hand_a), CONFIG_LINK_WINDOW);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_WINDOW_FULL);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_WINDOW_FULL), 1);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 1 * MS); /* the rto */

    /* Frame 0 is lost, 1 arrives: out of order, a NAK goes back at once. */
    CHECK_EQ(hand_receive(&hand_b, sent[1], sent_length, 10), TORUS_LINK_OUT_OF_ORDER);
    CHECK_EQ(hand_receive(&hand_b, sent[2], sent_length, 10), TORUS_LINK_OUT_OF_ORDER);
    CHECK_EQ(torus_link_next_deadline(&hand_b), 10);
    CHECK_EQ(torus_link_tick(&hand_b, 10, &hand_out), 1);
    CHECK_EQ(torus_frame_decode(hand_out.frame[0], hand_out.length[0], 2, NULL, &h, NULL),
             TORUS_FRAME_OK);
    CHECK_EQ(h.flags, TORUS_FRAME_FLAG_NAK);
    CHECK_EQ(h.link_ack, 0);
    CHECK_EQ(hand_receive(&hand_a, hand_out.frame[0], hand_out.length[0], 10),
             TORUS_LINK_CONTROL);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 0); /* resend at once */
    CHECK_EQ(torus_link_tick(&hand_a, 20, &hand_out), CONFIG_LINK_WINDOW);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_FAST_RETRANSMITS), 1);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_RETRANSMITTED), CONFIG_LINK_WINDOW);
    /* The resent frames arrive in order; a duplicate is dropped. */
    static uint8_t resent[CONFIG_LINK_WINDOW][CONFIG_MAX_FRAME];
    unsigned n = hand_out.count;
    for (unsigned i = 0; i < n; i++)
        memcpy(resent[i], hand_out.frame[i], hand_out.length[i]);
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ(frame_tag(resent[i]), i);
        CHECK_EQ(hand_receive(&hand_b, resent[i], sent_length, 30), TORUS_LINK_DELIVER);
    }
    CHECK_EQ(hand_receive(&hand_b, resent[3], sent_length, 30), TORUS_LINK_DUPLICATE);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DELIVERED), CONFIG_LINK_WINDOW);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DUPLICATES), 1);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_OUT_OF_ORDER), 2);
    /* A second NAK for the same base would not trigger a second resend. */
    CHECK_EQ(torus_link_next_deadline(&hand_b), 30); /* the duplicate: ack now */
    CHECK_EQ(hand_pump(&hand_b, &hand_a, 30), 1);
    CHECK_EQ(torus_link_in_flight(&hand_a), 0);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_FRAMES_ACKED), CONFIG_LINK_WINDOW);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 20 + HAND_KEEPALIVE); /* after the resend */

    /* Acks piggyback: B sends data, its frame carries the ack. */
    length = data_frame(1, TORUS_FRAME_TYPE_PONG, 77, frame);
    CHECK_EQ(torus_link_send(&hand_b, frame, length, 40), TORUS_LINK_SEND_OK);
    CHECK_EQ(hand_receive(&hand_a, frame, length, 40), TORUS_LINK_DELIVER);
    CHECK_EQ(torus_frame_decode(frame, length, 2, NULL, &h, NULL), TORUS_FRAME_OK);
    CHECK_EQ(h.link_ack, CONFIG_LINK_WINDOW);
    CHECK_EQ(h.link_sender_incarnation, 20);
    CHECK_EQ(h.link_receiver_incarnation, 10);
    /* A's ack waits ack_delay for a data frame to ride on. */
    CHECK_EQ(torus_link_next_deadline(&hand_a), 40 + 100 * US);
    CHECK_EQ(torus_link_tick(&hand_a, 39 + 100 * US, &hand_out), 0);
    CHECK_EQ(hand_pump(&hand_a, &hand_b, 40 + 100 * US), 1);
    CHECK_EQ(torus_link_in_flight(&hand_b), 0);

    /* An ack for frames never sent is refused and changes nothing. */
    length = data_frame(1, TORUS_FRAME_TYPE_PONG, 78, frame);
    CHECK_EQ(torus_link_send(&hand_b, frame, length, 50), TORUS_LINK_SEND_OK);
    struct torus_frame_link_fields f;
    memcpy(f.source_mac, hand_a.local_mac, 6);
    memcpy(f.destination_mac, hand_b.local_mac, 6);
    f.flags = 0;
    f.sequence = 0;
    f.ack = 5; /* B has 1 in flight: base 1, next 2 */
    f.sender_incarnation = 10;
    f.receiver_incarnation = 20;
    size_t ack_length = data_frame(0, TORUS_FRAME_TYPE_LINK_ACK, 0, frame);
    torus_frame_stamp_link(frame, ack_length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, ack_length, 50), TORUS_LINK_CONTROL);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_BAD_ACKS), 1);
    CHECK_EQ(torus_link_in_flight(&hand_b), 1);

    /* Wrong MACs, a SYN on a data frame, another session's frame. */
    f.ack = 1;
    f.source_mac[4] = 7;
    torus_frame_stamp_link(frame, ack_length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, ack_length, 50), TORUS_LINK_WRONG_PEER);
    memcpy(f.source_mac, hand_a.local_mac, 6);
    f.destination_mac[5] = 0;
    torus_frame_stamp_link(frame, ack_length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, ack_length, 50), TORUS_LINK_WRONG_PEER);
    memcpy(f.destination_mac, hand_b.local_mac, 6);
    length = data_frame(0, TORUS_FRAME_TYPE_PING, 0, frame);
    f.flags = TORUS_FRAME_FLAG_SYN;
    torus_frame_stamp_link(frame, length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 50), TORUS_LINK_PROTOCOL);
    f.flags = 0;
    f.sender_incarnation = 9;
    torus_frame_stamp_link(frame, length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 50), TORUS_LINK_STALE);
    f.sender_incarnation = 10;
    f.receiver_incarnation = 19;
    torus_frame_stamp_link(frame, length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 50), TORUS_LINK_STALE);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_WRONG_PEER), 2);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_PROTOCOL), 1);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_STALE), 2);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DELIVERED), CONFIG_LINK_WINDOW);
    CHECK(torus_link_is_up(&hand_b));

    /* A stale SYN addressed to an old incarnation of B is ignored too. */
    ack_length = data_frame(0, TORUS_FRAME_TYPE_LINK_ACK, 0, frame);
    f.flags = TORUS_FRAME_FLAG_SYN;
    f.sender_incarnation = 3;
    f.receiver_incarnation = 19;
    torus_frame_stamp_link(frame, ack_length, &f, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, ack_length, 50), TORUS_LINK_STALE);
    CHECK(torus_link_is_up(&hand_b));

    /* Names. */
    CHECK(strcmp(torus_link_counter_name(TORUS_LINK_COUNT_DOWN_EVENTS), "down_events") == 0);
    CHECK(strcmp(torus_link_counter_name(TORUS_LINK_COUNTER_COUNT), "?") == 0);
    CHECK(strcmp(torus_link_verdict_name(TORUS_LINK_STALE), "stale") == 0);
    CHECK(strcmp(torus_link_verdict_name(TORUS_LINK_VERDICT_COUNT), "?") == 0);
    CHECK(strcmp(torus_link_state_name(TORUS_LINK_DOWN), "down") == 0);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNTER_COUNT), 0);
}

/* Timeouts to the exact nanosecond with a hand-driven clock. */
static void check_hand_timeout(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    hand_handshake(0);
    const uint64_t t0 = 5 * MS, rto = 1 * MS;
    size_t length = data_frame(0, TORUS_FRAME_TYPE_PING, 0, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, t0), TORUS_LINK_SEND_OK);
    for (uint32_t retry = 1; retry <= 3; retry++) {
        CHECK_EQ(torus_link_next_deadline(&hand_a), t0 + retry * rto);
        CHECK_EQ(torus_link_tick(&hand_a, t0 + retry * rto - 1, &hand_out), 0);
        CHECK_EQ(torus_link_tick(&hand_a, t0 + retry * rto, &hand_out), 1);
        CHECK_EQ(frame_tag(hand_out.frame[0]), 0);
        CHECK(torus_link_is_up(&hand_a));
    }
    CHECK_EQ(torus_link_tick(&hand_a, t0 + 4 * rto - 1, &hand_out), 0);
    CHECK(torus_link_is_up(&hand_a));
    CHECK_EQ(torus_link_tick(&hand_a, t0 + 4 * rto, &hand_out), 1); /* a SYN */
    CHECK_EQ(torus_link_state(&hand_a), TORUS_LINK_DOWN);
    CHECK_EQ(torus_link_take_events(&hand_a), TORUS_LINK_EVENT_DOWN);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_DISCARDED), 1);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_RETRANSMITTED), 3);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_TIMEOUTS), 4);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_DOWN_EVENTS), 1);
    CHECK_EQ(torus_link_in_flight(&hand_a), 0);
    CHECK_EQ(hand_a.local_incarnation, 11); /* a new session */
    struct torus_frame_header h;
    CHECK_EQ(torus_frame_decode(hand_out.frame[0], hand_out.length[0], 2, NULL, &h, NULL),
             TORUS_FRAME_OK);
    CHECK_EQ(h.flags, TORUS_FRAME_FLAG_SYN);
    CHECK_EQ(h.link_sender_incarnation, 11);
    CHECK_EQ(h.link_receiver_incarnation, 20);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, t0), TORUS_LINK_SEND_NOT_UP);

    /* B (still up in the old session) hears the SYN: it resets and both
     * come back up in three frames. */
    static uint8_t syn[CONFIG_MAX_FRAME];
    memcpy(syn, hand_out.frame[0], hand_out.length[0]);
    CHECK_EQ(hand_receive(&hand_b, syn, hand_out.length[0], t0 + 4 * rto), TORUS_LINK_CONTROL);
    CHECK_EQ(torus_link_state(&hand_b), TORUS_LINK_DOWN);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_PEER_RESETS), 1);
    CHECK_EQ(hand_pump(&hand_b, &hand_a, t0 + 4 * rto), 1);
    CHECK_EQ(hand_pump(&hand_a, &hand_b, t0 + 4 * rto), 1);
    CHECK(torus_link_is_up(&hand_a) && torus_link_is_up(&hand_b));
    CHECK_EQ(torus_link_take_events(&hand_a), TORUS_LINK_EVENT_UP);
    CHECK_EQ(torus_link_take_events(&hand_b), TORUS_LINK_EVENT_DOWN | TORUS_LINK_EVENT_UP);

    /* retry_limit 0: down at the first timeout, nothing resent. */
    struct torus_link_config c;
    hand_config(&c, 0, 50);
    c.retry_limit = 0;
    CHECK(torus_link_init(&hand_a, &c));
    hand_config(&c, 1, 60);
    CHECK(torus_link_init(&hand_b, &c));
    hand_pump(&hand_a, &hand_b, 0);
    hand_pump(&hand_b, &hand_a, 0);
    hand_pump(&hand_a, &hand_b, 0);
    CHECK(torus_link_is_up(&hand_a));
    length = data_frame(0, TORUS_FRAME_TYPE_PING, 0, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_OK);
    CHECK_EQ(torus_link_tick(&hand_a, rto, &hand_out), 1);
    CHECK_EQ(torus_link_state(&hand_a), TORUS_LINK_DOWN);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_RETRANSMITTED), 0);
}

/* The loss limit: more than lossy_retransmits frames resent within the
 * window raises LOSSY once; the window then closes and a new one opens at
 * the next resend.  The link stays up throughout. */
static void check_hand_lossy(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    struct torus_link_config c;
    hand_config(&c, 0, 10);
    c.retry_limit = 100;
    c.lossy_retransmits = 5;
    c.lossy_window_ns = 20 * MS;
    CHECK(torus_link_init(&hand_a, &c));
    hand_config(&c, 1, 20);
    CHECK(torus_link_init(&hand_b, &c));
    hand_pump(&hand_a, &hand_b, 0);
    hand_pump(&hand_b, &hand_a, 0);
    hand_pump(&hand_a, &hand_b, 0);
    CHECK(torus_link_is_up(&hand_a) && torus_link_is_up(&hand_b));
    torus_link_take_events(&hand_a);
    size_t length = data_frame(0, TORUS_FRAME_TYPE_PING, 0, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_OK);
    length = data_frame(0, TORUS_FRAME_TYPE_PING, 1, frame);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_OK);
    /* Two frames lost for good: each timeout resends both. */
    uint64_t now = 0;
    for (unsigned timeout = 1; timeout <= 3; timeout++) {
        now += 1 * MS;
        CHECK_EQ(torus_link_tick(&hand_a, now, &hand_out), 2);
        /* 2, 4 resent: under the limit; 6: over it, once. */
        CHECK_EQ(torus_link_take_events(&hand_a), timeout == 3 ? TORUS_LINK_EVENT_LOSSY : 0);
    }
    for (unsigned timeout = 4; timeout <= 19; timeout++) {
        now += 1 * MS;
        CHECK_EQ(torus_link_tick(&hand_a, now, &hand_out), 2);
        CHECK_EQ(torus_link_take_events(&hand_a), 0); /* the window is told */
    }
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_LOSSY_EVENTS), 1);
    /* The window opened at the first resend (1 ms) closes at 21 ms, where
     * the next opens: over the limit again at its third timeout. */
    for (unsigned timeout = 20; timeout <= 23; timeout++) {
        now += 1 * MS;
        CHECK_EQ(torus_link_tick(&hand_a, now, &hand_out), 2);
        CHECK_EQ(torus_link_take_events(&hand_a), timeout == 23 ? TORUS_LINK_EVENT_LOSSY : 0);
    }
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_LOSSY_EVENTS), 2);
    CHECK(torus_link_is_up(&hand_a));

    /* lossy_retransmits 0: no limit. */
    hand_config(&c, 0, 30);
    c.retry_limit = 100;
    c.lossy_retransmits = 0;
    CHECK(torus_link_init(&hand_a, &c));
    hand_config(&c, 1, 40);
    CHECK(torus_link_init(&hand_b, &c));
    hand_pump(&hand_a, &hand_b, 0);
    hand_pump(&hand_b, &hand_a, 0);
    hand_pump(&hand_a, &hand_b, 0);
    torus_link_take_events(&hand_a);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 0), TORUS_LINK_SEND_OK);
    for (now = 1 * MS; now <= 50 * MS; now += 1 * MS)
        torus_link_tick(&hand_a, now, &hand_out);
    CHECK_EQ(torus_link_take_events(&hand_a), 0);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_RETRANSMITTED), 50);
}

/* ------------------------------------------------------------------ */
/* The simulated channel                                               */
/* ------------------------------------------------------------------ */

#define CHANNEL_CAPACITY 1024
#define STEP_NS (50 * US)
#define SIM_RTO (2 * MS)

struct wire_frame {
    uint64_t due;
    uint64_t order;
    uint16_t length;
    uint8_t bytes[CONFIG_MAX_FRAME];
};

/* Frames travelling towards one node. */
struct channel {
    unsigned loss, duplicate, reorder, corrupt; /* percent */
    uint64_t delay_ns, jitter_ns;
    bool cut;  /* everything sent now is lost (the receiver is dead) */
    bool held; /* nothing is delivered (receiver or sender stopped) */
    unsigned count;
    uint64_t next_order;
    uint64_t offered, lost, corrupted;
    struct wire_frame queue[CHANNEL_CAPACITY];
};

struct sim_node {
    struct torus_link link;
    bool dead, paused;
    uint32_t send_target; /* frames the app sends in each session */
    uint32_t sent;        /* ... sent so far in this session */
    uint32_t expected;    /* next tag the app expects from the peer */
    uint32_t delivered;   /* in this session */
    uint32_t ups, downs;
    uint64_t last_down_ns;
    uint64_t last_progress_ns; /* when frames_acked last grew */
    uint64_t frames_acked;
    uint64_t decode_drops;
};

struct sim {
    struct check_rng rng;
    uint64_t now;
    uint32_t retry_limit;
    uint32_t max_payload;
    struct sim_node node[2];
    struct channel to[2]; /* to[i]: frames travelling to node i */
};

static struct sim sim;

static void link_config(struct torus_link_config *c, unsigned rank, uint32_t incarnation,
                        uint32_t retry_limit)
{
    torus_link_config_defaults(c);
    c->local_rank = rank;
    c->peer_rank = 1 - rank;
    c->local_link = rank == 0 ? 0 : 1;
    c->incarnation = incarnation;
    c->rto_ns = SIM_RTO;
    c->retry_limit = retry_limit;
    c->ack_delay_ns = 200 * US;
}

static void sim_init(uint64_t seed, unsigned loss, unsigned duplicate, unsigned reorder,
                     unsigned corrupt, uint32_t retry_limit, uint32_t frames)
{
    memset(&sim, 0, sizeof(sim));
    check_rng_seed(&sim.rng, seed);
    sim.retry_limit = retry_limit;
    sim.max_payload = 300;
    for (unsigned i = 0; i < 2; i++) {
        struct torus_link_config c;
        link_config(&c, i, 1000u * (i + 1), retry_limit);
        CHECK(torus_link_init(&sim.node[i].link, &c));
        sim.node[i].send_target = frames;
        struct channel *ch = &sim.to[i];
        ch->loss = loss;
        ch->duplicate = duplicate;
        ch->reorder = reorder;
        ch->corrupt = corrupt;
        ch->delay_ns = 100 * US;
        ch->jitter_ns = 600 * US;
    }
}

static void channel_put(unsigned to, const uint8_t *frame, size_t length)
{
    struct channel *ch = &sim.to[to];
    ch->offered++;
    if (ch->cut || check_rng_percent(&sim.rng, ch->loss)) {
        ch->lost++;
        return;
    }
    unsigned copies = check_rng_percent(&sim.rng, ch->duplicate) ? 2 : 1;
    for (unsigned k = 0; k < copies; k++) {
        CHECK(ch->count < CHANNEL_CAPACITY);
        if (ch->count >= CHANNEL_CAPACITY)
            return;
        struct wire_frame *w = &ch->queue[ch->count++];
        w->due = sim.now + ch->delay_ns;
        if (check_rng_percent(&sim.rng, ch->reorder))
            w->due += check_rng_below(&sim.rng, (uint32_t)ch->jitter_ns);
        w->order = ch->next_order++;
        w->length = (uint16_t)length;
        memcpy(w->bytes, frame, length);
        if (check_rng_percent(&sim.rng, ch->corrupt)) {
            uint32_t bit = check_rng_below(&sim.rng, (uint32_t)length * 8);
            w->bytes[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ch->corrupted++;
        }
    }
}

/* The earliest due frame (ties: the order sent), if any is due. */
static bool channel_take(unsigned to, struct wire_frame *out)
{
    struct channel *ch = &sim.to[to];
    if (ch->held)
        return false;
    unsigned best = ch->count;
    for (unsigned i = 0; i < ch->count; i++) {
        const struct wire_frame *w = &ch->queue[i];
        if (w->due > sim.now)
            continue;
        if (best == ch->count || w->due < ch->queue[best].due ||
            (w->due == ch->queue[best].due && w->order < ch->queue[best].order))
            best = i;
    }
    if (best == ch->count)
        return false;
    *out = ch->queue[best];
    ch->queue[best] = ch->queue[--ch->count];
    return true;
}

static void take_events(unsigned i)
{
    struct sim_node *n = &sim.node[i];
    unsigned events = torus_link_take_events(&n->link);
    if (events & TORUS_LINK_EVENT_DOWN) {
        n->downs++;
        n->last_down_ns = sim.now;
    }
    if (events & TORUS_LINK_EVENT_UP) {
        /* A new session: the app starts its streams again. */
        n->ups++;
        n->sent = 0;
        n->expected = 0;
        n->delivered = 0;
    }
}

static size_t app_frame(unsigned from, uint32_t tag, uint8_t *out)
{
    uint8_t payload[TORUS_FRAME_MAX_PAYLOAD];
    size_t n = 4 + (tag * 131u + from * 17u) % (sim.max_payload - 3);
    for (unsigned i = 0; i < 4; i++)
        payload[i] = (uint8_t)(tag >> (8 * i));
    for (size_t i = 4; i < n; i++)
        payload[i] = (uint8_t)(tag * 7u + i + from);
    struct torus_frame_header h;
    memset(&h, 0, sizeof(h));
    h.type = TORUS_FRAME_TYPE_MEMBERSHIP;
    h.ttl = 3;
    h.source = from;
    h.destination = 1 - from;
    h.epoch = tag;
    return torus_frame_encode(&h, payload, n, NULL, out, CONFIG_MAX_FRAME);
}

static void deliver(unsigned i)
{
    static struct wire_frame w;
    struct sim_node *n = &sim.node[i];
    while (channel_take(i, &w)) {
        struct torus_frame_header h;
        const uint8_t *payload;
        if (torus_frame_decode(w.bytes, w.length, 2, NULL, &h, &payload) != TORUS_FRAME_OK) {
            n->decode_drops++;
            continue;
        }
        enum torus_link_verdict v = torus_link_receive(&n->link, &h, sim.now);
        take_events(i);
        if (v != TORUS_LINK_DELIVER)
            continue;
        /* Exactly once, in order, intact. */
        static uint8_t want[CONFIG_MAX_FRAME];
        size_t want_length = app_frame(1 - i, n->expected, want);
        CHECK_EQ(w.length, want_length);
        if (w.length == want_length)
            CHECK(memcmp(payload, want + TORUS_FRAME_HEADER_SIZE,
                         want_length - TORUS_FRAME_HEADER_SIZE) == 0);
        CHECK_EQ(h.epoch, n->expected);
        n->expected++;
        n->delivered++;
    }
}

static void app_send(unsigned i)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    struct sim_node *n = &sim.node[i];
    for (unsigned burst = 0; burst < 4 && n->sent < n->send_target; burst++) {
        size_t length = app_frame(i, n->sent, frame);
        if (torus_link_send(&n->link, frame, length, sim.now) != TORUS_LINK_SEND_OK)
            break;
        channel_put(1 - i, frame, length);
        n->sent++;
    }
}

static void tick(unsigned i)
{
    static struct torus_link_outbox out;
    struct sim_node *n = &sim.node[i];
    torus_link_tick(&n->link, sim.now, &out);
    for (unsigned k = 0; k < out.count; k++)
        channel_put(1 - i, out.frame[k], out.length[k]);
    take_events(i);
    uint64_t acked = torus_link_counter(&n->link, TORUS_LINK_COUNT_FRAMES_ACKED);
    if (acked != n->frames_acked) {
        n->frames_acked = acked;
        n->last_progress_ns = sim.now;
    }
}

static void sim_step(void)
{
    for (unsigned i = 0; i < 2; i++)
        if (!sim.node[i].dead && !sim.node[i].paused) {
            deliver(i);
            /* Progress may come with a received ack, too. */
            uint64_t acked = torus_link_counter(&sim.node[i].link, TORUS_LINK_COUNT_FRAMES_ACKED);
            if (acked != sim.node[i].frames_acked) {
                sim.node[i].frames_acked = acked;
                sim.node[i].last_progress_ns = sim.now;
            }
        }
    for (unsigned i = 0; i < 2; i++)
        if (!sim.node[i].dead && !sim.node[i].paused)
            app_send(i);
    for (unsigned i = 0; i < 2; i++)
        if (!sim.node[i].dead && !sim.node[i].paused)
            tick(i);
    sim.now += STEP_NS;
}

static bool sim_done(void)
{
    for (unsigned i = 0; i < 2; i++) {
        const struct sim_node *n = &sim.node[i];
        if (n->delivered < sim.node[1 - i].send_target ||
            torus_link_in_flight(&n->link) != 0)
            return false;
    }
    return true;
}

/* Runs until both streams are through; false on the time limit. */
static bool sim_run_until_done(uint64_t limit_ns)
{
    uint64_t end = sim.now + limit_ns;
    while (sim.now < end) {
        sim_step();
        if (sim_done())
            return true;
        if (check_failures > 20)
            return false;
    }
    return false;
}

static void sim_run_for(uint64_t duration_ns)
{
    uint64_t end = sim.now + duration_ns;
    while (sim.now < end)
        sim_step();
}

static void print_link(const char *what, unsigned i)
{
    const struct torus_link *l = &sim.node[i].link;
    printf("  %s node %u:", what, i);
    for (unsigned c = 0; c < TORUS_LINK_COUNTER_COUNT; c++)
        if (l->counters[c] != 0)
            printf(" %s=%" PRIu64, torus_link_counter_name((enum torus_link_counter)c),
                   l->counters[c]);
    printf(" decode_drops=%" PRIu64 "\n", sim.node[i].decode_drops);
}

/* Lossy, duplicating, reordering, corrupting: once, in order, both ways. */
static void check_lossy(const char *name, uint64_t seed, unsigned loss, unsigned dup,
                        unsigned reorder, unsigned corrupt, uint32_t retries,
                        uint32_t frames, bool wrap)
{
    sim_init(seed, loss, dup, reorder, corrupt, retries, 0);
    /* Handshake first (it is lossy too), the streams after. */
    for (unsigned step = 0; step < 100000 && !(torus_link_is_up(&sim.node[0].link) &&
                                               torus_link_is_up(&sim.node[1].link));
         step++)
        sim_step();
    CHECK(torus_link_is_up(&sim.node[0].link) && torus_link_is_up(&sim.node[1].link));
    sim.node[0].send_target = sim.node[1].send_target = frames;
    if (wrap) {
        /* Both directions start just below the 2^32 wrap. */
        for (unsigned i = 0; i < 2; i++) {
            CHECK_EQ(torus_link_in_flight(&sim.node[i].link), 0);
            CHECK_EQ(sim.node[i].link.expected, 0);
        }
        for (unsigned i = 0; i < 2; i++) {
            struct torus_link *l = &sim.node[i].link;
            l->send_base = l->next_sequence = UINT32_MAX - 40 - i;
            sim.node[1 - i].link.expected = UINT32_MAX - 40 - i;
            sim.node[1 - i].link.ack_sent = UINT32_MAX - 40 - i;
        }
    }
    bool done = sim_run_until_done(120 * 1000 * MS);
    CHECK(done);
    printf("%s: %s after %" PRIu64 " ms virtual\n", name, done ? "done" : "NOT DONE",
           sim.now / MS);
    print_link(name, 0);
    print_link(name, 1);
    for (unsigned i = 0; i < 2; i++) {
        const struct sim_node *n = &sim.node[i];
        CHECK_EQ(n->delivered, frames);
        CHECK_EQ(n->expected, frames);
        CHECK_EQ(n->ups, 1);
        CHECK_EQ(n->downs, 0);
        CHECK_EQ(torus_link_counter(&n->link, TORUS_LINK_COUNT_DELIVERED), frames);
        CHECK_EQ(torus_link_counter(&n->link, TORUS_LINK_COUNT_SENT), frames);
        CHECK_EQ(torus_link_counter(&n->link, TORUS_LINK_COUNT_STALE), 0);
        CHECK_EQ(torus_link_counter(&n->link, TORUS_LINK_COUNT_WRONG_PEER), 0);
        if (loss > 0)
            CHECK(torus_link_counter(&n->link, TORUS_LINK_COUNT_RETRANSMITTED) > 0);
        if (dup > 0 || loss > 0)
            CHECK(torus_link_counter(&n->link, TORUS_LINK_COUNT_DUPLICATES) > 0);
        if (reorder > 0 || loss > 0)
            CHECK(torus_link_counter(&n->link, TORUS_LINK_COUNT_OUT_OF_ORDER) > 0);
        if (corrupt > 0)
            CHECK(n->decode_drops > 0);
    }
    if (wrap)
        CHECK(sim.node[0].link.next_sequence < 1000u); /* it did wrap */
}

#define SIM_KEEPALIVE (TORUS_LINK_KEEPALIVE_RTOS * SIM_RTO)

/* An idle link sends one keepalive each way per interval and nothing else,
 * and stays up; none went out while the streams flowed.  When the peer then
 * stops, the silent session ends (retry_limit + 1) intervals after it was
 * last heard, to the step. */
static void check_idle(void)
{
    sim_init(7, 0, 0, 0, 0, 5, 50);
    CHECK(sim_run_until_done(10000 * MS));
    for (unsigned i = 0; i < 2; i++)
        CHECK_EQ(torus_link_counter(&sim.node[i].link, TORUS_LINK_COUNT_KEEPALIVES), 0);
    sim_run_for(10 * MS); /* owed acks go out */
    uint64_t offered = sim.to[0].offered + sim.to[1].offered;
    uint64_t acks = torus_link_counter(&sim.node[0].link, TORUS_LINK_COUNT_ACKS_SENT);
    sim_run_for(10 * SIM_KEEPALIVE);
    CHECK_EQ(sim.to[0].offered + sim.to[1].offered, offered + 2 * 10);
    for (unsigned i = 0; i < 2; i++) {
        const struct torus_link *l = &sim.node[i].link;
        CHECK_EQ(torus_link_counter(l, TORUS_LINK_COUNT_KEEPALIVES), 10);
        CHECK(torus_link_next_deadline(l) <= sim.now + SIM_KEEPALIVE);
        CHECK(torus_link_is_up(l));
    }
    CHECK_EQ(torus_link_counter(&sim.node[0].link, TORUS_LINK_COUNT_ACKS_SENT), acks);

    sim.node[1].paused = true;
    sim.to[1].held = true;
    const struct sim_node *a = &sim.node[0];
    uint64_t heard = a->link.last_heard_ns;
    while (a->downs == 0 && sim.now < heard + 10 * SIM_KEEPALIVE)
        sim_step();
    CHECK_EQ(a->downs, 1);
    CHECK_EQ(torus_link_counter(&a->link, TORUS_LINK_COUNT_SILENCES), 1);
    CHECK(a->last_down_ns >= heard + 6 * SIM_KEEPALIVE);
    CHECK(a->last_down_ns <= heard + 6 * SIM_KEEPALIVE + STEP_NS);
}

/* B dies while A streams: A is down (retry_limit + 1) * rto after the last
 * progress, to the step; then it keeps probing once per rto. */
static void check_dead_peer(uint64_t seed, unsigned loss)
{
    const uint32_t retries = 4;
    sim_init(seed, loss, 0, 0, 0, retries, 1000000);
    sim.node[1].send_target = 0;
    sim_run_for(200 * MS);
    CHECK(torus_link_is_up(&sim.node[0].link));
    CHECK(sim.node[1].delivered > 100);
    uint64_t died = sim.now;
    sim.node[1].dead = true;
    sim.to[1].cut = true;
    while (sim.node[0].downs == 0 && sim.now < died + 100 * SIM_RTO)
        sim_step();
    const struct sim_node *a = &sim.node[0];
    CHECK_EQ(a->downs, 1);
    uint64_t bound = (uint64_t)(retries + 1) * SIM_RTO;
    uint64_t after_progress = a->last_down_ns - a->last_progress_ns;
    uint64_t after_death = a->last_down_ns - died;
    printf("dead peer (loss %u%%): down %" PRIu64 " us after the last progress, %" PRIu64
           " us after the death (bound %" PRIu64 " us + channel delay)\n",
           loss, after_progress / US, after_death / US, bound / US);
    CHECK(after_progress >= bound);
    CHECK(after_progress <= bound + STEP_NS);
    CHECK(after_death <= bound + sim.to[0].delay_ns + sim.to[0].jitter_ns + STEP_NS);
    CHECK_EQ(torus_link_state(&a->link), TORUS_LINK_DOWN);
    CHECK(torus_link_counter(&a->link, TORUS_LINK_COUNT_DISCARDED) > 0);
    CHECK_EQ(torus_link_counter(&a->link, TORUS_LINK_COUNT_DOWN_EVENTS), 1);
    uint64_t syns = torus_link_counter(&a->link, TORUS_LINK_COUNT_SYNS_SENT);
    sim_run_for(20 * SIM_RTO);
    uint64_t probes = torus_link_counter(&a->link, TORUS_LINK_COUNT_SYNS_SENT) - syns;
    CHECK(probes >= 19 && probes <= 21);
    CHECK_EQ(a->ups, 1);
}

/* B crashes and reboots with a new incarnation, either before A notices
 * (A learns of it from B's SYN) or after A declared the link down. */
static void check_restart(uint64_t seed, uint64_t downtime, unsigned loss)
{
    const uint32_t retries = 4;
    const uint32_t frames = 2000;
    sim_init(seed, loss, loss / 2, loss, 0, retries, frames);
    sim_run_for(5 * MS); /* mid-stream */
    CHECK(sim.node[0].ups == 1 && sim.node[1].ups == 1);
    CHECK(sim.node[0].delivered > 0 && sim.node[0].delivered < frames);
    sim.node[1].dead = true;
    sim.to[1].cut = true;
    sim_run_for(downtime);
    bool noticed = sim.node[0].downs > 0;
    /* Reboot: fresh state, an incarnation never used on this link. */
    struct torus_link_config c;
    link_config(&c, 1, 5000, retries);
    CHECK(torus_link_init(&sim.node[1].link, &c));
    sim.node[1].dead = false;
    sim.node[1].sent = sim.node[1].expected = sim.node[1].delivered = 0;
    sim.node[1].ups = sim.node[1].downs = 0;
    sim.node[1].frames_acked = 0;
    sim.to[1].cut = false;
    bool done = sim_run_until_done(60000 * MS);
    CHECK(done);
    const struct sim_node *a = &sim.node[0], *b = &sim.node[1];
    printf("restart after %" PRIu64 " ms (A %s it first), loss %u%%: %s at %" PRIu64
           " ms; A ups=%u downs=%u peer_resets=%" PRIu64 " stale=%" PRIu64 "\n",
           downtime / MS, noticed ? "noticed" : "had not noticed", loss,
           done ? "resynchronised, streams complete" : "NOT DONE", sim.now / MS, a->ups,
           a->downs, torus_link_counter(&a->link, TORUS_LINK_COUNT_PEER_RESETS),
           torus_link_counter(&a->link, TORUS_LINK_COUNT_STALE));
    CHECK_EQ(a->downs, 1);
    CHECK_EQ(a->ups, 2);
    CHECK_EQ(b->ups, 1);
    CHECK_EQ(b->downs, 0);
    if (loss == 0) /* with loss, A may time out while B's SYNs are lost */
        CHECK_EQ(torus_link_counter(&a->link, TORUS_LINK_COUNT_PEER_RESETS), noticed ? 0 : 1);
    CHECK_EQ(a->delivered, frames);
    CHECK_EQ(b->delivered, frames);
}

/* B stops (QEMU stop): nothing reaches it, what it sent stays in flight.
 * A declares the link down; B resumes: its stale frames are dropped as
 * stale at A, it resynchronises, and fresh streams go through. */
static void check_stop_resume(uint64_t seed)
{
    const uint32_t retries = 4;
    const uint32_t frames = 2000;
    sim_init(seed, 0, 0, 0, 0, retries, frames);
    sim.max_payload = 40;
    sim_run_for(5 * MS);
    CHECK(sim.node[0].delivered > 0 && sim.node[0].delivered < frames);
    CHECK(sim.node[1].delivered > 0 && sim.node[1].delivered < frames);
    sim.node[1].paused = true;
    sim.to[1].held = true; /* queued in B's socket */
    sim.to[0].held = true; /* B's last frames, stuck on their way */
    unsigned b_in_flight = sim.to[0].count;
    while (sim.node[0].downs == 0 && sim.now < 200 * SIM_RTO)
        sim_step();
    CHECK_EQ(sim.node[0].downs, 1);
    sim_run_for(10 * SIM_RTO);
    uint32_t a_delivered_before = sim.node[0].delivered;
    sim.node[1].paused = false;
    sim.to[0].held = false;
    sim.to[1].held = false;
    sim_step(); /* A sees B's stale traffic, B sees A's queued traffic */
    const struct sim_node *a = &sim.node[0], *b = &sim.node[1];
    CHECK(b_in_flight > 0);
    CHECK(torus_link_counter(&a->link, TORUS_LINK_COUNT_STALE) >= b_in_flight);
    CHECK_EQ(a->delivered, a_delivered_before); /* none of it was delivered */
    CHECK_EQ(torus_link_counter(&b->link, TORUS_LINK_COUNT_PEER_RESETS), 1);
    bool done = sim_run_until_done(60000 * MS);
    CHECK(done);
    printf("stop/resume: %u stale frames from B dropped at A; %s\n",
           (unsigned)torus_link_counter(&a->link, TORUS_LINK_COUNT_STALE),
           done ? "resynchronised, streams complete" : "NOT DONE");
    CHECK_EQ(a->ups, 2);
    CHECK_EQ(b->ups, 2);
    CHECK_EQ(a->delivered, frames);
    CHECK_EQ(b->delivered, frames);
}

/*
 * Datagrams (issue 20): sent once, outside the window and its sequence; the
 * receiver hands them up without an ack owed (no LINK_ACK, no timer), in
 * any order with data; they keep their flag through the stamp, carry the
 * current ack, count as the session's traffic (no keepalive needed); a
 * replayed one is a duplicate, and a stale session's is dropped like any
 * stale frame.
 */
static void check_datagrams(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME], data[CONFIG_MAX_FRAME];
    hand_handshake(0);
    size_t length = data_frame(0, TORUS_FRAME_TYPE_MEMBERSHIP, 7, frame);
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_seal(frame, length, NULL);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 5 * US), TORUS_LINK_SEND_OK);
    CHECK_EQ(torus_link_in_flight(&hand_a), 0);
    CHECK_EQ(torus_link_counter(&hand_a, TORUS_LINK_COUNT_DATAGRAMS_SENT), 1);
    /* Nothing to resend; unanswered, the link would be down after the
     * dead-peer bound ((3 + 1) rtos of 1 ms). */
    CHECK_EQ(torus_link_next_deadline(&hand_a), 5 * US + 4 * MS);
    struct torus_frame_header h;
    CHECK_EQ(torus_frame_decode(frame, length, 2, NULL, &h, NULL), TORUS_FRAME_OK);
    CHECK_EQ(h.flags, TORUS_FRAME_FLAG_DATAGRAM);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 10 * US), TORUS_LINK_DELIVER);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DATAGRAMS), 1);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DELIVERED), 0);
    /* No ack at the ack delay: a sign of life within a quarter of the
     * bound, unless B sends anything before. */
    CHECK_EQ(torus_link_next_deadline(&hand_b), 10 * US + 1 * MS);
    CHECK_EQ(hand_b.last_heard_ns, 10 * US);
    CHECK_EQ(torus_link_tick(&hand_b, 1 * MS, &hand_out), 0);
    CHECK_EQ(hand_pump(&hand_b, &hand_a, 10 * US + 1 * MS), 1); /* the ACK */
    CHECK_EQ(hand_a.datagram_since, TORUS_LINK_NEVER);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 5 * US + HAND_KEEPALIVE);
    /* B's own datagram pays what it owes: no ACK of its own. */
    size_t back = data_frame(1, TORUS_FRAME_TYPE_MEMBERSHIP, 70, data);
    data[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_seal(data, back, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 2 * MS), TORUS_LINK_DUPLICATE);
    length = data_frame(0, TORUS_FRAME_TYPE_MEMBERSHIP, 71, frame);
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_seal(frame, length, NULL);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 2 * MS), TORUS_LINK_SEND_OK);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 2 * MS), TORUS_LINK_DELIVER);
    CHECK_EQ(torus_link_send(&hand_b, data, back, 2 * MS + 10 * US), TORUS_LINK_SEND_OK);
    CHECK_EQ(torus_link_tick(&hand_b, 4 * MS, &hand_out), 0);
    CHECK_EQ(hand_receive(&hand_a, data, back, 2 * MS + 20 * US), TORUS_LINK_DELIVER);
    CHECK_EQ(hand_a.datagram_since, TORUS_LINK_NEVER);
    /* The first datagram again is a replay: a duplicate, not a heartbeat. */
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DUPLICATES), 1);

    /* A full window does not hold datagrams back; a datagram overtakes a
     * lost data frame, and the data frames' order is unchanged. */
    for (uint32_t i = 0; i < CONFIG_LINK_WINDOW; i++) {
        size_t data_length = data_frame(0, TORUS_FRAME_TYPE_PING, 100 + i, data);
        CHECK_EQ(torus_link_send(&hand_a, data, data_length, 30 * US), TORUS_LINK_SEND_OK);
    }
    length = data_frame(0, TORUS_FRAME_TYPE_MEMBERSHIP, 8, frame);
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_seal(frame, length, NULL);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 40 * US), TORUS_LINK_SEND_OK);
    CHECK_EQ(torus_link_in_flight(&hand_a), CONFIG_LINK_WINDOW);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 50 * US), TORUS_LINK_DELIVER);
    CHECK_EQ(hand_b.expected, 0);

    /* B's datagram carries B's ack: A learns that nothing arrived yet, and
     * when B owes an ack, a datagram pays it. */
    size_t data_length = data_frame(0, TORUS_FRAME_TYPE_PING, 1, data);
    CHECK_EQ(torus_link_send(&hand_b, data, data_length, 60 * US), TORUS_LINK_SEND_OK);
    CHECK_EQ(hand_receive(&hand_a, data, data_length, 70 * US), TORUS_LINK_DELIVER);
    CHECK_EQ(torus_link_next_deadline(&hand_a), 70 * US + 100 * US); /* the ack delay */
    length = data_frame(0, TORUS_FRAME_TYPE_MEMBERSHIP, 9, frame);
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_seal(frame, length, NULL);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 80 * US), TORUS_LINK_SEND_OK);
    CHECK_EQ(torus_frame_decode(frame, length, 2, NULL, &h, NULL), TORUS_FRAME_OK);
    CHECK_EQ(h.link_ack, 1);
    CHECK(torus_link_next_deadline(&hand_a) != 170 * US); /* nothing owed now */
    CHECK_EQ(hand_receive(&hand_b, frame, length, 90 * US), TORUS_LINK_DELIVER);
    CHECK_EQ(torus_link_in_flight(&hand_b), 0); /* B's data frame acked by it */

    /* A LINK_ACK that says DATAGRAM is no frame of ours; a datagram of an
     * earlier session is stale. */
    length = data_frame(0, TORUS_FRAME_TYPE_LINK_ACK, 0, frame);
    struct torus_frame_link_fields fields;
    memcpy(fields.destination_mac, hand_b.local_mac, TORUS_FRAME_MAC_SIZE);
    memcpy(fields.source_mac, hand_b.peer_mac, TORUS_FRAME_MAC_SIZE);
    fields.flags = 0;
    fields.sequence = 0;
    fields.ack = 0;
    fields.sender_incarnation = hand_b.peer_incarnation;
    fields.receiver_incarnation = hand_b.local_incarnation;
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_stamp_link(frame, length, &fields, NULL);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 100 * US), TORUS_LINK_PROTOCOL);
    length = data_frame(0, TORUS_FRAME_TYPE_MEMBERSHIP, 10, frame);
    fields.sender_incarnation = hand_b.peer_incarnation - 1;
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_stamp_link(frame, length, &fields, NULL);
    uint64_t stale = torus_link_counter(&hand_b, TORUS_LINK_COUNT_STALE);
    CHECK_EQ(hand_receive(&hand_b, frame, length, 110 * US), TORUS_LINK_STALE);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_STALE), stale + 1);
    CHECK_EQ(torus_link_counter(&hand_b, TORUS_LINK_COUNT_DATAGRAMS), 4);

    /* Datagrams into a cut cable: nothing answers, and the link is down
     * at the dead-peer bound after the first, as for a data frame. */
    hand_handshake(0);
    length = data_frame(0, TORUS_FRAME_TYPE_MEMBERSHIP, 11, frame);
    frame[TORUS_FRAME_OFFSET_FLAGS] = TORUS_FRAME_FLAG_DATAGRAM;
    torus_frame_seal(frame, length, NULL);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 1 * MS), TORUS_LINK_SEND_OK);
    CHECK_EQ(torus_link_send(&hand_a, frame, length, 2 * MS), TORUS_LINK_SEND_OK);
    torus_link_tick(&hand_a, 5 * MS - 1, &hand_out);
    CHECK(torus_link_is_up(&hand_a));
    torus_link_tick(&hand_a, 5 * MS, &hand_out);
    CHECK(!torus_link_is_up(&hand_a));
    CHECK_EQ(torus_link_take_events(&hand_a), TORUS_LINK_EVENT_DOWN);
}

int main(void)
{
    check_datagrams();
    check_hand_basics();
    check_hand_timeout();
    check_hand_lossy();
    check_lossy("clean", 1, 0, 0, 0, 0, 5, 2000, false);
    check_lossy("lossy 10%", 2, 10, 5, 20, 1, 10, 3000, false);
    check_lossy("harsh 30%", 3, 30, 10, 30, 3, 40, 1000, false);
    check_lossy("wrap", 4, 10, 5, 20, 1, 10, 500, true);
    check_idle();
    check_dead_peer(5, 0);
    check_dead_peer(6, 10);
    check_restart(7, 3 * SIM_RTO, 0);  /* back before A gives up */
    check_restart(8, 30 * SIM_RTO, 0); /* back after A declared it down */
    check_restart(9, 3 * SIM_RTO, 10);
    check_stop_resume(10);
    return check_report("net.link");
}
