/*
 * tori-comm-loop (and tori-comm-loop-noft, the same program over the comm
 * core built with CONFIG_COMM_FT 0): the comm core's own cost when nothing
 * fails, on a loopback.  Every node's context lives in this process and
 * frames go straight from one outbox to the next node's comm_receive, in
 * order, none lost; time is virtual (it jumps to the next deadline only
 * when no frame is in flight), so the wall time measured is the cores'
 * CPU (and this loop's, the same in both builds).  It measures a 0-byte
 * ping-pong between two nodes, and allreduce (one int64 sum) and barrier
 * over --ranks nodes: messages (completed sends) and frames (acks, opens
 * included) per operation, and ns per operation.  `./tori bench recovery`
 * runs both programs in turn and quotes their ratio.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm.h"
#include "tools/cli.h"

#define TOOL "tori-comm-loop"

struct frame {
    uint32_t source, destination;
    uint64_t epoch;
    uint32_t length;
    uint8_t payload[COMM_MAX_PAYLOAD];
};

struct loop {
    uint32_t n;
    struct comm *nodes;
    struct frame *ring; /* frames in flight, FIFO */
    uint32_t capacity, head, count;
    uint64_t now_ns;
    struct comm_outbox out;
};

static void *must_calloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (p == NULL) {
        fprintf(stderr, TOOL ": out of memory\n");
        exit(2);
    }
    return p;
}

static struct comm_outbox *begin(struct loop *l)
{
    comm_outbox_clear(&l->out);
    return &l->out;
}

/* The frames node's call wrote go in flight. */
static void end(struct loop *l, uint32_t node)
{
    for (uint32_t i = 0; i < l->out.frame_count; i++) {
        if (l->count == l->capacity) {
            fprintf(stderr, TOOL ": more than %u frames in flight\n", l->capacity);
            exit(1);
        }
        struct frame *f = &l->ring[(l->head + l->count++) % l->capacity];
        f->source = node;
        f->destination = l->out.frames[i].destination;
        f->epoch = l->out.frames[i].epoch;
        f->length = l->out.frames[i].length;
        memcpy(f->payload, comm_outbox_payload(&l->out, i), f->length);
    }
}

static void loop_init(struct loop *l, uint32_t n)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    l->nodes = must_calloc(n, sizeof *l->nodes);
    l->capacity = 64u * n + 256u;
    l->ring = must_calloc(l->capacity, sizeof *l->ring);
    l->now_ns = 1000000000u;
    static struct membership_view view;
    membership_view_reset(&view, n);
    for (uint32_t i = 0; i < n; i++) {
        struct comm_config config;
        comm_config_defaults(&config); /* strict collectives with CONFIG_COMM_FT */
        config.node_id = i;
        config.node_count = n;
        config.world_size = n;
        config.incarnation = 1u + i;
        enum comm_init_status s = comm_init(&l->nodes[i], &config);
        if (s != COMM_INIT_OK) {
            fprintf(stderr, TOOL ": comm_init: %s\n", comm_init_status_text(s));
            exit(1);
        }
        membership_view_add(&view, i);
    }
    for (uint32_t i = 0; i < n; i++) {
        comm_install_view(&l->nodes[i], 1, &view, NULL, l->now_ns, begin(l));
        end(l, i);
    }
}

static void loop_free(struct loop *l)
{
    free(l->nodes);
    free(l->ring);
}

/* One step: the oldest frame delivered, or (none in flight) time moved to
 * the earliest deadline and every node due ticked.  False: nothing to do. */
static bool step(struct loop *l)
{
    if (l->count > 0) {
        struct frame *f = &l->ring[l->head];
        l->head = (l->head + 1u) % l->capacity;
        l->count--;
        comm_receive(&l->nodes[f->destination], f->source, f->epoch, f->payload, f->length,
                     l->now_ns, begin(l));
        end(l, f->destination);
        return true;
    }
    uint64_t next = COMM_NEVER;
    for (uint32_t i = 0; i < l->n; i++) {
        uint64_t d = comm_next_deadline(&l->nodes[i]);
        next = d < next ? d : next;
    }
    if (next == COMM_NEVER)
        return false;
    if (next > l->now_ns)
        l->now_ns = next;
    for (uint32_t i = 0; i < l->n; i++) {
        if (comm_next_deadline(&l->nodes[i]) <= l->now_ns) {
            comm_tick(&l->nodes[i], l->now_ns, begin(l));
            end(l, i);
        }
    }
    return true;
}

/* Runs until every request[i] of node[i] (COMM_REQUEST_NULL: done) completed OK. */
static void wait_all(struct loop *l, const uint32_t *node, uint32_t *request, uint32_t count)
{
    for (;;) {
        bool all = true;
        for (uint32_t i = 0; i < count; i++) {
            if (request[i] == COMM_REQUEST_NULL)
                continue;
            struct comm_status status;
            if (!comm_test(&l->nodes[node[i]], request[i], &status)) {
                all = false;
                continue;
            }
            if (status.error != COMM_ERR_OK) {
                fprintf(stderr, TOOL ": request failed: %s\n", comm_error_text(status.error));
                exit(1);
            }
            request[i] = COMM_REQUEST_NULL;
        }
        if (all)
            return;
        if (!step(l)) {
            fprintf(stderr, TOOL ": stuck: requests pending, nothing in flight or due\n");
            exit(1);
        }
    }
}

static void check(enum comm_error e, const char *what)
{
    if (e != COMM_ERR_OK) {
        fprintf(stderr, TOOL ": %s: %s\n", what, comm_error_text(e));
        exit(1);
    }
}

struct totals {
    uint64_t messages, frames;
};

static struct totals totals(const struct loop *l)
{
    struct totals t = {0, 0};
    for (uint32_t i = 0; i < l->n; i++) {
        t.messages += comm_get_counters(&l->nodes[i])->messages_sent;
        t.frames += comm_get_counters(&l->nodes[i])->frames_sent;
    }
    return t;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct figures {
    double ns, messages, frames; /* per operation */
};

/* 0-byte round trips between nodes 0 and 1 of a 2-node loop. */
static struct figures pingpong(uint32_t iterations)
{
    static struct loop l;
    loop_init(&l, 2);
    uint8_t byte = 0;
    struct totals before = totals(&l);
    double start = now_ns();
    for (uint32_t k = 0; k < iterations; k++) {
        uint32_t nodes[3] = {0, 1, 0}, r[3];
        check(comm_irecv(&l.nodes[1], COMM_WORLD, 0, 1, &byte, 0, l.now_ns, begin(&l), &r[1]),
              "irecv");
        end(&l, 1);
        check(comm_isend(&l.nodes[0], COMM_WORLD, 1, 1, &byte, 0, l.now_ns, begin(&l), &r[0]),
              "isend");
        end(&l, 0);
        check(comm_irecv(&l.nodes[0], COMM_WORLD, 1, 2, &byte, 0, l.now_ns, begin(&l), &r[2]),
              "irecv");
        end(&l, 0);
        wait_all(&l, &nodes[1], &r[1], 1);
        uint32_t back;
        check(comm_isend(&l.nodes[1], COMM_WORLD, 0, 2, &byte, 0, l.now_ns, begin(&l), &back),
              "isend");
        end(&l, 1);
        uint32_t last[3] = {r[0], back, r[2]}, last_nodes[3] = {0, 1, 0};
        wait_all(&l, last_nodes, last, 3);
    }
    double span = now_ns() - start;
    struct totals after = totals(&l);
    loop_free(&l);
    struct figures f = {span / iterations, (double)(after.messages - before.messages) / iterations,
                        (double)(after.frames - before.frames) / iterations};
    return f;
}

/* allreduce (one int64 sum) or barrier over n nodes. */
static struct figures collective(uint32_t n, uint32_t iterations, bool barrier)
{
    static struct loop l;
    loop_init(&l, n);
    int64_t *value = must_calloc(2u * n, sizeof *value);
    uint32_t *nodes = must_calloc(n, sizeof *nodes), *r = must_calloc(n, sizeof *r);
    struct totals before = totals(&l);
    double start = now_ns();
    for (uint32_t k = 0; k < iterations; k++) {
        for (uint32_t i = 0; i < n; i++) {
            nodes[i] = i;
            value[2u * i] = (int64_t)i;
            enum comm_error e =
                barrier ? comm_ibarrier(&l.nodes[i], COMM_WORLD, l.now_ns, begin(&l), &r[i])
                        : comm_iallreduce(&l.nodes[i], COMM_WORLD, &value[2u * i],
                                          &value[2u * i + 1u], 1, COMM_INT64, COMM_SUM,
                                          l.now_ns, begin(&l), &r[i]);
            check(e, barrier ? "ibarrier" : "iallreduce");
            end(&l, i);
        }
        wait_all(&l, nodes, r, n);
        if (!barrier && value[1] != (int64_t)n * (n - 1u) / 2) {
            fprintf(stderr, TOOL ": allreduce gave %lld\n", (long long)value[1]);
            exit(1);
        }
    }
    /* the last acks: a collective's sends complete when acknowledged */
    while (step(&l)) {
    }
    double span = now_ns() - start;
    struct totals after = totals(&l);
    loop_free(&l);
    free(value);
    free(nodes);
    free(r);
    struct figures f = {span / iterations, (double)(after.messages - before.messages) / iterations,
                        (double)(after.frames - before.frames) / iterations};
    return f;
}

static void usage(FILE *out)
{
    fputs("usage: " TOOL " [--ranks N] [--iterations K]\n"
          "\n"
          "The comm core's cost when nothing fails, every node in this process (frames\n"
          "handed on in order, virtual time): a 0-byte ping-pong between two nodes, and\n"
          "allreduce and barrier over N nodes (16), K times each (20000).  Prints one\n"
          "JSON line: ns, messages and frames per operation, and whether this build has\n"
          "the failure semantics (ft, CONFIG_COMM_FT).\n",
          out);
}

int main(int argc, char **argv)
{
    cli_whole_lines();
    const char *ranks_text = NULL, *iterations_text = NULL;
    const struct cli_option options[] = {
        {"--ranks", &ranks_text, NULL},
        {"--iterations", &iterations_text, NULL},
    };
    char error[256];
    enum cli_scan_result scan =
        cli_scan(argc, argv, options, sizeof options / sizeof options[0], error, sizeof error);
    if (scan == CLI_SCAN_HELP) {
        usage(stdout);
        return 0;
    }
    if (scan != CLI_SCAN_OK) {
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    }
    unsigned ranks = 16, iterations = 20000;
    const struct cli_unsigned_option numbers[] = {
        {"--ranks", ranks_text, 2, 1024, &ranks},
        {"--iterations", iterations_text, 1, 10000000, &iterations},
    };
    if (!cli_parse_unsigned_options(numbers, sizeof numbers / sizeof numbers[0], error,
                                    sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    }
    struct figures p = pingpong(iterations);
    struct figures a = collective(ranks, iterations, false);
    struct figures b = collective(ranks, iterations, true);
    printf("{\"tool\":\"comm-loop\",\"ft\":%d,\"ranks\":%u,\"iterations\":%u,"
           "\"pingpong_ns\":%.1f,\"pingpong_messages\":%.3f,\"pingpong_frames\":%.3f,"
           "\"allreduce_ns\":%.1f,\"allreduce_messages\":%.3f,\"allreduce_frames\":%.3f,"
           "\"barrier_ns\":%.1f,\"barrier_messages\":%.3f,\"barrier_frames\":%.3f}\n",
           CONFIG_COMM_FT, ranks, iterations, p.ns, p.messages, p.frames, a.ns, a.messages,
           a.frames, b.ns, b.messages, b.frames);
    return 0;
}
