/*
 * The one tori wire format: an Ethernet frame carrying a fixed-layout,
 * versioned tori header and a payload.  Identical on virtio-net/QEMU
 * sockets, host UDP and in simulation.
 *
 *   off size field                      notes
 *   0   6    destination MAC
 *   6   6    source MAC
 *   12  2    EtherType 0x88B5           big-endian, as Ethernet requires
 *   --- tori header, every field little-endian ---
 *   14  2    magic 0x5254               bytes 'T' 'R'
 *   16  1    version (2)
 *   17  1    type                       TORUS_FRAME_TYPES below
 *   18  1    flags                      TORUS_FRAME_FLAG_*; others must be 0
 *   19  1    ttl                        hops left; never 0 on the wire
 *   20  1    hops                       hops taken so far
 *   21  1    reserved (0)
 *   22  2    payload length             frame length - 64, exactly
 *   24  4    source rank
 *   28  4    destination rank
 *   32  8    view epoch
 *   40  4    link sequence number       per hop: stamped by the link layer
 *   44  4    link acknowledgment        next sequence number expected
 *   48  4    link sender incarnation    the sender's link session
 *   52  4    link receiver incarnation  the session it believes we have
 *   56  8    check: tag or CRC          see below
 *   64  ...  payload, up to TORUS_FRAME_MAX_PAYLOAD bytes
 *
 * The check covers the whole frame, Ethernet header included, computed
 * with its own 8 bytes as zeros:
 *   - with a job key (the default where others can reach the wire): the
 *     SipHash-2-4 tag (lib/siphash.h) under the key, a little-endian u64;
 *   - without one (`--auth off`, the simulator's captures): the CRC-32
 *     (lib/crc32.h) in bytes 56..59, bytes 60..63 zero.
 * A node holds a key or not; every node of a torus must agree (a keyed node
 * drops a keyless frame as bad_tag, a keyless node a keyed one as
 * bad_checksum).  Version 1 (a 60-byte header with only the CRC-32) is gone.
 *
 * Frames are never shorter than 64 bytes (over the Ethernet minimum of 60
 * without FCS), so no NIC pads them and the length check can be exact.
 *
 * Link MAC addresses (assigned by the launcher, one per NIC):
 *   02:74:RR:RR:RR:LL   02 = locally administered unicast, 74 = 't',
 *                       RR = node rank (24 bits, big-endian), LL = link
 * so a driver learns which torus direction a NIC is from its own MAC.
 *
 * Decoding never trusts a field: it works on a const buffer of any length
 * (NULL with length 0 included), reads nothing outside it, and every reason
 * to refuse a frame has its own status and counter.
 *
 * Pure: no I/O, no globals, no allocation.
 */
#ifndef NET_TORUS_FRAME_H
#define NET_TORUS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"

#define TORUS_FRAME_ETHERTYPE 0x88B5u /* IEEE 802 local experimental 1 */
#define TORUS_FRAME_MAGIC 0x5254u
#define TORUS_FRAME_VERSION 2u
#define TORUS_FRAME_ETHERNET_SIZE 14u
#define TORUS_FRAME_HEADER_SIZE 64u /* Ethernet + tori header */
#define TORUS_FRAME_MIN_SIZE TORUS_FRAME_HEADER_SIZE
#define TORUS_FRAME_MAX_SIZE CONFIG_MAX_FRAME
#define TORUS_FRAME_MAX_PAYLOAD (CONFIG_MAX_FRAME - TORUS_FRAME_HEADER_SIZE)
#define TORUS_FRAME_MAC_SIZE 6u

/* Byte offsets of fields read or rewritten in place by other modules. */
#define TORUS_FRAME_OFFSET_TYPE 17u
#define TORUS_FRAME_OFFSET_FLAGS 18u
#define TORUS_FRAME_OFFSET_TTL 19u
#define TORUS_FRAME_OFFSET_CHECKSUM 56u
#define TORUS_FRAME_CHECK_SIZE 8u

/* The job key frames are tagged with (at least 128 bits, as issue 20 asks).
 * Functions below take a pointer to one; NULL: keyless (CRC-32). */
#define TORUS_FRAME_KEY_BYTES 16u
struct torus_frame_key {
    uint8_t bytes[TORUS_FRAME_KEY_BYTES];
};

/* Flags.  SYN and NAK belong to the link layer (net/torus/link.h), which
 * rewrites them at every hop; DATAGRAM is set by the sender and kept to the
 * destination: a frame no link sequences, acknowledges or resends (issue
 * 20: a heartbeat, whose loss the next one makes good, must not cost a link
 * ack and a timer wake-up on every hop). */
#define TORUS_FRAME_FLAG_SYN 0x01u      /* link session handshake */
#define TORUS_FRAME_FLAG_NAK 0x02u      /* receiver saw a gap: resend from ack */
#define TORUS_FRAME_FLAG_DATAGRAM 0x04u /* unsequenced, best effort, end to end */
#define TORUS_FRAME_FLAGS_LINK (TORUS_FRAME_FLAG_SYN | TORUS_FRAME_FLAG_NAK)
#define TORUS_FRAME_FLAGS_KNOWN (TORUS_FRAME_FLAGS_LINK | TORUS_FRAME_FLAG_DATAGRAM)

/* Packet types: one list makes the enum, the names and the count. */
#define TORUS_FRAME_TYPES(X)                                                 \
    X(LINK_ACK, "link_ack")     /* link layer only: acks and handshakes */   \
    X(PING, "ping")                                                          \
    X(PONG, "pong")                                                          \
    X(MEMBERSHIP, "membership")                                              \
    X(CONTROL, "control")                                                    \
    X(FLOOD, "flood")           /* load for the link benchmark (flood.h) */  \
    X(COMM, "comm")             /* application messages (comm/codec.h) */   \
    X(ROUTE, "route")           /* routing tables, one hop (route_table.h) */

enum torus_frame_type {
#define TORUS_FRAME_TYPE_ENUM(name, text) TORUS_FRAME_TYPE_##name,
    TORUS_FRAME_TYPES(TORUS_FRAME_TYPE_ENUM)
#undef TORUS_FRAME_TYPE_ENUM
    TORUS_FRAME_TYPE_COUNT
};

/*
 * Decode results: OK or why the frame was dropped.  One list makes the
 * enum, the names and the count; each reason has its own counter.
 */
#define TORUS_FRAME_DROPS(X)                                                 \
    X(SHORT, "short")                   /* under 64 bytes */                 \
    X(OVERSIZE, "oversize")             /* over CONFIG_MAX_FRAME */          \
    X(BAD_ETHERTYPE, "bad_ethertype")                                        \
    X(BAD_MAGIC, "bad_magic")                                                \
    X(BAD_VERSION, "bad_version")                                            \
    X(LENGTH_MISMATCH, "length_mismatch") /* payload length vs frame */      \
    X(BAD_CHECKSUM, "bad_checksum")     /* keyless: CRC-32 wrong */          \
    X(BAD_TAG, "bad_tag")               /* keyed: forged, damaged, other key */\
    X(BAD_TYPE, "bad_type")                                                  \
    X(BAD_FLAGS, "bad_flags")           /* unknown flag bits */              \
    X(BAD_RESERVED, "bad_reserved")     /* reserved byte not 0 */            \
    X(RANK_OUT_OF_RANGE, "rank_out_of_range")                                \
    X(TTL_EXPIRED, "ttl_expired")

enum torus_frame_status {
    TORUS_FRAME_OK = 0,
#define TORUS_FRAME_DROP_ENUM(name, text) TORUS_FRAME_DROP_##name,
    TORUS_FRAME_DROPS(TORUS_FRAME_DROP_ENUM)
#undef TORUS_FRAME_DROP_ENUM
    TORUS_FRAME_STATUS_COUNT
};

/* A decoded (or to be encoded) frame header. */
struct torus_frame_header {
    uint8_t destination_mac[TORUS_FRAME_MAC_SIZE];
    uint8_t source_mac[TORUS_FRAME_MAC_SIZE];
    uint8_t type;  /* enum torus_frame_type */
    uint8_t flags; /* TORUS_FRAME_FLAG_* */
    uint8_t ttl;
    uint8_t hops;
    uint16_t payload_length;
    uint32_t source;
    uint32_t destination;
    uint64_t epoch;
    uint32_t link_sequence;
    uint32_t link_ack;
    uint32_t link_sender_incarnation;
    uint32_t link_receiver_incarnation;
};

/* count[TORUS_FRAME_OK] counts accepted frames, the rest drops by reason. */
struct torus_frame_counters {
    uint64_t count[TORUS_FRAME_STATUS_COUNT];
};

/*
 * Encodes header and payload into out (sealed under key, NULL: keyless;
 * header's payload_length is ignored and set from payload_length).  Returns
 * the frame length, or 0 when the header is invalid (unknown type or flags,
 * ttl 0), the payload exceeds TORUS_FRAME_MAX_PAYLOAD or capacity is too
 * small.
 */
size_t torus_frame_encode(const struct torus_frame_header *header,
                          const void *payload, size_t payload_length,
                          const struct torus_frame_key *key, uint8_t *out,
                          size_t capacity);

/*
 * Validates frame[0..length) and, when TORUS_FRAME_OK, fills *header and
 * points *payload (may be NULL) into frame.  The check (tag under key, or
 * CRC-32 when key is NULL) is verified right after the framing fields
 * (length, EtherType, magic, version), before any other field is read.
 * Source and destination must be < node_count.  On a drop *header and
 * *payload are left zeroed/NULL.
 */
enum torus_frame_status torus_frame_decode(const uint8_t *frame, size_t length,
                                           uint32_t node_count,
                                           const struct torus_frame_key *key,
                                           struct torus_frame_header *header,
                                           const uint8_t **payload);

/* Adds one to the counter of status. */
void torus_frame_count(struct torus_frame_counters *counters,
                       enum torus_frame_status status);

/* "ok", "short", "bad_checksum", ...; "?" when out of range. */
const char *torus_frame_status_name(enum torus_frame_status status);
/* "link_ack", "ping", ...; "?" when out of range. */
const char *torus_frame_type_name(unsigned type);

/*
 * True when frame[0..length) has the shape of a tori frame (length within
 * 64..CONFIG_MAX_FRAME and equal to 64 + its payload length field), so that
 * the in-place editors below may touch it.  Says nothing of the checksum.
 */
bool torus_frame_is_well_formed(const uint8_t *frame, size_t length);

/* Recomputes the check of a well-formed frame in place (key NULL: CRC). */
void torus_frame_seal(uint8_t *frame, size_t length, const struct torus_frame_key *key);

/* Link-layer fields, rewritten at every hop by the link that sends. */
struct torus_frame_link_fields {
    uint8_t destination_mac[TORUS_FRAME_MAC_SIZE];
    uint8_t source_mac[TORUS_FRAME_MAC_SIZE];
    uint8_t flags; /* replaces the TORUS_FRAME_FLAGS_LINK bits */
    uint32_t sequence;
    uint32_t ack;
    uint32_t sender_incarnation;
    uint32_t receiver_incarnation;
};

/* Writes MACs and link fields into a well-formed frame and reseals it under
 * key (does nothing to a frame that is not well formed). */
void torus_frame_stamp_link(uint8_t *frame, size_t length,
                            const struct torus_frame_link_fields *fields,
                            const struct torus_frame_key *key);

/*
 * Prepares a received well-formed frame for its next hop: takes one from
 * ttl and adds one to hops (saturating at 255).  Returns TORUS_FRAME_OK, or
 * TORUS_FRAME_DROP_TTL_EXPIRED (frame untouched) when no hop is left, or
 * TORUS_FRAME_DROP_LENGTH_MISMATCH when it is not well formed.  Does not
 * reseal: the link that sends it on stamps MACs and link fields and reseals.
 */
enum torus_frame_status torus_frame_forward(uint8_t *frame, size_t length);

/* The MAC of link on node rank (rank < 2^24, link < 256). */
void torus_frame_mac_for_link(uint32_t rank, unsigned link,
                              uint8_t mac[TORUS_FRAME_MAC_SIZE]);

/* Reads rank and link back; false when mac is not a tori link MAC or the
 * link is >= CONFIG_MAX_LINKS. */
bool torus_frame_mac_parse(const uint8_t mac[TORUS_FRAME_MAC_SIZE],
                           uint32_t *rank, unsigned *link);

#endif /* NET_TORUS_FRAME_H */
