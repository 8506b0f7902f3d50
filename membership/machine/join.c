/*
 * Joining and rejoining (see machine.h): a node without a view asks
 * contacts in turn to be let in (NEW_NODE for a spare, NODE_ALIVE for a
 * member's new life); a contact redirects it to the root, which adds it
 * in a round and welcomes it (JOIN_DET_ACK); the view itself then comes
 * by transfer.  Contacts: whoever expelled us first, then the job's seed
 * nodes (issue 16, Phoenix's hubs), then the view holders we heard from
 * while joining (a few, the newest first), then the last view from a
 * per-node offset, then every id.
 *
 * Retries back off: a request that reached a root (or a whole pass of the
 * contacts) that did not get us in doubles the wait before the next
 * attempt, up to 2^JOIN_BACKOFF_MAX join timeouts, plus a jitter seeded by
 * node, life and request, so that joiners turned away together (a healed
 * partition, a mass expulsion) do not come back together and bury the
 * root in requests.  A node expelled soon after getting in, or let in by a
 * view that no longer has it by the time it fetches it, waits before asking
 * again, longer each time, so a member that cannot stay (a tree neighbour
 * it cannot reach) does not flap at full speed.
 */
#include "membership/machine/machine.h"

#define JOIN_BACKOFF_MAX 3u      /* the wait grows to 8 join timeouts, no more */
#define JOIN_SETTLED_TIMEOUTS 4u /* in this long (join timeouts): not a flap */

/* The wait after a request: join timeout x 2^backoff, plus up to half of that. */
static uint64_t join_wait(const struct membership *ctx)
{
    const struct membership_joiner *j = &ctx->join;
    uint32_t shift = j->backoff < JOIN_BACKOFF_MAX ? j->backoff : JOIN_BACKOFF_MAX;
    uint64_t base = ctx->config.join_timeout_ns << shift;
    uint64_t seed = ((uint64_t)ctx->self << 32) ^ ((uint64_t)ctx->incarnation << 12) ^ j->requests;
    return base + membership_mix64(seed) % (base / 2u + 1u);
}

uint64_t membership_join_wait_max_ns(const struct membership_config *config)
{
    uint64_t base = config->join_timeout_ns << JOIN_BACKOFF_MAX;
    return base + base / 2u;
}

static void send_join_request(struct membership *ctx, struct membership_outbox *out, uint32_t dest)
{
    struct membership_writer w;
    machine_begin_message(ctx, out, &w,
                          ctx->join.rejoin ? MEMBERSHIP_MSG_NODE_ALIVE : MEMBERSHIP_MSG_NEW_NODE);
    membership_put_u32(&w, ctx->config_digest);
    membership_put_u8(&w, ctx->join.rejoin ? MEMBERSHIP_JOIN_REJOIN : 0);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 0);
    if (membership_outbox_commit(out, dest, &w)) {
        ctx->counters.joins_sent++;
    }
    ctx->join.requests++;
}

/*
 * Asks the next contact of the list (the last view) in layout order.  After
 * a whole pass without success it pauses (backing off) before the next.
 */
static void join_next(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_joiner *j = &ctx->join;
    j->redirected = false;
    j->reached_root = false;
    j->target = MEMBERSHIP_NONE;
    j->asked_ns = now;
    if (j->hint != MEMBERSHIP_NONE) {
        /* Whoever told us we are out holds the view that left us out. */
        j->target = j->hint;
        j->hint = MEMBERSHIP_NONE;
        j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
        send_join_request(ctx, out, j->target);
        return;
    }
    /* The seeds first, in each pass: they are meant to be up. */
    while (j->seed_next < ctx->config.seed_count) {
        uint32_t seed = ctx->config.seeds[j->seed_next++];
        if (seed != ctx->self) {
            j->target = seed;
            j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
            send_join_request(ctx, out, seed);
            return;
        }
    }
    /* Then whoever we heard from holding a view, the newest first: a live
     * member for sure a moment ago, unlike most of a stale last view. */
    while (j->heard_count > 0) {
        uint32_t heard = j->heard[--j->heard_count];
        if (heard != ctx->self) {
            j->target = heard;
            j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
            send_join_request(ctx, out, heard);
            return;
        }
    }
    /* Then the last view, then (if that whole pass failed) every node. */
    uint32_t count = j->wide ? ctx->node_count : ctx->view.live;
    if (j->tried >= count) {
        j->tried = 0;
        j->contact = 0;
        j->seed_next = 0;
        j->wide = !j->wide;
        j->backoff++;
        j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
        return;
    }
    for (uint32_t tries = 0; tries < count && tries < 2u; tries++) {
        j->tried++;
        uint32_t pos = j->wide ? j->contact % count
                               : membership_view_select(&ctx->view, j->contact % count);
        j->contact = (j->contact + 1u) % count;
        uint32_t id = machine_id_at(ctx, pos);
        if (id != ctx->self) {
            j->target = id;
            break;
        }
    }
    j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
    if (j->target != MEMBERSHIP_NONE) {
        send_join_request(ctx, out, j->target);
    }
}

/* Out of any view: nothing of the last one goes on. */
static void drop_view(struct membership *ctx)
{
    ctx->has_view = false;
    ctx->round.active = false;
    coord_reset(ctx);
    ctx->sync.active = false;
    detector_reset(ctx);
    ctx->census.active = false;
    ctx->pending_work = 0;
}

void join_enter(struct membership *ctx, uint64_t now, struct membership_outbox *out, bool rejoin)
{
    drop_view(ctx);
    ctx->join.active = true;
    ctx->join.rejoin = rejoin;
    /*
     * Where in the list to start: a per-node, per-life offset, so that the
     * nodes of a cut-off slab do not all ask each other first.
     */
    uint32_t live = ctx->view.live > 0 ? ctx->view.live : 1u;
    ctx->join.contact =
        (uint32_t)(membership_mix64(((uint64_t)ctx->self << 32) | ctx->incarnation) % live);
    ctx->join.tried = 0;
    ctx->join.seed_next = 0;
    ctx->join.heard_count = 0;
    ctx->join.wide = false;
    ctx->join.requests = 0;
    uint64_t settled = ctx->config.join_timeout_ns * JOIN_SETTLED_TIMEOUTS;
    uint64_t since = ctx->join.in_since_ns;
    if (since == MEMBERSHIP_NEVER || now < since || now - since >= settled) {
        ctx->join.flaps = 0; /* never joined, or in for a while: a fresh start */
    } else {
        ctx->join.flaps++;
    }
    ctx->join.backoff = ctx->join.flaps > 0 ? ctx->join.flaps - 1u : 0;
    if (ctx->join.flaps == 0) {
        join_next(ctx, now, out);
        return;
    }
    /* Out again soon after getting in: wait (longer each time) before asking. */
    ctx->join.target = MEMBERSHIP_NONE;
    ctx->join.reached_root = false;
    ctx->join.asked_ns = now;
    ctx->join.deadline_ns = machine_deadline_after(now, join_wait(ctx));
}

void join_expel(struct membership *ctx, uint64_t now, struct membership_outbox *out, uint32_t by,
                uint64_t epoch)
{
    if (ctx->leaving && ctx->leaving_model == FAULT_MODEL_LEFT) {
        /* Out as we asked: we left, nobody expelled us. */
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_LEFT, now);
        if (e != NULL) {
            e->u.left.epoch = epoch;
            e->u.left.who = ctx->self;
        }
    } else {
        ctx->counters.expulsions++;
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_EXPELLED, now);
        if (e != NULL) {
            e->u.expelled.epoch = epoch;
            e->u.expelled.by = by;
        }
    }
    ctx->incarnation++; /* a new life: nothing from this one is accepted again */
    ctx->join.hint = by != ctx->self ? by : MEMBERSHIP_NONE;
    if (ctx->leaving) {
        /* We asked to leave (a process fault, a leave): out we stay, until a restart. */
        drop_view(ctx);
        return;
    }
    join_enter(ctx, now, out, true);
}

void join_handle_redirect(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
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
        j->reached_root = true;
        j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
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
    j->reached_root = true;
    j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
    send_join_request(ctx, out, root);
}

void join_handle_det_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                         struct membership_outbox *out)
{
    if (msg->body.join_ack.joiner_incarnation != ctx->incarnation) {
        ctx->counters.drops_stale++;
        return;
    }
    if (ctx->has_view) {
        return; /* in already */
    }
    if (ctx->join.active) {
        ctx->join.deadline_ns = machine_deadline_after(now, ctx->config.join_timeout_ns);
        transfer_start(ctx, msg->header.sender, now, out);
    }
}

/* The join timeout: the next contact (the transfer's own timeout comes first). */
void join_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_joiner *j = &ctx->join;
    if (j->active && !ctx->has_view && j->deadline_ns <= now && !ctx->sync.active) {
        j->quick = 0;
        if (j->reached_root) {
            j->backoff++; /* the root had our request and did not let us in */
        }
        join_next(ctx, now, out);
    }
}

/*
 * A view holder within reach (or a neighbour whose link came up): kept
 * among the few most recent, asked after the seeds, before the last view.
 * The next contact is asked at once unless our request is with a root
 * already (then it waits for the next attempt), and never faster than one
 * contact per join timeout: view holders' heartbeats arrive many times
 * per timeout.
 */
void join_heard(struct membership *ctx, uint32_t id, uint64_t now)
{
    struct membership_joiner *j = &ctx->join;
    if (id == ctx->self || id == j->target || id == j->hint) {
        return;
    }
    uint32_t i = 0;
    while (i < j->heard_count && j->heard[i] != id) {
        i++;
    }
    if (i == j->heard_count && j->heard_count == MEMBERSHIP_JOIN_HEARD_MAX) {
        i = 0; /* full: the oldest goes */
    }
    for (; i + 1u < j->heard_count; i++) {
        j->heard[i] = j->heard[i + 1u]; /* keep the order, this one moves to the end */
    }
    j->heard[i] = id;
    j->heard_count = i + 1u;
    if (j->reached_root) {
        return;
    }
    uint64_t paced = machine_deadline_after(j->asked_ns, ctx->config.join_timeout_ns);
    uint64_t at = paced > now ? paced : now;
    if (at < j->deadline_ns) {
        j->deadline_ns = at;
    }
}

/*
 * Welcomed, but the view we fetched no longer has us: we were added and
 * removed again at once (a tree neighbour that cannot reach us reported
 * us).  Asking again at once would put us back in the same place: like a
 * quick expulsion, it makes us wait, longer each time.
 */
void join_left_out(struct membership *ctx, uint64_t now)
{
    struct membership_joiner *j = &ctx->join;
    j->flaps++;
    j->backoff = j->flaps - 1u;
    j->target = MEMBERSHIP_NONE;
    j->reached_root = false;
    j->asked_ns = now;
    j->deadline_ns = machine_deadline_after(now, join_wait(ctx));
}

/* A root will not let us in (quarantine): say why, and stop asking. */
void join_handle_refused(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                         struct membership_outbox *out)
{
    struct membership_joiner *j = &ctx->join;
    if (!j->active || ctx->has_view) {
        ctx->counters.drops_unexpected++;
        return;
    }
    j->active = false;
    j->refused = true;
    j->deadline_ns = MEMBERSHIP_NEVER;
    ctx->sync.active = false;
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_JOIN_REFUSED, now);
    if (e != NULL) {
        e->u.refused.by = msg->header.sender;
        e->u.refused.reason = msg->body.refused.reason;
    }
}

void join_done(struct membership *ctx, uint64_t now)
{
    ctx->join.active = false;
    ctx->join.backoff = 0;
    ctx->join.in_since_ns = now;
}
