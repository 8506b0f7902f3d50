/*
 * The failure semantics of issue 14 on the test network: communicator
 * modes (ABORT's event, NOP versus CONT for point-to-point on a DETECTED
 * communicator, ANY_SOURCE until failure_ack), the detail call and failure
 * acknowledgment.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/internal.h"
#include "lib/le.h"
#include "membership/codec.h"
#include "tests/check.h"
#include "tests/comm/harness.h"

#define LIMIT_NS 60000000000ull
#define MAX_N 64
#define CAMPAIGN_RUNS 300u

static enum comm_error isend(struct harness *h, uint32_t node, uint32_t comm, uint32_t dest,
                             const void *b, uint32_t n, uint32_t *r)
{
    enum comm_error e =
        comm_isend(harness_node(h, node), comm, dest, 0, b, n, h->now_ns, harness_begin(h), r);
    harness_end(h, node);
    return e;
}

static enum comm_error irecv(struct harness *h, uint32_t node, uint32_t comm, uint32_t source,
                             void *b, uint32_t n, uint32_t *r)
{
    enum comm_error e = comm_irecv(harness_node(h, node), comm, source, 0, b, n, h->now_ns,
                                   harness_begin(h), r);
    harness_end(h, node);
    return e;
}

/* Installs view epoch with the nodes of gone[] (count of them) out, at
 * every node still in. */
static void remove_nodes(struct harness *h, uint64_t epoch, const uint32_t *gone, uint32_t count,
                         bool *live)
{
    for (uint32_t i = 0; i < count; i++) {
        live[gone[i]] = false;
    }
    harness_install(h, epoch, live, live);
}

static void set_modes(struct harness *h, uint32_t comm, enum comm_mode mode,
                      enum comm_msg_mode msg)
{
    for (uint32_t i = 0; i < h->n; i++) {
        CHECK_EQ(comm_set_mode(harness_node(h, i), comm, mode, msg), COMM_ERR_OK);
    }
}

/* Strictness is a config default (no call sets it per communicator). */
static void set_strict(struct harness *h, bool strict)
{
    for (uint32_t i = 0; i < h->n; i++) {
        harness_node(h, i)->comms[0].strict = strict; /* WORLD is slot 0 */
    }
}

/* ---- modes ---- */

/* What point-to-point does on a DETECTED communicator, per message mode. */
struct p2p_case {
    enum comm_msg_mode msg;
    enum comm_error live_send;   /* 0 -> 1, both live */
    enum comm_error dead_send;   /* 0 -> 3, out of the view */
    enum comm_error any_before;  /* ANY_SOURCE before failure_ack */
    enum comm_error any_after;   /* ANY_SOURCE after it */
};

static const struct p2p_case p2p_cases[] = {
    {COMM_MSG_NOP, COMM_ERR_PROC_FAILED, COMM_ERR_PROC_FAILED, COMM_ERR_PROC_FAILED,
     COMM_ERR_PROC_FAILED},
    {COMM_MSG_CONT, COMM_ERR_OK, COMM_ERR_PROC_FAILED, COMM_ERR_PROC_FAILED, COMM_ERR_OK},
};

static void test_p2p_modes(const struct p2p_case *t)
{
    enum { N = 4 };
    struct harness h;
    harness_init(&h, N, N, 1000u + t->msg);
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, t->msg);
    harness_install(&h, 1, NULL, NULL);
    uint8_t out[4] = {9, 8, 7, 6};
    uint8_t in[4] = {0};
    uint32_t pending_any;
    CHECK_EQ(irecv(&h, 2, COMM_WORLD, COMM_ANY_SOURCE, in, 4, &pending_any), COMM_ERR_OK);
    bool live[N] = {true, true, true, true};
    uint32_t gone = 3;
    remove_nodes(&h, 2, &gone, 1, live);
    /* the pending ANY_SOURCE receive failed with the failure (ULFM) */
    struct comm_status s;
    CHECK(comm_test(harness_node(&h, 2), pending_any, &s));
    CHECK_EQ(s.error, COMM_ERR_PROC_FAILED);
    uint32_t r;
    uint32_t rr;
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 3, out, 4, &r), t->dead_send);
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, COMM_ANY_SOURCE, in, 4, &rr), t->any_before);
    CHECK_EQ(comm_failure_ack(harness_node(&h, 1), COMM_WORLD), COMM_ERR_OK);
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, COMM_ANY_SOURCE, in, 4, &rr), t->any_after);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, out, 4, &r), t->live_send);
    if (t->live_send == COMM_ERR_OK) {
        /* live pairs exchange during recovery under CONT */
        struct harness_requests reqs;
        harness_requests_clear(&reqs);
        harness_requests_add(&reqs, 0, r);
        harness_requests_add(&reqs, 1, rr);
        CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        CHECK_EQ(reqs.status[1].error, COMM_ERR_OK);
        CHECK_EQ(reqs.status[1].source, 0);
        CHECK(memcmp(in, out, 4) == 0);
    }
    CHECK_EQ(h.aborts[0], 0); /* SHRINK mode: no abort */
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Issue 16: a member that left (comm_member_left before the view that
 * removes it) is an orderly exit (comm/DESIGN.md, "A member that left"):
 * even under NOP the live pairs go on and a receive from any source is not
 * failed; a send to the leaver fails, and so do collectives until the
 * rebuild (they need every member).  A failure after it is a failure again.
 */
static void test_leave_orderly(void)
{
    enum { N = 4 };
    struct harness h;
    harness_init(&h, N, N, 1020);
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    uint8_t out[4] = {9, 8, 7, 6};
    uint8_t in[4] = {0};
    uint8_t any_in[4] = {0};
    uint32_t pending_any;
    CHECK_EQ(irecv(&h, 2, COMM_WORLD, COMM_ANY_SOURCE, any_in, 4, &pending_any), COMM_ERR_OK);
    for (uint32_t i = 0; i < N - 1; i++) {
        CHECK(comm_member_left(harness_node(&h, i), 3));
    }
    bool live[N] = {true, true, true, true};
    uint32_t gone = 3;
    remove_nodes(&h, 2, &gone, 1, live);
    struct comm_status s;
    CHECK(!comm_test(harness_node(&h, 2), pending_any, &s)); /* still waiting */
    CHECK_EQ(comm_state_of(harness_node(&h, 0), COMM_WORLD), COMM_STATE_DETECTED);
    uint32_t r;
    uint32_t rr;
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 3, out, 4, &r), COMM_ERR_PROC_FAILED);
    /* live pairs: 0 -> 1, and 1 -> 2 into the receive from any source */
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, 0, in, 4, &rr), COMM_ERR_OK);
    harness_requests_add(&reqs, 1, rr);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, out, 4, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 0, r);
    CHECK_EQ(isend(&h, 1, COMM_WORLD, 2, out, 4, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 1, r);
    harness_requests_add(&reqs, 2, pending_any);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    CHECK(memcmp(in, out, 4) == 0 && memcmp(any_in, out, 4) == 0);
    /* a collective needs the leaver: it fails on every live rank */
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N - 1; i++) {
        enum comm_error e = comm_ibarrier(harness_node(&h, i), COMM_WORLD, h.now_ns,
                                          harness_begin(&h), &r);
        harness_end(&h, i);
        CHECK(e == COMM_ERR_OK || e == COMM_ERR_PROC_FAILED);
        if (e == COMM_ERR_OK) {
            harness_requests_add(&reqs, i, r); /* strict: fails at completion */
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_PROC_FAILED);
    }
    CHECK_EQ(h.aborts[0], 0);
    /* A leave of 2 that no view removing it follows (2 is still in the next
     * one) is forgotten: when 2 fails later, that is a failure: NOP fails
     * the live pairs again. */
    for (uint32_t i = 0; i < N - 1; i++) {
        CHECK(comm_member_left(harness_node(&h, i), 2));
    }
    harness_install(&h, 3, live, live);
    gone = 2;
    remove_nodes(&h, 4, &gone, 1, live);
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, out, 4, &r), COMM_ERR_PROC_FAILED);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ABORT (the default): the view change that makes a communicator DETECTED
 * tells the node glue once per communicator, at every member. */
static void test_abort_event(void)
{
    enum { N = 5 };
    struct harness h;
    harness_init(&h, N, N, 1010);
    harness_install(&h, 1, NULL, NULL);
    bool live[N] = {true, true, true, true, true};
    uint32_t gone = 4;
    remove_nodes(&h, 2, &gone, 1, live);
    for (uint32_t i = 0; i < N - 1; i++) {
        CHECK_EQ(h.aborts[i], 1);
        CHECK_EQ(comm_state_of(harness_node(&h, i), COMM_WORLD), COMM_STATE_DETECTED);
    }
    gone = 3;
    remove_nodes(&h, 3, &gone, 1, live);
    for (uint32_t i = 0; i < N - 2; i++) {
        CHECK_EQ(h.aborts[i], 1); /* once per communicator */
        CHECK_EQ(h.detected[i], 2);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* The detail call and failure acknowledgment. */
static void test_failed_ranks_and_ack(void)
{
    enum { N = 6 };
    struct harness h;
    harness_init(&h, N, N, 1020);
    set_modes(&h, COMM_WORLD, COMM_MODE_BLANK, COMM_MSG_CONT);
    harness_install(&h, 1, NULL, NULL);
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
    }
    struct comm *c = harness_node(&h, 0);
    uint32_t ranks[8];
    uint32_t count = 99;
    uint64_t epoch = 99;
    CHECK_EQ(comm_failed_ranks(c, COMM_WORLD, ranks, 8, &count, &epoch), COMM_ERR_OK);
    CHECK_EQ(count, 0);
    uint32_t gone = 3;
    remove_nodes(&h, 2, &gone, 1, live);
    gone = 1;
    remove_nodes(&h, 5, &gone, 1, live);
    CHECK_EQ(comm_failed_ranks(c, COMM_WORLD, ranks, 8, &count, &epoch), COMM_ERR_OK);
    CHECK_EQ(count, 2);
    CHECK_EQ(ranks[0], 1);
    CHECK_EQ(ranks[1], 3);
    CHECK_EQ(epoch, 5);
    CHECK_EQ(comm_failed_ranks(c, COMM_WORLD, ranks, 1, &count, &epoch), COMM_ERR_OK);
    CHECK_EQ(count, 2); /* all counted, one listed */
    CHECK_EQ(comm_failure_get_acked(c, COMM_WORLD, ranks, 8, &count), COMM_ERR_OK);
    CHECK_EQ(count, 0);
    CHECK_EQ(comm_failure_ack(c, COMM_WORLD), COMM_ERR_OK);
    CHECK_EQ(comm_failure_get_acked(c, COMM_WORLD, ranks, 8, &count), COMM_ERR_OK);
    CHECK_EQ(count, 2);
    CHECK_EQ(ranks[0], 1);
    CHECK_EQ(ranks[1], 3);
    gone = 4;
    remove_nodes(&h, 6, &gone, 1, live);
    CHECK_EQ(comm_failure_get_acked(c, COMM_WORLD, ranks, 8, &count), COMM_ERR_OK);
    CHECK_EQ(count, 2); /* the new failure is not acknowledged yet */
    CHECK_EQ(comm_failed_ranks(c, COMM_WORLD, ranks, 8, &count, &epoch), COMM_ERR_OK);
    CHECK_EQ(count, 3);
    CHECK_EQ(epoch, 6);
    /* bad arguments */
    CHECK_EQ(comm_failed_ranks(c, 0x7777u, ranks, 8, &count, &epoch), COMM_ERR_COMM);
    CHECK_EQ(comm_failed_ranks(c, COMM_WORLD, NULL, 8, &count, &epoch), COMM_ERR_ARG);
    CHECK_EQ(comm_set_mode(c, COMM_WORLD, (enum comm_mode)9, COMM_MSG_NOP), COMM_ERR_ARG);
    CHECK_EQ(comm_set_mode(c, COMM_WORLD, COMM_MODE_BLANK, (enum comm_msg_mode)2), COMM_ERR_ARG);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ---- rebuild ---- */

/* A communicator's shape as a node sees it: epoch, size and a digest of
 * its rank map (FNV-1a over the node ids). */
struct shape {
    uint64_t epoch;
    uint32_t size;
    uint64_t digest;
};

static struct shape shape_of(struct comm *c, uint32_t comm)
{
    struct shape s = {comm_epoch_of(c, comm), comm_size(c, comm), 1469598103934665603ull};
    for (uint32_t r = 0; r < s.size; r++) {
        s.digest = (s.digest ^ comm_node_of(c, comm, r)) * 1099511628211ull;
    }
    return s;
}

/* Every node in `in` holds comm[node]: one shape, no node twice, each
 * member's rank maps back to itself. */
static void check_one_map(struct harness *h, const uint32_t *comm, const bool *in)
{
    bool have = false;
    struct shape first = {0, 0, 0};
    for (uint32_t i = 0; i < h->n; i++) {
        if (!in[i]) {
            continue;
        }
        struct comm *c = harness_node(h, i);
        struct shape s = shape_of(c, comm[i]);
        if (!have) {
            first = s;
            have = true;
        }
        CHECK_EQ(s.epoch, first.epoch);
        CHECK_EQ(s.size, first.size);
        CHECK_EQ(s.digest, first.digest);
        uint32_t rank = comm_rank(c, comm[i]);
        CHECK(rank < s.size);
        CHECK_EQ(comm_node_of(c, comm[i], rank), i);
        for (uint32_t r = 0; r < s.size; r++) {
            for (uint32_t q = r + 1u; q < s.size; q++) {
                uint32_t a = comm_node_of(c, comm[i], r);
                if (a != COMM_NODE_NONE && a == comm_node_of(c, comm[i], q)) {
                    CHECK(false); /* a node twice */
                }
            }
        }
    }
}

/* Starts the rebuild (or shrink) of comm at every live world node and
 * adoption at every live spare; waits. */
static bool rebuild_all(struct harness *h, uint32_t world, const bool *live, bool shrink,
                        uint32_t comm, uint32_t *new_comm, struct harness_requests *reqs)
{
    harness_requests_clear(reqs);
    for (uint32_t i = 0; i < h->n; i++) {
        if (!live[i]) {
            continue;
        }
        uint32_t r;
        enum comm_error e;
        struct comm *c = harness_node(h, i);
        if (i >= world) {
            e = comm_iadopt(c, h->now_ns, harness_begin(h), &new_comm[i], &r);
        } else if (shrink) {
            e = comm_ishrink(c, comm, h->now_ns, harness_begin(h), &new_comm[i], &r);
        } else {
            e = comm_irebuild(c, comm, h->now_ns, harness_begin(h), &new_comm[i], &r);
        }
        harness_end(h, i);
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(reqs, i, r);
    }
    return true;
}

struct rebuild_case {
    enum comm_mode mode;
    uint32_t size;       /* of the new communicator */
    uint32_t rank_of_3;  /* node 3's rank in it */
    uint32_t node_of_2;  /* who holds rank 2 (COMM_NODE_NONE: a gap) */
};

/* 7 world nodes and a spare (7); node 2 fails. */
static const struct rebuild_case rebuild_cases[] = {
    {COMM_MODE_SHRINK, 6, 2, 3},
    {COMM_MODE_BLANK, 7, 3, COMM_NODE_NONE},
    {COMM_MODE_REBUILD, 7, 3, 7},
};

static void test_rebuild_mode(const struct rebuild_case *t)
{
    enum { N = 8, WORLD = 7 };
    struct harness h;
    harness_init(&h, N, WORLD, 1100u + t->mode);
    h.loss_percent = 5;
    h.delay_max_ns = 300000u;
    set_modes(&h, COMM_WORLD, t->mode, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
    }
    uint32_t gone = 2;
    remove_nodes(&h, 2, &gone, 1, live);
    bool adopting = t->mode == COMM_MODE_REBUILD;
    live[WORLD] = adopting; /* the spare takes part only when it is adopted */
    uint32_t comm[N];
    struct harness_requests reqs;
    rebuild_all(&h, WORLD, live, false, COMM_WORLD, comm, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        CHECK_EQ(reqs.status[i].comm, comm[reqs.node[i]]);
    }
    check_one_map(&h, comm, live);
    struct comm *c3 = harness_node(&h, 3);
    CHECK_EQ(comm_size(c3, comm[3]), t->size);
    CHECK_EQ(comm_rank(c3, comm[3]), t->rank_of_3);
    CHECK_EQ(comm_node_of(c3, comm[3], 2), t->node_of_2);
    CHECK_EQ(comm_state_of(c3, comm[3]), COMM_STATE_RECOVERED);
    uint8_t b[4] = {1, 2, 3, 4};
    uint32_t r;
    if (t->node_of_2 == COMM_NODE_NONE) {
        CHECK_EQ(isend(&h, 3, comm[3], 2, b, 4, &r), COMM_ERR_INVALID_RANK);
        CHECK_EQ(irecv(&h, 3, comm[3], 2, b, 4, &r), COMM_ERR_INVALID_RANK);
    } else {
        /* the new communicator works: rank 2 talks to rank 0 */
        uint8_t in[4] = {0};
        uint32_t holder = t->node_of_2;
        harness_requests_clear(&reqs);
        CHECK_EQ(isend(&h, holder, comm[holder], 0, b, 4, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, holder, r);
        CHECK_EQ(irecv(&h, 0, comm[0], 2, in, 4, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, 0, r);
        CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        CHECK(memcmp(in, b, 4) == 0);
    }
    /* collectives run over its members (a BLANK gap left out): an
     * allreduce of node + 1, an allgather of the node ids in rank order */
    static int64_t one[N];
    static int64_t sum[N];
    static int64_t ids[N][N];
    int64_t expected = 0;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        if (!live[i]) {
            continue;
        }
        one[i] = (int64_t)i + 1;
        expected += one[i];
        struct comm *c = harness_node(&h, i);
        enum comm_error e;
        do { /* BUSY while the rebuild's background rounds drain (transient) */
            e = comm_iallreduce(c, comm[i], &one[i], &sum[i], 1, COMM_INT64, COMM_SUM, h.now_ns,
                                harness_begin(&h), &r);
            harness_end(&h, i);
        } while (e == COMM_ERR_BUSY && harness_step(&h));
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(&reqs, i, r);
        do {
            e = comm_iallgather(c, comm[i], &one[i], 8, ids[i], h.now_ns, harness_begin(&h), &r);
            harness_end(&h, i);
        } while (e == COMM_ERR_BUSY && harness_step(&h));
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(&reqs, i, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t k = 0; k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
    }
    for (uint32_t i = 0; i < N; i++) {
        if (!live[i]) {
            continue;
        }
        CHECK_EQ(sum[i], expected);
        uint32_t at = 0;
        for (uint32_t rank = 0; rank < t->size; rank++) {
            uint32_t node = comm_node_of(c3, comm[3], rank);
            if (node != COMM_NODE_NONE) {
                CHECK_EQ(ids[i][at], (int64_t)node + 1);
                at++;
            }
        }
    }
    if (t->node_of_2 == COMM_NODE_NONE) {
        CHECK_EQ(comm_ibcast(c3, comm[3], 2, b, 4, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_INVALID_RANK); /* a gap is no root */
        harness_end(&h, 3);
    }
    CHECK_EQ(comm_state_of(c3, comm[3]), COMM_STATE_OK); /* RECOVERED -> OK */
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

static uint32_t opens_sent(struct harness *h, uint32_t *ahead)
{
    uint32_t total = 0;
    *ahead = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        total += comm_get_counters(harness_node(h, i))->opens_sent;
        *ahead += comm_get_counters(harness_node(h, i))->opens_ahead;
    }
    return total;
}

/* Starts an allreduce of node + 1 on comm[node] at every live node. */
static void allreduce_all(struct harness *h, const uint32_t *comm, const bool *live,
                          int64_t *one, int64_t *sum, struct harness_requests *reqs)
{
    harness_requests_clear(reqs);
    for (uint32_t i = 0; i < h->n; i++) {
        if (!live[i]) {
            continue;
        }
        one[i] = (int64_t)i + 1;
        uint32_t r;
        enum comm_error e;
        do { /* BUSY while a rebuild's background rounds drain (transient) */
            e = comm_iallreduce(harness_node(h, i), comm[i], &one[i], &sum[i], 1, COMM_INT64,
                                COMM_SUM, h->now_ns, harness_begin(h), &r);
            harness_end(h, i);
        } while (e == COMM_ERR_BUSY && harness_step(h));
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(reqs, i, r);
    }
}

/* An allreduce of node + 1 on comm[node] at every live node: OK, and the
 * live nodes' sum, everywhere (a rebuilt communicator works). */
static void check_live_sum(struct harness *h, const uint32_t *comm, const bool *live,
                           int64_t *one, int64_t *sum)
{
    struct harness_requests reqs;
    allreduce_all(h, comm, live, one, sum, &reqs);
    CHECK(harness_requests_wait(h, &reqs, LIMIT_NS));
    int64_t expected = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        expected += live[i] ? (int64_t)i + 1 : 0;
    }
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        CHECK_EQ(sum[reqs.node[i]], expected);
    }
}

/*
 * A view that removes a member moves the members' tree nearly everywhere
 * (the ranks above it move down one): every node opens its sessions to its
 * new parent and children as it installs the view, so the recovery's
 * rounds and the first collective after it send their DATA on open
 * sessions, with no OPEN/ACCEPT round trip before each level's.  Counted:
 * no OPEN leaves after the view's install (the old code opened each new
 * edge at its first send: 32 here), and the shrink started at the install
 * (one reduce and one broadcast over a tree of depth 3, a fixed 10 us a
 * frame) pays one OPEN round trip in all, not one per level.
 */
static void test_view_opens_tree(enum comm_mode mode)
{
    enum { N = 40 };
    static int64_t one[N];
    static int64_t sum[N];
    struct harness h;
    harness_init(&h, N, N, 1600u + mode);
    set_modes(&h, COMM_WORLD, mode, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    bool live[N];
    uint32_t comm[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
        comm[i] = COMM_WORLD;
    }
    struct harness_requests reqs;
    allreduce_all(&h, comm, live, one, sum, &reqs); /* sessions along the whole tree */
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    uint32_t ahead;
    uint32_t before = opens_sent(&h, &ahead);
    CHECK_EQ(ahead, 0u); /* nothing fails, nothing opens ahead */
    uint32_t gone = 3;
    remove_nodes(&h, 2, &gone, 1, live);
    uint32_t at_install = opens_sent(&h, &ahead);
    CHECK(at_install > before);
    CHECK_EQ(ahead, at_install - before);
    uint64_t start_ns = h.now_ns;
    rebuild_all(&h, N, live, mode == COMM_MODE_SHRINK, COMM_WORLD, comm, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    /* From the install: the OPEN round trip (20 us, once, at the same
     * time everywhere), 2 x 3 levels of 10 us and the last acks' 10 us:
     * 90 us (the old code, an OPEN round trip at each new edge: 190) */
    uint64_t took = h.now_ns - start_ns;
    CHECK(took <= 100000u);
    check_one_map(&h, comm, live);
    check_live_sum(&h, comm, live, one, sum); /* the new communicator's first */
    uint32_t after = opens_sent(&h, &ahead);
    printf("view opens tree (mode %u): %u OPENs at the install, %u after; shrink took %llu ns\n",
           mode, at_install - before, after - at_install, (unsigned long long)took);
    CHECK_EQ(after, at_install);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Under REBUILD the root of the rounds after a view tells each spare it
 * pairs with a gap; its session to a spare is new.  The root opens it as
 * it installs the view, with the tree's (the same pairing the decision will
 * make), so the adoption needs no OPEN round trip: node 0 sends no OPEN
 * after the install (the old code opened it at the adoption message).
 */
static void test_view_opens_spare(void)
{
    enum { N = 16, WORLD = 15, GONE = 3 };
    static int64_t one[N];
    static int64_t sum[N];
    struct harness h;
    harness_init(&h, N, WORLD, 1610u);
    set_modes(&h, COMM_WORLD, COMM_MODE_REBUILD, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    bool live[N], world[N];
    uint32_t comm[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
        world[i] = i < WORLD;
        comm[i] = COMM_WORLD;
    }
    struct harness_requests reqs;
    allreduce_all(&h, comm, world, one, sum, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    const struct comm_counters *root = comm_get_counters(harness_node(&h, 0));
    uint32_t ahead_before = root->opens_ahead;
    uint32_t gone = GONE;
    remove_nodes(&h, 2, &gone, 1, live);
    uint32_t at_install = root->opens_sent;
    CHECK(root->opens_ahead > ahead_before);
    rebuild_all(&h, WORLD, live, false, COMM_WORLD, comm, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    CHECK_EQ(root->opens_sent, at_install); /* the spare's session was open */
    CHECK_EQ(comm_node_of(harness_node(&h, 0), comm[0], GONE), WORLD); /* the spare adopted */
    check_one_map(&h, comm, live);
    check_live_sum(&h, comm, live, one, sum);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A node that loses its view while its round drains for a restart ends
 * the round with NO_VIEW (it does not start again without a view). */
static void test_round_view_lost(void)
{
    enum { N = 8 };
    struct harness h;
    harness_init(&h, N, N, 1150);
    h.delay_min_ns = 200000u;
    h.delay_max_ns = 400000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    harness_install(&h, 1, NULL, NULL);
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
    }
    uint32_t gone = 7;
    remove_nodes(&h, 2, &gone, 1, live);
    uint32_t comm[N];
    struct harness_requests reqs;
    rebuild_all(&h, N, live, false, COMM_WORLD, comm, &reqs);
    harness_run_for(&h, 100000u); /* frames in flight, none delivered */
    gone = 6;
    remove_nodes(&h, 3, &gone, 1, live);
    /* a member whose round drains (an offer still unacknowledged) */
    uint32_t node = N;
    for (uint32_t i = 0; i < N && node == N; i++) {
        const struct comm_collective *cc = &harness_node(&h, i)->colls[0];
        if (live[i] && cc->state == 2 && cc->restart) {
            node = i;
        }
    }
    CHECK(node < N);
    if (node < N) {
        comm_drop_view(harness_node(&h, node), 555, h.now_ns, harness_begin(&h));
        harness_end(&h, node);
        struct comm_status st;
        CHECK(comm_test(harness_node(&h, node), reqs.handle[node], &st));
        CHECK_EQ(st.error, COMM_ERR_NO_VIEW);
        CHECK_EQ(harness_node(&h, node)->colls[0].state, 0); /* free again */
    }
    harness_free(&h);
}

/* Members that finished a rebuild serve its decision in the background
 * only until it is known everywhere: after a failure hits the first
 * collective on the new communicator part-way (some members finished it,
 * which drops their record, others did not), the background rounds the
 * others start cannot complete, and they end when the next round on the
 * new communicator (its own rebuild) completes.  No slot stays taken. */
static void test_background_ends(uint64_t hang_after_ns)
{
    enum { N = 12 };
    struct harness h;
    harness_init(&h, N, N, 1160u + hang_after_ns);
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    set_strict(&h, false); /* (a strict one's outcome agree would end them too) */
    harness_install(&h, 1, NULL, NULL);
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
    }
    uint32_t gone = 11;
    remove_nodes(&h, 2, &gone, 1, live);
    uint32_t y[N];
    struct harness_requests reqs;
    rebuild_all(&h, N, live, false, COMM_WORLD, y, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    /* the first allreduce on y, hit by a failure part-way */
    static int64_t one[N];
    static int64_t sum[N];
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        if (live[i]) {
            uint32_t r;
            one[i] = 1;
            CHECK_EQ(comm_iallreduce(harness_node(&h, i), y[i], &one[i], &sum[i], 1, COMM_INT64,
                                     COMM_SUM, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, i);
            if (i != 4) {
                harness_requests_add(&reqs, i, r);
            }
        }
    }
    harness_run_for(&h, hang_after_ns);
    harness_hang(&h, 4);
    harness_run_for(&h, 500000u);
    gone = 4;
    remove_nodes(&h, 3, &gone, 1, live);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    /* whatever it gave (not strict: OK at some, PROC_FAILED at others), rebuild y */
    uint32_t z[N];
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        if (live[i]) {
            uint32_t r;
            enum comm_error e;
            /* BUSY while the failed allreduce drains its slot: retry, as an
             * application does after completions */
            for (uint32_t tries = 0; tries < 100; tries++) {
                e = comm_irebuild(harness_node(&h, i), y[i], h.now_ns, harness_begin(&h), &z[i],
                                  &r);
                harness_end(&h, i);
                if (e != COMM_ERR_BUSY) {
                    break;
                }
                harness_run_for(&h, 1000000u);
            }
            CHECK_EQ(e, COMM_ERR_OK);
            harness_requests_add(&reqs, i, r);
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    harness_run_for(&h, 100000000u);
    for (uint32_t i = 0; i < N; i++) {
        for (uint32_t k = 0; live[i] && k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
            CHECK_EQ(harness_node(&h, i)->colls[k].state, 0); /* no round left behind */
        }
    }
    CHECK(h.errors == 0);
    harness_free(&h);
}

/* ---- revoke ---- */

static bool all_revoked(struct harness *h, void *arg)
{
    const bool *live = arg;
    for (uint32_t i = 0; i < h->n; i++) {
        if (live[i] && h->revokes[i] == 0) {
            return false;
        }
    }
    return true;
}

/*
 * A rank blocked on a receive from a live peer is woken (REVOKED) when
 * another rank revokes; the revoke floods to every member once, over a
 * lossy network and through a member that hangs and leaves the view on
 * the way; afterwards every operation fails REVOKED but recovery (agree,
 * shrink) works on the revoked communicator.
 */
static void test_revoke(uint32_t n, uint32_t hang, uint64_t seed)
{
    struct harness h;
    harness_init(&h, n, n, seed);
    h.loss_percent = 10;
    h.delay_max_ns = 300000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    harness_install(&h, 1, NULL, NULL);
    bool live[MAX_N];
    for (uint32_t i = 0; i < n; i++) {
        live[i] = true;
    }
    uint8_t b[4];
    uint32_t blocked;
    uint32_t waiter = n - 1u;
    CHECK_EQ(irecv(&h, waiter, COMM_WORLD, 3, b, 4, &blocked), COMM_ERR_OK); /* 3 stays */
    harness_run_for(&h, 5000000u);
    CHECK(!comm_test(harness_node(&h, waiter), blocked, NULL));
    if (hang < n) {
        harness_hang(&h, hang);
    }
    CHECK_EQ(comm_revoke(harness_node(&h, 2), COMM_WORLD, h.now_ns, harness_begin(&h)),
             COMM_ERR_OK);
    harness_end(&h, 2);
    if (hang < n) {
        harness_run_for(&h, 3000000u);
        remove_nodes(&h, 2, &hang, 1, live);
    }
    CHECK(harness_run(&h, all_revoked, live, LIMIT_NS));
    struct comm_status st;
    CHECK(comm_test(harness_node(&h, waiter), blocked, &st));
    CHECK_EQ(st.error, COMM_ERR_REVOKED);
    harness_run_for(&h, 200000000u); /* retransmissions settle */
    uint32_t r;
    for (uint32_t i = 0; i < n; i++) {
        if (!live[i]) {
            continue;
        }
        CHECK_EQ(h.revokes[i], 1); /* once, however often it was told */
        struct comm *c = harness_node(&h, i);
        CHECK_EQ(isend(&h, i, COMM_WORLD, 0, b, 4, &r), COMM_ERR_REVOKED);
        CHECK_EQ(irecv(&h, i, COMM_WORLD, 0, b, 4, &r), COMM_ERR_REVOKED);
        CHECK_EQ(comm_ibarrier(c, COMM_WORLD, h.now_ns, harness_begin(&h), &r), COMM_ERR_REVOKED);
        harness_end(&h, i);
        CHECK_EQ(comm_get_counters(c)->revokes_refused, 0);
        CHECK_EQ(comm_next_deadline(c) == COMM_NEVER || comm_next_deadline(c) > h.now_ns, true);
    }
    /* recovery works on it: agree, then shrink */
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t flag[MAX_N];
    for (uint32_t i = 0; i < n; i++) {
        if (live[i]) {
            flag[i] = 1;
            CHECK_EQ(comm_iagree(harness_node(&h, i), COMM_WORLD, &flag[i], h.now_ns,
                                 harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, i);
            harness_requests_add(&reqs, i, r);
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    uint32_t comm[MAX_N];
    rebuild_all(&h, n, live, true, COMM_WORLD, comm, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    check_one_map(&h, comm, live);
    CHECK_EQ(comm_size(harness_node(&h, 2), comm[2]), hang < n ? n - 1u : n);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* REVOKE frames that are not a member's news are counted and dropped:
 * a sender or revoker outside the communicator, a revoker rank that is not
 * that node, an unknown context; one from an older view is fenced. */
static void test_revoke_refused(void)
{
    enum { N = 6, WORLD = 4 };
    struct harness h;
    harness_init(&h, N, WORLD, 1300);
    harness_install(&h, 1, NULL, NULL);
    struct comm *c = harness_node(&h, 0);
    struct {
        uint32_t source;  /* the frame's sender */
        uint16_t context;
        uint32_t revoker_node;
        uint32_t revoker_rank;
        uint64_t epoch;
        bool refused;     /* counted in revokes_refused (else fenced) */
    } cases[] = {
        {4, 0, 4, 3, 1, true},  /* a spare is no member */
        {1, 0, 3, 2, 1, true},  /* rank 2 is not node 3 */
        {1, 0, 1, 9, 1, true},  /* no rank 9 */
        {1, 7, 1, 1, 1, true},  /* no such context */
        {1, 0, 1, 1, 0, false}, /* an older view: fenced */
    };
    uint32_t refused = 0;
    for (uint32_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct comm_frame f;
        memset(&f, 0, sizeof f);
        f.kind = COMM_KIND_REVOKE;
        f.sender_incarnation = 100u + cases[i].source;
        f.context = cases[i].context;
        f.source_rank = cases[i].revoker_node;
        f.seq = cases[i].revoker_rank;
        uint8_t payload[COMM_MAX_PAYLOAD];
        size_t length = comm_encode(&f, payload, sizeof payload);
        CHECK(length > 0);
        uint32_t stale = comm_get_counters(c)->drops_stale_epoch;
        comm_receive(c, cases[i].source, cases[i].epoch, payload, length, h.now_ns,
                     harness_begin(&h));
        harness_end(&h, 0);
        refused += cases[i].refused;
        CHECK_EQ(comm_get_counters(c)->revokes_refused, refused);
        CHECK_EQ(comm_get_counters(c)->drops_stale_epoch, stale + (cases[i].refused ? 0u : 1u));
        CHECK_EQ(h.revokes[0], 0);
    }
    uint8_t b[4] = {0};
    uint32_t r;
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 1, b, 4, &r), COMM_ERR_OK);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ---- strict collectives ---- */

enum { K_BARRIER, K_REDUCE, K_ALLREDUCE, K_GATHER, K_ALLGATHER, K_COUNT };

static int64_t coll_send[MAX_N][MAX_N];
static int64_t coll_recv[MAX_N][MAX_N];

static enum comm_error start_kind(struct harness *h, uint32_t node, uint32_t kind, uint32_t *r)
{
    struct comm *c = harness_node(h, node);
    struct comm_outbox *out = harness_begin(h);
    enum comm_error e;
    coll_send[node][0] = (int64_t)node + 1;
    switch (kind) {
    case K_BARRIER:
        e = comm_ibarrier(c, COMM_WORLD, h->now_ns, out, r);
        break;
    case K_REDUCE:
        e = comm_ireduce(c, COMM_WORLD, 0, coll_send[node], coll_recv[node], 1, COMM_INT64,
                         COMM_SUM, h->now_ns, out, r);
        break;
    case K_ALLREDUCE:
        e = comm_iallreduce(c, COMM_WORLD, coll_send[node], coll_recv[node], 1, COMM_INT64,
                            COMM_SUM, h->now_ns, out, r);
        break;
    case K_GATHER:
        e = comm_igather(c, COMM_WORLD, 0, coll_send[node], 8, coll_recv[node], h->now_ns, out, r);
        break;
    default:
        e = comm_iallgather(c, COMM_WORLD, coll_send[node], 8, coll_recv[node], h->now_ns, out, r);
        break;
    }
    harness_end(h, node);
    return e;
}

/* A WORLD allreduce started at every node but skip; reqs holds them. */
static void world_allreduce(struct harness *h, uint32_t skip, struct harness_requests *reqs)
{
    harness_requests_clear(reqs);
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t r;
        if (i != skip) {
            CHECK_EQ(start_kind(h, i, K_ALLREDUCE, &r), COMM_ERR_OK);
            harness_requests_add(reqs, i, r);
        }
    }
}

static uint64_t messages_sent(struct harness *h)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        total += comm_get_counters(harness_node(h, i))->messages_sent;
    }
    return total;
}

/* The cost of strictness when nothing fails: none for barrier and
 * allreduce (a result round runs only after a failure); one agree for
 * reduce, gather, allgather (a reduce and a broadcast: 2 (n - 1)). */
static void test_strict_cost(uint32_t kind)
{
    enum { N = 16 };
    uint64_t cost[2];
    for (uint32_t strict = 0; strict < 2; strict++) {
        struct harness h;
        harness_init(&h, N, N, 1400u + kind);
        set_strict(&h, strict != 0);
        harness_install(&h, 1, NULL, NULL);
        struct harness_requests reqs;
        harness_requests_clear(&reqs);
        for (uint32_t i = 0; i < N; i++) {
            uint32_t r;
            CHECK_EQ(start_kind(&h, i, kind, &r), COMM_ERR_OK);
            harness_requests_add(&reqs, i, r);
        }
        CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        for (uint32_t i = 0; i < N; i++) {
            CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        }
        cost[strict] = messages_sent(&h);
        CHECK_EQ(h.errors, 0);
        harness_free(&h);
    }
    static const uint64_t plain[K_COUNT] = {2u * (N - 1u), N - 1u, 2u * (N - 1u), N - 1u,
                                            2u * (N - 1u)};
    CHECK_EQ(cost[0], plain[kind]);
    bool free_of_cost = kind == K_BARRIER || kind == K_ALLREDUCE;
    CHECK_EQ(cost[1], plain[kind] + (free_of_cost ? 0u : 2u * (N - 1u)));
    printf("strict cost, kind %u at %u ranks: %llu messages, %llu not strict\n", kind, N,
           (unsigned long long)cost[1], (unsigned long long)cost[0]);
}

/*
 * A result round's offers and decisions have room for a 2 KiB result (two
 * frames) but carry a few words: each goes in one frame (the rest, zeros,
 * filled in by the receiver).  Survivors of a strict allreduce that a
 * member never joined: the result round (and the background rounds serving
 * the last allreduce's result) send a DATA frame per message (resends
 * aside), not two (48 frames for 22 messages before), and every survivor
 * fails the same way.
 */
static void test_round_frames(void)
{
    enum { N = 8, GONE = 5 };
    struct harness h;
    harness_init(&h, N, N, 1450u);
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    struct harness_requests reqs;
    world_allreduce(&h, COMM_NODE_NONE, &reqs); /* kept by all: served after the view */
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    harness_hang(&h, GONE);
    world_allreduce(&h, GONE, &reqs);
    harness_run_for(&h, 1000000u);
    uint64_t frames = 0, resent = 0, messages = 0;
    for (uint32_t i = 0; i < N; i++) {
        const struct comm_counters *k = comm_get_counters(harness_node(&h, i));
        frames += k->data_frames_sent;
        resent += k->retransmissions;
        messages += k->messages_sent;
    }
    bool live[N] = {true, true, true, true, true, true, true, true};
    uint32_t gone = GONE;
    remove_nodes(&h, 2, &gone, 1, live);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_PROC_FAILED);
    }
    uint64_t frames_after = 0, resent_after = 0, messages_after = 0;
    for (uint32_t i = 0; i < N; i++) {
        const struct comm_counters *k = comm_get_counters(harness_node(&h, i));
        frames_after += k->data_frames_sent;
        resent_after += k->retransmissions;
        messages_after += k->messages_sent;
    }
    uint64_t round_frames = (frames_after - frames) - (resent_after - resent);
    uint64_t round_messages = messages_after - messages;
    printf("result round at %u ranks: %llu DATA frames for %llu messages\n", N - 1u,
           (unsigned long long)round_frames, (unsigned long long)round_messages);
    CHECK(round_messages >= 2u * (N - 2u)); /* at least the round's reduce and broadcast */
    /* a frame each, and at most one more per survivor: a send the view cut
     * or a stopped background round left unacknowledged (not a message) */
    CHECK(round_frames <= round_messages + (N - 1u));
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A strict allreduce cut after its result came down is the application's
 * at the cut, not once its other sends are acknowledged.  8 ranks, radix
 * 4: node 1's children are 5, 6 and 7; 10 us a frame, sessions open.  At
 * 35 us node 1 has the result (30 us) and has sent it on (to arrive at 40):
 * 6 hangs (its acknowledgement will wait) and 5 leaves the view.  Node 1
 * (and the root, whose acknowledgements are due at 40) return OK with the
 * sum at the install; on the old code they waited for 6 to come back.
 * The application then writes over node 1's buffer, which the sends still
 * under way no longer read; every survivor ends with the same sum.
 */
/* 8 ranks of WORLD (SHRINK, NOP), sessions open: an allreduce started at
 * every node, run to 35 us, when node 1 has its result and has sent it on
 * to 5, 6 and 7 (due at 40); reqs holds every node's request but 5's. */
static void start_result_down_at_1(struct harness *h, uint64_t seed,
                                   struct harness_requests *reqs)
{
    enum { N = 8, GONE = 5 };
    harness_init(h, N, N, seed);
    set_modes(h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_NOP);
    harness_install(h, 1, NULL, NULL);
    world_allreduce(h, COMM_NODE_NONE, reqs); /* opens every session of the tree */
    CHECK(harness_requests_wait(h, reqs, LIMIT_NS));
    harness_run_for(h, 5000000u); /* every acknowledgement in */
    harness_requests_clear(reqs);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t r;
        coll_recv[i][0] = 0;
        CHECK_EQ(start_kind(h, i, K_ALLREDUCE, &r), COMM_ERR_OK);
        if (i != GONE) {
            harness_requests_add(reqs, i, r);
        }
    }
    harness_run_until(h, 35000u);
}

static void test_result_handed_over(void)
{
    enum { N = 8, GONE = 5, SLOW = 6, HANDS = 1 };
    struct harness h;
    struct harness_requests reqs;
    uint32_t r;
    start_result_down_at_1(&h, 1460u, &reqs);
    harness_requests_poll(&h, &reqs);
    CHECK(!reqs.done[HANDS] && !reqs.done[0]); /* sends to children unacknowledged */
    harness_hang(&h, SLOW);
    harness_hang(&h, GONE);
    bool live[N] = {true, true, true, true, true, true, true, true};
    uint32_t gone = GONE;
    remove_nodes(&h, 2, &gone, 1, live);
    harness_requests_poll(&h, &reqs);
    const int64_t sum = N * (N + 1) / 2;
    CHECK(reqs.done[0] && reqs.done[HANDS]); /* at the install, before any frame */
    CHECK_EQ(reqs.status[0].error, COMM_ERR_OK);
    CHECK_EQ(reqs.status[HANDS].error, COMM_ERR_OK);
    CHECK_EQ(coll_recv[0][0], sum);
    CHECK_EQ(coll_recv[HANDS][0], sum);
    coll_recv[HANDS][0] = -1; /* the application's buffer again */
    harness_resume(&h, SLOW);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t k = 0; k < reqs.count; k++) {
        uint32_t node = reqs.node[k];
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK); /* the result existed: all have it */
        CHECK_EQ(coll_recv[node][0], node == HANDS ? -1 : sum);
    }
    harness_run_for(&h, 50000000u); /* node 1's sends drain; its slot frees */
    CHECK_EQ(start_kind(&h, HANDS, K_BARRIER, &r), COMM_ERR_OK);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * The rebuild rides on the next collective's result round even when a
 * member's previous allreduce, handed over at the cut, still drains its
 * sends: that slot is not the application's any more, so the member's
 * offer names its rebuild, not VOID.  As in test_result_handed_over, node
 * 1 had the result of allreduce 2 and 5 left before its children
 * acknowledged it; the nodes that returned start allreduce 3 at once (the
 * others once allreduce 2 is theirs too); allreduce 3 fails everywhere,
 * and every shrink completes inside its call (no round of its own).
 */
static void test_rebuild_rides_past_hand_over(void)
{
    enum { N = 8, GONE = 5, HANDS = 1 };
    struct harness h;
    struct harness_requests reqs;
    uint32_t r;
    start_result_down_at_1(&h, 1470u, &reqs);
    harness_hang(&h, GONE);
    bool live[N] = {true, true, true, true, true, true, true, true};
    uint32_t gone = GONE;
    remove_nodes(&h, 2, &gone, 1, live);
    harness_requests_poll(&h, &reqs);
    CHECK(reqs.done[HANDS]);
    const struct comm *c1 = harness_node(&h, HANDS);
    bool draining = false;
    for (uint32_t k = 0; k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
        draining |= c1->colls[k].state != COLL_FREE && c1->colls[k].handed;
    }
    CHECK(draining); /* its sends to 6 and 7 are not acknowledged yet */
    struct harness_requests next;
    harness_requests_clear(&next);
    bool started[N] = {false};
    while (next.count < N - 1u) {
        harness_requests_poll(&h, &reqs);
        for (uint32_t k = 0; k < reqs.count; k++) {
            uint32_t node = reqs.node[k];
            if (reqs.done[k] && !started[node]) {
                CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
                CHECK_EQ(start_kind(&h, node, K_ALLREDUCE, &r), COMM_ERR_OK);
                harness_requests_add(&next, node, r);
                started[node] = true;
            }
        }
        if (next.count < N - 1u && !harness_step(&h)) {
            break;
        }
    }
    CHECK(harness_requests_wait(&h, &next, LIMIT_NS));
    uint32_t comm[N];
    for (uint32_t k = 0; k < next.count; k++) {
        uint32_t node = next.node[k];
        CHECK_EQ(next.status[k].error, COMM_ERR_PROC_FAILED);
        struct comm *c = harness_node(&h, node);
        CHECK_EQ(comm_ishrink(c, COMM_WORLD, h.now_ns, harness_begin(&h), &comm[node], &r),
                 COMM_ERR_OK);
        harness_end(&h, node);
        CHECK(request_done(c, request_index(c, r))); /* the decision rode: done in the call */
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* One collective with a member hanging at a chosen moment and leaving:
 * true when the survivors' outcomes are mixed (some OK, some an error, or
 * OK with different results). */
static bool outcome_mixed(uint32_t kind, bool strict, uint32_t n, uint32_t victim,
                          uint64_t hang_after_ns, uint64_t seed)
{
    struct harness h;
    harness_init(&h, n, n, seed);
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    set_strict(&h, strict);
    harness_install(&h, 1, NULL, NULL);
    memset(coll_recv, 0, sizeof coll_recv);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r;
        CHECK_EQ(start_kind(&h, i, kind, &r), COMM_ERR_OK);
        if (i != victim) {
            harness_requests_add(&reqs, i, r);
        }
    }
    harness_run_for(&h, hang_after_ns);
    harness_hang(&h, victim);
    harness_run_for(&h, 1000000u);
    bool live[MAX_N];
    for (uint32_t i = 0; i < n; i++) {
        live[i] = true;
    }
    remove_nodes(&h, 2, &victim, 1, live);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    bool ok = false;
    bool failed = false;
    bool differ = false;
    for (uint32_t i = 0; i < reqs.count; i++) {
        uint32_t node = reqs.node[i];
        if (reqs.status[i].error == COMM_ERR_OK) {
            ok = true;
            /* the same result wherever there is one */
            uint32_t first = reqs.node[0];
            if (kind == K_ALLREDUCE || kind == K_ALLGATHER) {
                differ = differ || memcmp(coll_recv[node], coll_recv[first],
                                          kind == K_ALLGATHER ? 8u * n : 8u) != 0;
            }
        } else {
            failed = true;
        }
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
    return (ok && failed) || differ;
}

/* Strict collectives are never mixed; without strictness they are, for
 * some of the same runs (so the check can see a mix). */
static void test_strict_never_mixed(uint32_t kind)
{
    uint32_t mixed[2] = {0, 0};
    for (uint32_t run = 0; run < 60; run++) {
        struct check_rng rng;
        check_rng_seed(&rng, 1500u + run);
        uint32_t n = 5u + check_rng_below(&rng, 28);
        uint32_t victim = check_rng_below(&rng, n);
        uint64_t after = check_rng_below(&rng, 1500000u);
        for (uint32_t strict = 0; strict < 2; strict++) {
            mixed[strict] += outcome_mixed(kind, strict != 0, n, victim, after, 1600u + run);
        }
    }
    printf("kind %u: %u of 60 runs mixed without strict, %u with\n", kind, mixed[0], mixed[1]);
    CHECK_EQ(mixed[1], 0);
    CHECK(mixed[0] > 0); /* the runs do hit the window */
}

/* ---- recovery under failures: a seeded campaign ---- */

enum { OP_SHRINK, OP_BLANK, OP_REBUILD, OP_AGREE, OP_COUNT };

/* Picks count distinct live world nodes (rank-0-first when root: the
 * round's root is the lowest live rank). */
static uint32_t pick_victims(struct check_rng *rng, const bool *live, uint32_t world, bool root,
                             uint32_t count, uint32_t *victims)
{
    uint32_t got = 0;
    if (root) {
        for (uint32_t i = 0; i < world && got < count; i++) {
            if (live[i]) {
                victims[got++] = i;
                break;
            }
        }
    }
    for (uint32_t tries = 0; got < count && tries < 1000u; tries++) {
        uint32_t v = check_rng_below(rng, world);
        bool dup = false;
        for (uint32_t k = 0; k < got; k++) {
            dup = dup || victims[k] == v;
        }
        if (live[v] && !dup) {
            victims[got++] = v;
        }
    }
    return got;
}

/*
 * One run: n nodes (spares beyond world), failures before the operation
 * (so the communicator is DETECTED), then during it (hung, then removed
 * in one view change: one or two nodes, sometimes the round's root),
 * sometimes again during the restarted round.  Every survivor must finish;
 * rebuilds give one map (epoch, size, digest) and no node twice; agree
 * gives one value and one error everywhere, 0 when a survivor offered 0.
 */
static uint32_t campaign_rebuilds;
static uint32_t campaign_restarted;

static void campaign_run(uint64_t seed)
{
    struct check_rng rng;
    check_rng_seed(&rng, seed);
    uint32_t n = 8u + check_rng_below(&rng, MAX_N - 8u + 1u);
    uint32_t spares = check_rng_below(&rng, 3);
    uint32_t world = n - spares;
    uint32_t op = check_rng_below(&rng, OP_COUNT);
    static const enum comm_mode modes[OP_COUNT] = {COMM_MODE_SHRINK, COMM_MODE_BLANK,
                                                   COMM_MODE_REBUILD, COMM_MODE_BLANK};
    struct harness h;
    harness_init(&h, n, world, seed);
    h.loss_percent = check_rng_below(&rng, 8);
    h.duplicate_percent = check_rng_below(&rng, 3);
    h.delay_max_ns = 100000u + check_rng_below(&rng, 400000u);
    set_modes(&h, COMM_WORLD, modes[op], COMM_MSG_CONT);
    harness_install(&h, 1, NULL, NULL);
    bool live[MAX_N];
    for (uint32_t i = 0; i < n; i++) {
        live[i] = true;
    }
    uint64_t epoch = 1;
    uint32_t victims[2];
    uint32_t before = pick_victims(&rng, live, world, check_rng_percent(&rng, 20),
                                   1u + check_rng_below(&rng, 2), victims);
    remove_nodes(&h, ++epoch, victims, before, live);
    /* the operation */
    uint32_t comm[MAX_N];
    uint32_t flag[MAX_N];
    bool any_zero = false;
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    bool started[MAX_N] = {false};
    for (uint32_t i = 0; i < n; i++) {
        if (!live[i] || (i >= world && op != OP_REBUILD)) {
            continue;
        }
        uint32_t r;
        enum comm_error e;
        struct comm *c = harness_node(&h, i);
        if (i >= world) {
            e = comm_iadopt(c, h.now_ns, harness_begin(&h), &comm[i], &r);
        } else if (op == OP_AGREE) {
            flag[i] = check_rng_percent(&rng, 85) ? 1u : 0u;
            any_zero = any_zero || flag[i] == 0;
            e = comm_iagree(c, COMM_WORLD, &flag[i], h.now_ns, harness_begin(&h), &r);
        } else {
            e = comm_irebuild(c, COMM_WORLD, h.now_ns, harness_begin(&h), &comm[i], &r);
        }
        harness_end(&h, i);
        CHECK_EQ(e, COMM_ERR_OK);
        started[i] = true;
        harness_requests_add(&reqs, i, r);
    }
    /* failures during it: one or two rounds of crashes */
    uint32_t rounds = check_rng_below(&rng, 3);
    for (uint32_t k = 0; k < rounds; k++) {
        harness_run_for(&h, check_rng_below(&rng, 3000000u));
        uint32_t count = pick_victims(&rng, live, world, check_rng_percent(&rng, 40),
                                      1u + check_rng_below(&rng, 2), victims);
        for (uint32_t v = 0; v < count; v++) {
            harness_hang(&h, victims[v]);
        }
        harness_run_for(&h, check_rng_below(&rng, 2000000u));
        remove_nodes(&h, ++epoch, victims, count, live);
    }
    /* every survivor of the world finishes; spares only if adopted */
    struct harness_requests world_reqs;
    harness_requests_clear(&world_reqs);
    for (uint32_t i = 0; i < reqs.count; i++) {
        if (live[reqs.node[i]] && reqs.node[i] < world) {
            harness_requests_add(&world_reqs, reqs.node[i], reqs.handle[i]);
        }
    }
    if (!harness_requests_wait(&h, &world_reqs, LIMIT_NS)) {
        printf("campaign seed %llu: a survivor never finished (n %u, op %u)\n",
               (unsigned long long)seed, n, op);
        for (uint32_t i = 0; i < world_reqs.count; i++) {
            if (world_reqs.done[i]) {
                continue;
            }
            const struct comm *c = harness_node(&h, world_reqs.node[i]);
            for (uint32_t k = 0; k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
                const struct comm_collective *cc = &c->colls[k];
                printf("  node %u coll %u: state %u kind %u bg %d step %u phase %u size %u vrank %u"
                       " parent %u (node %u) children %u\n",
                       world_reqs.node[i], k, cc->state, cc->kind, cc->background, cc->step,
                       cc->phase, cc->size, cc->vrank, cc->parent,
                       cc->nodes[CONFIG_COMM_TREE_RADIX], cc->child_count);
            }
        }
        CHECK(false);
        harness_free(&h);
        return;
    }
    enum comm_error first_error = world_reqs.status[0].error;
    uint32_t first_flag = flag[world_reqs.node[0]];
    bool in[MAX_N] = {false};
    for (uint32_t i = 0; i < world_reqs.count; i++) {
        uint32_t node = world_reqs.node[i];
        CHECK_EQ(world_reqs.status[i].error, first_error); /* uniform */
        if (op == OP_AGREE) {
            CHECK_EQ(flag[node], first_flag);
        } else {
            CHECK_EQ(world_reqs.status[i].error, COMM_ERR_OK);
            in[node] = true;
        }
    }
    if (op == OP_AGREE) {
        CHECK_EQ(first_error, COMM_ERR_PROC_FAILED); /* failures not acknowledged */
        if (any_zero) {
            bool survivor_zero = false;
            for (uint32_t i = 0; i < world; i++) {
                survivor_zero = survivor_zero || (live[i] && started[i] && flag[i] == 0);
            }
            if (survivor_zero) {
                CHECK_EQ(first_flag, 0);
            }
        }
    } else if (first_error == COMM_ERR_OK) {
        /* adopted spares finish too and hold the same map */
        struct comm *c0 = harness_node(&h, world_reqs.node[0]);
        uint32_t size = comm_size(c0, comm[world_reqs.node[0]]);
        harness_requests_clear(&world_reqs);
        for (uint32_t r = 0; r < size; r++) {
            uint32_t node = comm_node_of(c0, comm[world_reqs.node[0]], r);
            if (node != COMM_NODE_NONE && node >= world && live[node]) {
                for (uint32_t i = 0; i < reqs.count; i++) {
                    if (reqs.node[i] == node) {
                        harness_requests_add(&world_reqs, node, reqs.handle[i]);
                    }
                }
                in[node] = true;
            }
        }
        CHECK(harness_requests_wait(&h, &world_reqs, LIMIT_NS));
        for (uint32_t i = 0; i < world_reqs.count; i++) {
            CHECK_EQ(world_reqs.status[i].error, COMM_ERR_OK);
        }
        check_one_map(&h, comm, in);
        uint64_t made_in = comm_epoch_of(c0, comm[world_reqs.node[0]]);
        campaign_rebuilds++;
        campaign_restarted += made_in > 2u; /* decided in a view after the round began */
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* NOP: the view change that makes WORLD DETECTED fails what is already
 * waiting on it, with live peers too: a receive from a live rank nobody
 * sends to, a rendezvous send no receive takes (deferred at its receiver),
 * a large message half received, an unexpected one nobody will receive and
 * a self-send.  Then the rebuilt communicator carries messages between
 * the same pairs (the old ones' frames were consumed, not left in the
 * way).  With loss, so that frames are still in windows at the change. */
static uint8_t nop_big_out[100000];
static uint8_t nop_big_in[3][100000];

static void test_nop_fails_waiting(uint64_t seed, enum comm_mode mode)
{
    enum { N = 7, WORLD = 6 }; /* node 6: a spare (REBUILD adopts it) */
    struct harness h;
    harness_init(&h, N, WORLD, seed);
    h.loss_percent = 10;
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, mode, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    for (uint32_t i = 0; i < sizeof nop_big_out; i++) {
        nop_big_out[i] = (uint8_t)(i * 7u + seed);
    }
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    uint32_t r;
    uint8_t small[4] = {1, 2, 3, 4};
    /* 0 waits on 1, which sends it nothing */
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 1, nop_big_in[0], 4, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 0, r);
    /* 2 -> 4: rendezvous (over half the pool), no receive at 4 */
    CHECK_EQ(isend(&h, 2, COMM_WORLD, 4, nop_big_out, sizeof nop_big_out, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 2, r);
    /* 3 -> 1: matched, under way when the view changes */
    CHECK_EQ(irecv(&h, 1, COMM_WORLD, 3, nop_big_in[1], sizeof nop_big_out, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 1, r);
    CHECK_EQ(isend(&h, 3, COMM_WORLD, 1, nop_big_out, sizeof nop_big_out, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 3, r);
    /* 4 -> 0: small and unexpected; 4 -> 4: a self-send nobody receives */
    uint32_t unexpected;
    CHECK_EQ(isend(&h, 4, COMM_WORLD, 0, small, 4, &unexpected), COMM_ERR_OK);
    CHECK_EQ(isend(&h, 4, COMM_WORLD, 4, nop_big_out, sizeof nop_big_out, &r), COMM_ERR_OK);
    harness_requests_add(&reqs, 4, r);
    harness_run_for(&h, 400000u); /* part of the big messages is out */
    CHECK(!harness_requests_poll(&h, &reqs));
    bool live[N] = {true, true, true, true, true, true, true};
    uint32_t gone = 5;
    remove_nodes(&h, 2, &gone, 1, live);
    live[WORLD] = mode == COMM_MODE_REBUILD; /* a spare takes part when adopted */
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_PROC_FAILED);
    }
    /* a new receive on the failed communicator finds no old message either */
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 4, nop_big_in[0], 4, &r), COMM_ERR_PROC_FAILED);
    /* the rebuilt communicator works between the same pairs */
    uint32_t new_comm[N];
    CHECK(rebuild_all(&h, WORLD, live, false, COMM_WORLD, new_comm, &reqs));
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    harness_requests_clear(&reqs);
    const uint32_t pairs[3][2] = {{2, 4}, {3, 1}, {1, 0}};
    for (uint32_t p = 0; p < 3; p++) {
        uint32_t from = pairs[p][0];
        uint32_t to = pairs[p][1];
        memset(nop_big_in[p], 0, sizeof nop_big_in[p]);
        CHECK_EQ(irecv(&h, to, new_comm[to], comm_rank(harness_node(&h, from), new_comm[from]),
                       nop_big_in[p], sizeof nop_big_out, &r),
                 COMM_ERR_OK);
        harness_requests_add(&reqs, to, r);
        CHECK_EQ(isend(&h, from, new_comm[from], comm_rank(harness_node(&h, to), new_comm[to]),
                       nop_big_out, sizeof nop_big_out, &r),
                 COMM_ERR_OK);
        harness_requests_add(&reqs, from, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    for (uint32_t p = 0; p < 3; p++) {
        CHECK(memcmp(nop_big_in[p], nop_big_out, sizeof nop_big_out) == 0);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A view change that adds a member never stalls what is in flight: every
 * frame still owed to a live peer is delivered once.  Ten nodes, WORLD the
 * first seven, spares 7, 8, 9 joining one by one; with loss, each view
 * lands while frames are in windows:
 *   view 2 adds 7 during an allreduce and a large message;
 *   view 3 removes 4 and adds 8 (one change) during an agree and a large
 *   message between live ranks (CONT);
 *   view 4 adds 9 during the rebuild (a spare adopts rank 4). */
static uint8_t join_out[60000];
static uint8_t join_in[60000];

static void start_large(struct harness *h, uint32_t from, uint32_t to,
                        struct harness_requests *reqs)
{
    uint32_t r;
    memset(join_in, 0, sizeof join_in);
    CHECK_EQ(irecv(h, to, COMM_WORLD, from, join_in, sizeof join_in, &r), COMM_ERR_OK);
    harness_requests_add(reqs, to, r);
    CHECK_EQ(isend(h, from, COMM_WORLD, to, join_out, sizeof join_out, &r), COMM_ERR_OK);
    harness_requests_add(reqs, from, r);
}

static void test_join_during(uint64_t seed)
{
    enum { N = 10, WORLD = 7 };
    struct harness h;
    harness_init(&h, N, WORLD, seed);
    h.loss_percent = 5;
    h.delay_max_ns = 300000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_REBUILD, COMM_MSG_CONT);
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = i < WORLD;
    }
    harness_install(&h, 1, live, NULL);
    for (uint32_t i = 0; i < sizeof join_out; i++) {
        join_out[i] = (uint8_t)(i * 13u + seed);
    }
    /* view 2 adds 7 */
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    static int64_t one[N];
    static int64_t sum[N];
    uint32_t r;
    for (uint32_t i = 0; i < WORLD; i++) {
        one[i] = (int64_t)i + 1;
        CHECK_EQ(comm_iallreduce(harness_node(&h, i), COMM_WORLD, &one[i], &sum[i], 1,
                                 COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&reqs, i, r);
    }
    start_large(&h, 0, 6, &reqs);
    harness_run_for(&h, 150000u + seed % 7u * 40000u);
    live[7] = true;
    harness_install(&h, 2, live, NULL);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    for (uint32_t i = 0; i < WORLD; i++) {
        CHECK_EQ(sum[i], 28);
    }
    CHECK(memcmp(join_in, join_out, sizeof join_out) == 0);
    /* view 3 removes 4 and adds 8 */
    harness_requests_clear(&reqs);
    static uint32_t flag[N];
    for (uint32_t i = 0; i < WORLD; i++) {
        flag[i] = i == 2 ? 0u : 1u;
        CHECK_EQ(comm_iagree(harness_node(&h, i), COMM_WORLD, &flag[i], h.now_ns,
                             harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        if (i != 4) {
            harness_requests_add(&reqs, i, r);
        }
    }
    start_large(&h, 1, 5, &reqs);
    harness_run_for(&h, 150000u + seed % 5u * 40000u);
    live[4] = false;
    live[8] = true;
    harness_install(&h, 3, live, NULL);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < WORLD - 1u; i++) {
        /* the agree's error is the decision's: the same at every survivor */
        CHECK_EQ(reqs.status[i].error, reqs.status[0].error);
    }
    for (uint32_t i = 0; i < WORLD; i++) {
        if (i != 4) {
            CHECK_EQ(flag[i], 0u);
        }
    }
    CHECK_EQ(reqs.status[reqs.count - 1u].error, COMM_ERR_OK); /* the large message */
    CHECK(memcmp(join_in, join_out, sizeof join_out) == 0);
    /* view 4 adds 9 during the rebuild */
    uint32_t comm[N];
    bool in[N];
    for (uint32_t i = 0; i < N; i++) {
        in[i] = live[i] && i != 8; /* 7 adopts rank 4; 8 waits (no gap for it) */
    }
    rebuild_all(&h, WORLD, in, false, COMM_WORLD, comm, &reqs);
    harness_run_for(&h, 150000u + seed % 3u * 40000u);
    live[9] = true;
    harness_install(&h, 4, live, NULL);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    check_one_map(&h, comm, in);
    CHECK_EQ(comm_node_of(harness_node(&h, 0), comm[0], 4), 7);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Agree's error is uniform (ULFM: PROC_FAILED is raised consistently at
 * every process, unless every process acknowledged the failure before the
 * call).  Every node runs agrees back to back (acknowledging after each
 * PROC_FAILED, as an application does) while a node fails at a random
 * moment: per agree, every survivor returns the same value and the same
 * error. */
enum { AGREE_N = 8, AGREE_CALLS = 24 };

struct agree_run {
    uint32_t next[AGREE_N];    /* the agree each node is in */
    uint32_t request[AGREE_N];
    uint32_t flag[AGREE_N];
    uint32_t value[AGREE_N][AGREE_CALLS];
    uint8_t error[AGREE_N][AGREE_CALLS];
};

static void agree_start(struct harness *h, struct agree_run *a, uint32_t i)
{
    a->flag[i] = a->next[i] % 5u == i % 5u ? 0u : 1u;
    CHECK_EQ(comm_iagree(harness_node(h, i), COMM_WORLD, &a->flag[i], h->now_ns,
                         harness_begin(h), &a->request[i]),
             COMM_ERR_OK);
    harness_end(h, i);
}

/* Polls each live node's agree; records it and starts the next.  True
 * when every live node made all its calls. */
static bool agree_poll(struct harness *h, void *arg)
{
    struct agree_run *a = arg;
    bool all = true;
    for (uint32_t i = 0; i < AGREE_N; i++) {
        if (h->hung[i] || a->next[i] >= AGREE_CALLS) {
            continue;
        }
        struct comm_status st;
        if (comm_test(harness_node(h, i), a->request[i], &st)) {
            a->value[i][a->next[i]] = a->flag[i];
            a->error[i][a->next[i]] = (uint8_t)st.error;
            if (st.error == COMM_ERR_PROC_FAILED) {
                CHECK_EQ(comm_failure_ack(harness_node(h, i), COMM_WORLD), COMM_ERR_OK);
            }
            if (++a->next[i] < AGREE_CALLS) {
                agree_start(h, a, i);
            }
        }
        all = all && a->next[i] >= AGREE_CALLS;
    }
    return all;
}

static uint32_t agree_failures_seen;

/* The victim's new life: a fresh context, another incarnation, in the
 * view of the old one (its peers learn of it in-band). */
static void restart_node(struct harness *h, uint32_t node, uint64_t epoch, const bool *live)
{
    struct comm_config config = harness_node(h, node)->config;
    config.incarnation += 1000u;
    CHECK_EQ(comm_init(harness_node(h, node), &config), COMM_INIT_OK);
    bool only[AGREE_N] = {false};
    only[node] = true;
    harness_install(h, epoch, live, only);
}

static void test_agree_uniform(uint64_t seed, bool restart)
{
    struct harness h;
    harness_init(&h, AGREE_N, AGREE_N, seed);
    h.loss_percent = 5;
    h.delay_max_ns = 300000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    harness_install(&h, 1, NULL, NULL);
    static struct agree_run a;
    memset(&a, 0, sizeof a);
    for (uint32_t i = 0; i < AGREE_N; i++) {
        agree_start(&h, &a, i);
    }
    /* a node fails somewhere in the first half of the calls */
    uint64_t end = h.now_ns + 1000000u + seed % 13u * 700000u;
    while (h.now_ns < end && harness_step(&h)) {
        agree_poll(&h, &a);
    }
    uint32_t victim = (uint32_t)(seed % AGREE_N);
    bool live[AGREE_N];
    for (uint32_t i = 0; i < AGREE_N; i++) {
        live[i] = true;
    }
    if (restart) {
        /* it comes back before the view removes it: its peers' frames to
         * its old life are answered RESET, its new frames name a new life */
        a.next[victim] = AGREE_CALLS;
        restart_node(&h, victim, 1, live);
        /* the core reads the payload until the send completes: it must
         * outlive this block */
        static uint32_t payload;
        uint32_t r;
        CHECK_EQ(isend(&h, victim, COMM_WORLD, (victim + 1u) % AGREE_N, &payload, 4, &r),
                 COMM_ERR_OK);
    } else {
        harness_hang(&h, victim);
    }
    harness_run_for(&h, 2000000u); /* the others wait on it */
    live[victim] = false;
    harness_install(&h, 2, live, live);
    CHECK(harness_run(&h, agree_poll, &a, LIMIT_NS));
    uint32_t first = victim == 0 ? 1u : 0u;
    for (uint32_t k = 0; k < AGREE_CALLS; k++) {
        for (uint32_t i = 0; i < AGREE_N; i++) {
            if (live[i]) {
                CHECK_EQ(a.value[i][k], a.value[first][k]);
                CHECK_EQ(a.error[i][k], a.error[first][k]);
            }
        }
        agree_failures_seen += a.error[first][k] == COMM_ERR_PROC_FAILED;
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A strict allreduce some members never call: when a failure comes, the
 * ranks in it wait for a result round over every survivor, while the
 * others (their halo receive failed under NOP) go straight to the
 * rebuild.  Those abstain from the allreduce they never started as they
 * start the rebuild, so the allreduce ends (PROC_FAILED: nobody had its
 * result) and its ranks join the rebuild: no deadlock. */
static void test_strict_abstain(uint64_t seed, enum comm_mode mode)
{
    enum { N = 7, WORLD = 6 }; /* node 6: a spare (REBUILD adopts it) */
    struct harness h;
    harness_init(&h, N, WORLD, seed);
    h.loss_percent = 5;
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, mode, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    struct harness_requests in_allreduce;
    struct harness_requests in_halo;
    harness_requests_clear(&in_allreduce);
    harness_requests_clear(&in_halo);
    static int64_t one[N];
    static int64_t sum[N];
    uint8_t halo[N][4];
    uint32_t r;
    /* a first allreduce by all: each keeps its result, which the view
     * change makes it serve in a background round (a slot taken) */
    for (uint32_t i = 0; i < WORLD; i++) {
        one[i] = 1;
        CHECK_EQ(comm_iallreduce(harness_node(&h, i), COMM_WORLD, &one[i], &sum[i], 1,
                                 COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&in_allreduce, i, r);
    }
    CHECK(harness_requests_wait(&h, &in_allreduce, LIMIT_NS));
    harness_requests_clear(&in_allreduce);
    for (uint32_t i = 0; i < WORLD - 1u; i++) {
        if (i < 3) {
            one[i] = 1;
            CHECK_EQ(comm_iallreduce(harness_node(&h, i), COMM_WORLD, &one[i], &sum[i], 1,
                                     COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, i);
            harness_requests_add(&in_allreduce, i, r);
        } else {
            CHECK_EQ(irecv(&h, i, COMM_WORLD, 5, halo[i], 4, &r), COMM_ERR_OK);
            harness_requests_add(&in_halo, i, r);
        }
    }
    harness_run_for(&h, 300000u + seed % 4u * 100000u);
    bool live[N] = {true, true, true, true, true, true, true};
    uint32_t gone = 5;
    remove_nodes(&h, 2, &gone, 1, live);
    CHECK(harness_requests_wait(&h, &in_halo, LIMIT_NS));
    uint32_t comm[N];
    struct harness_requests rebuilds;
    harness_requests_clear(&rebuilds);
    live[WORLD] = mode == COMM_MODE_REBUILD; /* a spare takes part when adopted */
    if (live[WORLD]) {
        CHECK_EQ(comm_iadopt(harness_node(&h, WORLD), h.now_ns, harness_begin(&h), &comm[WORLD],
                             &r),
                 COMM_ERR_OK);
        harness_end(&h, WORLD);
        harness_requests_add(&rebuilds, WORLD, r);
    }
    for (uint32_t k = 0; k < in_halo.count; k++) {
        uint32_t i = in_halo.node[k];
        CHECK_EQ(in_halo.status[k].error, COMM_ERR_PROC_FAILED);
        CHECK_EQ(comm_irebuild(harness_node(&h, i), COMM_WORLD, h.now_ns, harness_begin(&h),
                               &comm[i], &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&rebuilds, i, r);
    }
    CHECK(harness_requests_wait(&h, &in_allreduce, LIMIT_NS));
    for (uint32_t k = 0; k < in_allreduce.count; k++) {
        uint32_t i = in_allreduce.node[k];
        CHECK_EQ(in_allreduce.status[k].error, COMM_ERR_PROC_FAILED);
        enum comm_error e;
        do { /* BUSY while this node's slots drain */
            e = comm_irebuild(harness_node(&h, i), COMM_WORLD, h.now_ns, harness_begin(&h),
                              &comm[i], &r);
            harness_end(&h, i);
        } while (e == COMM_ERR_BUSY && harness_step(&h));
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(&rebuilds, i, r);
    }
    CHECK(harness_requests_wait(&h, &rebuilds, LIMIT_NS));
    for (uint32_t k = 0; k < rebuilds.count; k++) {
        CHECK_EQ(rebuilds.status[k].error, COMM_ERR_OK);
    }
    check_one_map(&h, comm, live);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A member that leaves the view and comes back under the same node id (a
 * new life, outside every communicator it was in) stays failed for those
 * communicators: their rounds run without it (its new life does not take
 * part), point-to-point to its rank fails, the detail call lists it. */
static void test_rejoined_stays_failed(uint64_t seed)
{
    enum { N = 6 };
    struct harness h;
    harness_init(&h, N, N, seed);
    h.loss_percent = 5;
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    harness_install(&h, 1, NULL, NULL);
    bool live[N] = {true, true, true, true, true, true};
    uint32_t gone = 4;
    remove_nodes(&h, 2, &gone, 1, live);
    live[4] = true;
    restart_node(&h, 4, 2, live);
    harness_install(&h, 3, live, NULL); /* it rejoins */
    bool old[N] = {true, true, true, true, false, true};
    struct comm *c0 = harness_node(&h, 0);
    uint32_t ranks[4];
    uint32_t count = 0;
    CHECK_EQ(comm_failed_ranks(c0, COMM_WORLD, ranks, 4, &count, NULL), COMM_ERR_OK);
    CHECK_EQ(count, 1);
    CHECK_EQ(ranks[0], 4);
    CHECK_EQ(comm_rank_state_of(c0, COMM_WORLD, 4), COMM_RANK_FAILED);
    uint32_t r;
    uint8_t b[4] = {0};
    CHECK_EQ(isend(&h, 0, COMM_WORLD, 4, b, 4, &r), COMM_ERR_PROC_FAILED);
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 4, b, 4, &r), COMM_ERR_PROC_FAILED);
    uint32_t comm[N];
    struct harness_requests reqs;
    rebuild_all(&h, N, old, true, COMM_WORLD, comm, &reqs);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t k = 0; k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
    }
    check_one_map(&h, comm, old);
    CHECK_EQ(comm_size(c0, comm[0]), 5);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * ABARIS RESTART: node 4 fails and boots again (a new comm context with
 * restarted set); every member was told it restarts (comm_expect_restart),
 * so the REBUILD hands rank 4 back to node 4, which adopts it, rather than
 * to the spare 6.  Without the expectation the spare takes it and the
 * restarted node is refused (a WORLD node in its first life may not adopt
 * either: ARG).
 */
static void test_restart_readopts(uint64_t seed, bool expected)
{
    enum { N = 7, WORLD = 6 };
    struct harness h;
    harness_init(&h, N, WORLD, seed);
    h.loss_percent = 5;
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_REBUILD, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    uint32_t r;
    uint32_t made;
    CHECK_EQ(comm_iadopt(harness_node(&h, 4), h.now_ns, harness_begin(&h), &made, &r),
             COMM_ERR_ARG);
    harness_end(&h, 4);
    bool live[N] = {true, true, true, true, true, true, true};
    uint32_t gone = 4;
    remove_nodes(&h, 2, &gone, 1, live);
    for (uint32_t i = 0; i < N; i++) {
        if (expected && i != 4) {
            CHECK(comm_expect_restart(harness_node(&h, i), 4));
        }
    }
    struct comm_config config = harness_node(&h, 4)->config;
    config.incarnation += 1000u;
    config.restarted = true;
    CHECK_EQ(comm_init(harness_node(&h, 4), &config), COMM_INIT_OK);
    live[4] = true;
    harness_install(&h, 3, live, NULL); /* it is back in the view */
    uint32_t comm[N];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        enum comm_error e;
        struct comm *c = harness_node(&h, i);
        if (i == 4 || i == WORLD) {
            e = comm_iadopt(c, h.now_ns, harness_begin(&h), &comm[i], &r);
        } else {
            e = comm_irebuild(c, COMM_WORLD, h.now_ns, harness_begin(&h), &comm[i], &r);
        }
        harness_end(&h, i);
        CHECK_EQ(e, COMM_ERR_OK);
        if (i != (expected ? WORLD : 4u)) {
            harness_requests_add(&reqs, i, r); /* the one left out waits for good */
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t k = 0; k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
    }
    uint32_t holder = expected ? 4u : (uint32_t)WORLD;
    bool in[N] = {true, true, true, true, true, true, true};
    in[expected ? WORLD : 4] = false;
    check_one_map(&h, comm, in);
    struct comm *c0 = harness_node(&h, 0);
    CHECK_EQ(comm_size(c0, comm[0]), WORLD);
    CHECK_EQ(comm_node_of(c0, comm[0], 4), holder);
    CHECK_EQ(comm_rank(harness_node(&h, holder), comm[holder]), 4);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * A view that only adds a node lands while a SHRINK (or BLANK) is being
 * decided: some members learnt the decision and finished, the others (the
 * root among them, its broadcast not yet acknowledged) start the round
 * again in the new view, and wait for offers.  The finished members serve
 * their decision there as after a failure, and every survivor ends with
 * the same communicator.  Before, they served only when a view removed a
 * member: the root waited for ever (tori-sim --dims 2x2x2 --app allreduce
 * --iterations 30 --comm-mode shrink --recovery process=restart --inject
 * 'appkill 3 at iteration 12': node 3 restarted and rejoined meanwhile).
 */
static bool some_done(struct harness *h, void *arg)
{
    struct harness_requests *reqs = arg;
    harness_requests_poll(h, reqs);
    for (uint32_t k = 0; k < reqs->count; k++) {
        if (reqs->done[k]) {
            return true;
        }
    }
    return false;
}

static void test_join_cuts_round(uint64_t seed, enum comm_mode mode)
{
    enum { N = 8 };
    struct harness h;
    harness_init(&h, N, N, seed);
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, mode, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    bool live[N] = {true, true, true, true, true, true, true, true};
    uint32_t gone = 3;
    remove_nodes(&h, 2, &gone, 1, live);
    for (uint32_t i = 0; i < N; i++) {
        if (i != gone) {
            CHECK(comm_expect_restart(harness_node(&h, i), gone)); /* as the nodes do */
        }
    }
    bool survivors[N];
    memcpy(survivors, live, sizeof survivors);
    uint32_t comm[N];
    struct harness_requests reqs;
    rebuild_all(&h, N, survivors, false, COMM_WORLD, comm, &reqs);
    CHECK(harness_run(&h, some_done, &reqs, LIMIT_NS));
    uint32_t done = 0;
    for (uint32_t k = 0; k < reqs.count; k++) {
        done += reqs.done[k] ? 1u : 0u;
    }
    CHECK(done < reqs.count); /* the view lands in the middle */
    struct comm_config config = harness_node(&h, gone)->config;
    config.incarnation += 1000u;
    config.restarted = true;
    CHECK_EQ(comm_init(harness_node(&h, gone), &config), COMM_INIT_OK);
    live[gone] = true;
    harness_install(&h, 3, live, NULL); /* its new life is back */
    bool finished = harness_requests_wait(&h, &reqs, LIMIT_NS);
    CHECK(finished);
    for (uint32_t k = 0; finished && k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
    }
    if (finished) {
        check_one_map(&h, comm, survivors);
        CHECK_EQ(comm_size(harness_node(&h, 0), comm[0]),
                 mode == COMM_MODE_SHRINK ? N - 1u : (uint32_t)N);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * ABARIS PROMOTE: with mirrors (config.mirrors), the REBUILD pairs a failed
 * rank with the spare that mirrors it (recovery_mirror_node: of spares 6
 * and 7, ranks 0-2 are 6's and 3-5 are 7's), so rank 4 goes to spare 7, not
 * to the lowest free spare 6 as without.  Every node holds NODES.
 */
static void test_rebuild_pairs_mirror(uint64_t seed, bool mirrors)
{
    enum { N = 8, WORLD = 6 };
    struct harness h;
    harness_init(&h, N, WORLD, seed);
    for (uint32_t i = 0; i < N; i++) {
        struct comm_config config = harness_node(&h, i)->config;
        config.mirrors = mirrors;
        CHECK_EQ(comm_init(harness_node(&h, i), &config), COMM_INIT_OK);
        CHECK_EQ(comm_nodes(harness_node(&h, i)) != COMM_NULL, mirrors);
    }
    h.loss_percent = 5;
    h.delay_max_ns = 200000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_REBUILD, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    if (mirrors) {
        struct comm *c6 = harness_node(&h, 6);
        CHECK_EQ(comm_size(c6, comm_nodes(c6)), N);
        CHECK_EQ(comm_rank(c6, comm_nodes(c6)), 6);
        CHECK_EQ(comm_free(c6, comm_nodes(c6)), COMM_ERR_ARG);
    }
    bool live[N] = {true, true, true, true, true, true, true, true};
    uint32_t gone = 4;
    remove_nodes(&h, 2, &gone, 1, live);
    uint32_t holder = mirrors ? 7u : 6u;
    uint32_t comm[N];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        if (i == 4)
            continue;
        uint32_t r;
        enum comm_error e;
        struct comm *c = harness_node(&h, i);
        if (i >= WORLD) {
            e = comm_iadopt(c, h.now_ns, harness_begin(&h), &comm[i], &r);
        } else {
            e = comm_irebuild(c, COMM_WORLD, h.now_ns, harness_begin(&h), &comm[i], &r);
        }
        harness_end(&h, i);
        CHECK_EQ(e, COMM_ERR_OK);
        if (i < WORLD || i == holder) {
            harness_requests_add(&reqs, i, r); /* the other spare waits for good */
        }
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t k = 0; k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
    }
    struct comm *c0 = harness_node(&h, 0);
    CHECK_EQ(comm_size(c0, comm[0]), WORLD);
    CHECK_EQ(comm_node_of(c0, comm[0], 4), holder);
    CHECK_EQ(comm_rank(harness_node(&h, holder), comm[holder]), 4);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A round's messages name the view they belong to, so those of a round cut
 * by a view change match nothing in the round started again.  The views'
 * epochs are the membership's (counter, root position, incarnation): two
 * views one root made differ only in the counter, which the tag must carry
 * (it once carried the epoch's low bits, the same in both). */
static void test_round_tag_names_view(void)
{
    struct harness h;
    harness_init(&h, 4, 4, 1400);
    struct comm *c = harness_node(&h, 0);
    harness_install(&h, MEMBERSHIP_EPOCH(1, 0, 1), NULL, NULL);
    uint32_t tag = ft_round_tag_base(c, 5);
    CHECK(ft_round_tag_current(c, tag));
    bool live[4] = {true, true, true, false};
    harness_install(&h, MEMBERSHIP_EPOCH(2, 0, 1), live, live);
    CHECK(!ft_round_tag_current(c, tag));
    CHECK(ft_round_tag_base(c, 5) != tag);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Records in use at a node (unexpected messages, waiting or complete). */
static uint32_t records_in_use(struct harness *h, uint32_t node)
{
    const struct comm *c = harness_node(h, node);
    uint32_t count = 0;
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_UNEXPECTED; i++) {
        count += c->records[i].state != 0;
    }
    return count;
}

/* A round's offer that reached a member before it joined the round waits
 * there as an unexpected record; a view change restarts the round under a
 * new tag, and nothing will ever take that record.  Such records were never
 * freed: after enough view changes during one round the table was full,
 * every first fragment was refused (WAIT), and a member whose stream to the
 * late node began with a message the late node would receive only after the
 * agree blocked the offer behind it for ever (tori-sim --dims 4x4x4 --app
 * allreduce --iterations 20 --comm-mode shrink --msg-mode cont --inject
 * 'kill 4 at 3212801ns; kill 0 at 3397918ns; kill 12 at 5417736ns; kill 13
 * at 7080866ns' --heartbeat-ns 300800 --link-detect-ns 10000: rank 1 stuck
 * in its agree).  Here the root (node 0) joins the agree late, after more
 * view changes than its table has records for four children. */
static void test_stale_round_records(void)
{
    enum { N = 5, VIEWS = CONFIG_COMM_MAX_UNEXPECTED / (N - 1) + 4 };
    struct harness h;
    harness_init(&h, N, N, 1500);
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    harness_install(&h, MEMBERSHIP_EPOCH(1, 0, 1), NULL, NULL);
    static uint32_t flag[N];
    uint32_t request[N];
    for (uint32_t i = 1; i < N; i++) {
        flag[i] = 1;
        CHECK_EQ(comm_iagree(harness_node(&h, i), COMM_WORLD, &flag[i], h.now_ns,
                             harness_begin(&h), &request[i]),
                 COMM_ERR_OK);
        harness_end(&h, i);
    }
    uint32_t most = 0;
    for (uint32_t k = 0; k < VIEWS; k++) {
        harness_run_for(&h, 1000000u); /* the children's offers wait at the root */
        uint32_t used = records_in_use(&h, 0);
        most = used > most ? used : most;
        harness_install(&h, MEMBERSHIP_EPOCH(2u + k, 0, 1), NULL, NULL);
        if (k == VIEWS - 2u) {
            /* node 1's next frame to the root: a message the root takes only
             * after the agree; the restarted round's offer goes behind it */
            static const uint32_t note = 7;
            uint32_t r;
            CHECK_EQ(isend(&h, 1, COMM_WORLD, 0, &note, sizeof note, &r), COMM_ERR_OK);
        }
    }
    /* only the current view's offers are kept (and node 1's message) */
    CHECK(most <= N - 1u + 1u);
    flag[0] = 1;
    CHECK_EQ(comm_iagree(harness_node(&h, 0), COMM_WORLD, &flag[0], h.now_ns, harness_begin(&h),
                         &request[0]),
             COMM_ERR_OK);
    harness_end(&h, 0);
    struct harness_requests rs;
    harness_requests_clear(&rs);
    for (uint32_t i = 0; i < N; i++) {
        harness_requests_add(&rs, i, request[i]);
    }
    CHECK(harness_requests_wait(&h, &rs, 2000000000u));
    for (uint32_t i = 0; i < N; i++) {
        CHECK_EQ(rs.status[i].error, COMM_ERR_OK);
        CHECK_EQ(flag[i], 1u);
    }
    uint32_t got = 0;
    uint32_t r;
    CHECK_EQ(irecv(&h, 0, COMM_WORLD, 1, &got, sizeof got, &r), COMM_ERR_OK);
    harness_requests_clear(&rs);
    harness_requests_add(&rs, 0, r);
    CHECK(harness_requests_wait(&h, &rs, 2000000000u));
    CHECK_EQ(got, 7u);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Collectives' records at a node (unexpected parts of collectives). */
static uint32_t collective_records(struct harness *h, uint32_t node)
{
    const struct comm *c = harness_node(h, node);
    uint32_t count = 0;
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_UNEXPECTED; i++) {
        count += c->records[i].state != 0 &&
                 (c->records[i].context & COMM_CONTEXT_COLLECTIVE) != 0;
    }
    return count;
}

#define COUNT_MAX (CONFIG_COMM_REDUCE_MAX / 8)
static int64_t cut_in[MAX_N][COUNT_MAX];
static int64_t cut_out[MAX_N][COUNT_MAX];

/*
 * The same for a strict allreduce a failure cut: the parts of a member's
 * children that reached it before it called the allreduce wait there as
 * unexpected records, and once the communicator is DETECTED no collective
 * runs on it (the allreduce goes on as a result round, in the recovery
 * space): nothing ever took them, and nothing freed them.  Here node 0
 * (the root) is late in every allreduce: each failure left its four
 * children's 2 KB parts in its pool, which was full after eight failures
 * and the record table after sixteen; a live member's message to it then
 * got WAIT, and the next allreduce's part behind it in the same stream
 * never arrived.  Under CONT a live pair's message that waits for its
 * receive must stay.  Some cycles cut the allreduce with the children's
 * parts still in flight: resent in the new view, they must not be kept
 * either.
 */
static void test_cut_collective_records(uint64_t seed)
{
    enum { N = 40, CYCLES = CONFIG_COMM_MAX_UNEXPECTED / 4 + 4, COUNT = COUNT_MAX };
    _Static_assert(N - CYCLES > 16, "node 0 keeps four children to the end");
    struct harness h;
    harness_init(&h, N, N, seed);
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_CONT);
    uint64_t counter = 1;
    harness_install(&h, MEMBERSHIP_EPOCH(counter, 0, 1), NULL, NULL);
    bool live[N];
    uint32_t cur[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = true;
        cur[i] = COMM_WORLD;
        for (uint32_t k = 0; k < COUNT; k++) {
            cut_in[i][k] = (int64_t)i;
        }
    }
    uint32_t most = 0;
    uint32_t victim = N;
    bool stuck = false;
    for (uint32_t cycle = 0; cycle < CYCLES && !stuck; cycle++) {
        int failures = check_failures;
        /* a live pair's message, taken after the failure (CONT) */
        static uint32_t note;
        note = cycle + 100u;
        uint32_t r;
        CHECK_EQ(isend(&h, 2, cur[2], 0, &note, sizeof note, &r), COMM_ERR_OK);
        struct harness_requests in_allreduce;
        harness_requests_clear(&in_allreduce);
        for (uint32_t i = 1; i < N; i++) {
            if (!live[i]) {
                continue;
            }
            CHECK_EQ(comm_iallreduce(harness_node(&h, i), cur[i], cut_in[i], cut_out[i], COUNT,
                                     COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, i);
            if (i != victim - 1u) { /* it fails below */
                harness_requests_add(&in_allreduce, i, r);
            }
        }
        /* every fourth cycle the view comes while the parts are on the way */
        harness_run_for(&h, cycle % 4u == 3u ? 25000u + cycle * 1000u : 2000000u);
        victim--;
        remove_nodes(&h, MEMBERSHIP_EPOCH(++counter, 0, 1), &victim, 1, live);
        harness_run_for(&h, 5000000u); /* parts still in flight arrive, resent */
        uint32_t used = collective_records(&h, 0);
        most = used > most ? used : most;
        uint32_t got = 0;
        struct harness_requests rs;
        harness_requests_clear(&rs);
        CHECK_EQ(irecv(&h, 0, cur[0], 2, &got, sizeof got, &r), COMM_ERR_OK);
        harness_requests_add(&rs, 0, r);
        CHECK(harness_requests_wait(&h, &rs, LIMIT_NS));
        CHECK_EQ(rs.status[0].error, COMM_ERR_OK);
        CHECK_EQ(got, cycle + 100u);
        /* node 0 goes to the shrink (abstaining from the allreduce's result
         * round), the others once their allreduce failed */
        uint32_t next[N];
        struct harness_requests shrinks;
        harness_requests_clear(&shrinks);
        CHECK_EQ(comm_ishrink(harness_node(&h, 0), cur[0], h.now_ns, harness_begin(&h), &next[0],
                              &r),
                 COMM_ERR_OK);
        harness_end(&h, 0);
        harness_requests_add(&shrinks, 0, r);
        CHECK(harness_requests_wait(&h, &in_allreduce, LIMIT_NS));
        for (uint32_t k = 0; k < in_allreduce.count; k++) {
            uint32_t i = in_allreduce.node[k];
            CHECK_EQ(in_allreduce.status[k].error, COMM_ERR_PROC_FAILED);
            enum comm_error e;
            do { /* BUSY while this node's slots drain */
                e = comm_ishrink(harness_node(&h, i), cur[i], h.now_ns, harness_begin(&h),
                                 &next[i], &r);
                harness_end(&h, i);
            } while (e == COMM_ERR_BUSY && harness_step(&h));
            CHECK_EQ(e, COMM_ERR_OK);
            harness_requests_add(&shrinks, i, r);
        }
        CHECK(harness_requests_wait(&h, &shrinks, LIMIT_NS));
        /* the old communicator goes once nothing of it can be in flight
         * (CONFIG_COMM_MAX_COMMS would not hold one per failure) */
        harness_run_for(&h, 50000000u);
        for (uint32_t k = 0; k < shrinks.count; k++) {
            uint32_t i = shrinks.node[k];
            CHECK_EQ(shrinks.status[k].error, COMM_ERR_OK);
            if (cur[i] != COMM_WORLD) {
                enum comm_error e;
                while ((e = comm_free(harness_node(&h, i), cur[i])) == COMM_ERR_BUSY &&
                       harness_step(&h)) {
                }
                CHECK_EQ(e, COMM_ERR_OK);
            }
            cur[i] = next[i];
        }
        if (check_failures != failures) { /* the rest would only repeat it */
            const struct comm *c0 = harness_node(&h, 0);
            fprintf(stderr, "cycle %u: node 0 holds %u records, %u of %u pool blocks free\n",
                    cycle, records_in_use(&h, 0), c0->free_blocks, COMM_POOL_BLOCKS);
            stuck = true;
        }
    }
    /* none outlived its view */
    CHECK_EQ(most, 0u);
    if (stuck) {
        harness_free(&h);
        return;
    }
    /* node 1's message to the root, taken after the allreduce: the root's
     * part from node 1 goes behind it in the same stream */
    static const uint32_t last = 7;
    uint32_t r;
    CHECK_EQ(isend(&h, 1, cur[1], 0, &last, sizeof last, &r), COMM_ERR_OK);
    harness_run_for(&h, 1000000u);
    struct harness_requests rs;
    harness_requests_clear(&rs);
    for (uint32_t i = 0; i < N; i++) {
        if (live[i]) {
            CHECK_EQ(comm_iallreduce(harness_node(&h, i), cur[i], cut_in[i], cut_out[i], COUNT,
                                     COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, i);
            harness_requests_add(&rs, i, r);
        }
    }
    CHECK(harness_requests_wait(&h, &rs, 2000000000u));
    int64_t sum = 0;
    for (uint32_t i = 0; i < N; i++) {
        sum += live[i] ? (int64_t)i : 0;
    }
    for (uint32_t k = 0; k < rs.count; k++) {
        CHECK_EQ(rs.status[k].error, COMM_ERR_OK);
        CHECK_EQ(cut_out[rs.node[k]][COUNT - 1], sum);
    }
    uint32_t got = 0;
    CHECK_EQ(irecv(&h, 0, cur[0], 1, &got, sizeof got, &r), COMM_ERR_OK);
    harness_requests_clear(&rs);
    harness_requests_add(&rs, 0, r);
    CHECK(harness_requests_wait(&h, &rs, 2000000000u));
    CHECK_EQ(got, 7u);
    CHECK_EQ(harness_node(&h, 0)->free_blocks, COMM_POOL_BLOCKS);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* node's result round of its own (not a background one), or NULL. */
static const struct comm_collective *result_round(struct harness *h, uint32_t node)
{
    const struct comm *c = harness_node(h, node);
    for (uint32_t k = 0; k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
        const struct comm_collective *cc = &c->colls[k];
        if (cc->state != 0 && !cc->background && cc->kind == COLL_RESULT) {
            return cc;
        }
    }
    return NULL;
}

/* A member still in a strict allreduce's result round after the others
 * learnt its decision and went on to rebuild (each holding two collective
 * slots: the rebuild and its abstention from the next collective) gets the
 * decision served in the next view, and everyone finishes the rebuild.
 * The abstention once kept its slot and the kept decision was never
 * served: the member waited for it, the rebuild for the member
 * (tori-sim --dims 4x4x4 --heartbeat-ns 300800 --link-detect-ns 10000
 * --app allreduce --iterations 20 --comm-mode shrink
 * --inject 'kill 0 at 3384567ns; kill 20 at 3922888ns'). */
static void test_decision_served_while_rebuilding(uint64_t seed)
{
    enum { N = 8 };
    struct harness h;
    harness_init(&h, N, N, seed);
    h.loss_percent = 3;
    h.delay_max_ns = 100000u;
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_NOP);
    uint64_t counter = 1;
    harness_install(&h, MEMBERSHIP_EPOCH(counter, 0, 1), NULL, NULL);
    static int64_t one[N];
    static int64_t sum[N];
    struct harness_requests reqs;
    uint32_t r;
    for (uint32_t pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            harness_hang(&h, 3); /* it never takes part in the second */
        }
        harness_requests_clear(&reqs);
        for (uint32_t i = 0; i < N; i++) {
            one[i] = 1;
            CHECK_EQ(comm_iallreduce(harness_node(&h, i), COMM_WORLD, &one[i], &sum[i], 1,
                                     COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, i);
            if (i != 3) {
                harness_requests_add(&reqs, i, r);
            }
        }
        if (pass == 0) {
            CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        }
    }
    harness_run_for(&h, 1000000u);
    bool live[N] = {true, true, true, true, true, true, true, true};
    uint32_t gone = 3;
    remove_nodes(&h, MEMBERSHIP_EPOCH(++counter, 0, 1), &gone, 1, live);
    /* the last rank, a leaf of the result round, is held once its offer
     * went up: the decision reaches every member but it (and its parent,
     * whose broadcast to it is never acknowledged) */
    const uint32_t held = N - 1;
    const struct comm_collective *round = result_round(&h, held);
    CHECK(round != NULL);
    if (round == NULL) {
        harness_free(&h);
        return;
    }
    CHECK_EQ(round->child_count, 0);
    while (round->state != 0 && round->step == 0 && harness_step(&h)) {
    }
    CHECK(round->step >= 1);
    uint32_t parent = round->nodes[CONFIG_COMM_TREE_RADIX];
    harness_hang(&h, held);
    struct harness_requests others;
    harness_requests_clear(&others);
    for (uint32_t k = 0; k < reqs.count; k++) {
        if (reqs.node[k] != held && reqs.node[k] != parent) {
            harness_requests_add(&others, reqs.node[k], reqs.handle[k]);
        }
    }
    CHECK(harness_requests_wait(&h, &others, LIMIT_NS));
    /* they go on to rebuild: the rebuild and the abstention take both slots */
    uint32_t comm[N];
    struct harness_requests rebuilds;
    harness_requests_clear(&rebuilds);
    for (uint32_t k = 0; k < others.count; k++) {
        uint32_t i = others.node[k];
        CHECK_EQ(others.status[k].error, COMM_ERR_PROC_FAILED); /* nobody had the result */
        enum comm_error e;
        do { /* BUSY while this node's slots drain */
            e = comm_irebuild(harness_node(&h, i), COMM_WORLD, h.now_ns, harness_begin(&h),
                              &comm[i], &r);
            harness_end(&h, i);
        } while (e == COMM_ERR_BUSY && harness_step(&h));
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(&rebuilds, i, r);
    }
    harness_run_for(&h, 1000000u);
    /* another member fails; the held one comes back */
    uint32_t victim = 1;
    while (victim == parent || victim == 3 || victim == held) {
        victim++;
    }
    harness_hang(&h, victim);
    remove_nodes(&h, MEMBERSHIP_EPOCH(++counter, 0, 1), &victim, 1, live);
    harness_resume(&h, held);
    struct harness_requests late;
    harness_requests_clear(&late);
    for (uint32_t k = 0; k < reqs.count; k++) {
        if (reqs.node[k] == held || reqs.node[k] == parent) {
            harness_requests_add(&late, reqs.node[k], reqs.handle[k]);
        }
    }
    CHECK(harness_requests_wait(&h, &late, LIMIT_NS)); /* the decision was served */
    for (uint32_t k = 0; k < late.count; k++) {
        uint32_t i = late.node[k];
        CHECK_EQ(late.status[k].error, COMM_ERR_PROC_FAILED); /* the same as the others' */
        enum comm_error e;
        do {
            e = comm_irebuild(harness_node(&h, i), COMM_WORLD, h.now_ns, harness_begin(&h),
                              &comm[i], &r);
            harness_end(&h, i);
        } while (e == COMM_ERR_BUSY && harness_step(&h));
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(&rebuilds, i, r);
    }
    struct harness_requests survivors;
    harness_requests_clear(&survivors);
    for (uint32_t k = 0; k < rebuilds.count; k++) {
        if (rebuilds.node[k] != victim) {
            harness_requests_add(&survivors, rebuilds.node[k], rebuilds.handle[k]);
        }
    }
    CHECK(harness_requests_wait(&h, &survivors, LIMIT_NS));
    for (uint32_t k = 0; k < survivors.count; k++) {
        CHECK_EQ(survivors.status[k].error, COMM_ERR_OK);
    }
    check_one_map(&h, comm, live);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ---- freeing ---- */

/* Nodes 0..count-1 dup comm into out[]. */
static void dup_all_of(struct harness *h, const uint32_t *comm, uint32_t count, uint32_t *out)
{
    static struct harness_requests rs;
    harness_requests_clear(&rs);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t r;
        CHECK_EQ(comm_idup(harness_node(h, i), comm[i], h->now_ns, harness_begin(h), &r),
                 COMM_ERR_OK);
        harness_end(h, i);
        harness_requests_add(&rs, i, r);
    }
    CHECK(harness_requests_wait(h, &rs, LIMIT_NS));
    for (uint32_t k = 0; k < rs.count; k++) {
        CHECK_EQ(rs.status[k].error, COMM_ERR_OK);
        out[rs.node[k]] = rs.status[k].comm;
    }
}

/* Every node dups comm into out[]. */
static void dup_all(struct harness *h, const uint32_t *comm, uint32_t *out)
{
    dup_all_of(h, comm, h->n, out);
}

/*
 * A freed communicator's frame that comes after its context id went to a
 * new communicator (resent late: here its first DATA frame, captured on
 * the wire, comes again in its sender's stream at the next sequence
 * number) is dropped and counted, not matched: its context generation is
 * the freed one's.  Without generations the new communicator's receive of
 * the same rank and tag took it (the simulator's wrong totals after
 * freeing, comm/DESIGN.md "Freeing a communicator").  A freed one's late
 * REVOKE does not revoke its successor either.
 */
static void test_freed_context_reused(void)
{
    enum { N = 3 };
    struct harness h;
    harness_init(&h, N, N, 1530);
    harness_install(&h, MEMBERSHIP_EPOCH(1, 0, 1), NULL, NULL);
    const uint32_t world[N] = {COMM_WORLD, COMM_WORLD, COMM_WORLD};
    uint32_t a[N];
    uint32_t b[N];
    dup_all(&h, world, a);
    uint8_t context = harness_node(&h, 0)->comms[a[0] & 0xffu].context;
    /* node 1 sends on A to rank 0: its DATA frame is captured */
    static const uint32_t stale = 111;
    uint32_t r;
    CHECK_EQ(isend(&h, 1, a[1], 0, &stale, sizeof stale, &r), COMM_ERR_OK);
    static uint8_t copy[COMM_MAX_PAYLOAD];
    uint32_t copy_length = 0;
    for (uint32_t i = 0; i < h.heap_count; i++) {
        struct comm_frame f;
        if (h.heap[i].source == 1 && h.heap[i].destination == 0 &&
            comm_decode(h.heap[i].payload, h.heap[i].length, &f) == COMM_DECODE_OK &&
            f.kind == COMM_KIND_DATA && (f.flags & COMM_FLAG_FIRST) != 0 &&
            f.context == context) {
            memcpy(copy, h.heap[i].payload, h.heap[i].length);
            copy_length = h.heap[i].length;
        }
    }
    CHECK(copy_length > 0);
    struct harness_requests rs;
    harness_requests_clear(&rs);
    harness_requests_add(&rs, 1, r);
    CHECK(harness_requests_wait(&h, &rs, LIMIT_NS)); /* unexpected at node 0 */
    for (uint32_t i = 0; i < N; i++) {
        CHECK_EQ(comm_free(harness_node(&h, i), a[i]), COMM_ERR_OK);
        CHECK_EQ(comm_free(harness_node(&h, i), a[i]), COMM_ERR_COMM); /* the handle is gone */
    }
    dup_all(&h, world, b);
    struct comm *c0 = harness_node(&h, 0);
    CHECK_EQ(c0->comms[b[0] & 0xffu].context, context); /* the id is taken again */
    /* node 0 waits for rank 1 on B; A's frame comes next in 1's stream */
    uint32_t got = 0;
    uint32_t recv;
    CHECK_EQ(irecv(&h, 0, b[0], 1, &got, sizeof got, &recv), COMM_ERR_OK);
    uint32_t slot = CONFIG_COMM_MAX_PEERS;
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_PEERS; i++) {
        if (c0->peers[i].node == 1) {
            slot = i;
        }
    }
    CHECK(slot < CONFIG_COMM_MAX_PEERS);
    if (slot < CONFIG_COMM_MAX_PEERS) {
        le_put_u32(copy + COMM_HEADER_SIZE + 4u, c0->peers[slot].rx_expected); /* seq */
        uint32_t drops = c0->counters.drops_stale_context;
        comm_receive(c0, 1, c0->epoch, copy, copy_length, h.now_ns, harness_begin(&h));
        harness_end(&h, 0);
        harness_run_for(&h, 1000000u);
        struct comm_status status;
        CHECKF(!comm_test(c0, recv, &status), "B's receive took A's frame (got %u)", got);
        CHECK_EQ(got, 0u);
        CHECK_EQ(c0->counters.drops_stale_context, drops + 1u);
        /* A's revoke, late: B stays usable */
        struct comm_frame f;
        memset(&f, 0, sizeof f);
        f.kind = COMM_KIND_REVOKE;
        f.sender_incarnation = harness_node(&h, 1)->incarnation;
        f.context = context;
        f.context_gen = (uint16_t)(c0->comms[b[0] & 0xffu].context_gen - 1u);
        f.source_rank = 1; /* the revoker: node 1, rank 1 */
        f.seq = 1;
        uint8_t frame[COMM_MAX_PAYLOAD];
        size_t length = comm_encode(&f, frame, sizeof frame);
        CHECK(length > 0);
        comm_receive(c0, 1, c0->epoch, frame, length, h.now_ns, harness_begin(&h));
        harness_end(&h, 0);
        CHECK(!c0->comms[b[0] & 0xffu].revoked);
        CHECK_EQ(c0->counters.drops_stale_context, drops + 2u);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* The node API's rules for comm_free: WORLD and unknown handles refused,
 * an application request pending refuses it (BUSY) until it completes;
 * a dup of a dup freed in any order; slots come back (more creations than
 * CONFIG_COMM_MAX_COMMS). */
static void test_free_rules(void)
{
    enum { N = 2 };
    struct harness h;
    harness_init(&h, N, N, 1531);
    harness_install(&h, MEMBERSHIP_EPOCH(1, 0, 1), NULL, NULL);
    const uint32_t world[N] = {COMM_WORLD, COMM_WORLD};
    CHECK_EQ(comm_free(harness_node(&h, 0), COMM_WORLD), COMM_ERR_ARG);
    CHECK_EQ(comm_free(harness_node(&h, 0), COMM_NULL), COMM_ERR_COMM);
    uint32_t a[N];
    for (uint32_t round = 0; round < 3u * CONFIG_COMM_MAX_COMMS; round++) {
        dup_all(&h, world, a);
        uint32_t got = 0;
        uint32_t r;
        CHECK_EQ(irecv(&h, 0, a[0], 1, &got, sizeof got, &r), COMM_ERR_OK);
        CHECK_EQ(comm_free(harness_node(&h, 0), a[0]), COMM_ERR_BUSY);
        static const uint32_t value = 5;
        uint32_t s;
        CHECK_EQ(isend(&h, 1, a[1], 0, &value, sizeof value, &s), COMM_ERR_OK);
        struct harness_requests rs;
        harness_requests_clear(&rs);
        harness_requests_add(&rs, 0, r);
        harness_requests_add(&rs, 1, s);
        CHECK(harness_requests_wait(&h, &rs, LIMIT_NS));
        CHECK_EQ(got, 5u);
        for (uint32_t i = 0; i < N; i++) {
            CHECK_EQ(comm_free(harness_node(&h, i), a[i]), COMM_ERR_OK);
        }
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}


/* ---- the rebuild rides on the result round ---- */

/* Every world node but victim starts a strict allreduce on comm[]; the
 * victim hangs before it and a view removes it; the allreduces return
 * PROC_FAILED from their result round. */
static void cut_allreduce(struct harness *h, uint32_t world, const uint32_t *comm, uint32_t victim,
                          uint64_t epoch, bool *live)
{
    static int64_t one[MAX_N];
    static int64_t sum[MAX_N];
    static struct harness_requests reqs;
    harness_requests_clear(&reqs);
    harness_hang(h, victim);
    for (uint32_t i = 0; i < world; i++) {
        if (i == victim || !live[i]) {
            continue;
        }
        uint32_t r;
        one[i] = 1;
        CHECK_EQ(comm_iallreduce(harness_node(h, i), comm[i], &one[i], &sum[i], 1, COMM_INT64,
                                 COMM_SUM, h->now_ns, harness_begin(h), &r),
                 COMM_ERR_OK);
        harness_end(h, i);
        harness_requests_add(&reqs, i, r);
    }
    harness_run_for(h, 300000u);
    remove_nodes(h, epoch, &victim, 1, live);
    CHECK(harness_requests_wait(h, &reqs, LIMIT_NS));
    for (uint32_t k = 0; k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_PROC_FAILED); /* nobody had the result */
    }
}

/* The context id of the rebuild node's kept decision on comm carries (0:
 * none). */
static uint32_t carried_context(struct harness *h, uint32_t node, uint32_t comm)
{
    const struct comm_communicator *x = comm_const_slot(harness_node(h, node), comm);
    if (x == NULL || !x->decision_held || x->decision_kind != COLL_RESULT ||
        !ft_decision_carries(x->decision)) {
        return 0;
    }
    return (uint8_t)x->decision[1];
}

/*
 * After a cut strict allreduce, the application's rebuild (per mode; under
 * REBUILD a spare adopts) completes in the call itself: the result round
 * that failed the allreduce decided it (comm/DESIGN.md, "The rebuild rides
 * on the result round"), so no round of its own runs, and the new
 * communicator is one map everywhere and works.  On the old code the
 * rebuild was a round of its own after the result round: not done in the
 * call.
 */
static void test_rebuild_rides_result(uint64_t seed, enum comm_mode mode)
{
    enum { N = 9, WORLD = 8 }; /* node 8: a spare (REBUILD adopts it) */
    struct harness h;
    harness_init(&h, N, WORLD, seed);
    h.loss_percent = 2;
    h.delay_max_ns = 100000u;
    set_modes(&h, COMM_WORLD, mode, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    bool live[N] = {true, true, true, true, true, true, true, true, true};
    static struct harness_requests adopt;
    harness_requests_clear(&adopt);
    uint32_t comm[N];
    uint32_t r;
    if (mode == COMM_MODE_REBUILD) {
        CHECK_EQ(comm_iadopt(harness_node(&h, WORLD), h.now_ns, harness_begin(&h), &comm[WORLD],
                             &r),
                 COMM_ERR_OK);
        harness_end(&h, WORLD);
        harness_requests_add(&adopt, WORLD, r);
    }
    const uint32_t world[N] = {COMM_WORLD, COMM_WORLD, COMM_WORLD, COMM_WORLD, COMM_WORLD,
                               COMM_WORLD, COMM_WORLD, COMM_WORLD, COMM_WORLD};
    cut_allreduce(&h, WORLD, world, 5, 2, live);
    uint32_t context = carried_context(&h, 0, COMM_WORLD);
    CHECK(context != 0);
    for (uint32_t i = 0; i < WORLD; i++) {
        if (!live[i]) {
            continue;
        }
        CHECK_EQ(carried_context(&h, i, COMM_WORLD), context);
        struct comm *c = harness_node(&h, i);
        CHECK_EQ(comm_irebuild(c, COMM_WORLD, h.now_ns, harness_begin(&h), &comm[i], &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        CHECK(request_done(c, request_index(c, r))); /* done in the call */
        for (uint32_t k = 0; k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
            CHECK(c->colls[k].state == COLL_FREE || c->colls[k].kind != COLL_REBUILD);
        }
        harness_requests_add(&adopt, i, r);
    }
    live[WORLD] = mode == COMM_MODE_REBUILD;
    CHECK(harness_requests_wait(&h, &adopt, LIMIT_NS));
    for (uint32_t k = 0; k < adopt.count; k++) {
        CHECK_EQ(adopt.status[k].error, COMM_ERR_OK);
        comm[adopt.node[k]] = adopt.status[k].comm;
        if (adopt.node[k] < WORLD) {
            const struct comm_communicator *y =
                comm_const_slot(harness_node(&h, adopt.node[k]), comm[adopt.node[k]]);
            CHECK(y != NULL && y->context == context);
        }
    }
    check_one_map(&h, comm, live);
    /* the new communicator works: an allreduce over its members */
    static int64_t one[N];
    static int64_t sum[N];
    static struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < N; i++) {
        if (!live[i]) {
            continue;
        }
        one[i] = 1;
        CHECK_EQ(comm_iallreduce(harness_node(&h, i), comm[i], &one[i], &sum[i], 1, COMM_INT64,
                                 COMM_SUM, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&reqs, i, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    int64_t members = mode == COMM_MODE_REBUILD ? 8 : 7;
    for (uint32_t k = 0; k < reqs.count; k++) {
        CHECK_EQ(reqs.status[k].error, COMM_ERR_OK);
        CHECK_EQ(sum[reqs.node[k]], members);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

static uint32_t comms_in_use(struct harness *h, uint32_t node)
{
    uint32_t count = 0;
    for (uint32_t k = 0; k < CONFIG_COMM_MAX_COMMS; k++) {
        count += harness_node(h, node)->comms[k].in_use;
    }
    return count;
}

static bool context_bit(const uint64_t *set, uint32_t context)
{
    return ((set[context / 64u] >> (context % 64u)) & 1u) != 0;
}

/*
 * The context id a result round decided for the rebuild is reserved until
 * the application asks for it: a dup made meanwhile (on a communicator
 * without the failed member) takes another id, and the rebuild then gets
 * the decided one.  Without the reservation the dup took the decided id
 * (the lowest free everywhere) and the rebuild failed BUSY.  Then a job
 * that never rebuilds: the old communicator freed instead, no communicator
 * is made for the decision and its id is free again (the next dup takes
 * it).  On the old code no result round decided a rebuild.
 */
static void test_rebuild_context_reserved(uint64_t seed)
{
    enum { N = 8 };
    struct harness h;
    harness_init(&h, N, N, seed);
    set_modes(&h, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_NOP);
    harness_install(&h, 1, NULL, NULL);
    const uint32_t world[N] = {COMM_WORLD, COMM_WORLD, COMM_WORLD, COMM_WORLD,
                               COMM_WORLD, COMM_WORLD, COMM_WORLD, COMM_WORLD};
    /* x, x2: dups of WORLD (cut in turn); half: nodes 0..3, apart from
     * the failures */
    uint32_t x[N];
    uint32_t x2[N];
    dup_all(&h, world, x);
    dup_all(&h, world, x2);
    for (uint32_t i = 0; i < N; i++) { /* a dup takes the configured modes */
        CHECK_EQ(comm_set_mode(harness_node(&h, i), x[i], COMM_MODE_SHRINK, COMM_MSG_NOP),
                 COMM_ERR_OK);
        CHECK_EQ(comm_set_mode(harness_node(&h, i), x2[i], COMM_MODE_SHRINK, COMM_MSG_NOP),
                 COMM_ERR_OK);
    }
    static struct harness_requests rs;
    harness_requests_clear(&rs);
    uint32_t half[N];
    for (uint32_t i = 0; i < N; i++) {
        uint32_t r;
        CHECK_EQ(comm_isplit(harness_node(&h, i), COMM_WORLD, i < 4 ? 0 : COMM_UNDEFINED,
                             (int32_t)i, h.now_ns, harness_begin(&h), &r),
                 COMM_ERR_OK);
        harness_end(&h, i);
        harness_requests_add(&rs, i, r);
    }
    CHECK(harness_requests_wait(&h, &rs, LIMIT_NS));
    for (uint32_t k = 0; k < rs.count; k++) {
        half[rs.node[k]] = rs.status[k].comm;
    }
    bool live[N] = {true, true, true, true, true, true, true, true};

    /* x cut: a dup meanwhile takes another id; the rebuild the decided one */
    cut_allreduce(&h, N, x, 6, 2, live);
    uint32_t context = carried_context(&h, 0, x[0]);
    CHECK(context != 0);
    uint32_t d[N];
    dup_all_of(&h, half, 4, d);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ(carried_context(&h, i, x[i]), context);
        CHECK(comm_const_slot(harness_node(&h, i), d[i])->context != context);
    }
    uint32_t y[N];
    harness_requests_clear(&rs);
    for (uint32_t i = 0; i < N; i++) {
        if (!live[i]) {
            continue;
        }
        uint32_t r;
        struct comm *c = harness_node(&h, i);
        CHECK_EQ(comm_ishrink(c, x[i], h.now_ns, harness_begin(&h), &y[i], &r), COMM_ERR_OK);
        harness_end(&h, i);
        CHECK(request_done(c, request_index(c, r))); /* done in the call */
        harness_requests_add(&rs, i, r);
    }
    CHECK(harness_requests_wait(&h, &rs, LIMIT_NS));
    for (uint32_t k = 0; k < rs.count; k++) {
        uint32_t i = rs.node[k];
        struct comm *c = harness_node(&h, i);
        CHECK_EQ(rs.status[k].error, COMM_ERR_OK);
        y[i] = rs.status[k].comm;
        const struct comm_communicator *yc = comm_const_slot(c, y[i]);
        CHECK(yc != NULL && yc->context == context);
        CHECK_EQ(comm_free(c, x[i]), COMM_ERR_OK);
    }
    check_one_map(&h, y, live);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ(comm_free(harness_node(&h, i), d[i]), COMM_ERR_OK);
    }

    /* x2 cut, and the job never rebuilds it: nothing is made for the
     * decision, and its id is reserved only until x2 is freed */
    cut_allreduce(&h, N, x2, 7, 3, live);
    context = carried_context(&h, 0, x2[0]);
    CHECK(context != 0);
    dup_all_of(&h, half, 4, d);
    uint32_t before[N];
    for (uint32_t i = 0; i < 4; i++) {
        struct comm *c = harness_node(&h, i);
        CHECK(comm_const_slot(c, d[i])->context != context);
        CHECK_EQ(comm_free(c, d[i]), COMM_ERR_OK);
        CHECK(!context_bit(c->contexts_used, context)); /* nothing made */
        uint64_t taken[COMM_CONTEXT_WORDS];
        ft_contexts_taken(c, taken);
        CHECK(context_bit(taken, context)); /* reserved */
        before[i] = comms_in_use(&h, i);
    }
    for (uint32_t i = 0; i < N; i++) {
        if (live[i]) {
            CHECK_EQ(comm_free(harness_node(&h, i), x2[i]), COMM_ERR_OK);
        }
    }
    for (uint32_t i = 0; i < 4; i++) {
        struct comm *c = harness_node(&h, i);
        uint64_t taken[COMM_CONTEXT_WORDS];
        ft_contexts_taken(c, taken);
        CHECK(!context_bit(taken, context)); /* released with x2 */
        CHECK(comms_in_use(&h, i) <= before[i]);
    }
    dup_all_of(&h, half, 4, d);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ(comm_const_slot(harness_node(&h, i), d[i])->context, context);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

int main(void)
{
    test_view_opens_tree(COMM_MODE_SHRINK);
    test_view_opens_tree(COMM_MODE_BLANK);
    test_view_opens_spare();
    test_freed_context_reused();
    test_free_rules();
    for (uint64_t seed = 1600; seed < 1605; seed++) {
        test_rebuild_rides_result(seed, COMM_MODE_SHRINK);
        test_rebuild_rides_result(seed, COMM_MODE_BLANK);
        test_rebuild_rides_result(seed, COMM_MODE_REBUILD);
        test_rebuild_context_reserved(seed);
    }
    test_round_tag_names_view();
    test_stale_round_records();
    test_cut_collective_records(1520);
    test_cut_collective_records(1521);
    for (uint64_t seed = 1410; seed < 1420; seed++) {
        test_decision_served_while_rebuilding(seed);
    }
    for (uint64_t t = 0; t < 2000000u; t += 100000u) {
        test_background_ends(t);
    }
    test_round_view_lost();
    for (uint32_t kind = 0; kind < K_COUNT; kind++) {
        test_strict_cost(kind);
        test_strict_never_mixed(kind);
    }
    test_round_frames();
    test_result_handed_over();
    test_rebuild_rides_past_hand_over();
    test_revoke(6, UINT32_MAX, 1200);
    test_revoke(40, UINT32_MAX, 1201);
    test_revoke(40, 1, 1202); /* the root's first child, an inner node */
    test_revoke(40, 0, 1203); /* the tree's root */
    test_revoke_refused();
    for (uint64_t seed = 1; seed <= CAMPAIGN_RUNS; seed++) {
        campaign_run(0x5eed0000u + seed);
    }
    /* the campaign means something only if rounds were interrupted */
    printf("campaign: %u rebuilds, %u decided in a later view\n", campaign_rebuilds,
           campaign_restarted);
    CHECK(campaign_restarted > campaign_rebuilds / 4u);
    for (uint32_t i = 0; i < sizeof rebuild_cases / sizeof rebuild_cases[0]; i++) {
        test_rebuild_mode(&rebuild_cases[i]);
    }
    for (uint32_t i = 0; i < sizeof p2p_cases / sizeof p2p_cases[0]; i++) {
        test_p2p_modes(&p2p_cases[i]);
    }
    for (uint64_t seed = 1310; seed < 1320; seed++) {
        test_join_cuts_round(seed, COMM_MODE_SHRINK);
        test_join_cuts_round(seed, COMM_MODE_BLANK);
    }
    for (uint64_t seed = 1300; seed < 1305; seed++) {
        test_rejoined_stays_failed(seed);
        test_restart_readopts(seed, true);
        test_restart_readopts(seed, false);
        test_rebuild_pairs_mirror(seed, true);
        test_rebuild_pairs_mirror(seed, false);
    }
    for (uint64_t seed = 1200; seed < 1210; seed++) {
        test_strict_abstain(seed, COMM_MODE_SHRINK);
        test_strict_abstain(seed, COMM_MODE_REBUILD);
    }
    for (uint64_t seed = 1100; seed < 1160; seed++) {
        test_agree_uniform(seed, false);
        test_agree_uniform(seed, true);
    }
    CHECK(agree_failures_seen >= 120u); /* the failure reached every run's agrees */
    for (uint64_t seed = 1040; seed < 1060; seed++) {
        test_join_during(seed);
    }
    for (uint64_t seed = 1030; seed < 1040; seed++) {
        test_nop_fails_waiting(seed, COMM_MODE_SHRINK);
        test_nop_fails_waiting(seed, COMM_MODE_REBUILD);
    }
    test_abort_event();
    test_leave_orderly();
    test_failed_ranks_and_ack();
    return check_report("comm.ft");
}
