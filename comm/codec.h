/*
 * Comm frames on the wire: the payload of a torus frame of type COMM.  A
 * fixed little-endian header, then a body whose layout depends only on the
 * kind, then (DATA only) the fragment's bytes.  The torus header around it
 * carries source and destination node ids and the sender's view epoch; the
 * payload never repeats them.
 *
 * Header (12 bytes):
 *   off size field
 *   0   1    version (COMM_WIRE_VERSION)
 *   1   1    kind (enum comm_kind)
 *   2   1    flags (COMM_FLAG_*, per kind; others must be 0)
 *   3   1    reserved (0)
 *   4   4    sender incarnation (never 0)
 *   8   4    receiver incarnation as the sender knows it (0 only in OPEN)
 *
 * Bodies, after the header (every field u32 unless said):
 *   OPEN       sid                      sender opens its session to us
 *   ACCEPT     sid, token               receiver's answer: its token
 *   BUSY       sid                      receiver has no room: retry later
 *   DATA       token, seq, offset, total, context u16, context_gen u16,
 *              source_rank, tag, resend_of, ack_sid, ack_cum, ack_mask,
 *              ack_deferred, then the bytes
 *   ACK        sid, cum, mask, deferred
 *   WAIT       sid, seq                 first fragment at seq refused, not
 *                                       consumed: no record left (resend it)
 *   GRANT      sid, seq                 the message deferred at seq may come
 *   CLOSE      sid, final               sender closes (every seq < final acked)
 *   CLOSED     sid                      receiver forgot the session
 *   CLOSE_REQ  sid                      receiver asks the sender to close
 *   RESET      token                    receiver knows no session with token
 *   REVOKE     context | context_gen << 16, revoker node, revoker rank
 *                                       the communicator of that context is
 *                                       revoked (flag REVOKE_ACK: the answer);
 *                                       sessionless, resent until answered
 *
 * A sid is chosen by the sender of a session, a token by its receiver:
 * (generation << 8) | table slot, never 0, never reused within a life.
 * Acks: every seq < cum was consumed, and cum+1+i for mask bit i; bit i of
 * deferred says seq cum-1-i was the first fragment of a message the
 * receiver could not place and deferred (its envelope recorded, its frames
 * consumed unread): the sender sends it again (flag RESEND, resend_of =
 * that seq) once GRANTed.  A sender never has more than 32 frames
 * unacknowledged, so every deferral reaches it with the first ack it gets
 * that covers the seq.
 * DATA carries the message envelope (context, context_gen, source rank, tag)
 * only in its first fragment (offset 0, flag FIRST); the other fragments
 * carry zeros there.  context_gen names the communicator's life on its
 * context id (its generation, agreed when it was made: comm/DESIGN.md,
 * "Freeing a communicator"), so that a frame of a freed communicator never
 * matches a later one that reuses the id; the adoption space carries 0.  SKIP: a fragment of a message the receiver deferred, sent only to
 * fill its seq (no bytes).  The ack fields piggyback an acknowledgment of
 * the reverse session (flag ACK); without it they are zero.  Every fragment
 * but the last holds exactly COMM_FRAGMENT_BYTES bytes, so offset and total
 * fix the length.
 *
 * Decoding validates every field (version, kind, flags, reserved bits,
 * incarnations, session ids, exact lengths, offset and length against
 * total, total against CONFIG_COMM_MAX_MESSAGE, the envelope's context and
 * tag) and never reads past the buffer; each refusal has its own status.
 * Pure: no I/O, no globals, no allocation.
 */
#ifndef COMM_CODEC_H
#define COMM_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/frame.h"

/* 2: DATA and REVOKE carry the context generation (reserved in 1). */
#define COMM_WIRE_VERSION 2u
#define COMM_HEADER_SIZE 12u
#define COMM_DATA_FIXED 48u
#define COMM_DATA_HEADER (COMM_HEADER_SIZE + COMM_DATA_FIXED)
#define COMM_MAX_PAYLOAD TORUS_FRAME_MAX_PAYLOAD
/* Bytes of a message in one DATA frame (1,394 with 1,514-byte frames). */
#define COMM_FRAGMENT_BYTES (COMM_MAX_PAYLOAD - COMM_DATA_HEADER)

/* Frames a message of `length` bytes takes (a 0-byte message takes one). */
#define COMM_FRAMES_FOR(length)                                                          \
    ((length) == 0 ? 1u : (uint32_t)(((uint64_t)(length) + COMM_FRAGMENT_BYTES - 1u) /    \
                                     COMM_FRAGMENT_BYTES))

/* Flags. */
#define COMM_FLAG_FIRST 0x01u   /* DATA: first fragment, the envelope is valid */
#define COMM_FLAG_ACK 0x02u     /* DATA: the ack fields are valid */
#define COMM_FLAG_SKIP 0x04u    /* DATA: a deferred message's fragment, no bytes */
#define COMM_FLAG_RESEND 0x08u  /* DATA: first fragment of a deferred message, resent */
#define COMM_FLAG_ACK_NOW 0x10u /* DATA: the sender waits on this ack: send it at once */
#define COMM_FLAG_UNKNOWN 0x01u /* CLOSE: the sender had no such session */
#define COMM_FLAG_REVOKE_ACK 0x01u /* REVOKE: the receiver has it */

/* Context field: low 8 bits the communicator's context id, bit 15 the
 * collective space (internal messages of collectives), bit 14 the recovery
 * space (rebuild and agree rounds: the source rank field carries the
 * sender's node id, the tag the round's epoch), bit 13 the adoption space
 * (a rebuild's root telling a spare its new communicator; context id 0). */
#define COMM_CONTEXT_IDS 256u
#define COMM_CONTEXT_NODES (COMM_CONTEXT_IDS - 1u) /* NODES (comm_nodes), never dup's or split's */
#define COMM_CONTEXT_COLLECTIVE 0x8000u
#define COMM_CONTEXT_RECOVERY 0x4000u
#define COMM_CONTEXT_ADOPT 0x2000u
/* Spaces whose envelope names the sender by node id, not by rank. */
#define COMM_CONTEXT_BY_NODE (COMM_CONTEXT_RECOVERY | COMM_CONTEXT_ADOPT)
#define COMM_CONTEXT_INTERNAL (COMM_CONTEXT_COLLECTIVE | COMM_CONTEXT_BY_NODE)
#define COMM_CONTEXT_KNOWN_BITS (COMM_CONTEXT_INTERNAL | (COMM_CONTEXT_IDS - 1u))

/* Application tags are 0..COMM_TAG_MAX; internal spaces use the whole u32. */
#define COMM_TAG_MAX INT32_MAX

#define COMM_KINDS(X)                                                                    \
    X(OPEN, 1, "open", 4)                                                                \
    X(ACCEPT, 2, "accept", 8)                                                            \
    X(BUSY, 3, "busy", 4)                                                                \
    X(DATA, 4, "data", 48)                                                               \
    X(ACK, 5, "ack", 16)                                                                 \
    X(WAIT, 6, "wait", 8)                                                                \
    X(GRANT, 7, "grant", 8)                                                              \
    X(CLOSE, 8, "close", 8)                                                              \
    X(CLOSED, 9, "closed", 4)                                                            \
    X(CLOSE_REQ, 10, "close_req", 4)                                                     \
    X(RESET, 11, "reset", 4)                                                             \
    X(REVOKE, 12, "revoke", 12)

enum comm_kind {
#define COMM_KIND_ENUM(name, value, text, body) COMM_KIND_##name = value,
    COMM_KINDS(COMM_KIND_ENUM)
#undef COMM_KIND_ENUM
    COMM_KIND_LIMIT
};

/* Why decoding refused a payload: one list makes the enum and the names. */
#define COMM_DECODE_STATUSES(X)                                                          \
    X(OK, "ok")                                                                          \
    X(SHORT, "shorter than its header or body")                                          \
    X(TOO_LONG, "longer than its body")                                                  \
    X(VERSION, "unknown wire version")                                                   \
    X(KIND, "unknown frame kind")                                                        \
    X(FLAGS, "flag bits unknown for the kind")                                           \
    X(RESERVED, "reserved bits set")                                                     \
    X(INCARNATION, "incarnation 0")                                                      \
    X(SESSION, "session id or token 0")                                                  \
    X(TOTAL, "message longer than CONFIG_COMM_MAX_MESSAGE")                              \
    X(OFFSET, "fragment offset not on a fragment boundary inside the message")           \
    X(LENGTH, "fragment length does not match offset and total")                         \
    X(ENVELOPE, "envelope fields in a fragment that is not the first")                   \
    X(SKIP, "a skipped fragment that is first or holds bytes")                           \
    X(RESEND, "resend_of without RESEND, or RESEND on a fragment that is not the first") \
    X(CONTEXT, "context field has unknown bits")                                         \
    X(TAG, "application tag negative")                                                   \
    X(ACK_FIELDS, "ack fields without the ACK flag, or sid 0 with it")

enum comm_decode_status {
#define COMM_DECODE_ENUM(name, text) COMM_DECODE_##name,
    COMM_DECODE_STATUSES(COMM_DECODE_ENUM)
#undef COMM_DECODE_ENUM
    COMM_DECODE_STATUS_COUNT
};

/* A decoded frame (or one to encode).  Fields a kind does not carry are 0. */
struct comm_frame {
    uint8_t kind;  /* enum comm_kind */
    uint8_t flags; /* COMM_FLAG_* */
    uint32_t sender_incarnation;
    uint32_t receiver_incarnation;
    uint32_t session; /* sid; the token in DATA and RESET */
    uint32_t token;   /* ACCEPT */
    uint32_t seq;     /* DATA, WAIT, GRANT; CLOSE: final; ACK: cum; REVOKE: revoker rank */
    uint32_t mask;    /* ACK */
    uint32_t deferred; /* ACK */
    /* DATA */
    uint32_t offset;
    uint32_t total;
    uint16_t context;      /* DATA, REVOKE */
    uint16_t context_gen;  /* DATA, REVOKE: the communicator's generation */
    uint32_t source_rank;  /* DATA; REVOKE: the revoker's node */
    uint32_t tag;
    uint32_t resend_of;
    uint32_t ack_sid;
    uint32_t ack_cum;
    uint32_t ack_mask;
    uint32_t ack_deferred;
    const uint8_t *data; /* inside the payload decoded, or the bytes to encode */
    uint32_t data_length;
};

/*
 * Validates payload[0..length) and fills *frame (data points into payload).
 * On a refusal *frame is zeroed.
 */
enum comm_decode_status comm_decode(const uint8_t *payload, size_t length,
                                    struct comm_frame *frame);

/*
 * Writes frame into out[0..capacity).  Returns the payload length, or 0 when
 * the frame would not decode (the same checks) or does not fit.
 */
size_t comm_encode(const struct comm_frame *frame, uint8_t *out, size_t capacity);

const char *comm_decode_status_text(enum comm_decode_status status);
const char *comm_kind_name(unsigned kind);

#endif /* COMM_CODEC_H */
