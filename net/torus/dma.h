/*
 * The DMA abstraction, after Blue Gene's injection and reception FIFOs:
 * static rings of CONFIG_RING_SIZE descriptors, each owning a static
 * CONFIG_MAX_FRAME buffer.  A ring has one producer and one consumer:
 *
 *   injection ring   node code -> torus_dma_inject -> ring -> torus_dma_peek/
 *                    torus_dma_take -> link driver puts it on the wire
 *   reception ring   link driver -> torus_dma_reserve/commit (or inject) ->
 *                    ring -> torus_dma_poll -> handler by packet type
 *
 * Nothing blocks: a full ring says so and the caller decides.  Indices are
 * free-running 32-bit counters (occupancy = producer - consumer), so empty,
 * full and wrap-around are exact.  Pure: no I/O, no globals, no allocation.
 */
#ifndef NET_TORUS_DMA_H
#define NET_TORUS_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/frame.h"

#define TORUS_DMA_RING_MASK ((uint32_t)CONFIG_RING_SIZE - 1u)

enum torus_dma_status {
    TORUS_DMA_OK = 0,
    TORUS_DMA_FULL,       /* no free descriptor: nothing was copied */
    TORUS_DMA_BAD_LENGTH, /* 0 or more than CONFIG_MAX_FRAME bytes */
};

struct torus_dma_descriptor {
    uint16_t length;
    uint8_t frame[CONFIG_MAX_FRAME];
};

struct torus_dma_counters {
    uint64_t injected;    /* frames put in by the producer (inject, commit) */
    uint64_t full;        /* refused because the ring was full */
    uint64_t bad_length;  /* refused because of their length */
    uint64_t taken;       /* removed by torus_dma_take */
    uint64_t received;    /* removed by torus_dma_poll, whatever the outcome */
    uint64_t dispatched;  /* handed to a handler */
    uint64_t unhandled;   /* valid, but no handler for the packet type */
    struct torus_frame_counters frames; /* decode verdicts in torus_dma_poll */
};

struct torus_dma_ring {
    uint32_t producer;   /* descriptors ever filled (mod 2^32) */
    uint32_t consumer;   /* descriptors ever emptied (mod 2^32) */
    uint32_t node_count; /* ranks below it are valid in polled frames */
    const struct torus_frame_key *key; /* polled frames' tag key; NULL: CRC */
    struct torus_dma_counters counters;
    struct torus_dma_descriptor slots[CONFIG_RING_SIZE];
};

/*
 * A handler gets the decoded header, the payload (inside frame) and the
 * frame itself, which it may edit in place (to forward it, say) until it
 * returns; the descriptor is released afterwards.  A handler must not poll
 * the ring it was called from.
 */
typedef void (*torus_dma_handler)(void *context,
                                  const struct torus_frame_header *header,
                                  const uint8_t *payload, uint8_t *frame,
                                  size_t length);

/* The dispatch table, indexed by packet type; NULL: no handler (counted). */
struct torus_dma_dispatch {
    torus_dma_handler handler[TORUS_FRAME_TYPE_COUNT];
};

/* Empties the ring and its counters.  Polled frames are checked under key
 * (kept by pointer, NULL: keyless, see torus_frame_decode). */
void torus_dma_ring_init(struct torus_dma_ring *ring, uint32_t node_count,
                         const struct torus_frame_key *key);

/*
 * Copies frame into the next free descriptor.  On TORUS_DMA_OK, *ticket
 * (when not NULL) receives the frame's sequence number in this ring: 0 for
 * the first frame ever injected, then 1, 2, ...
 */
enum torus_dma_status torus_dma_inject(struct torus_dma_ring *ring,
                                       const uint8_t *frame, size_t length,
                                       uint64_t *ticket);

/*
 * Zero-copy producing: the buffer (CONFIG_MAX_FRAME bytes) of the next free
 * descriptor, or NULL when the ring is full (counted as full).  Nothing is
 * produced until torus_dma_commit; reserving again returns the same buffer.
 */
uint8_t *torus_dma_reserve(struct torus_dma_ring *ring);

/* Publishes the reserved descriptor holding length bytes. */
enum torus_dma_status torus_dma_commit(struct torus_dma_ring *ring,
                                       size_t length, uint64_t *ticket);

/* The oldest frame, left in place; false when the ring is empty. */
bool torus_dma_peek(const struct torus_dma_ring *ring, const uint8_t **frame,
                    size_t *length);

/* Releases the oldest frame; false when the ring is empty. */
bool torus_dma_take(struct torus_dma_ring *ring);

/*
 * Takes ONE snapshot of the producer index and handles up to max of the
 * frames present then, oldest first: each is decoded and its tag checked
 * (a bad frame is counted by reason and dropped), then passed to table->handler[type] (no
 * handler: counted as unhandled).  Frames produced meanwhile, by a handler
 * included, wait for the next call.  Returns the frames removed.
 */
unsigned torus_dma_poll(struct torus_dma_ring *ring, unsigned max,
                        const struct torus_dma_dispatch *table, void *context);

/* True once the frame with that ticket has left the ring. */
bool torus_dma_ticket_done(const struct torus_dma_ring *ring, uint64_t ticket);

static inline uint32_t torus_dma_count(const struct torus_dma_ring *ring)
{
    return ring->producer - ring->consumer;
}
static inline bool torus_dma_is_empty(const struct torus_dma_ring *ring)
{
    return torus_dma_count(ring) == 0;
}
static inline bool torus_dma_is_full(const struct torus_dma_ring *ring)
{
    return torus_dma_count(ring) >= CONFIG_RING_SIZE;
}

#endif /* NET_TORUS_DMA_H */
