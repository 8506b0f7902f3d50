/*
 * Reliability, flow control and fencing on the test network: a full
 * unexpected pool makes senders wait (WAIT, then GRANT) and nothing is
 * lost; heavy loss, duplication and reordering deliver every message once;
 * sessions are recycled when more peers talk to a node than it has slots;
 * a silent peer is suspected; a peer that left the view fails what named
 * it; a hung-then-resumed node's old frames are counted and never
 * delivered; frames from a newer view are kept (a few) until it is
 * installed, then checked and delivered; a peer's
 * new life is noticed in-band.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "membership/layout.h"
#include "net/torus/geometry.h"
#include "tests/check.h"
#include "tests/comm/harness.h"

#define LIMIT_NS 30000000000ull

static enum comm_error isend(struct harness *h, uint32_t node, uint32_t dest, int32_t tag,
                             const void *buffer, uint32_t length, uint32_t *request)
{
    enum comm_error e = comm_isend(harness_node(h, node), COMM_WORLD, dest, tag, buffer, length,
                                   h->now_ns, harness_begin(h), request);
    harness_end(h, node);
    return e;
}

static enum comm_error irecv(struct harness *h, uint32_t node, uint32_t source, int32_t tag,
                             void *buffer, uint32_t capacity, uint32_t *request)
{
    enum comm_error e = comm_irecv(harness_node(h, node), COMM_WORLD, source, tag, buffer,
                                   capacity, h->now_ns, harness_begin(h), request);
    harness_end(h, node);
    return e;
}

/* WORLD in CONT mode, collectives not strict, at every node: live pairs
 * go on after a failure and a collective on the DETECTED communicator
 * fails at once (a strict one waits for the others' outcome agree). */
static void world_cont(struct harness *h)
{
    for (uint32_t i = 0; i < h->n; i++) {
        CHECK_EQ(comm_set_mode(harness_node(h, i), COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT),
                 COMM_ERR_OK);
        harness_node(h, i)->comms[0].strict = false; /* WORLD is slot 0 */
    }
}

static const struct comm_counters *counters(struct harness *h, uint32_t node)
{
    return comm_get_counters(harness_node(h, node));
}

static void fill(uint8_t *p, uint32_t length, uint32_t seed)
{
    for (uint32_t i = 0; i < length; i++) {
        p[i] = (uint8_t)(i * 13u + seed * 101u + (i >> 9));
    }
}

/*
 * Two senders flood one receiver that posts nothing: the pool fills, the
 * rest are deferred (envelope recorded, frames consumed); their senders
 * hold those messages without sending anything more; the receiver then
 * posts receives, the senders are GRANTed, and every byte arrives, in
 * order per sender.
 */
static void test_flow_control(unsigned loss, uint64_t seed)
{
    enum { A = 24, B = 6, SMALL = 4096, LARGE = 20000 };
    struct harness h;
    harness_init(&h, 3, 3, seed);
    h.loss_percent = loss;
    h.duplicate_percent = loss;
    h.delay_max_ns = loss > 0 ? 300000u : h.delay_min_ns;
    harness_install(&h, 1, NULL, NULL);
    static uint8_t out_a[A][SMALL];
    static uint8_t out_b[B][LARGE];
    static uint8_t in_a[A][SMALL];
    static uint8_t in_b[B][LARGE];
    static uint8_t huge[100000];
    static uint8_t huge_in[100000];
    struct harness_requests sends;
    harness_requests_clear(&sends);
    uint32_t r;
    for (uint32_t i = 0; i < A; i++) {
        fill(out_a[i], SMALL, i);
        isend(&h, 0, 1, 1, out_a[i], SMALL, &r);
        harness_requests_add(&sends, 0, r);
    }
    fill(huge, sizeof huge, 77);
    isend(&h, 0, 1, 1, huge, sizeof huge, &r); /* longer than the pool takes unmatched */
    harness_requests_add(&sends, 0, r);
    for (uint32_t i = 0; i < B; i++) {
        fill(out_b[i], LARGE, 100 + i);
        isend(&h, 2, 1, 2, out_b[i], LARGE, &r);
        harness_requests_add(&sends, 2, r);
    }
    harness_run_for(&h, 300000000u);
    const struct comm_counters *rc = counters(&h, 1);
    CHECK(rc->deferred_messages > 0);
    CHECK_EQ(rc->waits_sent, 0);
    CHECK(!harness_requests_poll(&h, &sends)); /* senders hold what did not fit */
    /* Deferred messages wait at their senders: nothing more goes out. */
    uint64_t frames_before = counters(&h, 0)->data_frames_sent + counters(&h, 2)->data_frames_sent;
    harness_run_for(&h, 300000000u);
    uint64_t frames_after = counters(&h, 0)->data_frames_sent + counters(&h, 2)->data_frames_sent;
    CHECKF(frames_after == frames_before, "waiting senders sent %llu frames in 300 ms",
           (unsigned long long)(frames_after - frames_before));
    struct harness_requests recvs;
    harness_requests_clear(&recvs);
    for (uint32_t i = 0; i < B; i++) {
        irecv(&h, 1, 2, 2, in_b[i], LARGE, &r);
        harness_requests_add(&recvs, 1, r);
    }
    for (uint32_t i = 0; i < A; i++) {
        irecv(&h, 1, 0, 1, in_a[i], SMALL, &r);
        harness_requests_add(&recvs, 1, r);
    }
    irecv(&h, 1, 0, 1, huge_in, sizeof huge_in, &r);
    harness_requests_add(&recvs, 1, r);
    CHECK(harness_requests_wait(&h, &recvs, LIMIT_NS));
    CHECK(harness_requests_wait(&h, &sends, LIMIT_NS));
    for (uint32_t i = 0; i < recvs.count; i++) {
        CHECK_EQ(recvs.status[i].error, COMM_ERR_OK);
    }
    for (uint32_t i = 0; i < sends.count; i++) {
        CHECK_EQ(sends.status[i].error, COMM_ERR_OK);
    }
    for (uint32_t i = 0; i < A; i++) {
        CHECKF(memcmp(in_a[i], out_a[i], SMALL) == 0, "message %u from 0 differs", i);
    }
    for (uint32_t i = 0; i < B; i++) {
        CHECKF(memcmp(in_b[i], out_b[i], LARGE) == 0, "message %u from 2 differs", i);
    }
    CHECK(memcmp(huge, huge_in, sizeof huge) == 0);
    CHECK(rc->grants_sent > 0);
    CHECK_EQ(rc->messages_received, A + B + 1);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Room that comes free is granted: a message deferred long ago goes into
 * the pool within a round trip of the pool emptying, with no receive
 * posted for it.
 */
static void test_grant(void)
{
    enum { FILL = CONFIG_COMM_POOL_BYTES / 4 };
    struct harness h;
    harness_init(&h, 3, 3, 5);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t a[4][FILL];
    static uint8_t a_in[4][FILL];
    static uint8_t b[FILL];
    struct harness_requests sends;
    harness_requests_clear(&sends);
    uint32_t r;
    for (uint32_t i = 0; i < 4; i++) {
        fill(a[i], FILL, i);
        isend(&h, 0, 1, 0, a[i], FILL, &r); /* fills the pool */
        harness_requests_add(&sends, 0, r);
    }
    harness_run_for(&h, 20000000u);
    CHECK(harness_requests_poll(&h, &sends));
    uint32_t waiting;
    isend(&h, 2, 1, 0, b, FILL, &waiting);
    harness_run_for(&h, 500000000u); /* deferred */
    CHECK(!comm_test(harness_node(&h, 2), waiting, NULL));
    CHECK_EQ(counters(&h, 1)->deferred_messages, 1);
    struct harness_requests recvs;
    harness_requests_clear(&recvs);
    for (uint32_t i = 0; i < 4; i++) {
        irecv(&h, 1, 0, 0, a_in[i], FILL, &r);
        harness_requests_add(&recvs, 1, r);
    }
    CHECK(harness_requests_poll(&h, &recvs)); /* straight from the pool */
    harness_requests_clear(&sends);
    harness_requests_add(&sends, 2, waiting);
    CHECK(harness_requests_wait(&h, &sends, 1000000u)); /* well under its probe period */
    CHECK_EQ(sends.status[0].error, COMM_ERR_OK);
    CHECK(counters(&h, 1)->grants_sent > 0);
    CHECK_EQ(counters(&h, 1)->unexpected_messages, 5);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Later messages pass an unmatched one (MPI lets a receive take them in
 * another order): a large message no receive waits for, then a small one
 * with another tag; the receive for the small one completes first.
 */
static void test_overtaking(unsigned loss, uint64_t seed)
{
    struct harness h;
    harness_init(&h, 2, 2, seed);
    h.loss_percent = loss;
    h.duplicate_percent = loss;
    h.delay_max_ns = loss > 0 ? 300000u : h.delay_min_ns;
    harness_install(&h, 1, NULL, NULL);
    static uint8_t big[100000];
    static uint8_t big_in[100000];
    uint8_t small[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    uint8_t small_in[8] = {0};
    fill(big, sizeof big, 5);
    uint32_t big_send;
    uint32_t small_send;
    isend(&h, 0, 1, 1, big, sizeof big, &big_send);
    isend(&h, 0, 1, 2, small, sizeof small, &small_send);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    irecv(&h, 1, 0, 2, small_in, sizeof small_in, &r);
    harness_requests_add(&reqs, 1, r);
    harness_requests_add(&reqs, 0, small_send);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(small, small_in, sizeof small) == 0);
    CHECK(!comm_test(harness_node(&h, 0), big_send, NULL));
    harness_requests_clear(&reqs);
    irecv(&h, 1, 0, 1, big_in, sizeof big_in, &r);
    harness_requests_add(&reqs, 1, r);
    harness_requests_add(&reqs, 0, big_send);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK_EQ(reqs.status[0].error, COMM_ERR_OK);
    CHECK_EQ(reqs.status[1].error, COMM_ERR_OK);
    CHECK(memcmp(big, big_in, sizeof big) == 0);
    CHECK(counters(&h, 1)->deferred_messages > 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A collective behind an unmatched large message: rank 0 sends rank 1 a
 * message rank 1 receives only after an allreduce (legal MPI); the
 * allreduce must not wait behind it.
 */
static void test_collective_behind_unmatched(void)
{
    enum { N = 3 };
    struct harness h;
    harness_init(&h, N, N, 97);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t big[70000];
    static uint8_t big_in[70000];
    fill(big, sizeof big, 6);
    uint32_t big_send;
    isend(&h, 0, 1, 4, big, sizeof big, &big_send);
    harness_run_for(&h, 5000000u);
    int64_t one[N];
    int64_t sum[N];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        one[i] = 1;
        uint32_t r;
        CHECK_EQ(comm_iallreduce(harness_node(&h, i), COMM_WORLD, &one[i], &sum[i], 1,
                                 COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&reqs, i, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < N; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        CHECK_EQ(sum[i], N);
    }
    harness_requests_clear(&reqs);
    uint32_t r;
    irecv(&h, 1, 0, 4, big_in, sizeof big_in, &r);
    harness_requests_add(&reqs, 1, r);
    harness_requests_add(&reqs, 0, big_send);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(big, big_in, sizeof big) == 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * More unplaceable messages than records: past CONFIG_COMM_MAX_UNEXPECTED
 * the receiver cannot even remember an envelope, so the sender is told to
 * WAIT and resends later (its stream held meanwhile); once receives are
 * posted everything arrives, in order.
 */
static void test_records_exhausted(void)
{
    enum { COUNT = CONFIG_COMM_MAX_UNEXPECTED + 8, LENGTH = CONFIG_COMM_POOL_BYTES / 2 + 1 };
    struct harness h;
    harness_init(&h, 2, 2, 101);
    harness_install(&h, 1, NULL, NULL);
    uint8_t *out = malloc((size_t)COUNT * LENGTH);
    uint8_t *in = malloc((size_t)COUNT * LENGTH);
    if (out == NULL || in == NULL) {
        CHECK(false);
        free(out);
        free(in);
        harness_free(&h);
        return;
    }
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    for (uint32_t i = 0; i < COUNT; i++) {
        fill(out + (size_t)i * LENGTH, LENGTH, 1000 + i);
        CHECK_EQ(isend(&h, 0, 1, 0, out + (size_t)i * LENGTH, LENGTH, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, 0, r);
    }
    harness_run_for(&h, 500000000u);
    CHECK_EQ(counters(&h, 1)->deferred_messages, CONFIG_COMM_MAX_UNEXPECTED);
    CHECK(counters(&h, 1)->waits_sent > 0);
    for (uint32_t i = 0; i < COUNT; i++) {
        irecv(&h, 1, 0, 0, in + (size_t)i * LENGTH, LENGTH, &r);
        harness_requests_add(&reqs, 1, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    CHECK(memcmp(out, in, (size_t)COUNT * LENGTH) == 0);
    free(out);
    free(in);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Both ways at once over a network losing 30%, duplicating 20% and
 * reordering: everything arrives once; one receive too many stays pending. */
static void test_heavy_loss(uint64_t seed)
{
    enum { SMALL = 30 };
    struct harness h;
    harness_init(&h, 2, 2, seed);
    h.loss_percent = 30;
    h.duplicate_percent = 20;
    h.delay_max_ns = 2000000u;
    harness_install(&h, 1, NULL, NULL);
    static uint8_t big[2][65536];
    static uint8_t big_in[2][65536];
    static uint32_t small[2][SMALL];
    static uint32_t small_in[2][SMALL];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    for (uint32_t n = 0; n < 2; n++) {
        fill(big[n], sizeof big[n], n);
        irecv(&h, n, 1 - n, 0, big_in[n], sizeof big_in[n], &r);
        harness_requests_add(&reqs, n, r);
        isend(&h, n, 1 - n, 0, big[n], sizeof big[n], &r);
        harness_requests_add(&reqs, n, r);
        for (uint32_t i = 0; i < SMALL; i++) {
            small[n][i] = n * 1000u + i;
            isend(&h, n, 1 - n, 1, &small[n][i], 4, &r);
            harness_requests_add(&reqs, n, r);
            irecv(&h, n, 1 - n, 1, &small_in[n][i], 4, &r);
            harness_requests_add(&reqs, n, r);
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    uint32_t extra[2];
    uint32_t spare[2];
    for (uint32_t n = 0; n < 2; n++) {
        irecv(&h, n, COMM_ANY_SOURCE, COMM_ANY_TAG, &spare[n], 4, &extra[n]);
    }
    harness_run_for(&h, 2000000000u);
    for (uint32_t n = 0; n < 2; n++) {
        CHECK(!comm_test(harness_node(&h, n), extra[n], NULL));
        CHECK(memcmp(big_in[n], big[1 - n], sizeof big[n]) == 0);
        for (uint32_t i = 0; i < SMALL; i++) {
            CHECK_EQ(small_in[n][i], (1 - n) * 1000u + i); /* in order */
        }
        CHECK_EQ(counters(&h, n)->messages_received, SMALL + 1);
        CHECK(counters(&h, n)->retransmissions > 0);
    }
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    CHECK(counters(&h, 0)->drops_duplicate + counters(&h, 1)->drops_duplicate > 0);
    CHECK(h.lost > 0 && h.duplicated > 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * More peers than session slots: 79 ranks each send three messages to rank
 * 0 and get one back; rank 0's table (CONFIG_COMM_MAX_PEERS) recycles
 * sessions (BUSY, CLOSE_REQ, CLOSE) and every message arrives once, in
 * order per sender.
 */
static void test_recycling(unsigned loss, uint64_t seed)
{
    enum { N = CONFIG_COMM_MAX_PEERS + 16, PER = 3 };
    struct harness h;
    harness_init(&h, N, N, seed);
    h.loss_percent = loss;
    h.duplicate_percent = loss;
    h.delay_max_ns = 200000u;
    harness_install(&h, 1, NULL, NULL);
    static uint32_t out[N][PER];
    static uint32_t in[N * PER];
    static uint32_t back[N];
    static uint32_t back_in[N];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    for (uint32_t s = 1; s < N; s++) {
        for (uint32_t i = 0; i < PER; i++) {
            out[s][i] = s * 100u + i;
            CHECK_EQ(isend(&h, s, 0, 0, &out[s][i], 4, &r), COMM_ERR_OK);
            harness_requests_add(&reqs, s, r);
        }
        irecv(&h, s, 0, 1, &back_in[s], 4, &r);
        harness_requests_add(&reqs, s, r);
    }
    uint32_t received = 0;
    while (received < (N - 1) * PER) {
        struct harness_requests batch;
        harness_requests_clear(&batch);
        for (uint32_t k = 0; k < 100 && received + k < (N - 1) * PER; k++) {
            irecv(&h, 0, COMM_ANY_SOURCE, 0, &in[received + k], 4, &r);
            harness_requests_add(&batch, 0, r);
        }
        if (!harness_requests_wait(&h, &batch, LIMIT_NS)) {
            CHECK(false);
            break;
        }
        for (uint32_t k = 0; k < batch.count; k++) {
            CHECK_EQ(batch.status[k].error, COMM_ERR_OK);
        }
        received += batch.count;
    }
    for (uint32_t s = 1; s < N; s++) {
        back[s] = s;
        struct harness_requests one;
        harness_requests_clear(&one);
        CHECK_EQ(isend(&h, 0, s, 1, &back[s], 4, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, 0, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    uint32_t next[N] = {0};
    for (uint32_t k = 0; k < (N - 1) * PER; k++) {
        uint32_t s = in[k] / 100u;
        CHECKF(s >= 1 && s < N && in[k] % 100u == next[s], "message %u from %u out of order",
               in[k], s);
        if (s >= 1 && s < N) {
            next[s]++;
        }
    }
    for (uint32_t s = 1; s < N; s++) {
        CHECK_EQ(next[s], PER);
        CHECK_EQ(back_in[s], s);
    }
    const struct comm_counters *c = counters(&h, 0);
    CHECK(c->busy_sent > 0);
    CHECK(c->closes_sent > 0);
    CHECK_EQ(c->messages_received, (N - 1) * PER);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A peer that stops answering is reported (once per suspect period), and
 * only after suspect_ns. */
static void test_suspicion(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 71);
    harness_install(&h, 1, NULL, NULL);
    uint8_t b[10] = {0};
    uint32_t r;
    harness_hang(&h, 2);
    isend(&h, 0, 2, 0, b, sizeof b, &r);
    harness_run_for(&h, 150000000u);
    CHECK_EQ(h.suspects[0], 0);
    harness_run_for(&h, 100000000u);
    CHECK_EQ(h.suspects[0], 1);
    CHECK_EQ(h.suspected_node[0], 2);
    CHECK_EQ(comm_rank_state_of(harness_node(&h, 0), COMM_WORLD, 2), COMM_RANK_UNAVAILABLE);
    CHECK_EQ(comm_rank_state_of(harness_node(&h, 0), COMM_WORLD, 1), COMM_RANK_OK);
    CHECK(!comm_test(harness_node(&h, 0), r, NULL));
    CHECK_EQ(h.suspects[1], 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A view that removes rank 2 (WORLD in CONT mode): its send in flight and
 * the receive naming it fail with PROC_FAILED, WORLD turns DETECTED (one
 * event per node), an any-source receive fails too (ULFM) and new ones do
 * until the failure is acknowledged, a message it completed before stays
 * deliverable, and new operations naming it fail at once.
 */
static void test_member_left(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 73);
    world_cont(&h);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t big[50000];
    uint8_t early[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t early_in[8] = {0};
    uint8_t b[8];
    uint32_t r;
    isend(&h, 2, 0, 3, early, sizeof early, &r); /* completes: unexpected at 0 */
    harness_run_for(&h, 20000000u);
    CHECK(comm_test(harness_node(&h, 2), r, NULL));
    uint32_t to_2;
    isend(&h, 0, 2, 0, big, sizeof big, &to_2);
    harness_hang(&h, 2);
    uint32_t from_2;
    uint32_t any;
    irecv(&h, 0, 2, 0, b, sizeof b, &from_2);
    irecv(&h, 0, COMM_ANY_SOURCE, 0, b, sizeof b, &any);
    harness_run_for(&h, 10000000u);
    bool live[3] = {true, true, false};
    bool to[3] = {true, true, false};
    harness_install(&h, 2, live, to);
    struct comm_status s;
    CHECK(comm_test(harness_node(&h, 0), to_2, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    CHECK(comm_test(harness_node(&h, 0), from_2, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    CHECK(comm_test(harness_node(&h, 0), any, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    CHECK_EQ(irecv(&h, 0, COMM_ANY_SOURCE, 0, b, sizeof b, &any), COMM_ERR_PROC_FAILED);
    CHECK_EQ(comm_failure_ack(harness_node(&h, 0), COMM_WORLD), COMM_ERR_OK);
    CHECK_EQ(irecv(&h, 0, COMM_ANY_SOURCE, 0, b, sizeof b, &any), COMM_ERR_OK);
    CHECK_EQ(comm_state_of(harness_node(&h, 0), COMM_WORLD), COMM_STATE_DETECTED);
    CHECK_EQ(comm_state_of(harness_node(&h, 1), COMM_WORLD), COMM_STATE_DETECTED);
    CHECK_EQ(h.detected[0], 1);
    CHECK_EQ(h.detected[1], 1);
    CHECK_EQ(comm_rank_state_of(harness_node(&h, 0), COMM_WORLD, 2), COMM_RANK_FAILED);
    CHECK_EQ(isend(&h, 0, 2, 0, b, sizeof b, &r), COMM_ERR_PROC_FAILED);
    CHECK_EQ(irecv(&h, 0, 2, 0, b, sizeof b, &r), COMM_ERR_PROC_FAILED);
    CHECK_EQ(comm_ibarrier(harness_node(&h, 0), COMM_WORLD, h.now_ns, harness_begin(&h), &r),
             COMM_ERR_PROC_FAILED);
    harness_end(&h, 0);
    /* what it completed before it left is still there */
    CHECK_EQ(irecv(&h, 0, 2, 3, early_in, sizeof early_in, &r), COMM_ERR_PROC_FAILED);
    CHECK_EQ(irecv(&h, 0, COMM_ANY_SOURCE, 3, early_in, sizeof early_in, &r), COMM_ERR_OK);
    CHECK(comm_test(harness_node(&h, 0), r, &s));
    CHECK_EQ(s.error, COMM_ERR_OK);
    CHECK_EQ(s.source, 2);
    CHECK(memcmp(early, early_in, sizeof early) == 0);
    /* live pairs go on */
    uint32_t a;
    isend(&h, 1, 0, 0, b, sizeof b, &a);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    harness_requests_add(&reqs, 1, a);
    harness_requests_add(&reqs, 0, any);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK_EQ(reqs.status[1].source, 1);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* from's session to `to` opens: a message sent and received (tag 0), and
 * every acknowledgement in. */
static void open_session(struct harness *h, uint32_t from, uint32_t to)
{
    uint8_t out[8] = {1};
    uint8_t in[8];
    uint32_t s, r;
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    isend(h, from, to, 0, out, sizeof out, &s);
    irecv(h, to, from, 0, in, sizeof in, &r);
    harness_requests_add(&reqs, to, r);
    CHECK(harness_requests_wait(h, &reqs, LIMIT_NS));
    harness_run_for(h, 20000000u);
}

/* node's receive r is done, OK, and holds what was sent. */
static void check_received(struct harness *h, uint32_t node, uint32_t r, const uint8_t *in,
                           const uint8_t *out, uint32_t length)
{
    struct comm_status status;
    CHECK(comm_test(harness_node(h, node), r, &status));
    CHECK_EQ(status.error, COMM_ERR_OK);
    CHECK(memcmp(in, out, length) == 0);
}

/*
 * A frame lost again and again (on a path through a node that died, say)
 * waits for a timeout that backs off: 2, 4, then 8 ms in the harness.  A
 * view that removes a member sends it once more at the install (routes now
 * go around the removed), from the first timeout: node 0's message to node
 * 1, sent at 0 and resent at 2 and 6 ms into a lossy network, arrives at
 * the install at 7 ms; on the old code at the next timeout, 14 ms.
 */
static void test_view_resends_backed_off(void)
{
    struct harness h;
    harness_init(&h, 4, 4, 91);
    world_cont(&h);
    harness_install(&h, 1, NULL, NULL);
    uint8_t out[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t in[8] = {0};
    uint32_t s, r;
    open_session(&h, 0, 1);
    uint64_t resent = comm_get_counters(harness_node(&h, 0))->retransmissions;
    h.loss_percent = 100;
    isend(&h, 0, 1, 1, out, sizeof out, &s);
    irecv(&h, 1, 0, 1, in, sizeof in, &r);
    harness_run_until(&h, 7000000u);
    CHECK_EQ(comm_get_counters(harness_node(&h, 0))->retransmissions, resent + 2u);
    CHECK(!comm_test(harness_node(&h, 1), r, NULL));
    h.loss_percent = 0;
    bool live[4] = {true, true, true, false};
    harness_install(&h, 2, live, live);
    CHECK_EQ(comm_get_counters(harness_node(&h, 0))->retransmissions, resent + 3u);
    harness_run_until(&h, 1000000u); /* a frame's 10 us, and its ack's */
    check_received(&h, 1, r, in, out, sizeof out);
    struct comm_status status;
    CHECK(comm_test(harness_node(&h, 0), s, &status));
    CHECK_EQ(status.error, COMM_ERR_OK);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A frame of the old view reaching a node that installed the new one first
 * is dropped as stale.  Its sender, installing the view in turn with a
 * frame of it from that node in its hold (so it knows), sends it again at
 * once, in the view: node 0's message to node 1, dropped at 10 us, arrives
 * at 30 us, not after the 2 ms timeout (the old code: 2.01 ms).
 */
static void test_view_ahead_resends(void)
{
    struct harness h;
    harness_init(&h, 4, 4, 92);
    world_cont(&h);
    harness_install(&h, 1, NULL, NULL);
    uint8_t out[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    uint8_t in[8] = {0};
    uint32_t s, r;
    open_session(&h, 0, 1); /* both ways */
    open_session(&h, 1, 0);
    uint32_t stale = comm_get_counters(harness_node(&h, 1))->drops_stale_epoch;
    isend(&h, 0, 1, 1, out, sizeof out, &s); /* view 1's frame, due at 1 at 10 us */
    irecv(&h, 1, 0, 1, in, sizeof in, &r);
    harness_run_until(&h, 5000u);
    bool only_1[4] = {false, true, false, false};
    harness_install(&h, 2, NULL, only_1); /* node 1 first */
    uint32_t ahead;
    isend(&h, 1, 0, 2, out, sizeof out, &ahead); /* view 2's frame: held at 0 */
    harness_run_until(&h, 15000u);
    CHECK_EQ(comm_get_counters(harness_node(&h, 1))->drops_stale_epoch, stale + 1u);
    CHECK(comm_get_counters(harness_node(&h, 0))->frames_held >= 1u);
    bool others[4] = {true, false, true, true};
    harness_install(&h, 2, NULL, others);
    harness_run_until(&h, 100000u);
    check_received(&h, 1, r, in, out, sizeof out);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Fencing: node 3 hangs with frames queued to node 0 (and node 1 has
 * frames queued to node 3); the others install a view without it; node 3
 * resumes in its old view and its frames, first and resent, reach node 0:
 * counted as stale, never delivered (an any-source receive posted after the
 * failure was acknowledged stays pending).
 * Node 3 is then expelled (comm_drop_view, a new incarnation) and let back
 * in: frames from before, addressed to its old life, are counted and
 * dropped there too.
 */
static void test_hung_then_resumed(void)
{
    struct harness h;
    harness_init(&h, 4, 4, 79);
    world_cont(&h);
    harness_install(&h, 1, NULL, NULL);
    uint8_t payload[16] = {0x33};
    uint8_t in[16];
    uint32_t r;
    uint32_t any;
    CHECK_EQ(irecv(&h, 0, COMM_ANY_SOURCE, COMM_ANY_TAG, in, sizeof in, &any), COMM_ERR_OK);
    uint32_t old_send[3];
    for (uint32_t i = 0; i < 3; i++) {
        isend(&h, 3, 0, 5, payload, sizeof payload, &old_send[i]);
    }
    uint32_t to_3;
    isend(&h, 1, 3, 6, payload, sizeof payload, &to_3);
    harness_hang(&h, 3);
    bool live[4] = {true, true, true, false};
    harness_install(&h, 2, live, live);
    struct comm_status s;
    CHECK(comm_test(harness_node(&h, 1), to_3, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    CHECK(comm_test(harness_node(&h, 0), any, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    CHECK_EQ(comm_failure_ack(harness_node(&h, 0), COMM_WORLD), COMM_ERR_OK);
    CHECK_EQ(irecv(&h, 0, COMM_ANY_SOURCE, COMM_ANY_TAG, in, sizeof in, &any), COMM_ERR_OK);
    /* It resumes, still in view 1, and keeps resending for a while. */
    harness_resume(&h, 3);
    harness_run_for(&h, 300000000u);
    CHECK(counters(&h, 0)->drops_stale_epoch >= 3);
    CHECK(!comm_test(harness_node(&h, 0), any, NULL));
    CHECK_EQ(counters(&h, 0)->messages_received, 0);
    CHECK(h.suspects[3] > 0); /* nobody acks it any more */
    /* Expelled: everything of its old life fails there. */
    comm_drop_view(harness_node(&h, 3), 1000, h.now_ns, harness_begin(&h));
    harness_end(&h, 3);
    for (uint32_t i = 0; i < 3; i++) {
        CHECK(comm_test(harness_node(&h, 3), old_send[i], &s));
        CHECK_EQ(s.error, COMM_ERR_NO_VIEW);
    }
    CHECK_EQ(comm_state_of(harness_node(&h, 3), COMM_WORLD), COMM_STATE_FAILED);
    CHECK_EQ(isend(&h, 3, 0, 5, payload, sizeof payload, &r), COMM_ERR_NO_VIEW);
    /* Frames to its old life, sent while it hung, reach its new life. */
    uint32_t late;
    uint64_t stale_before = counters(&h, 3)->drops_stale_epoch +
                            counters(&h, 3)->drops_stale_incarnation +
                            counters(&h, 3)->drops_no_view;
    harness_hang(&h, 3);
    (void)late;
    harness_install(&h, 3, NULL, NULL);
    harness_resume(&h, 3);
    harness_run_for(&h, 300000000u);
    CHECK(!comm_test(harness_node(&h, 0), any, NULL));
    CHECK_EQ(counters(&h, 0)->messages_received, 0);
    CHECK_EQ(counters(&h, 3)->messages_received, 0);
    uint64_t stale_after = counters(&h, 3)->drops_stale_epoch +
                           counters(&h, 3)->drops_stale_incarnation +
                           counters(&h, 3)->drops_no_view;
    CHECK(stale_after >= stale_before);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A frame from a newer view is kept until ours catches up, then delivered
 * at once (comm/DESIGN.md, "Views and fencing"): the sender's resends of it
 * take no second slot, and the message completes well within one
 * retransmission timeout of the install (dropping it cost the sender's
 * backed-off timeout: 10 ms here).
 */
static void test_ahead_epoch(void)
{
    struct harness h;
    harness_init(&h, 2, 2, 83);
    harness_install(&h, 1, NULL, NULL);
    bool first[2] = {false, true};
    harness_install(&h, 2, NULL, first); /* node 1 is ahead */
    uint8_t b[4] = {9, 8, 7, 6};
    uint8_t in[4] = {0};
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    isend(&h, 1, 0, 0, b, 4, &r);
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 0, 1, 0, in, 4, &r);
    harness_requests_add(&reqs, 0, r);
    harness_run_until(&h, 20000000u); /* not to a resend: the next is 10 ms away */
    CHECK(!harness_requests_poll(&h, &reqs));
    CHECK_EQ(counters(&h, 0)->frames_held, 1u); /* the OPEN */
    CHECK(counters(&h, 0)->drops_duplicate > 0); /* its resends */
    CHECK_EQ(counters(&h, 0)->drops_ahead_epoch, 0u);
    bool second[2] = {true, false};
    uint64_t installed = h.now_ns;
    harness_install(&h, 2, NULL, second);
    CHECK_EQ(counters(&h, 0)->held_delivered, 1u);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(h.now_ns - installed < 1000000u);
    CHECK(memcmp(b, in, 4) == 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * The hold is bounded and keeps arrival order: over a session already
 * open, the ahead sender's sixteen messages are sixteen DATA frames; the first
 * CONFIG_COMM_HOLD_FRAMES are kept and delivered, in order, by the install
 * itself; the rest were dropped (counted) and come with the resends.
 * Every message arrives once, in order.
 */
static void test_hold_bound(void)
{
    enum { M = 16 }; /* one window: all sent at once */
    _Static_assert(CONFIG_COMM_HOLD_FRAMES < M && M <= CONFIG_COMM_WINDOW,
                   "more messages than the hold keeps, within one window");
    /* The bound, whatever it is (0 turns the hold off: test_ahead_epoch
     * and test_hold_checks fail then, not this one). */
    const uint32_t kept = CONFIG_COMM_HOLD_FRAMES;
    struct harness h;
    harness_init(&h, 2, 2, 84);
    harness_install(&h, 1, NULL, NULL);
    static uint32_t out[M + 1];
    static uint32_t in[M + 1];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    out[M] = 99; /* opens the session in view 1 */
    isend(&h, 1, 0, 0, &out[M], 4, &r);
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 0, 1, 0, &in[M], 4, &r);
    harness_requests_add(&reqs, 0, r);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    bool ahead[2] = {false, true};
    harness_install(&h, 2, NULL, ahead);
    struct harness_requests receives;
    harness_requests_clear(&receives);
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < M; i++) {
        out[i] = 1000u + i;
        isend(&h, 1, 0, 0, &out[i], 4, &r);
        harness_requests_add(&reqs, 1, r);
        irecv(&h, 0, 1, 0, &in[i], 4, &r);
        harness_requests_add(&receives, 0, r);
    }
    harness_run_for(&h, 1000000u); /* within the first timeout: no resend yet */
    CHECK_EQ(counters(&h, 0)->frames_held, kept);
    CHECK_EQ(counters(&h, 0)->drops_ahead_epoch, M - kept);
    CHECK(!harness_requests_poll(&h, &receives));
    bool behind[2] = {true, false};
    harness_install(&h, 2, NULL, behind);
    CHECK_EQ(counters(&h, 0)->held_delivered, kept);
    /* the install delivered the kept ones, in order, before any time passed */
    for (uint32_t i = 0; i < M; i++) {
        bool done = comm_test(harness_node(&h, 0), receives.handle[i], NULL);
        CHECK_EQ(done, i < kept);
    }
    CHECK(harness_requests_wait(&h, &receives, LIMIT_NS));
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < M; i++) {
        CHECK_EQ(in[i], 1000u + i);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Held frames pass every check a fresh frame passes, against the view
 * installed when they are delivered: one from a node that view removed is
 * dropped (not a member); frames of a view this node skipped (it installed
 * a newer one first) or never reached (it lost its view) are dropped and
 * counted; a message whose frames were dropped still arrives, resent in
 * the view both hold.
 */
static void test_hold_checks(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 85);
    world_cont(&h);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t b[4] = {1, 2, 3, 4};
    static uint8_t in[4];
    uint32_t r;
    /* node 2 sends in view 2, which node 0 installs without node 2 */
    bool only2[3] = {false, false, true};
    harness_install(&h, 2, NULL, only2);
    isend(&h, 2, 0, 0, b, 4, &r);
    harness_run_for(&h, 100000u);
    CHECK_EQ(counters(&h, 0)->frames_held, 1u);
    bool live01[3] = {true, true, false};
    uint32_t not_member = counters(&h, 0)->drops_not_member;
    harness_install(&h, 2, live01, live01);
    CHECK_EQ(counters(&h, 0)->held_delivered, 1u);
    CHECK_EQ(counters(&h, 0)->drops_not_member, not_member + 1u);
    /* view 2 removed node 2: nodes 0 and 1 opened their sessions to each
     * other (their new tree neighbour) at its install; let the ACCEPTs
     * come back in view 2, so that what node 1 sends next goes at once */
    harness_run_for(&h, 100000u);
    /* node 1 sends in view 3; node 0 goes from 2 straight to 4 */
    bool only1[3] = {false, true, false};
    harness_install(&h, 3, live01, only1);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    isend(&h, 1, 0, 0, b, 4, &r);
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 0, 1, 0, in, 4, &r);
    harness_requests_add(&reqs, 0, r);
    harness_run_for(&h, 100000u);
    CHECK_EQ(counters(&h, 0)->frames_held, 2u);
    bool only0[3] = {true, false, false};
    harness_install(&h, 4, live01, only0);
    CHECK_EQ(counters(&h, 0)->held_dropped, 1u);
    CHECK_EQ(counters(&h, 0)->held_delivered, 1u);
    harness_install(&h, 4, live01, only1);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(b, in, 4) == 0);
    /* node 1 sends in view 5; node 0 loses its view first */
    harness_install(&h, 5, live01, only1);
    isend(&h, 1, 0, 0, b, 4, &r);
    harness_run_for(&h, 100000u);
    CHECK_EQ(counters(&h, 0)->frames_held, 3u);
    comm_drop_view(harness_node(&h, 0), 500u, h.now_ns, harness_begin(&h));
    harness_end(&h, 0);
    CHECK_EQ(counters(&h, 0)->held_dropped, 2u);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A peer's new life (same view, another incarnation) is noticed from its
 * first frame: what was under way with the old life fails. */
static void test_peer_restart(void)
{
    struct harness h;
    harness_init(&h, 2, 2, 89);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t big[60000];
    uint32_t to_1;
    isend(&h, 0, 1, 0, big, sizeof big, &to_1);
    harness_run_for(&h, 50000u); /* the session is open, part of it arrived */
    CHECK(!comm_test(harness_node(&h, 0), to_1, NULL));
    harness_hang(&h, 1);
    harness_run_for(&h, 5000000u);
    /* node 1 restarts: a fresh context with a new incarnation, same view */
    struct comm_config config = harness_node(&h, 1)->config;
    config.incarnation = 5000;
    CHECK_EQ(comm_init(harness_node(&h, 1), &config), COMM_INIT_OK);
    bool only[2] = {false, true};
    harness_install(&h, 1, NULL, only);
    h.held_count = 0; /* what its old life had queued is gone with it */
    harness_resume(&h, 1);
    uint8_t b[4] = {4, 4, 4, 4};
    uint8_t in[4] = {0};
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    isend(&h, 1, 0, 1, b, 4, &r);
    harness_requests_add(&reqs, 1, r);
    irecv(&h, 0, 1, 1, in, 4, &r);
    harness_requests_add(&reqs, 0, r);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(b, in, 4) == 0);
    struct comm_status s;
    CHECK(comm_test(harness_node(&h, 0), to_1, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    CHECK_EQ(counters(&h, 0)->peer_restarts, 1);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Views come in layout positions: with the torus (snake) layout, position
 * and node id differ, and the core must read the live set through the
 * layout.  A view that is not newer, or of another size, is refused.
 */
static void test_view_layout(void)
{
    enum { N = 8, GONE = 6 };
    struct harness h;
    harness_init(&h, N, N, 103);
    world_cont(&h);
    struct membership_layout layout;
    uint32_t sizes[3] = {2, 2, 2};
    bool mesh[CONFIG_MAX_DIMS] = {false};
    CHECK(torus_geometry_init(&layout.geometry, 3, sizes, mesh, NULL) == TORUS_GEOMETRY_OK);
    layout.kind = MEMBERSHIP_LAYOUT_TORUS;
    static struct membership_view view;
    membership_view_reset(&view, N);
    bool moved = false;
    for (uint32_t id = 0; id < N; id++) {
        moved = moved || membership_layout_pos(&layout, id) != id;
        if (id != GONE) {
            membership_view_add(&view, membership_layout_pos(&layout, id));
        }
    }
    CHECK(moved); /* the test means something only if positions differ */
    for (uint32_t i = 0; i < N; i++) {
        CHECK(comm_install_view(harness_node(&h, i), 5, &view, &layout, h.now_ns,
                                harness_begin(&h)));
        harness_end(&h, i);
    }
    struct comm *c = harness_node(&h, 0);
    for (uint32_t r = 0; r < N; r++) {
        CHECK_EQ(comm_rank_state_of(c, COMM_WORLD, r),
                 r == GONE ? COMM_RANK_FAILED : COMM_RANK_OK);
    }
    CHECK_EQ(comm_state_of(c, COMM_WORLD), COMM_STATE_DETECTED);
    uint8_t b[4] = {1, 2, 3, 4};
    uint8_t in[4];
    uint32_t r;
    CHECK_EQ(isend(&h, 0, GONE, 0, b, 4, &r), COMM_ERR_PROC_FAILED);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    CHECK_EQ(isend(&h, 0, 7, 0, b, 4, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 0, r);
    CHECK_EQ(irecv(&h, 7, 0, 0, in, 4, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 7, r);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK(memcmp(b, in, 4) == 0);
    /* not newer, or another size: refused, nothing changes */
    CHECK(!comm_install_view(c, 5, &view, &layout, h.now_ns, harness_begin(&h)));
    static struct membership_view other;
    membership_view_reset(&other, N - 1);
    CHECK(!comm_install_view(c, 6, &other, &layout, h.now_ns, harness_begin(&h)));
    CHECK_EQ(comm_view_epoch(c), 5);
    CHECK_EQ(comm_get_counters(c)->views_refused, 2);
    comm_outbox_clear(&h.out);
    /* the next view removes node 1: read through the layout too */
    membership_view_remove(&view, membership_layout_pos(&layout, 1));
    CHECK(comm_install_view(c, 7, &view, &layout, h.now_ns, harness_begin(&h)));
    harness_end(&h, 0);
    CHECK_EQ(comm_rank_state_of(c, COMM_WORLD, 1), COMM_RANK_FAILED);
    CHECK_EQ(comm_rank_state_of(c, COMM_WORLD, 2), COMM_RANK_OK);
    CHECK_EQ(h.detected[0], 2);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Garbage from a member: node 2 throws 200,000 random frames at node 0
 * (every kind, random fields, valid or spoiled, its own incarnation or
 * not, random epochs) while nodes 0 and 1 exchange messages.  Nothing
 * crashes or reads out of bounds (the sanitizer build runs this too), and
 * the traffic between 0 and 1 is untouched.
 */
static void test_garbage(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 107);
    harness_install(&h, 1, NULL, NULL);
    struct check_rng rng;
    check_rng_seed(&rng, 107);
    static uint8_t big[20000];
    static uint8_t big_in[20000];
    static uint8_t junk[COMM_FRAGMENT_BYTES];
    fill(big, sizeof big, 8);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    irecv(&h, 0, 1, 3, big_in, sizeof big_in, &r);
    harness_requests_add(&reqs, 0, r);
    uint32_t any;
    uint8_t any_in[64];
    irecv(&h, 0, COMM_ANY_SOURCE, 4, any_in, sizeof any_in, &any);
    isend(&h, 1, 0, 3, big, sizeof big, &r);
    harness_requests_add(&reqs, 1, r);
    uint8_t payload[COMM_MAX_PAYLOAD];
    struct comm *target = harness_node(&h, 0);
    uint32_t sender_incarnation = harness_node(&h, 2)->incarnation;
    for (uint32_t i = 0; i < 200000; i++) {
        struct comm_frame f;
        memset(&f, 0, sizeof f);
        /* the session kinds (a member's REVOKE is legitimate news: its
         * refusals are tested in test_comm_ft) */
        f.kind = (uint8_t)(1 + check_rng_below(&rng, COMM_KIND_REVOKE - 1));
        f.flags = (uint8_t)check_rng_below(&rng, 16);
        f.sender_incarnation = check_rng_percent(&rng, 80) ? sender_incarnation
                                                           : (uint32_t)check_rng_next(&rng) | 1u;
        f.receiver_incarnation = check_rng_percent(&rng, 80) ? target->incarnation : 0;
        uint32_t small = check_rng_below(&rng, 4);
        f.session = check_rng_percent(&rng, 50) ? (small << 8) | check_rng_below(&rng, 4)
                                                : (uint32_t)check_rng_next(&rng);
        f.session |= 1u;
        f.token = (uint32_t)check_rng_next(&rng) | 1u;
        f.seq = check_rng_percent(&rng, 70) ? check_rng_below(&rng, 40)
                                            : (uint32_t)check_rng_next(&rng);
        f.mask = (uint32_t)check_rng_next(&rng);
        f.deferred = (uint32_t)check_rng_next(&rng);
        f.total = check_rng_below(&rng, 3) == 0 ? (uint32_t)check_rng_below(&rng, 70000) : 100;
        uint32_t frames = COMM_FRAMES_FOR(f.total);
        f.offset = check_rng_below(&rng, frames) * COMM_FRAGMENT_BYTES;
        if (f.offset == 0) {
            f.flags |= COMM_FLAG_FIRST;
            f.flags &= (uint8_t)~COMM_FLAG_SKIP;
            f.context = (uint16_t)(check_rng_below(&rng, 4) |
                                   (check_rng_percent(&rng, 50) ? COMM_CONTEXT_COLLECTIVE : 0u));
            f.source_rank = check_rng_below(&rng, 4);
            f.tag = check_rng_below(&rng, 6);
            f.resend_of = (f.flags & COMM_FLAG_RESEND) != 0 ? check_rng_below(&rng, 40) : 0;
        } else {
            f.flags &= (uint8_t)~(COMM_FLAG_FIRST | COMM_FLAG_RESEND);
        }
        if ((f.flags & COMM_FLAG_SKIP) == 0) {
            uint32_t left = f.total - f.offset;
            f.data_length = left < COMM_FRAGMENT_BYTES ? left : COMM_FRAGMENT_BYTES;
            f.data = f.data_length > 0 ? junk : NULL;
        }
        if ((f.flags & COMM_FLAG_ACK) != 0) {
            f.ack_sid = f.session;
            f.ack_cum = check_rng_below(&rng, 40);
            f.ack_mask = (uint32_t)check_rng_next(&rng);
            f.ack_deferred = (uint32_t)check_rng_next(&rng);
        }
        size_t length = comm_encode(&f, payload, sizeof payload);
        if (length == 0 || check_rng_percent(&rng, 10)) {
            length = 1 + check_rng_below(&rng, 80); /* raw bytes instead */
            for (size_t b = 0; b < length; b++) {
                payload[b] = (uint8_t)check_rng_next(&rng);
            }
            payload[0] = COMM_WIRE_VERSION;
        }
        uint64_t epoch = check_rng_percent(&rng, 90) ? 1u : check_rng_below(&rng, 3);
        comm_receive(target, 2, epoch, payload, length, h.now_ns, harness_begin(&h));
        harness_end(&h, 0);
        if (i % 1000 == 0) {
            harness_run_for(&h, 100000u);
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK_EQ(reqs.status[0].error, COMM_ERR_OK);
    CHECK(memcmp(big, big_in, sizeof big) == 0);
    struct comm_status st;
    if (comm_test(target, any, &st)) {
        CHECK_EQ(st.source, 2); /* only node 2's junk could have matched it */
    }
    CHECK(comm_get_counters(target)->decode_drops[COMM_DECODE_KIND] +
              comm_get_counters(target)->decode_drops[COMM_DECODE_SHORT] >
          0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A seeded storm: five nodes send 240 messages of random sizes (0 B to
 * 70 kB, mostly small) with random tags to random peers while receives are
 * posted at random moments, over a network that loses, duplicates and
 * reorders.  Every message arrives exactly once with its bytes, and the
 * k-th receive posted for (source, tag) gets the k-th message sent with
 * them; receives with ANY_SOURCE on tag 9 see each sender's tag-9 messages
 * in order.
 */
#define STORM_NODES 5
#define STORM_MESSAGES 240
#define STORM_MAX 70000

struct storm_message {
    uint32_t source;
    uint32_t dest;
    uint32_t tag;
    uint32_t number; /* among (source, dest, tag) */
    uint32_t length;
    uint8_t *bytes;
    bool posted;
};

static uint32_t storm_length(struct check_rng *rng)
{
    uint32_t kind = check_rng_below(rng, 100);
    if (kind < 60) {
        return check_rng_below(rng, 101);
    }
    if (kind < 85) {
        return check_rng_below(rng, 5001);
    }
    return check_rng_below(rng, STORM_MAX + 1);
}

static void test_storm(uint64_t seed, unsigned loss)
{
    struct harness h;
    harness_init(&h, STORM_NODES, STORM_NODES, seed);
    h.loss_percent = loss;
    h.duplicate_percent = loss;
    h.delay_max_ns = 400000u;
    harness_install(&h, 1, NULL, NULL);
    struct check_rng rng;
    check_rng_seed(&rng, seed * 7919u);
    static struct storm_message m[STORM_MESSAGES];
    static uint32_t count[STORM_NODES][STORM_NODES][10];
    memset(count, 0, sizeof count);
    for (uint32_t i = 0; i < STORM_MESSAGES; i++) {
        m[i].source = check_rng_below(&rng, STORM_NODES);
        m[i].dest = (m[i].source + 1u + check_rng_below(&rng, STORM_NODES - 1)) % STORM_NODES;
        m[i].tag = check_rng_below(&rng, 10);
        m[i].number = count[m[i].source][m[i].dest][m[i].tag]++;
        m[i].length = storm_length(&rng);
        m[i].bytes = malloc(m[i].length + 1u);
        fill(m[i].bytes, m[i].length, i);
        if (m[i].length >= 8) {
            memcpy(m[i].bytes, &i, sizeof i); /* which message it is */
        }
        m[i].posted = false;
    }
    /* receives: for tag 9, ANY_SOURCE; otherwise (source, tag) */
    struct storm_receive {
        uint32_t node;
        uint32_t handle;
        uint8_t *buffer;
        uint32_t expected; /* message index it must get (specific receives) */
    };
    static struct storm_receive rx[STORM_MESSAGES];
    struct harness_requests sends;
    harness_requests_clear(&sends);
    uint32_t next_send = 0;
    uint32_t next_recv = 0;
    uint32_t posted_for[STORM_NODES][STORM_NODES][10];
    memset(posted_for, 0, sizeof posted_for);
    while (next_send < STORM_MESSAGES || next_recv < STORM_MESSAGES) {
        uint32_t what = check_rng_below(&rng, 3);
        if (what == 0 && next_send < STORM_MESSAGES) {
            struct storm_message *x = &m[next_send++];
            uint32_t r;
            CHECK_EQ(isend(&h, x->source, x->dest, (int32_t)x->tag, x->bytes, x->length, &r),
                     COMM_ERR_OK);
            harness_requests_add(&sends, x->source, r);
        } else if (what == 1 && next_recv < STORM_MESSAGES) {
            /* receives are posted in message order per destination */
            struct storm_message *x = &m[next_recv];
            struct storm_receive *y = &rx[next_recv];
            next_recv++;
            y->node = x->dest;
            y->buffer = malloc(STORM_MAX);
            y->expected = (uint32_t)(x - m);
            uint32_t source = x->tag == 9 ? COMM_ANY_SOURCE : x->source;
            CHECK_EQ(irecv(&h, x->dest, source, (int32_t)x->tag, y->buffer, STORM_MAX, &y->handle),
                     COMM_ERR_OK);
        } else {
            harness_run_for(&h, check_rng_below(&rng, 3000000u));
        }
    }
    CHECK(harness_requests_wait(&h, &sends, LIMIT_NS));
    for (uint32_t i = 0; i < sends.count; i++) {
        CHECK_EQ(sends.status[i].error, COMM_ERR_OK);
    }
    struct harness_requests recvs;
    harness_requests_clear(&recvs);
    for (uint32_t i = 0; i < STORM_MESSAGES; i++) {
        harness_requests_add(&recvs, rx[i].node, rx[i].handle);
    }
    CHECK(harness_requests_wait(&h, &recvs, LIMIT_NS));
    uint32_t delivered[STORM_MESSAGES];
    memset(delivered, 0, sizeof delivered);
    uint32_t any_next[STORM_NODES][STORM_NODES];
    memset(any_next, 0, sizeof any_next);
    for (uint32_t i = 0; i < STORM_MESSAGES; i++) {
        const struct comm_status *st = &recvs.status[i];
        CHECK_EQ(st->error, COMM_ERR_OK);
        const struct storm_message *want = &m[rx[i].expected];
        CHECK_EQ(st->tag, want->tag);
        if (want->tag != 9) {
            /* (source, tag) receives get exactly the message of their rank */
            CHECKF(st->source == want->source && st->count == want->length &&
                       memcmp(rx[i].buffer, want->bytes, want->length) == 0,
                   "seed %llu: receive %u did not get message %u", (unsigned long long)seed, i,
                   rx[i].expected);
            delivered[rx[i].expected]++;
            continue;
        }
        /* ANY_SOURCE: find which message it was, check order per sender */
        uint32_t found = STORM_MESSAGES;
        for (uint32_t j = 0; j < STORM_MESSAGES; j++) {
            if (m[j].tag == 9 && m[j].dest == rx[i].node && m[j].source == st->source &&
                m[j].number == any_next[rx[i].node][st->source]) {
                found = j;
                break;
            }
        }
        CHECKF(found < STORM_MESSAGES && st->count == m[found].length &&
                   memcmp(rx[i].buffer, m[found].bytes, m[found].length) == 0,
               "seed %llu: any-source receive %u out of order or wrong", (unsigned long long)seed,
               i);
        if (found < STORM_MESSAGES) {
            delivered[found]++;
            any_next[rx[i].node][st->source]++;
        }
        if (check_failures > 20) {
            break;
        }
    }
    for (uint32_t i = 0; i < STORM_MESSAGES; i++) {
        CHECKF(delivered[i] == 1, "seed %llu: message %u delivered %u times",
               (unsigned long long)seed, i, delivered[i]);
        free(m[i].bytes);
        free(rx[i].buffer);
        if (check_failures > 20) {
            break;
        }
    }
    uint64_t received = 0;
    for (uint32_t n = 0; n < STORM_NODES; n++) {
        received += counters(&h, n)->messages_received;
    }
    CHECK_EQ(received, STORM_MESSAGES);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

int main(void)
{
    test_flow_control(0, 1);
    test_flow_control(10, 2);
    test_grant();
    test_overtaking(0, 6);
    test_overtaking(15, 7);
    test_collective_behind_unmatched();
    test_records_exhausted();
    test_heavy_loss(3);
    test_heavy_loss(4);
    test_recycling(0, 61);
    test_recycling(10, 62);
    test_suspicion();
    /* CONT mode, failure_ack and the hold of newer-view frames are the
     * failure semantics' (comm.reliability_noft: without them). */
    if (CONFIG_COMM_FT) {
        test_member_left();
        test_view_resends_backed_off();
        test_view_ahead_resends();
        test_hung_then_resumed();
        test_ahead_epoch();
        test_hold_checks();
        test_view_layout();
    }
    test_hold_bound();
    test_peer_restart();
    test_garbage();
    for (uint64_t seed = 1; seed <= 6; seed++) {
        test_storm(seed, seed % 3 == 0 ? 0u : 12u);
    }
    return check_report("comm.reliability");
}
