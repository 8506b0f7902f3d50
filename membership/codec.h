/*
 * Membership messages on the wire: a fixed little-endian header followed by
 * a type-specific body, at most MEMBERSHIP_MAX_PAYLOAD bytes (fits one torus
 * frame payload).  Decoding validates everything (version, type, exact
 * length for the counts given, ids below the node count, ordering of
 * intervals) and never reads past the buffer; lists stay in the payload and
 * are read through the accessors below.
 *
 * Header (28 bytes):
 *   off size field
 *   0   1    version (MEMBERSHIP_WIRE_VERSION)
 *   1   1    type (enum membership_msg_type)
 *   2   1    flags (MEMBERSHIP_FLAG_*)
 *   3   1    reserved (0)
 *   4   4    sender id
 *   8   4    sender incarnation
 *   12  8    sender epoch (view epoch; 0 with no view)
 *   20  8    sender stable epoch (last view known to have completed)
 *
 * Epochs: (counter << 36) | (layout position of the minting root << 16) |
 * (low 16 bits of the minting root's incarnation), compared as integers.
 * Only a root mints, always from its own installed epoch's counter + 1, and
 * within one life (incarnation) a node's epoch never goes back, so one life
 * never mints the same epoch twice; two roots differ in position; two lives
 * of one node differ in incarnation (launchers must give every boot an
 * incarnation whose low 16 bits differ from the node's earlier lives, each
 * rejoin adding one).  A root chosen after a root failure lies after the
 * old one in layout order, so for the same counter its epochs compare higher.
 */
#ifndef MEMBERSHIP_CODEC_H
#define MEMBERSHIP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "lib/recovery.h"

#define MEMBERSHIP_MAX_PAYLOAD 1400
#define MEMBERSHIP_WIRE_VERSION 1
#define MEMBERSHIP_HEADER_SIZE 28

#define MEMBERSHIP_EPOCH_POS_BITS 20
#define MEMBERSHIP_EPOCH(counter, root_pos, incarnation)                            \
    (((uint64_t)(counter) << 36) | ((uint64_t)(root_pos) << 16) |                  \
     ((uint64_t)(incarnation) & 0xffffu))
#define MEMBERSHIP_EPOCH_COUNTER(epoch) ((epoch) >> 36)
#define MEMBERSHIP_EPOCH_ROOT_POS(epoch) ((uint32_t)(((epoch) >> 16) & 0xfffffu))

/*
 * Largest lists in one message.  A change holds at most 256 failed ids
 * (4 bytes each) and 160 joined (id, incarnation) pairs (8 bytes each), and
 * both together must fit (MEMBERSHIP_CHANGE_FITS): many joins go in a round
 * with few failures.
 */
#define MEMBERSHIP_MAX_CHANGE_FAILED 256
#define MEMBERSHIP_MAX_CHANGE_JOINED 160
#define MEMBERSHIP_MAX_REPORT_IDS 256
#define MEMBERSHIP_CHANGE_FITS(failed, joined)                                     \
    (MEMBERSHIP_HEADER_SIZE + MEMBERSHIP_CHANGE_FIXED + 4u * (failed) + 8u * (joined) <=  \
     MEMBERSHIP_MAX_PAYLOAD)
/* The same with the recovery decisions (2 bytes per failed id) after the lists. */
#define MEMBERSHIP_CHANGE_FITS_DECIDED(failed, joined)                             \
    (MEMBERSHIP_HEADER_SIZE + MEMBERSHIP_CHANGE_FIXED + 6u * (failed) + 8u * (joined) <=  \
     MEMBERSHIP_MAX_PAYLOAD)

/* Header flags. */
#define MEMBERSHIP_FLAG_HAS_VIEW 0x01u /* the sender holds an installed view */

/* Report flags. */
#define MEMBERSHIP_REPORT_PREFIX 0x01u /* every member from failed_root to the receiver is dead */

/* Change flags. */
#define MEMBERSHIP_CHANGE_BASE_STABLE 0x01u /* the base view completed */
#define MEMBERSHIP_CHANGE_DIRECT 0x02u      /* PARTITIONED sent to each member: do not forward */
#define MEMBERSHIP_CHANGE_DECIDED 0x04u     /* (model, action) per failed id follows the lists */
/* The failed ids are every failure since the header's stable epoch and no
 * join happened since (a superseding round): a member still at that view
 * applies them as well as one at the base. */
#define MEMBERSHIP_CHANGE_SINCE_STABLE 0x08u
#define MEMBERSHIP_DECISION_QUARANTINED 0x80u /* in a decision's action byte: rejoin refused */
#define MEMBERSHIP_DECISION_REJOINED 0x40u    /* ... its new life joins in the same change */
#define MEMBERSHIP_DECISION_FLAGS (MEMBERSHIP_DECISION_QUARANTINED | MEMBERSHIP_DECISION_REJOINED)

/* Ack flags. */
#define MEMBERSHIP_ACK_INCOMPLETE 0x01u /* some child of the subtree never acked */

/* Why a root refused a join (JOIN_REFUSED). */
#define MEMBERSHIP_REFUSED_QUARANTINED 1u /* removed too often: past the policy's limit */

/* Join request flags. */
#define MEMBERSHIP_JOIN_REJOIN 0x01u /* NODE_ALIVE: rejoin with the original id */

/* Relay envelope flags. */
#define MEMBERSHIP_RELAY_FORWARDED 0x01u /* sent on by the relay: for the target to open */

/* Re-forming flags. */
#define MEMBERSHIP_REFORM_ANSWER 0x01u /* an answer to a candidate's own REFORM: not answered */

/* View chunk encodings and flags. */
#define MEMBERSHIP_CHUNK_INTERVALS 0
#define MEMBERSHIP_CHUNK_BITS 1
#define MEMBERSHIP_CHUNK_FINAL 0x01u

#define MEMBERSHIP_MSG_TYPES(X)                                                   \
    X(HEARTBEAT, 1, "heartbeat")                                                 \
    X(HOW_ARE_YOU, 2, "how_are_you")                                             \
    X(I_AM_ALIVE, 3, "i_am_alive")                                               \
    X(NODE_FAILURE, 4, "node_failure")         /* report to the root */          \
    X(ROOT_FAILURE, 5, "root_failure")         /* report to the next root */     \
    X(FAILURE_DET_ACK, 6, "failure_det_ack")                                     \
    X(FAILED_NODE, 7, "failed_node")           /* change down the tree */        \
    X(ROOT_DEAD, 8, "root_dead")                                                 \
    X(ROOT_AND_NODE_FAILURE, 9, "root_and_node_failure")                         \
    X(NEW_NODE_JOIN, 10, "new_node_join")                                        \
    X(ALIVE_NODE_JOIN, 11, "alive_node_join")                                    \
    X(FAILURE_ACK, 12, "failure_ack")          /* ack up the tree */             \
    X(JOIN_ACK, 13, "join_ack")                                                  \
    X(NEW_NODE, 14, "new_node")                /* join request */                \
    X(NODE_ALIVE, 15, "node_alive")            /* rejoin request */              \
    X(JOIN_REDIRECT, 16, "join_redirect")                                        \
    X(JOIN_DET_ACK, 17, "join_det_ack")                                          \
    X(VIEW_REQUEST, 18, "view_request")                                          \
    X(VIEW_CHUNK, 19, "view_chunk")                                              \
    X(VIEW_NOTICE, 20, "view_notice")          /* "your epoch is stale" */       \
    X(PARTITIONED, 21, "partitioned")                                            \
    X(JOIN_REFUSED, 22, "join_refused")        /* the root will not let us in */ \
    X(RELAY, 23, "relay")      /* an envelope for a member out of the origin's reach */ \
    X(REFUTED, 24, "refuted")  /* root to a detector: the suspect answered, use a relay */ \
    X(REFORM, 25, "reform")    /* no view anywhere: who this viewless node would follow */

enum membership_msg_type {
#define MEMBERSHIP_MSG_ENUM(name, value, text) MEMBERSHIP_MSG_##name = value,
    MEMBERSHIP_MSG_TYPES(MEMBERSHIP_MSG_ENUM)
#undef MEMBERSHIP_MSG_ENUM
    MEMBERSHIP_MSG_TYPE_LIMIT
};

/* Why decoding refused a payload. */
#define MEMBERSHIP_DECODE_STATUSES(X)                                             \
    X(OK, "ok")                                                                  \
    X(SHORT, "shorter than its header or counts")                                \
    X(TOO_LONG, "longer than its counts")                                        \
    X(VERSION, "unknown wire version")                                           \
    X(TYPE, "unknown message type")                                              \
    X(RESERVED, "reserved bits set")                                             \
    X(BAD_ID, "node id out of range")                                            \
    X(BAD_COUNT, "list count over its limit")                                    \
    X(BAD_RANGE, "chunk range or interval out of order")

enum membership_decode_status {
#define MEMBERSHIP_DECODE_ENUM(name, text) MEMBERSHIP_DECODE_##name,
    MEMBERSHIP_DECODE_STATUSES(MEMBERSHIP_DECODE_ENUM)
#undef MEMBERSHIP_DECODE_ENUM
    MEMBERSHIP_DECODE_STATUS_COUNT
};

struct membership_header {
    uint8_t type;
    uint8_t flags;
    uint32_t sender;
    uint32_t incarnation;
    uint64_t epoch;
    uint64_t stable_epoch;
};

/* NODE_FAILURE, ROOT_FAILURE: the detector's batch of suspects. */
struct membership_body_report {
    uint32_t detector;
    uint32_t sequence;    /* echoed by FAILURE_DET_ACK */
    uint32_t failed_root; /* the root believed dead, or UINT32_MAX */
    uint32_t count;       /* ids (u32 each) in the list */
    uint8_t flags;        /* MEMBERSHIP_REPORT_* */
    uint8_t model;        /* enum fault_model of every id; NONE: physical */
};

/* FAILURE_DET_ACK. */
struct membership_body_report_ack {
    uint32_t sequence;
};

/* FAILED_NODE, ROOT_DEAD, ROOT_AND_NODE_FAILURE, NEW_NODE_JOIN, ALIVE_NODE_JOIN. */
struct membership_body_change {
    uint64_t base_epoch; /* the view this change applies to */
    uint8_t flags;       /* MEMBERSHIP_CHANGE_* */
    uint32_t failed_count;
    uint32_t joined_count; /* (id u32, incarnation u32) pairs after the ids */
    uint32_t live_after;
    uint32_t root_after;   /* id of the new view's root */
    uint64_t digest_after;
};

/* FAILURE_ACK, JOIN_ACK. */
struct membership_body_ack {
    uint64_t epoch;    /* the view whose dissemination is acked */
    uint32_t messages; /* messages of the acking subtree in this round */
    uint32_t reached;  /* members of the acking subtree that acked */
    uint8_t flags;     /* MEMBERSHIP_ACK_* */
};

/* NEW_NODE, NODE_ALIVE. */
struct membership_body_join {
    uint32_t config_digest;
    uint8_t flags; /* MEMBERSHIP_JOIN_* */
};

/* JOIN_REFUSED. */
struct membership_body_refused {
    uint8_t reason; /* MEMBERSHIP_REFUSED_* */
};

/* JOIN_REDIRECT. */
struct membership_body_redirect {
    uint32_t root;
};

/* JOIN_DET_ACK: the joiner's incarnation, echoed. */
struct membership_body_join_ack {
    uint32_t joiner_incarnation;
};

/* VIEW_REQUEST. */
struct membership_body_view_request {
    uint32_t from_pos;
};

/*
 * VIEW_CHUNK: the live positions in [from_pos, to_pos) of view `epoch`
 * (header), either as (start, length) intervals or as a bitmap of
 * to_pos - from_pos bits (from_pos a multiple of 8).  MEMBERSHIP_CHUNK_FINAL
 * is set exactly when to_pos is the node count.
 */
struct membership_body_view_chunk {
    uint32_t config_digest;
    uint8_t encoding;
    uint8_t flags;
    uint32_t count; /* intervals, or bytes of bitmap */
    uint32_t from_pos;
    uint32_t to_pos;
    uint32_t live;
    uint64_t digest;
    uint32_t ref_count;   /* reference (last stable) view: live count ... */
    uint32_t ref_removed; /* ... removals since it ... */
    uint32_t ref_root;    /* ... and its root position */
};

/*
 * RELAY: a message of origin's (its own header inside, sender origin) for
 * target, sent to a relay that reaches both; the relay sends it on once
 * (FORWARDED), the target opens it.  The inner message is the list.
 */
struct membership_body_relay {
    uint32_t origin;
    uint32_t target;
    uint8_t flags;         /* MEMBERSHIP_RELAY_* */
    uint16_t inner_length; /* bytes of the inner message */
};

/* REFUTED: the root's answer to a report of peer, which answered its probe. */
struct membership_body_refuted {
    uint32_t peer;  /* alive: keep it */
    uint32_t relay; /* a member that reaches both of us */
};

/*
 * REFORM (issue 20, machine/reform.c): from a node without a view, to the
 * members of its last completed view (the header's stable epoch): "no view
 * here either; my vote goes to `vote`" (MEMBERSHIP_NONE: no vote yet).
 */
struct membership_body_reform {
    uint32_t vote;
    uint8_t flags; /* MEMBERSHIP_REFORM_* */
};

struct membership_msg {
    struct membership_header header;
    union {
        struct membership_body_report report;
        struct membership_body_report_ack report_ack;
        struct membership_body_change change;
        struct membership_body_ack ack;
        struct membership_body_join join;
        struct membership_body_redirect redirect;
        struct membership_body_refused refused;
        struct membership_body_join_ack join_ack;
        struct membership_body_view_request view_request;
        struct membership_body_view_chunk chunk;
        struct membership_body_relay relay;
        struct membership_body_refuted refuted;
        struct membership_body_reform reform;
    } body;
    const uint8_t *list; /* the body's trailing list, inside the payload */
};

/* Body layout sizes (fixed part after the header). */
#define MEMBERSHIP_REPORT_FIXED 16
#define MEMBERSHIP_CHANGE_FIXED 32
#define MEMBERSHIP_CHUNK_FIXED 40
#define MEMBERSHIP_CHUNK_MAX_DATA (MEMBERSHIP_MAX_PAYLOAD - MEMBERSHIP_HEADER_SIZE - MEMBERSHIP_CHUNK_FIXED)
#define MEMBERSHIP_RELAY_FIXED 12
/* An envelope's own bytes, and the longest message that fits in one. */
#define MEMBERSHIP_RELAY_OVERHEAD (MEMBERSHIP_HEADER_SIZE + MEMBERSHIP_RELAY_FIXED)
#define MEMBERSHIP_RELAY_MAX_INNER (MEMBERSHIP_MAX_PAYLOAD - MEMBERSHIP_RELAY_OVERHEAD)

/*
 * Decodes and validates a payload.  node_count bounds every id and
 * position.  On failure *msg is zeroed.
 */
enum membership_decode_status membership_decode(const uint8_t *payload, size_t length,
                                                uint32_t node_count, struct membership_msg *msg);

const char *membership_decode_status_text(enum membership_decode_status status);
const char *membership_msg_type_name(unsigned type);

/* True for the change types carried down the tree. */
bool membership_msg_is_change(unsigned type);

/* List accessors (index < the body's count; validated by decode). */
uint32_t membership_msg_report_id(const struct membership_msg *msg, uint32_t index);
uint32_t membership_msg_failed_id(const struct membership_msg *msg, uint32_t index);
void membership_msg_joined(const struct membership_msg *msg, uint32_t index, uint32_t *id,
                           uint32_t *incarnation);
/* Interval i of an INTERVALS chunk. */
/* Decision i of a DECIDED change: the failed id's fault model and action. */
void membership_msg_decision(const struct membership_msg *msg, uint32_t index, uint8_t *model,
                             uint8_t *action);
void membership_msg_interval(const struct membership_msg *msg, uint32_t index,
                             uint32_t *start, uint32_t *length);

/*
 * A bounded writer.  Every put after an overflow is ignored and overflow
 * stays set; the encoders below return 0 on overflow.
 */
struct membership_writer {
    uint8_t *buffer;
    size_t capacity;
    size_t length;
    bool overflow;
};

void membership_writer_init(struct membership_writer *w, uint8_t *buffer, size_t capacity);
void membership_put_u8(struct membership_writer *w, uint8_t value);
void membership_put_u16(struct membership_writer *w, uint16_t value);
void membership_put_u32(struct membership_writer *w, uint32_t value);
void membership_put_u64(struct membership_writer *w, uint64_t value);
void membership_put_header(struct membership_writer *w, const struct membership_header *h);

/* Patches sender and incarnation of an encoded payload (forwarding). */
void membership_patch_sender(uint8_t *payload, size_t length, uint32_t sender,
                             uint32_t incarnation);


#endif /* MEMBERSHIP_CODEC_H */
