/*
 * View transfer (see machine.h): a node that missed a change, or is
 * joining, fetches a whole view in chunks (VIEW_REQUEST from a position,
 * VIEW_CHUNK back: live positions as intervals or a raw bitmap, whichever
 * covers more), one request per chunk, checked by live count and digest at
 * the end, then installed wholesale.  Any view holder serves requests.
 */
#include "membership/machine/machine.h"

#include <string.h>

#include "membership/reference.h"

static void sync_request(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_VIEW_REQUEST);
    membership_put_u32(&w, ctx->sync.next_from);
    membership_outbox_commit(out, ctx->sync.source, &w);
    ctx->sync.messages++;
    ctx->sync.deadline_ns = machine_deadline_after(now, ctx->config.sync_timeout_ns);
}

void transfer_start(struct membership *ctx, uint32_t source, uint64_t now,
                    struct membership_outbox *out)
{
    if (ctx->sync.active) {
        return; /* one transfer at a time; its timeout bounds it */
    }
    struct membership_sync *s = &ctx->sync;
    s->active = true;
    s->source = source;
    s->epoch = 0;
    s->next_from = 0;
    s->attempts = 0;
    s->messages = 0;
    ctx->counters.syncs_started++;
    sync_request(ctx, now, out);
}

/* One chunk of our view from position from (see codec.h for the layout). */
static void send_chunk(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                       uint32_t from)
{
    const struct membership_view *v = &ctx->view;
    const uint32_t n = ctx->node_count;
    /* Interval encoding: as many runs as fit. */
    const uint32_t max_intervals = MEMBERSHIP_CHUNK_MAX_DATA / 8u;
    uint32_t interval_count = 0;
    uint32_t interval_to = n;
    for (uint32_t p = membership_view_next_live(v, from); p != MEMBERSHIP_POS_NONE;) {
        if (interval_count == max_intervals) {
            interval_to = p;
            break;
        }
        uint32_t end = membership_view_next_dead(v, p);
        interval_count++;
        p = end < n ? membership_view_next_live(v, end) : MEMBERSHIP_POS_NONE;
    }
    /* Bitmap encoding: a fixed span (only from a byte boundary). */
    uint32_t bits_to = 0;
    if ((from % 8u) == 0) {
        uint64_t end = (uint64_t)from + 8u * (uint64_t)MEMBERSHIP_CHUNK_MAX_DATA;
        bits_to = end < n ? (uint32_t)end : n;
    }
    bool use_bits = bits_to > interval_to;
    uint32_t to = use_bits ? bits_to : interval_to;

    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_VIEW_CHUNK);
    membership_put_u32(&w, ctx->config_digest);
    membership_put_u8(&w, use_bits ? MEMBERSHIP_CHUNK_BITS : MEMBERSHIP_CHUNK_INTERVALS);
    membership_put_u8(&w, to == n ? MEMBERSHIP_CHUNK_FINAL : 0);
    membership_put_u16(&w, (uint16_t)(use_bits ? (to - from + 7u) / 8u : interval_count));
    membership_put_u32(&w, from);
    membership_put_u32(&w, to);
    membership_put_u32(&w, v->live);
    membership_put_u64(&w, ctx->digest);
    membership_put_u32(&w, ctx->ref.count);
    membership_put_u32(&w, ctx->ref.lost);
    membership_put_u32(&w, ctx->ref.root_pos == MEMBERSHIP_POS_NONE ? 0 : ctx->ref.root_pos);
    if (use_bits) {
        for (uint32_t p = from; p < to; p += 8u) {
            uint8_t byte = 0;
            for (uint32_t b = 0; b < 8u && p + b < to; b++) {
                if (membership_view_is_live(v, p + b)) {
                    byte |= (uint8_t)(1u << b);
                }
            }
            membership_put_u8(&w, byte);
        }
    } else {
        uint32_t written = 0;
        for (uint32_t p = membership_view_next_live(v, from);
             p != MEMBERSHIP_POS_NONE && written < interval_count;) {
            uint32_t end = membership_view_next_dead(v, p);
            membership_put_u32(&w, p);
            membership_put_u32(&w, end - p);
            written++;
            p = end < n ? membership_view_next_live(v, end) : MEMBERSHIP_POS_NONE;
        }
    }
    if (membership_outbox_commit(out, dest, &w)) {
        ctx->counters.chunks_sent++;
    }
}

static void staging_set(uint64_t *staging, uint32_t pos)
{
    staging[pos / 64u] |= UINT64_C(1) << (pos % 64u);
}

static bool staging_has(const uint64_t *staging, uint32_t pos)
{
    return ((staging[pos / 64u] >> (pos % 64u)) & 1u) != 0;
}

/* Live count and digest of the staged view: O(N) (the rare full-view path). */
static void staging_measure(const struct membership *ctx, uint32_t *live, uint64_t *digest)
{
    uint32_t count = 0;
    uint64_t d = membership_initial_digest(ctx->config.member_count);
    for (uint32_t pos = 0; pos < ctx->node_count; pos++) {
        bool staged = staging_has(ctx->sync.staging, pos);
        uint32_t id = machine_id_at(ctx, pos);
        count += staged ? 1u : 0u;
        if (staged != (id < ctx->config.member_count)) {
            d ^= membership_id_digest(id);
        }
    }
    *live = count;
    *digest = d;
}

static void install_synced(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_sync *s = &ctx->sync;
    s->active = false;
    ctx->counters.syncs_completed++;
    bool was_joining = ctx->join.active;
    /* Wholesale replacement: the reference can no longer see old words. */
    membership_reference_adopt(&ctx->ref, &ctx->view, ctx->ref.count, ctx->ref.lost,
                               ctx->ref.root_pos);
    memcpy(ctx->view.words, s->staging, sizeof s->staging);
    membership_view_rebuild(&ctx->view);
    if (!staging_has(s->staging, ctx->self_pos)) {
        /* A view without us: the contact list of a joiner, or our expulsion. */
        if (!was_joining && ctx->has_view) {
            join_expel(ctx, now, out, s->source, s->epoch);
        } else if (was_joining) {
            join_left_out(ctx, now);
        }
        return;
    }
    ctx->has_view = true;
    ctx->digest = s->digest;
    ctx->epoch = s->epoch;
    if (was_joining) {
        ctx->stable_epoch = s->stable_epoch;
        machine_history_reset(ctx);
    } else if (s->stable_epoch > ctx->stable_epoch) {
        ctx->stable_epoch = s->stable_epoch;
    }
    membership_reference_adopt(&ctx->ref, &ctx->view, s->ref_count, s->ref_removed, s->ref_root);
    if (was_joining) {
        join_done(ctx, now);
    }
    coord_reset(ctx);
    ctx->suspect_count = 0;
    install_view(ctx, now, out);
    if (was_joining) {
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_JOINED, now);
        if (e != NULL) {
            e->u.joined.epoch = ctx->epoch;
            e->u.joined.root = machine_root_id(ctx);
        }
    }
    struct membership_round *r = &ctx->round;
    if (r->active && r->waiting_sync) {
        if (r->epoch == ctx->epoch) {
            /* The change we were handed: its decisions are this epoch's
             * (a member's; a joiner's new life reports none). */
            struct membership_msg change;
            if (was_joining) {
                ctx->decisions_epoch = ctx->epoch;
            } else if (membership_decode(r->change, r->change_length, ctx->node_count,
                                         &change) == MEMBERSHIP_DECODE_OK) {
                round_report_decisions(ctx, &change, now, out);
            }
            round_start(ctx, r->parent, r->change, r->change_length, s->messages, now, out);
        } else {
            r->active = false; /* superseded by the newer view we got */
        }
    }
}

void transfer_handle_request(struct membership *ctx, const struct membership_msg *msg,
                             struct membership_outbox *out)
{
    if (!ctx->has_view) {
        ctx->counters.drops_no_view++;
        return;
    }
    send_chunk(ctx, out, msg->header.sender, msg->body.view_request.from_pos);
}

void transfer_handle_chunk(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                           struct membership_outbox *out)
{
    const struct membership_header *h = &msg->header;
    const struct membership_body_view_chunk *c = &msg->body.chunk;
    struct membership_sync *s = &ctx->sync;
    if (!s->active || h->sender != s->source) {
        ctx->counters.drops_unexpected++;
        return;
    }
    if (c->config_digest != ctx->config_digest) {
        ctx->counters.drops_config++;
        s->active = false;
        return;
    }
    s->messages++;
    if (ctx->has_view && (h->epoch <= ctx->epoch || h->stable_epoch < ctx->stable_epoch)) {
        /* Nothing newer on the source's side (any more). */
        s->active = false;
        struct membership_round *r = &ctx->round;
        if (r->active && r->waiting_sync && r->epoch == ctx->epoch) {
            round_start(ctx, r->parent, r->change, r->change_length, s->messages, now, out);
        } else if (r->active && r->waiting_sync && r->epoch < ctx->epoch) {
            r->active = false;
        }
        return;
    }
    if (c->from_pos == 0) {
        memset(s->staging, 0, sizeof s->staging);
        s->epoch = h->epoch;
        s->stable_epoch = h->stable_epoch;
        s->live = c->live;
        s->digest = c->digest;
        s->ref_count = c->ref_count;
        s->ref_removed = c->ref_removed;
        s->ref_root = c->ref_root;
    } else if (h->epoch != s->epoch || c->from_pos != s->next_from) {
        s->next_from = 0; /* the view moved on, or a chunk went missing */
        s->attempts++;
        sync_request(ctx, now, out);
        return;
    }
    if (c->encoding == MEMBERSHIP_CHUNK_BITS) {
        for (uint32_t p = c->from_pos; p < c->to_pos; p++) {
            uint32_t i = p - c->from_pos;
            if ((msg->list[i / 8u] >> (i % 8u)) & 1u) {
                staging_set(s->staging, p);
            }
        }
    } else {
        for (uint32_t i = 0; i < c->count; i++) {
            uint32_t start;
            uint32_t length;
            membership_msg_interval(msg, i, &start, &length);
            for (uint32_t p = start; p < start + length; p++) {
                staging_set(s->staging, p);
            }
        }
    }
    if ((c->flags & MEMBERSHIP_CHUNK_FINAL) == 0) {
        s->next_from = c->to_pos;
        sync_request(ctx, now, out);
        return;
    }
    uint32_t live;
    uint64_t digest;
    staging_measure(ctx, &live, &digest);
    if (live != s->live || digest != s->digest || live == 0) {
        ctx->counters.drops_malformed++;
        s->next_from = 0;
        s->attempts++;
        sync_request(ctx, now, out);
        return;
    }
    install_synced(ctx, now, out);
}


void transfer_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_sync *s = &ctx->sync;
    if (ctx->lag_deadline_ns <= now) {
        ctx->lag_deadline_ns = MEMBERSHIP_NEVER;
        if (ctx->has_view && ctx->epoch < ctx->lag_epoch) {
            transfer_start(ctx, ctx->lag_source, now, out);
        }
        ctx->lag_epoch = 0;
    }
    if (s->active && s->deadline_ns <= now) {
        s->attempts++;
        if (s->attempts > 3u) {
            s->active = false;
        } else {
            sync_request(ctx, now, out);
        }
    }
}
