/*
 * Helpers every module of the state machine uses (see machine.h): sending,
 * events, the history of installed epochs, changes of the live set, the
 * tree from the view.  They call no module (install.c is the tail that
 * does), so every module can use them.
 */
#include "membership/machine/machine.h"

#include <string.h>

#include "membership/reference.h"

/* ------------------------------------------------------------------ */
/* Sending                                                              */
/* ------------------------------------------------------------------ */

void machine_put_header(const struct membership *ctx, struct membership_writer *w,
                        uint8_t type, uint8_t flags)
{
    struct membership_header h = {
        .type = type,
        .flags = flags,
        .sender = ctx->self,
        .incarnation = ctx->incarnation,
        .epoch = ctx->epoch,
        .stable_epoch = ctx->stable_epoch,
    };
    membership_put_header(w, &h);
}

void machine_begin_message(const struct membership *ctx, struct membership_outbox *out,
                          struct membership_writer *w, uint8_t type)
{
    membership_outbox_begin(out, w);
    machine_put_header(ctx, w, type, ctx->has_view ? MEMBERSHIP_FLAG_HAS_VIEW : 0);
}

bool machine_send_simple(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                        uint8_t type)
{
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, type);
    if (!membership_outbox_commit(out, dest, &w))
        return false;
    /* A lost heartbeat is made good by the next one. */
    out->messages[out->message_count - 1u].loss_tolerant = type == MEMBERSHIP_MSG_HEARTBEAT;
    return true;
}

/* Forwards an encoded message with this node as sender. */
bool machine_send_forward(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                         const uint8_t *payload, size_t length)
{
    struct membership_writer w;
    membership_outbox_begin(out, &w);
    if (w.capacity < length) {
        w.overflow = true;
    } else {
        memcpy(w.buffer, payload, length);
        membership_patch_sender(w.buffer, length, ctx->self, ctx->incarnation);
        w.length = length;
    }
    return membership_outbox_commit(out, dest, &w);
}

/* ------------------------------------------------------------------ */
/* Events                                                               */
/* ------------------------------------------------------------------ */

void machine_emit_failure(struct membership *ctx, uint32_t who, uint64_t detect_ns, uint8_t cause,
                         uint64_t now, struct membership_outbox *out)
{
    struct membership_event *e =
        membership_outbox_event(out, MEMBERSHIP_EVENT_FAILURE_DETECTED, now);
    if (e != NULL) {
        e->u.failure.who = who;
        e->u.failure.detector = ctx->self;
        e->u.failure.detect_ns = detect_ns;
        e->u.failure.cause = cause;
        e->u.failure.model = cause == MEMBERSHIP_CAUSE_APPLICATION ? FAULT_MODEL_PROCESS
                                                                   : FAULT_MODEL_PHYSICAL;
    }
}

/* ------------------------------------------------------------------ */
/* View bookkeeping                                                     */
/* ------------------------------------------------------------------ */

void machine_history_reset(struct membership *ctx)
{
    ctx->history_count = 0;
}

void machine_history_add(struct membership *ctx, uint64_t epoch)
{
    if (ctx->history_count < MEMBERSHIP_HISTORY) {
        ctx->history[ctx->history_count++] = epoch;
        return;
    }
    memmove(ctx->history, ctx->history + 1, sizeof(uint64_t) * (MEMBERSHIP_HISTORY - 1));
    ctx->history[MEMBERSHIP_HISTORY - 1] = epoch;
}

bool machine_history_has(const struct membership *ctx, uint64_t epoch)
{
    for (uint32_t i = 0; i < ctx->history_count; i++) {
        if (ctx->history[i] == epoch) {
            return true;
        }
    }
    return false;
}

void machine_ref_to_current(struct membership *ctx)
{
    membership_reference_take(&ctx->ref, &ctx->view, ctx->root_pos);
}

/* Every change of the live set goes through these (the reference is kept). */
bool machine_view_remove(struct membership *ctx, uint32_t id)
{
    return membership_reference_remove(&ctx->ref, &ctx->view, machine_pos_of(ctx, id));
}

bool machine_view_add(struct membership *ctx, uint32_t id)
{
    return membership_reference_add(&ctx->ref, &ctx->view, machine_pos_of(ctx, id));
}

/* Learns that view `stable` completed. */
void machine_learn_stable(struct membership *ctx, uint64_t stable)
{
    if (stable <= ctx->stable_epoch) {
        return;
    }
    ctx->stable_epoch = stable;
    if (stable == ctx->epoch) {
        machine_ref_to_current(ctx);
    }
}

/* Root, levels and our tree links, from the view. */
void machine_locate_tree(struct membership *ctx)
{
    ctx->root_pos = membership_tree_root(&ctx->view);
    ctx->levels = membership_tree_max_levels(ctx->view.live, ctx->layout.kind, ctx->config.radix);
    if (!membership_tree_locate(&ctx->view, &ctx->layout, ctx->config.radix, ctx->self_pos,
                                &ctx->links)) {
        memset(&ctx->links, 0, sizeof ctx->links);
        ctx->links.parent = MEMBERSHIP_POS_NONE;
    }
}
