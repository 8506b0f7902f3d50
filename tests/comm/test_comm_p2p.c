/*
 * Point-to-point on the test network: fragmentation and all-or-nothing
 * reassembly (0 B, 1 B, one frame exactly, one byte more, 64 KiB, the
 * largest message), received posted and unexpected; tag and any-source
 * matching; MPI ordering between a pair (non-overtaking, a large message
 * before small ones); truncation; sends to oneself; context isolation
 * between WORLD and a dup.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "tests/check.h"
#include "tests/comm/harness.h"

#define LIMIT_NS 20000000000ull /* 20 s of virtual time */

static uint8_t send_buffer[CONFIG_COMM_MAX_MESSAGE];
static uint8_t recv_buffer[CONFIG_COMM_MAX_MESSAGE + 64];

static void fill(uint8_t *p, uint32_t length, uint32_t seed)
{
    for (uint32_t i = 0; i < length; i++) {
        p[i] = (uint8_t)((i * 31u + seed * 7u) ^ (i >> 8));
    }
}

static enum comm_error isend(struct harness *h, uint32_t node, uint32_t comm, uint32_t dest,
                             int32_t tag, const void *buffer, uint32_t length, uint32_t *request)
{
    enum comm_error e = comm_isend(harness_node(h, node), comm, dest, tag, buffer, length,
                                   h->now_ns, harness_begin(h), request);
    harness_end(h, node);
    return e;
}

static enum comm_error irecv(struct harness *h, uint32_t node, uint32_t comm, uint32_t source,
                             int32_t tag, void *buffer, uint32_t capacity, uint32_t *request)
{
    enum comm_error e = comm_irecv(harness_node(h, node), comm, source, tag, buffer, capacity,
                                   h->now_ns, harness_begin(h), request);
    harness_end(h, node);
    return e;
}

/* One message of length from node 0 to node 1, the receive posted before
 * (posted) or after the message arrived; optionally over a bad network. */
static void one_message(uint32_t length, bool posted, unsigned loss, uint64_t seed)
{
    struct harness h;
    harness_init(&h, 2, 2, seed);
    h.loss_percent = loss;
    h.duplicate_percent = loss / 2;
    h.delay_max_ns = loss > 0 ? 300000u : h.delay_min_ns;
    harness_install(&h, 1, NULL, NULL);
    fill(send_buffer, length, length);
    memset(recv_buffer, 0xee, length + 64);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    if (posted) {
        CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, 9, recv_buffer, length, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, 1, r);
    }
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 9, send_buffer, length, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 0, r);
    if (!posted) {
        harness_run_for(&h, 50000000u); /* it arrives and waits (or is told to) */
        CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, 9, recv_buffer, length, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, 1, r);
    }
    CHECKF(harness_requests_wait(&h, &reqs, LIMIT_NS), "length %u posted %d loss %u: not done",
           length, posted, loss);
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECKF(reqs.status[i].error == COMM_ERR_OK, "length %u: request %u: %s", length, i,
               comm_error_text(reqs.status[i].error));
    }
    const struct comm_status *s = &reqs.status[posted ? 0 : 1];
    CHECK_EQ(s->count, length);
    CHECK_EQ(s->source, 0);
    CHECK_EQ(s->tag, 9);
    CHECKF(memcmp(recv_buffer, send_buffer, length) == 0, "length %u: bytes differ", length);
    CHECKF(recv_buffer[length] == 0xee, "length %u: wrote past the message", length);
    CHECK_EQ(comm_get_counters(harness_node(&h, 1))->messages_received, 1);
    if (loss > 0 && length >= 65536) {
        CHECK(h.lost > 0);
        CHECK(comm_get_counters(harness_node(&h, 0))->retransmissions > 0);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

static void test_fragmentation(void)
{
    const uint32_t lengths[] = {0,
                                1,
                                COMM_FRAGMENT_BYTES - 1,
                                COMM_FRAGMENT_BYTES,
                                COMM_FRAGMENT_BYTES + 1,
                                3 * COMM_FRAGMENT_BYTES,
                                65536,
                                CONFIG_COMM_MAX_MESSAGE};
    for (uint32_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        one_message(lengths[i], true, 0, 1 + i);
        one_message(lengths[i], false, 0, 11 + i);
        if (lengths[i] <= 65536) {
            one_message(lengths[i], true, 20, 21 + i);
            one_message(lengths[i], false, 20, 31 + i);
        }
    }
}

/* Exactly one frame: a message of COMM_FRAGMENT_BYTES goes in one DATA frame. */
static void test_one_frame(void)
{
    struct harness h;
    harness_init(&h, 2, 2, 5);
    harness_install(&h, 1, NULL, NULL);
    uint32_t r;
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 0, send_buffer, COMM_FRAGMENT_BYTES, &r), COMM_ERR_OK);
    uint32_t rr;
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, 0, recv_buffer, COMM_FRAGMENT_BYTES, &rr), COMM_ERR_OK);
    harness_run_for(&h, 100000000u);
    CHECK_EQ(comm_get_counters(harness_node(&h, 0))->data_frames_sent, 1);
    CHECK(comm_test(harness_node(&h, 0), r, NULL));
    CHECK(comm_test(harness_node(&h, 1), rr, NULL));
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A receive shorter than its message: TRUNCATE, and not a byte written. */
static void test_truncation(void)
{
    for (int posted = 0; posted < 2; posted++) {
        struct harness h;
        harness_init(&h, 2, 2, 7);
        harness_install(&h, 1, NULL, NULL);
        fill(send_buffer, 5000, 1);
        memset(recv_buffer, 0xee, 5000);
        struct harness_requests reqs;
        harness_requests_clear(&reqs);
        uint32_t r;
        if (posted) {
            irecv(&h, 1, COMM_WORLD, 0, 1, recv_buffer, 4999, &r);
            harness_requests_add(&reqs, 1, r);
        }
        isend(&h, 0, COMM_WORLD, 1, 1, send_buffer, 5000, &r);
        harness_requests_add(&reqs, 0, r);
        /* the next message still arrives: the stream goes on */
        isend(&h, 0, COMM_WORLD, 1, 1, send_buffer, 10, &r);
        harness_requests_add(&reqs, 0, r);
        if (!posted) {
            harness_run_for(&h, 50000000u);
            irecv(&h, 1, COMM_WORLD, 0, 1, recv_buffer, 4999, &r);
            harness_requests_add(&reqs, 1, r);
        }
        irecv(&h, 1, COMM_WORLD, 0, 1, recv_buffer + 4999, 10, &r);
        harness_requests_add(&reqs, 1, r);
        CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        uint32_t truncated = posted ? 0 : 2;
        CHECK_EQ(reqs.status[truncated].error, COMM_ERR_TRUNCATE);
        CHECK_EQ(reqs.status[truncated].count, 5000);
        CHECK_EQ(reqs.status[3].error, COMM_ERR_OK);
        CHECK(memcmp(recv_buffer + 4999, send_buffer, 10) == 0);
        bool untouched = true;
        for (uint32_t i = 0; i < 4999; i++) {
            untouched = untouched && recv_buffer[i] == 0xee;
        }
        CHECKF(untouched, "a truncated receive wrote into its buffer (posted %d)", posted);
        CHECK_EQ(h.errors, 0);
        harness_free(&h);
    }
}

/*
 * Any-source matching and ordering: every other rank sends a numbered
 * series to rank 0 with a few tags, all at once; rank 0 takes them with
 * ANY_SOURCE and ANY_TAG, in batches (the rest wait meanwhile, in the pool
 * or at their senders).  Each series arrives complete, once, and in order.
 */
static void test_any_source(unsigned loss, uint64_t seed)
{
    enum { N = 7, PER = 40, TOTAL = (N - 1) * PER, BATCH = 80 };
    struct harness h;
    harness_init(&h, N, N, seed);
    h.loss_percent = loss;
    h.duplicate_percent = loss;
    h.delay_max_ns = 500000u;
    harness_install(&h, 1, NULL, NULL);
    static uint32_t payload[N][PER][3];
    static uint32_t got[TOTAL][3];
    static struct comm_status status[TOTAL];
    struct harness_requests sends;
    harness_requests_clear(&sends);
    uint32_t r;
    for (uint32_t i = 0; i < PER; i++) {
        for (uint32_t s = 1; s < N; s++) {
            payload[s][i][0] = s;
            payload[s][i][1] = i;
            payload[s][i][2] = s * 1000u + i;
            int32_t tag = (int32_t)(i % 3);
            CHECK_EQ(isend(&h, s, COMM_WORLD, 0, tag, payload[s][i], sizeof payload[s][i], &r),
                     COMM_ERR_OK);
            harness_requests_add(&sends, s, r);
        }
    }
    for (uint32_t first = 0; first < TOTAL; first += BATCH) {
        harness_run_for(&h, 3000000u);
        struct harness_requests batch;
        harness_requests_clear(&batch);
        for (uint32_t k = first; k < first + BATCH && k < TOTAL; k++) {
            CHECK_EQ(irecv(&h, 0, COMM_WORLD, COMM_ANY_SOURCE, COMM_ANY_TAG, got[k],
                           sizeof got[k], &r),
                     COMM_ERR_OK);
            harness_requests_add(&batch, 0, r);
        }
        CHECK(harness_requests_wait(&h, &batch, LIMIT_NS));
        for (uint32_t k = 0; k < batch.count; k++) {
            status[first + k] = batch.status[k];
        }
    }
    /* One receive more than was sent: it must stay pending (no duplicate). */
    uint32_t extra;
    uint32_t spare[3];
    irecv(&h, 0, COMM_WORLD, COMM_ANY_SOURCE, COMM_ANY_TAG, spare, sizeof spare, &extra);
    CHECK(harness_requests_wait(&h, &sends, LIMIT_NS));
    harness_run_for(&h, 100000000u);
    CHECK(!comm_test(harness_node(&h, 0), extra, NULL));
    for (uint32_t k = 0; k < sends.count; k++) {
        CHECK_EQ(sends.status[k].error, COMM_ERR_OK);
    }
    uint32_t next[N] = {0};
    for (uint32_t k = 0; k < TOTAL; k++) {
        CHECK_EQ(status[k].error, COMM_ERR_OK);
        uint32_t s = got[k][0];
        CHECKF(s >= 1 && s < N && status[k].source == s, "receive %u from %u", k, s);
        if (s >= 1 && s < N) {
            CHECKF(got[k][1] == next[s], "source %u: got #%u, expected #%u", s, got[k][1],
                   next[s]);
            CHECK_EQ(status[k].tag, got[k][1] % 3);
            CHECK_EQ(got[k][2], s * 1000u + got[k][1]);
            next[s] = got[k][1] + 1;
        }
    }
    for (uint32_t s = 1; s < N; s++) {
        CHECK_EQ(next[s], PER);
    }
    const struct comm_counters *c = comm_get_counters(harness_node(&h, 0));
    CHECK_EQ(c->messages_received, TOTAL);
    CHECK(c->unexpected_messages > 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Tags select: the tag-7 receive takes the later message; a large message
 * sent first is still received first among equal tags. */
static void test_tags_and_order(void)
{
    struct harness h;
    harness_init(&h, 2, 2, 17);
    h.delay_max_ns = 400000u;
    harness_install(&h, 1, NULL, NULL);
    static uint8_t big[65536];
    static uint8_t big_in[65536];
    fill(big, sizeof big, 3);
    uint8_t small[3][4] = {{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}};
    uint8_t in[4][4];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    isend(&h, 0, COMM_WORLD, 1, 5, small[0], 4, &r);
    harness_requests_add(&reqs, 0, r);
    isend(&h, 0, COMM_WORLD, 1, 7, small[1], 4, &r);
    harness_requests_add(&reqs, 0, r);
    isend(&h, 0, COMM_WORLD, 1, 5, big, sizeof big, &r);
    harness_requests_add(&reqs, 0, r);
    isend(&h, 0, COMM_WORLD, 1, 5, small[2], 4, &r);
    harness_requests_add(&reqs, 0, r);
    harness_run_for(&h, 5000000u);
    irecv(&h, 1, COMM_WORLD, 0, 7, in[0], 4, &r); /* the second message */
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 1, COMM_WORLD, 0, 5, in[1], 4, &r); /* the first */
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 1, COMM_WORLD, 0, 5, big_in, sizeof big_in, &r); /* the big one, before ... */
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 1, COMM_WORLD, COMM_ANY_SOURCE, 5, in[2], 4, &r); /* ... the last small one */
    harness_requests_add(&reqs, 1, r);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(in[0], small[1], 4) == 0);
    CHECK(memcmp(in[1], small[0], 4) == 0);
    CHECK(memcmp(big_in, big, sizeof big) == 0);
    CHECK(memcmp(in[2], small[2], 4) == 0);
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Sends to oneself: matched at once, through the pool, or waiting for the
 * receive when the pool cannot take it. */
static void test_self(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 19);
    harness_install(&h, 1, NULL, NULL);
    uint8_t a[100];
    uint8_t b[100];
    fill(a, sizeof a, 9);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    /* receive first */
    irecv(&h, 2, COMM_WORLD, 2, 4, b, sizeof b, &r);
    harness_requests_add(&reqs, 2, r);
    isend(&h, 2, COMM_WORLD, 2, 4, a, sizeof a, &r);
    harness_requests_add(&reqs, 2, r);
    CHECK(harness_requests_poll(&h, &reqs));
    CHECK(memcmp(a, b, sizeof a) == 0);
    /* send first: the pool keeps it */
    harness_requests_clear(&reqs);
    memset(b, 0, sizeof b);
    isend(&h, 2, COMM_WORLD, 2, 4, a, sizeof a, &r);
    CHECK(comm_test(harness_node(&h, 2), r, NULL));
    irecv(&h, 2, COMM_WORLD, COMM_ANY_SOURCE, COMM_ANY_TAG, b, sizeof b, &r);
    harness_requests_add(&reqs, 2, r);
    CHECK(harness_requests_poll(&h, &reqs));
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK_EQ(reqs.status[0].source, 2);
    /* too large for the pool: the send waits for its receive */
    fill(send_buffer, 65536, 4);
    isend(&h, 2, COMM_WORLD, 2, 4, send_buffer, 65536, &r);
    CHECK(!comm_test(harness_node(&h, 2), r, NULL));
    uint32_t rr;
    irecv(&h, 2, COMM_WORLD, 2, 4, recv_buffer, 65536, &rr);
    struct comm_status s;
    CHECK(comm_test(harness_node(&h, 2), r, &s));
    CHECK_EQ(s.error, COMM_ERR_OK);
    CHECK(comm_test(harness_node(&h, 2), rr, &s));
    CHECK_EQ(s.error, COMM_ERR_OK);
    CHECK(memcmp(send_buffer, recv_buffer, 65536) == 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Argument errors come back at once, and no request is made. */
static void test_arguments(void)
{
    struct harness h;
    harness_init(&h, 3, 2, 23); /* node 2 is a spare: not in WORLD */
    uint32_t r = 77;
    uint8_t b[4];
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 0, b, 4, &r), COMM_ERR_NO_VIEW);
    CHECK_EQ(r, COMM_REQUEST_NULL);
    harness_install(&h, 1, NULL, NULL);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 2, 0, b, 4, &r), COMM_ERR_RANK);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, -1, b, 4, &r), COMM_ERR_TAG);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 0, NULL, 4, &r), COMM_ERR_ARG);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 0, b, CONFIG_COMM_MAX_MESSAGE + 1, &r), COMM_ERR_COUNT);
    CHECK_EQ(isend(&h, 0, 0x205, 1, 0, b, 4, &r), COMM_ERR_COMM);
    CHECK_EQ(isend(&h, 2, COMM_WORLD, 0, 0, b, 4, &r), COMM_ERR_NOT_MEMBER);
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 2, 0, b, 4, &r), COMM_ERR_RANK);
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 1, -2, b, 4, &r), COMM_ERR_TAG);
    CHECK_EQ(comm_size(harness_node(&h, 2), COMM_WORLD), 2);
    CHECK_EQ(comm_rank(harness_node(&h, 2), COMM_WORLD), COMM_RANK_NONE);
    CHECK_EQ(comm_rank(harness_node(&h, 1), COMM_WORLD), 1);
    struct comm_status s;
    CHECK(comm_test(harness_node(&h, 0), 0x12345, &s));
    CHECK_EQ(s.error, COMM_ERR_REQUEST);
    /* The request table is bounded: BUSY, not a crash. */
    uint32_t made = 0;
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_REQUESTS + 5; i++) {
        if (irecv(&h, 0, COMM_WORLD, 1, 3, b, 4, &r) == COMM_ERR_OK) {
            made++;
        }
    }
    CHECK_EQ(made, CONFIG_COMM_MAX_REQUESTS);
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 1, 3, b, 4, &r), COMM_ERR_BUSY);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A dup has its own context: WORLD receives never take its messages. */
static void test_dup_isolation(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 29);
    harness_install(&h, 1, NULL, NULL);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    for (uint32_t i = 0; i < 3; i++) {
        CHECK_EQ(comm_idup(harness_node(&h, i), COMM_WORLD, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&reqs, i, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    uint32_t dup = reqs.status[0].comm;
    for (uint32_t i = 0; i < 3; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        CHECK_EQ(reqs.status[i].comm, dup);
        CHECK_EQ(comm_size(harness_node(&h, i), dup), 3);
        CHECK_EQ(comm_rank(harness_node(&h, i), dup), i);
    }
    CHECK(dup != COMM_WORLD && dup != COMM_NULL);
    uint8_t a[4] = {1, 2, 3, 4};
    uint8_t world_in[4] = {0};
    uint8_t dup_in[4] = {0};
    uint32_t world_recv;
    irecv(&h, 1, COMM_WORLD, COMM_ANY_SOURCE, COMM_ANY_TAG, world_in, 4, &world_recv);
    harness_requests_clear(&reqs);
    isend(&h, 0, dup, 1, 0, a, 4, &r);
    harness_requests_add(&reqs, 0, r);
    harness_run_for(&h, 50000000u);
    CHECK(!comm_test(harness_node(&h, 1), world_recv, NULL));
    irecv(&h, 1, dup, 0, 0, dup_in, 4, &r);
    harness_requests_add(&reqs, 1, r);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(dup_in, a, 4) == 0);
    CHECK(!comm_test(harness_node(&h, 1), world_recv, NULL));
    /* freeing: not while something is pending on it */
    CHECK_EQ(comm_free(harness_node(&h, 1), COMM_WORLD), COMM_ERR_ARG);
    CHECK_EQ(comm_free(harness_node(&h, 1), dup), COMM_ERR_OK);
    CHECK_EQ(comm_size(harness_node(&h, 1), dup), 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Ping-pong as blocking calls do it: each message carries the ack of the
 * one it answers, so a round trip costs two frames, not four. */
static void test_pingpong_piggyback(void)
{
    enum { ROUNDS = 100 };
    struct harness h;
    harness_init(&h, 2, 2, 31);
    harness_install(&h, 1, NULL, NULL);
    static uint64_t ping[ROUNDS];
    static uint64_t pong[ROUNDS];
    struct harness_requests pong_sends;
    harness_requests_clear(&pong_sends);
    uint32_t b_recv;
    irecv(&h, 1, COMM_WORLD, 0, 0, &pong[0], sizeof pong[0], &b_recv);
    for (uint32_t i = 0; i < ROUNDS; i++) {
        struct harness_requests reqs;
        harness_requests_clear(&reqs);
        uint32_t r;
        ping[i] = i;
        isend(&h, 0, COMM_WORLD, 1, 0, &ping[i], sizeof ping[i], &r); /* A: send, recv */
        harness_requests_add(&reqs, 0, r);
        uint32_t a_recv;
        irecv(&h, 0, COMM_WORLD, 1, 0, &ping[i], sizeof ping[i], &a_recv);
        struct harness_requests b;
        harness_requests_clear(&b);
        harness_requests_add(&b, 1, b_recv);
        CHECK(harness_requests_wait(&h, &b, LIMIT_NS)); /* B: recv, then send at once */
        isend(&h, 1, COMM_WORLD, 0, 0, &pong[i], sizeof pong[i], &r);
        harness_requests_add(&pong_sends, 1, r);
        if (i + 1 < ROUNDS) {
            irecv(&h, 1, COMM_WORLD, 0, 0, &pong[i + 1], sizeof pong[i + 1], &b_recv);
        }
        harness_requests_add(&reqs, 0, a_recv);
        CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        CHECK_EQ(ping[i], i);
    }
    uint64_t frames = comm_get_counters(harness_node(&h, 0))->frames_sent +
                      comm_get_counters(harness_node(&h, 1))->frames_sent;
    uint32_t acks = comm_get_counters(harness_node(&h, 0))->acks_sent +
                    comm_get_counters(harness_node(&h, 1))->acks_sent;
    CHECKF(frames <= 2 * ROUNDS + 6, "%llu frames for %u round trips",
           (unsigned long long)frames, ROUNDS);
    CHECK(acks <= 2);
    CHECK(harness_requests_wait(&h, &pong_sends, LIMIT_NS)); /* the last one by its ack */
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Blocking ping-pong of messages too long for the unexpected pool, each side
 * reacting at once (as tori_send and tori_recv do): A's next message leaves
 * the moment A has B's reply.  B may take it only once its own send is
 * acknowledged, so the ack of the reply's last fragment must come at once,
 * ahead of A's next message: riding on that message instead, it would
 * complete B's send in the very frame B has no receive posted for, and every
 * message would be deferred and sent again in full.
 */
static bool request_done(struct harness *h, uint32_t node, uint32_t *request)
{
    struct comm_status status;
    if (*request == COMM_REQUEST_NULL || !comm_test(harness_node(h, node), *request, &status))
        return false;
    CHECKF(status.error == COMM_ERR_OK, "node %u: %s", node, comm_error_text(status.error));
    *request = COMM_REQUEST_NULL;
    return true;
}

static void test_long_pingpong_not_deferred(void)
{
    enum { ROUNDS = 4, LENGTH = 2 * CONFIG_COMM_POOL_BYTES };
    _Static_assert(LENGTH <= CONFIG_COMM_MAX_MESSAGE, "the message fits the core");
    static uint8_t a_buffer[LENGTH], b_buffer[LENGTH];
    struct harness h;
    harness_init(&h, 2, 2, 37);
    harness_install(&h, 1, NULL, NULL);
    fill(a_buffer, LENGTH, 1);
    uint32_t a_send = COMM_REQUEST_NULL, a_recv = COMM_REQUEST_NULL;
    uint32_t b_send = COMM_REQUEST_NULL, b_recv = COMM_REQUEST_NULL;
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, 3, b_buffer, LENGTH, &b_recv), COMM_ERR_OK);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 3, a_buffer, LENGTH, &a_send), COMM_ERR_OK);
    uint32_t a_rounds = 0;
    uint64_t limit = h.now_ns + LIMIT_NS;
    while (a_rounds < ROUNDS && h.now_ns < limit && harness_step(&h)) {
        if (request_done(&h, 0, &a_send)) /* A: its send done, it receives */
            CHECK_EQ(irecv(&h, 0, COMM_WORLD, 1, 3, a_buffer, LENGTH, &a_recv), COMM_ERR_OK);
        if (request_done(&h, 0, &a_recv) && ++a_rounds < ROUNDS) /* A: the next round */
            CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 3, a_buffer, LENGTH, &a_send), COMM_ERR_OK);
        if (request_done(&h, 1, &b_recv)) /* B: the reply */
            CHECK_EQ(isend(&h, 1, COMM_WORLD, 0, 3, b_buffer, LENGTH, &b_send), COMM_ERR_OK);
        if (request_done(&h, 1, &b_send)) /* B: ready for the next message */
            CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, 3, b_buffer, LENGTH, &b_recv), COMM_ERR_OK);
    }
    CHECK_EQ(a_rounds, ROUNDS);
    fill(b_buffer, LENGTH, 1);
    CHECK(memcmp(a_buffer, b_buffer, LENGTH) == 0);
    for (uint32_t node = 0; node < 2; node++) {
        const struct comm_counters *c = comm_get_counters(harness_node(&h, node));
        CHECKF(c->deferred_messages == 0 && c->unexpected_messages == 0,
               "node %u: %u deferred, %u unexpected of %u rounds", node, c->deferred_messages,
               c->unexpected_messages, ROUNDS);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A long message to a posted receive on a clean network: the receiver acks
 * every quarter of a window, so the sender never runs its window dry while
 * an ack for half of it crosses back. */
static void test_ack_every_quarter_window(void)
{
    enum { FRAMES = 2 * CONFIG_COMM_WINDOW };
    const uint32_t length = FRAMES * COMM_FRAGMENT_BYTES;
    struct harness h;
    harness_init(&h, 2, 2, 41);
    harness_install(&h, 1, NULL, NULL);
    fill(send_buffer, length, 5);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, 4, recv_buffer, length, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 1, r);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, 4, send_buffer, length, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 0, r);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(recv_buffer, send_buffer, length) == 0);
    const struct comm_counters *c = comm_get_counters(harness_node(&h, 1));
    CHECKF(c->acks_sent == FRAMES / (CONFIG_COMM_WINDOW / 4u),
           "%u acks for %u frames, a window of %u", c->acks_sent, (unsigned)FRAMES,
           (unsigned)CONFIG_COMM_WINDOW);
    CHECK_EQ(comm_get_counters(harness_node(&h, 0))->retransmissions, 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

int main(void)
{
    test_fragmentation();
    test_one_frame();
    test_truncation();
    test_any_source(0, 41);
    test_any_source(15, 42);
    test_tags_and_order();
    test_self();
    test_arguments();
    test_dup_isolation();
    test_pingpong_piggyback();
    test_long_pingpong_not_deferred();
    test_ack_every_quarter_window();
    return check_report("comm.p2p");
}
