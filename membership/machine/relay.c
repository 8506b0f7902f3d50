/*
 * Relays (see machine.h; issue 16, after Phoenix): two members that cannot
 * reach each other while both reach others (a blocked pair) talk through a
 * third member instead of suspecting each other for as long as it lasts.
 *
 * The root learns of such a pair when it refutes a report: the reported
 * member answered its probe, so the root reaches both.  It tells both ends
 * (REFUTED), the detector and the member it reported, and names itself as
 * the relay.  (Both: the other end may not have suspected anyone yet, and
 * an end that learnt its entry from the envelopes it receives would learn
 * it again from those in flight each time a retest cleared it, and never
 * go back to direct.)  From then on every
 * message the detector sends the peer leaves in an envelope (RELAY) for
 * the relay, which sends it on to the peer once, marked FORWARDED; the peer
 * opens it and handles the inner message as if it came from the origin
 * directly (the epoch checks, the detector's signs of life, the round's
 * acks), and answers the same way.  One hop only: a relay never sends on
 * a forwarded envelope, and an envelope never holds another.
 *
 * An entry ends when a direct message from the peer arrives (every
 * RELAY_RETEST-th heartbeat also goes direct, to find out), when the peer
 * or the relay leaves the view, or with the view itself.  Only members of
 * the receiver's view may relay or be relayed; anything else is counted in
 * relays_refused and dropped.
 */
#include "membership/machine/machine.h"

#include "lib/le.h"

#define RELAY_RETEST 8u /* every this many heartbeats through the relay, one direct */

static int relay_index(const struct membership *ctx, uint32_t peer)
{
    for (uint32_t i = 0; i < ctx->relay_count; i++) {
        if (ctx->relays[i].peer == peer) {
            return (int)i;
        }
    }
    return -1;
}

static void relay_drop(struct membership *ctx, uint32_t i)
{
    ctx->relays[i] = ctx->relays[--ctx->relay_count];
}

void relay_reset(struct membership *ctx)
{
    ctx->relay_count = 0;
}

void relay_view_changed(struct membership *ctx)
{
    for (uint32_t i = 0; i < ctx->relay_count;) {
        if (!machine_is_member(ctx, ctx->relays[i].peer) ||
            !machine_is_member(ctx, ctx->relays[i].relay)) {
            relay_drop(ctx, i);
            continue;
        }
        i++;
    }
}

uint32_t relay_for(const struct membership *ctx, uint32_t peer)
{
    int i = relay_index(ctx, peer);
    return i < 0 ? MEMBERSHIP_NONE : ctx->relays[i].relay;
}

/* From now on peer is reached through relay (both members, neither us). */
static void relay_learn(struct membership *ctx, uint32_t peer, uint32_t relay)
{
    int i = relay_index(ctx, peer);
    if (i >= 0) {
        ctx->relays[i].relay = relay;
        return;
    }
    if (ctx->relay_count >= MEMBERSHIP_RELAY_MAX) {
        ctx->counters.table_overflows++;
        return;
    }
    struct membership_relay *r = &ctx->relays[ctx->relay_count++];
    r->peer = peer;
    r->relay = relay;
    r->beats = 0;
}

void relay_heard_direct(struct membership *ctx, uint32_t sender)
{
    int i = relay_index(ctx, sender);
    if (i >= 0) {
        relay_drop(ctx, (uint32_t)i);
    }
}

void relay_offer(struct membership *ctx, struct membership_outbox *out, uint32_t detector,
                 uint32_t peer)
{
    /* Only the view's root is taken at its word (not an acting one). */
    if (machine_root_id(ctx) != ctx->self || detector == ctx->self || detector == peer ||
        !machine_is_member(ctx, detector) || !machine_is_member(ctx, peer)) {
        return;
    }
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_REFUTED);
    membership_put_u32(&w, peer);
    membership_put_u32(&w, ctx->self);
    membership_outbox_commit(out, detector, &w);
}

void relay_handle_refuted(struct membership *ctx, const struct membership_msg *msg, uint64_t now)
{
    uint32_t peer = msg->body.refuted.peer;
    uint32_t relay = msg->body.refuted.relay;
    /* Only our root checks our reports; it names a member that is neither of us. */
    if (msg->header.sender != machine_root_id(ctx) || peer == ctx->self || relay == ctx->self ||
        relay == peer || !machine_is_member(ctx, peer) || !machine_is_member(ctx, relay)) {
        ctx->counters.drops_unexpected++;
        return;
    }
    detector_forget_suspect(ctx, peer, now);
    relay_learn(ctx, peer, relay);
}

/*
 * A member to probe `member` through, for the root: first a torus
 * neighbour of it, in link order, since one hop separates them and no dead
 * node can sit between (every route from `member` to others may cross dead
 * neighbours of it whose links are not declared down yet, and the routers
 * prefer such a route to a detour until they are: issue 20, 3 and 5 dead
 * around 7 on a 2x2x2 torus); else the member after it in layout order.
 * Never us, `avoid` (the detector that reported it: it did not reach it),
 * a member we suspect or hold reported; every node would name the same.
 */
static bool helper_eligible(const struct membership *ctx, uint32_t id, uint32_t member,
                            uint32_t avoid)
{
    return id != ctx->self && id != member && id != avoid && machine_in_view(ctx, id) &&
           !detector_suspects(ctx, id) && !coord_is_queued(ctx, id);
}

uint32_t relay_pick_helper(const struct membership *ctx, uint32_t member, uint32_t avoid)
{
    uint32_t neighbours[CONFIG_MAX_LINKS];
    unsigned count = membership_layout_neighbours(&ctx->layout, member, neighbours);
    for (unsigned i = 0; i < count; i++) {
        if (helper_eligible(ctx, neighbours[i], member, avoid)) {
            return neighbours[i];
        }
    }
    uint32_t live = ctx->view.live;
    uint32_t rank = membership_view_rank(&ctx->view, machine_pos_of(ctx, member));
    for (uint32_t k = 1; k < live; k++) {
        uint32_t id = machine_id_at(ctx, membership_view_select(&ctx->view, (rank + k) % live));
        if (helper_eligible(ctx, id, member, avoid)) {
            return id;
        }
    }
    return MEMBERSHIP_NONE;
}

/* An envelope's own bytes: our header, then origin, target, flags, the inner length. */
static void put_envelope(const struct membership *ctx, struct membership_writer *w,
                         uint32_t origin, uint32_t target, uint8_t flags, uint16_t inner_length)
{
    machine_put_header(ctx, w, MEMBERSHIP_MSG_RELAY, ctx->has_view ? MEMBERSHIP_FLAG_HAS_VIEW : 0);
    membership_put_u32(w, origin);
    membership_put_u32(w, target);
    membership_put_u8(w, flags);
    membership_put_u8(w, 0);
    membership_put_u16(w, inner_length);
}

/* Message i of out, ours, goes to relay in an envelope for peer; false: it goes direct. */
static bool wrap_one(struct membership *ctx, struct membership_outbox *out, uint32_t i,
                     uint32_t peer, uint32_t relay)
{
    uint16_t length = out->messages[i].length;
    uint8_t envelope[MEMBERSHIP_RELAY_OVERHEAD];
    struct membership_writer w;
    membership_writer_init(&w, envelope, sizeof envelope);
    put_envelope(ctx, &w, ctx->self, peer, 0, length);
    if (length > MEMBERSHIP_RELAY_MAX_INNER ||
        !membership_outbox_prepend(out, i, envelope, sizeof envelope)) {
        ctx->counters.table_overflows++; /* too long to wrap: it goes direct */
        return false;
    }
    out->messages[i].destination = relay;
    ctx->counters.relays_sent++;
    return true;
}

/*
 * The root's indirect probe (SWIM's ping-req, in our terms): REFUTED
 * naming the root as peer and the helper as relay (the member may suspect
 * the root just as the root suspects it, or reach it only across the same
 * dead nodes, and must answer the same way), then HOW_ARE_YOU, both in
 * envelopes through the helper.  The answer comes back through the
 * helper; none by the probe's deadline is evidence (coordinator.c).  With
 * `keep` (our own suspicion) the root also takes the helper as relay for
 * the member from now on, and the removal drops the entry; without (a
 * report, whose direct probe goes too), only these two go around.
 */
void relay_probe_through(struct membership *ctx, struct membership_outbox *out, uint32_t member,
                         uint32_t helper, bool keep)
{
    if (keep) {
        relay_learn(ctx, member, helper);
    }
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_REFUTED);
    membership_put_u32(&w, ctx->self);
    membership_put_u32(&w, helper);
    if (membership_outbox_commit(out, member, &w) && !keep) {
        (void)wrap_one(ctx, out, out->message_count - 1u, member, helper);
    }
    if (machine_send_simple(ctx, out, member, MEMBERSHIP_MSG_HOW_ARE_YOU) && !keep) {
        (void)wrap_one(ctx, out, out->message_count - 1u, member, helper);
    }
    ctx->counters.probes_indirect++;
}

bool relay_receive(struct membership *ctx, const struct membership_msg *msg,
                   struct membership_outbox *out, const uint8_t **inner, size_t *inner_length)
{
    const struct membership_body_relay *r = &msg->body.relay;
    uint32_t sender = msg->header.sender;
    bool forwarded = (r->flags & MEMBERSHIP_RELAY_FORWARDED) != 0;
    /* To send on: from its origin, for someone else.  To open: from a relay, for us. */
    bool addressed = forwarded ? r->target == ctx->self && sender != r->origin
                               : sender == r->origin && r->target != ctx->self;
    if (!addressed || !machine_is_member(ctx, sender) || !machine_is_member(ctx, r->origin) ||
        !machine_is_member(ctx, r->target)) {
        ctx->counters.relays_refused++;
        return false;
    }
    if (!forwarded) {
        struct membership_writer w;
        membership_outbox_begin(out, &w);
        put_envelope(ctx, &w, r->origin, r->target, MEMBERSHIP_RELAY_FORWARDED, r->inner_length);
        for (uint32_t i = 0; i < r->inner_length; i++) {
            membership_put_u8(&w, msg->list[i]);
        }
        if (membership_outbox_commit(out, r->target, &w)) {
            ctx->counters.relays_forwarded++;
        }
        return false;
    }
    ctx->counters.relays_delivered++;
    *inner = msg->list;
    *inner_length = r->inner_length;
    return true;
}

void relay_wrap_outbox(struct membership *ctx, struct membership_outbox *out)
{
    uint32_t count = out->message_count; /* retest copies go after: direct */
    for (uint32_t i = 0; ctx->relay_count > 0 && i < count; i++) {
        const uint8_t *payload = membership_outbox_payload(out, i);
        uint16_t length = out->messages[i].length;
        if (length < MEMBERSHIP_HEADER_SIZE || payload[1] == MEMBERSHIP_MSG_RELAY ||
            le_get_u32(payload + 4) != ctx->self) {
            continue; /* an envelope already, or not ours */
        }
        int k = relay_index(ctx, out->messages[i].destination);
        if (k < 0 || detector_suspects(ctx, ctx->relays[k].relay)) {
            continue;
        }
        struct membership_relay *r = &ctx->relays[k];
        if (payload[1] == MEMBERSHIP_MSG_HEARTBEAT && ++r->beats % RELAY_RETEST == 0) {
            (void)membership_outbox_copy(out, i, r->peer); /* is the direct way back? */
        }
        (void)wrap_one(ctx, out, i, r->peer, r->relay);
    }
}
