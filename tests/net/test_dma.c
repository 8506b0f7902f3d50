/*
 * DMA rings: empty and full exactly, tickets, FIFO order and contents
 * across many wrap-arounds of the slots and across the wrap of the 32-bit
 * indices, reserve/commit, and poll: one snapshot, at most max frames,
 * dispatch by packet type, bad frames and unhandled types counted.
 */
#include <stdlib.h>

#include "net/torus/dma.h"
#include "tests/check.h"

#define NODES 16u

/* The ring is large (slots of CONFIG_MAX_FRAME bytes): keep it static. */
static struct torus_dma_ring ring;

/* A distinct, checkable frame for sequence number n (not a tori frame). */
static size_t raw_frame(uint32_t n, uint8_t *out)
{
    size_t length = 1 + (n * 37u) % CONFIG_MAX_FRAME;
    for (size_t i = 0; i < length; i++)
        out[i] = (uint8_t)(n + i * 7u);
    return length;
}

static bool raw_frame_matches(uint32_t n, const uint8_t *frame, size_t length)
{
    static uint8_t want[CONFIG_MAX_FRAME];
    size_t want_length = raw_frame(n, want);
    return length == want_length && memcmp(frame, want, length) == 0;
}

static void check_empty_and_full(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME + 1];
    torus_dma_ring_init(&ring, NODES, NULL);
    const uint8_t *peeked = frame;
    size_t length = 99;
    CHECK(torus_dma_is_empty(&ring));
    CHECK(!torus_dma_is_full(&ring));
    CHECK_EQ(torus_dma_count(&ring), 0);
    CHECK(!torus_dma_peek(&ring, &peeked, &length));
    CHECK(peeked == NULL && length == 0);
    CHECK(!torus_dma_take(&ring));
    CHECK_EQ(torus_dma_poll(&ring, 10, NULL, NULL), 0);
    CHECK_EQ(ring.counters.taken, 0);

    for (uint32_t n = 0; n < CONFIG_RING_SIZE; n++) {
        uint64_t ticket = 999;
        size_t l = raw_frame(n, frame);
        CHECK_EQ(torus_dma_inject(&ring, frame, l, &ticket), TORUS_DMA_OK);
        CHECK_EQ(ticket, n);
        CHECK(!torus_dma_ticket_done(&ring, ticket));
        CHECK_EQ(torus_dma_count(&ring), n + 1);
        CHECK(!torus_dma_is_empty(&ring));
    }
    CHECK(torus_dma_is_full(&ring));
    uint64_t ticket = 999;
    CHECK_EQ(torus_dma_inject(&ring, frame, 10, &ticket), TORUS_DMA_FULL);
    CHECK_EQ(ticket, 999);
    CHECK(torus_dma_reserve(&ring) == NULL);
    CHECK_EQ(torus_dma_commit(&ring, 10, NULL), TORUS_DMA_FULL);
    CHECK_EQ(ring.counters.full, 3);
    CHECK_EQ(ring.counters.injected, CONFIG_RING_SIZE);
    /* A full ring lost nothing: the oldest is still frame 0. */
    CHECK(torus_dma_peek(&ring, &peeked, &length));
    CHECK(raw_frame_matches(0, peeked, length));

    CHECK_EQ(torus_dma_inject(&ring, frame, 0, NULL), TORUS_DMA_BAD_LENGTH);
    CHECK_EQ(torus_dma_inject(&ring, frame, CONFIG_MAX_FRAME + 1, NULL), TORUS_DMA_BAD_LENGTH);
    CHECK_EQ(torus_dma_inject(&ring, NULL, 10, NULL), TORUS_DMA_BAD_LENGTH);
    CHECK_EQ(ring.counters.bad_length, 3);

    for (uint32_t n = 0; n < CONFIG_RING_SIZE; n++) {
        CHECK(torus_dma_peek(&ring, &peeked, &length));
        CHECK(raw_frame_matches(n, peeked, length));
        CHECK(!torus_dma_ticket_done(&ring, n));
        CHECK(torus_dma_take(&ring));
        CHECK(torus_dma_ticket_done(&ring, n));
        CHECK(!torus_dma_ticket_done(&ring, n + 1u));
    }
    CHECK(torus_dma_is_empty(&ring));
    CHECK(!torus_dma_take(&ring));
    CHECK_EQ(ring.counters.taken, CONFIG_RING_SIZE);
    /* Exactly CONFIG_MAX_FRAME fits. */
    memset(frame, 0xAB, CONFIG_MAX_FRAME);
    CHECK_EQ(torus_dma_inject(&ring, frame, CONFIG_MAX_FRAME, NULL), TORUS_DMA_OK);
    CHECK(torus_dma_peek(&ring, &peeked, &length));
    CHECK_EQ(length, CONFIG_MAX_FRAME);
    CHECK_EQ(peeked[CONFIG_MAX_FRAME - 1], 0xAB);
}

/* Producer and consumer at varying distances, over many laps, starting
 * just below the 32-bit wrap of the indices. */
static void check_wrap_around(uint32_t start, struct check_rng *rng)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    torus_dma_ring_init(&ring, NODES, NULL);
    ring.producer = start;
    ring.consumer = start;
    uint32_t produced = 0, consumed = 0;
    const uint32_t total = CONFIG_RING_SIZE * 40u + 3u;
    while (consumed < total) {
        bool produce = produced < total && check_rng_percent(rng, 55);
        if (produce) {
            size_t l = raw_frame(produced, frame);
            enum torus_dma_status s = torus_dma_inject(&ring, frame, l, NULL);
            if (produced - consumed == CONFIG_RING_SIZE) {
                CHECK_EQ(s, TORUS_DMA_FULL);
                CHECK(torus_dma_is_full(&ring));
            } else {
                CHECK_EQ(s, TORUS_DMA_OK);
                produced++;
            }
        } else {
            const uint8_t *peeked;
            size_t length;
            bool got = torus_dma_peek(&ring, &peeked, &length);
            CHECK_EQ(got, produced != consumed);
            if (got) {
                CHECK(raw_frame_matches(consumed, peeked, length));
                CHECK(torus_dma_take(&ring));
                consumed++;
            }
        }
        CHECK_EQ(torus_dma_count(&ring), produced - consumed);
        CHECK_EQ(torus_dma_is_empty(&ring), produced == consumed);
        CHECK_EQ(torus_dma_is_full(&ring), produced - consumed == CONFIG_RING_SIZE);
        if (check_failures > 20)
            return;
    }
    CHECK_EQ(ring.counters.injected, total);
    CHECK_EQ(ring.counters.taken, total);
    CHECK_EQ(ring.producer, start + total);
}

static void check_reserve_commit(void)
{
    torus_dma_ring_init(&ring, NODES, NULL);
    uint8_t *a = torus_dma_reserve(&ring);
    uint8_t *b = torus_dma_reserve(&ring);
    CHECK(a != NULL && a == b);
    CHECK(torus_dma_is_empty(&ring)); /* nothing until committed */
    memset(a, 0x5A, 100);
    CHECK_EQ(torus_dma_commit(&ring, 0, NULL), TORUS_DMA_BAD_LENGTH);
    CHECK_EQ(torus_dma_commit(&ring, CONFIG_MAX_FRAME + 1, NULL), TORUS_DMA_BAD_LENGTH);
    CHECK(torus_dma_is_empty(&ring));
    uint64_t ticket = 7;
    CHECK_EQ(torus_dma_commit(&ring, 100, &ticket), TORUS_DMA_OK);
    CHECK_EQ(ticket, 0);
    CHECK(torus_dma_reserve(&ring) != a);
    const uint8_t *peeked;
    size_t length;
    CHECK(torus_dma_peek(&ring, &peeked, &length));
    CHECK(peeked == a && length == 100 && peeked[99] == 0x5A);
}

/* What the handlers saw. */
struct seen {
    unsigned calls;
    uint8_t type[4 * CONFIG_RING_SIZE];
    uint32_t source[4 * CONFIG_RING_SIZE];
    unsigned inject_during; /* frames a handler injects into the ring */
};

static size_t tori_frame(uint8_t type, uint32_t source, uint8_t *out)
{
    struct torus_frame_header h;
    memset(&h, 0, sizeof(h));
    h.type = type;
    h.ttl = 1;
    h.source = source;
    h.destination = 1;
    const uint8_t payload[4] = {(uint8_t)source, 2, 3, 4};
    return torus_frame_encode(&h, payload, sizeof(payload), NULL, out, CONFIG_MAX_FRAME);
}

static void record(void *context, const struct torus_frame_header *header,
                   const uint8_t *payload, uint8_t *frame, size_t length)
{
    struct seen *seen = context;
    CHECK(payload == frame + TORUS_FRAME_HEADER_SIZE);
    CHECK_EQ(payload[0], (uint8_t)header->source);
    CHECK_EQ(length, TORUS_FRAME_HEADER_SIZE + 4);
    frame[0] ^= 0xFF; /* handlers may edit the frame in place */
    if (seen->calls < sizeof(seen->type)) {
        seen->type[seen->calls] = header->type;
        seen->source[seen->calls] = header->source;
    }
    seen->calls++;
    for (; seen->inject_during > 0; seen->inject_during--) {
        static uint8_t more[CONFIG_MAX_FRAME];
        size_t l = tori_frame(TORUS_FRAME_TYPE_PING, 100 % NODES, more);
        CHECK_EQ(torus_dma_inject(&ring, more, l, NULL), TORUS_DMA_OK);
    }
}

static void check_poll(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    /* PING and MEMBERSHIP have handlers; PONG, CONTROL, LINK_ACK do not. */
    static const struct torus_dma_dispatch table = {
        .handler = {[TORUS_FRAME_TYPE_PING] = record, [TORUS_FRAME_TYPE_MEMBERSHIP] = record},
    };
    struct seen seen;
    memset(&seen, 0, sizeof(seen));
    torus_dma_ring_init(&ring, NODES, NULL);
    ring.producer = ring.consumer = UINT32_MAX - 2; /* poll across the wrap too */

    /* 0 ping, 1 pong (unhandled), 2 membership, 3 bad checksum, 4 ping,
     * 5 short, 6 control (unhandled), 7 rank out of range, 8 membership */
    const uint8_t types[] = {TORUS_FRAME_TYPE_PING, TORUS_FRAME_TYPE_PONG,
                             TORUS_FRAME_TYPE_MEMBERSHIP, TORUS_FRAME_TYPE_PING,
                             TORUS_FRAME_TYPE_PING, TORUS_FRAME_TYPE_PING,
                             TORUS_FRAME_TYPE_CONTROL, TORUS_FRAME_TYPE_PING,
                             TORUS_FRAME_TYPE_MEMBERSHIP};
    for (uint32_t i = 0; i < sizeof(types); i++) {
        size_t l = tori_frame(types[i], i, frame);
        if (i == 3)
            frame[l - 1] ^= 1;
        if (i == 5)
            l = 20;
        if (i == 7) {
            l = tori_frame(types[i], NODES + 5, frame);
        }
        CHECK_EQ(torus_dma_inject(&ring, frame, l, NULL), TORUS_DMA_OK);
    }
    CHECK_EQ(torus_dma_poll(&ring, 0, &table, &seen), 0);
    CHECK_EQ(seen.calls, 0);
    CHECK_EQ(torus_dma_poll(&ring, 3, &table, &seen), 3);
    CHECK_EQ(seen.calls, 2);
    CHECK_EQ(seen.source[0], 0);
    CHECK_EQ(seen.source[1], 2);
    CHECK_EQ(seen.type[1], TORUS_FRAME_TYPE_MEMBERSHIP);
    CHECK_EQ(ring.counters.unhandled, 1);
    CHECK_EQ(torus_dma_count(&ring), sizeof(types) - 3);

    /* The next handler call injects 2 frames: this poll must not see them. */
    seen.inject_during = 2;
    CHECK_EQ(torus_dma_poll(&ring, 100, &table, &seen), sizeof(types) - 3);
    CHECK_EQ(seen.calls, 4);
    CHECK_EQ(seen.source[2], 4);
    CHECK_EQ(seen.source[3], 8);
    CHECK_EQ(torus_dma_count(&ring), 2);
    CHECK_EQ(ring.counters.received, sizeof(types));
    CHECK_EQ(ring.counters.dispatched, 4);
    CHECK_EQ(ring.counters.unhandled, 2);
    CHECK_EQ(ring.counters.frames.count[TORUS_FRAME_OK], 6);
    CHECK_EQ(ring.counters.frames.count[TORUS_FRAME_DROP_BAD_CHECKSUM], 1);
    CHECK_EQ(ring.counters.frames.count[TORUS_FRAME_DROP_SHORT], 1);
    CHECK_EQ(ring.counters.frames.count[TORUS_FRAME_DROP_RANK_OUT_OF_RANGE], 1);

    /* The injected ones come next time; with no table all are unhandled. */
    CHECK_EQ(torus_dma_poll(&ring, 100, &table, &seen), 2);
    CHECK_EQ(seen.calls, 6);
    CHECK(torus_dma_is_empty(&ring));
    CHECK_EQ(torus_dma_inject(&ring, frame, tori_frame(TORUS_FRAME_TYPE_PING, 1, frame), NULL),
             TORUS_DMA_OK);
    CHECK_EQ(torus_dma_poll(&ring, 100, NULL, NULL), 1);
    CHECK_EQ(ring.counters.unhandled, 3);
    CHECK_EQ(seen.calls, 6);

    /* A full ring drains in max-sized bites, in order. */
    memset(&seen, 0, sizeof(seen));
    for (uint32_t i = 0; i < CONFIG_RING_SIZE; i++)
        CHECK_EQ(torus_dma_inject(&ring, frame, tori_frame(TORUS_FRAME_TYPE_MEMBERSHIP, i % NODES, frame), NULL),
                 TORUS_DMA_OK);
    CHECK(torus_dma_is_full(&ring));
    unsigned polled = 0, rounds = 0;
    while (!torus_dma_is_empty(&ring) && rounds < 100) {
        unsigned got = torus_dma_poll(&ring, 5, &table, &seen);
        CHECK(got == 5 || got == CONFIG_RING_SIZE % 5);
        polled += got;
        rounds++;
    }
    CHECK_EQ(polled, CONFIG_RING_SIZE);
    CHECK_EQ(seen.calls, CONFIG_RING_SIZE);
    for (uint32_t i = 0; i < CONFIG_RING_SIZE && i < sizeof(seen.source) / 4; i++)
        CHECK_EQ(seen.source[i], i % NODES);
}

/* A keyed ring hands up only frames tagged under its key: a keyless frame
 * (a forger's, with a right CRC) or another job's is counted as bad_tag
 * and no handler sees it. */
static void check_keyed_poll(void)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    static const struct torus_dma_dispatch table = {
        .handler = {[TORUS_FRAME_TYPE_MEMBERSHIP] = record},
    };
    struct torus_frame_key key, other;
    memset(&key, 0x5A, sizeof(key));
    memset(&other, 0x5B, sizeof(other));
    struct seen seen;
    memset(&seen, 0, sizeof(seen));
    torus_dma_ring_init(&ring, NODES, &key);
    /* Sources 1, 2, 3: keyless, under another key, under the ring's key. */
    size_t l = tori_frame(TORUS_FRAME_TYPE_MEMBERSHIP, 1, frame);
    CHECK_EQ(torus_dma_inject(&ring, frame, l, NULL), TORUS_DMA_OK);
    l = tori_frame(TORUS_FRAME_TYPE_MEMBERSHIP, 2, frame);
    torus_frame_seal(frame, l, &other);
    CHECK_EQ(torus_dma_inject(&ring, frame, l, NULL), TORUS_DMA_OK);
    l = tori_frame(TORUS_FRAME_TYPE_MEMBERSHIP, 3, frame);
    torus_frame_seal(frame, l, &key);
    CHECK_EQ(torus_dma_inject(&ring, frame, l, NULL), TORUS_DMA_OK);
    CHECK_EQ(torus_dma_poll(&ring, 10, &table, &seen), 3);
    CHECK_EQ(seen.calls, 1);
    CHECK_EQ(seen.source[0], 3);
    CHECK_EQ(ring.counters.frames.count[TORUS_FRAME_DROP_BAD_TAG], 2);
    CHECK_EQ(ring.counters.frames.count[TORUS_FRAME_OK], 1);
    CHECK_EQ(ring.counters.dispatched, 1);
}

int main(void)
{
    struct check_rng rng;
    check_rng_seed(&rng, 0xD3A);
    check_empty_and_full();
    check_wrap_around(0, &rng);
    check_wrap_around(UINT32_MAX - 5, &rng);
    check_wrap_around(UINT32_MAX - CONFIG_RING_SIZE, &rng);
    check_reserve_commit();
    check_poll();
    check_keyed_poll();
    return check_report("net.dma");
}
