/*
 * A member's part in a round (see machine.h): a change (FAILED_NODE,
 * ROOT_DEAD, ROOT_AND_NODE_FAILURE, NEW_NODE_JOIN, ALIVE_NODE_JOIN) comes
 * from the parent in the new tree as a delta over a named base epoch; the
 * node applies it (or fetches the whole view first), forwards it to its
 * children, waits (subtree levels x ack timeout) and acks up (FAILURE_ACK,
 * JOIN_ACK) with the messages and members of its subtree; a child whose
 * ack is late is asked again, and reported (its subtree swept) only when
 * it stays silent.  The waiting for children's acks is shared with the
 * coordinator (round_acks_*).
 */
#include "membership/machine/machine.h"

#include <string.h>

#include "membership/reference.h"

static uint8_t ack_type_for(uint8_t change_type)
{
    return (change_type == MEMBERSHIP_MSG_NEW_NODE_JOIN ||
            change_type == MEMBERSHIP_MSG_ALIVE_NODE_JOIN)
               ? MEMBERSHIP_MSG_JOIN_ACK
               : MEMBERSHIP_MSG_FAILURE_ACK;
}

void round_acks_begin(struct membership_acks *a, uint32_t max_asks, uint64_t wait_ns,
                      uint64_t now)
{
    a->pending = (uint32_t)((UINT64_C(1) << a->count) - 1u);
    a->heard = 0;
    a->asks = 0;
    a->max_asks = max_asks;
    a->wait_ns = wait_ns;
    a->deadline_ns = machine_deadline_after(now, wait_ns);
}

bool round_acks_is_pending(const struct membership_acks *a, uint32_t sender)
{
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->children[i] == sender && ((a->pending >> i) & 1u)) {
            return true;
        }
    }
    return false;
}

bool round_acks_take(struct membership_acks *a, uint32_t sender)
{
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->children[i] == sender && ((a->pending >> i) & 1u)) {
            a->pending &= ~(UINT32_C(1) << i);
            return true;
        }
    }
    return false;
}

void round_acks_heard(struct membership_acks *a, uint32_t sender)
{
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->children[i] == sender) {
            a->heard |= a->pending & (UINT32_C(1) << i);
        }
    }
}

/*
 * The wait ran out with acks missing.  An ack can be lost on the way (its
 * route crossed a node that had just died, before the routers there knew),
 * or the change on its way down: one missing ack is no proof of death.
 * The first time, every late child is asked again - the change re-sent,
 * which a child that already acked answers with its ack again, and a probe
 * - for a probe timeout.  After that, a child heard from since it was
 * asked is alive and still waiting for its own subtree (or lost the change
 * and only now got it): it is asked again and given a subtree's wait, at
 * most max_asks times in all (once per level below: each level may have
 * had to ask in turn); a child silent since it was asked is reported.
 * Returns the children to report (no longer pending); *ask: to ask again.
 */
uint32_t round_acks_expire(struct membership_acks *a, uint64_t probe_timeout_ns, uint64_t now,
                           uint32_t *ask)
{
    uint32_t silent = a->asks == 0 ? 0 : a->pending & ~a->heard;
    if (a->asks >= a->max_asks) {
        silent = a->pending;
    }
    a->pending &= ~silent;
    *ask = a->pending;
    if (a->pending != 0) {
        uint64_t wait = a->asks == 0 ? probe_timeout_ns : a->wait_ns;
        a->deadline_ns = machine_deadline_after(now, wait);
        a->asks++;
        a->heard = 0;
    }
    return silent;
}

static void round_finish(struct membership *ctx, struct membership_outbox *out)
{
    struct membership_round *r = &ctx->round;
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, r->ack_type);
    membership_put_u64(&w, r->epoch);
    membership_put_u32(&w, r->messages + 1u); /* + this ack */
    membership_put_u32(&w, r->reached);
    membership_put_u8(&w, r->incomplete ? MEMBERSHIP_ACK_INCOMPLETE : 0);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 0);
    membership_outbox_commit(out, r->parent, &w);
    r->active = false;
    r->done_epoch = r->epoch;
}

void round_start(struct membership *ctx, uint32_t parent, const uint8_t *payload, size_t length,
                 uint32_t extra_messages, uint64_t now, struct membership_outbox *out)
{
    struct membership_round *r = &ctx->round;
    if (payload != r->change) {
        memcpy(r->change, payload, length);
        r->change_length = (uint16_t)length;
    }
    r->active = true;
    r->waiting_sync = false;
    r->epoch = ctx->epoch;
    r->parent = parent;
    r->ack_type = ack_type_for(r->change[1]);
    r->messages = extra_messages;
    r->reached = 1;
    r->incomplete = false;
    r->acks.count = 0;
    for (uint32_t i = 0; i < ctx->links.child_count; i++) {
        /*
         * In a handover (the new root is a joiner) the coordinator that sent
         * us the change may be one of our children: it gets the change like
         * any child and forwards it to its own subtree.
         */
        uint32_t child = machine_id_at(ctx, ctx->links.children[i]);
        r->acks.children[r->acks.count++] = child;
        machine_send_forward(ctx, out, child, r->change, r->change_length);
        r->messages++;
    }
    if (r->acks.count == 0) {
        r->acks.pending = 0;
        round_finish(ctx, out);
        return;
    }
    uint32_t levels_below = ctx->links.subtree_levels > 0 ? ctx->links.subtree_levels - 1u : 0;
    round_acks_begin(&r->acks, levels_below + 1u, levels_below * ctx->config.ack_timeout_ns, now);
}

/* Waits for the whole view before taking part in this change. */
static void round_wait_sync(struct membership *ctx, uint32_t parent, uint64_t epoch,
                            const uint8_t *payload, size_t length, uint64_t now)
{
    struct membership_round *r = &ctx->round;
    memcpy(r->change, payload, length);
    r->change_length = (uint16_t)length;
    r->active = true;
    r->waiting_sync = true;
    r->epoch = epoch;
    r->parent = parent;
    r->acks.count = 0;
    r->acks.pending = 0;
    uint64_t wait = (uint64_t)(ctx->levels + 1u) * ctx->config.ack_timeout_ns +
                    4u * ctx->config.sync_timeout_ns;
    r->acks.deadline_ns = machine_deadline_after(now, wait);
}

static bool change_lists_joiner(const struct membership_msg *msg, uint32_t id, uint32_t incarnation)
{
    for (uint32_t i = 0; i < msg->body.change.joined_count; i++) {
        uint32_t jid;
        uint32_t jinc;
        membership_msg_joined(msg, i, &jid, &jinc);
        if (jid == id && jinc == incarnation) {
            return true;
        }
    }
    return false;
}

/*
 * Applies a change to the installed base view.  Returns false, with the
 * view untouched, when the result does not match what the root announced.
 */
static bool apply_change(struct membership *ctx, const struct membership_msg *msg)
{
    const struct membership_body_change *c = &msg->body.change;
    uint32_t removed[MEMBERSHIP_MAX_CHANGE_FAILED];
    uint32_t removed_count = 0;
    uint32_t added[MEMBERSHIP_MAX_CHANGE_JOINED];
    uint32_t added_count = 0;
    if ((c->flags & MEMBERSHIP_CHANGE_BASE_STABLE) != 0 && c->base_epoch == ctx->epoch) {
        /* The base completed: it is the reference before the delta counts. */
        if (c->base_epoch > ctx->stable_epoch) {
            ctx->stable_epoch = c->base_epoch;
        }
        machine_ref_to_current(ctx);
    }
    uint64_t digest = ctx->digest;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        uint32_t id = membership_msg_failed_id(msg, i);
        if (machine_view_remove(ctx, id)) {
            removed[removed_count++] = id;
            digest ^= membership_id_digest(id);
        }
    }
    for (uint32_t i = 0; i < c->joined_count; i++) {
        uint32_t id;
        uint32_t inc;
        membership_msg_joined(msg, i, &id, &inc);
        if (machine_view_add(ctx, id)) {
            added[added_count++] = id;
            digest ^= membership_id_digest(id);
        }
    }
    uint32_t root_pos = membership_tree_root(&ctx->view);
    bool ok = ctx->view.live == c->live_after && digest == c->digest_after &&
              root_pos != MEMBERSHIP_POS_NONE && machine_id_at(ctx, root_pos) == c->root_after &&
              membership_view_is_live(&ctx->view, ctx->self_pos);
    if (!ok) {
        for (uint32_t i = 0; i < added_count; i++) {
            machine_view_remove(ctx, added[i]);
        }
        for (uint32_t i = 0; i < removed_count; i++) {
            machine_view_add(ctx, removed[i]);
        }
        return false;
    }
    ctx->digest = digest;
    ctx->epoch = msg->header.epoch;
    if (msg->header.stable_epoch > ctx->stable_epoch) {
        ctx->stable_epoch = msg->header.stable_epoch;
    }
    return true;
}

bool round_change_removes(const struct membership_msg *msg, uint32_t id)
{
    for (uint32_t i = 0; i < msg->body.change.failed_count; i++) {
        if (membership_msg_failed_id(msg, i) == id) {
            return true;
        }
    }
    return false;
}

static bool change_readds(const struct membership_msg *msg, uint32_t id)
{
    for (uint32_t i = 0; i < msg->body.change.joined_count; i++) {
        uint32_t jid;
        uint32_t jinc;
        membership_msg_joined(msg, i, &jid, &jinc);
        if (jid == id) {
            return true;
        }
    }
    return false;
}

void round_report_decisions(struct membership *ctx, const struct membership_msg *msg,
                            uint64_t now, struct membership_outbox *out)
{
    if ((msg->body.change.flags & MEMBERSHIP_CHANGE_DECIDED) == 0 ||
        msg->header.epoch != ctx->epoch || ctx->decisions_epoch == ctx->epoch) {
        return;
    }
    ctx->decisions_epoch = ctx->epoch;
    for (uint32_t i = 0; i < msg->body.change.failed_count; i++) {
        uint8_t model;
        uint8_t action;
        membership_msg_decision(msg, i, &model, &action);
        machine_emit_removal(ctx, out, now, ctx->epoch, membership_msg_failed_id(msg, i), model,
                             action);
    }
}

void round_handle_change(struct membership *ctx, const struct membership_msg *msg,
                         const uint8_t *payload, size_t length, uint64_t now,
                         struct membership_outbox *out)
{
    const struct membership_header *h = &msg->header;
    struct membership_round *r = &ctx->round;
    if (r->active && r->epoch == h->epoch) {
        /* Asked again while our subtree (or the view) is still awaited: our
         * ack comes when it is done, and the probe beside the change says
         * we are alive. */
        ctx->counters.drops_unexpected++;
        return;
    }
    if (!ctx->has_view) {
        if (!ctx->join.active || !change_lists_joiner(msg, ctx->self, ctx->incarnation)) {
            ctx->counters.drops_no_view++;
            return;
        }
        round_wait_sync(ctx, h->sender, h->epoch, payload, length, now);
        transfer_start(ctx, h->sender, now, out);
        return;
    }
    if (h->epoch == ctx->epoch) {
        if (r->done_epoch == h->epoch) {
            if (r->epoch == h->epoch && r->parent == h->sender) {
                round_finish(ctx, out); /* our ack was lost: the same ack again */
            } else {
                ctx->counters.drops_unexpected++;
            }
            return;
        }
        /* Already installed (we synced it, or minted it and hand over). */
        round_report_decisions(ctx, msg, now, out);
        round_start(ctx, h->sender, payload, length, 0, now, out);
        return;
    }
    if (h->epoch < ctx->epoch) {
        ctx->counters.drops_stale++;
        return;
    }
    /* A change listing every failure since the stable view we hold (it
     * superseded one we never got) applies as well. */
    bool from_stable = (msg->body.change.flags & MEMBERSHIP_CHANGE_SINCE_STABLE) != 0 &&
                       ctx->epoch == h->stable_epoch && ctx->stable_epoch == h->stable_epoch;
    if (msg->body.change.base_epoch == ctx->epoch || from_stable) {
        if (round_change_removes(msg, ctx->self) && !change_readds(msg, ctx->self)) {
            /* We were declared dead: this view is not ours. */
            join_expel(ctx, now, out, h->sender, h->epoch);
            return;
        }
        if (apply_change(ctx, msg)) {
            for (uint32_t i = 0; i < msg->body.change.joined_count; i++) {
                uint32_t jid;
                uint32_t jinc;
                membership_msg_joined(msg, i, &jid, &jinc);
                detector_forget_life(ctx, jid);
            }
            coord_reset(ctx);
            install_view(ctx, now, out);
            round_report_decisions(ctx, msg, now, out);
            round_start(ctx, h->sender, payload, length, 0, now, out);
            return;
        }
    }
    /* We missed something: fetch the whole view, then take part. */
    round_wait_sync(ctx, h->sender, h->epoch, payload, length, now);
    transfer_start(ctx, h->sender, now, out);
}

bool round_ack_fits(struct membership *ctx, const struct membership_msg *msg)
{
    struct membership_tree_links links;
    uint32_t sender = msg->header.sender;
    if (sender < ctx->node_count &&
        membership_tree_locate(&ctx->view, &ctx->layout, ctx->config.radix,
                               machine_pos_of(ctx, sender), &links) &&
        msg->body.ack.reached <= links.subtree_size) {
        return true;
    }
    ctx->counters.drops_bad_ack++;
    return false;
}

void round_handle_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                      struct membership_outbox *out)
{
    if (coord_take_ack(ctx, msg, now, out)) {
        return; /* for the round this node coordinates */
    }
    struct membership_round *r = &ctx->round;
    if (r->active && !r->waiting_sync && r->epoch == msg->body.ack.epoch &&
        round_acks_is_pending(&r->acks, msg->header.sender)) {
        if (!round_ack_fits(ctx, msg)) {
            return; /* the child stays pending: asked again, its real ack counts */
        }
        round_acks_take(&r->acks, msg->header.sender);
        r->messages += msg->body.ack.messages;
        r->reached += msg->body.ack.reached;
        r->incomplete = r->incomplete || (msg->body.ack.flags & MEMBERSHIP_ACK_INCOMPLETE);
        if (r->acks.pending == 0) {
            round_finish(ctx, out);
        }
        return;
    }
    ctx->counters.drops_unexpected++;
}

void round_probe_asked(struct membership *ctx, const struct membership_acks *a, uint32_t ask,
                       struct membership_outbox *out)
{
    for (uint32_t i = 0; i < a->count; i++) {
        if ((ask >> i) & 1u) {
            machine_send_simple(ctx, out, a->children[i], MEMBERSHIP_MSG_HOW_ARE_YOU);
            ctx->counters.acks_asked++;
        }
    }
}

void round_heard(struct membership *ctx, uint32_t sender)
{
    if (ctx->round.active && !ctx->round.waiting_sync) {
        round_acks_heard(&ctx->round.acks, sender);
    }
    if (ctx->coord.active) {
        round_acks_heard(&ctx->coord.acks, sender);
    }
}

/* Late children asked again; silent ones reported, their subtrees swept. */
void round_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_round *r = &ctx->round;
    if (!r->active || r->acks.deadline_ns > now) {
        return;
    }
    if (r->waiting_sync) {
        r->active = false; /* never got the view: the parent will report us */
        return;
    }
    uint32_t ask = 0;
    uint32_t silent = round_acks_expire(&r->acks, detector_probe_timeout(ctx), now, &ask);
    for (uint32_t i = 0; i < r->acks.count; i++) {
        if (((ask >> i) & 1u) &&
            machine_send_forward(ctx, out, r->acks.children[i], r->change, r->change_length)) {
            r->messages++;
        }
    }
    round_probe_asked(ctx, &r->acks, ask, out);
    for (uint32_t i = 0; i < r->acks.count; i++) {
        if ((silent >> i) & 1u) {
            detector_sweep_subtree(ctx, r->acks.children[i], now, out);
            detector_add_suspect(ctx, r->acks.children[i], MEMBERSHIP_CAUSE_ACK, now, now, out);
        }
    }
    r->incomplete = r->incomplete || silent != 0;
    if (r->acks.pending == 0 && ctx->has_view && r->active) {
        round_finish(ctx, out);
    }
}
