/*
 * The membership outbox: what one call into the state machine produced.
 * Caller-provided and bounded: outgoing messages (destination id and
 * payload, the payloads packed in one byte arena) and structured events.
 * Anything that does not fit is counted, never written out of bounds.
 * The caller drains it after each call and clears it.
 */
#ifndef MEMBERSHIP_OUTBOX_H
#define MEMBERSHIP_OUTBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "membership/codec.h"

#define MEMBERSHIP_OUTBOX_MESSAGES 640
#define MEMBERSHIP_OUTBOX_BYTES 32768
#define MEMBERSHIP_OUTBOX_EVENTS 32

/* The events, with the names every tool prints and reads: one list. */
#define MEMBERSHIP_EVENT_TYPES(X)                                                           \
    X(VIEW, 1, "view")                          /* a view was installed */                \
    X(FAILURE_DETECTED, 2, "failure-detected")  /* this node suspects a member */         \
    X(STABLE, 3, "stable")           /* at the coordinating root: a view completed */    \
    X(JOINED, 4, "joined")           /* this node is a member again */                   \
    X(EXPELLED, 5, "expelled")       /* this node found itself out of the view */        \
    X(PARTITIONED, 6, "partitioned") /* this side lost the primary component */          \
    X(RECOVERY_DECISION, 7, "recovery-decision") /* the root's decision for a fault */   \
    X(JOIN_REFUSED, 8, "join-refused")           /* the root will not let us in */    \
    X(LEFT, 9, "left") /* a member (or this node) left by its own request: no fault */      \
    X(REFORMED, 10, "reformed") /* no view anywhere: this node minted one (reform.c) */

enum membership_event_type {
#define MEMBERSHIP_EVENT_ENUM(name, value, text) MEMBERSHIP_EVENT_##name = value,
    MEMBERSHIP_EVENT_TYPES(MEMBERSHIP_EVENT_ENUM)
#undef MEMBERSHIP_EVENT_ENUM
    MEMBERSHIP_EVENT_TYPE_LIMIT
};

/* What made this node suspect a member. */
enum membership_detect_cause {
    MEMBERSHIP_CAUSE_HEARTBEAT = 1, /* silence past the heartbeat timeout */
    MEMBERSHIP_CAUSE_PROBE,         /* HOW_ARE_YOU unanswered (link down, application) */
    MEMBERSHIP_CAUSE_ACK,           /* a child never acked a view change */
    MEMBERSHIP_CAUSE_REPORT,        /* the root never acked a failure report */
    MEMBERSHIP_CAUSE_APPLICATION,   /* this node's own application is gone (process fault) */
};

struct membership_event_view {
    uint64_t epoch;
    uint32_t root; /* id */
    uint32_t live;
    uint64_t digest;
};

struct membership_event_failure {
    uint32_t who;
    uint32_t detector;
    uint64_t detect_ns; /* from the last sign of life (or suspicion) to the report */
    uint8_t cause;      /* enum membership_detect_cause */
    uint8_t model;      /* enum fault_model (lib/recovery.h) */
};

/* For every node removed by a view change (and for a network fault, at
 * its detector, with no view change): what the root decided. */
struct membership_event_decision {
    uint64_t epoch; /* the view that carries it (network: the current one) */
    uint32_t node;
    uint8_t model;  /* enum fault_model */
    uint8_t action; /* enum recovery_action */
    bool quarantined; /* past the policy's limit: its rejoin will be refused */
    bool rejoined;    /* a new life of it joins in the same change (it restarted already) */
};

struct membership_event_join_refused {
    uint32_t by;    /* the root that refused */
    uint8_t reason; /* MEMBERSHIP_REFUSED_* */
};

struct membership_event_stable {
    uint64_t epoch;
    uint64_t ts_ns;                /* first report accepted .. last ack completing the view */
    uint64_t confirm_ns;           /* of ts_ns: the wait for evidence before the first round */
    uint32_t messages;             /* tree messages of the completing round */
    uint32_t episode_messages;     /* tree messages of all rounds since the first report */
    uint32_t detector_messages;    /* reports received and their acks */
    uint32_t rounds;               /* rounds since the first report */
    uint32_t live;
    uint32_t levels;               /* tree height H */
};

struct membership_event_joined {
    uint64_t epoch;
    uint32_t root;
};

struct membership_event_expelled {
    uint64_t epoch;  /* the view that left this node out (0: unknown) */
    uint32_t by;     /* who told us */
};

/* A graceful leave (membership_request_removal with FAULT_MODEL_LEFT): at
 * every node that applies the change removing it, and at the leaver once
 * it finds itself out (instead of expelled). */
struct membership_event_left {
    uint64_t epoch; /* the view without it (0: unknown, at the leaver) */
    uint32_t who;
};

struct membership_event_partitioned {
    uint64_t epoch;
    uint32_t side_live;   /* members of the last view on this side (who answered its root) */
    uint32_t ref_live;    /* members of the reference (last stable) view */
};

/* At the node that minted a view after no node held one (machine/reform.c). */
struct membership_event_reformed {
    uint64_t epoch;   /* the view minted */
    uint32_t members; /* members of the last completed view that agreed (the minter too) */
    uint64_t from;    /* that completed view's epoch */
};

struct membership_event {
    uint8_t type; /* enum membership_event_type */
    uint64_t t_ns;
    union {
        struct membership_event_view view;
        struct membership_event_failure failure;
        struct membership_event_stable stable;
        struct membership_event_joined joined;
        struct membership_event_expelled expelled;
        struct membership_event_partitioned partitioned;
        struct membership_event_decision decision;
        struct membership_event_join_refused refused;
        struct membership_event_left left;
        struct membership_event_reformed reformed;
    } u;
};

struct membership_outgoing {
    uint32_t destination;
    uint16_t offset; /* into bytes[] */
    uint16_t length;
    /* Its loss costs nothing the next message does not make good (a
     * heartbeat): the node may send it best effort, without link acks. */
    bool loss_tolerant;
};

struct membership_outbox {
    struct membership_outgoing messages[MEMBERSHIP_OUTBOX_MESSAGES];
    uint32_t message_count;
    uint32_t bytes_used;
    uint8_t bytes[MEMBERSHIP_OUTBOX_BYTES];
    struct membership_event events[MEMBERSHIP_OUTBOX_EVENTS];
    uint32_t event_count;
    uint32_t dropped_messages; /* did not fit (counted, not sent) */
    uint32_t dropped_events;
};

void membership_outbox_clear(struct membership_outbox *out);

/* Payload of message i (i < message_count). */
const uint8_t *membership_outbox_payload(const struct membership_outbox *out, uint32_t i);

/*
 * Reserves space for one message to destination: fills *writer with the
 * free part of the arena (at most MEMBERSHIP_MAX_PAYLOAD bytes).  Then
 * membership_outbox_commit records it, or counts a drop when it overflowed.
 */
void membership_outbox_begin(struct membership_outbox *out, struct membership_writer *writer);
bool membership_outbox_commit(struct membership_outbox *out, uint32_t destination,
                              const struct membership_writer *writer);

/*
 * Puts count bytes before the payload of message i (it grows by them; the
 * payloads after it move on): false, with nothing changed, when the arena
 * lacks room or the payload would pass MEMBERSHIP_MAX_PAYLOAD.
 */
bool membership_outbox_prepend(struct membership_outbox *out, uint32_t i, const uint8_t *bytes,
                               size_t count);
/* Sends the payload of message i once more, to destination (counted drop when full). */
bool membership_outbox_copy(struct membership_outbox *out, uint32_t i, uint32_t destination);

/* Appends an event (counted drop when full); returns the slot or NULL. */
struct membership_event *membership_outbox_event(struct membership_outbox *out, uint8_t type,
                                                 uint64_t t_ns);

const char *membership_event_name(uint8_t type);
const char *membership_cause_name(uint8_t cause);
const char *membership_refused_reason_name(uint8_t reason);

#endif /* MEMBERSHIP_OUTBOX_H */
