/*
 * Partitions under the primary policy (see machine.h): before a root gives
 * up the primary component it takes a census (probes every member, a batch
 * at a time) and decides on who answered; a minority root tells exactly
 * those members PARTITIONED, and every node of the side drops its view and
 * keeps trying to rejoin, the whole last view as its contact list.
 */
#include "membership/machine/machine.h"

#include <string.h>

#include "membership/reference.h"

/*
 * This side lost the primary component.  The notice goes down the tree of
 * the minority (the view without the failed), so that nodes the root
 * believes on the other side never obey it; then we stop holding a view.
 * side_live: how many members of the last view are on this side, as the
 * side's root found them (the partitioned event reports it; the view kept
 * as a contact list is the whole last view).
 */
static void go_partitioned(struct membership *ctx, const uint32_t *failed, uint32_t failed_count,
                           uint32_t side_live, uint64_t now, struct membership_outbox *out,
                           const uint8_t *forward, size_t forward_length)
{
    uint64_t epoch = ctx->epoch;
    for (uint32_t i = 0; i < failed_count; i++) {
        machine_view_remove(ctx, failed[i]);
    }
    install_refresh_tree(ctx, now);
    uint8_t payload[MEMBERSHIP_MAX_PAYLOAD];
    size_t length = forward_length; /* 0 with a payload: nothing to forward */
    if (forward == NULL) {
        struct membership_writer w;
        membership_writer_init(&w, payload, sizeof payload);
        machine_put_header(ctx, &w, MEMBERSHIP_MSG_PARTITIONED, MEMBERSHIP_FLAG_HAS_VIEW);
        membership_put_u64(&w, epoch);
        membership_put_u8(&w, 0);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, (uint16_t)failed_count);
        membership_put_u16(&w, 0);
        membership_put_u16(&w, 0);
        membership_put_u32(&w, ctx->view.live > 0 ? ctx->view.live : 1u);
        membership_put_u32(&w, ctx->self);
        membership_put_u64(&w, 0);
        for (uint32_t i = 0; i < failed_count; i++) {
            membership_put_u32(&w, failed[i]);
        }
        forward = payload;
        length = w.overflow ? 0 : w.length;
    }
    for (uint32_t i = 0; i < ctx->links.child_count && length > 0; i++) {
        machine_send_forward(ctx, out, machine_id_at(ctx, ctx->links.children[i]), forward, length);
    }
    /* The whole last view stays our contact list for rejoining later. */
    for (uint32_t i = 0; i < failed_count; i++) {
        machine_view_add(ctx, failed[i]);
    }
    ctx->counters.partitions++;
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_PARTITIONED, now);
    if (e != NULL) {
        e->u.partitioned.epoch = epoch;
        e->u.partitioned.side_live = side_live;
        e->u.partitioned.ref_live = ctx->ref.count;
    }
    ctx->incarnation++;
    join_enter(ctx, now, out, true);
}

/*
 * The census: before giving up the primary component on the evidence of
 * rounds that reached too few members (slow, syncing members look the same),
 * probe every member of the view, a batch at a time, and count who answers.
 */
#define CENSUS_BATCH 128u

static void census_batch(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_census *cs = &ctx->census;
    uint32_t sent = 0;
    while (cs->next_rank < ctx->view.live && sent < CENSUS_BATCH) {
        uint32_t pos = membership_view_select(&ctx->view, cs->next_rank);
        uint32_t id = machine_id_at(ctx, pos);
        if (id == ctx->self) {
            cs->bits[pos / 64u] |= UINT64_C(1) << (pos % 64u);
            cs->answered_ref += membership_reference_contains(&ctx->ref, &ctx->view, pos) ? 1u : 0u;
            cs->next_rank++;
            continue;
        }
        if (!machine_send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU)) {
            break; /* the outbox is full: the rest on the next tick */
        }
        cs->next_rank++;
        sent++;
    }
    cs->deadline_ns = machine_deadline_after(now, detector_probe_timeout(ctx) * (1u + sent / 64u));
}

void partition_census_start(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_census *cs = &ctx->census;
    cs->active = true;
    cs->vouch_until_ns = 0;
    cs->next_rank = 0;
    cs->answered_ref = 0;
    memset(cs->bits, 0, sizeof(uint64_t) * ctx->view.word_count);
    census_batch(ctx, now, out);
}

/*
 * Everyone who answers is within reach: on our side.  A member that answers
 * without a view (partitioned, expelled, rejoining) keeps its failure
 * report though: it cannot take part until it is removed and rejoins.
 */
void partition_census_heard(struct membership *ctx, uint32_t sender, bool holds_view)
{
    struct membership_census *cs = &ctx->census;
    uint32_t pos = machine_pos_of(ctx, sender);
    if (!cs->active || !membership_view_is_live(&ctx->view, pos) ||
        ((cs->bits[pos / 64u] >> (pos % 64u)) & 1u) != 0) {
        return;
    }
    cs->bits[pos / 64u] |= UINT64_C(1) << (pos % 64u);
    cs->answered_ref += membership_reference_contains(&ctx->ref, &ctx->view, pos) ? 1u : 0u;
    if (holds_view) {
        /* Within reach after all: not a failure, whatever was reported. */
        (void)coord_unqueue_failure(ctx, sender);
    }
}

/* All probed and waited for: a minority only if the answers say so. */
static void census_finish(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_census *cs = &ctx->census;
    cs->active = false;
    uint32_t ref_root = ctx->ref.root_pos;
    bool root_answered = ref_root != MEMBERSHIP_POS_NONE && ref_root < ctx->view.positions &&
                         ((cs->bits[ref_root / 64u] >> (ref_root % 64u)) & 1u) != 0;
    bool majority = 2u * (uint64_t)cs->answered_ref > ctx->ref.count ||
                    (2u * (uint64_t)cs->answered_ref == ctx->ref.count && root_answered);
    ctx->coord.low_reach_rounds = 0;
    if (majority) {
        cs->vouch_until_ns = machine_deadline_after(now, 4u * ctx->config.report_timeout_ns);
        machine_request_work(ctx, MACHINE_WORK_COORD);
        return;
    }
    /*
     * We know exactly who is on our side: tell each of them directly (a
     * batch per tick, see partition_tick_notify), not down a tree still full of
     * the unreachable.  The notice's live count is the side: every member
     * of the view that answered, us included.
     */
    uint32_t side_live = 0;
    for (uint32_t i = 0; i < ctx->view.word_count; i++) {
        side_live += (uint32_t)__builtin_popcountll(cs->bits[i]);
    }
    struct membership_writer w;
    membership_writer_init(&w, ctx->round.change, sizeof ctx->round.change);
    machine_put_header(ctx, &w, MEMBERSHIP_MSG_PARTITIONED, MEMBERSHIP_FLAG_HAS_VIEW);
    membership_put_u64(&w, ctx->epoch);
    membership_put_u8(&w, MEMBERSHIP_CHANGE_DIRECT);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 0);
    membership_put_u16(&w, 0);
    membership_put_u16(&w, 0);
    membership_put_u32(&w, side_live > 0 ? side_live : 1u);
    membership_put_u32(&w, ctx->self);
    membership_put_u64(&w, 0);
    ctx->round.change_length = (uint16_t)w.length;
    go_partitioned(ctx, NULL, 0, side_live > 0 ? side_live : 1u, now, out, ctx->round.change, 0);
    cs->notify = true;
    cs->next_rank = 0;
    cs->deadline_ns = now;
}

/*
 * A census that found a majority within reach vouches for the changes of
 * the next few rounds, even when they leave fewer members than half of an
 * old reference: the members they remove answered probes but hold no view
 * (they are rejoining, and come back with their joins).  Without this, a
 * root whose reference predates a wave of expulsions alternated for ever
 * between a census (majority) and a batch (no majority of the reference).
 * A round that reaches no majority ends the vouching at once.
 */
bool partition_census_vouches(const struct membership *ctx, uint64_t now)
{
    return !ctx->census.active && now < ctx->census.vouch_until_ns;
}

void partition_census_expire(struct membership *ctx)
{
    ctx->census.vouch_until_ns = 0;
}

bool partition_tick_census(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (!ctx->census.active || ctx->census.deadline_ns > now) {
        return false;
    }
    if (ctx->census.next_rank < ctx->view.live) {
        census_batch(ctx, now, out);
        return false;
    }
    census_finish(ctx, now, out);
    return true;
}

/* Sends the direct partition notices, a batch per call, to who answered. */
void partition_tick_notify(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (!ctx->census.notify || ctx->census.deadline_ns > now) {
        return;
    }
    struct membership_census *cs = &ctx->census;
    uint32_t sent = 0;
    while (cs->next_rank < ctx->view.live && sent < CENSUS_BATCH) {
        uint32_t pos = membership_view_select(&ctx->view, cs->next_rank);
        uint32_t id = machine_id_at(ctx, pos);
        if (id != ctx->self && ((cs->bits[pos / 64u] >> (pos % 64u)) & 1u) != 0) {
            if (!machine_send_forward(ctx, out, id, ctx->round.change, ctx->round.change_length)) {
                break; /* the outbox is full: the rest on the next call */
            }
            sent++;
        }
        cs->next_rank++;
    }
    cs->notify = cs->next_rank < ctx->view.live;
    cs->deadline_ns = now + 1u;
}

/* PARTITIONED from our side's root: obey unless we are among the lost. */
void partition_handle(struct membership *ctx, const struct membership_msg *msg,
                      const uint8_t *payload, size_t length, uint64_t now,
                      struct membership_outbox *out)
{
    const struct membership_body_change *c = &msg->body.change;
    if (c->base_epoch != ctx->epoch || round_change_removes(msg, ctx->self)) {
        ctx->counters.drops_unexpected++;
        return;
    }
    uint32_t failed[MEMBERSHIP_MAX_CHANGE_FAILED];
    for (uint32_t i = 0; i < c->failed_count; i++) {
        failed[i] = membership_msg_failed_id(msg, i);
    }
    bool direct = (c->flags & MEMBERSHIP_CHANGE_DIRECT) != 0;
    go_partitioned(ctx, failed, c->failed_count, c->live_after, now, out, payload,
                   direct ? 0 : length);
}

