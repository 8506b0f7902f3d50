/*
 * A test network for the comm core: N contexts in one process, frames
 * delivered in virtual time with seeded loss, duplication and reordering
 * (each frame gets a random delay), and nodes that hang (receive nothing,
 * run no timer, and keep the frames they had queued until they resume).
 *
 * Calls into a node go through harness_begin (a cleared outbox) and
 * harness_end (its frames go on the network, its events are counted).
 */
#ifndef TESTS_COMM_HARNESS_H
#define TESTS_COMM_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "comm/comm.h"
#include "tests/check.h"

struct harness_frame {
    uint64_t deliver_ns;
    uint64_t order; /* ties broken by sending order */
    uint32_t source;
    uint32_t destination;
    uint64_t epoch;
    uint32_t length;
    uint8_t payload[COMM_MAX_PAYLOAD];
};

struct harness {
    uint32_t n;
    struct comm *nodes;
    struct comm_outbox out;
    struct check_rng rng;
    uint64_t now_ns;
    /* network behaviour */
    unsigned loss_percent;
    unsigned duplicate_percent;
    uint64_t delay_min_ns;
    uint64_t delay_max_ns;
    /* frames in flight: a binary heap on (deliver_ns, order) */
    struct harness_frame *heap;
    uint32_t heap_count;
    uint32_t heap_capacity;
    uint64_t next_order;
    /* frames held for hung nodes */
    struct harness_frame *held;
    uint32_t held_count;
    uint32_t held_capacity;
    bool *hung;
    /* what happened */
    uint64_t delivered;
    uint64_t lost;
    uint64_t duplicated;
    uint32_t *suspects;        /* SUSPECT events per node */
    uint32_t *detected;        /* DETECTED events per node */
    uint32_t *aborts;          /* ABORT events per node */
    uint32_t *revokes;         /* REVOKED events per node */
    uint32_t *suspected_node;  /* last node each node suspected */
    uint32_t errors;           /* the harness's own failures: tests check it is 0 */
};

/* Prints one harness failure and counts it in h->errors. */
void harness_error(struct harness *h, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* N nodes (ids 0..n-1), WORLD = the first world of them; config from
 * comm_config_defaults with rto 2 ms, suspect 200 ms. */
void harness_init(struct harness *h, uint32_t n, uint32_t world, uint64_t seed);
void harness_free(struct harness *h);

struct comm *harness_node(struct harness *h, uint32_t node);
struct comm_outbox *harness_begin(struct harness *h);
void harness_end(struct harness *h, uint32_t node);

/* Installs view epoch on every node in `to` (a live mask of n entries,
 * NULL: all) with the live set `live` (n entries, NULL: all). */
void harness_install(struct harness *h, uint64_t epoch, const bool *live, const bool *to);

/* A node stops (frames to it and those it had queued are held) or resumes. */
void harness_hang(struct harness *h, uint32_t node);
void harness_resume(struct harness *h, uint32_t node);

/* One step of virtual time: delivers the next frame or runs the next due
 * timers.  False when nothing is left to do. */
bool harness_step(struct harness *h);

/* Steps until done(arg) is true (returns true), nothing is left to do, or
 * virtual time passes limit_ns from now (returns false). */
bool harness_run(struct harness *h, bool (*done)(struct harness *h, void *arg), void *arg,
                 uint64_t limit_ns);

/* Steps for duration_ns of virtual time (or until nothing is left). */
void harness_run_for(struct harness *h, uint64_t duration_ns);

/* Runs every event due within duration_ns and none later (harness_run_for
 * may run the first one beyond); time is then now + duration_ns. */
void harness_run_until(struct harness *h, uint64_t duration_ns);

/* Requests: a table of (node, handle) pairs and their statuses. */
struct harness_requests {
    uint32_t count;
    uint32_t node[4096];
    uint32_t handle[4096];
    bool done[4096];
    struct comm_status status[4096];
};

void harness_requests_clear(struct harness_requests *r);
void harness_requests_add(struct harness_requests *r, uint32_t node, uint32_t handle);
/* Tests every request not yet done; true when all are. */
bool harness_requests_poll(struct harness *h, struct harness_requests *r);
/* Runs until every request is done (true) or limit_ns passes (false). */
bool harness_requests_wait(struct harness *h, struct harness_requests *r, uint64_t limit_ns);

#endif /* TESTS_COMM_HARNESS_H */
