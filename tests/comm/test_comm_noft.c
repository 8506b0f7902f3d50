/*
 * The comm core with and without its failure semantics (CONFIG_COMM_FT):
 * built twice, as comm.noft over the core built with CONFIG_COMM_FT 0
 * (tori_comm_noft) and as comm.ft_build over the default core, each
 * checking what its build promises.
 *
 * - Messages per collective when nothing fails, with the config's
 *   defaults: without FT exactly the plain tree's (2 (N - 1) for
 *   allreduce, barrier and allgather, N - 1 for reduce and gather); with
 *   FT, strict collectives: the same for allreduce and barrier (a result
 *   round runs only after a failure), one agree more (2 (N - 1)) for
 *   reduce, gather and allgather.
 * - Without FT, every mode but ABORT / NOP and strict collectives are
 *   refused (comm_init, comm_set_mode), the recovery calls return
 *   UNSUPPORTED, and a job block asking for another mode is refused
 *   (kernel/job.c, built the same way); with FT they are all there.
 * - A failure ends the job as ABORT does, in both builds: an ABORT event
 *   at every survivor, a receive waiting on the communicator fails.
 * - The failure machinery's fast path: while nothing fails, no node ever
 *   scans its communicators for failure work (counters.ft_scans stays 0
 *   through collectives and a ping-pong); after a failure, with FT, it does.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/job.h"
#include "tests/check.h"
#include "tests/comm/harness.h"

#define LIMIT_NS 60000000000ull

enum { K_ALLREDUCE, K_BARRIER, K_REDUCE, K_GATHER, K_ALLGATHER, K_COUNT };
static const char *const kind_names[K_COUNT] = {"allreduce", "barrier", "reduce", "gather",
                                                "allgather"};

static uint8_t send_bytes[64][8];
static uint8_t recv_bytes[64][64 * 8];

static enum comm_error start(struct harness *h, uint32_t node, uint32_t kind, uint32_t *r)
{
    struct comm *c = harness_node(h, node);
    struct comm_outbox *out = harness_begin(h);
    enum comm_error e;
    memset(send_bytes[node], 0, 8);
    send_bytes[node][0] = (uint8_t)node;
    switch (kind) {
    case K_ALLREDUCE:
        e = comm_iallreduce(c, COMM_WORLD, send_bytes[node], recv_bytes[node], 1, COMM_INT64,
                            COMM_SUM, h->now_ns, out, r);
        break;
    case K_BARRIER:
        e = comm_ibarrier(c, COMM_WORLD, h->now_ns, out, r);
        break;
    case K_REDUCE:
        e = comm_ireduce(c, COMM_WORLD, 0, send_bytes[node], recv_bytes[node], 1, COMM_INT64,
                         COMM_SUM, h->now_ns, out, r);
        break;
    case K_GATHER:
        e = comm_igather(c, COMM_WORLD, 0, send_bytes[node], 8, recv_bytes[node], h->now_ns, out,
                         r);
        break;
    default:
        e = comm_iallgather(c, COMM_WORLD, send_bytes[node], 8, recv_bytes[node], h->now_ns, out,
                            r);
        break;
    }
    harness_end(h, node);
    return e;
}

/* Messages sent for one collective of kind over n nodes, config defaults. */
static uint64_t messages_for(uint32_t kind, uint32_t n)
{
    struct harness h;
    harness_init(&h, n, n, 7000u + kind);
    harness_install(&h, 1, NULL, NULL);
    struct harness_requests reqs;
    harness_requests_clear(&reqs);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r;
        CHECK_EQ(start(&h, i, kind, &r), COMM_ERR_OK);
        harness_requests_add(&reqs, i, r);
    }
    CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
    for (uint32_t i = 0; i < n; i++) {
        CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
    }
    harness_run_for(&h, 10000000u); /* the last acknowledgments */
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += comm_get_counters(harness_node(&h, i))->messages_sent;
        CHECK_EQ(comm_get_counters(harness_node(&h, i))->ft_scans, 0); /* nothing failed */
    }
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
    return total;
}

static void test_messages(void)
{
    for (uint32_t n = 2; n <= 40; n += 19) {
        for (uint32_t kind = 0; kind < K_COUNT; kind++) {
            uint64_t plain = kind == K_REDUCE || kind == K_GATHER ? n - 1u : 2u * (n - 1u);
            bool agree = CONFIG_COMM_FT && kind != K_ALLREDUCE && kind != K_BARRIER;
            uint64_t got = messages_for(kind, n);
            CHECK_EQ(got, plain + (agree ? 2u * (n - 1u) : 0u));
            printf("%s over %u ranks: %llu messages (plain tree %llu)\n", kind_names[kind], n,
                   (unsigned long long)got, (unsigned long long)plain);
        }
    }
}

/* 0-byte round trips between ranks 0 and 1 of 4, nothing failing: the
 * failure machinery costs its checks, never a scan of the communicators. */
static void test_quiet_pingpong(void)
{
    struct harness h;
    harness_init(&h, 4, 4, 7300);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t byte[2];
    for (uint32_t k = 0; k < 50; k++) {
        struct harness_requests reqs;
        harness_requests_clear(&reqs);
        uint32_t r;
        for (uint32_t leg = 0; leg < 2; leg++) {
            uint32_t from = leg, to = 1u - leg;
            CHECK_EQ(comm_irecv(harness_node(&h, to), COMM_WORLD, from, (int32_t)leg,
                                &byte[to], 0, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, to);
            harness_requests_add(&reqs, to, r);
            CHECK_EQ(comm_isend(harness_node(&h, from), COMM_WORLD, to, (int32_t)leg,
                                &byte[from], 0, h.now_ns, harness_begin(&h), &r),
                     COMM_ERR_OK);
            harness_end(&h, from);
            harness_requests_add(&reqs, from, r);
            CHECK(harness_requests_wait(&h, &reqs, LIMIT_NS));
        }
        for (uint32_t i = 0; i < reqs.count; i++) {
            CHECK_EQ(reqs.status[i].error, COMM_ERR_OK);
        }
    }
    harness_run_for(&h, 10000000u);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ(comm_get_counters(harness_node(&h, i))->ft_scans, 0);
    }
    CHECK_EQ(comm_get_counters(harness_node(&h, 0))->messages_sent, 50);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

static void test_refused(void)
{
    struct comm_config config;
    comm_config_defaults(&config);
    CHECK_EQ(config.strict_collectives, CONFIG_COMM_FT != 0);
    config.node_count = 4;
    config.world_size = 4;
    static struct comm ctx;
    enum comm_init_status want = CONFIG_COMM_FT ? COMM_INIT_OK : COMM_INIT_NO_FT;
    config.comm_mode = COMM_MODE_SHRINK;
    CHECK_EQ(comm_init(&ctx, &config), want);
    config.comm_mode = COMM_MODE_ABORT;
    config.msg_mode = COMM_MSG_CONT;
    CHECK_EQ(comm_init(&ctx, &config), want);
    config.msg_mode = COMM_MSG_NOP;
    config.strict_collectives = true;
    CHECK_EQ(comm_init(&ctx, &config), want);
    config.strict_collectives = false;
    CHECK_EQ(comm_init(&ctx, &config), COMM_INIT_OK);
    CHECK(strlen(comm_init_status_text(COMM_INIT_NO_FT)) > 10);

    struct harness h;
    harness_init(&h, 4, 4, 7100);
    harness_install(&h, 1, NULL, NULL);
    struct comm *c = harness_node(&h, 0);
    struct comm_outbox *out = harness_begin(&h);
    enum comm_error unsupported = CONFIG_COMM_FT ? COMM_ERR_OK : COMM_ERR_UNSUPPORTED;
    CHECK_EQ(comm_set_mode(c, COMM_WORLD, COMM_MODE_ABORT, COMM_MSG_NOP), COMM_ERR_OK);
    CHECK_EQ(comm_set_mode(c, COMM_WORLD, COMM_MODE_SHRINK, COMM_MSG_NOP), unsupported);
    CHECK_EQ(comm_set_mode(c, COMM_WORLD, COMM_MODE_ABORT, COMM_MSG_CONT), unsupported);
    CHECK_EQ(comm_set_mode(c, COMM_WORLD, COMM_MODE_ABORT, COMM_MSG_NOP), COMM_ERR_OK);
    CHECK_EQ(comm_failure_ack(c, COMM_WORLD), unsupported);
    uint32_t ranks[4], count = 0, flag = 1, made = 0, r = 0;
    CHECK_EQ(comm_failure_get_acked(c, COMM_WORLD, ranks, 4, &count), unsupported);
    /* with FT: ABORT has nothing to rebuild (ARG); shrink and agree start */
    CHECK_EQ(comm_irebuild(c, COMM_WORLD, h.now_ns, out, &made, &r),
             CONFIG_COMM_FT ? COMM_ERR_ARG : COMM_ERR_UNSUPPORTED);
    CHECK(CONFIG_COMM_FT ? comm_ishrink(c, COMM_WORLD, h.now_ns, out, &made, &r) != COMM_ERR_UNSUPPORTED
                         : comm_ishrink(c, COMM_WORLD, h.now_ns, out, &made, &r) == COMM_ERR_UNSUPPORTED);
    harness_end(&h, 0);
    struct comm *d = harness_node(&h, 1);
    CHECK(CONFIG_COMM_FT ? comm_iagree(d, COMM_WORLD, &flag, h.now_ns, harness_begin(&h), &r) != COMM_ERR_UNSUPPORTED
                         : comm_iagree(d, COMM_WORLD, &flag, h.now_ns, harness_begin(&h), &r) == COMM_ERR_UNSUPPORTED);
    harness_end(&h, 1);
    CHECK(CONFIG_COMM_FT ? comm_iadopt(d, h.now_ns, harness_begin(&h), &made, &r) == COMM_ERR_ARG
                         : comm_iadopt(d, h.now_ns, harness_begin(&h), &made, &r) == COMM_ERR_UNSUPPORTED);
    harness_end(&h, 1);
    struct comm *e = harness_node(&h, 2);
    CHECK_EQ(comm_revoke(e, COMM_WORLD, h.now_ns, harness_begin(&h)), unsupported);
    harness_end(&h, 2);
    /* the detail call stays: it names the failed ranks for the abort */
    uint64_t epoch = 0;
    CHECK_EQ(comm_failed_ranks(c, COMM_WORLD, ranks, 4, &count, &epoch), COMM_ERR_OK);
    CHECK_EQ(count, 0);
    harness_free(&h);

    /* the job block: kernel/job.c built alike */
    struct job job;
    memset(&job, 0, sizeof job);
    job.app = 1;
    job.iterations = 10;
    struct personality_error why;
    CHECK(job_validate(&job, &why));
    job.comm_mode = JOB_COMM_SHRINK;
    CHECK_EQ(job_validate(&job, &why), CONFIG_COMM_FT != 0);
    job.comm_mode = JOB_COMM_ABORT;
    job.message_mode = JOB_MESSAGE_CONT;
    CHECK_EQ(job_validate(&job, &why), CONFIG_COMM_FT != 0);
    if (!CONFIG_COMM_FT) {
        char line[200];
        job_format_error(&why, line, sizeof line);
        CHECK(strstr(line, "CONFIG_COMM_FT=0") != NULL);
        printf("refused: %s\n", line);
    }
}

/* A member fails: every survivor hears ABORT, a receive waiting on it fails. */
static void test_failure_aborts(void)
{
    enum { N = 6 };
    struct harness h;
    harness_init(&h, N, N, 7200);
    harness_install(&h, 1, NULL, NULL);
    static uint8_t buffer[8];
    uint32_t r;
    CHECK_EQ(comm_irecv(harness_node(&h, 0), COMM_WORLD, 1, 5, buffer, 8, h.now_ns,
                        harness_begin(&h), &r),
             COMM_ERR_OK);
    harness_end(&h, 0);
    bool live[N];
    for (uint32_t i = 0; i < N; i++) {
        live[i] = i != 4;
    }
    harness_install(&h, 2, live, live);
    harness_run_for(&h, 1000000u);
    for (uint32_t i = 0; i < N; i++) {
        CHECK_EQ(h.aborts[i], i == 4 ? 0u : 1u);
        /* with FT a failure sets the machinery to work: it scans then */
        uint32_t scans = comm_get_counters(harness_node(&h, i))->ft_scans;
        CHECK(CONFIG_COMM_FT && i != 4 ? scans > 0 : scans == 0);
    }
    struct comm_status status;
    CHECK(comm_test(harness_node(&h, 0), r, &status));
    CHECK_EQ(status.error, COMM_ERR_PROC_FAILED);
    CHECK_EQ(comm_state_of(harness_node(&h, 0), COMM_WORLD), COMM_STATE_DETECTED);
    CHECK_EQ(h.errors, 0);
    harness_free(&h);
}

int main(void)
{
    printf("CONFIG_COMM_FT=%d\n", CONFIG_COMM_FT);
    test_messages();
    test_quiet_pingpong();
    test_refused();
    test_failure_aborts();
    return check_report(CONFIG_COMM_FT ? "comm.ft_build" : "comm.noft");
}
