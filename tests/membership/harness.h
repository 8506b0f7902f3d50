/*
 * The one network of the membership tests: N state machines (the very code
 * of membership/) and a FIFO of the messages they send, with the faults of
 * the project's fault language and a few loss rules of its own.  Scripts
 * (script.c, the scripts in scripts/) and the C tests drive it alike:
 *   - an action (a tick, a delivery, a fault, a hand-built message) opens
 *     a window: what was sent and which events came out during it are
 *     logged, for the expectations that follow;
 *   - harness_deliver empties the FIFO in order, each message `hop_ns`
 *     after the one before; harness_run steps time: the due nodes tick (in
 *     id order), then everything queued is delivered at that time.
 * Every payload sent is decoded (a malformed one is a failure), and an
 * outbox that dropped anything is one too.  Not thread-safe, static: one
 * harness per test program.
 */
#ifndef TESTS_MEMBERSHIP_HARNESS_H
#define TESTS_MEMBERSHIP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "membership/membership.h"
#include "net/torus/geometry.h"

#define HARNESS_MAX_NODES 64u
#define HARNESS_QUEUE 4096u  /* messages in flight */
#define HARNESS_LOG 16384u   /* messages sent in one window */
#define HARNESS_EVENTS 1024u /* events in one window */
#define HARNESS_RULES 16u    /* loss rules, cut pairs and faults waiting for their time */

struct harness_setup {
    struct torus_geometry geometry;
    uint32_t members; /* initial view: ids 0..members-1 */
    uint32_t radix;
    enum membership_layout_kind layout;
    bool watch_torus_neighbours;
    /* membership_config_timeouts_ms(heartbeat_ms, detect_ms) when detect_ms != 0 */
    uint32_t heartbeat_ms;
    uint32_t detect_ms;
    bool heartbeat_off; /* after the timeouts: no heartbeats (the test detects) */
    uint32_t timeout_ceiling; /* membership_config.timeout_ceiling (0: its default) */
    struct recovery_policy recovery; /* every node's (membership_config.recovery) */
    uint32_t seeds[MEMBERSHIP_SEEDS_MAX]; /* every node's seed nodes (membership_config) */
    uint32_t seed_count;
};

/* The faults of the fault language the harness carries out. */
enum harness_fault_kind {
    HARNESS_FAULT_KILL = 1,
    HARNESS_FAULT_JOIN,
    HARNESS_FAULT_SUSPECT,
    HARNESS_FAULT_LINK_OFF,
    HARNESS_FAULT_LINK_ON,
    HARNESS_FAULT_BLOCK,
    HARNESS_FAULT_PARTITION,
    HARNESS_FAULT_HEAL,
    HARNESS_FAULT_APPKILL, /* the node's application is gone: it asks to be removed */
    HARNESS_FAULT_LEAVE,   /* the node leaves gracefully: it asks to be removed */
};

struct harness_fault {
    enum harness_fault_kind kind;
    uint64_t time_ns;
    uint32_t node;  /* SUSPECT: the suspecting node; LINK, BLOCK: A */
    uint32_t other; /* SUSPECT: the suspected node; LINK, BLOCK: B */
    uint64_t duration_ns;
    int dim;        /* PARTITION: coordinate dimension, -1 for ids */
    uint32_t below; /* PARTITION: one side is coordinate (or id) < below */
};

struct harness_packet {
    uint32_t from;
    uint32_t to;
    uint16_t length;
    uint8_t bytes[MEMBERSHIP_MAX_PAYLOAD];
};

struct harness_sent {
    uint32_t from;
    uint32_t to;
    uint8_t type;
    uint64_t time_ns;
    uint32_t slot; /* in the FIFO (valid while the FIFO has not wrapped past it) */
};

struct harness_event {
    uint32_t node;
    uint64_t time_ns;
    struct membership_event event;
};

struct harness_pair {
    uint32_t from;
    uint32_t to;
    bool both_ways;
    uint64_t until_ns; /* MEMBERSHIP_NEVER: until lifted */
};

struct harness {
    struct harness_setup setup;
    struct membership nodes[HARNESS_MAX_NODES];
    bool down[HARNESS_MAX_NODES];
    uint32_t boots[HARNESS_MAX_NODES];
    struct membership_outbox out;
    uint64_t now;
    uint64_t hop_ns;
    /* The FIFO: head and tail count up; slot = count % HARNESS_QUEUE. */
    struct harness_packet queue[HARNESS_QUEUE];
    uint32_t head;
    uint32_t tail;
    /* The window. */
    struct harness_sent sent[HARNESS_LOG];
    uint32_t sent_count;
    struct harness_event events[HARNESS_EVENTS];
    uint32_t event_count;
    uint32_t delivered; /* received by a running node */
    uint32_t lost;      /* lost to a rule or fault on the way */
    /* Loss: the next message of a type from a node; pairs (one way or both). */
    uint32_t lose_next_from; /* MEMBERSHIP_NONE: no such rule */
    uint8_t lose_next_type;
    struct harness_pair cut[HARNESS_RULES];
    uint32_t cut_count;
    bool partitioned;
    int partition_dim;
    uint32_t partition_below;
    struct harness_fault pending[HARNESS_RULES];
    uint32_t pending_count;
    /* A late node (harness_run): its timers run at most every tick_every_ns. */
    uint64_t tick_every_ns[HARNESS_MAX_NODES];
    uint64_t last_tick_ns[HARNESS_MAX_NODES];
    unsigned failures; /* broken invariants of the network itself */
};

void harness_setup_defaults(struct harness_setup *setup);
/* Every node initialised from setup (node i: id i); false with a line on stderr. */
bool harness_start(struct harness *h, const struct harness_setup *setup);

/* A new window: forgets what was sent and emitted so far. */
void harness_window(struct harness *h);
/* Moves node `from`'s outbox into the FIFO and the window. */
void harness_collect(struct harness *h, uint32_t from);

/* Time moves to `now` (never back): faults whose time came are carried out. */
void harness_advance(struct harness *h, uint64_t now);
/* Queues a fault; carried out now if its time has come. */
void harness_fault(struct harness *h, const struct harness_fault *fault);

/* Delivers the FIFO in order until empty, hop_ns per message; returns the deliveries. */
uint32_t harness_deliver(struct harness *h);
/* Node `id`'s timers at time now (a node that is down does nothing). */
void harness_tick(struct harness *h, uint32_t id, uint64_t now);
/*
 * From h->now to `until` in steps: due nodes tick, then the FIFO empties
 * at that time.  Stops after a step in which `detector` reported `who`
 * (MEMBERSHIP_NONE: never stops early); returns the time of the last step.
 */
uint64_t harness_run(struct harness *h, uint64_t until, uint64_t step, uint32_t who,
                     uint32_t detector);

/* A message to node `to` from `sender`, header in the receiver's epochs; body follows. */
void harness_message_begin(const struct harness *h, uint32_t to, uint8_t type, uint32_t sender,
                           bool has_view, struct membership_writer *w, uint8_t *buffer,
                           size_t capacity);
/* Node `to` receives bytes now (from nobody in the FIFO). */
void harness_receive(struct harness *h, uint32_t to, const uint8_t *bytes, size_t length);

/* Messages of the window from `from` of `type` to `to` (MEMBERSHIP_NONE: any). */
uint32_t harness_count_sent(const struct harness *h, uint32_t from, int type, uint32_t to);
/* The first such message, NULL when none. */
const struct harness_sent *harness_find_sent(const struct harness *h, uint32_t from, int type,
                                             uint32_t to);
/* Its payload (in the FIFO). */
const struct harness_packet *harness_payload(const struct harness *h,
                                             const struct harness_sent *sent);
/* Forgets everything in flight (a test that plays the other nodes itself). */
void harness_drop_queue(struct harness *h);

/* Message type by its name ("failed_node", either case); -1 when unknown. */
int harness_msg_type(const char *name);

#endif /* TESTS_MEMBERSHIP_HARNESS_H */
