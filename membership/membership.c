/*
 * The membership state machine (see membership.h for the protocol).
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

#include <string.h>

#include "membership/reference.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

uint64_t membership_id_digest(uint32_t id)
{
    return mix64((uint64_t)id + UINT64_C(0x9e3779b97f4a7c15));
}

/*
 * The view digest: a seed derived from the initial member count, XORed with
 * membership_id_digest(id) for every id whose membership differs from the
 * initial view (ids 0..member_count-1).  That is the plain XOR-of-ids set
 * digest shifted by a per-configuration constant, so equal views give equal
 * digests; the initial view's digest costs O(1) instead of O(N).
 */
uint64_t membership_initial_digest(uint32_t member_count)
{
    return mix64(UINT64_C(0xd1ce5eed00000000) ^ member_count);
}

size_t membership_context_bytes(void)
{
    return sizeof(struct membership);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint32_t id_at(const struct membership *ctx, uint32_t pos)
{
    return membership_layout_id(&ctx->layout, pos);
}

static uint32_t pos_of(const struct membership *ctx, uint32_t id)
{
    return membership_layout_pos(&ctx->layout, id);
}

/* In the view (or contact list) regardless of whether it is installed. */
static bool in_view(const struct membership *ctx, uint32_t id)
{
    return id < ctx->node_count && membership_view_is_live(&ctx->view, pos_of(ctx, id));
}

static bool is_member(const struct membership *ctx, uint32_t id)
{
    return ctx->has_view && in_view(ctx, id);
}

static bool is_root(const struct membership *ctx)
{
    return ctx->has_view && (ctx->root_pos == ctx->self_pos || ctx->coord.acting);
}

static uint32_t root_id(const struct membership *ctx)
{
    return ctx->root_pos == MEMBERSHIP_POS_NONE ? MEMBERSHIP_NONE : id_at(ctx, ctx->root_pos);
}

static bool id_in_list(const uint32_t *list, uint32_t count, uint32_t id)
{
    for (uint32_t i = 0; i < count; i++) {
        if (list[i] == id) {
            return true;
        }
    }
    return false;
}

static uint64_t deadline_after(uint64_t now, uint64_t delay)
{
    return delay >= MEMBERSHIP_NEVER - now ? MEMBERSHIP_NEVER - 1u : now + delay;
}

/* ------------------------------------------------------------------ */
/* Sending                                                              */
/* ------------------------------------------------------------------ */

static void begin_message(const struct membership *ctx, struct membership_outbox *out,
                          struct membership_writer *w, uint8_t type)
{
    struct membership_header h = {
        .type = type,
        .flags = ctx->has_view ? MEMBERSHIP_FLAG_HAS_VIEW : 0,
        .sender = ctx->self,
        .incarnation = ctx->incarnation,
        .epoch = ctx->epoch,
        .stable_epoch = ctx->stable_epoch,
    };
    membership_outbox_begin(out, w);
    membership_put_header(w, &h);
}

static bool send_simple(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                        uint8_t type)
{
    struct membership_writer w;
    begin_message(ctx, out, &w, type);
    return membership_outbox_commit(out, dest, &w);
}

/* Forwards an encoded message with this node as sender. */
static bool send_forward(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
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
    send_simple(ctx, out, dest, MEMBERSHIP_MSG_VIEW_NOTICE);
}

/* ------------------------------------------------------------------ */
/* Events                                                               */
/* ------------------------------------------------------------------ */

static void emit_view(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_VIEW, now);
    if (e != NULL) {
        e->u.view.epoch = ctx->epoch;
        e->u.view.root = root_id(ctx);
        e->u.view.live = ctx->view.live;
        e->u.view.digest = ctx->digest;
    }
}

static void emit_failure(struct membership *ctx, uint32_t who, uint64_t detect_ns, uint8_t cause,
                         uint64_t now, struct membership_outbox *out)
{
    struct membership_event *e =
        membership_outbox_event(out, MEMBERSHIP_EVENT_FAILURE_DETECTED, now);
    if (e != NULL) {
        e->u.failure.who = who;
        e->u.failure.detector = ctx->self;
        e->u.failure.detect_ns = detect_ns;
        e->u.failure.cause = cause;
    }
}

/* ------------------------------------------------------------------ */
/* View bookkeeping                                                     */
/* ------------------------------------------------------------------ */

static void history_reset(struct membership *ctx)
{
    ctx->history_count = 0;
}

static void history_add(struct membership *ctx, uint64_t epoch)
{
    if (ctx->history_count < MEMBERSHIP_HISTORY) {
        ctx->history[ctx->history_count++] = epoch;
        return;
    }
    memmove(ctx->history, ctx->history + 1, sizeof(uint64_t) * (MEMBERSHIP_HISTORY - 1));
    ctx->history[MEMBERSHIP_HISTORY - 1] = epoch;
}

static bool history_has(const struct membership *ctx, uint64_t epoch)
{
    for (uint32_t i = 0; i < ctx->history_count; i++) {
        if (ctx->history[i] == epoch) {
            return true;
        }
    }
    return false;
}

static void ref_to_current(struct membership *ctx)
{
    membership_reference_take(&ctx->ref, &ctx->view, ctx->root_pos);
}

/* Every change of the live set goes through these (the reference is kept). */
static bool view_remove_id(struct membership *ctx, uint32_t id)
{
    return membership_reference_remove(&ctx->ref, &ctx->view, pos_of(ctx, id));
}

static bool view_add_id(struct membership *ctx, uint32_t id)
{
    return membership_reference_add(&ctx->ref, &ctx->view, pos_of(ctx, id));
}

/* Learns that view `stable` completed. */
static void learn_stable(struct membership *ctx, uint64_t stable)
{
    if (stable <= ctx->stable_epoch) {
        return;
    }
    ctx->stable_epoch = stable;
    if (stable == ctx->epoch) {
        ref_to_current(ctx);
    }
}

static void rebuild_watch(struct membership *ctx, uint64_t now)
{
    struct membership_watch fresh[MEMBERSHIP_WATCH_MAX];
    uint32_t count = 0;
    uint32_t ids[MEMBERSHIP_WATCH_MAX];
    uint32_t id_count = 0;
    if (ctx->has_view && ctx->links.parent != MEMBERSHIP_POS_NONE) {
        ids[id_count++] = id_at(ctx, ctx->links.parent);
    }
    for (uint32_t i = 0; ctx->has_view && i < ctx->links.child_count; i++) {
        ids[id_count++] = id_at(ctx, ctx->links.children[i]);
    }
    if (ctx->has_view && ctx->config.watch_torus_neighbours) {
        for (uint32_t i = 0; i < ctx->neighbour_count; i++) {
            uint32_t n = ctx->neighbours[i];
            if (in_view(ctx, n) && !id_in_list(ids, id_count, n)) {
                ids[id_count++] = n;
            }
        }
    }
    for (uint32_t i = 0; i < id_count; i++) {
        struct membership_watch *w = &fresh[count++];
        w->id = ids[i];
        w->last_heard_ns = now;
        w->suspected = false;
        for (uint32_t j = 0; j < ctx->watch_count; j++) {
            if (ctx->watch[j].id == ids[i]) {
                *w = ctx->watch[j];
                break;
            }
        }
    }
    memcpy(ctx->watch, fresh, sizeof(fresh[0]) * count);
    ctx->watch_count = count;
}

static void refresh_tree(struct membership *ctx, uint64_t now)
{
    ctx->root_pos = membership_tree_root(&ctx->view);
    ctx->levels = membership_tree_levels(ctx->view.live, ctx->config.radix);
    if (!membership_tree_locate(&ctx->view, ctx->layout.kind, ctx->config.radix, ctx->self_pos,
                                &ctx->links)) {
        memset(&ctx->links, 0, sizeof ctx->links);
        ctx->links.parent = MEMBERSHIP_POS_NONE;
    }
    rebuild_watch(ctx, now);
}

static uint64_t recheck_delay(const struct membership *ctx)
{
    return ctx->config.report_timeout_ns + (uint64_t)(ctx->levels + 2u) * ctx->config.ack_timeout_ns;
}

static void coordinator_reset(struct membership *ctx)
{
    struct membership_coordinator *c = &ctx->coord;
    c->acting = false;
    c->failed_count = 0;
    c->join_count = 0;
    c->active = false;
    c->episode = false;
    c->round_join_count = 0;
    c->confirming = false;
    c->confirmed = false;
    c->low_reach_rounds = 0;
    ctx->census.active = false;
}

static void enter_joining(struct membership *ctx, uint64_t now, struct membership_outbox *out,
                          bool rejoin);

/*
 * Work that would otherwise make functions call each other in a cycle
 * (report -> start a round -> install -> report ...) is flagged here and
 * run by run_pending() at the end of every entry point: the call graph
 * stays acyclic, as the no-recursion rule demands.
 */
#define WORK_REPORT 0x1u /* send or re-send the failure report */
#define WORK_COORD 0x2u  /* start the next round if root and idle */

static void request_work(struct membership *ctx, uint32_t work)
{
    ctx->pending_work |= work;
}

/*
 * Common tail of every installation: tree, watch set, suspects, event.
 * The view is known to contain this node.
 */
static void installed(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    ctx->counters.views_installed++;
    history_add(ctx, ctx->epoch);
    ctx->coord.acting = false;
    ctx->search.active = false;
    if (ctx->round.active && ctx->round.epoch < ctx->epoch) {
        ctx->round.active = false; /* superseded: its acks will not come */
    }
    refresh_tree(ctx, now);
    /* Suspects that left the view are settled; the rest are reported again. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        struct membership_suspect s = ctx->suspects[i];
        if (!in_view(ctx, s.id)) {
            continue;
        }
        if (s.state == SUSPECT_REPORTED) {
            s.state = SUSPECT_NEW;
        }
        ctx->suspects[kept++] = s;
    }
    ctx->suspect_count = kept;
    kept = 0;
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        if (in_view(ctx, ctx->probes[i].id)) {
            ctx->probes[kept++] = ctx->probes[i];
        }
    }
    ctx->probe_count = kept;
    ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    emit_view(ctx, now, out);
    request_work(ctx, WORK_REPORT);
}

static void expel(struct membership *ctx, uint64_t now, struct membership_outbox *out,
                  uint32_t by, uint64_t epoch)
{
    ctx->counters.expulsions++;
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_EXPELLED, now);
    if (e != NULL) {
        e->u.expelled.epoch = epoch;
        e->u.expelled.by = by;
    }
    ctx->incarnation++; /* a new life: nothing from this one is accepted again */
    ctx->join.hint = by != ctx->self ? by : MEMBERSHIP_NONE;
    enter_joining(ctx, now, out, true);
}

/* ------------------------------------------------------------------ */
/* Joining                                                              */
/* ------------------------------------------------------------------ */

static void send_join_request(struct membership *ctx, struct membership_outbox *out, uint32_t dest)
{
    struct membership_writer w;
    begin_message(ctx, out, &w,
                  ctx->join.rejoin ? MEMBERSHIP_MSG_NODE_ALIVE : MEMBERSHIP_MSG_NEW_NODE);
    membership_put_u32(&w, ctx->config_digest);
    membership_put_u8(&w, ctx->join.rejoin ? MEMBERSHIP_JOIN_REJOIN : 0);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 0);
    if (membership_outbox_commit(out, dest, &w)) {
        ctx->counters.joins_sent++;
    }
}

/*
 * Asks the next contact of the list (the last view) in layout order.  After
 * a whole pass without success it pauses one join timeout before the next.
 */
static void join_next(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_joiner *j = &ctx->join;
    j->redirected = false;
    j->target = MEMBERSHIP_NONE;
    if (j->hint != MEMBERSHIP_NONE) {
        /* Whoever told us we are out holds the view that left us out. */
        j->target = j->hint;
        j->hint = MEMBERSHIP_NONE;
        j->deadline_ns = deadline_after(now, ctx->config.join_timeout_ns);
        send_join_request(ctx, out, j->target);
        return;
    }
    /* First the last view, then (if that whole pass failed) every node. */
    uint32_t count = j->wide ? ctx->node_count : ctx->view.live;
    if (j->tried >= count) {
        j->tried = 0;
        j->contact = 0;
        j->wide = !j->wide;
        j->deadline_ns = deadline_after(now, ctx->config.join_timeout_ns);
        return;
    }
    for (uint32_t tries = 0; tries < count && tries < 2u; tries++) {
        j->tried++;
        uint32_t pos = j->wide ? j->contact % count
                               : membership_view_select(&ctx->view, j->contact % count);
        j->contact = (j->contact + 1u) % count;
        uint32_t id = id_at(ctx, pos);
        if (id != ctx->self) {
            j->target = id;
            break;
        }
    }
    j->deadline_ns = deadline_after(now, ctx->config.join_timeout_ns);
    if (j->target != MEMBERSHIP_NONE) {
        send_join_request(ctx, out, j->target);
    }
}

static void enter_joining(struct membership *ctx, uint64_t now, struct membership_outbox *out,
                          bool rejoin)
{
    ctx->has_view = false;
    ctx->round.active = false;
    coordinator_reset(ctx);
    ctx->sync.active = false;
    ctx->probe_count = 0;
    ctx->suspect_count = 0;
    ctx->watch_count = 0;
    ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    ctx->search.active = false;
    ctx->sweep.active = false;
    ctx->census.active = false;
    ctx->pending_work = 0;
    ctx->join.active = true;
    ctx->join.rejoin = rejoin;
    /*
     * Where in the list to start: a per-node, per-life offset, so that the
     * nodes of a cut-off slab do not all ask each other first.
     */
    uint32_t live = ctx->view.live > 0 ? ctx->view.live : 1u;
    ctx->join.contact =
        (uint32_t)(mix64(((uint64_t)ctx->self << 32) | ctx->incarnation) % live);
    ctx->join.tried = 0;
    ctx->join.wide = false;
    join_next(ctx, now, out);
}

/* ------------------------------------------------------------------ */
/* State transfer (whole view in chunks)                                */
/* ------------------------------------------------------------------ */

static void sync_request(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_writer w;
    begin_message(ctx, out, &w, MEMBERSHIP_MSG_VIEW_REQUEST);
    membership_put_u32(&w, ctx->sync.next_from);
    membership_outbox_commit(out, ctx->sync.source, &w);
    ctx->sync.messages++;
    ctx->sync.deadline_ns = deadline_after(now, ctx->config.sync_timeout_ns);
}

static void start_sync(struct membership *ctx, uint32_t source, uint64_t now,
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
    begin_message(ctx, out, &w, MEMBERSHIP_MSG_VIEW_CHUNK);
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
        uint32_t id = id_at(ctx, pos);
        count += staged ? 1u : 0u;
        if (staged != (id < ctx->config.member_count)) {
            d ^= membership_id_digest(id);
        }
    }
    *live = count;
    *digest = d;
}

static void start_member_round(struct membership *ctx, uint32_t parent, const uint8_t *payload,
                               size_t length, uint32_t extra_messages, uint64_t now,
                               struct membership_outbox *out);

/* The staged view is complete and checked: make it ours. */
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
            expel(ctx, now, out, s->source, s->epoch);
        }
        return;
    }
    ctx->has_view = true;
    ctx->digest = s->digest;
    ctx->epoch = s->epoch;
    if (was_joining) {
        ctx->stable_epoch = s->stable_epoch;
        history_reset(ctx);
    } else if (s->stable_epoch > ctx->stable_epoch) {
        ctx->stable_epoch = s->stable_epoch;
    }
    membership_reference_adopt(&ctx->ref, &ctx->view, s->ref_count, s->ref_removed, s->ref_root);
    ctx->join.active = false;
    coordinator_reset(ctx);
    ctx->suspect_count = 0;
    installed(ctx, now, out);
    if (was_joining) {
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_JOINED, now);
        if (e != NULL) {
            e->u.joined.epoch = ctx->epoch;
            e->u.joined.root = root_id(ctx);
        }
    }
    struct membership_round *r = &ctx->round;
    if (r->active && r->waiting_sync) {
        if (r->epoch == ctx->epoch) {
            start_member_round(ctx, r->parent, r->change, r->change_length, s->messages, now, out);
        } else {
            r->active = false; /* superseded by the newer view we got */
        }
    }
}

static void handle_view_request(struct membership *ctx, const struct membership_msg *msg,
                                struct membership_outbox *out)
{
    if (!ctx->has_view) {
        ctx->counters.drops_no_view++;
        return;
    }
    send_chunk(ctx, out, msg->header.sender, msg->body.view_request.from_pos);
}

static void handle_view_chunk(struct membership *ctx, const struct membership_msg *msg,
                              uint64_t now, struct membership_outbox *out)
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
            start_member_round(ctx, r->parent, r->change, r->change_length, s->messages, now, out);
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

/* ------------------------------------------------------------------ */
/* Suspects and failure reports (detector side)                         */
/* ------------------------------------------------------------------ */

static int suspect_index(const struct membership *ctx, uint32_t id)
{
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        if (ctx->suspects[i].id == id) {
            return (int)i;
        }
    }
    return -1;
}

static void coord_queue_failure(struct membership *ctx, uint32_t id);
static void coord_begin_episode(struct membership *ctx, uint64_t now);

/* First live member in layout order that is none of the given ids. */
static uint32_t first_live_excluding(const struct membership *ctx, const uint32_t *ids,
                                     uint32_t count)
{
    for (uint32_t k = 0; k < ctx->view.live && k <= count; k++) {
        uint32_t id = id_at(ctx, membership_view_select(&ctx->view, k));
        if (!id_in_list(ids, count, id)) {
            return id;
        }
    }
    return MEMBERSHIP_NONE;
}

/*
 * The search for the next root after a root failure: the first member after
 * the dead root in layout order that answers (the paper's linear scan), but
 * probing MEMBERSHIP_SEARCH_BATCH candidates at a time, so that a long run
 * of dead candidates (a partition cutting off the low ids) costs one probe
 * timeout per batch rather than per node.
 */
static void search_launch(struct membership *ctx, uint32_t base_rank, uint64_t now,
                          struct membership_outbox *out)
{
    struct membership_root_search *s = &ctx->search;
    s->base_rank = base_rank;
    s->count = 0;
    s->answered = 0;
    for (uint32_t k = base_rank; k < ctx->view.live && s->count < MEMBERSHIP_SEARCH_BATCH; k++) {
        uint32_t id = id_at(ctx, membership_view_select(&ctx->view, k));
        s->ids[s->count++] = id;
        if (id != ctx->self) {
            send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU);
        }
    }
    s->deadline_ns = deadline_after(now, ctx->config.probe_timeout_ns);
    s->waiting = true;
}

/* The candidate: first of the batch that answered with all before it silent. */
static uint32_t search_step(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_root_search *s = &ctx->search;
    for (uint32_t i = 0; i < s->count; i++) {
        uint32_t id = s->ids[i];
        if (id == ctx->self || ((s->answered >> i) & 1u)) {
            if (suspect_index(ctx, id) < 0) {
                return id;
            }
            /* It answered, then failed to take the report: look past it. */
            search_launch(ctx, s->base_rank + i + 1u, now, out);
            return MEMBERSHIP_NONE;
        }
        if (now < s->deadline_ns) {
            return MEMBERSHIP_NONE; /* an earlier candidate may still answer */
        }
    }
    search_launch(ctx, s->base_rank + s->count, now, out);
    return MEMBERSHIP_NONE;
}

/*
 * Members of the subtree rooted at the live position pos in the current
 * tree (pos itself excluded), at most capacity of them.  Heap layout: the
 * subtree of rank r holds, at depth d below it, the ranks
 * r*a^d + (a^d - 1)/(a - 1) .. + a^d - 1; runs layout: one rank interval.
 */
static uint32_t subtree_members(const struct membership *ctx, uint32_t pos, uint32_t *ids,
                                uint32_t capacity)
{
    const struct membership_view *v = &ctx->view;
    uint32_t count = 0;
    struct membership_tree_links links;
    if (!membership_tree_locate(v, ctx->layout.kind, ctx->config.radix, pos, &links)) {
        return 0;
    }
    if (ctx->layout.kind == MEMBERSHIP_LAYOUT_TORUS) {
        for (uint32_t k = links.rank + 1u; k < links.rank + links.subtree_size && count < capacity;
             k++) {
            ids[count++] = id_at(ctx, membership_view_select(v, k));
        }
        return count;
    }
    uint64_t live = v->live;
    uint64_t a = ctx->config.radix;
    uint64_t first = links.rank;
    uint64_t width = 1;
    for (uint32_t depth = 0; depth < 64 && count < capacity; depth++) {
        first = first * a + 1u;
        width *= a;
        if (first >= live) {
            break;
        }
        for (uint64_t k = first; k < first + width && k < live && count < capacity; k++) {
            ids[count++] = id_at(ctx, membership_view_select(v, (uint32_t)k));
        }
    }
    return count;
}

static void coord_queue_failure(struct membership *ctx, uint32_t id);

/*
 * A child never acked, so nothing below it was reached either: sweep its
 * subtree (probe every member) in the background and report the silent
 * ones to the root.  A partition is then peeled in a few rounds, while a
 * single dead interior node costs only probes; the load falls on the
 * parents that saw the silence, not on the root.
 */
static void sweep_subtree(struct membership *ctx, uint32_t child, uint64_t now,
                          struct membership_outbox *out)
{
    struct membership_sweep *sw = &ctx->sweep;
    if (!sw->active) {
        sw->count = 0;
        memset(sw->answered, 0, sizeof sw->answered);
    }
    uint32_t first = sw->count;
    sw->count += subtree_members(ctx, pos_of(ctx, child), sw->ids + sw->count,
                                 MEMBERSHIP_SWEEP_MAX - sw->count);
    for (uint32_t i = first; i < sw->count; i++) {
        send_simple(ctx, out, sw->ids[i], MEMBERSHIP_MSG_HOW_ARE_YOU);
    }
    if (sw->count > 0) {
        sw->active = true;
        /* The answers queue up here: the more probes, the longer the wait. */
        sw->deadline_ns = deadline_after(
            now, ctx->config.probe_timeout_ns * (1u + sw->count / 64u));
    }
}

static void sweep_finish(struct membership *ctx, struct membership_outbox *out)
{
    struct membership_sweep *sw = &ctx->sweep;
    sw->active = false;
    uint32_t silent[MEMBERSHIP_SWEEP_MAX];
    uint32_t count = 0;
    for (uint32_t i = 0; i < sw->count; i++) {
        if (((sw->answered[i / 64u] >> (i % 64u)) & 1u) == 0 && is_member(ctx, sw->ids[i])) {
            silent[count++] = sw->ids[i];
        }
    }
    if (count == 0 || !ctx->has_view) {
        return;
    }
    if (is_root(ctx)) {
        for (uint32_t i = 0; i < count; i++) {
            coord_queue_failure(ctx, silent[i]);
        }
        request_work(ctx, WORK_COORD);
        return;
    }
    struct membership_writer w;
    begin_message(ctx, out, &w, MEMBERSHIP_MSG_NODE_FAILURE);
    membership_put_u32(&w, ctx->self);
    membership_put_u32(&w, 0); /* not tracked: the next round would find them again */
    membership_put_u32(&w, UINT32_MAX);
    membership_put_u16(&w, (uint16_t)count);
    membership_put_u16(&w, 0);
    for (uint32_t i = 0; i < count; i++) {
        membership_put_u32(&w, silent[i]);
    }
    membership_outbox_commit(out, root_id(ctx), &w);
}

/*
 * As next root: the detector probed every member from the dead root up to
 * us, and none answered.  Only that stretch: members before the dead root
 * (our view may be newer than the detector's) are not its business.
 */
static void queue_prefix(struct membership *ctx, uint32_t failed_root)
{
    if (failed_root >= ctx->node_count) {
        return;
    }
    uint32_t first = membership_view_rank(&ctx->view, pos_of(ctx, failed_root));
    uint32_t rank = membership_view_rank(&ctx->view, ctx->self_pos);
    for (uint32_t k = first; k < rank; k++) {
        coord_queue_failure(ctx, id_at(ctx, membership_view_select(&ctx->view, k)));
    }
}

static void send_report(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (!ctx->has_view) {
        return;
    }
    uint32_t listed[MEMBERSHIP_SUSPECT_MAX];
    uint32_t listed_count = 0;
    uint32_t all[MEMBERSHIP_SUSPECT_MAX];
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        all[i] = ctx->suspects[i].id;
        if (ctx->suspects[i].state != SUSPECT_ACKED) {
            listed[listed_count++] = ctx->suspects[i].id;
        }
    }
    if (listed_count == 0) {
        ctx->report_deadline_ns = MEMBERSHIP_NEVER;
        return;
    }
    if (ctx->sync.active) {
        /* Report against the view we are about to get, not the old one. */
        ctx->report_deadline_ns = deadline_after(now, ctx->config.report_timeout_ns);
        ctx->report_target = MEMBERSHIP_NONE;
        return;
    }
    uint32_t root = root_id(ctx);
    bool root_suspected = suspect_index(ctx, root) >= 0;
    uint32_t target = root;
    (void)all;
    if (root_suspected) {
        struct membership_root_search *search = &ctx->search;
        if (!search->active || search->root != root) {
            search->active = true;
            search->root = root;
            search_launch(ctx, membership_view_rank(&ctx->view, ctx->root_pos) + 1u, now, out);
        }
        target = search_step(ctx, now, out);
        if (target == MEMBERSHIP_NONE) {
            return; /* probing candidates; the search's deadline brings us back */
        }
    }
    if (target == MEMBERSHIP_NONE) {
        return;
    }
    if (target == ctx->self) {
        /* We are the root, or the next one: take the report ourselves. */
        if (root_suspected && root != ctx->self) {
            ctx->coord.acting = true;
            queue_prefix(ctx, root);
        }
        for (uint32_t i = 0; i < ctx->suspect_count; i++) {
            struct membership_suspect *s = &ctx->suspects[i];
            if (s->state != SUSPECT_ACKED) {
                coord_queue_failure(ctx, s->id);
                s->state = SUSPECT_ACKED;
                s->recheck_ns = deadline_after(now, recheck_delay(ctx));
            }
        }
        ctx->report_deadline_ns = MEMBERSHIP_NEVER;
        coord_begin_episode(ctx, now);
        request_work(ctx, WORK_COORD);
        return;
    }
    uint32_t sequence = ++ctx->report_sequence;
    struct membership_writer w;
    begin_message(ctx, out, &w,
                  root_suspected ? MEMBERSHIP_MSG_ROOT_FAILURE : MEMBERSHIP_MSG_NODE_FAILURE);
    membership_put_u32(&w, ctx->self);
    membership_put_u32(&w, sequence);
    membership_put_u32(&w, root_suspected ? root : UINT32_MAX);
    membership_put_u16(&w, (uint16_t)listed_count);
    membership_put_u16(&w, root_suspected ? MEMBERSHIP_REPORT_PREFIX : 0);
    for (uint32_t i = 0; i < listed_count; i++) {
        membership_put_u32(&w, listed[i]);
    }
    if (membership_outbox_commit(out, target, &w)) {
        ctx->counters.reports_sent++;
    }
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        struct membership_suspect *s = &ctx->suspects[i];
        if (s->state != SUSPECT_ACKED) {
            s->state = SUSPECT_REPORTED;
            s->sequence = sequence;
        }
    }
    ctx->report_target = target;
    /* A candidate root is only asked to answer; the scan should not dawdle. */
    ctx->report_deadline_ns = deadline_after(
        now, root_suspected ? ctx->config.probe_timeout_ns : ctx->config.report_timeout_ns);
}

/* A member looks dead to us: record it, say so, and report it. */
static void add_suspect(struct membership *ctx, uint32_t id, uint8_t cause, uint64_t since_ns,
                        uint64_t now, struct membership_outbox *out)
{
    if (!is_member(ctx, id) || id == ctx->self || suspect_index(ctx, id) >= 0) {
        return;
    }
    if (ctx->suspect_count >= MEMBERSHIP_SUSPECT_MAX) {
        ctx->counters.table_overflows++;
        return;
    }
    struct membership_suspect *s = &ctx->suspects[ctx->suspect_count++];
    s->id = id;
    s->state = SUSPECT_NEW;
    s->sequence = 0;
    s->recheck_ns = MEMBERSHIP_NEVER;
    ctx->counters.suspicions++;
    emit_failure(ctx, id, now >= since_ns ? now - since_ns : 0, cause, now, out);
    request_work(ctx, WORK_REPORT);
}

static void handle_report_ack(struct membership *ctx, const struct membership_msg *msg,
                              uint64_t now)
{
    uint32_t sequence = msg->body.report_ack.sequence;
    bool any_left = false;
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        struct membership_suspect *s = &ctx->suspects[i];
        if (s->state == SUSPECT_REPORTED && s->sequence <= sequence) {
            s->state = SUSPECT_ACKED;
            s->recheck_ns = deadline_after(now, recheck_delay(ctx));
        }
        any_left = any_left || s->state == SUSPECT_REPORTED;
    }
    if (!any_left) {
        ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    }
}

static void start_probe(struct membership *ctx, uint32_t id, uint64_t now,
                        struct membership_outbox *out)
{
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        if (ctx->probes[i].id == id) {
            return;
        }
    }
    if (suspect_index(ctx, id) >= 0) {
        return;
    }
    if (ctx->probe_count >= MEMBERSHIP_PROBE_MAX) {
        ctx->counters.table_overflows++;
        return;
    }
    struct membership_probe *p = &ctx->probes[ctx->probe_count++];
    p->id = id;
    p->started_ns = now;
    p->deadline_ns = deadline_after(now, ctx->config.probe_timeout_ns);
    send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU);
}

static void census_heard(struct membership *ctx, uint32_t sender);

/* Any message is a sign of life of its sender. */
static void note_alive(struct membership *ctx, uint32_t sender, uint64_t now)
{
    for (uint32_t i = 0; i < ctx->watch_count; i++) {
        if (ctx->watch[i].id == sender) {
            ctx->watch[i].last_heard_ns = now;
            ctx->watch[i].suspected = false;
        }
    }
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        if (ctx->probes[i].id == sender) {
            ctx->counters.false_suspicions++;
            ctx->probes[i] = ctx->probes[--ctx->probe_count];
            break;
        }
    }
    census_heard(ctx, sender);
    struct membership_sweep *sw = &ctx->sweep;
    for (uint32_t i = 0; sw->active && i < sw->count; i++) {
        if (sw->ids[i] == sender) {
            sw->answered[i / 64u] |= UINT64_C(1) << (i % 64u);
            break;
        }
    }
    struct membership_root_search *search = &ctx->search;
    for (uint32_t i = 0; search->active && i < search->count; i++) {
        if (search->ids[i] == sender && ((search->answered >> i) & 1u) == 0) {
            search->answered |= UINT32_C(1) << i;
            request_work(ctx, WORK_REPORT);
        }
    }
    struct membership_coordinator *c = &ctx->coord;
    if (c->confirming) {
        for (uint32_t i = 0; i < c->failed_count; i++) {
            if (c->failed[i] == sender) {
                /* Reported dead, yet it answers the root: not a failure. */
                ctx->counters.false_suspicions++;
                c->failed_count--;
                c->failed[i] = c->failed[c->failed_count];
                c->failed_at_us[i] = c->failed_at_us[c->failed_count];
                break;
            }
        }
    }
}

/* ------------------------------------------------------------------ */
/* Coordinator (the root that mints changes)                            */
/* ------------------------------------------------------------------ */

/* Queue times in microseconds (wrapping), enough to tell a stale report. */
static uint32_t coarse_us(uint64_t now)
{
    return (uint32_t)(now / 1000u);
}

static void coord_queue_failure_at(struct membership *ctx, uint32_t id, uint32_t queued_us)
{
    struct membership_coordinator *c = &ctx->coord;
    if (id == ctx->self || id_in_list(c->failed, c->failed_count, id)) {
        return;
    }
    if (c->failed_count >= MEMBERSHIP_QUEUE_FAILED_MAX) {
        ctx->counters.table_overflows++;
        return;
    }
    c->failed_at_us[c->failed_count] = queued_us;
    c->failed[c->failed_count++] = id;
}

static void coord_queue_failure(struct membership *ctx, uint32_t id)
{
    coord_queue_failure_at(ctx, id, coarse_us(ctx->last_now_ns));
}

static void coord_begin_episode(struct membership *ctx, uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    if (c->episode) {
        return;
    }
    c->episode = true;
    c->episode_start_ns = now;
    c->episode_rounds = 0;
    c->episode_messages = 0;
    c->detector_messages = 0;
}

static bool coord_has_work(const struct membership *ctx)
{
    const struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (in_view(ctx, c->failed[i])) {
            return true;
        }
    }
    return c->join_count > 0;
}

/*
 * This side lost the primary component.  The notice goes down the tree of
 * the minority (the view without the failed), so that nodes the root
 * believes on the other side never obey it; then we stop holding a view.
 */
static void go_partitioned(struct membership *ctx, const uint32_t *failed, uint32_t failed_count,
                           uint64_t now, struct membership_outbox *out, const uint8_t *forward,
                           size_t forward_length)
{
    uint64_t epoch = ctx->epoch;
    for (uint32_t i = 0; i < failed_count; i++) {
        view_remove_id(ctx, failed[i]);
    }
    refresh_tree(ctx, now);
    uint8_t payload[MEMBERSHIP_MAX_PAYLOAD];
    size_t length = forward_length; /* 0 with a payload: nothing to forward */
    if (forward == NULL) {
        struct membership_writer w;
        membership_writer_init(&w, payload, sizeof payload);
        struct membership_header h = {
            .type = MEMBERSHIP_MSG_PARTITIONED,
            .flags = MEMBERSHIP_FLAG_HAS_VIEW,
            .sender = ctx->self,
            .incarnation = ctx->incarnation,
            .epoch = ctx->epoch,
            .stable_epoch = ctx->stable_epoch,
        };
        membership_put_header(&w, &h);
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
        send_forward(ctx, out, id_at(ctx, ctx->links.children[i]), forward, length);
    }
    /* The whole last view stays our contact list for rejoining later. */
    for (uint32_t i = 0; i < failed_count; i++) {
        view_add_id(ctx, failed[i]);
    }
    ctx->counters.partitions++;
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_PARTITIONED, now);
    if (e != NULL) {
        e->u.partitioned.epoch = epoch;
        e->u.partitioned.side_live = ctx->view.live;
        e->u.partitioned.ref_live = ctx->ref.count;
    }
    ctx->incarnation++;
    enter_joining(ctx, now, out, true);
}

static void coord_complete(struct membership *ctx, uint64_t now, struct membership_outbox *out);

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
        uint32_t id = id_at(ctx, pos);
        if (id == ctx->self) {
            cs->bits[pos / 64u] |= UINT64_C(1) << (pos % 64u);
            cs->answered_ref += membership_reference_contains(&ctx->ref, &ctx->view, pos) ? 1u : 0u;
            cs->next_rank++;
            continue;
        }
        if (!send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU)) {
            break; /* the outbox is full: the rest on the next tick */
        }
        cs->next_rank++;
        sent++;
    }
    cs->deadline_ns = deadline_after(now, ctx->config.probe_timeout_ns * (1u + sent / 64u));
}

static void census_start(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_census *cs = &ctx->census;
    cs->active = true;
    cs->next_rank = 0;
    cs->answered_ref = 0;
    memset(cs->bits, 0, sizeof(uint64_t) * ctx->view.word_count);
    census_batch(ctx, now, out);
}

static void census_heard(struct membership *ctx, uint32_t sender)
{
    struct membership_census *cs = &ctx->census;
    uint32_t pos = pos_of(ctx, sender);
    if (!cs->active || !membership_view_is_live(&ctx->view, pos) ||
        ((cs->bits[pos / 64u] >> (pos % 64u)) & 1u) != 0) {
        return;
    }
    cs->bits[pos / 64u] |= UINT64_C(1) << (pos % 64u);
    cs->answered_ref += membership_reference_contains(&ctx->ref, &ctx->view, pos) ? 1u : 0u;
    /* Within reach after all: not a failure, whatever was reported. */
    struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed[i] == sender) {
            c->failed_count--;
            c->failed[i] = c->failed[c->failed_count];
            c->failed_at_us[i] = c->failed_at_us[c->failed_count];
            break;
        }
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
        request_work(ctx, WORK_COORD);
        return;
    }
    /*
     * We know exactly who is on our side: tell each of them directly (a
     * batch per tick, see census_notify), not down a tree still full of
     * the unreachable.
     */
    struct membership_writer w;
    membership_writer_init(&w, ctx->round.change, sizeof ctx->round.change);
    struct membership_header h = {
        .type = MEMBERSHIP_MSG_PARTITIONED,
        .flags = MEMBERSHIP_FLAG_HAS_VIEW,
        .sender = ctx->self,
        .incarnation = ctx->incarnation,
        .epoch = ctx->epoch,
        .stable_epoch = ctx->stable_epoch,
    };
    membership_put_header(&w, &h);
    membership_put_u64(&w, ctx->epoch);
    membership_put_u8(&w, MEMBERSHIP_CHANGE_DIRECT);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 0);
    membership_put_u16(&w, 0);
    membership_put_u16(&w, 0);
    membership_put_u32(&w, cs->answered_ref > 0 ? cs->answered_ref : 1u);
    membership_put_u32(&w, ctx->self);
    membership_put_u64(&w, 0);
    ctx->round.change_length = (uint16_t)w.length;
    go_partitioned(ctx, NULL, 0, now, out, ctx->round.change, 0);
    cs->notify = true;
    cs->next_rank = 0;
    cs->deadline_ns = now;
}

/* Sends the direct partition notices, a batch per call, to who answered. */
static void census_notify(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_census *cs = &ctx->census;
    uint32_t sent = 0;
    while (cs->next_rank < ctx->view.live && sent < CENSUS_BATCH) {
        uint32_t pos = membership_view_select(&ctx->view, cs->next_rank);
        uint32_t id = id_at(ctx, pos);
        if (id != ctx->self && ((cs->bits[pos / 64u] >> (pos % 64u)) & 1u) != 0) {
            if (!send_forward(ctx, out, id, ctx->round.change, ctx->round.change_length)) {
                break; /* the outbox is full: the rest on the next call */
            }
            sent++;
        }
        cs->next_rank++;
    }
    cs->notify = cs->next_rank < ctx->view.live;
    cs->deadline_ns = now + 1u;
}

/* Starts the next round if this node is root, idle, and has changes queued. */
static void coord_maybe_start(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    if (!is_root(ctx) || c->active || ctx->census.active) {
        return;
    }
    /* The batch: queued failures still in the view, then joins. */
    uint32_t *failed = c->batch_failed;
    uint32_t *failed_at = c->batch_failed_at;
    uint32_t failed_count = 0;
    uint32_t stale_count = 0;
    uint32_t stale_us = coarse_us(ctx->config.report_timeout_ns);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        uint32_t id = c->failed[i];
        if (!in_view(ctx, id) || id == ctx->self) {
            continue;
        }
        if (failed_count < MEMBERSHIP_MAX_CHANGE_FAILED) {
            failed_at[failed_count] = c->failed_at_us[i];
            failed[failed_count++] = id;
            if ((int32_t)(coarse_us(now) - c->failed_at_us[i]) > (int32_t)stale_us) {
                stale_count++;
            }
        } else {
            c->failed_at_us[kept] = c->failed_at_us[i];
            c->failed[kept++] = id;
        }
    }
    c->failed_count = kept;
    struct membership_join_entry *joins = c->batch_joins;
    uint8_t any_rejoin = 0;
    uint32_t join_count = 0;
    kept = 0;
    for (uint32_t i = 0; i < c->join_count; i++) {
        struct membership_join_entry e = c->joins[i];
        /*
         * A joiner still in the view restarted before anyone noticed: the
         * same change removes its old life and adds the new one.
         */
        bool restart = in_view(ctx, e.id) && !id_in_list(failed, failed_count, e.id);
        uint32_t more_failed = failed_count + (restart ? 1u : 0u);
        bool room = join_count < MEMBERSHIP_MAX_CHANGE_JOINED &&
                    more_failed <= MEMBERSHIP_MAX_CHANGE_FAILED &&
                    MEMBERSHIP_CHANGE_FITS(more_failed, join_count + 1u);
        if (room) {
            if (restart) {
                failed_at[failed_count] = coarse_us(now);
                failed[failed_count++] = e.id;
            }
            joins[join_count++] = e;
            any_rejoin |= (uint8_t)(e.id < ctx->config.member_count);
        } else {
            c->joins[kept++] = e;
        }
    }
    c->join_count = kept;
    if (failed_count == 0 && join_count == 0) {
        return;
    }
    if (c->confirming) {
        /* Waiting for answers from the reported: the batch stays first in line. */
        memmove(c->failed + failed_count, c->failed, sizeof(uint32_t) * c->failed_count);
        memmove(c->failed_at_us + failed_count, c->failed_at_us,
                sizeof(uint32_t) * c->failed_count);
        c->failed_count += failed_count;
        memcpy(c->failed, failed, sizeof(uint32_t) * failed_count);
        memcpy(c->failed_at_us, failed_at, sizeof(uint32_t) * failed_count);
        for (uint32_t i = 0; i < join_count && c->join_count < MEMBERSHIP_QUEUE_JOINED_MAX; i++) {
            c->joins[c->join_count++] = joins[i];
        }
        return;
    }
    if (ctx->config.policy == MEMBERSHIP_POLICY_PRIMARY) {
        /* Reference members the new view would keep (exact). */
        uint32_t ref_kept = membership_reference_kept(&ctx->ref);
        for (uint32_t i = 0; i < failed_count; i++) {
            uint32_t pos = pos_of(ctx, failed[i]);
            if (membership_reference_contains(&ctx->ref, &ctx->view, pos) && ref_kept > 0) {
                ref_kept--;
            }
        }
        for (uint32_t i = 0; i < join_count; i++) {
            uint32_t pos = pos_of(ctx, joins[i].id);
            bool back = !membership_view_is_live(&ctx->view, pos) ||
                        id_in_list(failed, failed_count, joins[i].id);
            if (back && membership_reference_contains(&ctx->ref, &ctx->view, pos)) {
                ref_kept++;
            }
        }
        uint32_t ref_root = ctx->ref.root_pos;
        bool keeps_ref_root = ref_root != MEMBERSHIP_POS_NONE &&
                              membership_view_is_live(&ctx->view, ref_root) &&
                              !id_in_list(failed, failed_count, id_at(ctx, ref_root));
        bool majority = 2u * (uint64_t)ref_kept > ctx->ref.count ||
                        (2u * (uint64_t)ref_kept == ctx->ref.count && keeps_ref_root);
        if (!majority) {
            /*
             * Before giving up the primary component, count who is still
             * within reach now (a partition may have healed since these were
             * reported): the census decides, and tells our side directly.
             */
            memmove(c->failed + failed_count, c->failed, sizeof(uint32_t) * c->failed_count);
            memmove(c->failed_at_us + failed_count, c->failed_at_us,
                    sizeof(uint32_t) * c->failed_count);
            c->failed_count += failed_count;
            memcpy(c->failed, failed, sizeof(uint32_t) * failed_count);
            memcpy(c->failed_at_us, failed_at, sizeof(uint32_t) * failed_count);
            for (uint32_t i = 0; i < join_count && c->join_count < MEMBERSHIP_QUEUE_JOINED_MAX;
                 i++) {
                c->joins[c->join_count++] = joins[i];
            }
            census_start(ctx, now, out);
            return;
        }
    }
    if (stale_count > 0 && !c->confirmed) {
        /*
         * Reports that waited in the queue (a round was in flight) may be
         * out of date: probe the stale ones once, then decide with what
         * stayed silent.  The attempt right after a confirmation goes ahead
         * (its probed batch is first in line), or reports arriving during
         * the wait would keep the root confirming for ever.
         */
        c->confirming = true;
        bool all = stale_count == failed_count;
        uint32_t probes = 0;
        for (uint32_t i = 0; i < failed_count; i++) {
            if (all || (int32_t)(coarse_us(now) - failed_at[i]) > (int32_t)stale_us) {
                probes++;
            }
        }
        /* Answers queue up at this one node: the more probes, the longer the wait. */
        uint64_t wait = ctx->config.probe_timeout_ns * (1u + probes / 64u);
        c->confirm_deadline_ns = deadline_after(now, wait);
        /* The batch goes back to the front of the queue: it is the next one. */
        memmove(c->failed + failed_count, c->failed, sizeof(uint32_t) * c->failed_count);
        memmove(c->failed_at_us + failed_count, c->failed_at_us,
                sizeof(uint32_t) * c->failed_count);
        c->failed_count += failed_count;
        for (uint32_t i = 0; i < failed_count; i++) {
            uint32_t at = failed_at[i];
            if (all || (int32_t)(coarse_us(now) - at) > (int32_t)stale_us) {
                send_simple(ctx, out, failed[i], MEMBERSHIP_MSG_HOW_ARE_YOU);
                at = coarse_us(now + wait); /* probed: fresh once the answers are in */
            }
            c->failed[i] = failed[i];
            c->failed_at_us[i] = at;
        }
        for (uint32_t i = 0; i < join_count && c->join_count < MEMBERSHIP_QUEUE_JOINED_MAX; i++) {
            c->joins[c->join_count++] = joins[i];
        }
        return;
    }
    c->confirmed = false;
    /* Mint the new view and install it here first. */
    c->active = true;
    c->started_ns = now;
    uint32_t old_root = root_id(ctx);
    bool base_stable = ctx->stable_epoch == ctx->epoch;
    uint64_t base = ctx->epoch;
    for (uint32_t i = 0; i < failed_count; i++) {
        if (view_remove_id(ctx, failed[i])) {
            ctx->digest ^= membership_id_digest(failed[i]);
        }
    }
    for (uint32_t i = 0; i < join_count; i++) {
        if (view_add_id(ctx, joins[i].id)) {
            ctx->digest ^= membership_id_digest(joins[i].id);
        }
    }
    ctx->epoch = MEMBERSHIP_EPOCH(MEMBERSHIP_EPOCH_COUNTER(base) + 1u, ctx->self_pos,
                                  ctx->incarnation);
    installed(ctx, now, out);

    uint8_t type;
    if (id_in_list(failed, failed_count, old_root)) {
        type = failed_count > 1 ? MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE : MEMBERSHIP_MSG_ROOT_DEAD;
    } else if (failed_count > 0) {
        type = MEMBERSHIP_MSG_FAILED_NODE;
    } else {
        type = any_rejoin ? MEMBERSHIP_MSG_ALIVE_NODE_JOIN : MEMBERSHIP_MSG_NEW_NODE_JOIN;
    }
    uint8_t payload[MEMBERSHIP_MAX_PAYLOAD];
    struct membership_writer w;
    struct membership_header h = {
        .type = type,
        .flags = MEMBERSHIP_FLAG_HAS_VIEW,
        .sender = ctx->self,
        .incarnation = ctx->incarnation,
        .epoch = ctx->epoch,
        .stable_epoch = ctx->stable_epoch,
    };
    membership_writer_init(&w, payload, sizeof payload);
    membership_put_header(&w, &h);
    membership_put_u64(&w, base);
    membership_put_u8(&w, base_stable ? MEMBERSHIP_CHANGE_BASE_STABLE : 0);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, (uint16_t)failed_count);
    membership_put_u16(&w, (uint16_t)join_count);
    membership_put_u16(&w, 0);
    membership_put_u32(&w, ctx->view.live);
    membership_put_u32(&w, root_id(ctx));
    membership_put_u64(&w, ctx->digest);
    for (uint32_t i = 0; i < failed_count; i++) {
        membership_put_u32(&w, failed[i]);
    }
    for (uint32_t i = 0; i < join_count; i++) {
        membership_put_u32(&w, joins[i].id);
        membership_put_u32(&w, joins[i].incarnation);
    }

    /* The new tree's root starts the dissemination: us, or a joiner before us. */
    c->epoch = ctx->epoch;
    c->child_count = 0;
    bool handover = ctx->root_pos != ctx->self_pos;
    if (handover) {
        c->children[c->child_count++] = root_id(ctx);
    } else {
        for (uint32_t i = 0; i < ctx->links.child_count; i++) {
            c->children[c->child_count++] = id_at(ctx, ctx->links.children[i]);
        }
    }
    c->pending = (uint32_t)((UINT64_C(1) << c->child_count) - 1u);
    c->messages = c->child_count;
    c->reached = handover ? 0 : 1; /* in a handover we are inside the new root's count */
    c->incomplete = false;
    uint64_t wait = (uint64_t)ctx->levels * ctx->config.ack_timeout_ns;
    if (handover) {
        wait += 4u * ctx->config.sync_timeout_ns;
    }
    c->deadline_ns = deadline_after(now, wait);
    c->round_join_count = join_count;
    for (uint32_t i = 0; i < join_count; i++) {
        c->round_joins[i] = joins[i];
        c->recent[c->recent_next] = joins[i];
        c->recent_next = (c->recent_next + 1u) % MEMBERSHIP_RECENT_JOINS;
    }
    c->episode_rounds++;
    ctx->counters.rounds_started++;
    if (!w.overflow) {
        for (uint32_t i = 0; i < c->child_count; i++) {
            send_forward(ctx, out, c->children[i], payload, w.length);
        }
    }
    if (c->child_count == 0) {
        coord_complete(ctx, now, out);
    }
}

/*
 * We are no longer the root (a joiner before us in layout order took over):
 * what we still had queued goes to the new root, joiners by redirection.
 */
static void coord_hand_off(struct membership *ctx, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    uint32_t root = root_id(ctx);
    if (root == MEMBERSHIP_NONE || root == ctx->self) {
        return;
    }
    for (uint32_t i = 0; i < c->join_count; i++) {
        struct membership_writer w;
        begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REDIRECT);
        membership_put_u32(&w, root);
        membership_outbox_commit(out, c->joins[i].id, &w);
    }
    c->join_count = 0;
    uint32_t count = 0;
    uint32_t ids[MEMBERSHIP_MAX_REPORT_IDS];
    for (uint32_t i = 0; i < c->failed_count && count < MEMBERSHIP_MAX_REPORT_IDS; i++) {
        if (in_view(ctx, c->failed[i])) {
            ids[count++] = c->failed[i];
        }
    }
    c->failed_count = 0;
    if (count > 0) {
        struct membership_writer w;
        begin_message(ctx, out, &w, MEMBERSHIP_MSG_NODE_FAILURE);
        membership_put_u32(&w, ctx->self);
        membership_put_u32(&w, 0);
        membership_put_u32(&w, UINT32_MAX);
        membership_put_u16(&w, (uint16_t)count);
        membership_put_u16(&w, 0);
        for (uint32_t i = 0; i < count; i++) {
            membership_put_u32(&w, ids[i]);
        }
        membership_outbox_commit(out, root, &w);
    }
}

static void coord_complete(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    c->active = false;
    bool complete = c->pending == 0 && !c->incomplete;
    uint32_t round_messages = c->messages;
    c->episode_messages += round_messages;
    for (uint32_t i = 0; i < c->child_count; i++) {
        if ((c->pending >> i) & 1u) {
            /* Silent top of the tree: we detected it ourselves. */
            emit_failure(ctx, c->children[i], now - c->started_ns, MEMBERSHIP_CAUSE_ACK, now, out);
            ctx->counters.suspicions++;
            coord_queue_failure(ctx, c->children[i]);
            if (ctx->epoch == c->epoch && ctx->root_pos == ctx->self_pos) {
                sweep_subtree(ctx, c->children[i], now, out);
            }
        }
    }
    for (uint32_t i = 0; i < c->round_join_count; i++) {
        struct membership_join_entry e = c->round_joins[i];
        if (in_view(ctx, e.id)) {
            struct membership_writer w;
            begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_DET_ACK);
            membership_put_u32(&w, e.incarnation);
            membership_outbox_commit(out, e.id, &w);
        }
    }
    c->round_join_count = 0;
    if (complete && ctx->epoch == c->epoch) {
        learn_stable(ctx, c->epoch);
    } else {
        ctx->counters.rounds_incomplete++;
    }
    if (ctx->config.policy == MEMBERSHIP_POLICY_PRIMARY && ctx->epoch == c->epoch) {
        /*
         * Who acknowledged tells us which side we are on: a round that
         * reaches no majority of the reference, twice running (the second
         * round already routes around whoever failed in the first), means
         * this side lost the primary component however many members its
         * view still lists.
         */
        if (2u * (uint64_t)c->reached <= ctx->ref.count) {
            c->low_reach_rounds++;
        } else {
            c->low_reach_rounds = 0;
        }
        if (c->low_reach_rounds >= 2 && !ctx->census.active) {
            census_start(ctx, now, out); /* the verdict waits for the census */
            return;
        }
    }
    if (!is_root(ctx)) {
        coord_hand_off(ctx, out);
    } else if (coord_has_work(ctx)) {
        request_work(ctx, WORK_COORD); /* the episode goes on with another round */
        return;
    }
    if (complete && c->episode && ctx->has_view) {
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_STABLE, now);
        if (e != NULL) {
            e->u.stable.epoch = ctx->epoch;
            e->u.stable.ts_ns = now - c->episode_start_ns;
            e->u.stable.messages = round_messages;
            e->u.stable.episode_messages = c->episode_messages;
            e->u.stable.detector_messages = c->detector_messages;
            e->u.stable.rounds = c->episode_rounds;
            e->u.stable.live = ctx->view.live;
            e->u.stable.levels = ctx->levels;
        }
        c->episode = false;
    }
}

/* NODE_FAILURE / ROOT_FAILURE from a member holding our view. */
static void handle_report(struct membership *ctx, const struct membership_msg *msg,
                          const uint8_t *payload, size_t length, uint64_t now,
                          struct membership_outbox *out)
{
    const struct membership_body_report *r = &msg->body.report;
    uint32_t ids[MEMBERSHIP_MAX_REPORT_IDS + 1];
    uint32_t count = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        ids[count++] = membership_msg_report_id(msg, i);
    }
    if (r->failed_root != UINT32_MAX && !id_in_list(ids, count, r->failed_root)) {
        ids[count++] = r->failed_root;
    }
    uint32_t root = root_id(ctx);
    uint32_t queued_before = ctx->coord.failed_count;
    if (!is_root(ctx)) {
        bool about_root = msg->header.type == MEMBERSHIP_MSG_ROOT_FAILURE || id_in_list(ids, count, root);
        bool prefix = (r->flags & MEMBERSHIP_REPORT_PREFIX) != 0;
        uint32_t target = about_root ? (prefix ? ctx->self : first_live_excluding(ctx, ids, count))
                                     : root;
        if (target == ctx->self && about_root) {
            ctx->coord.acting = true; /* next in line: take over */
            if (prefix) {
                queue_prefix(ctx, r->failed_root); /* the detector probed them: silent */
            }
        } else {
            if (target != MEMBERSHIP_NONE && target != msg->header.sender) {
                send_forward(ctx, out, target, payload, length);
            } else {
                ctx->counters.drops_unexpected++;
            }
            return;
        }
    }
    if (r->detector != ctx->self && r->sequence != 0) {
        struct membership_writer w;
        begin_message(ctx, out, &w, MEMBERSHIP_MSG_FAILURE_DET_ACK);
        membership_put_u32(&w, r->sequence);
        membership_outbox_commit(out, r->detector, &w);
    }
    bool any_new = ctx->coord.failed_count > queued_before;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = ids[i];
        if (id != ctx->self && in_view(ctx, id) &&
            !id_in_list(ctx->coord.failed, ctx->coord.failed_count, id)) {
            coord_queue_failure(ctx, id);
            any_new = true;
        }
    }
    if (any_new) {
        coord_begin_episode(ctx, now);
    }
    if (ctx->coord.episode) {
        ctx->coord.detector_messages += 2; /* the report and its ack */
    }
    request_work(ctx, WORK_COORD);
}

/* NEW_NODE / NODE_ALIVE from a node outside the view (or restarted in it). */
static void handle_join_request(struct membership *ctx, const struct membership_msg *msg,
                                uint64_t now, struct membership_outbox *out)
{
    if (msg->body.join.config_digest != ctx->config_digest) {
        ctx->counters.drops_config++;
        return;
    }
    if (!ctx->has_view) {
        /* No view here either: say so, so that the joiner moves on at once. */
        struct membership_writer w;
        begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REDIRECT);
        membership_put_u32(&w, MEMBERSHIP_NONE);
        membership_outbox_commit(out, msg->header.sender, &w);
        return;
    }
    uint32_t joiner = msg->header.sender;
    uint32_t incarnation = msg->header.incarnation;
    if (!is_root(ctx) && joiner == root_id(ctx)) {
        /*
         * Our root asks to join: it may have restarted and lost everything
         * (then it is no root any more), or this is an old request that was
         * still on its way when it got in.  Ask it: an answer without a view
         * (or none) makes it a suspect, see receive_message.
         */
        if (ctx->root_check == MEMBERSHIP_NONE) {
            ctx->root_check = joiner;
            start_probe(ctx, joiner, now, out);
        }
        return;
    }
    if (!is_root(ctx)) {
        struct membership_writer w;
        begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REDIRECT);
        membership_put_u32(&w, root_id(ctx));
        membership_outbox_commit(out, joiner, &w);
        return;
    }
    struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->join_count; i++) {
        if (c->joins[i].id == joiner) {
            c->joins[i].incarnation = incarnation; /* the latest life wins */
            return;
        }
    }
    for (uint32_t i = 0; c->active && i < c->round_join_count; i++) {
        if (c->round_joins[i].id == joiner && c->round_joins[i].incarnation == incarnation) {
            return; /* being added right now */
        }
    }
    if (in_view(ctx, joiner)) {
        for (uint32_t i = 0; i < MEMBERSHIP_RECENT_JOINS; i++) {
            if (c->recent[i].id == joiner && c->recent[i].incarnation == incarnation &&
                incarnation != 0) {
                /* Already in: the joiner missed its welcome. */
                struct membership_writer w;
                begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_DET_ACK);
                membership_put_u32(&w, incarnation);
                membership_outbox_commit(out, joiner, &w);
                return;
            }
        }
        /* Restarted before anyone noticed: the round removes and re-adds it. */
    }
    if (c->join_count >= MEMBERSHIP_QUEUE_JOINED_MAX) {
        ctx->counters.table_overflows++;
        return;
    }
    c->joins[c->join_count].id = joiner;
    c->joins[c->join_count].incarnation = incarnation;
    c->join_count++;
    coord_begin_episode(ctx, now);
    request_work(ctx, WORK_COORD);
}

/* ------------------------------------------------------------------ */
/* Rounds (dissemination down the new tree, acks up)                    */
/* ------------------------------------------------------------------ */

static uint8_t ack_type_for(uint8_t change_type)
{
    return (change_type == MEMBERSHIP_MSG_NEW_NODE_JOIN ||
            change_type == MEMBERSHIP_MSG_ALIVE_NODE_JOIN)
               ? MEMBERSHIP_MSG_JOIN_ACK
               : MEMBERSHIP_MSG_FAILURE_ACK;
}

static void finish_member_round(struct membership *ctx, struct membership_outbox *out)
{
    struct membership_round *r = &ctx->round;
    struct membership_writer w;
    begin_message(ctx, out, &w, r->ack_type);
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

static void start_member_round(struct membership *ctx, uint32_t parent, const uint8_t *payload,
                               size_t length, uint32_t extra_messages, uint64_t now,
                               struct membership_outbox *out)
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
    r->child_count = 0;
    for (uint32_t i = 0; i < ctx->links.child_count; i++) {
        /*
         * In a handover (the new root is a joiner) the coordinator that sent
         * us the change may be one of our children: it gets the change like
         * any child and forwards it to its own subtree.
         */
        uint32_t child = id_at(ctx, ctx->links.children[i]);
        r->children[r->child_count++] = child;
        send_forward(ctx, out, child, r->change, r->change_length);
        r->messages++;
    }
    r->pending = (uint32_t)((UINT64_C(1) << r->child_count) - 1u);
    if (r->child_count == 0) {
        finish_member_round(ctx, out);
        return;
    }
    uint64_t levels_below = ctx->links.subtree_levels > 0 ? ctx->links.subtree_levels - 1u : 0;
    r->deadline_ns = deadline_after(now, levels_below * ctx->config.ack_timeout_ns);
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
    r->child_count = 0;
    r->pending = 0;
    r->deadline_ns = deadline_after(now, (uint64_t)(ctx->levels + 1u) * ctx->config.ack_timeout_ns +
                                             4u * ctx->config.sync_timeout_ns);
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
        ref_to_current(ctx);
    }
    uint64_t digest = ctx->digest;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        uint32_t id = membership_msg_failed_id(msg, i);
        if (view_remove_id(ctx, id)) {
            removed[removed_count++] = id;
            digest ^= membership_id_digest(id);
        }
    }
    for (uint32_t i = 0; i < c->joined_count; i++) {
        uint32_t id;
        uint32_t inc;
        membership_msg_joined(msg, i, &id, &inc);
        if (view_add_id(ctx, id)) {
            added[added_count++] = id;
            digest ^= membership_id_digest(id);
        }
    }
    uint32_t root_pos = membership_tree_root(&ctx->view);
    bool ok = ctx->view.live == c->live_after && digest == c->digest_after &&
              root_pos != MEMBERSHIP_POS_NONE && id_at(ctx, root_pos) == c->root_after &&
              membership_view_is_live(&ctx->view, ctx->self_pos);
    if (!ok) {
        for (uint32_t i = 0; i < added_count; i++) {
            view_remove_id(ctx, added[i]);
        }
        for (uint32_t i = 0; i < removed_count; i++) {
            view_add_id(ctx, removed[i]);
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

static bool change_removes(const struct membership_msg *msg, uint32_t id)
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

static void handle_change(struct membership *ctx, const struct membership_msg *msg,
                          const uint8_t *payload, size_t length, uint64_t now,
                          struct membership_outbox *out)
{
    const struct membership_header *h = &msg->header;
    if (!ctx->has_view) {
        if (!ctx->join.active || !change_lists_joiner(msg, ctx->self, ctx->incarnation)) {
            ctx->counters.drops_no_view++;
            return;
        }
        round_wait_sync(ctx, h->sender, h->epoch, payload, length, now);
        start_sync(ctx, h->sender, now, out);
        return;
    }
    if (h->epoch == ctx->epoch) {
        /* Already installed (we synced it, or minted it and hand over). */
        if ((ctx->round.active && ctx->round.epoch == h->epoch) ||
            ctx->round.done_epoch == h->epoch) {
            ctx->counters.drops_unexpected++;
            return;
        }
        start_member_round(ctx, h->sender, payload, length, 0, now, out);
        return;
    }
    if (h->epoch < ctx->epoch) {
        ctx->counters.drops_stale++;
        return;
    }
    if (msg->body.change.base_epoch == ctx->epoch) {
        if (change_removes(msg, ctx->self) && !change_readds(msg, ctx->self)) {
            /* We were declared dead: this view is not ours. */
            expel(ctx, now, out, h->sender, h->epoch);
            return;
        }
        if (apply_change(ctx, msg)) {
            coordinator_reset(ctx);
            installed(ctx, now, out);
            start_member_round(ctx, h->sender, payload, length, 0, now, out);
            return;
        }
    }
    /* We missed something: fetch the whole view, then take part. */
    round_wait_sync(ctx, h->sender, h->epoch, payload, length, now);
    start_sync(ctx, h->sender, now, out);
}

static void handle_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                       struct membership_outbox *out)
{
    uint32_t sender = msg->header.sender;
    uint64_t epoch = msg->body.ack.epoch;
    struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; c->active && c->epoch == epoch && i < c->child_count; i++) {
        if (c->children[i] == sender && ((c->pending >> i) & 1u)) {
            c->pending &= ~(UINT32_C(1) << i);
            c->messages += msg->body.ack.messages;
            c->reached += msg->body.ack.reached;
            c->incomplete = c->incomplete || (msg->body.ack.flags & MEMBERSHIP_ACK_INCOMPLETE);
            if (c->pending == 0) {
                coord_complete(ctx, now, out);
            }
            return;
        }
    }
    struct membership_round *r = &ctx->round;
    for (uint32_t i = 0; r->active && !r->waiting_sync && r->epoch == epoch && i < r->child_count;
         i++) {
        if (r->children[i] == sender && ((r->pending >> i) & 1u)) {
            r->pending &= ~(UINT32_C(1) << i);
            r->messages += msg->body.ack.messages;
            r->reached += msg->body.ack.reached;
            r->incomplete = r->incomplete || (msg->body.ack.flags & MEMBERSHIP_ACK_INCOMPLETE);
            if (r->pending == 0) {
                finish_member_round(ctx, out);
            }
            return;
        }
    }
    ctx->counters.drops_unexpected++;
}

/* PARTITIONED from our side's root: obey unless we are among the lost. */
static void handle_partitioned(struct membership *ctx, const struct membership_msg *msg,
                               const uint8_t *payload, size_t length, uint64_t now,
                               struct membership_outbox *out)
{
    const struct membership_body_change *c = &msg->body.change;
    if (c->base_epoch != ctx->epoch || change_removes(msg, ctx->self)) {
        ctx->counters.drops_unexpected++;
        return;
    }
    uint32_t failed[MEMBERSHIP_MAX_CHANGE_FAILED];
    for (uint32_t i = 0; i < c->failed_count; i++) {
        failed[i] = membership_msg_failed_id(msg, i);
    }
    bool direct = (c->flags & MEMBERSHIP_CHANGE_DIRECT) != 0;
    go_partitioned(ctx, failed, c->failed_count, now, out, payload, direct ? 0 : length);
}

/* ------------------------------------------------------------------ */
/* Joiner side                                                          */
/* ------------------------------------------------------------------ */

static void handle_redirect(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                            struct membership_outbox *out)
{
    struct membership_joiner *j = &ctx->join;
    uint32_t root = msg->body.redirect.root;
    bool handed_off = root != MEMBERSHIP_NONE && msg->header.sender == j->target && j->redirected;
    if (!j->active || ctx->has_view || ctx->sync.active || msg->header.sender != j->target) {
        ctx->counters.drops_unexpected++;
        return;
    }
    if (handed_off && root != ctx->self && root != msg->header.sender) {
        /* The root we asked handed its queue to a new root: ask that one. */
        j->target = root;
        j->deadline_ns = deadline_after(now, ctx->config.join_timeout_ns);
        send_join_request(ctx, out, root);
        return;
    }
    if (root == MEMBERSHIP_NONE || j->redirected || root == ctx->self ||
        root == msg->header.sender) {
        /* This contact cannot help: the next one at once, a few per timeout. */
        if (j->quick < 4u) {
            j->quick++;
            join_next(ctx, now, out);
        }
        return;
    }
    j->target = root;
    j->redirected = true;
    j->deadline_ns = deadline_after(now, ctx->config.join_timeout_ns);
    send_join_request(ctx, out, root);
}

static void handle_join_det_ack(struct membership *ctx, const struct membership_msg *msg,
                                uint64_t now, struct membership_outbox *out)
{
    if (msg->body.join_ack.joiner_incarnation != ctx->incarnation) {
        ctx->counters.drops_stale++;
        return;
    }
    if (ctx->has_view) {
        return; /* in already */
    }
    if (ctx->join.active) {
        ctx->join.deadline_ns = deadline_after(now, ctx->config.join_timeout_ns);
        start_sync(ctx, msg->header.sender, now, out);
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
        if (history_has(ctx, h->stable_epoch)) {
            learn_stable(ctx, h->stable_epoch); /* an ancestor of ours completed */
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
        *deadline = deadline_after(*deadline, gap);
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
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        shift_deadline(&ctx->probes[i].deadline_ns, gap);
    }
    shift_deadline(&ctx->report_deadline_ns, gap);
    shift_deadline(&ctx->round.deadline_ns, gap);
    shift_deadline(&ctx->coord.deadline_ns, gap);
    shift_deadline(&ctx->coord.confirm_deadline_ns, gap);
    shift_deadline(&ctx->sync.deadline_ns, gap);
    shift_deadline(&ctx->join.deadline_ns, gap);
    shift_deadline(&ctx->lag_deadline_ns, gap);
    shift_deadline(&ctx->search.deadline_ns, gap);
    shift_deadline(&ctx->sweep.deadline_ns, gap);
    shift_deadline(&ctx->census.deadline_ns, gap);
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
        if ((work & WORK_REPORT) != 0) {
            send_report(ctx, now, out);
        }
        if ((work & WORK_COORD) != 0) {
            coord_maybe_start(ctx, now, out);
        }
    }
}

static void receive_message(struct membership *ctx, const uint8_t *payload, size_t length,
                            uint64_t now_ns, struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    ctx->counters.received++;
    struct membership_msg msg;
    if (membership_decode(payload, length, ctx->node_count, &msg) != MEMBERSHIP_DECODE_OK) {
        ctx->counters.drops_malformed++;
        return;
    }
    const struct membership_header *h = &msg.header;
    if (h->sender == ctx->self) {
        ctx->counters.drops_unexpected++;
        return;
    }
    note_alive(ctx, h->sender, now_ns);
    if (h->sender == ctx->root_check) {
        ctx->root_check = MEMBERSHIP_NONE;
        if ((h->flags & MEMBERSHIP_FLAG_HAS_VIEW) == 0 && h->sender == root_id(ctx)) {
            /* Our root answers without a view: it restarted. */
            add_suspect(ctx, h->sender, MEMBERSHIP_CAUSE_PROBE, now_ns, now_ns, out);
        }
    }
    switch (h->type) {
    case MEMBERSHIP_MSG_HOW_ARE_YOU:
        send_simple(ctx, out, h->sender, MEMBERSHIP_MSG_I_AM_ALIVE);
        return;
    case MEMBERSHIP_MSG_I_AM_ALIVE:
        return;
    case MEMBERSHIP_MSG_NEW_NODE:
    case MEMBERSHIP_MSG_NODE_ALIVE:
        handle_join_request(ctx, &msg, now_ns, out);
        return;
    case MEMBERSHIP_MSG_JOIN_REDIRECT:
        handle_redirect(ctx, &msg, now_ns, out);
        return;
    case MEMBERSHIP_MSG_JOIN_DET_ACK:
        handle_join_det_ack(ctx, &msg, now_ns, out);
        return;
    case MEMBERSHIP_MSG_VIEW_REQUEST:
        handle_view_request(ctx, &msg, out);
        return;
    case MEMBERSHIP_MSG_VIEW_CHUNK:
        handle_view_chunk(ctx, &msg, now_ns, out);
        return;
    case MEMBERSHIP_MSG_FAILURE_DET_ACK:
        handle_report_ack(ctx, &msg, now_ns);
        return;
    default:
        break;
    }
    if (!ctx->has_view) {
        if (membership_msg_is_change(h->type)) {
            handle_change(ctx, &msg, payload, length, now_ns, out);
            return;
        }
        ctx->counters.drops_no_view++;
        if (ctx->join.active && (h->flags & MEMBERSHIP_FLAG_HAS_VIEW) != 0 &&
            h->sender != ctx->join.target && ctx->join.hint == MEMBERSHIP_NONE) {
            /* A view holder within reach: ask it next. */
            ctx->join.hint = h->sender;
            ctx->join.deadline_ns = now_ns;
        }
        return;
    }
    if ((h->flags & MEMBERSHIP_FLAG_HAS_VIEW) == 0) {
        ctx->counters.drops_no_view++;
        return;
    }
    switch (compare_key(ctx, &msg)) {
    case KEY_STALE:
        ctx->counters.drops_stale++;
        if (h->type != MEMBERSHIP_MSG_VIEW_NOTICE) {
            send_notice(ctx, out, h->sender, h->epoch);
        }
        return;
    case KEY_DEAD_BRANCH:
        expel(ctx, now_ns, out, h->sender, 0);
        return;
    case KEY_BEHIND:
        if (membership_msg_is_change(h->type)) {
            handle_change(ctx, &msg, payload, length, now_ns, out);
        } else if (h->epoch > ctx->lag_epoch) {
            /*
             * Someone is ahead.  The change is probably on its way down the
             * tree to us: give it one level's time before fetching the view.
             */
            if (ctx->lag_deadline_ns == MEMBERSHIP_NEVER) {
                ctx->lag_deadline_ns = deadline_after(now_ns, ctx->config.ack_timeout_ns);
            }
            ctx->lag_epoch = h->epoch;
            ctx->lag_source = h->sender;
        }
        return;
    case KEY_SAME:
        learn_stable(ctx, h->stable_epoch);
        break;
    }
    switch (h->type) {
    case MEMBERSHIP_MSG_NODE_FAILURE:
    case MEMBERSHIP_MSG_ROOT_FAILURE:
        handle_report(ctx, &msg, payload, length, now_ns, out);
        return;
    case MEMBERSHIP_MSG_FAILED_NODE:
    case MEMBERSHIP_MSG_ROOT_DEAD:
    case MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE:
    case MEMBERSHIP_MSG_NEW_NODE_JOIN:
    case MEMBERSHIP_MSG_ALIVE_NODE_JOIN:
        handle_change(ctx, &msg, payload, length, now_ns, out);
        return;
    case MEMBERSHIP_MSG_FAILURE_ACK:
    case MEMBERSHIP_MSG_JOIN_ACK:
        handle_ack(ctx, &msg, now_ns, out);
        return;
    case MEMBERSHIP_MSG_PARTITIONED:
        handle_partitioned(ctx, &msg, payload, length, now_ns, out);
        return;
    default:
        return; /* HEARTBEAT, VIEW_NOTICE: the header said it all */
    }
}

static void tick_heartbeats(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (!ctx->has_view || ctx->config.heartbeat_ns == 0) {
        return;
    }
    if (now >= ctx->next_heartbeat_ns) {
        for (uint32_t i = 0; i < ctx->watch_count; i++) {
            send_simple(ctx, out, ctx->watch[i].id, MEMBERSHIP_MSG_HEARTBEAT);
        }
        /*
         * Torus neighbours outside our view hear from us too, more slowly:
         * that is how views that went apart (a healed partition) meet again.
         */
        if ((ctx->heartbeat_count++ % 4u) == 0) {
            for (uint32_t i = 0; i < ctx->neighbour_count; i++) {
                if (!in_view(ctx, ctx->neighbours[i])) {
                    send_simple(ctx, out, ctx->neighbours[i], MEMBERSHIP_MSG_HEARTBEAT);
                }
            }
        }
        ctx->next_heartbeat_ns = deadline_after(now, ctx->config.heartbeat_ns);
    }
    for (uint32_t i = 0; i < ctx->watch_count && ctx->has_view; i++) {
        struct membership_watch *w = &ctx->watch[i];
        if (!w->suspected && now - w->last_heard_ns > ctx->config.heartbeat_timeout_ns) {
            w->suspected = true;
            add_suspect(ctx, w->id, MEMBERSHIP_CAUSE_HEARTBEAT, w->last_heard_ns, now, out);
        }
    }
}

static void tick_detector(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    for (uint32_t i = 0; i < ctx->probe_count && ctx->has_view;) {
        struct membership_probe p = ctx->probes[i];
        if (p.deadline_ns <= now) {
            ctx->probes[i] = ctx->probes[--ctx->probe_count];
            add_suspect(ctx, p.id, MEMBERSHIP_CAUSE_PROBE, p.started_ns, now, out);
            continue;
        }
        i++;
    }
    if (!ctx->has_view) {
        return;
    }
    if (ctx->report_deadline_ns <= now && !ctx->sync.active) {
        ctx->report_deadline_ns = MEMBERSHIP_NEVER;
        ctx->counters.report_timeouts++;
        uint32_t target = ctx->report_target;
        bool outstanding = false;
        for (uint32_t i = 0; i < ctx->suspect_count; i++) {
            outstanding = outstanding || ctx->suspects[i].state == SUSPECT_REPORTED;
        }
        if (outstanding && target != MEMBERSHIP_NONE) {
            /* The root (or next root) never acknowledged: suspect it too. */
            add_suspect(ctx, target, MEMBERSHIP_CAUSE_REPORT,
                        now - ctx->config.report_timeout_ns, now, out);
        }
        request_work(ctx, WORK_REPORT);
    }
    if (ctx->sweep.active && ctx->sweep.deadline_ns <= now) {
        sweep_finish(ctx, out);
    }
    if (ctx->search.active && ctx->search.waiting && ctx->search.deadline_ns <= now) {
        ctx->search.waiting = false;
        request_work(ctx, WORK_REPORT);
    }
    bool recheck = false;
    for (uint32_t i = 0; i < ctx->suspect_count && ctx->has_view; i++) {
        struct membership_suspect *s = &ctx->suspects[i];
        if (s->state == SUSPECT_ACKED && s->recheck_ns <= now) {
            s->state = SUSPECT_NEW;
            recheck = true;
        }
    }
    if (recheck) {
        request_work(ctx, WORK_REPORT);
    }
}

static void tick_rounds(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_round *r = &ctx->round;
    if (r->active && r->deadline_ns <= now) {
        if (r->waiting_sync) {
            r->active = false; /* never got the view: the parent will report us */
        } else {
            for (uint32_t i = 0; i < r->child_count; i++) {
                if ((r->pending >> i) & 1u) {
                    sweep_subtree(ctx, r->children[i], now, out);
                    add_suspect(ctx, r->children[i], MEMBERSHIP_CAUSE_ACK, r->deadline_ns, now,
                                out);
                }
            }
            r->incomplete = true;
            if (ctx->has_view && r->active) {
                finish_member_round(ctx, out);
            }
        }
    }
    struct membership_coordinator *c = &ctx->coord;
    if (c->active && c->deadline_ns <= now) {
        coord_complete(ctx, now, out);
    }
    if (ctx->census.active && ctx->census.deadline_ns <= now) {
        if (ctx->census.next_rank < ctx->view.live) {
            census_batch(ctx, now, out);
        } else {
            census_finish(ctx, now, out);
            return;
        }
    }
    if (c->confirming && c->confirm_deadline_ns <= now) {
        c->confirming = false;
        c->confirmed = true; /* the next attempt decides for good */
        request_work(ctx, WORK_COORD);
    }
}

static void tick_transfers(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (ctx->census.notify && ctx->census.deadline_ns <= now) {
        census_notify(ctx, now, out);
    }
    struct membership_sync *s = &ctx->sync;
    if (ctx->lag_deadline_ns <= now) {
        ctx->lag_deadline_ns = MEMBERSHIP_NEVER;
        if (ctx->has_view && ctx->epoch < ctx->lag_epoch) {
            start_sync(ctx, ctx->lag_source, now, out);
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
    struct membership_joiner *j = &ctx->join;
    if (j->active && !ctx->has_view && j->deadline_ns <= now && !s->active) {
        j->quick = 0;
        join_next(ctx, now, out);
    }
}

void membership_receive(struct membership *ctx, const uint8_t *payload, size_t length,
                        uint64_t now_ns, struct membership_outbox *out)
{
    receive_message(ctx, payload, length, now_ns, out);
    run_pending(ctx, now_ns, out);
}

void membership_tick(struct membership *ctx, uint64_t now_ns, struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    tick_heartbeats(ctx, now_ns, out);
    tick_detector(ctx, now_ns, out);
    tick_rounds(ctx, now_ns, out);
    tick_transfers(ctx, now_ns, out);
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
                    d = min_u64(d, deadline_after(ctx->watch[i].last_heard_ns,
                                                  ctx->config.heartbeat_timeout_ns + 1u));
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
        d = min_u64(d, ctx->round.deadline_ns);
    }
    if (ctx->coord.active) {
        d = min_u64(d, ctx->coord.deadline_ns);
    }
    if (ctx->coord.confirming) {
        d = min_u64(d, ctx->coord.confirm_deadline_ns);
    }
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
    return d;
}

void membership_link_event(struct membership *ctx, uint32_t neighbour, bool up, uint64_t now_ns,
                           struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    if (up) {
        if (ctx->join.active && !ctx->has_view && !ctx->sync.active &&
            neighbour < ctx->node_count && neighbour != ctx->self) {
            ctx->join.hint = neighbour; /* a way back may have opened */
            ctx->join.deadline_ns = now_ns;
        }
        run_pending(ctx, now_ns, out);
        return;
    }
    if (is_member(ctx, neighbour) && neighbour != ctx->self) {
        start_probe(ctx, neighbour, now_ns, out);
    }
    run_pending(ctx, now_ns, out);
}

bool membership_suspect(struct membership *ctx, uint32_t node, uint64_t now_ns,
                        struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    if (!is_member(ctx, node) || node == ctx->self) {
        return false;
    }
    start_probe(ctx, node, now_ns, out);
    run_pending(ctx, now_ns, out);
    return true;
}

void membership_start_join(struct membership *ctx, uint64_t now_ns, struct membership_outbox *out)
{
    note_time(ctx, now_ns);
    bool rejoin = ctx->self < ctx->config.member_count || ctx->has_view;
    enter_joining(ctx, now_ns, out, rejoin);
    run_pending(ctx, now_ns, out);
}

/* ------------------------------------------------------------------ */
/* Initialisation and queries                                           */
/* ------------------------------------------------------------------ */

static uint32_t fnv_add(uint32_t h, uint32_t value)
{
    for (unsigned i = 0; i < 4; i++) {
        h ^= (value >> (8u * i)) & 0xffu;
        h *= 16777619u;
    }
    return h;
}

void membership_config_defaults(struct membership_config *config)
{
    memset(config, 0, sizeof *config);
    config->radix = CONFIG_TREE_RADIX_DEFAULT;
    config->layout = MEMBERSHIP_LAYOUT_RADIX;
    config->policy = MEMBERSHIP_POLICY_PRIMARY;
    config->watch_torus_neighbours = true;
    membership_config_timeouts_ms(config, 100, 500);
}

void membership_config_timeouts_ms(struct membership_config *config, uint32_t heartbeat_ms,
                                   uint32_t detect_timeout_ms)
{
    uint64_t detect = (uint64_t)detect_timeout_ms * 1000000u;
    config->heartbeat_ns = (uint64_t)heartbeat_ms * 1000000u;
    config->heartbeat_timeout_ns = detect;
    config->probe_timeout_ns = detect;
    config->ack_timeout_ns = detect;
    config->report_timeout_ns = 2u * detect;
    config->join_timeout_ns = 4u * detect;
    config->sync_timeout_ns = detect;
}

const char *membership_init_status_text(enum membership_init_status status)
{
    switch (status) {
    case MEMBERSHIP_INIT_OK:
        return "ok";
    case MEMBERSHIP_INIT_BAD_NODE:
        return "node id is not below the node count";
    case MEMBERSHIP_INIT_BAD_COUNT:
        return "member count above the node count (or node count above CONFIG_MAX_NODES)";
    case MEMBERSHIP_INIT_BAD_RADIX:
        return "radix is not a power of two in 2..16";
    case MEMBERSHIP_INIT_BAD_LAYOUT:
        return "unknown tree layout";
    case MEMBERSHIP_INIT_BAD_POLICY:
        return "unknown partition policy";
    case MEMBERSHIP_INIT_BAD_TIMEOUT:
        return "a timeout is zero, or the heartbeat timeout is not above the period";
    default:
        return "?";
    }
}

static enum membership_init_status check_config(const struct membership_config *cfg)
{
    uint32_t n = cfg->geometry.node_count;
    if (n == 0 || n > CONFIG_MAX_NODES || n > (UINT32_C(1) << MEMBERSHIP_EPOCH_POS_BITS) ||
        cfg->member_count > n) {
        return MEMBERSHIP_INIT_BAD_COUNT;
    }
    if (cfg->node_id >= n) {
        return MEMBERSHIP_INIT_BAD_NODE;
    }
    if (!membership_tree_radix_valid(cfg->radix)) {
        return MEMBERSHIP_INIT_BAD_RADIX;
    }
    if (cfg->layout != MEMBERSHIP_LAYOUT_RADIX && cfg->layout != MEMBERSHIP_LAYOUT_TORUS) {
        return MEMBERSHIP_INIT_BAD_LAYOUT;
    }
    if (cfg->policy != MEMBERSHIP_POLICY_PRIMARY && cfg->policy != MEMBERSHIP_POLICY_EVERY_SIDE) {
        return MEMBERSHIP_INIT_BAD_POLICY;
    }
    if (cfg->probe_timeout_ns == 0 || cfg->ack_timeout_ns == 0 || cfg->report_timeout_ns == 0 ||
        cfg->join_timeout_ns == 0 || cfg->sync_timeout_ns == 0 ||
        (cfg->heartbeat_ns != 0 && cfg->heartbeat_timeout_ns <= cfg->heartbeat_ns)) {
        return MEMBERSHIP_INIT_BAD_TIMEOUT;
    }
    return MEMBERSHIP_INIT_OK;
}

enum membership_init_status membership_init(struct membership *ctx,
                                            const struct membership_config *config)
{
    enum membership_init_status status = check_config(config);
    if (status != MEMBERSHIP_INIT_OK) {
        return status;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->config = *config;
    ctx->layout.kind = config->layout;
    ctx->layout.geometry = config->geometry;
    ctx->node_count = config->geometry.node_count;
    ctx->self = config->node_id;
    ctx->self_pos = pos_of(ctx, ctx->self);
    ctx->incarnation = config->incarnation;
    uint32_t h = 2166136261u;
    h = fnv_add(h, ctx->node_count);
    h = fnv_add(h, config->radix);
    h = fnv_add(h, (uint32_t)config->layout);
    h = fnv_add(h, config->geometry.dims);
    for (unsigned d = 0; d < config->geometry.dims; d++) {
        h = fnv_add(h, config->geometry.size[d] | (config->geometry.wraps[d] ? 0x80000000u : 0));
    }
    ctx->config_digest = h;

    membership_view_reset(&ctx->view, ctx->node_count);
    if (config->member_count == ctx->node_count || ctx->layout.kind == MEMBERSHIP_LAYOUT_RADIX) {
        /* A prefix of positions: whole words at a time. */
        uint32_t full = config->member_count / 64u;
        memset(ctx->view.words, 0xff, sizeof(uint64_t) * full);
        if ((config->member_count % 64u) != 0) {
            ctx->view.words[full] = (UINT64_C(1) << (config->member_count % 64u)) - 1u;
        }
    } else {
        for (uint32_t id = 0; id < config->member_count; id++) {
            uint32_t pos = pos_of(ctx, id);
            ctx->view.words[pos / 64u] |= UINT64_C(1) << (pos % 64u);
        }
    }
    membership_view_rebuild(&ctx->view);
    ctx->digest = membership_initial_digest(config->member_count);
    ctx->root_pos = membership_tree_root(&ctx->view);
    ctx->epoch = MEMBERSHIP_EPOCH(0, ctx->root_pos == MEMBERSHIP_POS_NONE ? 0 : ctx->root_pos, 0);
    ctx->stable_epoch = ctx->epoch;
    ctx->has_view = in_view(ctx, ctx->self);
    ref_to_current(ctx);
    history_add(ctx, ctx->epoch);
    ctx->neighbour_count = membership_layout_neighbours(&ctx->layout, ctx->self, ctx->neighbours);
    ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    ctx->report_target = MEMBERSHIP_NONE;
    ctx->round.done_epoch = MEMBERSHIP_NEVER;
    for (uint32_t i = 0; i < MEMBERSHIP_NOTICE_CACHE; i++) {
        ctx->notice_sender[i] = MEMBERSHIP_NONE;
    }
    for (uint32_t i = 0; i < MEMBERSHIP_RECENT_JOINS; i++) {
        ctx->coord.recent[i].id = MEMBERSHIP_NONE;
    }
    ctx->last_now_ns = MEMBERSHIP_NEVER;
    ctx->lag_deadline_ns = MEMBERSHIP_NEVER;
    ctx->root_check = MEMBERSHIP_NONE;
    ctx->join.hint = MEMBERSHIP_NONE;
    refresh_tree(ctx, 0);
    return MEMBERSHIP_INIT_OK;
}

bool membership_has_view(const struct membership *ctx)
{
    return ctx->has_view;
}

bool membership_is_member(const struct membership *ctx, uint32_t id)
{
    return is_member(ctx, id);
}

uint64_t membership_epoch(const struct membership *ctx)
{
    return ctx->epoch;
}

uint64_t membership_stable_epoch(const struct membership *ctx)
{
    return ctx->stable_epoch;
}

uint64_t membership_digest(const struct membership *ctx)
{
    return ctx->digest;
}

uint32_t membership_live_count(const struct membership *ctx)
{
    return ctx->has_view ? ctx->view.live : 0;
}

uint32_t membership_root(const struct membership *ctx)
{
    return ctx->has_view ? root_id(ctx) : MEMBERSHIP_NONE;
}

uint32_t membership_incarnation(const struct membership *ctx)
{
    return ctx->incarnation;
}

bool membership_is_joining(const struct membership *ctx)
{
    return ctx->join.active && !ctx->has_view;
}

bool membership_tree_of(const struct membership *ctx, uint32_t *parent, uint32_t *children,
                        uint32_t *child_count, uint32_t *depth)
{
    if (!ctx->has_view) {
        return false;
    }
    *parent = ctx->links.parent == MEMBERSHIP_POS_NONE ? MEMBERSHIP_NONE
                                                       : id_at(ctx, ctx->links.parent);
    for (uint32_t i = 0; i < ctx->links.child_count; i++) {
        children[i] = id_at(ctx, ctx->links.children[i]);
    }
    *child_count = ctx->links.child_count;
    *depth = ctx->links.depth;
    return true;
}

const struct membership_counters *membership_get_counters(const struct membership *ctx)
{
    return &ctx->counters;
}
