#include "net/torus/dma.h"

#include <string.h>

_Static_assert(CONFIG_MAX_FRAME <= UINT16_MAX, "descriptor length is 16 bits");

void torus_dma_ring_init(struct torus_dma_ring *ring, uint32_t node_count,
                         const struct torus_frame_key *key)
{
    ring->producer = 0;
    ring->consumer = 0;
    ring->node_count = node_count;
    ring->key = key;
    memset(&ring->counters, 0, sizeof(ring->counters));
    for (unsigned i = 0; i < CONFIG_RING_SIZE; i++)
        ring->slots[i].length = 0;
}

static void publish(struct torus_dma_ring *ring, size_t length, uint64_t *ticket)
{
    ring->slots[ring->producer & TORUS_DMA_RING_MASK].length = (uint16_t)length;
    ring->producer++;
    if (ticket != NULL)
        *ticket = ring->counters.injected;
    ring->counters.injected++;
}

enum torus_dma_status torus_dma_inject(struct torus_dma_ring *ring,
                                       const uint8_t *frame, size_t length,
                                       uint64_t *ticket)
{
    if (frame == NULL || length == 0 || length > CONFIG_MAX_FRAME) {
        ring->counters.bad_length++;
        return TORUS_DMA_BAD_LENGTH;
    }
    if (torus_dma_is_full(ring)) {
        ring->counters.full++;
        return TORUS_DMA_FULL;
    }
    memcpy(ring->slots[ring->producer & TORUS_DMA_RING_MASK].frame, frame, length);
    publish(ring, length, ticket);
    return TORUS_DMA_OK;
}

uint8_t *torus_dma_reserve(struct torus_dma_ring *ring)
{
    if (torus_dma_is_full(ring)) {
        ring->counters.full++;
        return NULL;
    }
    return ring->slots[ring->producer & TORUS_DMA_RING_MASK].frame;
}

enum torus_dma_status torus_dma_commit(struct torus_dma_ring *ring,
                                       size_t length, uint64_t *ticket)
{
    if (length == 0 || length > CONFIG_MAX_FRAME) {
        ring->counters.bad_length++;
        return TORUS_DMA_BAD_LENGTH;
    }
    if (torus_dma_is_full(ring)) {
        ring->counters.full++;
        return TORUS_DMA_FULL;
    }
    publish(ring, length, ticket);
    return TORUS_DMA_OK;
}

bool torus_dma_peek(const struct torus_dma_ring *ring, const uint8_t **frame,
                    size_t *length)
{
    if (torus_dma_is_empty(ring)) {
        *frame = NULL;
        *length = 0;
        return false;
    }
    const struct torus_dma_descriptor *slot =
        &ring->slots[ring->consumer & TORUS_DMA_RING_MASK];
    *frame = slot->frame;
    *length = slot->length;
    return true;
}

bool torus_dma_take(struct torus_dma_ring *ring)
{
    if (torus_dma_is_empty(ring))
        return false;
    ring->consumer++;
    ring->counters.taken++;
    return true;
}

unsigned torus_dma_poll(struct torus_dma_ring *ring, unsigned max,
                        const struct torus_dma_dispatch *table, void *context)
{
    const uint32_t available = torus_dma_count(ring); /* the one snapshot */
    unsigned done = 0;
    while (done < max && done < available) {
        struct torus_dma_descriptor *slot =
            &ring->slots[ring->consumer & TORUS_DMA_RING_MASK];
        struct torus_frame_header header;
        const uint8_t *payload;
        enum torus_frame_status status = torus_frame_decode(
            slot->frame, slot->length, ring->node_count, ring->key, &header, &payload);
        torus_frame_count(&ring->counters.frames, status);
        if (status == TORUS_FRAME_OK) {
            torus_dma_handler handler = table != NULL ? table->handler[header.type] : NULL;
            if (handler != NULL) {
                ring->counters.dispatched++;
                /* cert: indirect call, targets are the handlers of the caller's static dispatch table */
                handler(context, &header, payload, slot->frame, slot->length);
            } else {
                ring->counters.unhandled++;
            }
        }
        /* Released only now, so a handler's own injections cannot reuse it. */
        ring->consumer++;
        ring->counters.received++;
        done++;
    }
    return done;
}

bool torus_dma_ticket_done(const struct torus_dma_ring *ring, uint64_t ticket)
{
    return ticket < ring->counters.injected - torus_dma_count(ring);
}
