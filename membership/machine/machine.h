/*
 * Private to the membership state machine: what its modules share.  Not
 * for users of the machine (they include membership/membership.h).
 *
 * The machine is one context (struct membership, in membership.h) worked
 * on by modules with one purpose each, one prefix each:
 *   machine_    (machine.h, machine.c) helpers every module uses: ids and
 *               positions, sending, events, view bookkeeping; they call
 *               no module;
 *   install_    (install.c) the common tail of every installation: tree,
 *               the detector's watch set and suspects, the view event;
 *   detector_   (detector.c) watch set and heartbeats, probes, suspects,
 *               failure reports, the search for the next root, sweeps;
 *   coord_      (coordinator.c) the root: queued failures and joins,
 *               rounds as minting root, stable / T_s accounting;
 *   round_      (round.c) a member's part in a round: apply the change,
 *               forward it to the children, ack up;
 *   transfer_   (transfer.c) fetching and serving a whole view in chunks;
 *   join_       (join.c) joining and rejoining: contacts, redirects;
 *   partition_  (partition.c) the primary-component rule's census and
 *               the PARTITIONED notice;
 *   reform_     (reform.c) no view anywhere: a new one re-formed from the
 *               last completed view;
 *   membership_ (membership.c, context.c) the public entry points, the
 *               ordering of views, time; set-up and queries.
 *
 * Work that would make modules call each other in a cycle (a report starts
 * a round, which installs a view, which reports ...) is flagged with
 * machine_request_work() and run at the end of every entry point, so the
 * call graph stays acyclic (the no-recursion rule).
 */
#ifndef MEMBERSHIP_MACHINE_H
#define MEMBERSHIP_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "membership/codec.h"
#include "membership/membership.h"
#include "membership/outbox.h"

/* ------------------------------------------------------------------ */
/* machine: small helpers (inline: on every hot path)                   */
/* ------------------------------------------------------------------ */

#define MACHINE_WORK_REPORT 0x1u /* send or re-send the failure report */
#define MACHINE_WORK_COORD 0x2u  /* start the next round if root and idle */

static inline uint32_t machine_id_at(const struct membership *ctx, uint32_t pos)
{
    return membership_layout_id(&ctx->layout, pos);
}

static inline uint32_t machine_pos_of(const struct membership *ctx, uint32_t id)
{
    return membership_layout_pos(&ctx->layout, id);
}

/* In the view (or contact list) regardless of whether it is installed. */
static inline bool machine_in_view(const struct membership *ctx, uint32_t id)
{
    return id < ctx->node_count && membership_view_is_live(&ctx->view, machine_pos_of(ctx, id));
}

static inline bool machine_is_member(const struct membership *ctx, uint32_t id)
{
    return ctx->has_view && machine_in_view(ctx, id);
}

static inline bool machine_is_root(const struct membership *ctx)
{
    return ctx->has_view && (ctx->root_pos == ctx->self_pos || ctx->coord.acting);
}

static inline uint32_t machine_root_id(const struct membership *ctx)
{
    return ctx->root_pos == MEMBERSHIP_POS_NONE ? MEMBERSHIP_NONE
                                                : machine_id_at(ctx, ctx->root_pos);
}

static inline bool machine_id_in_list(const uint32_t *list, uint32_t count, uint32_t id)
{
    for (uint32_t i = 0; i < count; i++) {
        if (list[i] == id) {
            return true;
        }
    }
    return false;
}

static inline uint64_t machine_deadline_after(uint64_t now, uint64_t delay)
{
    return delay >= MEMBERSHIP_NEVER - now ? MEMBERSHIP_NEVER - 1u : now + delay;
}

static inline void machine_request_work(struct membership *ctx, uint32_t work)
{
    ctx->pending_work |= work;
}

/* ------------------------------------------------------------------ */
/* machine.c: sending, events, view bookkeeping                         */
/* ------------------------------------------------------------------ */

/* Writes this node's header (sender, incarnation, epochs) with type and flags. */
void machine_put_header(const struct membership *ctx, struct membership_writer *w,
                        uint8_t type, uint8_t flags);
/* Starts a message from this node (header filled from our view). */
void machine_begin_message(const struct membership *ctx, struct membership_outbox *out,
                           struct membership_writer *w, uint8_t type);
/* A message that is only a header. */
bool machine_send_simple(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                         uint8_t type);
/* Forwards an encoded message with this node as sender. */
bool machine_send_forward(struct membership *ctx, struct membership_outbox *out, uint32_t dest,
                          const uint8_t *payload, size_t length);
void machine_emit_failure(struct membership *ctx, uint32_t who, uint64_t detect_ns, uint8_t cause,
                          uint64_t now, struct membership_outbox *out);

void machine_history_reset(struct membership *ctx);
void machine_history_add(struct membership *ctx, uint64_t epoch);
bool machine_history_has(const struct membership *ctx, uint64_t epoch);
/* The reference view (primary rule) becomes the current view. */
void machine_ref_to_current(struct membership *ctx);
/* Every change of the live set goes through these (the reference is kept). */
bool machine_view_remove(struct membership *ctx, uint32_t id);
bool machine_view_add(struct membership *ctx, uint32_t id);
/* Learns that view `stable` completed. */
void machine_learn_stable(struct membership *ctx, uint64_t stable);
/* Root, levels and our tree links, from the view (the watch set: install_). */
void machine_locate_tree(struct membership *ctx);

/* ------------------------------------------------------------------ */
/* install.c: the common tail of every installation                     */
/* ------------------------------------------------------------------ */

/* Root, levels, our tree links and the detector's watch set, from the view. */
void install_refresh_tree(struct membership *ctx, uint64_t now);
/* Common tail of every installation (the view contains this node). */
void install_view(struct membership *ctx, uint64_t now, struct membership_outbox *out);

/* ------------------------------------------------------------------ */
/* detector.c                                                           */
/* ------------------------------------------------------------------ */

/* Forgets every watch, probe, suspect, search and sweep (no view any more). */
void detector_reset(struct membership *ctx);
void detector_rebuild_watch(struct membership *ctx, uint64_t now);
/* Silence after which a watched member is suspected (see detector.c). */
uint64_t detector_watch_timeout(const struct membership *ctx, const struct membership_watch *w);
/* The probe timeout, widened by our local health (see detector.c). */
uint64_t detector_probe_timeout(const struct membership *ctx);
/* A HEARTBEAT from sender: its gap feeds sender's timeout if we watch it. */
void detector_note_heartbeat(struct membership *ctx, uint32_t sender, uint64_t now);
/* We were stopped: no heartbeat gap or lateness measured across the pause. */
void detector_forget_beats(struct membership *ctx);
/* A new view: suspects that left it are settled, the rest reported again. */
void detector_view_changed(struct membership *ctx);
/* A view (re)admitted `id` in a new life: what we held against its old one goes. */
void detector_forget_life(struct membership *ctx, uint32_t id);
/* Any message is a sign of life of its sender (holds_view: it says it holds a view). */
void detector_note_alive(struct membership *ctx, uint32_t sender, bool holds_view, uint64_t now,
                         struct membership_outbox *out);
void detector_start_probe(struct membership *ctx, uint32_t id, uint64_t now,
                          struct membership_outbox *out);
/* This node's detector holds id for dead (reported or about to be). */
bool detector_suspects(const struct membership *ctx, uint32_t id);
/* The probe of id was started by the link to it going down. */
void detector_mark_link_probe(struct membership *ctx, uint32_t id);
void detector_add_suspect(struct membership *ctx, uint32_t id, uint8_t cause, uint64_t since_ns,
                          uint64_t now, struct membership_outbox *out);
/* Sends (or re-sends) the failure report; MACHINE_WORK_REPORT. */
void detector_send_report(struct membership *ctx, uint64_t now, struct membership_outbox *out);
void detector_handle_report_ack(struct membership *ctx, const struct membership_msg *msg,
                                uint64_t now);
/* Probes the subtree of a child that never acked; reports the silent. */
void detector_sweep_subtree(struct membership *ctx, uint32_t child, uint64_t now,
                            struct membership_outbox *out);
void detector_tick_heartbeats(struct membership *ctx, uint64_t now, struct membership_outbox *out);
void detector_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* The root refuted our report of id (it answered): no suspect; its silence counts afresh. */
void detector_forget_suspect(struct membership *ctx, uint32_t id, uint64_t now);

/* ------------------------------------------------------------------ */
/* coordinator.c                                                        */
/* ------------------------------------------------------------------ */

void coord_reset(struct membership *ctx);
/* A recovery-decision event (action may carry MEMBERSHIP_DECISION_QUARANTINED). */
void machine_emit_decision(struct membership_outbox *out, uint64_t now, uint64_t epoch,
                           uint32_t node, uint8_t model, uint8_t action);
/* For a node a change removed with (model, action): `left` for a leave, else
 * the decision under a policy, else nothing. */
void machine_emit_removal(const struct membership *ctx, struct membership_outbox *out,
                          uint64_t now, uint64_t epoch, uint32_t node, uint8_t model,
                          uint8_t action);
void coord_queue_failure(struct membership *ctx, uint32_t id);
/* Root: our own detector suspects id; a third member probes it for us first. */
void coord_check_own_suspicion(struct membership *ctx, uint32_t id, uint64_t now,
                               struct membership_outbox *out);
/* As next root: queues the members from the dead root up to us, as
 * reported by detector (us: our own finding; else checked, see coordinator.c). */
void coord_queue_prefix(struct membership *ctx, uint32_t failed_root, uint32_t detector,
                        uint64_t now, struct membership_outbox *out);
void coord_begin_episode(struct membership *ctx, uint64_t now);
/* Takes id out of the failure queue; true when it was queued. */
bool coord_unqueue_failure(struct membership *ctx, uint32_t id);
/* Root: id is queued for removal (reported, awaiting evidence or not). */
bool coord_is_queued(const struct membership *ctx, uint32_t id);
/* Any message from sender: a report awaiting evidence is refuted (sender holds
 * our view, or lags: an earlier view of ours that a change did not reach it
 * past) or confirmed (no view, or another: it went its own way, and
 * rejoins); while confirming stale reports, any answer refutes.
 * Returns the detector whose report sender just refuted, else MEMBERSHIP_NONE. */
uint32_t coord_heard(struct membership *ctx, uint32_t sender, bool holds_our_view, bool lags);
/* Starts the next round if root, idle, and changes are queued; MACHINE_WORK_COORD. */
void coord_maybe_start(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* An ack for the round this node coordinates; false when it is not one. */
bool coord_take_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                    struct membership_outbox *out);
/* A report from the stable view a failure round in flight started from. */
bool coord_takes_stale_report(const struct membership *ctx, const struct membership_header *h);
void coord_handle_report(struct membership *ctx, const struct membership_msg *msg,
                         const uint8_t *payload, size_t length, uint64_t now,
                         struct membership_outbox *out);
void coord_handle_join_request(struct membership *ctx, const struct membership_msg *msg,
                               uint64_t now, struct membership_outbox *out);
/* The round's ack deadline. */
void coord_tick_round(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* The end of the wait for answers from stale reported members. */
void coord_tick_confirm(struct membership *ctx, uint64_t now);
/* Reports whose probe expired unanswered become failures with evidence. */
void coord_tick_evidence(struct membership *ctx, uint64_t now);
/* This node was stopped: probes of reported nodes wait afresh. */
void coord_pause(struct membership *ctx, uint64_t now);

/* ------------------------------------------------------------------ */
/* round.c                                                              */
/* ------------------------------------------------------------------ */

/* Waiting for children's acks (a member's round, the root's), see membership_acks. */
/* Starts the wait: children[0..count) pending, a late one asked at most max_asks times. */
void round_acks_begin(struct membership_acks *a, uint32_t max_asks, uint64_t wait_ns,
                      uint64_t now);
/* True when sender is a child whose ack is still awaited. */
bool round_acks_is_pending(const struct membership_acks *a, uint32_t sender);
/* An ack from sender: true when it was a pending child (no longer pending). */
bool round_acks_take(struct membership_acks *a, uint32_t sender);
/*
 * True when an ack counts no more members (`reached`) than the sender's
 * subtree holds in our view; else counts it in drops_bad_ack.  Children's
 * subtrees are disjoint, so a sum of fitting acks fits ours: an ack we send
 * up always decodes, and the root's count (its majority test) is true.
 */
bool round_ack_fits(struct membership *ctx, const struct membership_msg *msg);
/* Any message from sender: a pending child asked again is alive. */
void round_acks_heard(struct membership_acks *a, uint32_t sender);
/* At the deadline: returns the children to report now, *ask those to ask again. */
uint32_t round_acks_expire(struct membership_acks *a, uint64_t probe_timeout_ns, uint64_t now,
                           uint32_t *ask);
/* Probes the children in ask, beside the change the caller sends them again. */
void round_probe_asked(struct membership *ctx, const struct membership_acks *a, uint32_t ask,
                       struct membership_outbox *out);
/* Any message from sender: for the acks this node waits for. */
void round_heard(struct membership *ctx, uint32_t sender);
/* Forwards the change (payload) to our children and waits for their acks. */
void round_start(struct membership *ctx, uint32_t parent, const uint8_t *payload, size_t length,
                 uint32_t extra_messages, uint64_t now, struct membership_outbox *out);
bool round_change_removes(const struct membership_msg *msg, uint32_t id);
/*
 * The recovery decisions a DECIDED change carries, reported once for the
 * epoch this node installed: by applying that change, or by fetching the
 * whole view and being handed the change as well.
 */
void round_report_decisions(struct membership *ctx, const struct membership_msg *msg,
                            uint64_t now, struct membership_outbox *out);
void round_handle_change(struct membership *ctx, const struct membership_msg *msg,
                         const uint8_t *payload, size_t length, uint64_t now,
                         struct membership_outbox *out);
void round_handle_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                      struct membership_outbox *out);
void round_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out);

/* ------------------------------------------------------------------ */
/* transfer.c                                                           */
/* ------------------------------------------------------------------ */

/* Fetches the whole view from source (one transfer at a time). */
void transfer_start(struct membership *ctx, uint32_t source, uint64_t now,
                    struct membership_outbox *out);
void transfer_handle_request(struct membership *ctx, const struct membership_msg *msg,
                             struct membership_outbox *out);
void transfer_handle_chunk(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                           struct membership_outbox *out);
/* A lagging view fetched; a silent source asked again, then given up. */
void transfer_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out);

/* ------------------------------------------------------------------ */
/* join.c                                                               */
/* ------------------------------------------------------------------ */

/* Drops the view and asks contacts to be let in. */
void join_enter(struct membership *ctx, uint64_t now, struct membership_outbox *out, bool rejoin);
/* We are out of the view (by: who said so): a new life, and rejoin. */
void join_expel(struct membership *ctx, uint64_t now, struct membership_outbox *out, uint32_t by,
                uint64_t epoch);
void join_handle_redirect(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                          struct membership_outbox *out);
void join_handle_det_ack(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                         struct membership_outbox *out);
void join_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* A view holder within reach: remembered, asked after the seeds as soon as the pace allows. */
void join_heard(struct membership *ctx, uint32_t id, uint64_t now);
/* We are in (a view installed): the join is over. */
void join_done(struct membership *ctx, uint64_t now);
void join_handle_refused(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                         struct membership_outbox *out);
/* Welcomed, but the view fetched does not have us: back off before asking again. */
void join_left_out(struct membership *ctx, uint64_t now);

/* ------------------------------------------------------------------ */
/* relay.c: a member out of reach, through a third one                   */
/* ------------------------------------------------------------------ */

/* No relays (no view any more). */
void relay_reset(struct membership *ctx);
/* A new view: entries whose peer or relay left it end. */
void relay_view_changed(struct membership *ctx);
/* The relay that reaches peer for us, MEMBERSHIP_NONE: direct. */
uint32_t relay_for(const struct membership *ctx, uint32_t peer);
/* A message came from sender directly: it is within reach again. */
void relay_heard_direct(struct membership *ctx, uint32_t sender);
/* Root: a report of peer by detector was refuted; tell detector to reach peer through us. */
void relay_offer(struct membership *ctx, struct membership_outbox *out, uint32_t detector,
                 uint32_t peer);
void relay_handle_refuted(struct membership *ctx, const struct membership_msg *msg, uint64_t now);
/* Root: a member to probe member through (a torus neighbour of it first), not
 * avoid; MEMBERSHIP_NONE if there is none. */
uint32_t relay_pick_helper(const struct membership *ctx, uint32_t member, uint32_t avoid);
/* Root: member is told to reach us through helper, and probed that way; keep:
 * from now on we reach it through helper too. */
void relay_probe_through(struct membership *ctx, struct membership_outbox *out, uint32_t member,
                         uint32_t helper, bool keep);
/*
 * An envelope: sent on when we are its relay; when it is for us, true with
 * the inner message, which the caller handles as from its origin.
 */
bool relay_receive(struct membership *ctx, const struct membership_msg *msg,
                   struct membership_outbox *out, const uint8_t **inner, size_t *inner_length);
/* Our messages in out for peers out of reach go to their relays, in envelopes. */
void relay_wrap_outbox(struct membership *ctx, struct membership_outbox *out);

/* ------------------------------------------------------------------ */
/* partition.c                                                          */
/* ------------------------------------------------------------------ */

/* Probes every member before a minority verdict. */
void partition_census_start(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* A member answered (holds_view: it says it holds a view). */
void partition_census_heard(struct membership *ctx, uint32_t sender, bool holds_view);
/* A recent census found a majority within reach: changes may go ahead. */
bool partition_census_vouches(const struct membership *ctx, uint64_t now);
/* A round reached no majority: the last census no longer vouches. */
void partition_census_expire(struct membership *ctx);
/* Next census batch or the verdict; true when the census finished. */
bool partition_tick_census(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* The direct partition notices, a batch per call. */
void partition_tick_notify(struct membership *ctx, uint64_t now, struct membership_outbox *out);
void partition_handle(struct membership *ctx, const struct membership_msg *msg,
                      const uint8_t *payload, size_t length, uint64_t now,
                      struct membership_outbox *out);

/* ------------------------------------------------------------------ */
/* reform.c: no view anywhere, a new one re-formed                      */
/* ------------------------------------------------------------------ */

/* Starts, runs and ends the rounds of asking the last completed view. */
void reform_tick(struct membership *ctx, uint64_t now, struct membership_outbox *out);
/* When reform_tick has work, MEMBERSHIP_NEVER: none. */
uint64_t reform_deadline(const struct membership *ctx);
/* Any message (holds_view: its sender holds a view, which wins: join it). */
void reform_heard(struct membership *ctx, uint32_t sender, bool holds_view, uint64_t now);
void reform_handle(struct membership *ctx, const struct membership_msg *msg, uint64_t now,
                   struct membership_outbox *out);

#endif /* MEMBERSHIP_MACHINE_H */
