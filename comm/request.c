/*
 * The request table: application requests in [0, CONFIG_COMM_MAX_REQUESTS),
 * then COMM_COLL_SUBS internal ones per collective slot.  A handle is
 * (generation << 16) | index, never 0, so a stale handle is refused.
 */
#include "comm/internal.h"

#include <string.h>

uint16_t request_alloc(struct comm *ctx, uint16_t index, uint8_t kind, uint8_t owner)
{
    struct comm_request *r = &ctx->requests[index];
    uint16_t generation = (uint16_t)(r->generation + 1u);
    if (generation == 0) {
        generation = 1;
    }
    memset(r, 0, sizeof *r);
    r->generation = generation;
    r->state = COMM_REQ_PENDING;
    r->kind = kind;
    r->owner = owner;
    r->next = COMM_NONE16;
    r->status.comm = COMM_NULL;
    return index;
}

uint16_t request_alloc_app(struct comm *ctx, uint8_t kind)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_REQUESTS; i++) {
        if (ctx->requests[i].state == COMM_REQ_FREE) {
            return request_alloc(ctx, i, kind, 0);
        }
    }
    return COMM_NONE16;
}

uint32_t request_handle(const struct comm *ctx, uint16_t index)
{
    return ((uint32_t)ctx->requests[index].generation << 16) | index;
}

uint16_t request_index(const struct comm *ctx, uint32_t handle)
{
    uint32_t index = handle & 0xffffu;
    if (index >= CONFIG_COMM_MAX_REQUESTS) {
        return COMM_NONE16;
    }
    const struct comm_request *r = &ctx->requests[index];
    if (r->state == COMM_REQ_FREE || r->generation != (handle >> 16)) {
        return COMM_NONE16;
    }
    return (uint16_t)index;
}

void request_complete(struct comm *ctx, uint16_t index, enum comm_error error,
                      struct comm_outbox *out)
{
    struct comm_request *r = &ctx->requests[index];
    if (r->state != COMM_REQ_PENDING) {
        return;
    }
    r->state = COMM_REQ_DONE;
    r->error = (uint8_t)error;
    r->status.error = error;
    if (r->owner == 0) {
        comm_outbox_complete(out, request_handle(ctx, index), (uint8_t)error);
    } else {
        ctx->coll_work |= 1u << (r->owner - 1u);
    }
}

void request_release(struct comm *ctx, uint16_t index)
{
    ctx->requests[index].state = COMM_REQ_FREE;
}

bool request_done(const struct comm *ctx, uint16_t index)
{
    return ctx->requests[index].state == COMM_REQ_DONE;
}

void queue_push(struct comm *ctx, uint16_t *head, uint16_t *tail, uint16_t index)
{
    ctx->requests[index].next = COMM_NONE16;
    if (*head == COMM_NONE16) {
        *head = index;
    } else {
        ctx->requests[*tail].next = index;
    }
    *tail = index;
}

bool queue_remove(struct comm *ctx, uint16_t *head, uint16_t *tail, uint16_t index)
{
    uint16_t previous = COMM_NONE16;
    for (uint16_t i = *head; i != COMM_NONE16; i = ctx->requests[i].next) {
        if (i != index) {
            previous = i;
            continue;
        }
        uint16_t next = ctx->requests[i].next;
        if (previous == COMM_NONE16) {
            *head = next;
        } else {
            ctx->requests[previous].next = next;
        }
        if (*tail == index) {
            *tail = previous;
        }
        ctx->requests[i].next = COMM_NONE16;
        return true;
    }
    return false;
}
