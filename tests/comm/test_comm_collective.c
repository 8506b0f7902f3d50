/*
 * Collectives on the test network, on odd sizes (1, 3, 7, 64 ranks and a
 * few others): barrier (nobody leaves before the last arrives), broadcast,
 * reduce and allreduce with every op and type (exact answers, and the same
 * bits at every rank and on every run whatever the network did), gather
 * and allgather at several roots and block sizes, dup and split, two
 * collectives at once, loss, duplication and reordering, argument errors,
 * and a member that leaves during a collective (every rank gets the error,
 * none hangs).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "tests/check.h"
#include "tests/comm/harness.h"

#define LIMIT_NS 60000000000ull
#define MAX_N 64
#define MAX_COUNT (CONFIG_COMM_REDUCE_MAX / 8)

static const uint32_t sizes[] = {1, 2, 3, 5, 7, 17, 64};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

static void network(struct harness *h, unsigned loss)
{
    h->loss_percent = loss;
    h->duplicate_percent = loss;
    h->delay_max_ns = loss > 0 ? 500000u : 50000u;
}

/* ---- reduce and allreduce ---- */

static int64_t int_value(uint32_t rank, uint32_t i)
{
    return (int64_t)((rank * 7919u + i * 104729u) % 1000003u) - 500000;
}

static double exact_double(uint32_t rank, uint32_t i)
{
    return ((double)(rank * 3u + i) - 40.0) * 0.5; /* sums of these are exact */
}

static double rounding_double(uint32_t rank, uint32_t i)
{
    return 0.1 * (double)(rank + 1u) * (double)(i + 1u) + 1e-3 / (double)(rank + 2u);
}

static int64_t send_int[MAX_N][MAX_COUNT];
static int64_t recv_int[MAX_N][MAX_COUNT];
static double send_double[MAX_N][MAX_COUNT];
static double recv_double[MAX_N][MAX_COUNT];

/* Runs a reduce (root < n) or an allreduce (root == n) on every rank. */
static bool run_reduce(struct harness *h, uint32_t n, uint32_t root, uint32_t count,
                       enum comm_type type, enum comm_op op)
{
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < n; r++) {
        const void *send = type == COMM_INT64 ? (const void *)send_int[r] : send_double[r];
        void *recv = type == COMM_INT64 ? (void *)recv_int[r] : recv_double[r];
        uint32_t req;
        enum comm_error e;
        if (root == n) {
            e = comm_iallreduce(harness_node(h, r), COMM_WORLD, send, recv, count, type, op,
                                h->now_ns, harness_begin(h), &req);
        } else {
            e = comm_ireduce(harness_node(h, r), COMM_WORLD, root, send, r == root ? recv : NULL,
                             count, type, op, h->now_ns, harness_begin(h), &req);
        }
        harness_end(h, r);
        CHECK_EQ(e, COMM_ERR_OK);
        harness_requests_add(&reqs, r, req);
    }
    bool done = harness_requests_wait(h, &reqs, LIMIT_NS);
    CHECKF(done, "reduce n=%u root=%u did not finish", n, root);
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    return done;
}

static void test_reduce_exact(uint32_t n, unsigned loss, uint64_t seed)
{
    struct harness h;
    harness_init(&h, n, n, seed);
    network(&h, loss);
    harness_install(&h, 1, NULL, NULL);
    const uint32_t counts[] = {1, 3, MAX_COUNT};
    for (uint32_t ci = 0; ci < 3; ci++) {
        uint32_t count = counts[ci];
        for (uint32_t r = 0; r < n; r++) {
            for (uint32_t i = 0; i < count; i++) {
                send_int[r][i] = int_value(r, i);
                send_double[r][i] = exact_double(r, i);
            }
        }
        for (int type = 0; type < 2; type++) {
            for (int op = COMM_SUM; op <= COMM_MAX; op++) {
                uint32_t roots[3] = {n, 0, n - 1}; /* allreduce, then reduce at two roots */
                for (uint32_t ri = 0; ri < 3; ri++) {
                    uint32_t root = roots[ri];
                    memset(recv_int, 0x5a, sizeof recv_int);
                    memset(recv_double, 0x5a, sizeof recv_double);
                    if (!run_reduce(&h, n, root, count, (enum comm_type)type, (enum comm_op)op)) {
                        harness_free(&h);
                        return;
                    }
                    for (uint32_t i = 0; i < count; i++) {
                        int64_t ei = int_value(0, i);
                        double ed = exact_double(0, i);
                        for (uint32_t r = 1; r < n; r++) {
                            int64_t vi = int_value(r, i);
                            double vd = exact_double(r, i);
                            ei = op == COMM_SUM ? ei + vi : op == COMM_MIN ? (vi < ei ? vi : ei)
                                                                          : (vi > ei ? vi : ei);
                            ed = op == COMM_SUM ? ed + vd : op == COMM_MIN ? (vd < ed ? vd : ed)
                                                                          : (vd > ed ? vd : ed);
                        }
                        for (uint32_t r = 0; r < n; r++) {
                            if (root != n && r != root) {
                                continue;
                            }
                            if (type == COMM_INT64) {
                                CHECKF(recv_int[r][i] == ei,
                                       "n=%u root=%u op=%d count=%u rank %u [%u]: %lld != %lld", n,
                                       root, op, count, r, i, (long long)recv_int[r][i],
                                       (long long)ei);
                            } else {
                                CHECKF(recv_double[r][i] == ed,
                                       "n=%u root=%u op=%d count=%u rank %u [%u]: %g != %g", n,
                                       root, op, count, r, i, recv_double[r][i], ed);
                            }
                        }
                    }
                    if (check_failures > 20) {
                        harness_free(&h);
                        return;
                    }
                }
            }
        }
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Sums that round: every rank gets the same bits, and so does a second run
 * over a network that loses, duplicates and reorders (the combining order
 * is the tree's, not the arrival order).
 */
static void test_reduce_deterministic(uint32_t n)
{
    static double first[MAX_COUNT];
    for (int run = 0; run < 2; run++) {
        struct harness h;
        harness_init(&h, n, n, 1000u + (uint64_t)run);
        network(&h, run == 0 ? 0u : 15u);
        harness_install(&h, 1, NULL, NULL);
        for (uint32_t r = 0; r < n; r++) {
            for (uint32_t i = 0; i < 8; i++) {
                send_double[r][i] = rounding_double(r, i);
            }
        }
        if (run_reduce(&h, n, n, 8, COMM_DOUBLE, COMM_SUM)) {
            for (uint32_t r = 0; r < n; r++) {
                CHECKF(memcmp(recv_double[r], recv_double[0], 8 * sizeof(double)) == 0,
                       "n=%u: rank %u's sum differs from rank 0's", n, r);
            }
            if (run == 0) {
                memcpy(first, recv_double[0], 8 * sizeof(double));
            } else {
                CHECKF(memcmp(first, recv_double[0], 8 * sizeof(double)) == 0,
                       "n=%u: the sum changed with the network", n);
            }
            double plain = 0;
            for (uint32_t r = 0; r < n; r++) {
                plain += rounding_double(r, 7);
            }
            CHECK(fabs(recv_double[0][7] - plain) < 1e-9 * fabs(plain));
        }
        CHECK_EQ(h.errors, 0);
        harness_free(&h);
    }
}

/* ---- broadcast ---- */

static uint8_t bcast_buffer[MAX_N][65536];

static void test_bcast(uint32_t n, unsigned loss, uint64_t seed)
{
    struct harness h;
    harness_init(&h, n, n, seed);
    network(&h, loss);
    harness_install(&h, 1, NULL, NULL);
    const uint32_t lengths[] = {0, 1, 100, 5000, 65536};
    for (uint32_t li = 0; li < 5; li++) {
        uint32_t length = lengths[li];
        if (n == 64 && length == 65536 && loss == 0) {
            continue; /* done under loss below */
        }
        uint32_t roots[2] = {0, n / 2};
        for (uint32_t ri = 0; ri < 2; ri++) {
            uint32_t root = roots[ri];
            struct harness_requests reqs;
            harness_requests_clear(&reqs);
            for (uint32_t r = 0; r < n; r++) {
                for (uint32_t i = 0; i < length; i++) {
                    bcast_buffer[r][i] = r == root ? (uint8_t)(i * 7u + root) : 0xee;
                }
                uint32_t req;
                CHECK_EQ(comm_ibcast(harness_node(&h, r), COMM_WORLD, root, bcast_buffer[r],
                                     length, h.now_ns, harness_begin(&h), &req),
                         COMM_ERR_OK);
                harness_end(&h, r);
                harness_requests_add(&reqs, r, req);
            }
            CHECKF(harness_requests_wait(&h, &reqs, LIMIT_NS), "bcast n=%u len=%u", n, length);
            for (uint32_t r = 0; r < n; r++) {
                CHECK_EQ(reqs.status[r].error, COMM_ERR_OK);
                CHECKF(memcmp(bcast_buffer[r], bcast_buffer[root], length) == 0,
                       "bcast n=%u root=%u len=%u: rank %u differs", n, root, length, r);
            }
        }
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ---- barrier ---- */

static void test_barrier(uint32_t n)
{
    struct harness h;
    harness_init(&h, n, n, 300u + n);
    network(&h, 0);
    harness_install(&h, 1, NULL, NULL);
    struct harness_requests early;
    harness_requests_clear(&early);
    uint32_t late = n / 2;
    for (uint32_t r = 0; r < n; r++) {
        if (r == late) {
            continue;
        }
        uint32_t req;
        CHECK_EQ(comm_ibarrier(harness_node(&h, r), COMM_WORLD, h.now_ns, harness_begin(&h), &req),
                 COMM_ERR_OK);
        harness_end(&h, r);
        harness_requests_add(&early, r, req);
    }
    harness_run_for(&h, 50000000u);
    harness_requests_poll(&h, &early);
    for (uint32_t i = 0; i < early.count; i++) {
        CHECKF(!early.done[i], "n=%u: rank %u left the barrier before rank %u came", n,
               early.node[i], late);
    }
    uint32_t req;
    CHECK_EQ(comm_ibarrier(harness_node(&h, late), COMM_WORLD, h.now_ns, harness_begin(&h), &req),
             COMM_ERR_OK);
    harness_end(&h, late);
    harness_requests_add(&early, late, req);
    CHECK(harness_requests_wait(&h, &early, LIMIT_NS));
    for (uint32_t i = 0; i < early.count; i++) {
        CHECK_EQ(early.status[i].error, COMM_ERR_OK);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/*
 * Ranks that come late: a 64 KiB broadcast and a 34 kB allgather whose
 * messages reach most ranks before they call the collective (too large for
 * the pool: deferred, then GRANTed when the rank calls), under loss.
 */
static uint8_t late_buffer[17][65536]; /* the broadcast; the allgather uses 34,000 */

static void test_staggered(unsigned loss)
{
    enum { N = 17, BLOCK = 2000 };
    struct harness h;
    harness_init(&h, N, N, 400u + loss);
    network(&h, loss);
    harness_install(&h, 1, NULL, NULL);
    for (int round = 0; round < 2; round++) {
        struct harness_requests reqs;
        harness_requests_clear(&reqs);
        for (uint32_t k = 0; k < N; k++) {
            uint32_t r = (3u + k) % N; /* the root first, then the others */
            for (uint32_t i = 0; i < sizeof late_buffer[r]; i++) {
                late_buffer[r][i] = round == 0 && r == 3 ? (uint8_t)(i * 5u) : 0xee;
            }
            uint8_t block[BLOCK];
            for (uint32_t i = 0; i < BLOCK; i++) {
                block[i] = (uint8_t)(r + i);
            }
            uint32_t req;
            enum comm_error e;
            if (round == 0) {
                e = comm_ibcast(harness_node(&h, r), COMM_WORLD, 3, late_buffer[r], 65536,
                                h.now_ns, harness_begin(&h), &req);
            } else {
                e = comm_iallgather(harness_node(&h, r), COMM_WORLD, block, BLOCK,
                                    late_buffer[r], h.now_ns, harness_begin(&h), &req);
            }
            harness_end(&h, r);
            CHECK_EQ(e, COMM_ERR_OK);
            harness_requests_add(&reqs, r, req);
            harness_run_for(&h, 3000000u);
        }
        CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        for (uint32_t i = 0; i < reqs.count; i++) {
            CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        }
        for (uint32_t r = 0; r < N; r++) {
            if (round == 0) {
                CHECKF(memcmp(late_buffer[r], late_buffer[3], 65536) == 0,
                       "late bcast: rank %u differs", r);
                continue;
            }
            for (uint32_t s = 0; s < N; s++) {
                bool same = true;
                for (uint32_t i = 0; i < BLOCK; i++) {
                    same = same && late_buffer[r][s * BLOCK + i] == (uint8_t)(s + i);
                }
                CHECKF(same, "late allgather: rank %u's block %u is wrong", r, s);
            }
        }
    }
    uint32_t deferred = 0;
    for (uint32_t r = 0; r < N; r++) {
        deferred += comm_get_counters(harness_node(&h, r))->deferred_messages;
    }
    CHECK(deferred > 0);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ---- gather and allgather ---- */

static uint8_t gather_send[MAX_N][128];
static uint8_t gather_recv[MAX_N][MAX_N * 128];

static void test_gather(uint32_t n, unsigned loss, uint64_t seed)
{
    struct harness h;
    harness_init(&h, n, n, seed);
    network(&h, loss);
    harness_install(&h, 1, NULL, NULL);
    const uint32_t blocks[] = {1, 16, 100};
    for (uint32_t bi = 0; bi < 3; bi++) {
        uint32_t block = blocks[bi];
        for (uint32_t r = 0; r < n; r++) {
            for (uint32_t i = 0; i < block; i++) {
                gather_send[r][i] = (uint8_t)(r * 3u + i * 11u + block);
            }
        }
        uint32_t roots[4] = {0, 2 % n, n - 1, n}; /* n: allgather */
        for (uint32_t ri = 0; ri < 4; ri++) {
            uint32_t root = roots[ri];
            memset(gather_recv, 0xee, sizeof gather_recv);
            struct harness_requests reqs;
            harness_requests_clear(&reqs);
            for (uint32_t r = 0; r < n; r++) {
                uint32_t req;
                enum comm_error e;
                if (root == n) {
                    e = comm_iallgather(harness_node(&h, r), COMM_WORLD, gather_send[r], block,
                                        gather_recv[r], h.now_ns, harness_begin(&h), &req);
                } else {
                    e = comm_igather(harness_node(&h, r), COMM_WORLD, root, gather_send[r], block,
                                     r == root ? gather_recv[r] : NULL, h.now_ns,
                                     harness_begin(&h), &req);
                }
                harness_end(&h, r);
                CHECK_EQ(e, COMM_ERR_OK);
                harness_requests_add(&reqs, r, req);
            }
            CHECKF(harness_requests_wait(&h, &reqs, LIMIT_NS), "gather n=%u root=%u", n, root);
            for (uint32_t r = 0; r < n; r++) {
                CHECK_EQ(reqs.status[r].error, COMM_ERR_OK);
                if (root != n && r != root) {
                    continue;
                }
                for (uint32_t s = 0; s < n; s++) {
                    CHECKF(memcmp(gather_recv[r] + s * block, gather_send[s], block) == 0,
                           "gather n=%u root=%u block=%u: rank %u's block %u is wrong", n, root,
                           block, r, s);
                }
                CHECK(gather_recv[r][n * block] == 0xee);
            }
            if (check_failures > 20) {
                harness_free(&h);
                return;
            }
        }
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* ---- dup and split ---- */

static uint32_t start_split(struct harness *h, uint32_t n, int32_t (*color)(uint32_t),
                            int32_t (*key)(uint32_t), uint32_t *comms)
{
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < n; r++) {
        uint32_t req;
        CHECK_EQ(comm_isplit(harness_node(h, r), COMM_WORLD, color(r), key(r), h->now_ns,
                             harness_begin(h), &req),
                 COMM_ERR_OK);
        harness_end(h, r);
        harness_requests_add(&reqs, r, req);
    }
    CHECK(harness_requests_wait(h, &reqs, LIMIT_NS));
    uint32_t made = 0;
    for (uint32_t r = 0; r < n; r++) {
        CHECK_EQ(reqs.status[r].error, COMM_ERR_OK);
        comms[r] = reqs.status[r].comm;
        made += comms[r] != COMM_NULL;
    }
    return made;
}

static int32_t color_mod3(uint32_t r) { return (int32_t)(r % 3u); }
static int32_t key_reverse(uint32_t r) { return -(int32_t)r; }
static int32_t color_block8(uint32_t r) { return (int32_t)(r / 8u); }
static int32_t key_same(uint32_t r) { return (int32_t)r; }
static int32_t key_scrambled(uint32_t r) { return (int32_t)((r * 37u) % 64u); }
static int32_t color_some_out(uint32_t r) { return r % 4u == 3u ? COMM_UNDEFINED : 1; }
static int32_t key_zero(uint32_t r) { (void)r; return 0; }

static void check_split(struct harness *h, uint32_t n, int32_t (*color)(uint32_t),
                        int32_t (*key)(uint32_t))
{
    uint32_t comms[MAX_N];
    start_split(h, n, color, key, comms);
    for (uint32_t r = 0; r < n; r++) {
        if (color(r) == COMM_UNDEFINED) {
            CHECK_EQ(comms[r], COMM_NULL);
            continue;
        }
        /* expected: same color, ordered by (key, rank) */
        uint32_t size = 0;
        uint32_t rank = 0;
        for (uint32_t s = 0; s < n; s++) {
            if (color(s) != color(r)) {
                continue;
            }
            size++;
            if (key(s) < key(r) || (key(s) == key(r) && s < r)) {
                rank++;
            }
        }
        CHECK_EQ(comm_size(harness_node(h, r), comms[r]), size);
        CHECK_EQ(comm_rank(harness_node(h, r), comms[r]), rank);
        CHECK_EQ(comm_node_of(harness_node(h, r), comms[r], rank), r);
    }
    /* an allreduce over each new communicator sums its members' ids */
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < n; r++) {
        if (comms[r] == COMM_NULL) {
            continue;
        }
        send_int[r][0] = r;
        uint32_t req;
        CHECK_EQ(comm_iallreduce(harness_node(h, r), comms[r], send_int[r], recv_int[r], 1,
                                 COMM_INT64, COMM_SUM, h->now_ns, harness_begin(h), &req),
                 COMM_ERR_OK);
        harness_end(h, r);
        harness_requests_add(&reqs, r, req);
    }
    CHECK(harness_requests_wait(h, &reqs, LIMIT_NS));
    for (uint32_t r = 0; r < n; r++) {
        if (comms[r] == COMM_NULL) {
            continue;
        }
        int64_t expected = 0;
        for (uint32_t s = 0; s < n; s++) {
            expected += color(s) == color(r) ? (int64_t)s : 0;
        }
        CHECKF(recv_int[r][0] == expected, "split: rank %u got %lld, expected %lld", r,
               (long long)recv_int[r][0], (long long)expected);
    }
    for (uint32_t r = 0; r < n; r++) {
        if (comms[r] != COMM_NULL) {
            CHECK_EQ(comm_free(harness_node(h, r), comms[r]), COMM_ERR_OK);
        }
    }
}

static void test_split(void)
{
    struct harness h;
    harness_init(&h, 7, 7, 501);
    harness_install(&h, 1, NULL, NULL);
    check_split(&h, 7, color_mod3, key_reverse);
    check_split(&h, 7, color_some_out, key_zero);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
    harness_init(&h, 64, 64, 502);
    network(&h, 5);
    harness_install(&h, 1, NULL, NULL);
    check_split(&h, 64, color_block8, key_same);
    check_split(&h, 64, color_block8, key_scrambled);
    check_split(&h, 64, color_mod3, key_reverse);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* Two collectives at once, on WORLD and on a dup; a third is BUSY. */
static void test_concurrent(void)
{
    enum { N = 7 };
    struct harness h;
    harness_init(&h, N, N, 601);
    network(&h, 0);
    harness_install(&h, 1, NULL, NULL);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < N; r++) {
        uint32_t req;
        comm_idup(harness_node(&h, r), COMM_WORLD, h.now_ns, harness_begin(&h), &req);
        harness_end(&h, r);
        harness_requests_add(&reqs, r, req);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    uint32_t dup = reqs.status[0].comm;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < N; r++) {
        send_int[r][0] = r + 1;
        send_int[r][1] = 10 * (r + 1);
        uint32_t req;
        CHECK_EQ(comm_iallreduce(harness_node(&h, r), COMM_WORLD, &send_int[r][0],
                                 &recv_int[r][0], 1, COMM_INT64, COMM_SUM, h.now_ns,
                                 harness_begin(&h), &req),
                 COMM_ERR_OK);
        harness_end(&h, r);
        harness_requests_add(&reqs, r, req);
        CHECK_EQ(comm_iallreduce(harness_node(&h, r), dup, &send_int[r][1], &recv_int[r][1], 1,
                                 COMM_INT64, COMM_MAX, h.now_ns, harness_begin(&h), &req),
                 COMM_ERR_OK);
        harness_end(&h, r);
        harness_requests_add(&reqs, r, req);
        uint32_t third;
        CHECK_EQ(comm_ibarrier(harness_node(&h, r), COMM_WORLD, h.now_ns, harness_begin(&h),
                               &third),
                 COMM_ERR_BUSY);
        harness_end(&h, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t r = 0; r < N; r++) {
        CHECK_EQ(recv_int[r][0], N * (N + 1) / 2);
        CHECK_EQ(recv_int[r][1], 10 * N);
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

static void test_arguments(void)
{
    struct harness h;
    harness_init(&h, 3, 3, 701);
    harness_install(&h, 1, NULL, NULL);
    struct comm *c = harness_node(&h, 0);
    uint32_t req;
    int64_t v[MAX_COUNT + 1];
    CHECK_EQ(comm_iallreduce(c, COMM_WORLD, v, v, MAX_COUNT + 1, COMM_INT64, COMM_SUM, h.now_ns,
                             harness_begin(&h), &req),
             COMM_ERR_COUNT);
    CHECK_EQ(comm_ireduce(c, COMM_WORLD, 3, v, v, 1, COMM_INT64, COMM_SUM, h.now_ns,
                          harness_begin(&h), &req),
             COMM_ERR_RANK);
    CHECK_EQ(comm_iallreduce(c, COMM_WORLD, v, v, 1, COMM_DOUBLE, COMM_BOR, h.now_ns,
                             harness_begin(&h), &req),
             COMM_ERR_ARG);
    CHECK_EQ(comm_ibcast(c, COMM_WORLD, 0, NULL, 5, h.now_ns, harness_begin(&h), &req),
             COMM_ERR_ARG);
    CHECK_EQ(comm_iallgather(c, COMM_WORLD, v, CONFIG_COMM_MAX_MESSAGE, v, h.now_ns,
                             harness_begin(&h), &req),
             COMM_ERR_COUNT);
    CHECK_EQ(comm_isplit(c, COMM_WORLD, -5, 0, h.now_ns, harness_begin(&h), &req), COMM_ERR_ARG);
    CHECK_EQ(comm_ibarrier(c, 0x999, h.now_ns, harness_begin(&h), &req), COMM_ERR_COMM);
    CHECK_EQ(req, COMM_REQUEST_NULL);
    harness_end(&h, 0);
    /* Sizes that differ between ranks: the ranks that see it say so. */
    uint8_t b[3][100];
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < 3; r++) {
        CHECK_EQ(comm_ibcast(harness_node(&h, r), COMM_WORLD, 0, b[r], r == 0 ? 100 : 50,
                             h.now_ns, harness_begin(&h), &req),
                 COMM_ERR_OK);
        harness_end(&h, r);
        harness_requests_add(&reqs, r, req);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    CHECK_EQ(reqs.status[1].error, COMM_ERR_MISMATCH);
    CHECK_EQ(reqs.status[2].error, COMM_ERR_MISMATCH);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

/* A member hangs during an allreduce and the view drops it: every other
 * rank's allreduce ends with PROC_FAILED (none waits forever). */
static void test_member_leaves_during(void)
{
    enum { N = 7, GONE = 5 };
    struct harness h;
    harness_init(&h, N, N, 801);
    network(&h, 0);
    harness_install(&h, 1, NULL, NULL);
    harness_hang(&h, GONE);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < N; r++) {
        if (r == GONE) {
            continue;
        }
        uint32_t req;
        send_int[r][0] = 1;
        CHECK_EQ(comm_iallreduce(harness_node(&h, r), COMM_WORLD, send_int[r], recv_int[r], 1,
                                 COMM_INT64, COMM_SUM, h.now_ns, harness_begin(&h), &req),
                 COMM_ERR_OK);
        harness_end(&h, r);
        harness_requests_add(&reqs, r, req);
    }
    harness_run_for(&h, 100000000u);
    CHECK(!harness_requests_poll(&h, &reqs));
    bool live[N];
    for (uint32_t r = 0; r < N; r++) {
        live[r] = r != GONE;
    }
    harness_install(&h, 2, live, live);
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < reqs.count; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_PROC_FAILED);
    }
    /* the slots are free again: a collective on a fresh split works */
    uint32_t comms[N];
    harness_requests_clear(&reqs);
    for (uint32_t r = 0; r < N; r++) {
        uint32_t req;
        if (r == GONE) {
            continue;
        }
        CHECK_EQ(comm_isplit(harness_node(&h, r), COMM_WORLD, 0, 0, h.now_ns, harness_begin(&h),
                             &req),
                 COMM_ERR_PROC_FAILED); /* WORLD is DETECTED until rebuilt */
        harness_end(&h, r);
    }
    (void)comms;
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

int main(void)
{
    for (uint32_t i = 0; i < SIZE_COUNT; i++) {
        test_reduce_exact(sizes[i], 0, 10u + i);
    }
    test_reduce_exact(7, 15, 31);
    test_reduce_exact(64, 10, 32);
    test_reduce_deterministic(7);
    test_reduce_deterministic(64);
    for (uint32_t i = 0; i < SIZE_COUNT; i++) {
        test_bcast(sizes[i], 0, 100u + i);
        test_gather(sizes[i], 0, 200u + i);
        test_barrier(sizes[i]);
    }
    test_bcast(64, 10, 150);
    test_gather(64, 10, 250);
    test_gather(7, 20, 251);
    test_staggered(0);
    test_staggered(10);
    test_split();
    test_concurrent();
    test_arguments();
    test_member_leaves_during();
    return check_report("comm.collective");
}
