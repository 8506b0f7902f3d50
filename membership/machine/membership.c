/*
 * The membership state machine's entry points (see membership.h for the
 * protocol, machine.h for its modules): receiving a message (decode, the
 * ordering of views, dispatch to the module), ticks (every module's timers
 * in a fixed order), the next deadline, link events, suspicions, joining.
 *
 * Roles a node can hold at once:
 *  - member: holds a view, watches tree and torus neighbours, reports
 *    suspects to the root (NODE_FAILURE) or, when the root itself is
 *    suspected, to the next live member in layout order (ROOT_FAILURE);
 *  - round: forwards a change to its children in the new tree and acks up
 *    once they all acked (or reports the silent ones and acks "incomplete");
 *  - coordinator: the root that minted a change, waiting for the acks of
 *    the new tree's top and reporting `stable`;
 *  - sync: fetching a whole view in chunks (missed changes, joining);
 *  - joiner: no view, asking contacts in turn to be let in.
 */
#include "membership/membership.h"

#include "membership/machine/machine.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static void send_notice(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                        uint64_t their_epoch)
{
    for (uint32_t i = 0; i < MEMBERSHIP_NOTICE_CACHE; i++) {
        if (ctx->notice_sender[i] == dest && ctx->notice_epoch[i] == their_epoch) {
            return; /* told them already */
        }
    }
    ctx->notice_sender[ctx->notice_next] = dest;
    ctx->notice_epoch[ctx->notice_next] = their_epoch;
    ctx->notice_next = (ctx->notice_next + 1u) % MEMBERSHIP_NOTICE_CACHE;
    ctx->counters.notices_sent++;
    machine_send_simple(ctx, out, dest, MEMBERSHIP_MSG_VIEW_NOTICE);
}

/*
 * A node we removed talks to us with its old view: it may never hear
 * otherwise (no heartbeats, nobody sends it changes), so say that our view
 * is newer; it fetches it, finds itself out and rejoins.
 */
static void tell_if_removed(struct membership *ctx, struct membership_outbox *out,
                            const struct membership_header *h)
{
    if (ctx->has_view && (h->flags & MEMBERSHIP_FLAG_HAS_VIEW) != 0 && h->epoch < ctx->epoch &&
        !machine_in_view(ctx, h->sender)) {
        send_notice(ctx, out, h->sender, h->epoch);
    }
}

/* ------------------------------------------------------------------ */
/* Ordering of views                                                    */
/* ------------------------------------------------------------------ */

enum key_verdict { KEY_SAME, KEY_BEHIND, KEY_STALE, KEY_DEAD_BRANCH };

static enum key_verdict compare_key(struct membership *ctx, const struct membership_msg *msg)
{
    const struct membership_header *h = &msg->header;
    if (h->epoch == ctx->epoch) {
        return KEY_SAME;
    }
    if (h->epoch > ctx->epoch) {
        if (membership_msg_is_change(h->type) && msg->body.change.base_epoch == ctx->epoch) {
            return KEY_BEHIND; /* a direct successor of our view */
        }
        return h->stable_epoch >= ctx->stable_epoch ? KEY_BEHIND : KEY_STALE;
    }
    if (h->stable_epoch > ctx->stable_epoch) {
        if (machine_history_has(ctx, h->stable_epoch)) {
            machine_learn_stable(ctx, h->stable_epoch); /* an ancestor of ours completed */
            return KEY_STALE;
        }
        if (ctx->history_count > 0 && h->stable_epoch > ctx->history[0]) {
            /* A view completed that we never installed: we are on a dead branch. */
            return KEY_DEAD_BRANCH;
        }
    }
    return KEY_STALE;
}

/* ------------------------------------------------------------------ */
/* Time                                                                 */
/* ------------------------------------------------------------------ */

static void shift_deadline(uint64_t *deadline, uint64_t gap)
{
    if (*deadline != MEMBERSHIP_NEVER) {
        *deadline = machine_deadline_after(*deadline, gap);
    }
}

/*
 * Starts the clock on first use, and notices when this node itself was
 * stopped (a gap longer than the heartbeat timeout between calls): then
 * the silence of others is ours, so every timer is pushed back by the gap.
 */
static void note_time(struct membership *ctx, uint64_t now)
{
    if (ctx->last_now_ns == MEMBERSHIP_NEVER) {
        ctx->last_now_ns = now;
        for (uint32_t i = 0; i < ctx->watch_count; i++) {
            ctx->watch[i].last_heard_ns = now;
        }
        ctx->next_heartbeat_ns = now;
        return;
    }
    if (now <= ctx->last_now_ns) {
        return;
    }
    uint64_t gap = now - ctx->last_now_ns;
    ctx->last_now_ns = now;
    if (ctx->config.heartbeat_ns == 0 || gap <= ctx->config.heartbeat_timeout_ns) {
        return;
    }
    ctx->counters.pauses++;
    for (uint32_t i = 0; i < ctx->watch_count; i++) {
        ctx->watch[i].last_heard_ns = now;
    }
    detector_forget_beats(ctx);
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        shift_deadline(&ctx->probes[i].deadline_ns, gap);
    }
    shift_deadline(&ctx->report_deadline_ns, gap);
    shift_deadline(&ctx->round.acks.deadline_ns, gap);
    shift_deadline(&ctx->coord.acks.deadline_ns, gap);
    shift_deadline(&ctx->coord.confirm_deadline_ns, gap);
    shift_deadline(&ctx->sync.deadline_ns, gap);
    shift_deadline(&ctx->join.deadline_ns, gap);
    shift_deadline(&ctx->lag_deadline_ns, gap);
    shift_deadline(&ctx->search.deadline_ns, gap);
    shift_deadline(&ctx->sweep.deadline_ns, gap);
    shift_deadline(&ctx->census.deadline_ns, gap);
    coord_pause(ctx, now);
}

/* ------------------------------------------------------------------ */
/* Public entry points                                                  */
/* ------------------------------------------------------------------ */

/* Runs flagged work; each pass either finishes it or flags less (bounded). */
static void run_pending(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    for (unsigned pass = 0; pass < 8u && ctx->pending_work != 0; pass++) {
        uint32_t work = ctx->pending_work;
        ctx->pending_work = 0;
        if ((work & MACHINE_WORK_REPORT) != 0) {
            detector_send_report(ctx, now, out);
        }
        if ((work & MACHINE_WORK_COORD) != 0) {
            coord_maybe_start(ctx, now, out);
        }
    }
    relay_wrap_outbox(ctx, out); /* last: whatever went out for a peer out of reach */
}

/*
 * Handles one message; relayed: it came inside an envelope (see relay.c)
 * and is handled as from its origin.  An envelope for us returns true with
 * the message inside (*inner), for the caller to handle next.
 */
static bool receive_message(struct membership *ctx, const uint8_t *payload, size_t length,
                            uint64_t now_ns, struct membership_outbox *out, bool relayed,
                            const uint8_t **inner, size_t *inner_length)
{
    note_time(ctx, now_ns);
    ctx->counters.received++;
    struct membership_msg msg;
    if (membership_decode(payload, length, ctx->node_count, &msg) != MEMBERSHIP_DECODE_OK) {
        ctx->counters.drops_malformed++;
        return false;
    }
    const struct membership_header *h = &msg.header;
    if (h->sender == ctx->self) {
        ctx->counters.drops_unexpected++;
        return false;
    }
    if (!relayed) {
        relay_heard_direct(ctx, h->sender);
    }
    if (h->type == MEMBERSHIP_MSG_HEARTBEAT) {
        detector_note_heartbeat(ctx, h->sender, now_ns);
    }
    bool holds_view = (h->flags & MEMBERSHIP_FLAG_HAS_VIEW) != 0;
    if (holds_view && !relayed && ctx->join.active && !ctx->has_view) {
        /* Whatever it is (a redirect, a heartbeat, a notice): a view holder within reach. */
        join_heard(ctx, h->sender, now_ns);
    }
    detector_note_alive(ctx, h->sender, holds_view, now_ns, out);
    reform_heard(ctx, h->sender, holds_view, now_ns);
    /* Our view (or the one our round in flight changes): a member in good standing. */
    bool current = holds_view && ctx->has_view &&
                   (h->epoch == ctx->epoch ||
                    (ctx->coord.active && h->epoch == ctx->coord.base_epoch));
    /* An earlier view of ours, and still a member: a change has not reached it yet. */
    bool lags = holds_view && ctx->has_view && !current && h->epoch < ctx->epoch &&
                machine_history_has(ctx, h->epoch) && machine_in_view(ctx, h->sender);
    uint32_t refuted_by = coord_heard(ctx, h->sender, current, lags);
    if (refuted_by != MEMBERSHIP_NONE && refuted_by != ctx->self) {
        /* We reach both ends: each goes through us to the other. */
        relay_offer(ctx, out, refuted_by, h->sender);
        relay_offer(ctx, out, h->sender, refuted_by);
    }
    if (refuted_by != MEMBERSHIP_NONE && lags) {
        send_notice(ctx, out, h->sender, h->epoch); /* it fetches our view */
    }
    if (h->sender == ctx->root_check) {
        ctx->root_check = MEMBERSHIP_NONE;
        if ((h->flags & MEMBERSHIP_FLAG_HAS_VIEW) == 0 && h->sender == machine_root_id(ctx)) {
            /* Our root answers without a view: it restarted. */
            detector_add_suspect(ctx, h->sender, MEMBERSHIP_CAUSE_PROBE, now_ns, now_ns, out);
        }
    }
    switch (h->type) {
    case MEMBERSHIP_MSG_RELAY:
        if (relayed) {
            ctx->counters.relays_refused++; /* an envelope in an envelope (decode refuses it) */
            return false;
        }
        return relay_receive(ctx, &msg, out, inner, inner_length);
    case MEMBERSHIP_MSG_HOW_ARE_YOU:
        machine_send_simple(ctx, out, h->sender, MEMBERSHIP_MSG_I_AM_ALIVE);
        tell_if_removed(ctx, out, h);
        return false;
    case MEMBERSHIP_MSG_I_AM_ALIVE:
        tell_if_removed(ctx, out, h);
        return false;
    case MEMBERSHIP_MSG_NEW_NODE:
    case MEMBERSHIP_MSG_NODE_ALIVE:
        coord_handle_join_request(ctx, &msg, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_JOIN_REDIRECT:
        join_handle_redirect(ctx, &msg, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_JOIN_DET_ACK:
        join_handle_det_ack(ctx, &msg, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_JOIN_REFUSED:
        join_handle_refused(ctx, &msg, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_VIEW_REQUEST:
        transfer_handle_request(ctx, &msg, out);
        return false;
    case MEMBERSHIP_MSG_VIEW_CHUNK:
        transfer_handle_chunk(ctx, &msg, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_FAILURE_DET_ACK:
        detector_handle_report_ack(ctx, &msg, now_ns);
        return false;
    case MEMBERSHIP_MSG_REFORM:
        reform_handle(ctx, &msg, now_ns, out);
        return false;
    default:
        break;
    }
    if (!ctx->has_view) {
        if (membership_msg_is_change(h->type)) {
            round_handle_change(ctx, &msg, payload, length, now_ns, out);
            return false;
        }
        ctx->counters.drops_no_view++;
        return false;
    }
    if ((h->flags & MEMBERSHIP_FLAG_HAS_VIEW) == 0) {
        ctx->counters.drops_no_view++;
        return false;
    }
    switch (compare_key(ctx, &msg)) {
    case KEY_STALE:
        if (coord_takes_stale_report(ctx, h)) {
            coord_handle_report(ctx, &msg, payload, length, now_ns, out);
            return false;
        }
        ctx->counters.drops_stale++;
        /* An ack of a view we installed and moved past (a round that was
         * superseded): the round that replaced it reaches the sender. */
        bool superseded_ack = (h->type == MEMBERSHIP_MSG_FAILURE_ACK ||
                               h->type == MEMBERSHIP_MSG_JOIN_ACK) &&
                              machine_history_has(ctx, h->epoch) &&
                              machine_in_view(ctx, h->sender);
        if (h->type != MEMBERSHIP_MSG_VIEW_NOTICE && !superseded_ack) {
            send_notice(ctx, out, h->sender, h->epoch);
        }
        return false;
    case KEY_DEAD_BRANCH:
        join_expel(ctx, now_ns, out, h->sender, 0);
        return false;
    case KEY_BEHIND:
        if (h->type == MEMBERSHIP_MSG_REFUTED) {
            /*
             * Our root, a view ahead, says which member reaches it (its
             * probe around, issue 20): a member the change did not reach
             * needs the way back most, and a relay entry changes no view.
             */
            relay_handle_refuted(ctx, &msg, now_ns);
        }
        if (membership_msg_is_change(h->type)) {
            round_handle_change(ctx, &msg, payload, length, now_ns, out);
        } else if (h->epoch > ctx->lag_epoch) {
            /*
             * Someone is ahead.  The change is probably on its way down the
             * tree to us: give it one level's time before fetching the view.
             */
            if (ctx->lag_deadline_ns == MEMBERSHIP_NEVER) {
                ctx->lag_deadline_ns = machine_deadline_after(now_ns, ctx->config.ack_timeout_ns);
            }
            ctx->lag_epoch = h->epoch;
            ctx->lag_source = h->sender;
        }
        return false;
    case KEY_SAME:
        machine_learn_stable(ctx, h->stable_epoch);
        break;
    }
    switch (h->type) {
    case MEMBERSHIP_MSG_NODE_FAILURE:
    case MEMBERSHIP_MSG_ROOT_FAILURE:
        coord_handle_report(ctx, &msg, payload, length, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_FAILED_NODE:
    case MEMBERSHIP_MSG_ROOT_DEAD:
    case MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE:
    case MEMBERSHIP_MSG_NEW_NODE_JOIN:
    case MEMBERSHIP_MSG_ALIVE_NODE_JOIN:
        round_handle_change(ctx, &msg, payload, length, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_FAILURE_ACK:
    case MEMBERSHIP_MSG_JOIN_ACK:
        round_handle_ack(ctx, &msg, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_PARTITIONED:
        partition_handle(ctx, &msg, payload, length, now_ns, out);
        return false;
    case MEMBERSHIP_MSG_REFUTED:
        relay_handle_refuted(ctx, &msg, now_ns);
        return false;
    default:
        return false; /* HEARTBEAT, VIEW_NOTICE: the header said it all */
    }
}

void membership_receive(struct membership *ctx, const uint8_t *payload, size_t length,
                        uint64_t now_ns, struct membership_outbox *out)
{
    const uint8_t *inner = NULL;
    size_t inner_length = 0;
    if (receive_message(ctx, payload, length, now_ns, out, false, &inner, &inner_length)) {
        (void)receive_message(ctx, inner, inner_length, now_ns, out, true, &inner, &inner_length);
    }
    run_pending(ctx, now_ns, out);
}

void membership_tick(struct membership *ctx, uint64_t now_ns, struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    detector_tick_heartbeats(ctx, now_ns, out);
    detector_tick(ctx, now_ns, out);
    round_tick(ctx, now_ns, out);
    coord_tick_round(ctx, now_ns, out);
    coord_tick_evidence(ctx, now_ns);
    if (!partition_tick_census(ctx, now_ns, out)) {
        coord_tick_confirm(ctx, now_ns); /* after a verdict, the next tick */
    }
    partition_tick_notify(ctx, now_ns, out);
    transfer_tick(ctx, now_ns, out);
    join_tick(ctx, now_ns, out);
    reform_tick(ctx, now_ns, out);
    run_pending(ctx, now_ns, out);
}

uint64_t membership_next_deadline(const struct membership *ctx)
{
    uint64_t d = MEMBERSHIP_NEVER;
    if (ctx->has_view) {
        if (ctx->config.heartbeat_ns != 0) {
            d = min_u64(d, ctx->next_heartbeat_ns);
            for (uint32_t i = 0; i < ctx->watch_count; i++) {
                if (!ctx->watch[i].suspected) {
                    d = min_u64(d, machine_deadline_after(
                                       ctx->watch[i].last_heard_ns,
                                       detector_watch_timeout(ctx, &ctx->watch[i]) + 1u));
                }
            }
        }
        for (uint32_t i = 0; i < ctx->probe_count; i++) {
            d = min_u64(d, ctx->probes[i].deadline_ns);
        }
        if (ctx->search.active && ctx->search.waiting) {
            d = min_u64(d, ctx->search.deadline_ns);
        }
        if (ctx->sweep.active) {
            d = min_u64(d, ctx->sweep.deadline_ns);
        }
        if (!ctx->sync.active) {
            d = min_u64(d, ctx->report_deadline_ns);
        }
        for (uint32_t i = 0; i < ctx->suspect_count; i++) {
            if (ctx->suspects[i].state == SUSPECT_ACKED) {
                d = min_u64(d, ctx->suspects[i].recheck_ns);
            }
        }
    }
    if (ctx->round.active) {
        d = min_u64(d, ctx->round.acks.deadline_ns);
    }
    if (ctx->coord.active) {
        d = min_u64(d, ctx->coord.acks.deadline_ns);
    }
    if (ctx->coord.confirming) {
        d = min_u64(d, ctx->coord.confirm_deadline_ns);
    }
    d = min_u64(d, ctx->coord.evidence_deadline_ns);
    if (ctx->census.active || ctx->census.notify) {
        d = min_u64(d, ctx->census.deadline_ns);
    }
    if (ctx->sync.active) {
        d = min_u64(d, ctx->sync.deadline_ns);
    }
    d = min_u64(d, ctx->lag_deadline_ns);
    if (ctx->join.active && !ctx->has_view && !ctx->sync.active) {
        d = min_u64(d, ctx->join.deadline_ns);
    }
    d = min_u64(d, reform_deadline(ctx));
    return d;
}

/* A link to neighbour failed (down, or lossy): probe the node at its far
 * end; an answer by any route classifies the fault as network. */
static void probe_link_neighbour(struct membership *ctx, uint32_t neighbour, uint64_t now_ns,
                                 struct membership_outbox *out)
{
    if (machine_is_member(ctx, neighbour) && neighbour != ctx->self) {
        detector_start_probe(ctx, neighbour, now_ns, out);
        detector_mark_link_probe(ctx, neighbour);
    }
    run_pending(ctx, now_ns, out);
}

void membership_link_event(struct membership *ctx, uint32_t neighbour, bool up, uint64_t now_ns,
                           struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    if (up) {
        if (ctx->join.active && !ctx->has_view && !ctx->sync.active &&
            neighbour < ctx->node_count && neighbour != ctx->self) {
            join_heard(ctx, neighbour, now_ns); /* a way back may have opened */
        }
        run_pending(ctx, now_ns, out);
        return;
    }
    probe_link_neighbour(ctx, neighbour, now_ns, out);
}

void membership_link_lossy(struct membership *ctx, uint32_t neighbour, uint64_t now_ns,
                           struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    probe_link_neighbour(ctx, neighbour, now_ns, out);
}

bool membership_suspect(struct membership *ctx, uint32_t node, uint64_t now_ns,
                        struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    if (!machine_is_member(ctx, node) || node == ctx->self) {
        return false;
    }
    detector_start_probe(ctx, node, now_ns, out);
    run_pending(ctx, now_ns, out);
    return true;
}

bool membership_request_removal(struct membership *ctx, uint8_t model, uint64_t now_ns,
                                struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    if (!ctx->has_view || !machine_is_member(ctx, ctx->self) || model == FAULT_MODEL_NONE ||
        model >= FAULT_MODEL_LIMIT) {
        return false;
    }
    /*
     * The root cannot remove itself: it asks the next member in layout
     * order, which takes the report about the root as the next root does
     * (see coord_handle_report) and mints the change; meanwhile this root
     * mints nothing (coord_maybe_start).
     */
    uint32_t target = machine_root_id(ctx);
    if (machine_is_root(ctx)) {
        uint32_t rank = membership_view_rank(&ctx->view, ctx->self_pos);
        if (rank + 1u >= ctx->view.live) {
            return false; /* alone, or the last: nobody to take over */
        }
        target = machine_id_at(ctx, membership_view_select(&ctx->view, rank + 1u));
    }
    if (!ctx->leaving) {
        ctx->leaving = true;
        ctx->leaving_model = model;
        if (model != FAULT_MODEL_LEFT) { /* a leave is no fault: nothing is detected */
            machine_emit_failure(ctx, ctx->self, 0, MEMBERSHIP_CAUSE_APPLICATION, now_ns, out);
        }
    }
    /* Our own report: no sequence (the caller asks again while we are in). */
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_NODE_FAILURE);
    membership_put_u32(&w, ctx->self);
    membership_put_u32(&w, 0);
    membership_put_u32(&w, UINT32_MAX);
    membership_put_u16(&w, 1);
    membership_put_u8(&w, 0);
    membership_put_u8(&w, model);
    membership_put_u32(&w, ctx->self);
    if (membership_outbox_commit(out, target, &w)) {
        ctx->counters.reports_sent++;
    }
    run_pending(ctx, now_ns, out);
    return true;
}

void membership_start_join(struct membership *ctx, uint64_t now_ns, struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    bool rejoin = ctx->self < ctx->config.member_count || ctx->has_view;
    join_enter(ctx, now_ns, out, rejoin);
    run_pending(ctx, now_ns, out);
}
