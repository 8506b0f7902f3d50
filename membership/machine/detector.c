/*
 * The failure detector (see machine.h): heartbeats to the watch set (tree
 * and torus neighbours), probes (HOW_ARE_YOU) after a link-down event or an
 * application's suspicion, suspects and their reports to the root
 * (NODE_FAILURE, retried until FAILURE_DET_ACK), the search for the next
 * root when the root itself is suspected (ROOT_FAILURE), and sweeps of the
 * subtree of a child that never acked.
 *
 * Adaptive timeouts, so that a slow machine is not taken for dead nodes:
 *  - local health: our own heartbeat timer firing late (the poll loop or
 *    the host is slow) raises a multiplier of every probe and heartbeat
 *    timeout to how late it fired, before anyone is suspected; each timer
 *    on time takes a sixteenth off again;
 *  - each watched member's heartbeat gaps are smoothed (mean and mean
 *    deviation): its silence timeout is the configured one plus how much
 *    later than the period its beats come on average, plus four
 *    deviations, so a noisy member gets more slack and a steady one none;
 *  - while we are late ourselves, a silent member is asked (HOW_ARE_YOU)
 *    before it is accused, and an answer refutes the suspicion.
 * Every timeout stays between the configured one and timeout_ceiling
 * times it.
 */
#include "membership/machine/machine.h"

#include <string.h>

#define HEALTH_ONE 16u     /* the local-health multiplier, in sixteenths: on time */
#define GAP_DEVIATIONS 4u  /* a member's timeout allows this many deviations of its gaps */

/* The ceiling of a timeout whose configured value (the floor) is floor_ns. */
static uint64_t timeout_ceiling(const struct membership *ctx, uint64_t floor_ns)
{
    return floor_ns * ctx->config.timeout_ceiling;
}

/* timeout_ns widened by our local health, at most the ceiling of floor_ns. */
static uint64_t widen(const struct membership *ctx, uint64_t timeout_ns, uint64_t floor_ns)
{
    uint64_t widened = timeout_ns / HEALTH_ONE * ctx->health_x16 +
                       timeout_ns % HEALTH_ONE * ctx->health_x16 / HEALTH_ONE;
    uint64_t ceiling = timeout_ceiling(ctx, floor_ns);
    return widened < ceiling ? widened : ceiling;
}

uint64_t detector_probe_timeout(const struct membership *ctx)
{
    return widen(ctx, ctx->config.probe_timeout_ns, ctx->config.probe_timeout_ns);
}

static uint64_t watch_period(const struct membership *ctx, const struct membership_watch *w)
{
    return w->far ? 2 * ctx->config.heartbeat_ns : ctx->config.heartbeat_ns;
}

static uint64_t watch_floor(const struct membership *ctx, const struct membership_watch *w)
{
    return w->far ? 2 * ctx->config.heartbeat_timeout_ns : ctx->config.heartbeat_timeout_ns;
}

/* No heartbeat gap known: the next beat starts the estimate. */
static void watch_forget_beats(const struct membership *ctx, struct membership_watch *w)
{
    w->last_beat_ns = MEMBERSHIP_NEVER;
    w->gap_mean_ns = watch_period(ctx, w);
    w->gap_dev_ns = 0;
}

void detector_forget_beats(struct membership *ctx)
{
    for (uint32_t i = 0; i < ctx->watch_count; i++) {
        watch_forget_beats(ctx, &ctx->watch[i]);
    }
    ctx->beat_timed = false;
}

void detector_note_heartbeat(struct membership *ctx, uint32_t sender, uint64_t now)
{
    for (uint32_t i = 0; i < ctx->watch_count; i++) {
        struct membership_watch *w = &ctx->watch[i];
        if (w->id != sender) {
            continue;
        }
        if (w->last_beat_ns != MEMBERSHIP_NEVER && now > w->last_beat_ns) {
            /* A gap past the ceiling says nothing more than the ceiling does. */
            uint64_t gap = now - w->last_beat_ns;
            uint64_t most = timeout_ceiling(ctx, watch_floor(ctx, w));
            gap = gap < most ? gap : most;
            /* Mean and mean deviation, smoothed by 1/8 and 1/4 (as TCP's RTT). */
            int64_t error = (int64_t)gap - (int64_t)w->gap_mean_ns;
            w->gap_mean_ns = (uint64_t)((int64_t)w->gap_mean_ns + error / 8);
            uint64_t size = (uint64_t)(error < 0 ? -error : error);
            w->gap_dev_ns = (uint64_t)((int64_t)w->gap_dev_ns +
                                       ((int64_t)size - (int64_t)w->gap_dev_ns) / 4);
        }
        w->last_beat_ns = now;
    }
}

/*
 * Our heartbeat timer fired `late` after its time: we are the slow one
 * (a loaded host, a delayed poll loop), so the silence of others may be
 * ours.  The multiplier rises at once to cover that lateness and decays a
 * sixteenth per timer on time.
 */
static void note_own_lateness(struct membership *ctx, uint64_t late)
{
    uint64_t period = ctx->config.heartbeat_ns;
    if (!ctx->beat_timed) {
        ctx->beat_timed = true; /* the first beat of a view: no time to compare with */
        return;
    }
    if (late > period / 2u) {
        uint64_t most = (uint64_t)HEALTH_ONE * ctx->config.timeout_ceiling;
        uint64_t health = (uint64_t)HEALTH_ONE * (period + late) / period;
        health = health < most ? health : most;
        if (health > ctx->health_x16) {
            ctx->health_x16 = (uint32_t)health;
            ctx->counters.timeouts_widened++;
        }
    } else if (ctx->health_x16 > HEALTH_ONE) {
        ctx->health_x16--;
    }
}

void detector_rebuild_watch(struct membership *ctx, uint64_t now)
{
    struct membership_watch fresh[MEMBERSHIP_WATCH_MAX];
    uint32_t count = 0;
    uint32_t ids[MEMBERSHIP_WATCH_MAX];
    uint32_t id_count = 0;
    if (ctx->has_view && ctx->links.parent != MEMBERSHIP_POS_NONE) {
        ids[id_count++] = machine_id_at(ctx, ctx->links.parent);
    }
    for (uint32_t i = 0; ctx->has_view && i < ctx->links.child_count; i++) {
        ids[id_count++] = machine_id_at(ctx, ctx->links.children[i]);
    }
    if (ctx->has_view && ctx->config.watch_torus_neighbours) {
        for (uint32_t i = 0; i < ctx->neighbour_count; i++) {
            uint32_t n = ctx->neighbours[i];
            if (machine_in_view(ctx, n) && !machine_id_in_list(ids, id_count, n)) {
                ids[id_count++] = n;
            }
        }
    }
    for (uint32_t i = 0; i < id_count; i++) {
        struct membership_watch *w = &fresh[count++];
        w->id = ids[i];
        w->last_heard_ns = now;
        w->suspected = false;
        w->far = ctx->config.watch_torus_neighbours &&
                 !machine_id_in_list(ctx->neighbours, ctx->neighbour_count, ids[i]);
        watch_forget_beats(ctx, w);
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

void detector_reset(struct membership *ctx)
{
    relay_reset(ctx);
    ctx->probe_count = 0;
    ctx->suspect_count = 0;
    ctx->watch_count = 0;
    ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    ctx->search.active = false;
    ctx->sweep.active = false;
    ctx->beat_timed = false;
}

void detector_view_changed(struct membership *ctx)
{
    /* Suspects that left the view are settled; the rest are reported again. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        struct membership_suspect s = ctx->suspects[i];
        if (!machine_in_view(ctx, s.id)) {
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
        if (machine_in_view(ctx, ctx->probes[i].id)) {
            ctx->probes[kept++] = ctx->probes[i];
        }
    }
    ctx->probe_count = kept;
    ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    relay_view_changed(ctx);
}

static uint64_t recheck_delay(const struct membership *ctx)
{
    return ctx->config.report_timeout_ns +
           (uint64_t)(ctx->levels + 2u) * ctx->config.ack_timeout_ns;
}

static int suspect_index(const struct membership *ctx, uint32_t id)
{
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        if (ctx->suspects[i].id == id) {
            return (int)i;
        }
    }
    return -1;
}

bool detector_suspects(const struct membership *ctx, uint32_t id)
{
    return suspect_index(ctx, id) >= 0;
}

/*
 * A node that restarted and got back in before anyone noticed its death
 * (the root removed and re-added it in one change) must not be removed
 * again by a probe or suspicion aimed at its previous life: a probe sent
 * to the dead one is never answered, and its deadline would fall after
 * the re-admission.
 */
void detector_forget_life(struct membership *ctx, uint32_t id)
{
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        if (ctx->probes[i].id == id) {
            ctx->probes[i] = ctx->probes[--ctx->probe_count];
            ctx->counters.probes_outlived++;
            break;
        }
    }
    int suspect = suspect_index(ctx, id);
    if (suspect >= 0) {
        ctx->suspects[suspect] = ctx->suspects[--ctx->suspect_count];
        ctx->counters.probes_outlived++;
    }
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
        uint32_t id = machine_id_at(ctx, membership_view_select(&ctx->view, k));
        s->ids[s->count++] = id;
        if (id != ctx->self) {
            machine_send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU);
        }
    }
    s->deadline_ns = machine_deadline_after(now, detector_probe_timeout(ctx));
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
 * r*a^d + (a^d - 1)/(a - 1) .. + a^d - 1; runs and box trees: one rank interval.
 */
static uint32_t subtree_members(const struct membership *ctx, uint32_t pos, uint32_t *ids,
                                uint32_t capacity)
{
    const struct membership_view *v = &ctx->view;
    uint32_t count = 0;
    struct membership_tree_links links;
    if (!membership_tree_locate(v, &ctx->layout, ctx->config.radix, pos, &links)) {
        return 0;
    }
    if (ctx->layout.kind != MEMBERSHIP_LAYOUT_RADIX) {
        for (uint32_t k = links.rank + 1u; k < links.rank + links.subtree_size && count < capacity;
             k++) {
            ids[count++] = machine_id_at(ctx, membership_view_select(v, k));
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
            ids[count++] = machine_id_at(ctx, membership_view_select(v, (uint32_t)k));
        }
    }
    return count;
}

/*
 * A child never acked, so nothing below it was reached either: sweep its
 * subtree (probe every member) in the background and report the silent
 * ones to the root.  A partition is then peeled in a few rounds, while a
 * single dead interior node costs only probes; the load falls on the
 * parents that saw the silence, not on the root.
 */
void detector_sweep_subtree(struct membership *ctx, uint32_t child, uint64_t now,
                          struct membership_outbox *out)
{
    struct membership_sweep *sw = &ctx->sweep;
    if (!sw->active) {
        sw->count = 0;
        memset(sw->answered, 0, sizeof sw->answered);
    }
    uint32_t first = sw->count;
    sw->count += subtree_members(ctx, machine_pos_of(ctx, child), sw->ids + sw->count,
                                 MEMBERSHIP_SWEEP_MAX - sw->count);
    for (uint32_t i = first; i < sw->count; i++) {
        machine_send_simple(ctx, out, sw->ids[i], MEMBERSHIP_MSG_HOW_ARE_YOU);
    }
    if (sw->count > 0) {
        sw->active = true;
        /* The answers queue up here: the more probes, the longer the wait. */
        sw->deadline_ns = machine_deadline_after(
            now, detector_probe_timeout(ctx) * (1u + sw->count / 64u));
    }
}

static void sweep_finish(struct membership *ctx, struct membership_outbox *out)
{
    struct membership_sweep *sw = &ctx->sweep;
    sw->active = false;
    uint32_t silent[MEMBERSHIP_SWEEP_MAX];
    uint32_t count = 0;
    for (uint32_t i = 0; i < sw->count; i++) {
        bool answered = ((sw->answered[i / 64u] >> (i % 64u)) & 1u) != 0;
        if (!answered && machine_is_member(ctx, sw->ids[i])) {
            silent[count++] = sw->ids[i];
        }
    }
    if (count == 0 || !ctx->has_view) {
        return;
    }
    if (machine_is_root(ctx)) {
        for (uint32_t i = 0; i < count; i++) {
            coord_queue_failure(ctx, silent[i]);
        }
        machine_request_work(ctx, MACHINE_WORK_COORD);
        return;
    }
    struct membership_writer w;
    machine_begin_message(ctx, out, &w, MEMBERSHIP_MSG_NODE_FAILURE);
    membership_put_u32(&w, ctx->self);
    membership_put_u32(&w, 0); /* not tracked: the next round would find them again */
    membership_put_u32(&w, UINT32_MAX);
    membership_put_u16(&w, (uint16_t)count);
    membership_put_u16(&w, 0);
    for (uint32_t i = 0; i < count; i++) {
        membership_put_u32(&w, silent[i]);
    }
    membership_outbox_commit(out, machine_root_id(ctx), &w);
}

void detector_send_report(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (!ctx->has_view) {
        return;
    }
    uint32_t listed[MEMBERSHIP_SUSPECT_MAX];
    uint32_t listed_count = 0;
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
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
        ctx->report_deadline_ns = machine_deadline_after(now, ctx->config.report_timeout_ns);
        ctx->report_target = MEMBERSHIP_NONE;
        return;
    }
    uint32_t root = machine_root_id(ctx);
    bool root_suspected = suspect_index(ctx, root) >= 0;
    uint32_t target = root;
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
            coord_queue_prefix(ctx, root, ctx->self, now, out); /* our search: silent */
        }
        for (uint32_t i = 0; i < ctx->suspect_count; i++) {
            struct membership_suspect *s = &ctx->suspects[i];
            if (s->state != SUSPECT_ACKED) {
                if (root_suspected) {
                    coord_queue_failure(ctx, s->id); /* acting: our search found them silent */
                } else {
                    coord_check_own_suspicion(ctx, s->id, now, out);
                }
                s->state = SUSPECT_ACKED;
                s->recheck_ns = machine_deadline_after(now, recheck_delay(ctx));
            }
        }
        ctx->report_deadline_ns = MEMBERSHIP_NEVER;
        coord_begin_episode(ctx, now);
        machine_request_work(ctx, MACHINE_WORK_COORD);
        return;
    }
    uint32_t sequence = ++ctx->report_sequence;
    struct membership_writer w;
    machine_begin_message(ctx, out, &w,
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
    ctx->report_deadline_ns = machine_deadline_after(
        now, root_suspected ? detector_probe_timeout(ctx) : ctx->config.report_timeout_ns);
}

/* A member looks dead to us: record it, say so, and report it. */
void detector_add_suspect(struct membership *ctx, uint32_t id, uint8_t cause, uint64_t since_ns,
                        uint64_t now, struct membership_outbox *out)
{
    if (!machine_is_member(ctx, id) || id == ctx->self || suspect_index(ctx, id) >= 0) {
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
    machine_emit_failure(ctx, id, now >= since_ns ? now - since_ns : 0, cause, now, out);
    machine_request_work(ctx, MACHINE_WORK_REPORT);
}

void detector_handle_report_ack(struct membership *ctx, const struct membership_msg *msg,
                              uint64_t now)
{
    uint32_t sequence = msg->body.report_ack.sequence;
    bool any_left = false;
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        struct membership_suspect *s = &ctx->suspects[i];
        if (s->state == SUSPECT_REPORTED && s->sequence <= sequence) {
            s->state = SUSPECT_ACKED;
            s->recheck_ns = machine_deadline_after(now, recheck_delay(ctx));
        }
        any_left = any_left || s->state == SUSPECT_REPORTED;
    }
    if (!any_left) {
        ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    }
}

void detector_forget_suspect(struct membership *ctx, uint32_t id, uint64_t now)
{
    int suspect = suspect_index(ctx, id);
    if (suspect >= 0) {
        ctx->suspects[suspect] = ctx->suspects[--ctx->suspect_count];
        ctx->counters.suspicions_refuted++;
    }
    for (uint32_t i = 0; i < ctx->watch_count; i++) {
        if (ctx->watch[i].id == id) {
            ctx->watch[i].last_heard_ns = now;
            ctx->watch[i].suspected = false;
        }
    }
}

void detector_start_probe(struct membership *ctx, uint32_t id, uint64_t now,
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
    p->deadline_ns = machine_deadline_after(now, detector_probe_timeout(ctx));
    p->link_down = false;
    p->silence = false;
    machine_send_simple(ctx, out, id, MEMBERSHIP_MSG_HOW_ARE_YOU);
}

void detector_mark_link_probe(struct membership *ctx, uint32_t id)
{
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        if (ctx->probes[i].id == id) {
            ctx->probes[i].link_down = true;
        }
    }
}

/*
 * The far end of a link that went down answered by another route: a
 * network fault (lib/recovery.h), no view change.  Said (with the action
 * the policy gives it) only under a recovery policy.
 */
static void network_fault(struct membership *ctx, const struct membership_probe *p, uint64_t now,
                          struct membership_outbox *out)
{
    const struct recovery_policy *policy = &ctx->config.recovery;
    if (policy->version == 0) {
        return;
    }
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_FAILURE_DETECTED, now);
    if (e != NULL) {
        e->u.failure.who = p->id;
        e->u.failure.detector = ctx->self;
        e->u.failure.detect_ns = now - p->started_ns;
        e->u.failure.cause = MEMBERSHIP_CAUSE_PROBE;
        e->u.failure.model = FAULT_MODEL_NETWORK;
    }
    machine_emit_decision(out, now, ctx->epoch, p->id, FAULT_MODEL_NETWORK,
                          recovery_policy_action(policy, FAULT_MODEL_NETWORK));
}

/* Any message is a sign of life of its sender. */
void detector_note_alive(struct membership *ctx, uint32_t sender, bool holds_view, uint64_t now,
                         struct membership_outbox *out)
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
            if (ctx->probes[i].silence) {
                ctx->counters.suspicions_refuted++; /* asked before accused: it answered */
            }
            if (ctx->probes[i].link_down) {
                network_fault(ctx, &ctx->probes[i], now, out);
            }
            ctx->probes[i] = ctx->probes[--ctx->probe_count];
            break;
        }
    }
    /*
     * A suspect that talks to us is not dead: forget it, or its recheck
     * would report it again long after it came back (a member that rejoined
     * in place, a hang that ended) and the root would remove a live node.
     */
    int suspect = suspect_index(ctx, sender);
    if (suspect >= 0) {
        ctx->suspects[suspect] = ctx->suspects[--ctx->suspect_count];
        ctx->counters.suspicions_refuted++;
    }
    partition_census_heard(ctx, sender, holds_view);
    struct membership_sweep *sw = &ctx->sweep;
    for (uint32_t i = 0; sw->active && i < sw->count; i++) {
        if (sw->ids[i] == sender) {
            sw->answered[i / 64u] |= UINT64_C(1) << (i % 64u);
            break;
        }
    }
    /*
     * Only a view holder can take over as root: a member that lost its view
     * (partitioned, expelled, rejoining) answers probes but would drop the
     * report, and every such candidate would cost the search a timeout.
     */
    struct membership_root_search *search = &ctx->search;
    for (uint32_t i = 0; holds_view && search->active && i < search->count; i++) {
        if (search->ids[i] == sender && ((search->answered >> i) & 1u) == 0) {
            search->answered |= UINT32_C(1) << i;
            machine_request_work(ctx, MACHINE_WORK_REPORT);
        }
    }
    round_heard(ctx, sender);
}

/*
 * Silence from a torus neighbour is first-hand: one timeout.  A member
 * watched from further away (a tree neighbour) gets two: its heartbeats
 * cross other nodes, and when one of those dies the dead node's own
 * neighbours report it within one timeout, after which routes avoid it and
 * the heartbeats arrive again.  Reporting the far member at the same time
 * would expel a live node.  When torus neighbours are not watched nobody
 * else is closer, so one timeout.  That floor grows by how late the
 * member's beats come on average and by their deviation, and with our
 * local health, up to the ceiling.
 */
uint64_t detector_watch_timeout(const struct membership *ctx, const struct membership_watch *w)
{
    uint64_t floor_ns = watch_floor(ctx, w);
    uint64_t period = watch_period(ctx, w);
    uint64_t timeout = floor_ns + GAP_DEVIATIONS * w->gap_dev_ns;
    if (w->gap_mean_ns > period) {
        timeout += w->gap_mean_ns - period;
    }
    return widen(ctx, timeout, floor_ns);
}

void detector_tick_heartbeats(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    if (!ctx->has_view || ctx->config.heartbeat_ns == 0) {
        return;
    }
    if (now >= ctx->next_heartbeat_ns) {
        note_own_lateness(ctx, now - ctx->next_heartbeat_ns);
        uint32_t beat = ctx->heartbeat_count++;
        for (uint32_t i = 0; i < ctx->watch_count; i++) {
            /* A far member waits twice as long before suspecting us: every
             * other beat keeps as many beats per timeout, and halves the
             * traffic that crosses other nodes. */
            if (ctx->watch[i].far && (beat & 1u) != 0) {
                continue;
            }
            machine_send_simple(ctx, out, ctx->watch[i].id, MEMBERSHIP_MSG_HEARTBEAT);
        }
        /*
         * Torus neighbours outside our view hear from us too, more slowly:
         * that is how views that went apart (a healed partition) meet again.
         */
        if ((beat % 4u) == 0) {
            for (uint32_t i = 0; i < ctx->neighbour_count; i++) {
                if (!machine_in_view(ctx, ctx->neighbours[i])) {
                    machine_send_simple(ctx, out, ctx->neighbours[i], MEMBERSHIP_MSG_HEARTBEAT);
                }
            }
        }
        ctx->next_heartbeat_ns = machine_deadline_after(now, ctx->config.heartbeat_ns);
    }
    for (uint32_t i = 0; i < ctx->watch_count && ctx->has_view; i++) {
        struct membership_watch *w = &ctx->watch[i];
        if (!w->suspected && now - w->last_heard_ns > detector_watch_timeout(ctx, w)) {
            w->suspected = true;
            if (ctx->health_x16 > HEALTH_ONE) {
                /* We are late ourselves: ask before accusing (an answer refutes). */
                detector_start_probe(ctx, w->id, now, out);
                bool asked = suspect_index(ctx, w->id) >= 0;
                for (uint32_t k = 0; k < ctx->probe_count; k++) {
                    bool this = ctx->probes[k].id == w->id;
                    ctx->probes[k].silence = ctx->probes[k].silence || this;
                    asked = asked || this;
                }
                /* A full probe table asked nothing: the silence is looked at
                 * again next time, or it would never be (suspected stays
                 * set until the member speaks). */
                w->suspected = asked;
            } else {
                detector_add_suspect(ctx, w->id, MEMBERSHIP_CAUSE_HEARTBEAT, w->last_heard_ns,
                                     now, out);
            }
        }
    }
}

void detector_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    for (uint32_t i = 0; i < ctx->probe_count && ctx->has_view;) {
        struct membership_probe p = ctx->probes[i];
        if (p.deadline_ns <= now) {
            ctx->probes[i] = ctx->probes[--ctx->probe_count];
            detector_add_suspect(ctx, p.id, MEMBERSHIP_CAUSE_PROBE, p.started_ns, now, out);
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
        if (outstanding && target != MEMBERSHIP_NONE && target == machine_root_id(ctx) &&
            !detector_suspects(ctx, target)) {
            /*
             * The root never acknowledged, but the report or its ack may
             * have been lost on the way (routed through a node that had
             * just died): the report goes again, and the root is suspected
             * only if it does not answer a probe either (nor answers it
             * without a view: it restarted).
             */
            if (ctx->root_check == MEMBERSHIP_NONE) {
                ctx->root_check = target;
            }
            detector_start_probe(ctx, target, now, out);
        } else if (outstanding && target != MEMBERSHIP_NONE) {
            /* A candidate for next root answered a probe, then never took
             * the report: look past it. */
            detector_add_suspect(ctx, target, MEMBERSHIP_CAUSE_REPORT,
                        now - ctx->config.report_timeout_ns, now, out);
        }
        machine_request_work(ctx, MACHINE_WORK_REPORT);
    }
    if (ctx->sweep.active && ctx->sweep.deadline_ns <= now) {
        sweep_finish(ctx, out);
    }
    if (ctx->search.active && ctx->search.waiting && ctx->search.deadline_ns <= now) {
        ctx->search.waiting = false;
        machine_request_work(ctx, MACHINE_WORK_REPORT);
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
        machine_request_work(ctx, MACHINE_WORK_REPORT);
    }
}

