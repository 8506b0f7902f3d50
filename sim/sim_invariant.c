/* The simulator's per-step invariants (see sim_invariant.h). */
#include "sim/sim_invariant.h"

#include <inttypes.h>
#include <stdio.h>

bool sim_invariant_node(const struct membership *ctx, uint32_t id, struct sim_life *life,
                        const struct sim_epoch_view *first, char *why, size_t why_size)
{
    uint32_t incarnation = membership_incarnation(ctx);
    if (!life->started || incarnation != life->incarnation) {
        life->started = true;
        life->incarnation = incarnation;
        life->epoch = 0;
    }
    if (!membership_has_view(ctx)) {
        return true;
    }
    uint64_t epoch = membership_epoch(ctx);
    if (!membership_is_member(ctx, id)) {
        snprintf(why, why_size, "node %" PRIu32 " holds view %" PRIx64 " without itself", id,
                 epoch);
        return false;
    }
    if (epoch < life->epoch) {
        snprintf(why, why_size, "node %" PRIu32 " went back from epoch %" PRIx64 " to %" PRIx64,
                 id, life->epoch, epoch);
        return false;
    }
    life->epoch = epoch;
    if (first != NULL &&
        (first->digest != membership_digest(ctx) || first->live != membership_live_count(ctx))) {
        snprintf(why, why_size, "node %" PRIu32 " holds epoch %" PRIx64 " with another membership",
                 id, epoch);
        return false;
    }
    return true;
}

bool sim_exempt_from_epoch_check(uint8_t type)
{
    switch (type) {
    case MEMBERSHIP_MSG_HOW_ARE_YOU:
    case MEMBERSHIP_MSG_I_AM_ALIVE:
    case MEMBERSHIP_MSG_NEW_NODE:
    case MEMBERSHIP_MSG_NODE_ALIVE:
    case MEMBERSHIP_MSG_JOIN_REDIRECT:
    case MEMBERSHIP_MSG_JOIN_DET_ACK:
    case MEMBERSHIP_MSG_VIEW_REQUEST:
    case MEMBERSHIP_MSG_VIEW_CHUNK:
    case MEMBERSHIP_MSG_FAILURE_DET_ACK:
        return true;
    default:
        return false;
    }
}

bool sim_message_is_stale(const struct membership *ctx, const struct membership_msg *msg)
{
    return membership_has_view(ctx) && (msg->header.flags & MEMBERSHIP_FLAG_HAS_VIEW) != 0 &&
           msg->header.epoch < membership_epoch(ctx) &&
           msg->header.stable_epoch <= membership_stable_epoch(ctx) &&
           !sim_exempt_from_epoch_check(msg->header.type) &&
           /* a failure report from the last completed view: a root takes it
            * while a failure round from that view is in flight, superseding
            * the round (coord_takes_stale_report) */
           !(msg->header.type == MEMBERSHIP_MSG_NODE_FAILURE &&
             msg->header.epoch == membership_stable_epoch(ctx));
}

bool sim_view_changed(const struct membership *ctx, uint64_t epoch_before, uint64_t digest_before)
{
    return !membership_has_view(ctx) || membership_epoch(ctx) != epoch_before ||
           membership_digest(ctx) != digest_before;
}
