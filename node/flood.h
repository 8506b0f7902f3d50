/*
 * Flood: load for the link benchmark (tori-bench-link), as a node service.
 *
 *   console "flood DST COUNT SIZE"  send COUNT frames of SIZE payload bytes
 *                                   to DST, as fast as the injection ring
 *                                   takes them
 *   console "flood stats"           what this node received, and its links'
 *                                   and drivers' counters
 *   console "flood check SIZE"      the per-hop cost of a frame's check on
 *                                   this CPU: seal and verify, keyless
 *                                   (CRC-32) and tagged (SipHash-2-4)
 *
 *   event=flood-done dst= count= size= sent= waits= stalled= elapsed_ns=
 *       once every frame is in the injection ring (or the flood stalled)
 *   event=flood-rx src= id= frames= bytes= missing= old= span_ns=
 *                  total_frames= total_bytes=
 *   event=flood-links retransmitted= timeouts= ... (sums over all links)
 *   event=flood-check size= frames= ok= crc_ns= tag_ns= (totals over frames)
 *
 * Back-pressure: the sender never blocks the poll loop.  Each poll pass it
 * offers at most TORUS_FLOOD_BATCH frames and stops at the first full
 * injection ring (checked before sending, so a wait is not counted as a
 * drop by the network); the network's poller drains the ring as the link
 * window opens, and the next pass refills it.  With no route to DST for
 * TORUS_FLOOD_STALL_NS the flood ends early (stalled=1, sent < count).
 *
 * Payload (little-endian): flood id (4), sequence (4), count (4), then
 * filler.  The receiver follows one flood at a time (the latest source and
 * id it saw): frames counted, sequence gaps (missing) and sequence numbers
 * at or below one already seen (old), and the time from its first to its
 * last frame (span_ns, on the receiver's clock).
 */
#ifndef NODE_FLOOD_H
#define NODE_FLOOD_H

#include <stdbool.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/frame.h"
#include "net/torus/network.h"

#define TORUS_FLOOD_HEADER_SIZE 12u
#define TORUS_FLOOD_MIN_SIZE TORUS_FLOOD_HEADER_SIZE
#define TORUS_FLOOD_MAX_SIZE TORUS_FRAME_MAX_PAYLOAD
#define TORUS_FLOOD_MAX_COUNT 10000000u
/* Frames offered per poll pass at most: bounds the time between passes. */
#define TORUS_FLOOD_BATCH CONFIG_RING_SIZE
#define TORUS_FLOOD_STALL_NS 2000000000ull

struct torus_flood_sender {
    bool active;
    uint32_t destination;
    uint32_t count;
    uint32_t size;
    uint32_t id;           /* of the latest flood */
    uint32_t next;         /* sequence number of the next frame */
    uint64_t waits;        /* passes that found the ring full or no route */
    uint64_t started_ns;   /* first frame injected; 0: not yet */
    uint64_t progress_ns;  /* last frame injected, or the start */
};

struct torus_flood_receiver {
    bool following;        /* a flood was seen */
    uint32_t source;
    uint32_t id;
    uint32_t expected;     /* next sequence number */
    uint64_t frames, bytes, missing, old;
    uint64_t first_ns, last_ns;
    uint64_t total_frames, total_bytes;
    uint64_t malformed;    /* payload too short for the flood header */
};

struct torus_flood {
    struct torus_network *network;
    struct torus_flood_sender sender;
    struct torus_flood_receiver receiver;
    uint8_t payload[TORUS_FLOOD_MAX_SIZE];
};

/* Takes FLOOD frames from the network; no command, no poller (tests). */
void torus_flood_init(struct torus_flood *flood, struct torus_network *network);

/*
 * Starts a flood; false (nothing started) when one is running, dst is this
 * node or out of range, count is 0 or above TORUS_FLOOD_MAX_COUNT, or size
 * is outside TORUS_FLOOD_MIN_SIZE..TORUS_FLOOD_MAX_SIZE.
 */
bool torus_flood_start(struct torus_flood *flood, uint32_t destination,
                       uint32_t count, uint32_t size, uint64_t now_ns);

/* Offers the next batch to the network; returns the frames injected. */
unsigned torus_flood_poll(struct torus_flood *flood, uint64_t now_ns);

/*
 * The node's flood service: one static instance on network, with its
 * console command, poller and a timer that wakes an idle node for the stall
 * check (node/node_network.c calls it at init).
 */
void torus_flood_service_init(struct torus_network *network);

#endif /* NODE_FLOOD_H */
