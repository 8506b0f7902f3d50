/*
 * Sessions with peers (see DESIGN.md, "Sessions" and "Reliability").
 *
 * A peer slot holds both directions with one node: our session to it (tx)
 * and its session to us (rx).  A session is opened by its sender (OPEN,
 * answered ACCEPT with the receiver's token) and closed by its sender once
 * every frame is acknowledged (CLOSE, answered CLOSED); the receiver never
 * forgets an open session by itself, so a frame it acknowledged can never
 * be delivered twice.  Tokens and session ids carry a per-slot generation:
 * a frame of a closed session matches nothing and is answered RESET.
 *
 * Data frames carry sequence numbers; the receiver takes them in order,
 * or out of order within the window for the message being reassembled,
 * and acknowledges cumulatively with a mask of what lies beyond.  The
 * sender resends each unacknowledged frame after its timeout (doubling up
 * to rto_max), and reports a peer it has been waiting on for suspect_ns
 * without hearing from it.
 */
#include "comm/internal.h"

#include <string.h>

/* Acks in a row that move nothing before the oldest frame goes again. */
#define COMM_FAST_RETRANSMIT_ACKS 3

/* Frames taken in a row that are acked at once, without waiting for the ack
 * delay: a quarter of the window, so that the sender has room again well
 * before its window runs dry (half a window left it idle while the ack, sent
 * only after a node's burst of frames, crossed back). */
#define COMM_ACK_EVERY (CONFIG_COMM_WINDOW / 4u > 0 ? CONFIG_COMM_WINDOW / 4u : 1u)

/* CLOSE_REQs for a slot being recycled before another slot is tried: its
 * sender may stay busy for long. */
#define COMM_RECYCLE_TRIES 8

static uint32_t next_generation(uint32_t generation)
{
    generation = (generation + 1u) & 0xffffffu;
    return generation == 0 ? 1u : generation;
}

static uint64_t rto_for(const struct comm *ctx, uint32_t tries)
{
    uint64_t rto = ctx->config.rto_ns;
    for (uint32_t i = 1; i < tries && rto < ctx->config.rto_max_ns; i++) {
        rto *= 2u;
    }
    return rto < ctx->config.rto_max_ns ? rto : ctx->config.rto_max_ns;
}

uint64_t peer_rto(const struct comm *ctx, uint32_t tries)
{
    return rto_for(ctx, tries);
}

static uint32_t tx_sid(const struct comm_peer *p, uint16_t slot)
{
    return session_id(p->tx_generation, slot);
}

static uint32_t rx_token(const struct comm_peer *p, uint16_t slot)
{
    return session_id(p->rx_generation, slot);
}

static void clear_slot(struct comm_peer *p)
{
    uint32_t tx_generation = p->tx_generation;
    uint32_t rx_generation = p->rx_generation;
    memset(p, 0, sizeof *p);
    p->node = COMM_NODE_NONE;
    p->tx_generation = tx_generation; /* never reused: old tokens stay invalid */
    p->rx_generation = rx_generation;
    p->tx_head = COMM_NONE16;
    p->tx_tail = COMM_NONE16;
    p->tx_deferred_head = COMM_NONE16;
    p->tx_deferred_tail = COMM_NONE16;
    p->rx_index = COMM_NONE16;
    p->waiting_since_ns = COMM_NEVER;
    p->suspect_at_ns = COMM_NEVER;
}

void peer_init_all(struct comm *ctx)
{
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_PEERS; i++) {
        ctx->peers[i].tx_generation = 0;
        ctx->peers[i].rx_generation = 0;
        clear_slot(&ctx->peers[i]);
    }
    ctx->pump_next = 0;
}

uint16_t peer_find(const struct comm *ctx, uint32_t node)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_PEERS; i++) {
        if (ctx->peers[i].node == node) {
            return i;
        }
    }
    return COMM_NONE16;
}

/* ---- frames out ---- */

static void put_frame(struct comm *ctx, uint32_t node, const struct comm_frame *frame,
                      struct comm_outbox *out)
{
    if (comm_outbox_put(out, node, ctx->epoch, frame)) {
        ctx->counters.frames_sent++;
    } else {
        comm_count_lost_frame(ctx);
    }
}

/* A control frame to node, whose incarnation we believe is incarnation. */
static void send_control(struct comm *ctx, uint32_t node, uint32_t incarnation, uint8_t kind,
                         uint32_t session, uint32_t seq, uint8_t flags,
                         struct comm_outbox *out)
{
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.flags = flags;
    f.sender_incarnation = ctx->incarnation;
    f.receiver_incarnation = incarnation;
    f.session = session;
    f.seq = seq;
    put_frame(ctx, node, &f, out);
}

static void send_ack(struct comm *ctx, uint16_t slot, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    if (!comm_outbox_has_room(out)) {
        p->ack_pending = true; /* the next call sends it */
        p->ack_due_ns = ctx->last_now_ns;
        return;
    }
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_ACK;
    f.sender_incarnation = ctx->incarnation;
    f.receiver_incarnation = p->incarnation;
    f.session = p->rx_sid;
    f.seq = p->rx_expected;
    f.mask = p->rx_mask;
    f.deferred = p->rx_deferred;
    put_frame(ctx, p->node, &f, out);
    ctx->counters.acks_sent++;
    p->ack_pending = false;
    p->ack_unsent = 0;
}

static void schedule_ack(struct comm_peer *p, uint64_t due_ns)
{
    if (!p->ack_pending || due_ns < p->ack_due_ns) {
        p->ack_due_ns = due_ns;
    }
    p->ack_pending = true;
}

void peer_send_wait(struct comm *ctx, uint16_t slot, uint32_t seq, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    send_control(ctx, p->node, p->incarnation, COMM_KIND_WAIT, p->rx_sid, seq, 0, out);
    ctx->counters.waits_sent++;
}

void peer_send_grant(struct comm *ctx, uint16_t slot, uint32_t node, uint32_t seq,
                     struct comm_outbox *out)
{
    if (slot >= CONFIG_COMM_MAX_PEERS) {
        return;
    }
    struct comm_peer *p = &ctx->peers[slot];
    if (p->node != node || p->rx_state != RX_OPEN) {
        return;
    }
    send_control(ctx, p->node, p->incarnation, COMM_KIND_GRANT, p->rx_sid, seq, 0, out);
    ctx->counters.grants_sent++;
}

static void start_waiting(struct comm_peer *p, uint64_t now_ns)
{
    if (p->waiting_since_ns == COMM_NEVER) {
        p->waiting_since_ns = now_ns;
    }
}

/* The DATA frame for window entry seq (room already checked). */
static void emit_data(struct comm *ctx, uint16_t slot, uint32_t seq, uint64_t now_ns,
                      struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    struct comm_window_slot *w = &p->window[seq % CONFIG_COMM_WINDOW];
    const struct comm_request *r = &ctx->requests[w->request];
    uint32_t offset = w->fragment * COMM_FRAGMENT_BYTES;
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_DATA;
    f.sender_incarnation = ctx->incarnation;
    f.receiver_incarnation = p->incarnation;
    f.session = p->tx_token;
    f.seq = seq;
    f.offset = offset;
    f.total = r->length;
    /* A fragment of a message the receiver deferred only fills its seq. */
    bool skip = w->fragment != 0 &&
                (r->send_state == SEND_SKIPPING || r->send_state == SEND_DEFERRED ||
                 w->transmission != r->transmission);
    if (skip) {
        f.flags |= COMM_FLAG_SKIP;
    } else {
        f.data_length = r->length - offset < COMM_FRAGMENT_BYTES ? r->length - offset
                                                                 : COMM_FRAGMENT_BYTES;
        f.data = f.data_length > 0 ? r->source + offset : NULL;
    }
    if (w->fragment == 0) {
        f.flags |= COMM_FLAG_FIRST;
        f.context = r->context;
        f.context_gen = request_context_gen(ctx, r);
        f.source_rank = (r->context & COMM_CONTEXT_BY_NODE) != 0 ? ctx->config.node_id
                                                                : ctx->comms[r->comm].rank;
        f.tag = r->tag;
        if (r->send_state == SEND_RESENDING) {
            f.flags |= COMM_FLAG_RESEND;
            f.resend_of = r->resend_of;
        }
    }
    /* A collective's step waits on its sends' acks, and nothing may come
     * back soon for the ack to ride on: the last frame asks for it at once.
     * So does the last frame of a message of several: its sender waits to
     * post its next receive, and the peer's answer, which the ack would ride
     * on, is as long and would find that receive missing (deferred, resent
     * in full). */
    if ((r->owner != 0 || r->frames_total > 1u) && w->fragment + 1u >= r->frames_total) {
        f.flags |= COMM_FLAG_ACK_NOW;
    }
    if (p->rx_state == RX_OPEN && p->ack_pending) {
        f.flags |= COMM_FLAG_ACK;
        f.ack_sid = p->rx_sid;
        f.ack_cum = p->rx_expected;
        f.ack_mask = p->rx_mask;
        f.ack_deferred = p->rx_deferred;
        p->ack_pending = false;
        p->ack_unsent = 0;
    }
    put_frame(ctx, p->node, &f, out);
    ctx->counters.data_frames_sent++;
    w->sent_ns = now_ns;
    if (w->tries < UINT8_MAX) {
        w->tries++;
    }
    p->used_ns = now_ns;
    start_waiting(p, now_ns);
}

static void tx_open(struct comm *ctx, uint16_t slot, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    p->tx_generation = next_generation(p->tx_generation);
    p->tx_state = TX_OPENING;
    p->tx_tries = 1;
    p->tx_close_asked = false;
    p->tx_blocked = false;
    p->tx_timer_ns = now_ns + rto_for(ctx, 1);
    send_control(ctx, p->node, p->incarnation, COMM_KIND_OPEN, tx_sid(p, slot), 0, 0, out);
    ctx->counters.opens_sent++;
    start_waiting(p, now_ns);
}

static bool tx_idle(const struct comm_peer *p)
{
    return p->tx_head == COMM_NONE16 && p->tx_deferred_head == COMM_NONE16 &&
           p->tx_una == p->tx_next;
}

static void tx_close(struct comm *ctx, uint16_t slot, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    p->tx_state = TX_CLOSING;
    p->tx_tries = 1;
    p->tx_timer_ns = now_ns + rto_for(ctx, 1);
    send_control(ctx, p->node, p->incarnation, COMM_KIND_CLOSE, tx_sid(p, slot), p->tx_next, 0,
                 out);
    ctx->counters.closes_sent++;
    start_waiting(p, now_ns);
}

/* ---- slots ---- */

static bool slot_closed(const struct comm_peer *p)
{
    return p->tx_state == TX_CLOSED && p->rx_state == RX_CLOSED && p->tx_head == COMM_NONE16 &&
           p->tx_deferred_head == COMM_NONE16;
}

/* A slot we want back: close our session when idle, ask the peer to close
 * its own. */
/* Asks the sender of the peer's open session to close it (when no message
 * of it is being received). */
static void ask_close(struct comm *ctx, struct comm_peer *p, uint64_t now_ns,
                      struct comm_outbox *out)
{
    if (p->recycle_tries < UINT8_MAX) {
        p->recycle_tries++;
    }
    p->recycle_due_ns = now_ns + rto_for(ctx, p->recycle_tries);
    if (p->rx_target == RX_TARGET_NONE) {
        send_control(ctx, p->node, p->incarnation, COMM_KIND_CLOSE_REQ, p->rx_sid, 0, 0, out);
    }
}

static void start_recycle(struct comm *ctx, uint16_t slot, uint64_t now_ns,
                          struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    p->recycle = true;
    p->recycle_tries = 0;
    if (p->tx_state == TX_OPEN && tx_idle(p)) {
        tx_close(ctx, slot, now_ns, out);
    }
    if (p->rx_state == RX_OPEN) {
        ask_close(ctx, p, now_ns, out);
    }
}

/*
 * The slot for node: its own, a free one, or a closed one (the least
 * recently used).  When none is left, starts recycling the least recently
 * used busy slot (at most two at a time, only if may_recycle) and returns
 * COMM_NONE16.
 */
static uint16_t peer_take(struct comm *ctx, uint32_t node, bool may_recycle, uint64_t now_ns,
                          struct comm_outbox *out)
{
    uint16_t found = peer_find(ctx, node);
    if (found != COMM_NONE16) {
        return found;
    }
    uint16_t closed = COMM_NONE16;
    uint16_t victim = COMM_NONE16;
    uint32_t recycling = 0;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_PEERS; i++) {
        struct comm_peer *p = &ctx->peers[i];
        if (p->node == COMM_NODE_NONE) {
            closed = i;
            break;
        }
        if (slot_closed(p)) {
            if (closed == COMM_NONE16 || p->used_ns < ctx->peers[closed].used_ns) {
                closed = i;
            }
        } else if (p->recycle) {
            recycling++;
        } else if (victim == COMM_NONE16 || p->used_ns < ctx->peers[victim].used_ns) {
            victim = i;
        }
    }
    if (closed != COMM_NONE16) {
        clear_slot(&ctx->peers[closed]);
        ctx->peers[closed].node = node;
        ctx->peers[closed].used_ns = now_ns;
        return closed;
    }
    if (may_recycle && victim != COMM_NONE16 && recycling < 2) {
        start_recycle(ctx, victim, now_ns, out);
    }
    return COMM_NONE16;
}

static uint16_t peer_obtain(struct comm *ctx, uint32_t node, uint64_t now_ns,
                            struct comm_outbox *out)
{
    return peer_take(ctx, node, true, now_ns, out);
}

/*
 * Sends waiting for a slot get one, in order.  After the first that cannot
 * (which may have started recycling a slot), only nodes that hold a slot
 * are served: a node's sends never pass each other.
 */
static void serve_orphans(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    bool may_obtain = true;
    for (uint16_t i = ctx->orphan_head; i != COMM_NONE16;) {
        uint16_t next = ctx->requests[i].next;
        uint32_t node = ctx->requests[i].node;
        uint16_t slot = may_obtain ? peer_obtain(ctx, node, now_ns, out) : peer_find(ctx, node);
        if (slot == COMM_NONE16) {
            may_obtain = false;
            i = next;
            continue;
        }
        queue_remove(ctx, &ctx->orphan_head, &ctx->orphan_tail, i);
        struct comm_peer *p = &ctx->peers[slot];
        queue_push(ctx, &p->tx_head, &p->tx_tail, i);
        p->recycle = false;
        if (p->tx_state == TX_CLOSED) {
            tx_open(ctx, slot, now_ns, out);
        }
        i = next;
    }
}

static bool has_orphan_for(const struct comm *ctx, uint32_t node)
{
    for (uint16_t i = ctx->orphan_head; i != COMM_NONE16; i = ctx->requests[i].next) {
        if (ctx->requests[i].node == node) {
            return true;
        }
    }
    return false;
}

static void maybe_release(struct comm *ctx, uint16_t slot)
{
    struct comm_peer *p = &ctx->peers[slot];
    if (p->recycle && slot_closed(p)) {
        clear_slot(p);
    }
}

void peer_send(struct comm *ctx, uint16_t request, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_request *r = &ctx->requests[request];
    uint16_t slot = has_orphan_for(ctx, r->node) ? COMM_NONE16
                                                 : peer_obtain(ctx, r->node, now_ns, out);
    if (slot == COMM_NONE16) {
        queue_push(ctx, &ctx->orphan_head, &ctx->orphan_tail, request);
        return;
    }
    struct comm_peer *p = &ctx->peers[slot];
    queue_push(ctx, &p->tx_head, &p->tx_tail, request);
    p->used_ns = now_ns;
    p->recycle = false;
    if (p->tx_state == TX_CLOSED) {
        tx_open(ctx, slot, now_ns, out);
    }
}

/* What we sent peer slot and sent at least `tries` times goes out again
 * at once, from the first timeout (and an OPEN or CLOSE retried so). */
static void resend_now(struct comm *ctx, uint16_t slot, uint8_t tries, uint64_t now_ns)
{
    uint64_t first = rto_for(ctx, 1);
    struct comm_peer *p = &ctx->peers[slot];
    if ((p->tx_state == TX_OPENING || p->tx_state == TX_CLOSING) && p->tx_tries >= tries) {
        p->tx_tries = 1;
        p->tx_timer_ns = now_ns;
    }
    if (p->tx_state != TX_OPEN || p->tx_blocked) {
        return;
    }
    for (uint32_t s = p->tx_una; s != p->tx_next; s++) {
        struct comm_window_slot *w = &p->window[s % CONFIG_COMM_WINDOW];
        if (w->state == WINDOW_IN_FLIGHT && w->tries >= tries) {
            w->tries = 1; /* as if sent once, a timeout ago: due now */
            w->sent_ns = now_ns > first ? now_ns - first : 0;
        }
    }
}

/*
 * A view removed members.  What we had to resend at least once (the frame
 * or its acknowledgement was lost) may have been lost on a path through a
 * node the view removed, which routes now go around (the membership's
 * shunned nodes); its timer had backed off meanwhile (20, 40, 80 ms on
 * QEMU), and a frame that stalls a session stalls every message behind it
 * there: a cut collective draining for its result round waited 74 ms on
 * one.  Those frames, and OPENs retried, go out again now (in the new
 * epoch: held by a receiver still installing it), from the first timeout.
 * A frame sent once keeps its timer: nothing says it was lost.
 */
void peer_view_removed(struct comm *ctx, uint64_t now_ns)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_PEERS; slot++) {
        resend_now(ctx, slot, 2, now_ns);
    }
}

void peer_view_ahead(struct comm *ctx, uint32_t node, uint64_t now_ns)
{
    uint16_t slot = peer_find(ctx, node);
    if (slot != COMM_NONE16) {
        resend_now(ctx, slot, 1, now_ns);
    }
}

void peer_open_ahead(struct comm *ctx, uint32_t node, uint64_t now_ns, struct comm_outbox *out)
{
    if (node == ctx->config.node_id || node == COMM_NODE_NONE || !node_is_live(ctx, node) ||
        has_orphan_for(ctx, node)) {
        return;
    }
    uint16_t slot = peer_take(ctx, node, false, now_ns, out);
    if (slot == COMM_NONE16) {
        return; /* no slot free: the first send opens it, as before */
    }
    struct comm_peer *p = &ctx->peers[slot];
    if (p->tx_state == TX_CLOSED && p->tx_head == COMM_NONE16 && !p->recycle) {
        p->used_ns = now_ns;
        tx_open(ctx, slot, now_ns, out);
        ctx->counters.opens_ahead++;
    }
}

/* ---- failing ---- */

static void fail_sends(struct comm *ctx, struct comm_peer *p, enum comm_error error,
                       struct comm_outbox *out)
{
    for (uint32_t i = 0; i < CONFIG_COMM_WINDOW; i++) {
        if (p->window[i].state == WINDOW_IN_FLIGHT) {
            request_complete(ctx, p->window[i].request, error, out);
        }
        p->window[i].state = WINDOW_FREE;
    }
    for (uint16_t i = p->tx_head; i != COMM_NONE16;) {
        uint16_t next = ctx->requests[i].next;
        request_complete(ctx, i, error, out);
        i = next;
    }
    for (uint16_t i = p->tx_deferred_head; i != COMM_NONE16;) {
        uint16_t next = ctx->requests[i].next;
        request_complete(ctx, i, error, out);
        i = next;
    }
    p->tx_head = COMM_NONE16;
    p->tx_tail = COMM_NONE16;
    p->tx_deferred_head = COMM_NONE16;
    p->tx_deferred_tail = COMM_NONE16;
    p->tx_state = TX_CLOSED;
    p->tx_una = p->tx_next;
    p->tx_blocked = false;
}

static void fail_slot(struct comm *ctx, uint16_t slot, enum comm_error error,
                      struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    fail_sends(ctx, p, error, out);
    if (p->rx_target != RX_TARGET_NONE) {
        match_abandon(ctx, p->rx_target, p->rx_index, error, out);
    }
    clear_slot(p);
}

void peer_fail_node(struct comm *ctx, uint32_t node, enum comm_error error,
                    struct comm_outbox *out)
{
    uint16_t slot = peer_find(ctx, node);
    if (slot != COMM_NONE16) {
        fail_slot(ctx, slot, error, out);
    }
    for (uint16_t i = ctx->orphan_head; i != COMM_NONE16;) {
        uint16_t next = ctx->requests[i].next;
        if (ctx->requests[i].node == node) {
            queue_remove(ctx, &ctx->orphan_head, &ctx->orphan_tail, i);
            request_complete(ctx, i, error, out);
        }
        i = next;
    }
}

/* An application request (send or receive) of communicator slot comm. */
static bool app_request_of(const struct comm *ctx, uint16_t index, uint16_t comm)
{
    const struct comm_request *r = &ctx->requests[index];
    return r->owner == 0 && r->comm == comm && (r->context & ~0xffu) == 0;
}

/* Fails the queued sends of comm that have not started (removed from queue
 * head..tail) and marks the others. */
static void fail_queue(struct comm *ctx, uint16_t *head, uint16_t *tail, uint16_t comm,
                       enum comm_error error, struct comm_outbox *out)
{
    for (uint16_t i = *head; i != COMM_NONE16;) {
        struct comm_request *r = &ctx->requests[i];
        uint16_t next = r->next;
        if (app_request_of(ctx, i, comm)) {
            if (r->frames_sent == 0 && r->send_state == SEND_NORMAL) {
                queue_remove(ctx, head, tail, i);
                request_complete(ctx, i, error, out);
            } else {
                r->error = (uint8_t)error;
            }
        }
        i = next;
    }
}

void peer_fail_comm(struct comm *ctx, uint16_t comm, enum comm_error error,
                    struct comm_outbox *out)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_PEERS; slot++) {
        struct comm_peer *p = &ctx->peers[slot];
        if (p->node == COMM_NODE_NONE) {
            continue;
        }
        /* Frames already numbered must still go (the receiver consumes them
         * unread): their sends complete with the error once acknowledged;
         * a deferred one is GRANTed by its receiver and goes the same way. */
        for (uint32_t i = 0; i < CONFIG_COMM_WINDOW; i++) {
            const struct comm_window_slot *w = &p->window[i];
            if (w->state == WINDOW_IN_FLIGHT && app_request_of(ctx, w->request, comm)) {
                ctx->requests[w->request].error = (uint8_t)error;
            }
        }
        fail_queue(ctx, &p->tx_head, &p->tx_tail, comm, error, out);
        fail_queue(ctx, &p->tx_deferred_head, &p->tx_deferred_tail, comm, error, out);
        if (p->rx_target == RX_TARGET_REQUEST && app_request_of(ctx, p->rx_index, comm)) {
            /* a receive being filled: the rest of its message goes unread */
            request_complete(ctx, p->rx_index, error, out);
            p->rx_target = RX_TARGET_DISCARD;
            p->rx_index = COMM_NONE16;
        }
    }
    fail_queue(ctx, &ctx->orphan_head, &ctx->orphan_tail, comm, error, out);
}

void peer_reset_all(struct comm *ctx, enum comm_error error, struct comm_outbox *out)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_PEERS; i++) {
        if (ctx->peers[i].node != COMM_NODE_NONE) {
            fail_slot(ctx, i, error, out);
        }
    }
    for (uint16_t i = ctx->orphan_head; i != COMM_NONE16;) {
        uint16_t next = ctx->requests[i].next;
        request_complete(ctx, i, error, out);
        i = next;
    }
    ctx->orphan_head = COMM_NONE16;
    ctx->orphan_tail = COMM_NONE16;
}

/* ---- our session: answers from the receiver ---- */

/* Sends a deferred message again, right after the message being sent. */
static void start_resend(struct comm *ctx, struct comm_peer *p, uint16_t index)
{
    struct comm_request *r = &ctx->requests[index];
    r->send_state = SEND_RESENDING;
    r->transmission++;
    r->frames_sent = 0;
    r->frames_acked = 0;
    r->grant_seen = false;
    uint16_t head = p->tx_head;
    if (head != COMM_NONE16 && ctx->requests[head].frames_sent > 0) {
        r->next = ctx->requests[head].next;
        ctx->requests[head].next = index;
        if (p->tx_tail == head) {
            p->tx_tail = index;
        }
    } else {
        r->next = head;
        p->tx_head = index;
        if (p->tx_tail == COMM_NONE16) {
            p->tx_tail = index;
        }
    }
}

/* The receiver deferred the message whose first fragment is seq: its other
 * frames only fill their seqs now, and it waits for a GRANT. */
static void defer_send(struct comm *ctx, struct comm_peer *p, uint16_t index, uint32_t seq)
{
    struct comm_request *r = &ctx->requests[index];
    r->resend_of = seq;
    if (r->frames_sent < r->frames_total) {
        r->send_state = SEND_SKIPPING; /* still at the head of the queue */
    } else {
        r->send_state = SEND_DEFERRED;
        queue_push(ctx, &p->tx_deferred_head, &p->tx_deferred_tail, index);
    }
}

static void ack_one(struct comm *ctx, struct comm_peer *p, uint32_t seq, bool deferred,
                    struct comm_outbox *out)
{
    struct comm_window_slot *w = &p->window[seq % CONFIG_COMM_WINDOW];
    if (w->state != WINDOW_IN_FLIGHT) {
        return;
    }
    w->state = WINDOW_ACKED;
    struct comm_request *r = &ctx->requests[w->request];
    if (w->transmission != r->transmission) {
        return; /* a frame of a transmission the receiver deferred */
    }
    if (deferred && w->fragment == 0) {
        defer_send(ctx, p, w->request, seq);
        return;
    }
    if (r->send_state != SEND_NORMAL && r->send_state != SEND_RESENDING) {
        return;
    }
    r->frames_acked++;
    if (r->frames_acked == r->frames_total) {
        ctx->counters.messages_sent++;
        /* a send its communicator failed under NOP ends with that error */
        request_complete(ctx, w->request, (enum comm_error)r->error, out);
    }
}

/*
 * cum, mask and deferred of an ACK (or piggybacked on DATA).  Bit i of
 * deferred is seq cum-1-i: since at most CONFIG_COMM_WINDOW (<= 32) frames
 * are unacknowledged, every seq this ack newly covers has its bit.
 */
static void tx_on_ack(struct comm *ctx, uint16_t slot, uint32_t cum, uint32_t mask,
                      uint32_t deferred, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    if (p->tx_state != TX_OPEN || seq_diff(cum, p->tx_una) < 0 ||
        seq_diff(cum, p->tx_next) > 0) {
        return;
    }
    if (cum == p->tx_una) {
        /* Nothing moved: what follows una arrived (or was dropped, being of
         * a message not placed yet) while una did not: after a few, resend
         * it now rather than after its timeout. */
        if (p->tx_una != p->tx_next && p->tx_dup_acks < UINT8_MAX &&
            ++p->tx_dup_acks == COMM_FAST_RETRANSMIT_ACKS) {
            p->tx_fast = true;
        }
    } else {
        p->tx_dup_acks = 0;
        p->tx_fast = false;
        /* Progress: the frames still out go back to the first timeout. */
        for (uint32_t s = cum; s != p->tx_next; s++) {
            struct comm_window_slot *w = &p->window[s % CONFIG_COMM_WINDOW];
            if (w->tries > 1) {
                w->tries = 1;
            }
        }
    }
    for (uint32_t s = p->tx_una; s != cum; s++) {
        uint32_t back = cum - 1u - s;
        ack_one(ctx, p, s, back < 32u && ((deferred >> back) & 1u) != 0, out);
    }
    for (uint32_t i = 0; i < 32; i++) {
        uint32_t s = cum + 1u + i;
        if (seq_diff(s, p->tx_next) >= 0) {
            break;
        }
        if ((mask >> i) & 1u) {
            ack_one(ctx, p, s, false, out);
        }
    }
    while (p->tx_una != p->tx_next &&
           p->window[p->tx_una % CONFIG_COMM_WINDOW].state == WINDOW_ACKED) {
        p->window[p->tx_una % CONFIG_COMM_WINDOW].state = WINDOW_FREE;
        p->tx_una++;
    }
    if (p->tx_blocked && seq_diff(p->tx_una, p->tx_blocked_seq) > 0) {
        p->tx_blocked = false;
    }
    if (p->tx_una == p->tx_next) {
        p->waiting_since_ns = COMM_NEVER;
        if (p->tx_head == COMM_NONE16 && (p->tx_close_asked || p->recycle)) {
            tx_close(ctx, slot, now_ns, out);
        }
    }
}

static void tx_on_frame(struct comm *ctx, uint16_t slot, const struct comm_frame *f,
                        uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    bool current = f->session == tx_sid(p, slot);
    switch (f->kind) {
    case COMM_KIND_ACCEPT:
        if (!current || p->tx_state != TX_OPENING) {
            ctx->counters.drops_stale_session++;
            return;
        }
        p->tx_state = TX_OPEN;
        p->tx_token = f->token;
        p->tx_next = 0;
        p->tx_una = 0;
        p->tx_tries = 0;
        p->tx_dup_acks = 0;
        p->tx_fast = false;
        memset(p->window, 0, sizeof p->window);
        if (p->tx_head == COMM_NONE16) {
            p->waiting_since_ns = COMM_NEVER;
        }
        if (tx_idle(p) && (p->recycle || p->tx_close_asked)) {
            tx_close(ctx, slot, now_ns, out);
        }
        return;
    case COMM_KIND_BUSY:
        if (current && p->tx_state == TX_OPENING) {
            p->tx_tries = (uint8_t)(p->tx_tries < UINT8_MAX ? p->tx_tries + 1u : UINT8_MAX);
            p->tx_timer_ns = now_ns + rto_for(ctx, p->tx_tries);
        }
        return;
    case COMM_KIND_ACK:
        if (current) {
            tx_on_ack(ctx, slot, f->seq, f->mask, f->deferred, now_ns, out);
        } else {
            ctx->counters.drops_stale_session++;
        }
        return;
    case COMM_KIND_WAIT:
        if (current && p->tx_state == TX_OPEN && seq_diff(f->seq, p->tx_una) >= 0 &&
            seq_diff(f->seq, p->tx_next) < 0 &&
            p->window[f->seq % CONFIG_COMM_WINDOW].fragment == 0) {
            if (!p->tx_blocked || p->tx_blocked_seq != f->seq) {
                p->tx_tries = 0;
            }
            p->tx_blocked = true;
            p->tx_blocked_seq = f->seq;
            p->tx_tries = (uint8_t)(p->tx_tries < UINT8_MAX ? p->tx_tries + 1u : UINT8_MAX);
            p->tx_timer_ns = now_ns + rto_for(ctx, p->tx_tries);
        }
        return;
    case COMM_KIND_GRANT:
        if (!current) {
            ctx->counters.drops_stale_session++;
            return;
        }
        for (uint16_t i = p->tx_deferred_head; i != COMM_NONE16; i = ctx->requests[i].next) {
            if (ctx->requests[i].resend_of == f->seq) {
                queue_remove(ctx, &p->tx_deferred_head, &p->tx_deferred_tail, i);
                start_resend(ctx, p, i);
                return;
            }
        }
        if (p->tx_head != COMM_NONE16 &&
            ctx->requests[p->tx_head].send_state == SEND_SKIPPING &&
            ctx->requests[p->tx_head].resend_of == f->seq) {
            ctx->requests[p->tx_head].grant_seen = true;
        }
        return; /* a GRANT repeated after the message went again */
    case COMM_KIND_CLOSED:
        if (!current || p->tx_state != TX_CLOSING) {
            return;
        }
        p->tx_state = TX_CLOSED;
        p->tx_close_asked = false;
        p->waiting_since_ns = COMM_NEVER;
        if (p->tx_head != COMM_NONE16) {
            tx_open(ctx, slot, now_ns, out); /* sends queued while closing */
        } else {
            maybe_release(ctx, slot);
        }
        return;
    case COMM_KIND_CLOSE_REQ:
        if (current && p->tx_state == TX_OPEN) {
            p->tx_close_asked = true;
            if (tx_idle(p)) {
                tx_close(ctx, slot, now_ns, out);
            }
        } else if (!current || p->tx_state == TX_CLOSED) {
            /* A session we do not hold (a stale OPEN made it): let it go. */
            send_control(ctx, p->node, p->incarnation, COMM_KIND_CLOSE, f->session, 0,
                         COMM_FLAG_UNKNOWN, out);
        }
        return;
    case COMM_KIND_RESET:
        if (p->tx_state == TX_OPEN && f->session == p->tx_token) {
            /* The receiver holds no such session: only a restarted peer
             * does that.  What was in flight may or may not have arrived:
             * fail it rather than risk a duplicate. */
            ctx->counters.resets++;
            fail_sends(ctx, p, COMM_ERR_PROC_FAILED, out);
        }
        return;
    default:
        return;
    }
}

/* ---- the peer's session: frames from the sender ---- */

static void send_accept(struct comm *ctx, uint16_t slot, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    struct comm_frame a;
    memset(&a, 0, sizeof a);
    a.kind = COMM_KIND_ACCEPT;
    a.sender_incarnation = ctx->incarnation;
    a.receiver_incarnation = p->incarnation;
    a.session = p->rx_sid;
    a.token = rx_token(p, slot);
    put_frame(ctx, p->node, &a, out);
}

static void rx_on_open(struct comm *ctx, uint32_t source, const struct comm_frame *f,
                       uint64_t now_ns, struct comm_outbox *out)
{
    uint16_t slot = peer_obtain(ctx, source, now_ns, out);
    if (slot == COMM_NONE16) {
        send_control(ctx, source, f->sender_incarnation, COMM_KIND_BUSY, f->session, 0, 0, out);
        ctx->counters.busy_sent++;
        return;
    }
    struct comm_peer *p = &ctx->peers[slot];
    p->incarnation = f->sender_incarnation;
    p->used_ns = now_ns;
    if (p->rx_state == RX_OPEN) {
        if (p->rx_sid == f->session) {
            send_accept(ctx, slot, out); /* our ACCEPT was lost */
        } else {
            /* A sender opens again only after CLOSED, so the session we
             * hold is one it no longer knows (a stale OPEN made it), or
             * this OPEN is stale: ask, and let it retry. */
            send_control(ctx, source, p->incarnation, COMM_KIND_BUSY, f->session, 0, 0, out);
            send_control(ctx, source, p->incarnation, COMM_KIND_CLOSE_REQ, p->rx_sid, 0, 0, out);
            ctx->counters.busy_sent++;
        }
        return;
    }
    p->rx_generation = next_generation(p->rx_generation);
    p->rx_state = RX_OPEN;
    p->rx_sid = f->session;
    p->rx_expected = 0;
    p->rx_mask = 0;
    p->rx_target = RX_TARGET_NONE;
    p->rx_index = COMM_NONE16;
    p->ack_pending = false;
    p->ack_unsent = 0;
    send_accept(ctx, slot, out);
}

static uint8_t target_of_place(uint8_t place)
{
    switch (place) {
    case PLACE_REQUEST:
        return RX_TARGET_REQUEST;
    case PLACE_RECORD:
        return RX_TARGET_RECORD;
    default:
        return RX_TARGET_DISCARD;
    }
}

/* Moves rx_expected past the frame just consumed (deferred: a first
 * fragment deferred) and past what the mask holds. */
static void rx_advance(struct comm_peer *p, bool deferred)
{
    p->rx_expected++;
    p->rx_deferred = (p->rx_deferred << 1) | (deferred ? 1u : 0u);
    while ((p->rx_mask & 1u) != 0) {
        p->rx_mask >>= 1;
        p->rx_expected++;
        p->rx_deferred <<= 1;
    }
    p->rx_mask >>= 1;
}

static void rx_on_data(struct comm *ctx, uint16_t slot, const struct comm_frame *f,
                       uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    int32_t d = seq_diff(f->seq, p->rx_expected);
    if (d < 0 || (d > 0 && d < CONFIG_COMM_WINDOW && ((p->rx_mask >> (d - 1)) & 1u) != 0)) {
        ctx->counters.drops_duplicate++;
        send_ack(ctx, slot, out); /* our ack may have been lost */
        return;
    }
    bool first = (f->flags & COMM_FLAG_FIRST) != 0;
    if (d >= CONFIG_COMM_WINDOW) {
        ctx->counters.drops_out_of_order++;
        return;
    }
    bool deferred = false;
    if (d == 0 && first) {
        if (p->rx_target != RX_TARGET_NONE) {
            ctx->counters.drops_bad_fragment++;
            return;
        }
        uint16_t index = COMM_NONE16;
        uint8_t place = match_place(ctx, slot, f, &index, out);
        if (place == PLACE_WAIT) {
            peer_send_wait(ctx, slot, f->seq, out);
            return;
        }
        deferred = place == PLACE_DEFER;
        p->rx_target = target_of_place(place);
        p->rx_index = index;
        p->rx_first_seq = f->seq;
        p->rx_frames = COMM_FRAMES_FOR(f->total);
        p->rx_total = f->total;
    } else {
        if (p->rx_target == RX_TARGET_NONE || first ||
            (uint32_t)seq_diff(f->seq, p->rx_first_seq) >= p->rx_frames) {
            ctx->counters.drops_out_of_order++; /* a message not placed yet */
            send_ack(ctx, slot, out);            /* tells the sender a gap is there */
            return;
        }
        if (f->offset != (f->seq - p->rx_first_seq) * COMM_FRAGMENT_BYTES ||
            f->total != p->rx_total ||
            ((f->flags & COMM_FLAG_SKIP) != 0 && p->rx_target != RX_TARGET_DISCARD)) {
            ctx->counters.drops_bad_fragment++;
            return;
        }
    }
    match_write(ctx, p->rx_target, p->rx_index, f->offset, f->data, f->data_length);
    if (d == 0) {
        rx_advance(p, deferred);
    } else {
        p->rx_mask |= 1u << (d - 1);
    }
    p->ack_unsent++;
    bool complete = (uint32_t)seq_diff(p->rx_expected, p->rx_first_seq) >= p->rx_frames;
    if (complete) {
        uint8_t target = p->rx_target;
        uint16_t index = p->rx_index;
        p->rx_target = RX_TARGET_NONE;
        p->rx_index = COMM_NONE16;
        match_finish(ctx, target, index, out);
    }
    if (d > 0 || p->ack_unsent >= COMM_ACK_EVERY ||
        (f->flags & COMM_FLAG_ACK_NOW) != 0) {
        send_ack(ctx, slot, out);
    } else {
        schedule_ack(p, now_ns + ctx->config.ack_delay_ns);
    }
}

static void rx_on_close(struct comm *ctx, uint32_t source, const struct comm_frame *f,
                        struct comm_outbox *out)
{
    uint16_t slot = peer_find(ctx, source);
    if (slot != COMM_NONE16) {
        struct comm_peer *p = &ctx->peers[slot];
        if (p->rx_state == RX_OPEN && p->rx_sid == f->session) {
            if (p->rx_target != RX_TARGET_NONE) {
                match_abandon(ctx, p->rx_target, p->rx_index, COMM_ERR_PROC_FAILED, out);
                p->rx_target = RX_TARGET_NONE;
            }
            p->rx_state = RX_CLOSED;
            p->ack_pending = false;
            maybe_release(ctx, slot);
        }
    }
    send_control(ctx, source, f->sender_incarnation, COMM_KIND_CLOSED, f->session, 0, 0, out);
}

void peer_on_frame(struct comm *ctx, uint32_t source, const struct comm_frame *f,
                   uint64_t now_ns, struct comm_outbox *out)
{
    uint16_t slot = peer_find(ctx, source);
    if (slot != COMM_NONE16) {
        struct comm_peer *p = &ctx->peers[slot];
        if (p->incarnation != 0 && p->incarnation != f->sender_incarnation) {
            /* A new life of the peer: what was under way with the old one
             * fails; receives not matched yet wait for the new one. */
            ctx->counters.peer_restarts++;
            struct comm_event *e = comm_outbox_event(out, COMM_EVENT_PEER_RESTARTED, now_ns);
            if (e != NULL) {
                e->node = source;
                e->epoch = ctx->epoch;
            }
            fail_slot(ctx, slot, COMM_ERR_PROC_FAILED, out);
            match_fail_node(ctx, source, COMM_ERR_PROC_FAILED, false, out);
            slot = COMM_NONE16;
        } else {
            p->incarnation = f->sender_incarnation;
            p->heard_ns = now_ns;
            p->suspect_at_ns = COMM_NEVER;
            p->suspected = false;
        }
    }
    switch (f->kind) {
    case COMM_KIND_OPEN:
        rx_on_open(ctx, source, f, now_ns, out);
        return;
    case COMM_KIND_CLOSE:
        rx_on_close(ctx, source, f, out);
        return;
    case COMM_KIND_DATA: {
        uint32_t token_slot = session_slot(f->session);
        if (slot == COMM_NONE16 || token_slot != slot ||
            ctx->peers[slot].rx_state != RX_OPEN ||
            f->session != rx_token(&ctx->peers[slot], slot)) {
            ctx->counters.drops_unknown_session++;
            ctx->counters.resets++;
            send_control(ctx, source, f->sender_incarnation, COMM_KIND_RESET, f->session, 0, 0,
                         out);
            return;
        }
        if ((f->flags & COMM_FLAG_ACK) != 0) {
            struct comm_peer *p = &ctx->peers[slot];
            if (f->ack_sid == tx_sid(p, slot)) {
                tx_on_ack(ctx, slot, f->ack_cum, f->ack_mask, f->ack_deferred, now_ns, out);
            }
        }
        rx_on_data(ctx, slot, f, now_ns, out);
        return;
    }
    default:
        if (slot == COMM_NONE16) {
            ctx->counters.drops_stale_session++;
            if (f->kind == COMM_KIND_CLOSE_REQ) {
                send_control(ctx, source, f->sender_incarnation, COMM_KIND_CLOSE, f->session, 0,
                             COMM_FLAG_UNKNOWN, out);
            }
            return;
        }
        tx_on_frame(ctx, slot, f, now_ns, out);
        return;
    }
}

/* ---- time ---- */

/* When window entry seq (in flight) goes out again: after its timeout; at
 * once after a GRANT (tries 0); while blocked only the refused first
 * fragment, as a probe. */
static uint64_t window_due(const struct comm *ctx, const struct comm_peer *p, uint32_t seq)
{
    const struct comm_window_slot *w = &p->window[seq % CONFIG_COMM_WINDOW];
    if (p->tx_blocked) {
        return seq == p->tx_blocked_seq ? p->tx_timer_ns : COMM_NEVER;
    }
    if (w->tries == 0 || (p->tx_fast && seq == p->tx_una)) {
        return 0;
    }
    return w->sent_ns + rto_for(ctx, w->tries);
}

/* Resends what is due and fills the window from the queue, room allowing. */
static void pump_slot(struct comm *ctx, uint16_t slot, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_peer *p = &ctx->peers[slot];
    if (p->tx_state != TX_OPEN) {
        return;
    }
    for (uint32_t s = p->tx_una; s != p->tx_next; s++) {
        struct comm_window_slot *w = &p->window[s % CONFIG_COMM_WINDOW];
        if (w->state != WINDOW_IN_FLIGHT) {
            continue;
        }
        uint64_t due = window_due(ctx, p, s);
        if (due == COMM_NEVER || now_ns < due) {
            continue;
        }
        if (!comm_outbox_has_room(out)) {
            return;
        }
        if (w->tries != 0) {
            ctx->counters.retransmissions++;
        }
        if (s == p->tx_una) {
            p->tx_fast = false;
        }
        emit_data(ctx, slot, s, now_ns, out);
        if (p->tx_blocked) {
            p->tx_tries = (uint8_t)(p->tx_tries < UINT8_MAX ? p->tx_tries + 1u : UINT8_MAX);
            p->tx_timer_ns = now_ns + rto_for(ctx, p->tx_tries);
        }
    }
    while (!p->tx_blocked && p->tx_head != COMM_NONE16 &&
           (uint32_t)seq_diff(p->tx_next, p->tx_una) < CONFIG_COMM_WINDOW) {
        if (!comm_outbox_has_room(out)) {
            return;
        }
        uint16_t index = p->tx_head;
        struct comm_request *r = &ctx->requests[index];
        uint32_t seq = p->tx_next++;
        struct comm_window_slot *w = &p->window[seq % CONFIG_COMM_WINDOW];
        w->state = WINDOW_IN_FLIGHT;
        w->request = index;
        w->fragment = r->frames_sent++ & 0xffffffu;
        w->transmission = r->transmission & 0xffu;
        w->tries = 0;
        emit_data(ctx, slot, seq, now_ns, out);
        if (r->frames_sent == r->frames_total) {
            p->tx_head = r->next;
            if (p->tx_head == COMM_NONE16) {
                p->tx_tail = COMM_NONE16;
            }
            if (r->send_state == SEND_SKIPPING) {
                if (r->grant_seen) {
                    start_resend(ctx, p, index);
                } else {
                    r->send_state = SEND_DEFERRED;
                    queue_push(ctx, &p->tx_deferred_head, &p->tx_deferred_tail, index);
                }
            }
        }
    }
}

void peer_pump(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    uint32_t start = ctx->pump_next;
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_PEERS; i++) {
        uint16_t slot = (uint16_t)((start + i) % CONFIG_COMM_MAX_PEERS);
        if (ctx->peers[slot].node != COMM_NODE_NONE) {
            pump_slot(ctx, slot, now_ns, out);
        }
    }
    ctx->pump_next = (start + 1u) % CONFIG_COMM_MAX_PEERS;
    if (ctx->orphan_head != COMM_NONE16) {
        serve_orphans(ctx, now_ns, out);
    }
}

static void suspect_check(struct comm *ctx, struct comm_peer *p, uint64_t now_ns,
                          struct comm_outbox *out)
{
    bool waiting = p->tx_state == TX_OPENING || p->tx_state == TX_CLOSING ||
                   (p->tx_state == TX_OPEN && p->tx_una != p->tx_next);
    if (!waiting) {
        p->waiting_since_ns = COMM_NEVER;
        p->suspect_at_ns = COMM_NEVER;
        return;
    }
    start_waiting(p, now_ns);
    if (p->suspect_at_ns == COMM_NEVER) {
        uint64_t since = p->waiting_since_ns > p->heard_ns ? p->waiting_since_ns : p->heard_ns;
        p->suspect_at_ns = since + ctx->config.suspect_ns;
    }
    if (now_ns >= p->suspect_at_ns) {
        ctx->counters.suspicions++;
        struct comm_event *e = comm_outbox_event(out, COMM_EVENT_SUSPECT, now_ns);
        if (e != NULL) {
            e->node = p->node;
            e->epoch = ctx->epoch;
        }
        p->suspected = true;
        p->suspect_at_ns = now_ns + ctx->config.suspect_ns; /* again if still silent */
    }
}

void peer_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_PEERS; slot++) {
        struct comm_peer *p = &ctx->peers[slot];
        if (p->node == COMM_NODE_NONE) {
            continue;
        }
        if ((p->tx_state == TX_OPENING || p->tx_state == TX_CLOSING) &&
            now_ns >= p->tx_timer_ns) {
            p->tx_tries = (uint8_t)(p->tx_tries < UINT8_MAX ? p->tx_tries + 1u : UINT8_MAX);
            p->tx_timer_ns = now_ns + rto_for(ctx, p->tx_tries);
            if (p->tx_state == TX_OPENING) {
                send_control(ctx, p->node, p->incarnation, COMM_KIND_OPEN, tx_sid(p, slot), 0, 0,
                             out);
                ctx->counters.opens_sent++;
            } else {
                send_control(ctx, p->node, p->incarnation, COMM_KIND_CLOSE, tx_sid(p, slot),
                             p->tx_next, 0, out);
                ctx->counters.closes_sent++;
            }
        }
        if (p->rx_state == RX_OPEN && p->ack_pending && now_ns >= p->ack_due_ns) {
            send_ack(ctx, slot, out);
        }
        if (p->recycle && p->rx_state == RX_OPEN && now_ns >= p->recycle_due_ns) {
            if (p->recycle_tries >= COMM_RECYCLE_TRIES) {
                p->recycle = false; /* busy for long: let another slot go instead */
            } else {
                ask_close(ctx, p, now_ns, out);
            }
        }
        suspect_check(ctx, p, now_ns, out);
    }
    peer_pump(ctx, now_ns, out);
}

uint64_t peer_deadline(const struct comm *ctx)
{
    uint64_t next = COMM_NEVER;
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_PEERS; slot++) {
        const struct comm_peer *p = &ctx->peers[slot];
        if (p->node == COMM_NODE_NONE) {
            continue;
        }
        if ((p->tx_state == TX_OPENING || p->tx_state == TX_CLOSING) && p->tx_timer_ns < next) {
            next = p->tx_timer_ns;
        }
        if (p->rx_state == RX_OPEN && p->ack_pending && p->ack_due_ns < next) {
            next = p->ack_due_ns;
        }
        if (p->suspect_at_ns < next) {
            next = p->suspect_at_ns;
        }
        if (p->recycle && p->rx_state == RX_OPEN && p->recycle_due_ns < next) {
            next = p->recycle_due_ns;
        }
        if (p->tx_state != TX_OPEN) {
            continue;
        }
        if (p->tx_head != COMM_NONE16 && !p->tx_blocked &&
            (uint32_t)seq_diff(p->tx_next, p->tx_una) < CONFIG_COMM_WINDOW) {
            return ctx->last_now_ns; /* frames wait for outbox room */
        }
        for (uint32_t s = p->tx_una; s != p->tx_next; s++) {
            const struct comm_window_slot *w = &p->window[s % CONFIG_COMM_WINDOW];
            if (w->state != WINDOW_IN_FLIGHT) {
                continue;
            }
            uint64_t due = window_due(ctx, p, s);
            if (due < next) {
                next = due;
            }
        }
    }
    if (ctx->orphan_head != COMM_NONE16) {
        uint64_t retry = ctx->last_now_ns + ctx->config.rto_ns;
        if (retry < next) {
            next = retry;
        }
    }
    return next;
}
