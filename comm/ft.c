/*
 * The failure semantics of issue 14 (comm/DESIGN.md, "Failure semantics"):
 * modes, the detail call, failure acknowledgment, rebuild and shrink,
 * revoke, agree, adoption of spares.  With CONFIG_COMM_FT 0 only ABORT
 * is left: the application's recovery calls return UNSUPPORTED at their
 * top and the rest is dead code the compiler drops (comm/DESIGN.md,
 * "Compiled out").
 */
#include "comm/internal.h"

#include <string.h>

#include "lib/le.h"
#include "lib/recovery.h"
#include "membership/tree.h"

static void open_tree_ahead(struct comm *ctx, const struct comm_communicator *x, uint64_t now_ns,
                            struct comm_outbox *out);
static uint64_t attach_offer(const struct comm *ctx, struct comm_collective *c);
static enum comm_error rebuild_changes(const struct comm *ctx, const struct comm_communicator *x,
                                       uint8_t mode, uint64_t *decision);

/* ---- modes and state ---- */

void ft_comm_init(const struct comm *ctx, struct comm_communicator *c)
{
    c->mode = ctx->config.comm_mode;
    c->msg_mode = ctx->config.msg_mode;
    c->strict = ctx->config.strict_collectives;
    c->revoked = false;
    c->abort_told = false;
    c->recovery_seq = 0;
    c->failure_epoch = 0;
    c->acked = 0;
    c->failed_log_count = 0;
    c->excluded_count = 0;
    c->edit_count = 0;
    c->decision_held = false;
    c->decision_taught = false;
    c->decision_view = 0;
    c->abstain_due = false;
    c->serve_due = false;
    c->abstain_queued = false;
    c->only_left = false;
    c->attach_taken = false;
    c->attach_wait = false;
    c->attach_req = COMM_NONE16;
    c->attach_new_comm = NULL;
    /* none yet: slot 0 is WORLD, and a reused slot's old value names a
     * stranger, whose completed collectives would end our serving */
    c->produced = COMM_NONE16;
}

void ft_member_failed(struct comm *ctx, uint16_t slot, uint32_t rank, bool left,
                      struct comm_outbox *out)
{
    struct comm_communicator *c = &ctx->comms[slot];
    if (left) {
        /* An orderly exit: the calls that name it fail (peer_fail_node,
         * match_fail_node), collectives until the rebuild; the live pairs go
         * on and no receive from any source waits for an acknowledgment. */
        return;
    }
    if (c->failed_log_count < CONFIG_COMM_FT_MAX_EDITS) {
        c->failed_log[c->failed_log_count] = rank;
    }
    c->failed_log_count++;
    if (c->msg_mode == COMM_MSG_NOP) {
        /* FT-MPI NOP: every communication on it fails until the rebuild,
         * those already waiting too (a rank blocked on a live peer that
         * went to the rebuild would wait for ever). */
        match_fail_comm(ctx, slot, COMM_ERR_PROC_FAILED, out);
        peer_fail_comm(ctx, slot, COMM_ERR_PROC_FAILED, out);
        return;
    }
    /* ULFM: a receive from anyone could have been meant to match the failed
     * rank's message: it fails until the failure is acknowledged. */
    match_fail_posted(ctx, slot, true, COMM_ERR_PROC_FAILED, out);
}

/* The kept decision served in the background, when a slot is free. */
static void ft_serve(struct comm *ctx, uint16_t slot)
{
    struct comm_communicator *c = &ctx->comms[slot];
    if (!c->in_use || !c->decision_held || c->rank == COMM_RANK_NONE ||
        coll_round_running(ctx, slot, c->decision_kind, c->decision_seq)) {
        c->serve_due = false;
        return;
    }
    if (coll_start_round(ctx, slot, c->decision_kind, c->decision_seq, COMM_MODE_SHRINK, NULL,
                         NULL, NULL) == COMM_ERR_OK) {
        c->serve_due = false;
    } /* else again when a slot comes free */
}

void ft_serve_kept(struct comm *ctx, uint16_t slot)
{
    ctx->comms[slot].serve_due = true;
    ctx->ft_background = true;
    ft_serve(ctx, slot);
}

void ft_view_changed(struct comm *ctx, uint64_t left)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *c = &ctx->comms[i];
        if (c->in_use && c->decision_held && c->decision_taught && c->decision_view == left) {
            ft_serve_kept(ctx, i);
        }
    }
}

void ft_detected(struct comm *ctx, uint16_t slot, uint64_t epoch, uint64_t now_ns,
                 struct comm_outbox *out)
{
    struct comm_communicator *c = &ctx->comms[slot];
    c->failure_epoch = epoch;
    if ((c->mode == COMM_MODE_ABORT || !CONFIG_COMM_FT) && !c->abort_told &&
        c->rank != COMM_RANK_NONE &&
        !c->released) { /* the application freed it: no concern of the job's */
        struct comm_event *e = comm_outbox_event(out, COMM_EVENT_ABORT, now_ns);
        if (e != NULL) {
            e->comm = comm_handle_of(ctx, slot);
            e->count = c->failed;
            e->epoch = epoch;
            c->abort_told = true; /* once per communicator (a lost event is told again) */
        }
    }
    if (!CONFIG_COMM_FT) {
        return; /* no round was ever decided */
    }
    /* Members still in a round this node has finished may need its decision
     * again: serve it in the new view (once a slot is free). */
    ft_serve_kept(ctx, slot);
    if (c->mode != COMM_MODE_ABORT && c->rank != COMM_RANK_NONE) {
        open_tree_ahead(ctx, c, now_ns, out);
    }
}

bool ft_nop_halted(const struct comm_communicator *c)
{
    return c->state == COMM_STATE_DETECTED && c->msg_mode == COMM_MSG_NOP && !c->only_left;
}

enum comm_error ft_p2p_check(const struct comm *ctx, const struct comm_communicator *c,
                             uint32_t rank, bool send)
{
    (void)send;
    if (!CONFIG_COMM_FT) { /* ABORT, NOP: nothing once a member failed */
        return c->state == COMM_STATE_DETECTED ? COMM_ERR_PROC_FAILED : COMM_ERR_OK;
    }
    if (c->revoked) {
        return COMM_ERR_REVOKED;
    }
    if (rank != COMM_ANY_SOURCE && c->edit_count != 0 &&
        group_node(ctx, c, rank) == COMM_NODE_NONE) {
        return COMM_ERR_INVALID_RANK; /* a BLANK gap (only an edit makes one) */
    }
    if (ft_nop_halted(c)) {
        return COMM_ERR_PROC_FAILED; /* NOP: nothing until rebuilt */
    }
    if (rank == COMM_ANY_SOURCE && c->failed_log_count > c->acked) {
        return COMM_ERR_PROC_FAILED; /* ULFM: until failure_ack */
    }
    return COMM_ERR_OK;
}

enum comm_error ft_collective_check(const struct comm_communicator *c)
{
    if (CONFIG_COMM_FT && c->revoked) {
        return COMM_ERR_REVOKED;
    }
    if (c->state == COMM_STATE_DETECTED) {
        return COMM_ERR_PROC_FAILED; /* until rebuilt */
    }
    return COMM_ERR_OK;
}

/* ---- the application's calls ---- */

enum comm_error comm_set_mode(struct comm *ctx, uint32_t comm, enum comm_mode mode,
                              enum comm_msg_mode msg_mode)
{
    struct comm_communicator *c = comm_slot_of(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if ((unsigned)mode > COMM_MODE_REBUILD || (unsigned)msg_mode > COMM_MSG_CONT) {
        return COMM_ERR_ARG;
    }
    if (!CONFIG_COMM_FT && (mode != COMM_MODE_ABORT || msg_mode != COMM_MSG_NOP)) {
        return COMM_ERR_UNSUPPORTED;
    }
    c->mode = (uint8_t)mode;
    c->msg_mode = (uint8_t)msg_mode;
    return COMM_ERR_OK;
}

/* Insertion sort of a short list (at most CONFIG_COMM_FT_MAX_EDITS). */
static void sort_short(uint32_t *list, uint32_t count)
{
    for (uint32_t i = 1; i < count; i++) {
        uint32_t v = list[i];
        uint32_t j = i;
        for (; j > 0 && list[j - 1u] > v; j--) {
            list[j] = list[j - 1u];
        }
        list[j] = v;
    }
}

enum comm_error comm_failed_ranks(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                  uint32_t max, uint32_t *count, uint64_t *epoch)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if ((max > 0 && ranks == NULL) || count == NULL) {
        return COMM_ERR_ARG;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < c->size; r++) {
        if (group_member_out(ctx, c, r)) {
            if (n < max) {
                ranks[n] = r;
            }
            n++;
        }
    }
    *count = n;
    if (epoch != NULL) {
        *epoch = c->failure_epoch;
    }
    return COMM_ERR_OK;
}

enum comm_error comm_failure_ack(struct comm *ctx, uint32_t comm)
{
    if (!CONFIG_COMM_FT) {
        return COMM_ERR_UNSUPPORTED;
    }
    struct comm_communicator *c = comm_slot_of(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    c->acked = c->failed_log_count;
    return COMM_ERR_OK;
}

enum comm_error comm_failure_get_acked(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                       uint32_t max, uint32_t *count)
{
    if (!CONFIG_COMM_FT) {
        return COMM_ERR_UNSUPPORTED;
    }
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if ((max > 0 && ranks == NULL) || count == NULL) {
        return COMM_ERR_ARG;
    }
    uint32_t logged = c->acked < CONFIG_COMM_FT_MAX_EDITS ? c->acked : CONFIG_COMM_FT_MAX_EDITS;
    uint32_t sorted[CONFIG_COMM_FT_MAX_EDITS];
    memcpy(sorted, c->failed_log, logged * sizeof sorted[0]);
    sort_short(sorted, logged);
    for (uint32_t i = 0; i < logged && i < max; i++) {
        ranks[i] = sorted[i];
    }
    *count = c->acked; /* beyond the log's room: counted, not listed */
    return COMM_ERR_OK;
}


/* ---- recovery rounds (rebuild, shrink, agree) ---- */

#define ROUND_EPOCH_MASK 0xfffffu

/* The view's part of a round's tag: the epoch folded to 20 bits, every bit
 * counting.  (It was the epoch's low 20 bits, which in the membership's
 * epochs are the deciding root's position and incarnation, the same in
 * every view one root makes: a round's messages from the view before then
 * matched the round started again in the new one.) */
static uint32_t round_view(uint64_t epoch)
{
    uint64_t folded = epoch ^ (epoch >> 20) ^ (epoch >> 40) ^ (epoch >> 60);
    return (uint32_t)(folded & ROUND_EPOCH_MASK);
}

uint32_t ft_round_tag_base(const struct comm *ctx, uint8_t seq)
{
    return ((uint32_t)seq << 24) | (round_view(ctx->epoch) << 4);
}

bool ft_round_tag_current(const struct comm *ctx, uint32_t tag)
{
    return ((tag >> 4) & ROUND_EPOCH_MASK) == round_view(ctx->epoch);
}

/* The rank of the index-th live member, the out ranks ascending. */
static uint32_t live_rank(const uint32_t *outs, uint32_t out_count, uint32_t index)
{
    uint32_t rank = index;
    for (uint32_t j = 0; j < out_count && outs[j] <= rank; j++) {
        rank++;
    }
    return rank;
}

/* The tree over x's members in the view, in rank order, rooted at the
 * first (every member computes the same from the same view): our links
 * and the node ids of our children (nodes[j]) and parent (nodes[RADIX],
 * COMM_NODE_NONE at the root).  O(log) when no member failed; else a
 * position counts only the out ranks below it: O(failed) a round or
 * revoke, where a scan of every member made a recovery O(size^2) over
 * the job (a listed group, or more failures than a rebuild can hold,
 * still scan). */
static void live_tree(const struct comm *ctx, const struct comm_communicator *x,
                      struct membership_tree_links *links, uint32_t *count, uint32_t *me,
                      uint32_t *nodes)
{
    if (x->failed == 0) {
        /* every member live (the strict agree's usual case): no scan */
        *count = x->size;
        *me = x->rank;
        membership_tree_runs(*count, CONFIG_COMM_TREE_RADIX, *me, links);
        nodes[CONFIG_COMM_TREE_RADIX] = links->parent == MEMBERSHIP_POS_NONE
                                            ? COMM_NODE_NONE
                                            : group_node(ctx, x, links->parent);
        for (uint32_t j = 0; j < links->child_count; j++) {
            nodes[j] = group_node(ctx, x, links->children[j]);
        }
        return;
    }
    uint32_t outs[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t out_count = group_out_ranks(ctx, x, outs, CONFIG_COMM_FT_MAX_EDITS);
    if (out_count != COMM_DEAD_UNKNOWN) {
        *count = x->size - out_count;
        *me = 0;
        if (x->rank < x->size) {
            uint32_t below = 0;
            while (below < out_count && outs[below] < x->rank) {
                below++;
            }
            if (below == out_count || outs[below] != x->rank) {
                *me = x->rank - below; /* we are live: our place among the live */
            }
        }
        membership_tree_runs(*count, CONFIG_COMM_TREE_RADIX, *me, links);
        nodes[CONFIG_COMM_TREE_RADIX] =
            links->parent == MEMBERSHIP_POS_NONE
                ? COMM_NODE_NONE
                : group_node(ctx, x, live_rank(outs, out_count, links->parent));
        for (uint32_t j = 0; j < links->child_count; j++) {
            nodes[j] = group_node(ctx, x, live_rank(outs, out_count, links->children[j]));
        }
        return;
    }
    *count = 0;
    *me = 0;
    for (uint32_t r = 0; r < x->size; r++) {
        if (!group_member_out(ctx, x, r)) {
            if (r == x->rank) {
                *me = *count;
            }
            (*count)++;
        }
    }
    membership_tree_runs(*count, CONFIG_COMM_TREE_RADIX, *me, links);
    nodes[CONFIG_COMM_TREE_RADIX] = COMM_NODE_NONE;
    uint32_t index = 0;
    for (uint32_t r = 0; r < x->size; r++) {
        uint32_t node = group_node(ctx, x, r);
        if (group_member_out(ctx, x, r)) {
            continue;
        }
        if (index == links->parent) {
            nodes[CONFIG_COMM_TREE_RADIX] = node;
        }
        for (uint32_t j = 0; j < links->child_count; j++) {
            if (index == links->children[j]) {
                nodes[j] = node;
            }
        }
        index++;
    }
}

/*
 * The view removed members of x: every round on it from now on (a cut
 * strict collective's result round, the rebuild, agree) and the first
 * collectives of a shrunk or blanked successor run over the live members'
 * tree, whose edges a removal moves nearly everywhere (ranks shift).  A
 * session is opened by an OPEN/ACCEPT round trip before its first DATA, so
 * opening those to the new parent and children now, while the view is
 * still spreading, takes that round trip off every level of the first
 * round's reduce and broadcast.  Nothing changes for what is sent:
 * sessions are the same, only opened sooner.
 */
static void open_tree_ahead(struct comm *ctx, const struct comm_communicator *x, uint64_t now_ns,
                            struct comm_outbox *out)
{
    struct membership_tree_links links;
    uint32_t count;
    uint32_t me;
    uint32_t nodes[COMM_COLL_SUBS];
    live_tree(ctx, x, &links, &count, &me, nodes);
    if (count == 0) {
        return;
    }
    peer_open_ahead(ctx, nodes[CONFIG_COMM_TREE_RADIX], now_ns, out);
    for (uint32_t j = 0; j < links.child_count; j++) {
        peer_open_ahead(ctx, nodes[j], now_ns, out);
    }
    if (x->mode == COMM_MODE_REBUILD && nodes[CONFIG_COMM_TREE_RADIX] == COMM_NODE_NONE) {
        /* The root tells each spare it pairs with a gap (STEP_ADOPT_SEND);
         * under REBUILD the resume waits for the spare, and a session
         * between the root and a spare is new: the same pairing now. */
        uint64_t decision[3u + CONFIG_COMM_FT_MAX_EDITS] = {0};
        if (rebuild_changes(ctx, x, COMM_MODE_REBUILD, decision) == COMM_ERR_OK) {
            for (uint32_t i = 0; i < decision[2]; i++) {
                uint32_t node = (uint32_t)decision[3u + i];
                if (node < ctx->config.node_count) {
                    peer_open_ahead(ctx, node, now_ns, out);
                }
            }
        }
    }
}

void ft_round_setup(struct comm *ctx, struct comm_collective *c, uint64_t *offer)
{
    const struct comm_communicator *x = &ctx->comms[c->comm];
    struct membership_tree_links links;
    uint32_t count;
    uint32_t me;
    live_tree(ctx, x, &links, &count, &me, c->nodes);
    c->root = 0;
    c->size = count;
    c->vrank = me;
    c->parent = links.parent == MEMBERSHIP_POS_NONE ? COMM_RANK_NONE : links.parent;
    c->child_count = links.child_count;
    for (uint32_t j = 0; j < links.child_count; j++) {
        c->children[j] = links.children[j];
    }
    c->subtree = links.subtree_size;
    c->tag_base = ft_round_tag_base(ctx, c->round_seq);
    c->count = ft_offer_words(c);
    c->send = (const uint8_t *)offer;
    memset(offer, 0, FT_OFFER_WORDS * 8u);
    offer[FT_OFFER_FLAGS] = x->failed_log_count > x->acked ? FT_FLAG_UNACKED : 0u;
    offer[FT_OFFER_AND] = c->flag != NULL && c->kind == COLL_AGREE ? *c->flag : UINT64_MAX;
    ft_contexts_taken(ctx, &offer[FT_OFFER_CONTEXTS]);
    offer[FT_OFFER_CONTEXT_GEN] = ctx->next_context_gen;
    c->attach_offered = false;
    if (c->kind == COLL_RESULT) {
        offer[FT_OFFER_FLAGS] |= attach_offer(ctx, c);
    }
    if (x->decision_held && x->decision_kind == c->kind && x->decision_seq == c->round_seq) {
        memcpy(&offer[FT_OFFER_DECISION], x->decision, sizeof x->decision); /* re-offered */
    }
}

static uint64_t word(const uint8_t *le, uint32_t i)
{
    return le_get_u64(le + 8u * i);
}

/* ---- the rebuild a result round decides (DESIGN.md, "The rebuild rides
 * on the result round") ---- */

/* x's kept decision is a result round's PROC_FAILED that carries the
 * rebuild of the application's next call. */
static bool attached(const struct comm_communicator *x)
{
    return x->decision_held && x->decision_kind == COLL_RESULT &&
           ft_decision_carries(x->decision);
}

/* ... and it is still to be applied here (a released communicator's
 * never is: nobody asks for it). */
static bool attach_pending(const struct comm_communicator *x)
{
    return x->in_use && !x->released && !x->attach_taken && attached(x);
}

/* ... and it is the rebuild of the call numbered seq, in mode. */
static bool attach_for(const struct comm_communicator *x, uint8_t seq, uint8_t mode)
{
    return attach_pending(x) &&
           (uint8_t)(((x->decision[2] >> FT_ATTACH_SEQ_SHIFT) & 0xffffu) - 1u) == seq &&
           (uint8_t)(x->decision[2] >> FT_ATTACH_MODE_SHIFT) == mode;
}

void ft_contexts_taken(const struct comm *ctx, uint64_t *used)
{
    memcpy(used, ctx->contexts_used, sizeof ctx->contexts_used);
    for (uint16_t i = 0; CONFIG_COMM_FT && i < CONFIG_COMM_MAX_COMMS; i++) {
        const struct comm_communicator *x = &ctx->comms[i];
        if (attach_pending(x)) {
            uint8_t context = (uint8_t)x->decision[1];
            used[context / 64u] |= UINT64_C(1) << (context % 64u);
        }
    }
}

bool ft_context_pending(const struct comm *ctx, uint8_t context, uint16_t gen)
{
    for (uint16_t i = 0; CONFIG_COMM_FT && i < CONFIG_COMM_MAX_COMMS; i++) {
        const struct comm_communicator *x = &ctx->comms[i];
        if (attach_pending(x) && (uint8_t)x->decision[1] == context &&
            (uint16_t)(x->decision[1] >> 8) == gen) {
            return true;
        }
    }
    return false;
}

/* Our result round's offer: VOID, or the recovery number of the rebuild
 * the application will ask for next (or asked for, and waits on this
 * round).  VOID where that call could not take the decision, or where a
 * creation could pick a context meanwhile: a mode without rebuild, a
 * released communicator, a round serving a result, another collective or
 * round of the application's on x (its rebuild's own round, an agree, a
 * strict outcome agree: its numbers move), another creation in flight. */
static uint64_t attach_offer(const struct comm *ctx, struct comm_collective *c)
{
    const struct comm_communicator *x = &ctx->comms[c->comm];
    bool can = x->mode != COMM_MODE_ABORT && !x->released && x->rank != COMM_RANK_NONE &&
               (!c->background || (c->abstain && x->attach_wait)) &&
               (!ctx->creating || x->attach_wait);
    for (uint16_t k = 0; can && k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
        const struct comm_collective *o = &ctx->colls[k];
        /* a result handed over only drains its sends: the application's
         * call is done, its number taken */
        can = o == c || o->state == COLL_FREE || o->comm != c->comm || o->background ||
              o->handed;
    }
    if (!can) {
        return FT_FLAG_VOID;
    }
    c->attach_offered = true;
    uint64_t seq = x->attach_wait ? x->attach_seq : x->recovery_seq;
    return seq << FT_ATTACH_SHIFT | ((~seq & 0xffu) << (FT_ATTACH_SHIFT + 8u));
}

uint32_t ft_offer_words(const struct comm_collective *c)
{
    /* A result round's offers have room for any result: a member that
     * abstains (ft_abstain) does not know the collective's length. */
    uint32_t entries = c->kind == COLL_REBUILD  ? CONFIG_COMM_FT_MAX_EDITS
                       : c->kind == COLL_RESULT ? COMM_FT_RESULT_WORDS
                                                : 0u;
    return FT_OFFER_DECISION + 3u + entries;
}

void ft_combine(uint8_t *acc, const uint8_t *in, uint32_t words)
{
    le_put_u64(acc + 8u * FT_OFFER_FLAGS, word(acc, FT_OFFER_FLAGS) | word(in, FT_OFFER_FLAGS));
    le_put_u64(acc + 8u * FT_OFFER_AND, word(acc, FT_OFFER_AND) & word(in, FT_OFFER_AND));
    for (uint32_t w = 0; w < COMM_CONTEXT_WORDS; w++) {
        uint32_t i = FT_OFFER_CONTEXTS + w;
        le_put_u64(acc + 8u * i, word(acc, i) | word(in, i));
    }
    if (word(in, FT_OFFER_CONTEXT_GEN) > word(acc, FT_OFFER_CONTEXT_GEN)) {
        le_put_u64(acc + 8u * FT_OFFER_CONTEXT_GEN, word(in, FT_OFFER_CONTEXT_GEN));
    }
    /* A decision offered wins; of two, the later (there is only ever one:
     * a root decides anew only when no member holds one). */
    if (word(in, FT_OFFER_DECISION) > word(acc, FT_OFFER_DECISION)) {
        memcpy(acc + 8u * FT_OFFER_DECISION, in + 8u * FT_OFFER_DECISION,
               (words - FT_OFFER_DECISION) * 8u);
    }
}

/* A spare free to adopt: live, not in x, not paired in this decision yet. */
static bool spare_free(const struct comm *ctx, const struct comm_communicator *x,
                       const uint64_t *decision, uint32_t count, uint32_t node)
{
    if (!node_is_live(ctx, node) || group_rank(ctx, x, node) != COMM_RANK_NONE) {
        return false;
    }
    for (uint32_t i = 0; i < count; i++) {
        if ((uint32_t)decision[3u + i] == node) {
            return false;
        }
    }
    return true;
}

/* The rebuild's group changes: x's members out of the view, in rank order,
 * each removed (SHRINK), a gap (BLANK) or, under REBUILD, adopted by the
 * rank's own node when it is back in the view in a new life (restarted:
 * ABARIS's RESTART), else, when the job mirrors checkpoints, by the spare
 * that mirrors the rank (PROMOTE: it holds the rank's checkpoints), else by
 * the next free spare, lowest node id first (gaps when none is left, or
 * x's base is a map a spare could not be told). */
static enum comm_error rebuild_changes(const struct comm *ctx, const struct comm_communicator *x,
                                       uint8_t mode, uint64_t *decision)
{
    uint32_t count = 0;
    uint32_t spare = ctx->config.world_size;
    for (uint32_t r = 0; r < x->size; r++) {
        if (!group_member_out(ctx, x, r)) {
            continue;
        }
        if (count == CONFIG_COMM_FT_MAX_EDITS) {
            return COMM_ERR_COUNT;
        }
        uint32_t node = mode == COMM_MODE_SHRINK ? COMM_NODE_NONE : COMM_GAP_NODE;
        uint32_t own = group_node(ctx, x, r);
        if (mode == COMM_MODE_REBUILD && x->group == GROUP_RANGE && own < ctx->config.node_count &&
            comm_restart_expected(ctx, own) && node_is_live(ctx, own)) {
            node = own; /* failed and back: its rank returns to it */
        } else if (mode == COMM_MODE_REBUILD && x->group == GROUP_RANGE) {
            uint32_t index;
            uint32_t mirror = ctx->config.mirrors
                                  ? recovery_mirror_node(r, x->size, ctx->config.node_count,
                                                         CONFIG_CHECKPOINT_MIRROR_RANKS, &index)
                                  : UINT32_MAX;
            if (mirror < ctx->config.node_count &&
                spare_free(ctx, x, decision, count, mirror)) {
                node = mirror;
            } else {
                while (spare < ctx->config.node_count &&
                       !spare_free(ctx, x, decision, count, spare)) {
                    spare++;
                }
                if (spare < ctx->config.node_count) {
                    node = spare++;
                }
            }
        }
        decision[3u + count++] = ((uint64_t)r << 32) | node;
    }
    decision[2] = count;
    return COMM_ERR_OK;
}

/* A result round's root deciding PROC_FAILED: the rebuild of the
 * application's next call too, when every participant offered the same
 * call (attach_offer) and its decision holds what a rebuild round would
 * decide now (the new context, free at every participant, the group
 * changes per x's mode).  Not when the changes would not fit, or, under
 * REBUILD, when a failed member's node is to restart: the application
 * waits for it to come back (ABARIS's RESTART), and its rebuild then
 * gives it its rank. */
static void attach_rebuild(const struct comm *ctx, const struct comm_collective *c,
                           const uint8_t *acc, uint64_t *decision)
{
    const struct comm_communicator *x = &ctx->comms[c->comm];
    uint64_t flags = word(acc, FT_OFFER_FLAGS);
    uint64_t seq = (flags >> FT_ATTACH_SHIFT) & 0xffu;
    uint64_t not_seq = (flags >> (FT_ATTACH_SHIFT + 8u)) & 0xffu;
    if (COMM_FT_RESULT_WORDS < CONFIG_COMM_FT_MAX_EDITS || x->mode == COMM_MODE_ABORT ||
        (flags & FT_FLAG_VOID) != 0 || (seq & not_seq) != 0 || (seq | not_seq) != 0xffu) {
        return;
    }
    uint64_t used[COMM_CONTEXT_WORDS];
    for (uint32_t w = 0; w < COMM_CONTEXT_WORDS; w++) {
        used[w] = word(acc, FT_OFFER_CONTEXTS + w);
    }
    int context = coll_lowest_free_context(used);
    bool fits = context >= 0 && rebuild_changes(ctx, x, x->mode, decision) == COMM_ERR_OK;
    for (uint32_t i = 0; fits && x->mode == COMM_MODE_REBUILD && i < decision[2]; i++) {
        uint32_t own = group_node(ctx, x, (uint32_t)(decision[3u + i] >> 32));
        fits = own >= ctx->config.node_count || !comm_restart_expected(ctx, own);
    }
    if (!fits) {
        memset(&decision[2], 0, 8u * (1u + CONFIG_COMM_FT_MAX_EDITS));
        return;
    }
    decision[1] = (uint32_t)context | ((uint32_t)word(acc, FT_OFFER_CONTEXT_GEN) & 0xffffffu) << 8;
    decision[2] |= (seq + 1u) << FT_ATTACH_SEQ_SHIFT | (uint64_t)x->mode << FT_ATTACH_MODE_SHIFT;
}

void ft_decide(struct comm *ctx, struct comm_collective *c, uint8_t *acc)
{
    if (word(acc, FT_OFFER_DECISION) != 0) {
        return; /* a member learnt a decision before the view changed: keep it */
    }
    uint64_t decision[COMM_FT_DECISION_WORDS];
    memset(decision, 0, sizeof decision);
    decision[0] = ctx->epoch + 1u;
    enum comm_error error = COMM_ERR_OK;
    if (c->kind == COLL_RESULT) {
        error = COMM_ERR_PROC_FAILED; /* no survivor had the result */
        attach_rebuild(ctx, c, acc, decision);
    } else if (c->kind == COLL_AGREE) {
        if ((word(acc, FT_OFFER_FLAGS) & FT_FLAG_UNACKED) != 0) {
            error = COMM_ERR_PROC_FAILED;
        }
        decision[1] = (uint32_t)word(acc, FT_OFFER_AND);
    } else {
        uint64_t used[COMM_CONTEXT_WORDS];
        for (uint32_t w = 0; w < COMM_CONTEXT_WORDS; w++) {
            used[w] = word(acc, FT_OFFER_CONTEXTS + w);
        }
        int context = coll_lowest_free_context(used);
        if (context < 0) {
            error = COMM_ERR_BUSY;
        } else {
            /* the context id, and the generation of its new life (24 bits
             * here, 16 on the wire) */
            decision[1] = (uint32_t)context |
                          ((uint32_t)word(acc, FT_OFFER_CONTEXT_GEN) & 0xffffffu) << 8;
            error = rebuild_changes(ctx, &ctx->comms[c->comm], c->rebuild_mode, decision);
        }
    }
    decision[1] |= (uint64_t)error << 32;
    for (uint32_t i = 0; i < ft_offer_words(c) - FT_OFFER_DECISION; i++) {
        le_put_u64(acc + 8u * (FT_OFFER_DECISION + i), decision[i]);
    }
}

/* A rebuilt group's lists: x's with a decision's changes applied. */
struct rebuilt_lists {
    uint16_t excluded_count;
    uint16_t edit_count;
    uint32_t excluded[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t edit_base[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t edit_node[CONFIG_COMM_FT_MAX_EDITS];
};

/* comm_sorted_add for the 16-bit counts, capped by the edits. */
static bool sorted_insert(uint32_t *list, uint16_t *count, uint32_t value)
{
    uint32_t n = *count;
    bool fits = comm_sorted_add(list, &n, CONFIG_COMM_FT_MAX_EDITS, value);
    *count = (uint16_t)n;
    return fits;
}

static void edit_remove(struct rebuilt_lists *y, uint32_t base)
{
    uint32_t j = 0;
    while (j < y->edit_count && y->edit_base[j] != base) {
        j++;
    }
    if (j == y->edit_count) {
        return;
    }
    uint32_t tail = y->edit_count - j - 1u;
    memmove(&y->edit_base[j], &y->edit_base[j + 1u], tail * sizeof y->edit_base[0]);
    memmove(&y->edit_node[j], &y->edit_node[j + 1u], tail * sizeof y->edit_node[0]);
    y->edit_count--;
}

static bool edit_set(struct rebuilt_lists *y, uint32_t base, uint32_t node)
{
    edit_remove(y, base);
    if (y->edit_count >= CONFIG_COMM_FT_MAX_EDITS) {
        return false;
    }
    uint32_t j = 0;
    while (j < y->edit_count && y->edit_base[j] < base) {
        j++;
    }
    uint32_t tail = y->edit_count - j;
    memmove(&y->edit_base[j + 1u], &y->edit_base[j], tail * sizeof y->edit_base[0]);
    memmove(&y->edit_node[j + 1u], &y->edit_node[j], tail * sizeof y->edit_node[0]);
    y->edit_base[j] = base;
    y->edit_node[j] = node;
    y->edit_count++;
    return true;
}

/* The group the decision makes of x (a function of x and the decision
 * alone: every member, and the root telling a spare, get the same);
 * false when it holds more than CONFIG_COMM_FT_MAX_EDITS edits. */
static bool rebuilt_group(const struct comm_communicator *x, const uint64_t *decision,
                          struct rebuilt_lists *y)
{
    y->excluded_count = x->excluded_count;
    y->edit_count = x->edit_count;
    memcpy(y->excluded, x->excluded, sizeof y->excluded);
    memcpy(y->edit_base, x->edit_base, sizeof y->edit_base);
    memcpy(y->edit_node, x->edit_node, sizeof y->edit_node);
    bool fits = true;
    for (uint32_t i = 0; i < (uint32_t)decision[2] && fits; i++) {
        uint32_t rank = (uint32_t)(decision[3u + i] >> 32);
        uint32_t node = (uint32_t)decision[3u + i];
        uint32_t base = group_base_of_rank(x, rank);
        if (node == COMM_NODE_NONE) {
            edit_remove(y, base);
            fits = sorted_insert(y->excluded, &y->excluded_count, base);
        } else {
            fits = edit_set(y, base, node);
        }
    }
    return fits;
}

/* A rebuilt (or adopted) communicator's own state, once its group is set. */
static void settle_group(struct comm *ctx, struct comm_communicator *y, uint64_t epoch)
{
    y->size = y->extent - y->excluded_count;
    y->rank = group_rank(ctx, y, ctx->config.node_id);
    y->epoch = epoch;
    y->failed = group_count_failed(ctx, y);
    uint32_t gaps = 0;
    for (uint32_t j = 0; j < y->edit_count; j++) {
        gaps += y->edit_node[j] == COMM_GAP_NODE;
    }
    /* gaps are the BLANK group's shape, not failures of it */
    y->state = y->failed > gaps ? COMM_STATE_DETECTED : COMM_STATE_RECOVERED;
}

/* A communicator made DETECTED (a member failed after the decision, in a
 * view this node installed before applying it) runs no collective: parts
 * of its first ones that members ahead of us sent wait here for nothing. */
static void drop_if_detected(struct comm *ctx, const struct comm_communicator *y)
{
    if (y->state == COMM_STATE_DETECTED) {
        match_drop_context(ctx, y->context, false, NULL);
    }
}

/* The rebuilt communicator of x from the decision: x's group with its
 * changes, the decided context. */
static enum comm_error build_rebuilt(struct comm *ctx, uint16_t x_slot, const uint64_t *decision,
                                     uint32_t *handle)
{
    const struct comm_communicator *x = &ctx->comms[x_slot];
    uint8_t context = (uint8_t)decision[1];
    uint32_t context_gen = (uint32_t)(decision[1] >> 8) & 0xffffffu;
    if ((ctx->contexts_used[context / 64u] >> (context % 64u)) & 1u) {
        return COMM_ERR_BUSY; /* cannot happen: the context was free at every member */
    }
    struct rebuilt_lists lists;
    if (!rebuilt_group(x, decision, &lists)) {
        return COMM_ERR_COUNT;
    }
    const uint8_t *list = x->group == GROUP_LIST ? (const uint8_t *)&ctx->map[x->first] : NULL;
    uint16_t slot = comm_create(ctx, context, context_gen, list, x->first, x->extent);
    if (slot == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    x = &ctx->comms[x_slot];
    struct comm_communicator *y = &ctx->comms[slot];
    y->mode = x->mode;
    y->msg_mode = x->msg_mode;
    y->strict = x->strict;
    y->excluded_count = lists.excluded_count;
    y->edit_count = lists.edit_count;
    memcpy(y->excluded, lists.excluded, sizeof y->excluded);
    memcpy(y->edit_base, lists.edit_base, sizeof y->edit_base);
    memcpy(y->edit_node, lists.edit_node, sizeof y->edit_node);
    settle_group(ctx, y, decision[0] - 1u);
    drop_if_detected(ctx, y);
    ctx->contexts_used[context / 64u] |= UINT64_C(1) << (context % 64u);
    ctx->comms[x_slot].produced = slot;
    *handle = comm_handle_of(ctx, slot);
    return COMM_ERR_OK;
}

/* A decision newer than the one a background round serves: the root that
 * made it had an offer from every member of its view, so none is still in
 * the older round, and that round would hold its slot for nothing (the
 * decision now kept could not be served). */
static void stop_stale_serving(struct comm *ctx, uint16_t comm)
{
    const struct comm_communicator *x = &ctx->comms[comm];
    if (coll_background_any(ctx)) {
        coll_stop_background(ctx, comm, x->decision_kind, x->decision_seq, false);
    }
}

/* A round decided on slot: every live member of it offered, so each had
 * made it, and the decision that made it (kept on the communicator it
 * was rebuilt from) is known everywhere, as after a collective completed
 * on it (ft_collective_done).  A communicator rebuilt from a decision the
 * result round carried may be rebuilt in turn before any collective
 * completes on it (its result round carrying that rebuild too): without
 * this the first decision stayed kept for good, was served after every
 * later view change, and its background rounds, which nobody joined any
 * more, held collective slots a later round needed. */
static void maker_decisions_known(struct comm *ctx, uint16_t slot)
{
    bool background = coll_background_any(ctx);
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *x = &ctx->comms[i];
        if (!x->in_use || i == slot || x->produced != slot || !x->decision_held ||
            (x->decision_kind != COLL_REBUILD && !attached(x))) {
            continue;
        }
        x->decision_held = false;
        x->serve_due = false;
        if (background) {
            coll_stop_background(ctx, i, 0u, 0u, false);
        }
    }
}

enum comm_error ft_apply(struct comm *ctx, struct comm_collective *c, const uint8_t *offer)
{
    maker_decisions_known(ctx, c->comm);
    struct comm_communicator *x = &ctx->comms[c->comm];
    uint64_t decision[COMM_FT_DECISION_WORDS];
    memset(decision, 0, sizeof decision);
    for (uint32_t i = 0; i < ft_offer_words(c) - FT_OFFER_DECISION; i++) {
        decision[i] = word(offer, FT_OFFER_DECISION + i);
    }
    enum comm_error decided = (enum comm_error)(uint32_t)(decision[1] >> 32);
    /* An abstention learns a decision only for the rebuild it carries: the
     * application's call waiting on it applies it (start_rebuild). */
    bool carries = c->kind == COLL_RESULT && ft_decision_carries(decision);
    if ((c->abstain && !carries) || (c->background && !c->abstain)) {
        return decided; /* nothing of ours in it: the decision kept here stays */
    }
    bool known = x->decision_held && x->decision_kind == c->kind && x->decision_seq == c->round_seq;
    if (!known) {
        x->attach_taken = false; /* a new decision: its rebuild not made yet */
    }
    x->decision_held = true;
    x->decision_kind = c->kind;
    x->decision_seq = c->round_seq;
    x->decision_taught = true;
    x->decision_view = ctx->epoch;
    memcpy(x->decision, decision, sizeof decision);
    x->decision_words = COMM_FT_DECISION_WORDS;
    stop_stale_serving(ctx, c->comm);
    enum comm_error error = decided;
    if (c->background || known) {
        return error; /* applied when first learnt (an abstention: at the call) */
    }
    if (c->kind == COLL_AGREE) {
        *c->flag = (uint32_t)decision[1];
        return error;
    }
    if (c->kind == COLL_RESULT) {
        if (error == COMM_ERR_OK) {
            if (decision[2] != c->result_count) {
                return COMM_ERR_MISMATCH;
            }
            for (uint32_t i = 0; i < c->result_count; i++) {
                memcpy(c->recv + 8u * i, &decision[3u + i], 8u); /* a survivor's result */
            }
        }
        return error;
    }
    *c->new_comm = COMM_NULL;
    if (error != COMM_ERR_OK) {
        return error;
    }
    return build_rebuilt(ctx, c->comm, decision, c->new_comm);
}

bool ft_adopt_message(struct comm *ctx, struct comm_collective *c, uint32_t i, uint8_t *message,
                      uint32_t *node)
{
    const struct comm_communicator *x = &ctx->comms[c->comm];
    /* the decision of this round: a rebuild's, or a result round's that
     * carries the application's rebuild (told at once, not when applied) */
    if (!x->decision_held || x->decision_kind != c->kind || x->decision_seq != c->round_seq ||
        !((c->kind == COLL_REBUILD && (uint32_t)(x->decision[1] >> 32) == COMM_ERR_OK) ||
          (c->kind == COLL_RESULT && attached(x))) ||
        i >= (uint32_t)x->decision[2]) {
        return false;
    }
    uint32_t spare = (uint32_t)x->decision[3u + i];
    struct rebuilt_lists y;
    if (spare >= COMM_GAP_NODE || x->group != GROUP_RANGE || !rebuilt_group(x, x->decision, &y)) {
        return false;
    }
    uint32_t context = (uint8_t)x->decision[1];
    uint32_t context_gen = (uint16_t)(x->decision[1] >> 8);
    uint64_t epoch = x->decision[0] - 1u;
    memset(message, 0, FT_ADOPT_WORDS * 4u);
    uint32_t fixed[FT_ADOPT_FIXED] = {
        context | context_gen << 16, x->first, x->extent,
        y.excluded_count, y.edit_count, (uint32_t)x->mode | (uint32_t)x->msg_mode << 8 |
                                            (uint32_t)x->strict << 16,
        (uint32_t)epoch, (uint32_t)(epoch >> 32),
    };
    for (uint32_t w = 0; w < FT_ADOPT_FIXED; w++) {
        le_put_u32(message + 4u * w, fixed[w]);
    }
    uint8_t *lists = message + 4u * FT_ADOPT_FIXED;
    for (uint32_t j = 0; j < CONFIG_COMM_FT_MAX_EDITS; j++) {
        le_put_u32(lists + 4u * j, j < y.excluded_count ? y.excluded[j] : 0u);
        le_put_u32(lists + 4u * (CONFIG_COMM_FT_MAX_EDITS + j),
                   j < y.edit_count ? y.edit_base[j] : 0u);
        le_put_u32(lists + 4u * (2u * CONFIG_COMM_FT_MAX_EDITS + j),
                   j < y.edit_count ? y.edit_node[j] : 0u);
    }
    *node = spare;
    return true;
}

/* Strictly increasing, each below limit. */
static bool sorted_below(const uint32_t *list, uint32_t count, uint32_t limit)
{
    for (uint32_t i = 0; i < count; i++) {
        if (list[i] >= limit || (i > 0 && list[i] <= list[i - 1u])) {
            return false;
        }
    }
    return true;
}

enum comm_error ft_adopt_apply(struct comm *ctx, const uint8_t *message, uint32_t length,
                               uint32_t *new_comm)
{
    if (length != FT_ADOPT_WORDS * 4u) {
        ctx->counters.adoptions_refused++;
        return COMM_ERR_ARG;
    }
    uint32_t f[FT_ADOPT_FIXED];
    for (uint32_t w = 0; w < FT_ADOPT_FIXED; w++) {
        f[w] = le_get_u32(message + 4u * w);
    }
    uint32_t excluded[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t bases[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t nodes[CONFIG_COMM_FT_MAX_EDITS];
    const uint8_t *lists = message + 4u * FT_ADOPT_FIXED;
    for (uint32_t j = 0; j < CONFIG_COMM_FT_MAX_EDITS; j++) {
        excluded[j] = le_get_u32(lists + 4u * j);
        bases[j] = le_get_u32(lists + 4u * (CONFIG_COMM_FT_MAX_EDITS + j));
        nodes[j] = le_get_u32(lists + 4u * (2u * CONFIG_COMM_FT_MAX_EDITS + j));
    }
    uint32_t context = f[0] & 0xffffu, first = f[1], extent = f[2], nx = f[3], ne = f[4],
             modes = f[5];
    /* a spare made no communicator before: any generation is past its own */
    uint32_t context_gen = f[0] >> 16;
    uint64_t epoch = (uint64_t)f[6] | (uint64_t)f[7] << 32;
    bool valid = context < COMM_CONTEXT_IDS && context != 0 && extent > 0 &&
                 first < ctx->config.node_count && extent <= ctx->config.node_count - first &&
                 nx <= CONFIG_COMM_FT_MAX_EDITS && ne <= CONFIG_COMM_FT_MAX_EDITS &&
                 nx < extent && (modes & 0xffu) <= COMM_MODE_REBUILD &&
                 ((modes >> 8) & 0xffu) <= COMM_MSG_CONT && (modes >> 16) <= 1u &&
                 sorted_below(excluded, nx, extent) && sorted_below(bases, ne, extent);
    for (uint32_t j = 0; valid && j < ne; j++) {
        valid = nodes[j] < ctx->config.node_count || nodes[j] == COMM_GAP_NODE;
    }
    if (!valid || ((ctx->contexts_used[context / 64u] >> (context % 64u)) & 1u) != 0) {
        ctx->counters.adoptions_refused++;
        return COMM_ERR_ARG;
    }
    uint16_t slot = comm_create(ctx, (uint8_t)context, context_gen, NULL, first, extent);
    if (slot == COMM_NONE16) {
        ctx->counters.adoptions_refused++;
        return COMM_ERR_BUSY;
    }
    struct comm_communicator *y = &ctx->comms[slot];
    y->mode = (uint8_t)modes;
    y->msg_mode = (uint8_t)(modes >> 8);
    y->strict = (modes >> 16) != 0;
    y->excluded_count = (uint16_t)nx;
    y->edit_count = (uint16_t)ne;
    memcpy(y->excluded, excluded, sizeof excluded);
    memcpy(y->edit_base, bases, sizeof bases);
    memcpy(y->edit_node, nodes, sizeof nodes);
    settle_group(ctx, y, epoch);
    if (y->rank == COMM_RANK_NONE) {
        y->in_use = false; /* not adopted by it */
        ctx->counters.adoptions_refused++;
        return COMM_ERR_NOT_MEMBER;
    }
    drop_if_detected(ctx, y);
    ctx->contexts_used[context / 64u] |= UINT64_C(1) << (context % 64u);
    *new_comm = comm_handle_of(ctx, slot);
    return COMM_ERR_OK;
}

void ft_collective_done(struct comm *ctx, uint16_t slot, int keep_seq)
{
    struct comm_communicator *done = &ctx->comms[slot];
    /* every member took part: nobody waits in a result round */
    done->abstain_due = false;
    done->serve_due = false;
    done->abstain_queued = false;
    if (done->state == COMM_STATE_RECOVERED) {
        done->state = COMM_STATE_OK;
    }
    /* Every member of the communicator took part: each had the decision
     * that made it (or was made on it) before. */
    bool background = coll_background_any(ctx);
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *x = &ctx->comms[i];
        if (!x->in_use || (i != slot && x->produced != slot)) {
            continue;
        }
        bool own = i == slot && x->decision_seq == keep_seq;
        if (x->decision_held && !own &&
            (i == slot || x->decision_kind == COLL_REBUILD || attached(x))) {
            x->decision_held = false;
        }
        if (background) {
            /* background rounds for what is known everywhere end */
            coll_stop_background(ctx, i, x->decision_held ? x->decision_kind : 0u,
                                 x->decision_seq, true);
        }
    }
}

void ft_result_done(struct comm *ctx, const struct comm_collective *c, uint8_t seq)
{
    struct comm_communicator *x = &ctx->comms[c->comm];
    uint32_t count = c->kind == COLL_ALLREDUCE ? c->count : 0u;
    x->decision_held = true;
    x->decision_kind = COLL_RESULT;
    x->decision_seq = seq;
    x->attach_taken = false;
    /* not taught by a round: members still in the collective go to a
     * result round only after a failure, whose view serves it (ft_detected) */
    x->decision_taught = false;
    /* Zero what the last decision used past this one's words, not the
     * whole 2 KiB: every strict allreduce and barrier comes here. */
    uint32_t words = 3u + count;
    if (x->decision_words > words) {
        memset(&x->decision[words], 0, 8u * (x->decision_words - words));
    }
    x->decision_words = (uint16_t)words;
    x->decision[0] = ctx->epoch + 1u;
    x->decision[1] = 0;
    x->decision[2] = count;
    for (uint32_t i = 0; i < count; i++) {
        memcpy(&x->decision[3u + i], c->recv + 8u * i, 8u);
    }
    stop_stale_serving(ctx, c->comm);
}

/* A member that rebuilds x leaves its collectives: members blocked in a
 * strict allreduce or barrier on x that it never called wait, in its
 * result round, for every survivor's offer.  It abstains from that round
 * (its next collective number) in the background: no result, so the root
 * decides PROC_FAILED unless a survivor had one, and those members go on
 * to the rebuild.  Nothing waits on an abstention nobody needs: the round
 * ends among the abstainers, or at the next collective completed on x. */
static void ft_abstain(struct comm *ctx, uint16_t slot)
{
    struct comm_communicator *x = &ctx->comms[slot];
    uint8_t seq = (uint8_t)x->collective_seq;
    if (!x->in_use || !x->strict || x->state != COMM_STATE_DETECTED ||
        coll_round_running(ctx, slot, COLL_RESULT, seq)) {
        x->abstain_due = false;
        return;
    }
    if (coll_start_round(ctx, slot, COLL_RESULT, seq, 0, NULL, NULL, NULL) == COMM_ERR_OK) {
        x->collective_seq++; /* a later call here must not reuse it */
        x->abstain_due = false;
    } /* else no slot free yet (a background round): again when one is */
}

bool ft_background_waiting(const struct comm *ctx)
{
    if (!ctx->ft_background) {
        return false;
    }
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].serve_due) {
            return true;
        }
    }
    return false;
}

/* The kept decision's rebuild made here: the new communicator in *new_comm
 * and in request index's status, which completes (opening the sessions to
 * the new tree's neighbours). */
static void attach_apply(struct comm *ctx, uint16_t slot, uint16_t index, uint32_t *new_comm,
                         uint64_t now_ns, struct comm_outbox *out)
{
    enum comm_error e = build_rebuilt(ctx, slot, ctx->comms[slot].decision, new_comm);
    ctx->comms[slot].attach_taken = true;
    ctx->requests[index].status.comm = e == COMM_ERR_OK ? *new_comm : COMM_NULL;
    request_complete(ctx, index, e, out);
    if (e == COMM_ERR_OK) {
        coll_open_comm_tree(ctx, *new_comm, now_ns, out);
    }
}

/* The application's rebuild that waited on x's result rounds: once none
 * runs here, it takes the rebuild their decision carries, or (none, or
 * not for this call) starts its own round, as it would have at the call,
 * abstaining again from x's next collective (its offer VOID: other
 * members' calls wait on that round, and must run their own rounds too). */
static void attach_resolve(struct comm *ctx, uint16_t slot, uint64_t now_ns,
                           struct comm_outbox *out)
{
    struct comm_communicator *x = &ctx->comms[slot];
    if ((x->abstain_due && (uint8_t)x->collective_seq == x->attach_round) ||
        (x->abstain_queued && x->abstain_seq == x->attach_round) ||
        coll_round_running(ctx, slot, COLL_RESULT, x->attach_round)) {
        return; /* its decision is not known here yet */
    }
    if (attach_for(x, x->attach_seq, x->attach_mode)) {
        x->attach_wait = false;
        ctx->creating = false;
        attach_apply(ctx, slot, x->attach_req, x->attach_new_comm, now_ns, out);
        return;
    }
    if (coll_start_waiting_rebuild(ctx, slot) != COMM_ERR_OK) {
        return; /* no slot yet: again when one comes free */
    }
    x->attach_wait = false;
    x->abstain_due = true;
    ft_abstain(ctx, slot);
}

void ft_attach_fail(struct comm *ctx, uint16_t comm, enum comm_error error,
                    struct comm_outbox *out)
{
    struct comm_communicator *x = &ctx->comms[comm];
    if (!CONFIG_COMM_FT || !x->attach_wait) {
        return;
    }
    x->attach_wait = false;
    ctx->creating = false;
    request_complete(ctx, x->attach_req, error, out);
}

void ft_background_due(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    if (!ctx->ft_background) {
        return; /* the fast path: nothing failed since a scan found nothing */
    }
    ctx->counters.ft_scans++;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].serve_due) {
            ft_serve(ctx, i);
        }
    }
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].abstain_due) {
            ft_abstain(ctx, i);
        }
    }
    if (ft_background_waiting(ctx)) {
        return; /* served first */
    }
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].abstain_queued) {
            coll_start_abstention(ctx, i);
        }
    }
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].attach_wait) {
            attach_resolve(ctx, i, now_ns, out);
        }
    }
    /* after the work above, which may have set flags anywhere */
    bool left = false;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        const struct comm_communicator *c = &ctx->comms[i];
        left = left || c->serve_due || c->abstain_due || c->abstain_queued || c->attach_wait;
    }
    ctx->ft_background = left;
}

static enum comm_error start_rebuild(struct comm *ctx, uint32_t comm, uint8_t mode,
                                     uint64_t now_ns, struct comm_outbox *out,
                                     uint32_t *new_comm, uint32_t *request)
{
    *request = COMM_REQUEST_NULL;
    ctx->last_now_ns = now_ns;
    if (!CONFIG_COMM_FT) {
        return COMM_ERR_UNSUPPORTED;
    }
    struct comm_communicator *c;
    enum comm_error e = comm_usable(ctx, comm, &c);
    if (e != COMM_ERR_OK) {
        return e;
    }
    if (new_comm == NULL || mode == COMM_MODE_ABORT) {
        return COMM_ERR_ARG; /* ABORT: the job ends, nothing is rebuilt */
    }
    uint16_t slot = (uint16_t)(c - ctx->comms);
    if (ctx->creating || coll_attach_offered(ctx, slot)) {
        return COMM_ERR_BUSY;
    }
    *new_comm = COMM_NULL;
    if (attach_for(c, c->recovery_seq, mode)) {
        /* the result round that failed the cut collective decided this
         * call's rebuild too: no round of its own */
        uint16_t index = request_alloc_app(ctx, COMM_REQ_COLLECTIVE);
        if (index == COMM_NONE16) {
            return COMM_ERR_BUSY;
        }
        ctx->requests[index].comm = slot;
        *request = request_handle(ctx, index);
        c->recovery_seq++;
        attach_apply(ctx, slot, index, new_comm, now_ns, out);
        comm_finish_call(ctx, now_ns, out);
        return COMM_ERR_OK;
    }
    bool failed_result = c->decision_held && c->decision_kind == COLL_RESULT &&
                         (uint32_t)(c->decision[1] >> 32) == COMM_ERR_PROC_FAILED;
    if (c->state == COMM_STATE_DETECTED && c->strict && mode == c->mode && !failed_result) {
        /* The result round of c's cut collective (the application's own,
         * or this call's abstention from the collective it skipped) may
         * decide this call's rebuild: every member offers this call's
         * number (attach_offer).  The call waits for that round.  (Not
         * once a result round decided PROC_FAILED here: that was the one,
         * and it carried no rebuild for this call.) */
        uint16_t index = request_alloc_app(ctx, COMM_REQ_COLLECTIVE);
        if (index == COMM_NONE16) {
            return COMM_ERR_BUSY;
        }
        uint8_t round = (uint8_t)c->collective_seq;
        bool own = false;
        for (uint16_t k = 0; k < CONFIG_COMM_MAX_COLLECTIVES; k++) {
            const struct comm_collective *o = &ctx->colls[k];
            if (o->state != COLL_FREE && o->comm == slot && o->kind == COLL_RESULT &&
                !o->background) {
                round = o->round_seq;
                own = true;
            }
        }
        c->attach_wait = true;
        c->attach_seq = c->recovery_seq;
        c->attach_mode = mode;
        c->attach_round = round;
        c->attach_req = index;
        c->attach_new_comm = new_comm;
        ctx->creating = true; /* one creation at a time picks a context */
        c->abstain_due = true;
        ctx->ft_background = true;
        ft_abstain(ctx, slot);
        if (own || c->abstain_due || coll_round_running(ctx, slot, COLL_RESULT, round)) {
            ctx->requests[index].comm = slot;
            *request = request_handle(ctx, index);
            c->recovery_seq++;
            comm_finish_call(ctx, now_ns, out);
            return COMM_ERR_OK;
        }
        c->attach_wait = false; /* no result round: its own round, as before */
        ctx->creating = false;
        request_release(ctx, index);
    }
    e = coll_start_round(ctx, slot, COLL_REBUILD, c->recovery_seq, mode, NULL, new_comm, request);
    if (e == COMM_ERR_OK) {
        c->abstain_due = true;
        ctx->ft_background = true;
        ft_abstain(ctx, slot);
    }
    if (e == COMM_ERR_OK) {
        c->recovery_seq++;
        comm_finish_call(ctx, now_ns, out);
    }
    return e;
}

enum comm_error comm_irebuild(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                              struct comm_outbox *out, uint32_t *new_comm, uint32_t *request)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    return start_rebuild(ctx, comm, c == NULL ? COMM_MODE_SHRINK : c->mode, now_ns, out, new_comm,
                         request);
}

enum comm_error comm_ishrink(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                             struct comm_outbox *out, uint32_t *new_comm, uint32_t *request)
{
    return start_rebuild(ctx, comm, COMM_MODE_SHRINK, now_ns, out, new_comm, request);
}

enum comm_error comm_iagree(struct comm *ctx, uint32_t comm, uint32_t *flag, uint64_t now_ns,
                            struct comm_outbox *out, uint32_t *request)
{
    *request = COMM_REQUEST_NULL;
    ctx->last_now_ns = now_ns;
    if (!CONFIG_COMM_FT) {
        return COMM_ERR_UNSUPPORTED;
    }
    struct comm_communicator *c;
    enum comm_error e = comm_usable(ctx, comm, &c);
    if (e != COMM_ERR_OK) {
        return e;
    }
    if (flag == NULL) {
        return COMM_ERR_ARG;
    }
    uint16_t slot = (uint16_t)(c - ctx->comms);
    e = coll_start_round(ctx, slot, COLL_AGREE, c->recovery_seq, 0, flag, NULL, request);
    if (e == COMM_ERR_OK) {
        c->recovery_seq++;
        comm_finish_call(ctx, now_ns, out);
    }
    return e;
}

bool comm_expect_restart(struct comm *ctx, uint32_t node)
{
    if (comm_restart_expected(ctx, node)) {
        return true;
    }
    if (ctx->restarting_count == CONFIG_COMM_FT_MAX_EDITS || node >= ctx->config.node_count) {
        return false;
    }
    ctx->restarting[ctx->restarting_count++] = node;
    return true;
}

bool comm_member_left(struct comm *ctx, uint32_t node)
{
    for (uint32_t i = 0; i < ctx->leaving_count; i++) {
        if (ctx->leaving[i] == node) {
            return true;
        }
    }
    if (ctx->leaving_count == CONFIG_COMM_FT_MAX_EDITS || node >= ctx->config.node_count) {
        return false;
    }
    ctx->leaving[ctx->leaving_count++] = node;
    return true;
}

/* Was the node's removal a leave?  Each leave is taken once. */
bool ft_take_leave(struct comm *ctx, uint32_t node)
{
    for (uint32_t i = 0; i < ctx->leaving_count; i++) {
        if (ctx->leaving[i] == node) {
            ctx->leaving[i] = ctx->leaving[--ctx->leaving_count];
            return true;
        }
    }
    return false;
}

void ft_forget_leaves(struct comm *ctx)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < ctx->leaving_count; i++) {
        if (!node_is_live(ctx, ctx->leaving[i])) {
            ctx->leaving[kept++] = ctx->leaving[i];
        }
    }
    ctx->leaving_count = kept;
}

bool comm_restart_expected(const struct comm *ctx, uint32_t node)
{
    for (uint32_t i = 0; i < ctx->restarting_count; i++) {
        if (ctx->restarting[i] == node) {
            return true;
        }
    }
    return false;
}

bool comm_restart_awaited(const struct comm *ctx, uint32_t comm, bool gone_only)
{
    uint32_t size = comm_size(ctx, comm);
    for (uint32_t r = 0; r < size; r++) {
        if (comm_rank_state_of(ctx, comm, r) == COMM_RANK_OK) {
            continue;
        }
        uint32_t node = comm_node_of(ctx, comm, r);
        if (node < ctx->config.node_count && comm_restart_expected(ctx, node) &&
            (!gone_only || !node_is_live(ctx, node))) {
            return true;
        }
    }
    return false;
}

enum comm_error comm_iadopt(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out,
                            uint32_t *new_comm, uint32_t *request)
{
    *request = COMM_REQUEST_NULL;
    ctx->last_now_ns = now_ns;
    if (!CONFIG_COMM_FT) {
        return COMM_ERR_UNSUPPORTED;
    }
    if (new_comm == NULL ||
        (ctx->config.node_id < ctx->config.world_size && !ctx->config.restarted)) {
        return COMM_ERR_ARG; /* only a spare or a restarted node is adopted */
    }
    if (!ctx->has_view) {
        return COMM_ERR_NO_VIEW;
    }
    *new_comm = COMM_NULL;
    enum comm_error e = coll_start_round(ctx, 0, COLL_ADOPT, 0, 0, NULL, new_comm, request);
    if (e == COMM_ERR_OK) {
        comm_finish_call(ctx, now_ns, out);
    }
    return e;
}

/* ---- revoke ---- */

static void send_revoke(struct comm *ctx, const struct comm_communicator *c, uint32_t node,
                        uint8_t flags, struct comm_outbox *out)
{
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_REVOKE;
    f.flags = flags;
    f.sender_incarnation = ctx->incarnation;
    uint16_t slot = peer_find(ctx, node);
    f.receiver_incarnation = slot == COMM_NONE16 ? 0u : ctx->peers[slot].incarnation;
    f.context = c->context;
    f.context_gen = c->context_gen;
    f.source_rank = group_node(ctx, c, c->revoker);
    f.seq = c->revoker;
    if (comm_outbox_put(out, node, ctx->epoch, &f)) {
        ctx->counters.frames_sent++;
    } else {
        comm_count_lost_frame(ctx); /* sent again on the timer */
    }
}

/* Tells every tree neighbour that has not answered. */
static void revoke_flood(struct comm *ctx, struct comm_communicator *c, uint64_t now_ns,
                         struct comm_outbox *out)
{
    for (uint32_t j = 0; j < c->revoke_targets_count; j++) {
        if ((c->revoke_acked & (1u << j)) == 0) {
            send_revoke(ctx, c, c->revoke_targets[j], 0, out);
        }
    }
    c->revoke_due_ns = now_ns + peer_rto(ctx, c->revoke_tries);
}

static void revoke_retarget(struct comm *ctx, struct comm_communicator *c)
{
    struct membership_tree_links links;
    uint32_t count;
    uint32_t me;
    uint32_t nodes[COMM_COLL_SUBS];
    live_tree(ctx, c, &links, &count, &me, nodes);
    c->revoke_targets_count = 0;
    for (uint32_t j = 0; j < links.child_count; j++) {
        c->revoke_targets[c->revoke_targets_count++] = nodes[j];
    }
    if (nodes[CONFIG_COMM_TREE_RADIX] != COMM_NODE_NONE) {
        c->revoke_targets[c->revoke_targets_count++] = nodes[CONFIG_COMM_TREE_RADIX];
    }
    c->revoke_acked = 0;
    c->revoke_tries = 0;
    ctx->ft_revoking = true;
}

static void revoke_ack_from(struct comm_communicator *c, uint32_t node)
{
    for (uint32_t j = 0; j < c->revoke_targets_count; j++) {
        if (c->revoke_targets[j] == node) {
            c->revoke_acked |= (uint8_t)(1u << j);
        }
    }
}

static bool revoke_waiting(const struct comm_communicator *c)
{
    return c->in_use && c->revoked &&
           c->revoke_acked != (uint8_t)((1u << c->revoke_targets_count) - 1u);
}

/* ctx->ft_revoking again: false once no flood waits for an answer. */
static void revoking_update(struct comm *ctx)
{
    bool waiting = false;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        waiting = waiting || revoke_waiting(&ctx->comms[i]);
    }
    ctx->ft_revoking = waiting;
}

/* Revokes communicator slot here (once): what is pending on it fails
 * REVOKED (recovery rounds go on), and the news goes to the neighbours. */
static void revoke_local(struct comm *ctx, uint16_t slot, uint32_t revoker, uint32_t told_by,
                         uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_communicator *c = &ctx->comms[slot];
    if (c->revoked) {
        return;
    }
    c->revoked = true;
    c->revoker = revoker;
    struct comm_event *e =
        c->released ? NULL : comm_outbox_event(out, COMM_EVENT_REVOKED, now_ns);
    if (e != NULL) {
        e->comm = comm_handle_of(ctx, slot);
        e->node = revoker;
        e->epoch = ctx->epoch;
    }
    match_fail_posted(ctx, slot, false, COMM_ERR_REVOKED, out);
    coll_fail_comm(ctx, slot, COMM_ERR_REVOKED, out);
    revoke_retarget(ctx, c);
    revoke_ack_from(c, told_by); /* it knows */
    revoke_flood(ctx, c, now_ns, out);
    revoking_update(ctx); /* nobody left to tell: no scans */
}

enum comm_error comm_revoke(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                            struct comm_outbox *out)
{
    ctx->last_now_ns = now_ns;
    if (!CONFIG_COMM_FT) {
        return COMM_ERR_UNSUPPORTED;
    }
    struct comm_communicator *c;
    enum comm_error e = comm_usable(ctx, comm, &c);
    if (e != COMM_ERR_OK) {
        return e;
    }
    revoke_local(ctx, (uint16_t)(c - ctx->comms), c->rank, COMM_NODE_NONE, now_ns, out);
    comm_finish_call(ctx, now_ns, out);
    return COMM_ERR_OK;
}

void ft_on_revoke(struct comm *ctx, uint32_t source, const struct comm_frame *frame,
                  uint64_t now_ns, struct comm_outbox *out)
{
    uint16_t slot = comm_by_context(ctx, (uint8_t)frame->context);
    struct comm_communicator *c = slot == COMM_NONE16 ? NULL : &ctx->comms[slot];
    if (c != NULL && c->context_gen != frame->context_gen) {
        /* a freed communicator's revoke, flooded late: not this one's */
        ctx->counters.drops_stale_context++;
        ctx->counters.revokes_refused++;
        return;
    }
    /* Only a member may tell another, of a revoke by a member. */
    if (c == NULL || c->rank == COMM_RANK_NONE || frame->seq >= c->size ||
        group_node(ctx, c, frame->seq) != frame->source_rank ||
        group_rank(ctx, c, source) == COMM_RANK_NONE) {
        ctx->counters.revokes_refused++;
        return;
    }
    if ((frame->flags & COMM_FLAG_REVOKE_ACK) != 0) {
        revoke_ack_from(c, source);
        revoking_update(ctx); /* the last answer ends the scans */
        return;
    }
    revoke_local(ctx, slot, frame->seq, source, now_ns, out);
    revoke_ack_from(c, source);
    send_revoke(ctx, c, source, COMM_FLAG_REVOKE_ACK, out);
}

void ft_view_installed(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *c = &ctx->comms[i];
        if (c->in_use && c->revoked && c->rank != COMM_RANK_NONE) {
            revoke_retarget(ctx, c); /* the tree changed: tell the new neighbours */
            revoke_flood(ctx, c, now_ns, out);
        }
    }
}

void ft_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    if (!ctx->ft_revoking) {
        return;
    }
    ctx->counters.ft_scans++;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *c = &ctx->comms[i];
        if (revoke_waiting(c) && c->revoke_due_ns <= now_ns) {
            if (c->revoke_tries < UINT8_MAX) {
                c->revoke_tries++;
            }
            revoke_flood(ctx, c, now_ns, out);
        }
    }
    revoking_update(ctx);
}

uint64_t ft_deadline(const struct comm *ctx)
{
    if (!ctx->ft_revoking) {
        return COMM_NEVER;
    }
    uint64_t first = COMM_NEVER;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        const struct comm_communicator *c = &ctx->comms[i];
        if (revoke_waiting(c) && c->revoke_due_ns < first) {
            first = c->revoke_due_ns;
        }
    }
    return first;
}
