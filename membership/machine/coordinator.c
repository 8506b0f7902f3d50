/*
 * The coordinator (see machine.h): the root queues reported failures and
 * join requests and runs one round at a time: it mints the next view
 * (checking the primary rule first), installs it, sends the change to the
 * new tree's top and waits for the acks; `stable` (T_s from the first
 * report accepted in the episode) when a round completes with nothing
 * queued.  Reports that waited in the queue are probed once before use.
 *
 * A report is a claim, not evidence: the root removes a reported member
 * only once its own probe of it went unanswered (direct and through a
 * torus neighbour of it, since every route to it may cross dead nodes;
 * the probes of every report run at once, beside the round in flight),
 * or a second detector reported it too, or the node asked to leave itself
 * (a process fault).
 * One forged or mistaken report costs a probe, never a live member.  The
 * root's own suspicion is checked too, by a third member's probe (the
 * root may be one end of a pair that cannot reach each other).
 *
 * With a recovery policy (lib/recovery.h) the root also decides, per node
 * a change removes, the fault model (as reported, escalated to REPEATED by
 * its count of the node's recent removals) and the action, and the change
 * carries them; a node past the quarantine limit is refused when it asks
 * to join again.  A change that removes a node that left (model LEFT, a
 * graceful leave) carries the models too, policy or not, so that every
 * node tells a leave from a failure.
 */
#include "membership/machine/machine.h"

#include <string.h>

#include "membership/reference.h"

/* The ids of one report probed around too (the rest directly only). */
#define COORD_AROUND_MAX 4u

void coord_reset(struct membership *ctx)
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
    c->evidence_deadline_ns = MEMBERSHIP_NEVER;
    ctx->census.active = false;
}

/* First live member in layout order that is none of the given ids. */
static uint32_t first_live_excluding(const struct membership *ctx, const uint32_t *ids,
                                     uint32_t count)
{
    for (uint32_t k = 0; k < ctx->view.live && k <= count; k++) {
        uint32_t id = machine_id_at(ctx, membership_view_select(&ctx->view, k));
        if (!machine_id_in_list(ids, count, id)) {
            return id;
        }
    }
    return MEMBERSHIP_NONE;
}

/* Queue times in microseconds (wrapping), enough to tell a stale report. */
static uint32_t coarse_us(uint64_t now)
{
    return (uint32_t)(now / 1000u);
}

static int queue_index(const struct membership_coordinator *c, uint32_t id)
{
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed[i] == id) {
            return (int)i;
        }
    }
    return -1;
}

bool coord_is_queued(const struct membership *ctx, uint32_t id)
{
    return queue_index(&ctx->coord, id) >= 0;
}

/* A failure with evidence in hand (a report awaiting it gets it now). */
static void coord_queue_failure_at(struct membership *ctx, uint32_t id, uint32_t queued_us,
                                   uint8_t model)
{
    struct membership_coordinator *c = &ctx->coord;
    int queued = queue_index(c, id);
    if (queued >= 0 && c->failed_by[queued] != MEMBERSHIP_NONE) {
        c->failed_by[queued] = MEMBERSHIP_NONE;
        c->failed_at_us[queued] = queued_us;
        return;
    }
    if (id == ctx->self || queued >= 0) {
        return;
    }
    if (c->failed_count >= MEMBERSHIP_QUEUE_FAILED_MAX) {
        ctx->counters.table_overflows++;
        return;
    }
    c->failed_at_us[c->failed_count] = queued_us;
    c->failed_model[c->failed_count] = model == FAULT_MODEL_NONE ? FAULT_MODEL_PHYSICAL : model;
    c->failed_by[c->failed_count] = MEMBERSHIP_NONE;
    c->failed[c->failed_count++] = id;
}

/* When the root's probe of a reported node (queued at queued_us) expires. */
static uint64_t evidence_deadline(const struct membership *ctx, uint32_t queued_us, uint64_t now)
{
    /* One microsecond past the probe timeout: queue times are truncated. */
    uint32_t due_us = queued_us + coarse_us(detector_probe_timeout(ctx)) + 1u;
    int32_t left_us = (int32_t)(due_us - coarse_us(now));
    return left_us <= 0 ? now : (now / 1000u + (uint64_t)left_us) * 1000u;
}

/* A process fault and a leave are reported by the node itself, which
 * answers on: no probe or answer says anything about them. */
static bool self_reported(uint8_t model)
{
    return model == FAULT_MODEL_PROCESS || model == FAULT_MODEL_LEFT;
}

/* Queues id as reported by detector, awaiting the root's evidence. */
static bool queue_awaiting(struct membership *ctx, uint32_t id, uint8_t model, uint32_t detector,
                           uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    if (c->failed_count >= MEMBERSHIP_QUEUE_FAILED_MAX) {
        ctx->counters.table_overflows++;
        return false;
    }
    uint32_t i = c->failed_count++;
    c->failed[i] = id;
    c->failed_at_us[i] = coarse_us(now);
    c->failed_model[i] = model == FAULT_MODEL_NONE ? FAULT_MODEL_PHYSICAL : model;
    c->failed_by[i] = detector;
    uint64_t due = evidence_deadline(ctx, c->failed_at_us[i], now);
    if (due < c->evidence_deadline_ns) {
        c->evidence_deadline_ns = due;
    }
    return true;
}

/*
 * A report of id by a detector: evidence in hand when the node asked to
 * leave itself (a process fault), when it is our own detector's finding,
 * or when another detector reported it already; else the root probes it
 * and the report waits for the probe's deadline (coord_tick_evidence), or
 * is dropped when the node answers (coord_heard).  True when it queued.
 */
static bool coord_queue_report(struct membership *ctx, uint32_t id, uint8_t model,
                               uint32_t detector, bool around, uint64_t now,
                               struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    if (id == ctx->self || !machine_in_view(ctx, id)) {
        return false;
    }
    int queued = queue_index(c, id);
    bool own_request = detector == id && self_reported(model);
    bool own_finding = detector == ctx->self || detector_suspects(ctx, id);
    bool second = queued >= 0 && c->failed_by[queued] != MEMBERSHIP_NONE &&
                  c->failed_by[queued] != detector;
    if (own_request || own_finding || second) {
        bool was_waiting = queued >= 0 && c->failed_by[queued] != MEMBERSHIP_NONE;
        coord_queue_failure_at(ctx, id, coarse_us(now), model);
        return queued < 0 || was_waiting;
    }
    if (queued >= 0) {
        return false; /* the same detector again, or already decided */
    }
    if (!queue_awaiting(ctx, id, model, detector, now)) {
        return false;
    }
    /*
     * Direct, and around (issue 20): the routes between us and id may all
     * cross dead nodes whose links are not declared down yet (the report
     * may be the far watcher's, cut off the same way), so a torus
     * neighbour of id asks it too; an answer either way refutes.  Not for
     * every id of a long report (a swept subtree, a partition): three
     * messages each would overflow the outbox, and such reports are
     * about many silent members, not a few cut-off ones.
     */
    machine_send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU);
    uint32_t helper = around ? relay_pick_helper(ctx, id, detector) : MEMBERSHIP_NONE;
    if (helper != MEMBERSHIP_NONE) {
        relay_probe_through(ctx, out, id, helper, false);
    }
    return true;
}

/*
 * Our own detector suspects id: evidence by the rules above, except that
 * the root may be one end of a pair that cannot reach each other (issue
 * 16), with nobody else to check its finding.  So a third member (a torus
 * neighbour of id first) probes id for it (relay_probe_through); an answer
 * through it refutes the suspicion and the pair goes on talking through
 * that member, silence until the probe's deadline is evidence, and so is a
 * report of id by any other detector meanwhile (a real crash is seen by
 * its neighbours too).
 */
void coord_check_own_suspicion(struct membership *ctx, uint32_t id, uint64_t now,
                               struct membership_outbox *out)
{
    uint32_t helper = relay_pick_helper(ctx, id, ctx->self);
    if (id == ctx->self || !machine_in_view(ctx, id) || queue_index(&ctx->coord, id) >= 0 ||
        helper == MEMBERSHIP_NONE) {
        coord_queue_failure(ctx, id);
        return;
    }
    if (queue_awaiting(ctx, id, FAULT_MODEL_PHYSICAL, ctx->self, now)) {
        relay_probe_through(ctx, out, id, helper, true);
    }
}

/*
 * As next root: the members from the dead root up to us were found silent,
 * by our own search (detector == us) or by the detector that sent the
 * report, whose finding the root checks like any report.  Only that
 * stretch: members before the dead root (our view may be newer than the
 * detector's) are not its business.
 */
void coord_queue_prefix(struct membership *ctx, uint32_t failed_root, uint32_t detector,
                        uint64_t now, struct membership_outbox *out)
{
    if (failed_root >= ctx->node_count) {
        return;
    }
    uint32_t first = membership_view_rank(&ctx->view, machine_pos_of(ctx, failed_root));
    uint32_t rank = membership_view_rank(&ctx->view, ctx->self_pos);
    for (uint32_t k = first; k < rank; k++) {
        (void)coord_queue_report(ctx, machine_id_at(ctx, membership_view_select(&ctx->view, k)),
                                 FAULT_MODEL_PHYSICAL, detector,
                                 k - first < COORD_AROUND_MAX, now, out);
    }
}

void coord_queue_failure(struct membership *ctx, uint32_t id)
{
    coord_queue_failure_at(ctx, id, coarse_us(ctx->last_now_ns), FAULT_MODEL_PHYSICAL);
}

void coord_begin_episode(struct membership *ctx, uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    if (c->episode) {
        return;
    }
    c->episode = true;
    c->episode_start_ns = now;
    c->episode_first_round_ns = MEMBERSHIP_NEVER;
    c->episode_rounds = 0;
    c->episode_messages = 0;
    c->detector_messages = 0;
}

/* Failures with evidence (still members) or joins: a round to run. */
static bool coord_has_work(const struct membership *ctx)
{
    const struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed_by[i] == MEMBERSHIP_NONE && machine_in_view(ctx, c->failed[i])) {
            return true;
        }
    }
    return c->join_count > 0;
}

bool coord_unqueue_failure(struct membership *ctx, uint32_t id)
{
    struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed[i] == id) {
            c->failed_count--;
            c->failed[i] = c->failed[c->failed_count];
            c->failed_at_us[i] = c->failed_at_us[c->failed_count];
            c->failed_model[i] = c->failed_model[c->failed_count];
            c->failed_by[i] = c->failed_by[c->failed_count];
            return true;
        }
    }
    return false;
}

static bool queued_self_reported(const struct membership_coordinator *c, uint32_t id)
{
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed[i] == id) {
            return self_reported(c->failed_model[i]);
        }
    }
    return false;
}

static bool awaiting_evidence(const struct membership_coordinator *c)
{
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed_by[i] != MEMBERSHIP_NONE) {
            return true;
        }
    }
    return false;
}

/* A report awaits evidence about a member before us in layout order. */
static bool awaiting_evidence_before_us(const struct membership *ctx)
{
    const struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed_by[i] != MEMBERSHIP_NONE && machine_pos_of(ctx, c->failed[i]) < ctx->self_pos) {
            return true;
        }
    }
    return false;
}

/* Nothing left to decide or run: an episode that only held refuted reports ends unsaid. */
static void end_idle_episode(struct membership *ctx)
{
    struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (machine_in_view(ctx, c->failed[i])) {
            return;
        }
    }
    if (!c->active && !c->confirming && c->join_count == 0) {
        c->episode = false;
    }
}

uint32_t coord_heard(struct membership *ctx, uint32_t sender, bool holds_our_view, bool lags)
{
    struct membership_coordinator *c = &ctx->coord;
    int queued = queue_index(c, sender);
    uint32_t refuted_by = MEMBERSHIP_NONE;
    if (queued >= 0 && c->failed_by[queued] != MEMBERSHIP_NONE) {
        /*
         * A member that lags answers too: the change that would have
         * brought it up to date crossed the same dead nodes as the report
         * (issue 20: 7's parent 1 is its far watcher); it is told our view
         * is newer and fetches it.
         */
        if (holds_our_view || lags) {
            refuted_by = c->failed_by[queued];
            /* Reported, yet it answers the root: the report was wrong (or forged). */
            (void)coord_unqueue_failure(ctx, sender);
            ctx->counters.reports_refuted++;
            ctx->counters.false_suspicions++;
            end_idle_episode(ctx);
            if (!awaiting_evidence(c)) {
                c->evidence_deadline_ns = MEMBERSHIP_NEVER;
            }
            if (c->acting && sender == machine_root_id(ctx)) {
                /* The root we were to replace answers: it is the root, we are not. */
                c->acting = false;
                c->failed_count = 0;
                c->evidence_deadline_ns = MEMBERSHIP_NEVER;
                end_idle_episode(ctx);
            }
        } else {
            /* No view, or not of ours (restarted, partitioned, gone its
             * own way): out, then back by joining. */
            coord_queue_failure_at(ctx, sender, coarse_us(ctx->last_now_ns), FAULT_MODEL_PHYSICAL);
            machine_request_work(ctx, MACHINE_WORK_COORD);
        }
        return refuted_by;
    }
    /*
     * Queued with evidence (our own ack timeout, a probe, two detectors),
     * yet it talks to us in good standing before the round that would take
     * it: alive, so not a failure (a late ack would otherwise cost a live
     * member).  A node that asked to go (appkill, leave) still goes.
     */
    if ((c->confirming || holds_our_view) && !queued_self_reported(c, sender) &&
        coord_unqueue_failure(ctx, sender)) {
        ctx->counters.false_suspicions++;
        end_idle_episode(ctx);
    }
    return MEMBERSHIP_NONE;
}

static void coord_complete(struct membership *ctx, uint64_t now, struct membership_outbox *out);
static bool coord_send_change(const struct membership *ctx, struct membership_outbox *out,
                              uint32_t dest);

/*
 * The batch of a round, taken from the queues: its ids live in the
 * coordinator's batch_failed, batch_failed_at and batch_joins.
 */
struct coord_batch {
    uint32_t *failed;
    uint32_t *failed_at; /* queue times, coarse_us */
    uint8_t *failed_model; /* enum fault_model */
    uint32_t failed_count;
    struct membership_join_entry *joins;
    uint32_t join_count;
    uint32_t stale_count; /* failures queued longer than the report timeout */
    bool any_rejoin;      /* a join of an original member (not a spare) */
    bool any_left;        /* a removal that is a leave: the change carries the models */
};

/* Queued longer than the report timeout (queue times wrap: compared signed);
 * never a node's own report (see queued_self_reported). */
static bool queued_stale(const struct membership *ctx, uint32_t queued_us, uint8_t model,
                         uint64_t now)
{
    uint32_t stale_us = coarse_us(ctx->config.report_timeout_ns);
    return !self_reported(model) &&
           (int32_t)(coarse_us(now) - queued_us) > (int32_t)stale_us;
}

/* Does the change carry a (model, action) pair per removed node? */
static bool carries_decisions(const struct membership *ctx, bool any_left)
{
    return ctx->config.recovery.version != 0 || any_left;
}

/* Does a change of this many failed and joined nodes fit, decisions included? */
static bool change_fits(const struct membership *ctx, uint32_t failed, uint32_t joined,
                        bool any_left)
{
    return carries_decisions(ctx, any_left) ? MEMBERSHIP_CHANGE_FITS_DECIDED(failed, joined)
                                            : MEMBERSHIP_CHANGE_FITS(failed, joined);
}

/* Puts a batch taken from the queues back at their head, in order: it
 * waits (for probes, or a census) and stays first in line. */
static void requeue_batch(struct membership_coordinator *c, const struct coord_batch *b)
{
    memmove(c->failed + b->failed_count, c->failed, sizeof(uint32_t) * c->failed_count);
    memmove(c->failed_at_us + b->failed_count, c->failed_at_us,
            sizeof(uint32_t) * c->failed_count);
    memmove(c->failed_model + b->failed_count, c->failed_model, c->failed_count);
    memmove(c->failed_by + b->failed_count, c->failed_by, sizeof(uint32_t) * c->failed_count);
    c->failed_count += b->failed_count;
    memcpy(c->failed, b->failed, sizeof(uint32_t) * b->failed_count);
    memcpy(c->failed_at_us, b->failed_at, sizeof(uint32_t) * b->failed_count);
    memcpy(c->failed_model, b->failed_model, b->failed_count);
    for (uint32_t i = 0; i < b->failed_count; i++) {
        c->failed_by[i] = MEMBERSHIP_NONE; /* only failures with evidence are taken */
    }
    for (uint32_t i = 0; i < b->join_count && c->join_count < MEMBERSHIP_QUEUE_JOINED_MAX; i++) {
        c->joins[c->join_count++] = b->joins[i];
    }
}

/*
 * Into the batch: queued failures still in the view with evidence in hand,
 * as many as a change holds (reports awaiting evidence stay queued).
 */
static void take_failures(struct membership *ctx, uint64_t now, struct coord_batch *b)
{
    struct membership_coordinator *c = &ctx->coord;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        uint32_t id = c->failed[i];
        if (!machine_in_view(ctx, id) || id == ctx->self) {
            continue;
        }
        bool left = c->failed_model[i] == FAULT_MODEL_LEFT;
        if (c->failed_by[i] == MEMBERSHIP_NONE && b->failed_count < MEMBERSHIP_MAX_CHANGE_FAILED &&
            change_fits(ctx, b->failed_count + 1u, 0, b->any_left || left)) {
            b->any_left = b->any_left || left;
            b->failed_at[b->failed_count] = c->failed_at_us[i];
            b->failed_model[b->failed_count] = c->failed_model[i];
            b->failed[b->failed_count++] = id;
            if (queued_stale(ctx, c->failed_at_us[i], c->failed_model[i], now)) {
                b->stale_count++;
            }
        } else {
            c->failed_at_us[kept] = c->failed_at_us[i];
            c->failed_model[kept] = c->failed_model[i];
            c->failed_by[kept] = c->failed_by[i];
            c->failed[kept++] = id;
        }
    }
    c->failed_count = kept;
}

/* Into the batch, after the failures: the queued joins that still fit. */
static void take_joins(struct membership *ctx, uint64_t now, struct coord_batch *b)
{
    struct membership_coordinator *c = &ctx->coord;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->join_count; i++) {
        struct membership_join_entry e = c->joins[i];
        /*
         * A joiner still in the view restarted before anyone noticed: the
         * same change removes its old life and adds the new one.
         */
        bool restart =
            machine_in_view(ctx, e.id) && !machine_id_in_list(b->failed, b->failed_count, e.id);
        uint32_t more_failed = b->failed_count + (restart ? 1u : 0u);
        bool room = b->join_count < MEMBERSHIP_MAX_CHANGE_JOINED &&
                    more_failed <= MEMBERSHIP_MAX_CHANGE_FAILED &&
                    change_fits(ctx, more_failed, b->join_count + 1u, b->any_left);
        if (room) {
            if (restart) {
                b->failed_at[b->failed_count] = coarse_us(now);
                b->failed_model[b->failed_count] = FAULT_MODEL_PHYSICAL; /* it rebooted */
                b->failed[b->failed_count++] = e.id;
            }
            b->joins[b->join_count++] = e;
            b->any_rejoin = b->any_rejoin || e.id < ctx->config.member_count;
        } else {
            c->joins[kept++] = e;
        }
    }
    c->join_count = kept;
}

/*
 * The primary rule: the new view keeps a strict majority of the reference
 * view (exact count; a tie goes to the side holding the reference's root),
 * or a recent census vouches for our side.
 */
static bool keeps_majority(const struct membership *ctx, const struct coord_batch *b,
                           uint64_t now)
{
    /* Reference members the new view would keep (exact). */
    uint32_t ref_kept = membership_reference_kept(&ctx->ref);
    for (uint32_t i = 0; i < b->failed_count; i++) {
        uint32_t pos = machine_pos_of(ctx, b->failed[i]);
        if (membership_reference_contains(&ctx->ref, &ctx->view, pos) && ref_kept > 0) {
            ref_kept--;
        }
    }
    for (uint32_t i = 0; i < b->join_count; i++) {
        uint32_t pos = machine_pos_of(ctx, b->joins[i].id);
        bool back = !membership_view_is_live(&ctx->view, pos) ||
                    machine_id_in_list(b->failed, b->failed_count, b->joins[i].id);
        if (back && membership_reference_contains(&ctx->ref, &ctx->view, pos)) {
            ref_kept++;
        }
    }
    uint32_t ref_root = ctx->ref.root_pos;
    bool keeps_ref_root =
        ref_root != MEMBERSHIP_POS_NONE && membership_view_is_live(&ctx->view, ref_root) &&
        !machine_id_in_list(b->failed, b->failed_count, machine_id_at(ctx, ref_root));
    bool majority = 2u * (uint64_t)ref_kept > ctx->ref.count ||
                    (2u * (uint64_t)ref_kept == ctx->ref.count && keeps_ref_root);
    return majority || partition_census_vouches(ctx, now);
}

/*
 * Reports that waited in the queue (a round was in flight) may be out of
 * date: the batch goes back to the front of the queue, the stale ones (all,
 * when every one is) are probed once, and the next attempt decides with
 * what stayed silent.
 */
static void confirm_stale(struct membership *ctx, const struct coord_batch *b, uint64_t now,
                          struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    c->confirming = true;
    bool all = b->stale_count == b->failed_count;
    uint32_t probes = 0;
    for (uint32_t i = 0; i < b->failed_count; i++) {
        if (all || queued_stale(ctx, b->failed_at[i], b->failed_model[i], now)) {
            probes++;
        }
    }
    /* Answers queue up at this one node: the more probes, the longer the wait. */
    uint64_t wait = detector_probe_timeout(ctx) * (1u + probes / 64u);
    c->confirm_deadline_ns = machine_deadline_after(now, wait);
    requeue_batch(c, b);
    for (uint32_t i = 0; i < b->failed_count; i++) {
        if ((all && !self_reported(b->failed_model[i])) ||
            queued_stale(ctx, b->failed_at[i], b->failed_model[i], now)) {
            machine_send_simple(ctx, out, b->failed[i], MEMBERSHIP_MSG_HOW_ARE_YOU);
            c->failed_at_us[i] = coarse_us(now + wait); /* probed: fresh once the answers are in */
        }
    }
}

/*
 * The removals of `id` counted at this root (one more now), in a window
 * that opens at the first; NULL when the table is full of quarantined
 * nodes.  A new node takes a free entry, or the one whose window opened
 * first among those not quarantined.
 */
static struct membership_removals *count_removal(struct membership *ctx, uint32_t id,
                                                 uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    uint64_t window_ns = (uint64_t)ctx->config.recovery.repeat_window_s * 1000000000u;
    struct membership_removals *entry = NULL;
    for (uint32_t i = 0; i < c->removals_count && entry == NULL; i++) {
        if (c->removals[i].id == id) {
            entry = &c->removals[i];
        }
    }
    if (entry == NULL && c->removals_count < MEMBERSHIP_REMOVALS_MAX) {
        entry = &c->removals[c->removals_count++];
        entry->id = id;
        entry->count = 0;
        entry->quarantined = false;
        entry->window_start_ns = now;
    }
    if (entry == NULL) {
        /* Full: the oldest window not quarantined, else none. */
        struct membership_removals *oldest = NULL;
        for (uint32_t k = 0; k < c->removals_count; k++) {
            struct membership_removals *r = &c->removals[k];
            if (!r->quarantined && (oldest == NULL || r->window_start_ns < oldest->window_start_ns)) {
                oldest = r;
            }
        }
        if (oldest == NULL) {
            ctx->counters.table_overflows++;
            return NULL;
        }
        entry = oldest;
        entry->id = id;
        entry->count = 0;
        entry->window_start_ns = now;
    }
    if (!entry->quarantined && now - entry->window_start_ns > window_ns) {
        entry->count = 0; /* the window closed: a new one opens */
        entry->window_start_ns = now;
    }
    entry->count++;
    return entry;
}

/* The root's decision for a node removed with the reported model. */
static void decide(struct membership *ctx, uint32_t id, uint8_t model, uint64_t now,
                   uint8_t *model_out, uint8_t *action_out)
{
    const struct recovery_policy *policy = &ctx->config.recovery;
    struct membership_removals *r = count_removal(ctx, id, now);
    if (r != NULL && policy->repeat_count != 0 && r->count >= policy->repeat_count) {
        model = FAULT_MODEL_REPEATED;
    }
    if (r != NULL && policy->quarantine_limit != 0 && r->count >= policy->quarantine_limit) {
        r->quarantined = true;
    }
    *model_out = model;
    *action_out = (uint8_t)(recovery_policy_action(policy, model) |
                            (r != NULL && r->quarantined ? MEMBERSHIP_DECISION_QUARANTINED : 0u));
}

static bool is_quarantined(const struct membership *ctx, uint32_t id)
{
    const struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->removals_count; i++) {
        if (c->removals[i].id == id) {
            return c->removals[i].quarantined;
        }
    }
    return false;
}

void machine_emit_decision(struct membership_outbox *out, uint64_t now, uint64_t epoch,
                           uint32_t node, uint8_t model, uint8_t action)
{
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_RECOVERY_DECISION, now);
    if (e != NULL) {
        e->u.decision.epoch = epoch;
        e->u.decision.node = node;
        e->u.decision.model = model;
        e->u.decision.action = (uint8_t)(action & ~MEMBERSHIP_DECISION_FLAGS);
        e->u.decision.quarantined = (action & MEMBERSHIP_DECISION_QUARANTINED) != 0;
        e->u.decision.rejoined = (action & MEMBERSHIP_DECISION_REJOINED) != 0;
    }
}

void machine_emit_removal(const struct membership *ctx, struct membership_outbox *out,
                          uint64_t now, uint64_t epoch, uint32_t node, uint8_t model,
                          uint8_t action)
{
    if (model == FAULT_MODEL_LEFT) {
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_LEFT, now);
        if (e != NULL) {
            e->u.left.epoch = epoch;
            e->u.left.who = node;
        }
    } else if (ctx->config.recovery.version != 0) {
        machine_emit_decision(out, now, epoch, node, model, action);
    } /* else carried for a leave in the same change: no decision without a policy */
}

/*
 * Mints the new view from the batch and installs it here first.  The
 * batch's first `carried` failures are the superseded round's, already out
 * of our view and decided (see coord_supersede): only the rest are removed,
 * counted and decided now.
 */
static void mint_view(struct membership *ctx, const struct coord_batch *b, uint32_t carried,
                      uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    c->confirmed = false;
    c->active = true;
    c->started_ns = now;
    if (c->episode && c->episode_first_round_ns == MEMBERSHIP_NEVER) {
        c->episode_first_round_ns = now;
    }
    uint32_t old_root = machine_root_id(ctx);
    c->base_stable = ctx->stable_epoch == ctx->epoch;
    c->base_epoch = ctx->epoch;
    uint64_t base = ctx->epoch;
    for (uint32_t i = carried; i < b->failed_count; i++) {
        if (machine_view_remove(ctx, b->failed[i])) {
            ctx->digest ^= membership_id_digest(b->failed[i]);
        }
    }
    for (uint32_t i = 0; i < b->join_count; i++) {
        if (machine_view_add(ctx, b->joins[i].id)) {
            ctx->digest ^= membership_id_digest(b->joins[i].id);
        }
        /* Reports queued before this admission were about an earlier life. */
        while (coord_unqueue_failure(ctx, b->joins[i].id)) {
            ctx->counters.probes_outlived++;
        }
        detector_forget_life(ctx, b->joins[i].id);
    }
    ctx->epoch = MEMBERSHIP_EPOCH(MEMBERSHIP_EPOCH_COUNTER(base) + 1u, ctx->self_pos,
                                  ctx->incarnation);
    install_view(ctx, now, out);
    c->round_decided = carries_decisions(ctx, b->any_left);
    for (uint32_t i = carried; c->round_decided && i < b->failed_count; i++) {
        if (b->failed_model[i] == FAULT_MODEL_LEFT) {
            /* No fault: nothing to count or decide (ignore). */
            c->round_model[i] = FAULT_MODEL_LEFT;
            c->round_action[i] = RECOVERY_IGNORE;
        } else if (ctx->config.recovery.version != 0) {
            decide(ctx, b->failed[i], b->failed_model[i], now, &c->round_model[i],
                   &c->round_action[i]);
        } else {
            c->round_model[i] = b->failed_model[i]; /* no policy: carried, not decided */
            c->round_action[i] = RECOVERY_IGNORE;
        }
        for (uint32_t k = 0; k < b->join_count; k++) {
            if (b->joins[k].id == b->failed[i]) {
                c->round_action[i] |= MEMBERSHIP_DECISION_REJOINED;
            }
        }
        machine_emit_removal(ctx, out, now, ctx->epoch, b->failed[i], c->round_model[i],
                             c->round_action[i]);
        ctx->decisions_epoch = ctx->epoch;
    }

    if (machine_id_in_list(b->failed, b->failed_count, old_root)) {
        c->change_type = b->failed_count > 1 ? MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE
                                             : MEMBERSHIP_MSG_ROOT_DEAD;
    } else if (b->failed_count > 0) {
        c->change_type = MEMBERSHIP_MSG_FAILED_NODE;
    } else {
        c->change_type =
            b->any_rejoin ? MEMBERSHIP_MSG_ALIVE_NODE_JOIN : MEMBERSHIP_MSG_NEW_NODE_JOIN;
    }
    c->round_failed_count = b->failed_count; /* the ids stay in batch_failed for the round */
    c->round_join_count = b->join_count;
    c->since_stable = carried > 0;
    for (uint32_t i = 0; i < b->join_count; i++) {
        c->round_joins[i] = b->joins[i];
        c->recent[c->recent_next] = b->joins[i];
        c->recent_next = (c->recent_next + 1u) % MEMBERSHIP_RECENT_JOINS;
    }
}

/*
 * The new tree's root starts the dissemination: us (the change to our
 * children), or a joiner before us (handed the round); then the wait for
 * their acks.
 */
static void disseminate(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    c->epoch = ctx->epoch;
    struct membership_acks *acks = &c->acks;
    acks->count = 0;
    bool handover = ctx->root_pos != ctx->self_pos;
    if (handover) {
        acks->children[acks->count++] = machine_root_id(ctx);
    } else {
        for (uint32_t i = 0; i < ctx->links.child_count; i++) {
            acks->children[acks->count++] = machine_id_at(ctx, ctx->links.children[i]);
        }
    }
    c->messages = acks->count;
    c->reached = handover ? 0 : 1; /* in a handover we are inside the new root's count */
    c->incomplete = false;
    uint64_t wait = (uint64_t)ctx->levels * ctx->config.ack_timeout_ns;
    if (handover) {
        wait += 4u * ctx->config.sync_timeout_ns;
    }
    round_acks_begin(acks, ctx->levels + 1u, wait, now);
    c->episode_rounds++;
    ctx->counters.rounds_started++;
    for (uint32_t i = 0; i < acks->count; i++) {
        coord_send_change(ctx, out, acks->children[i]);
    }
    if (acks->count == 0) {
        coord_complete(ctx, now, out);
    }
}

/*
 * Failures with evidence while a failure round is in flight (two members
 * dying at once): rather than let that round wait out the second dead
 * member's acks (it sits in the round's tree) and run another after it, a
 * round removing both supersedes it at once.  Its change lists every
 * failure since the stable view the superseded round started from (flag
 * SINCE_STABLE), so a member below the dead one, which never got the first
 * change, applies it as well as one that did; acks of the superseded round
 * are stale when they arrive.  Only over a failure round (no join) from a
 * completed view, run by the root itself, and with fresh failures that fit
 * one change and keep the majority: the superseding round itself is never
 * superseded, so a partition reported piece by piece still meets rounds
 * that end (or reach no majority) and the census they lead to.
 */
static void coord_supersede(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    if (!c->base_stable || c->change_type != MEMBERSHIP_MSG_FAILED_NODE ||
        c->round_join_count != 0 || c->confirming || ctx->root_pos != ctx->self_pos ||
        ctx->epoch != c->epoch || c->failed_count == 0) {
        return;
    }
    uint32_t carried = c->round_failed_count;
    bool any_left = false;
    for (uint32_t i = 0; i < carried; i++) {
        any_left = any_left || c->batch_failed_model[i] == FAULT_MODEL_LEFT;
    }
    /* The carried ids stay where the round keeps them; the new ones follow. */
    struct coord_batch b = {
        .failed = c->batch_failed,
        .failed_at = c->batch_failed_at,
        .failed_model = c->batch_failed_model,
        .failed_count = carried,
        .joins = c->batch_joins,
        .any_left = any_left,
    };
    take_failures(ctx, now, &b);
    if (b.failed_count == carried) {
        return;
    }
    struct coord_batch fresh = b;
    fresh.failed += carried;
    fresh.failed_at += carried;
    fresh.failed_model += carried;
    fresh.failed_count -= carried;
    if (b.stale_count > 0 || carries_decisions(ctx, b.any_left) != c->round_decided ||
        (ctx->config.policy == MEMBERSHIP_POLICY_PRIMARY && !keeps_majority(ctx, &fresh, now))) {
        requeue_batch(c, &fresh);
        return;
    }
    c->episode_messages += c->messages; /* what the superseded round sent */
    mint_view(ctx, &b, carried, now, out);
    ctx->counters.rounds_superseded++;
    disseminate(ctx, now, out);
}

/*
 * Starts the next round if this node is root, idle, and has changes queued:
 * take a batch; while stale reports are being confirmed it waits; the
 * primary rule may send it to a census instead; stale reports are probed
 * once; else the view is minted and disseminated.
 */
void coord_maybe_start(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    if (!machine_is_root(ctx) || ctx->census.active || ctx->leaving) {
        return; /* leaving: the next root removes us (membership_request_removal) */
    }
    if (c->active) {
        coord_supersede(ctx, now, out);
        return;
    }
    struct coord_batch b = {
        .failed = c->batch_failed,
        .failed_at = c->batch_failed_at,
        .failed_model = c->batch_failed_model,
        .joins = c->batch_joins,
    };
    take_failures(ctx, now, &b);
    take_joins(ctx, now, &b);
    if (b.failed_count == 0 && b.join_count == 0) {
        return;
    }
    if (c->confirming || (c->acting && awaiting_evidence_before_us(ctx))) {
        /*
         * Waiting for answers from the reported: the batch stays first in
         * line.  An acting root removes the dead root and the members before
         * it (in layout order) in one change, or its view would keep a dead
         * root; reports about members after it do not hold it up.
         */
        requeue_batch(c, &b);
        return;
    }
    if (ctx->config.policy == MEMBERSHIP_POLICY_PRIMARY && !keeps_majority(ctx, &b, now)) {
        /*
         * Before giving up the primary component, count who is still
         * within reach now (a partition may have healed since these were
         * reported): the census decides, and tells our side directly.
         */
        requeue_batch(c, &b);
        partition_census_start(ctx, now, out);
        return;
    }
    if (b.stale_count > 0 && !c->confirmed) {
        /*
         * The attempt right after a confirmation goes ahead (its probed
         * batch is first in line), or reports arriving during the wait
         * would keep the root confirming for ever.
         */
        confirm_stale(ctx, &b, now, out);
        return;
    }
    mint_view(ctx, &b, 0, now, out);
    disseminate(ctx, now, out);
}

/*
 * Sends the change of the round in flight to dest, as minted: written
 * straight into the outbox from what the round keeps (the installed view
 * is its result), when it starts and when a late child is asked again.
 */
static bool coord_send_change(const struct membership *ctx, struct membership_outbox *out,
                              uint32_t dest)
{
    const struct membership_coordinator *c = &ctx->coord;
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, c->change_type);
    bool decided = c->round_decided;
    membership_put_u64(&w, c->base_epoch);
    membership_put_u8(&w, (uint8_t)((c->base_stable ? MEMBERSHIP_CHANGE_BASE_STABLE : 0u) |
                                    (decided ? MEMBERSHIP_CHANGE_DECIDED : 0u) |
                                    (c->since_stable ? MEMBERSHIP_CHANGE_SINCE_STABLE : 0u)));
    membership_put_u8(&w, 0);
    membership_put_u16(&w, (uint16_t)c->round_failed_count);
    membership_put_u16(&w, (uint16_t)c->round_join_count);
    membership_put_u16(&w, 0);
    membership_put_u32(&w, ctx->view.live);
    membership_put_u32(&w, machine_root_id(ctx));
    membership_put_u64(&w, ctx->digest);
    for (uint32_t i = 0; i < c->round_failed_count; i++) {
        membership_put_u32(&w, c->batch_failed[i]);
    }
    for (uint32_t i = 0; i < c->round_join_count; i++) {
        membership_put_u32(&w, c->round_joins[i].id);
        membership_put_u32(&w, c->round_joins[i].incarnation);
    }
    for (uint32_t i = 0; decided && i < c->round_failed_count; i++) {
        membership_put_u8(&w, c->round_model[i]);
        membership_put_u8(&w, c->round_action[i]);
    }
    return membership_outbox_commit(out, dest, &w);
}

/*
 * We are no longer the root (a joiner before us in layout order took over):
 * what we still had queued goes to the new root, joiners by redirection.
 */
static void coord_hand_off(struct membership *ctx, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    uint32_t root = machine_root_id(ctx);
    if (root == MEMBERSHIP_NONE || root == ctx->self) {
        return;
    }
    for (uint32_t i = 0; i < c->join_count; i++) {
        struct membership_writer w;
        machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REDIRECT);
        membership_put_u32(&w, root);
        membership_outbox_commit(out, c->joins[i].id, &w);
    }
    c->join_count = 0;
    /* One report per fault model, so that the new root decides as we would. */
    for (uint8_t model = FAULT_MODEL_PHYSICAL; model < FAULT_MODEL_LIMIT; model++) {
        uint32_t count = 0;
        uint32_t ids[MEMBERSHIP_MAX_REPORT_IDS];
        for (uint32_t i = 0; i < c->failed_count && count < MEMBERSHIP_MAX_REPORT_IDS; i++) {
            uint8_t queued = c->failed_model[i] == FAULT_MODEL_NONE ? FAULT_MODEL_PHYSICAL
                                                                   : c->failed_model[i];
            if (queued == model && machine_in_view(ctx, c->failed[i])) {
                ids[count++] = c->failed[i];
            }
        }
        if (count > 0) {
            struct membership_writer w;
            machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_NODE_FAILURE);
            membership_put_u32(&w, ctx->self);
            membership_put_u32(&w, 0);
            membership_put_u32(&w, UINT32_MAX);
            membership_put_u16(&w, (uint16_t)count);
            membership_put_u8(&w, 0);
            membership_put_u8(&w, model == FAULT_MODEL_PHYSICAL ? FAULT_MODEL_NONE : model);
            for (uint32_t i = 0; i < count; i++) {
                membership_put_u32(&w, ids[i]);
            }
            membership_outbox_commit(out, root, &w);
        }
    }
    c->failed_count = 0;
}

static void coord_complete(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    c->active = false;
    bool complete = c->acks.pending == 0 && !c->incomplete;
    uint32_t round_messages = c->messages;
    c->episode_messages += round_messages;
    for (uint32_t i = 0; i < c->round_join_count; i++) {
        struct membership_join_entry e = c->round_joins[i];
        if (machine_in_view(ctx, e.id)) {
            struct membership_writer w;
            machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_DET_ACK);
            membership_put_u32(&w, e.incarnation);
            membership_outbox_commit(out, e.id, &w);
        }
    }
    c->round_join_count = 0;
    if (complete && ctx->epoch == c->epoch) {
        machine_learn_stable(ctx, c->epoch);
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
            /*
             * A superseding round stands for the round it replaced too:
             * that one's tree held every member this one removes, so it
             * would have reached no more.  Counting it once would let a
             * minority root mint a round more before its census, and a
             * view of a higher epoch than the majority's by a heal.
             */
            c->low_reach_rounds += c->since_stable ? 2u : 1u;
            partition_census_expire(ctx);
        } else {
            c->low_reach_rounds = 0;
        }
        if (c->low_reach_rounds >= 2 && !ctx->census.active) {
            partition_census_start(ctx, now, out); /* the verdict waits for the census */
            return;
        }
    }
    if (!machine_is_root(ctx)) {
        coord_hand_off(ctx, out);
    } else if (coord_has_work(ctx)) {
        machine_request_work(ctx, MACHINE_WORK_COORD); /* the episode goes on with another round */
        return;
    }
    if (complete && c->episode && ctx->has_view) {
        struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_STABLE, now);
        if (e != NULL) {
            e->u.stable.epoch = ctx->epoch;
            e->u.stable.ts_ns = now - c->episode_start_ns;
            e->u.stable.confirm_ns = c->episode_first_round_ns != MEMBERSHIP_NEVER &&
                                             c->episode_first_round_ns >= c->episode_start_ns
                                         ? c->episode_first_round_ns - c->episode_start_ns
                                         : 0;
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

/*
 * A detector below a member that died with the one being removed never
 * gets the round in flight (its parent in the new tree is the dead one), so
 * its report carries the stable view the round started from.  The root
 * takes it all the same while that round, a failure round from a completed
 * view, is in flight: nothing joined since, so a member of both views is
 * the same life of it, and the report may supersede the round.
 */
bool coord_takes_stale_report(const struct membership *ctx, const struct membership_header *h)
{
    const struct membership_coordinator *c = &ctx->coord;
    return h->type == MEMBERSHIP_MSG_NODE_FAILURE && machine_is_root(ctx) && c->active &&
           c->base_stable && c->change_type == MEMBERSHIP_MSG_FAILED_NODE &&
           c->round_join_count == 0 && h->epoch == c->base_epoch &&
           h->epoch == ctx->stable_epoch;
}

/* NODE_FAILURE / ROOT_FAILURE from a member holding our view. */
void coord_handle_report(struct membership *ctx, const struct membership_msg *msg,
                         const uint8_t *payload, size_t length, uint64_t now,
                         struct membership_outbox *out)
{
    const struct membership_body_report *r = &msg->body.report;
    uint32_t ids[MEMBERSHIP_MAX_REPORT_IDS + 1];
    uint32_t count = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        ids[count++] = membership_msg_report_id(msg, i);
    }
    if (r->failed_root != UINT32_MAX && !machine_id_in_list(ids, count, r->failed_root)) {
        ids[count++] = r->failed_root;
    }
    uint32_t root = machine_root_id(ctx);
    uint32_t queued_before = ctx->coord.failed_count;
    if (!machine_is_root(ctx)) {
        bool about_root = msg->header.type == MEMBERSHIP_MSG_ROOT_FAILURE ||
                          machine_id_in_list(ids, count, root);
        bool prefix = (r->flags & MEMBERSHIP_REPORT_PREFIX) != 0;
        uint32_t target = about_root ? (prefix ? ctx->self : first_live_excluding(ctx, ids, count))
                                     : root;
        if (target == ctx->self && about_root) {
            ctx->coord.acting = true; /* next in line: take over */
            if (prefix) {
                /* the detector probed them: silent (we check) */
                coord_queue_prefix(ctx, r->failed_root, r->detector, now, out);
            }
        } else {
            if (target != MEMBERSHIP_NONE && target != msg->header.sender) {
                machine_send_forward(ctx, out, target, payload, length);
            } else {
                ctx->counters.drops_unexpected++;
            }
            return;
        }
    }
    if (r->detector != ctx->self && r->sequence != 0) {
        struct membership_writer w;
        machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_FAILURE_DET_ACK);
        membership_put_u32(&w, r->sequence);
        membership_outbox_commit(out, r->detector, &w);
    }
    bool any_new = ctx->coord.failed_count > queued_before;
    for (uint32_t i = 0; i < count; i++) {
        /* The failed root found by the detector's search is physical. */
        if (coord_queue_report(ctx, ids[i], i < r->count ? r->model : FAULT_MODEL_PHYSICAL,
                               r->detector, i < COORD_AROUND_MAX, now, out)) {
            any_new = true;
        }
    }
    if (any_new) {
        coord_begin_episode(ctx, now);
    }
    if (ctx->coord.episode) {
        ctx->coord.detector_messages += 2; /* the report and its ack */
    }
    machine_request_work(ctx, MACHINE_WORK_COORD);
}

/* NEW_NODE / NODE_ALIVE from a node outside the view (or restarted in it). */
void coord_handle_join_request(struct membership *ctx, const struct membership_msg *msg,
                               uint64_t now, struct membership_outbox *out)
{
    if (msg->body.join.config_digest != ctx->config_digest) {
        ctx->counters.drops_config++;
        return;
    }
    if (!ctx->has_view) {
        /* No view here either: say so, so that the joiner moves on at once. */
        struct membership_writer w;
        machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REDIRECT);
        membership_put_u32(&w, MEMBERSHIP_NONE);
        membership_outbox_commit(out, msg->header.sender, &w);
        return;
    }
    uint32_t joiner = msg->header.sender;
    uint32_t incarnation = msg->header.incarnation;
    if (!machine_is_root(ctx) && joiner == machine_root_id(ctx)) {
        /*
         * Our root asks to join: it may have restarted and lost everything
         * (then it is no root any more), or this is an old request that was
         * still on its way when it got in.  Ask it: an answer without a view
         * (or none) makes it a suspect, see receive_message.
         */
        if (ctx->root_check == MEMBERSHIP_NONE) {
            ctx->root_check = joiner;
            detector_start_probe(ctx, joiner, now, out);
        }
        return;
    }
    if (!machine_is_root(ctx)) {
        struct membership_writer w;
        machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REDIRECT);
        membership_put_u32(&w, machine_root_id(ctx));
        membership_outbox_commit(out, joiner, &w);
        return;
    }
    if (is_quarantined(ctx, joiner)) {
        /* Removed too often (the policy's limit): refused, with the reason;
         * a life of it still in the view goes too. */
        struct membership_writer w;
        machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_REFUSED);
        membership_put_u8(&w, MEMBERSHIP_REFUSED_QUARANTINED);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, 0);
        membership_outbox_commit(out, joiner, &w);
        if (machine_in_view(ctx, joiner)) {
            coord_queue_failure(ctx, joiner);
            coord_begin_episode(ctx, now);
            machine_request_work(ctx, MACHINE_WORK_COORD);
        }
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
    if (machine_in_view(ctx, joiner)) {
        for (uint32_t i = 0; i < MEMBERSHIP_RECENT_JOINS; i++) {
            if (c->recent[i].id == joiner && c->recent[i].incarnation == incarnation &&
                incarnation != 0) {
                /* Already in: the joiner missed its welcome. */
                struct membership_writer w;
                machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_JOIN_DET_ACK);
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
    machine_request_work(ctx, MACHINE_WORK_COORD);
}


bool coord_take_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                    struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    if (!c->active || c->epoch != msg->body.ack.epoch ||
        !round_acks_is_pending(&c->acks, msg->header.sender)) {
        return false;
    }
    if (!round_ack_fits(ctx, msg)) {
        return true; /* dropped: the top stays pending; its real ack feeds the majority test */
    }
    round_acks_take(&c->acks, msg->header.sender);
    c->messages += msg->body.ack.messages;
    c->reached += msg->body.ack.reached;
    c->incomplete = c->incomplete || (msg->body.ack.flags & MEMBERSHIP_ACK_INCOMPLETE);
    if (c->acks.pending == 0) {
        coord_complete(ctx, now, out);
    }
    return true;
}

/* Late tops of the tree asked again; silent ones reported (we detected them). */
void coord_tick_round(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_coordinator *c = &ctx->coord;
    if (!c->active || c->acks.deadline_ns > now) {
        return;
    }
    uint32_t ask = 0;
    uint32_t silent = round_acks_expire(&c->acks, detector_probe_timeout(ctx), now, &ask);
    for (uint32_t i = 0; i < c->acks.count; i++) {
        /* The change as minted, unless a newer view replaced it here. */
        if (((ask >> i) & 1u) && ctx->epoch == c->epoch &&
            coord_send_change(ctx, out, c->acks.children[i])) {
            c->messages++;
        }
    }
    round_probe_asked(ctx, &c->acks, ask, out);
    for (uint32_t i = 0; i < c->acks.count; i++) {
        if ((silent >> i) & 1u) {
            uint32_t child = c->acks.children[i];
            machine_emit_failure(ctx, child, now - c->started_ns, MEMBERSHIP_CAUSE_ACK, now, out);
            ctx->counters.suspicions++;
            coord_queue_failure(ctx, child);
            if (ctx->epoch == c->epoch && ctx->root_pos == ctx->self_pos) {
                detector_sweep_subtree(ctx, child, now, out);
            }
        }
    }
    c->incomplete = c->incomplete || silent != 0;
    if (c->acks.pending == 0) {
        coord_complete(ctx, now, out);
    }
}

/*
 * The root's probes of reported nodes that expired unanswered: evidence.
 * The episode (T_s) counts from the report, the probe's wait included.
 */
void coord_tick_evidence(struct membership *ctx, uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    if (c->evidence_deadline_ns > now) {
        return;
    }
    c->evidence_deadline_ns = MEMBERSHIP_NEVER;
    bool confirmed = false;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed_by[i] == MEMBERSHIP_NONE) {
            continue;
        }
        uint64_t due = evidence_deadline(ctx, c->failed_at_us[i], now);
        if (!machine_in_view(ctx, c->failed[i])) {
            c->failed_by[i] = MEMBERSHIP_NONE; /* removed meanwhile: nothing to decide */
        } else if (due <= now) {
            uint64_t probe = detector_probe_timeout(ctx);
            coord_begin_episode(ctx, now > probe ? now - probe : 0);
            c->failed_by[i] = MEMBERSHIP_NONE;
            confirmed = true;
        } else if (due < c->evidence_deadline_ns) {
            c->evidence_deadline_ns = due;
        }
    }
    if (confirmed) {
        machine_request_work(ctx, MACHINE_WORK_COORD);
    }
}

/* We were stopped: the probes of reported nodes start their wait again. */
void coord_pause(struct membership *ctx, uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (c->failed_by[i] != MEMBERSHIP_NONE) {
            c->failed_at_us[i] = coarse_us(now);
            c->evidence_deadline_ns = evidence_deadline(ctx, c->failed_at_us[i], now);
        }
    }
}

void coord_tick_confirm(struct membership *ctx, uint64_t now)
{
    struct membership_coordinator *c = &ctx->coord;
    if (c->confirming && c->confirm_deadline_ns <= now) {
        c->confirming = false;
        c->confirmed = true; /* the next attempt decides for good */
        machine_request_work(ctx, MACHINE_WORK_COORD);
    }
}
