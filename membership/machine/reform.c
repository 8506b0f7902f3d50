/*
 * No view anywhere (issue 20): when every survivor dropped its view (a
 * partition with no majority side, false suspicions under load), nobody
 * holds a view to rejoin, so joining alone never ends.  A node of the last
 * completed view (the reference) that has been without a view for a
 * bounded time (one fully backed-off join wait) re-forms one with the
 * others; under the every-side policy so does any member's new life
 * (rejoining), whose reference may be another side's view (eligible):
 *
 *  - rounds: every join timeout it sends REFORM (its vote) to the lowest
 *    REFORM_SCAN ids of the reference (every-side: of all ids) from its
 *    scan point, and to its
 *    candidate; a re-forming node answers every REFORM with its own vote
 *    (answers are not answered).  A scan that found nobody re-forming
 *    moves on to the next ids, so a dead low range is passed by.  Only
 *    nodes of the same completed view (header's stable epoch) that are
 *    re-forming count for each other.  Traffic: O(REFORM_SCAN) per node
 *    and round, and each candidate hears from its voters;
 *  - votes: each votes for the lowest id it heard re-forming in the round
 *    before (itself included); a vote sticks: to move it elsewhere the
 *    node abstains until REFORM_LEASE_ROUNDS rounds have passed since it
 *    last sent it to its candidate;
 *  - minting: a candidate (voting for itself) that counts a strict majority
 *    of the reference voting for it (its own vote included; the votes of
 *    the current and the previous round, both younger than a lease) mints
 *    a view of itself alone, of an epoch above every one it knows, as a
 *    completed view, and emits `reformed`; under the every-side policy no
 *    majority is needed: the candidate mints once it has voted for itself
 *    for a whole round;
 *  - joining: the others keep their rounds going; the minter, now holding a
 *    view, answers their REFORM as a view holder (I_AM_ALIVE), and any node
 *    that hears a view holder stops re-forming and asks it to be let in
 *    (the usual join: rounds, welcome, transfer).
 *
 * Safety under the primary policy: two candidates of one completed view
 * each need a strict majority of it, so some voter sent its vote to both;
 * it sends another only a lease after the last one, by which time the
 * first candidate has minted (and answers as a view holder) or counts that
 * vote no more.  What this cannot cover: a minter cut off from its voters
 * within the lease after minting; then a second view can be re-formed and
 * the two meet as branches (the newer completed view wins, the other side
 * rejoins), see DESIGN.md.
 */
#include "membership/machine/machine.h"

#include <string.h>

#define REFORM_SCAN 64u         /* reference members asked per round (and our candidate) */
#define REFORM_LEASE_ROUNDS 3u  /* rounds (join timeouts) a vote given sticks */

static bool every_side(const struct membership *ctx)
{
    return ctx->config.policy == MEMBERSHIP_POLICY_EVERY_SIDE;
}

/*
 * A node of the last completed view, out of any view, still trying to get
 * in.  Under every-side also any member's new life (rejoining): after a
 * heal the losing side fetches the winners' view (which becomes its
 * reference, without it) and is expelled by it; if the winners then die,
 * no survivor is in its own reference, and none would re-form.  Every-side
 * counts no majority, so the reference is not needed to mint.
 */
static bool eligible(const struct membership *ctx)
{
    if (ctx->has_view || !ctx->join.active || ctx->join.refused || ctx->leaving) {
        return false;
    }
    if (every_side(ctx) && ctx->join.rejoin) {
        return true;
    }
    return ctx->ref.count > 0 &&
           membership_reference_contains(&ctx->ref, &ctx->view, ctx->self_pos);
}

/* Who a round asks: the reference's ids; under every-side every id (the
 * reference may be another side's view, see eligible). */
static bool to_ask(const struct membership *ctx, uint32_t id)
{
    return id < ctx->node_count &&
           (every_side(ctx) ||
            membership_reference_contains(&ctx->ref, &ctx->view, machine_pos_of(ctx, id)));
}

static bool send_reform(struct membership *ctx, uint64_t now, struct membership_outbox *out,
                        uint32_t dest, uint32_t vote, uint8_t flags)
{
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_REFORM);
    membership_put_u32(&w, vote);
    membership_put_u8(&w, flags);
    membership_put_u8(&w, 0);
    membership_put_u16(&w, 0);
    if (!membership_outbox_commit(out, dest, &w)) {
        return false;
    }
    if (vote == dest) {
        ctx->reform.vote_sent_ns = now; /* it may count this one */
    }
    return true;
}

static void stop(struct membership *ctx)
{
    ctx->reform.active = false;
    ctx->reform.viewless_since_ns = MEMBERSHIP_NEVER;
}

/* The view of this node alone, completed: the others join it. */
static void mint(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_reform *r = &ctx->reform;
    uint64_t from = ctx->stable_epoch;
    uint64_t counter = MEMBERSHIP_EPOCH_COUNTER(ctx->epoch);
    counter = (r->max_counter > counter ? r->max_counter : counter) + 1u;
    membership_view_reset(&ctx->view, ctx->node_count);
    membership_view_add(&ctx->view, ctx->self_pos);
    /* Digest: every id whose membership differs from the initial view's. */
    uint64_t digest = membership_initial_digest(ctx->config.member_count);
    for (uint32_t id = 0; id < ctx->node_count; id++) {
        if ((id == ctx->self) != (id < ctx->config.member_count)) {
            digest ^= membership_id_digest(id);
        }
    }
    ctx->digest = digest;
    ctx->epoch = MEMBERSHIP_EPOCH(counter, ctx->self_pos, ctx->incarnation);
    ctx->stable_epoch = ctx->epoch;
    ctx->root_pos = ctx->self_pos;
    machine_ref_to_current(ctx);
    machine_history_reset(ctx);
    ctx->has_view = true;
    ctx->sync.active = false;
    join_done(ctx, now);
    coord_reset(ctx);
    ctx->suspect_count = 0;
    uint32_t agreed = r->votes;
    stop(ctx);
    ctx->counters.reforms++;
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_REFORMED, now);
    if (e != NULL) {
        e->u.reformed.epoch = ctx->epoch;
        e->u.reformed.members = agreed;
        e->u.reformed.from = from;
    }
    install_view(ctx, now, out);
}

static bool majority(const struct membership *ctx)
{
    return ctx->config.policy == MEMBERSHIP_POLICY_PRIMARY &&
           2u * (uint64_t)ctx->reform.votes > ctx->ref.count;
}

static void count_vote(struct membership *ctx, uint32_t pos)
{
    uint64_t bit = UINT64_C(1) << (pos % 64u);
    if ((ctx->census.bits[pos / 64u] & bit) == 0) {
        ctx->census.bits[pos / 64u] |= bit;
        ctx->reform.votes++;
    }
}

/*
 * This round's REFORMs: the reference's ids from the scan point (REFORM_SCAN
 * of them) and our candidate.  A scan that heard nobody re-forming in the
 * round before moves on (wrapping), so that dead low ids are passed by.
 */
static void send_round(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_reform *r = &ctx->reform;
    bool heard_in_scan = r->heard_lowest >= r->scan_from && r->heard_lowest < r->scan_end;
    if (r->rounds > 1u && !heard_in_scan) {
        r->scan_from = r->scan_end < ctx->node_count ? r->scan_end : 0;
    }
    uint32_t asked = 0;
    bool candidate_asked = false;
    uint32_t id = r->scan_from;
    for (; id < ctx->node_count && asked < REFORM_SCAN; id++) {
        if (id != ctx->self && to_ask(ctx, id)) {
            (void)send_reform(ctx, now, out, id, r->vote, 0);
            candidate_asked = candidate_asked || id == r->vote;
            asked++;
        }
    }
    r->scan_end = id;
    /* Our candidate, even where our (approximate) reference lacks it. */
    if (r->vote != MEMBERSHIP_NONE && r->vote != ctx->self && !candidate_asked) {
        (void)send_reform(ctx, now, out, r->vote, r->vote, 0);
    }
    r->deadline_ns = machine_deadline_after(now, ctx->config.join_timeout_ns);
}

static void begin_round(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_reform *r = &ctx->reform;
    r->rounds++;
    ctx->counters.reforms_started++;
    if (ctx->config.policy == MEMBERSHIP_POLICY_EVERY_SIDE && r->vote == ctx->self &&
        r->rounds > 2u) {
        mint(ctx, now, out); /* the lowest of this side, for a whole round */
        return;
    }
    r->heard_lowest = r->lowest;
    r->lowest = ctx->self;
    uint32_t desired = r->heard_lowest;
    if (r->vote != MEMBERSHIP_NONE && r->vote != desired) {
        r->vote = MEMBERSHIP_NONE; /* abstain until the vote given has run out */
    }
    uint64_t lease = REFORM_LEASE_ROUNDS * ctx->config.join_timeout_ns;
    bool unbound = r->vote_sent_ns == MEMBERSHIP_NEVER || now - r->vote_sent_ns >= lease;
    if (r->vote == MEMBERSHIP_NONE && r->rounds > 1u && unbound) {
        r->vote = desired; /* a round heard: the lowest of it */
    }
    if ((r->rounds % 2u) == 0) {
        /* Votes count for two rounds: a voter's vote reaches us once per
         * round of its own, which need not line up with ours. */
        memset(ctx->census.bits, 0, sizeof(uint64_t) * ctx->view.word_count);
        r->votes = 0;
    }
    if (r->vote == ctx->self) {
        count_vote(ctx, ctx->self_pos);
        if (majority(ctx)) {
            mint(ctx, now, out); /* a completed view of one, or two with us the root */
            return;
        }
    }
    send_round(ctx, now, out);
}

static void activate(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_reform *r = &ctx->reform;
    r->active = true;
    r->vote = MEMBERSHIP_NONE;
    r->vote_sent_ns = MEMBERSHIP_NEVER;
    r->lowest = ctx->self;
    r->heard_lowest = ctx->self;
    r->rounds = 0;
    r->votes = 0;
    r->scan_from = 0;
    r->scan_end = 0;
    r->max_counter = 0;
    memset(ctx->census.bits, 0, sizeof(uint64_t) * ctx->view.word_count);
    begin_round(ctx, now, out);
}

void reform_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_reform *r = &ctx->reform;
    if (!eligible(ctx)) {
        stop(ctx);
        return;
    }
    if (r->viewless_since_ns == MEMBERSHIP_NEVER) {
        r->viewless_since_ns = now;
    }
    if (ctx->sync.active) {
        return; /* a view is on its way */
    }
    if (!r->active) {
        uint64_t start = machine_deadline_after(
            r->viewless_since_ns, membership_join_wait_max_ns(&ctx->config));
        if (now >= start) {
            activate(ctx, now, out);
        }
        return;
    }
    if (r->deadline_ns <= now) {
        begin_round(ctx, now, out);
    }
}

uint64_t reform_deadline(const struct membership *ctx)
{
    const struct membership_reform *r = &ctx->reform;
    if (ctx->has_view || ctx->sync.active || !eligible(ctx)) {
        return MEMBERSHIP_NEVER;
    }
    if (r->active) {
        return r->deadline_ns;
    }
    if (r->viewless_since_ns == MEMBERSHIP_NEVER) {
        return ctx->last_now_ns; /* start the clock at the next tick */
    }
    return machine_deadline_after(r->viewless_since_ns, membership_join_wait_max_ns(&ctx->config));
}

void reform_heard(struct membership *ctx, uint32_t sender, bool holds_view, uint64_t now)
{
    if (ctx->has_view || !holds_view || ctx->reform.viewless_since_ns == MEMBERSHIP_NEVER) {
        return;
    }
    /* A view holder within reach wins over re-forming: join it. */
    ctx->reform.active = false;
    ctx->reform.viewless_since_ns = now;
    if (ctx->join.active && !ctx->sync.active && sender != ctx->join.target) {
        join_heard(ctx, sender, now);
    }
}

void reform_handle(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                   struct membership_outbox *out)
{
    const struct membership_header *h = &msg->header;
    const struct membership_body_reform *b = &msg->body.reform;
    bool answer = (b->flags & MEMBERSHIP_REFORM_ANSWER) != 0;
    if (ctx->has_view) {
        if (!answer) {
            /* Someone thinks no view is left: here is one to join. */
            machine_send_simple(ctx, out, h->sender, MEMBERSHIP_MSG_I_AM_ALIVE);
        }
        return;
    }
    /*
     * The sender's membership of the completed view is its own check (it
     * re-forms only as a member): ours may be approximate, after a whole
     * view was fetched (reference.h), and would turn its vote away.
     */
    if (!eligible(ctx) || (h->flags & MEMBERSHIP_FLAG_HAS_VIEW) != 0 ||
        h->stable_epoch != ctx->stable_epoch) {
        ctx->counters.drops_unexpected++; /* another completed view's, or we cannot take part */
        return;
    }
    struct membership_reform *r = &ctx->reform;
    if (!r->active) {
        /* Not yet: we lost our view (or heard a view holder) too recently.
         * Starting on a peer's REFORM would undo the wait that a view holder
         * heard gives our join. */
        ctx->counters.drops_no_view++;
        return;
    }
    uint64_t counter = MEMBERSHIP_EPOCH_COUNTER(h->epoch);
    if (counter > r->max_counter) {
        r->max_counter = counter;
    }
    /* The sender re-forms, and so does whoever it votes for: the lowest id
     * spreads from voter to voter even where scans do not reach. */
    if (h->sender < r->lowest) {
        r->lowest = h->sender;
    }
    if (b->vote < r->lowest) {
        r->lowest = b->vote;
    }
    if (b->vote == ctx->self && r->vote == ctx->self) {
        count_vote(ctx, machine_pos_of(ctx, h->sender));
        if (majority(ctx)) {
            mint(ctx, now, out);
            return;
        }
    }
    if (!answer) {
        /* Who we follow, for its scan (and, to our candidate, our vote). */
        (void)send_reform(ctx, now, out, h->sender, r->vote, MEMBERSHIP_REFORM_ANSWER);
    }
}
