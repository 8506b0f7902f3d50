/*
 * Private to comm/: what the modules share.  One section per module:
 *   request.c   the request table and its queues
 *   peer.c      sessions, windows, acks, retransmission, suspicion
 *   match.c     posted receives, unexpected records, the pool, placement
 *   collective.c collectives, dup and split
 *   comm.c      entry points, views, communicators, queries
 * Modules call each other directly, never in a cycle: a completed internal
 * request only flags its collective (ctx->coll_work), and the entry points
 * run the flagged collectives, then the peers' send queues, before they
 * return (comm_finish_call).
 */
#ifndef COMM_INTERNAL_H
#define COMM_INTERNAL_H

#include "comm/comm.h"

enum { COMM_REQ_FREE = 0, COMM_REQ_PENDING, COMM_REQ_DONE };
enum { COMM_REQ_SEND = 1, COMM_REQ_RECV, COMM_REQ_COLLECTIVE };
enum { TX_CLOSED = 0, TX_OPENING, TX_OPEN, TX_CLOSING };
enum { RX_CLOSED = 0, RX_OPEN };
enum { RX_TARGET_NONE = 0, RX_TARGET_REQUEST, RX_TARGET_RECORD, RX_TARGET_DISCARD };
enum { WINDOW_FREE = 0, WINDOW_IN_FLIGHT, WINDOW_ACKED };
/* A send's life with its receiver: NORMAL, or the receiver deferred it
 * (SKIPPING its remaining frames, then DEFERRED until GRANT), then
 * RESENDING (flag RESEND). */
enum { SEND_NORMAL = 0, SEND_RESENDING, SEND_SKIPPING, SEND_DEFERRED };
enum { RECORD_FREE = 0, RECORD_WAITING, RECORD_ARRIVING, RECORD_COMPLETE };
enum { GROUP_RANGE = 0, GROUP_LIST };
enum { COLL_FREE = 0, COLL_RUNNING, COLL_DRAINING };
enum {
    COLL_BARRIER = 1,
    COLL_BCAST,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_GATHER,
    COLL_ALLGATHER,
    COLL_DUP,
    COLL_SPLIT,
    COLL_AGREE,   /* recovery rounds: over the live members, by node id */
    COLL_REBUILD,
    COLL_ADOPT,   /* a spare waiting for a rebuild to adopt it */
    COLL_RESULT,  /* a strict allreduce or barrier cut by a view change: its result */
};
enum {
    STEP_REDUCE = 1,
    STEP_BCAST,
    STEP_GATHER,
    STEP_DECIDE,     /* the round's root: keep an offered decision or make one */
    STEP_APPLY,      /* every member: the decision's result */
    STEP_ADOPT_SEND, /* the rebuild's root: tell each adopted spare */
    STEP_ADOPT_WAIT, /* a spare: wait for a root to tell it */
};

static inline bool coll_is_round(uint8_t kind)
{
    return CONFIG_COMM_FT && (kind == COLL_AGREE || kind == COLL_REBUILD || kind == COLL_RESULT);
}

/* Recovery rounds: offer vectors (u64 words): flags, the AND of the agree
 * flags, the contexts in use (OR), the next context generation (the
 * largest), then a decision. */
#define FT_OFFER_FLAGS 0u
#define FT_OFFER_AND 1u
#define FT_OFFER_CONTEXTS 2u
#define FT_OFFER_CONTEXT_GEN (FT_OFFER_CONTEXTS + COMM_CONTEXT_WORDS)
#define FT_OFFER_DECISION (FT_OFFER_CONTEXT_GEN + 1u)
#define FT_OFFER_WORDS (FT_OFFER_DECISION + COMM_FT_DECISION_WORDS)
#define FT_FLAG_UNACKED 1u /* a member has failures it did not acknowledge */
/* Result rounds: whether the round may decide the rebuild the application
 * will ask for next (comm/DESIGN.md, "The rebuild rides on the result
 * round").  A participant that cannot take it offers VOID; the others
 * offer the recovery number of that call, s, in bits 8..15 and ~s in bits
 * 16..23: ORed up the tree, the two bytes share no bit only if every
 * participant offered the same number. */
#define FT_FLAG_VOID 2u
#define FT_ATTACH_SHIFT 8u
/* An attached rebuild in a result decision's word 2: the changes' count,
 * then the recovery number plus one and the mode. */
#define FT_ATTACH_SEQ_SHIFT 32u
#define FT_ATTACH_MODE_SHIFT 48u
/* A result round's decision (words) that carries such a rebuild. */
static inline bool ft_decision_carries(const uint64_t *decision)
{
    return (uint32_t)(decision[1] >> 32) == COMM_ERR_PROC_FAILED &&
           ((decision[2] >> FT_ATTACH_SEQ_SHIFT) & 0xffffu) != 0;
}
/* Adoption messages (u32 words): context, first, extent, excluded count,
 * edit count, modes, epoch (2 words), then the lists. */
#define FT_ADOPT_FIXED 8u
#define FT_ADOPT_WORDS (FT_ADOPT_FIXED + 3u * CONFIG_COMM_FT_MAX_EDITS)
_Static_assert((CONFIG_COMM_TREE_RADIX + 2) * FT_OFFER_WORDS * 8 + FT_ADOPT_WORDS * 4 <=
                   CONFIG_COMM_COLL_SCRATCH,
               "a recovery round's offers must fit CONFIG_COMM_COLL_SCRATCH");

/* Placement of a first fragment (match_place). */
enum { PLACE_WAIT = 0, PLACE_REQUEST, PLACE_RECORD, PLACE_DISCARD, PLACE_DEFER };

/* Sequence numbers compare by signed distance (they wrap). */
static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

/* The context generation a request's frames carry and its receive
 * matches: its communicator's (0 in the adoption space, whose messages
 * name no communicator). */
static inline uint16_t request_context_gen(const struct comm *ctx, const struct comm_request *r)
{
    return (r->context & COMM_CONTEXT_ADOPT) != 0 ? 0u : ctx->comms[r->comm].context_gen;
}

/* Generations compare by signed distance (16 bits on the wire). */
static inline bool context_gen_before(uint16_t a, uint16_t b)
{
    return (int16_t)(uint16_t)(a - b) < 0;
}

/* Session ids and tokens: (generation << 8) | slot. */
static inline uint32_t session_id(uint32_t generation, uint32_t slot)
{
    return (generation << 8) | slot;
}

static inline uint32_t session_slot(uint32_t id)
{
    return id & 0xffu;
}

/* ---- request.c ---- */
uint16_t request_alloc(struct comm *ctx, uint16_t index, uint8_t kind, uint8_t owner);
uint16_t request_alloc_app(struct comm *ctx, uint8_t kind);
uint32_t request_handle(const struct comm *ctx, uint16_t index);
uint16_t request_index(const struct comm *ctx, uint32_t handle); /* COMM_NONE16: unknown */
void request_complete(struct comm *ctx, uint16_t index, enum comm_error error,
                      struct comm_outbox *out);
void request_release(struct comm *ctx, uint16_t index);
bool request_done(const struct comm *ctx, uint16_t index);
void queue_push(struct comm *ctx, uint16_t *head, uint16_t *tail, uint16_t index);
bool queue_remove(struct comm *ctx, uint16_t *head, uint16_t *tail, uint16_t index);

/* ---- peer.c ---- */
void peer_init_all(struct comm *ctx);
uint16_t peer_find(const struct comm *ctx, uint32_t node);
/* Queues a send request (its node is not us). */
void peer_send(struct comm *ctx, uint16_t request, uint64_t now_ns, struct comm_outbox *out);
/* Opens our session to node now, if it has none and a slot is free (no
 * slot is recycled for it): a new tree neighbour after a view change, so
 * that the recovery's first messages need no OPEN round trip. */
void peer_open_ahead(struct comm *ctx, uint32_t node, uint64_t now_ns, struct comm_outbox *out);
/* A view removed members: frames and OPENs already resent go out again
 * now, from the first timeout (routes changed around the removed). */
void peer_view_removed(struct comm *ctx, uint64_t now_ns);
/* node installed the view we install now before us (a frame of it was
 * held here): what we sent it in the old view and it has not acknowledged
 * it dropped as stale, or will; sent again now, from the first timeout. */
void peer_view_ahead(struct comm *ctx, uint32_t node, uint64_t now_ns);
/* A valid frame from node source, fenced and decoded. */
void peer_on_frame(struct comm *ctx, uint32_t source, const struct comm_frame *frame,
                   uint64_t now_ns, struct comm_outbox *out);
void peer_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
uint64_t peer_deadline(const struct comm *ctx);
/* Frames the send queues may put in their windows now. */
void peer_pump(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
/* Node left the view (or restarted): its sends fail, its sessions go. */
void peer_fail_node(struct comm *ctx, uint32_t node, enum comm_error error,
                    struct comm_outbox *out);
/* Communicator slot comm failed under NOP: its application sends not
 * started fail with error, those under way end with it once acknowledged,
 * and a receive being filled fails (the rest of its message is consumed
 * unread). */
void peer_fail_comm(struct comm *ctx, uint16_t comm, enum comm_error error,
                    struct comm_outbox *out);
/* Forget every session; pending sends fail with error. */
void peer_reset_all(struct comm *ctx, enum comm_error error, struct comm_outbox *out);
/* Control frames to a peer slot, sent by match.c.  The GRANT goes only if
 * the slot still holds node's session. */
void peer_send_wait(struct comm *ctx, uint16_t slot, uint32_t seq, struct comm_outbox *out);
void peer_send_grant(struct comm *ctx, uint16_t slot, uint32_t node, uint32_t seq,
                     struct comm_outbox *out);
uint64_t peer_rto(const struct comm *ctx, uint32_t tries);

/* ---- match.c ---- */
void match_init(struct comm *ctx);
/* Posts a receive: matches the earliest unexpected record or waits. */
void match_post(struct comm *ctx, uint16_t request, uint64_t now_ns, struct comm_outbox *out);
/* A send to this node itself; false when no record is left for it. */
bool match_self_send(struct comm *ctx, uint16_t request, struct comm_outbox *out);
/*
 * Places the message whose first fragment arrived in order from peer slot:
 * PLACE_REQUEST / PLACE_RECORD (index set), PLACE_DISCARD, PLACE_DEFER (its
 * envelope recorded, its frames to be consumed unread, GRANTed later) or
 * PLACE_WAIT (not even a record is left: the sender must resend it).
 */
uint8_t match_place(struct comm *ctx, uint16_t slot, const struct comm_frame *frame,
                    uint16_t *index, struct comm_outbox *out);
/* Writes fragment bytes of the placed message. */
void match_write(struct comm *ctx, uint8_t target, uint16_t index, uint32_t offset,
                 const uint8_t *data, uint32_t length);
/* The placed message is complete. */
void match_finish(struct comm *ctx, uint8_t target, uint16_t index, struct comm_outbox *out);
/* The placed message will never complete (its sender left). */
void match_abandon(struct comm *ctx, uint8_t target, uint16_t index, enum comm_error error,
                   struct comm_outbox *out);
/* Removes an unmatched receive from the posted list; false when matched. */
bool match_cancel(struct comm *ctx, uint16_t request);
/* Node left (or restarted): its waiting and arriving records go (their
 * receives fail); posted receives naming it fail too if receives_naming_it. */
void match_fail_node(struct comm *ctx, uint32_t node, enum comm_error error,
                     bool receives_naming_it, struct comm_outbox *out);
/* The application's posted receives on communicator slot comm (only the
 * ANY_SOURCE ones if any_source_only) fail with error. */
void match_fail_posted(struct comm *ctx, uint16_t comm, bool any_source_only,
                       enum comm_error error, struct comm_outbox *out);
/* Communicator slot comm failed under NOP: its application receives
 * (posted, or bound to a record) and self-sends fail with error, and its
 * unexpected messages go (those still arriving or deferred are consumed
 * unread: the GRANT lets their senders finish). */
void match_fail_comm(struct comm *ctx, uint16_t comm, enum comm_error error,
                     struct comm_outbox *out);
/* A view was installed: unexpected messages of recovery rounds of earlier
 * views (their tags name the view) can match nothing any more and go
 * (those still arriving or deferred are consumed unread). */
void match_drop_stale_rounds(struct comm *ctx, struct comm_outbox *out);
/* A communicator of context with generation keep was made here: unbound
 * unexpected messages of that context naming another generation (a freed
 * communicator's, resent late) can match nothing and go.  out may be NULL. */
void match_drop_other_generations(struct comm *ctx, uint8_t context, uint16_t keep,
                                  struct comm_outbox *out);
/* Communicator context runs no collective any more (DETECTED, FAILED) or
 * is freed (every_space): its unbound unexpected messages of collectives
 * (and of point-to-point and recovery rounds if every_space) go, as above.
 * out may be NULL (GRANTs then go at the next tick). */
void match_drop_context(struct comm *ctx, uint8_t context, bool every_space,
                        struct comm_outbox *out);
/* Forget every record; posted receives fail with error. */
void match_reset_all(struct comm *ctx, enum comm_error error, struct comm_outbox *out);
/* GRANTs that were not followed by their message go again. */
void match_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
uint64_t match_deadline(const struct comm *ctx);

/* ---- collective.c ---- */
void coll_init_all(struct comm *ctx);
struct coll_args {
    uint8_t kind;
    uint16_t comm;
    uint32_t root;
    const uint8_t *send;
    uint8_t *recv;
    uint32_t count; /* reduce: elements; gather: block bytes; bcast: bytes */
    uint8_t type;
    uint8_t op;
    int32_t color;
    int32_t key;
    bool failed; /* strict, on a DETECTED communicator: only the outcome agree */
};
enum comm_error coll_start(struct comm *ctx, const struct coll_args *args, uint64_t now_ns,
                           struct comm_outbox *out, uint32_t *request);
/* Advances every flagged collective (ctx->coll_work). */
void coll_run(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
/* The communicator lost members or its node the view: its collectives fail
 * (recovery rounds start again in the new view, unless the view is gone). */
void coll_fail_comm(struct comm *ctx, uint16_t comm, enum comm_error error,
                    struct comm_outbox *out);
/* A new view: every recovery round still deciding starts again in it (its
 * messages name the view they belong to, so the old ones match nothing
 * any more, even after a view that only added members). */
void coll_restart_rounds(struct comm *ctx, struct comm_outbox *out);
/* A recovery round (AGREE, REBUILD) on comm, or a spare's ADOPT; request
 * NULL: a background round serving the decision this node holds. */
enum comm_error coll_start_round(struct comm *ctx, uint16_t comm, uint8_t kind, uint8_t seq,
                                 uint8_t rebuild_mode, uint32_t *flag, uint32_t *new_comm,
                                 uint32_t *request);
/* The lowest context id not set in used (COMM_CONTEXT_WORDS words), or -1. */
int coll_lowest_free_context(const uint64_t *used);
/* Background rounds on comm stop (their decision is known everywhere),
 * except the one serving (kind, seq) (kind 0: none); abstentions too only
 * if abstentions. */
void coll_stop_background(struct comm *ctx, uint16_t comm, uint8_t kind, uint8_t seq,
                          bool abstentions);
/* Whether any background round runs (only after a failure): callers skip
 * coll_stop_background else, on every collective's end. */
static inline bool coll_background_any(const struct comm *ctx)
{
    for (uint16_t s = 0; s < CONFIG_COMM_MAX_COLLECTIVES; s++) {
        if (ctx->colls[s].state != COLL_FREE && ctx->colls[s].background) {
            return true;
        }
    }
    return false;
}
/* Whether a round (kind, seq) on comm runs here. */
bool coll_round_running(const struct comm *ctx, uint16_t comm, uint8_t kind, uint8_t seq);
/* comm's queued abstention starts again, if a slot is free. */
void coll_start_abstention(struct comm *ctx, uint16_t comm);
/* The application's rebuild waiting on comm (attach_wait) starts its own
 * round now, for its request index; BUSY while no slot is free. */
enum comm_error coll_start_waiting_rebuild(struct comm *ctx, uint16_t comm);
/* A rebuild or adoption made communicator handle: sessions to its tree
 * neighbours open now. */
void coll_open_comm_tree(struct comm *ctx, uint32_t handle, uint64_t now_ns,
                         struct comm_outbox *out);
/* A result round runs here whose offer named a rebuild it may decide: no
 * other creation may pick a context meanwhile (comm: COMM_NONE16 for any
 * communicator, else only another one's). */
bool coll_attach_offered(const struct comm *ctx, uint16_t comm);

/* ---- comm.c ---- */
struct comm_communicator *comm_slot_of(struct comm *ctx, uint32_t handle);
const struct comm_communicator *comm_const_slot(const struct comm *ctx, uint32_t handle);
uint32_t comm_handle_of(const struct comm *ctx, uint16_t slot);
uint16_t comm_by_context(const struct comm *ctx, uint8_t context);
/* Groups: a base (range or map) of extent base ranks, minus the excluded
 * base ranks, with edits (gaps, adopting spares); O(log edits) each way
 * (a map base: node -> rank scans the map). */
enum comm_error comm_usable(struct comm *ctx, uint32_t handle, struct comm_communicator **out);
uint32_t group_node(const struct comm *ctx, const struct comm_communicator *c, uint32_t rank);
uint32_t group_rank(const struct comm *ctx, const struct comm_communicator *c, uint32_t node);
uint32_t group_base_node(const struct comm *ctx, const struct comm_communicator *c,
                         uint32_t base);
uint32_t group_rank_of_base(const struct comm_communicator *c, uint32_t base);
uint32_t group_base_of_rank(const struct comm_communicator *c, uint32_t rank);
uint32_t group_edit_of(const struct comm_communicator *c, uint32_t base); /* or RANK_NONE */
/* Member rank of c is out: its node is not in the view, or it failed in c
 * before (a node that left and rejoined is a new life, not the member; as
 * far as the failure log lists, CONFIG_COMM_FT_MAX_EDITS). */
bool group_member_out(const struct comm *ctx, const struct comm_communicator *c, uint32_t rank);
uint32_t group_count_failed(const struct comm *ctx, const struct comm_communicator *c);
/* The out members' ranks of c, ascending, in out[0..cap), and their
 * number; COMM_DEAD_UNKNOWN when not known without a scan of every member
 * (a listed group, no view, more than cap).  O(failed * log size). */
uint32_t group_out_ranks(const struct comm *ctx, const struct comm_communicator *c,
                         uint32_t *out, uint32_t cap);
/* Adds value to the ascending, duplicate-free list[0..*count); false when
 * it does not fit in cap. */
bool comm_sorted_add(uint32_t *list, uint32_t *count, uint32_t cap, uint32_t value);
/* Collective trees skip BLANK gaps: ranks <-> "compact" ranks (gaps out). */
uint32_t group_gap_count(const struct comm_communicator *c);
uint32_t group_rank_of_compact(const struct comm_communicator *c, uint32_t compact);
uint32_t group_compact_of_rank(const struct comm_communicator *c, uint32_t rank);
bool node_is_live(const struct comm *ctx, uint32_t node);
/* A new communicator: the node ids first..first+size-1 in order (list
 * NULL), or the size node ids in list (native u32, any alignment); our rank
 * is found in it; context_gen is the generation its members agreed (this
 * node moves past it).  With no slot free, a released one is taken (its
 * kept decision goes).  COMM_NONE16 when no slot or map room is left. */
uint16_t comm_create(struct comm *ctx, uint8_t context, uint32_t context_gen,
                     const uint8_t *list, uint32_t first, uint32_t size);
/* A released communicator (comm_free) whose decision nobody needs any more
 * and on which nothing runs is freed for good. */
void comm_reap(struct comm *ctx);
void comm_finish_call(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
void comm_count_lost_frame(struct comm *ctx);

/* ---- ft.c (failure semantics) ---- */
/* A new communicator's failure state: the modes from the config. */
void ft_comm_init(const struct comm *ctx, struct comm_communicator *c);
/* The view removed member rank of communicator slot (before the epoch moves). */
/* NOP after a failure (not only leaves): no point-to-point until rebuilt. */
bool ft_nop_halted(const struct comm_communicator *c);
/* Was the node's removal a leave (comm_member_left)?  Each is taken once. */
bool ft_take_leave(struct comm *ctx, uint32_t node);
/* Drops the leaves of nodes live in the installed view: their removal is
 * not one this node will see (a later one must not pass for a leave). */
void ft_forget_leaves(struct comm *ctx);
/* left: the member left (a graceful leave), it did not fail. */
void ft_member_failed(struct comm *ctx, uint16_t slot, uint32_t rank, bool left,
                      struct comm_outbox *out);
/* Communicator slot's kept decision is served in the background: now if a
 * collective slot is free, else when one is (ft_background_due). */
void ft_serve_kept(struct comm *ctx, uint16_t slot);
/* A view replaced view `left` (after coll_restart_rounds): any change, a
 * join too, starts every round still deciding again, so each decision a
 * round taught here in `left` is served in the new one, as after a
 * failure (ft_detected): members still in that round need it. */
void ft_view_changed(struct comm *ctx, uint64_t left);
/* Communicator slot lost members in view epoch (after the DETECTED event). */
void ft_detected(struct comm *ctx, uint16_t slot, uint64_t epoch, uint64_t now_ns,
                 struct comm_outbox *out);
/* Point-to-point on c naming rank (COMM_ANY_SOURCE for a receive from
 * anyone): OK or the failure-semantics error. */
enum comm_error ft_p2p_check(const struct comm *ctx, const struct comm_communicator *c,
                             uint32_t rank, bool send);
/* Collectives on c: OK or the error (REVOKED, PROC_FAILED). */
enum comm_error ft_collective_check(const struct comm_communicator *c);
/* A recovery message's tag names a round of the current view. */
bool ft_round_tag_current(const struct comm *ctx, uint32_t tag);
uint32_t ft_round_tag_base(const struct comm *ctx, uint8_t seq);
/* Round set-up (and restart): the participants' tree and our offer
 * (native words at offer). */
void ft_round_setup(struct comm *ctx, struct comm_collective *c, uint64_t *offer);
/* A round's offer length in words: a decision holds what its kind needs
 * (agree: nothing beyond the result; rebuild: the changes; a strict
 * result: its values). */
uint32_t ft_offer_words(const struct comm_collective *c);
/* Combines a child's offer of words into ours (little-endian words). */
void ft_combine(uint8_t *acc, const uint8_t *in, uint32_t words);
/* The root: keeps an offered decision or makes one (acc, LE). */
void ft_decide(struct comm *ctx, struct comm_collective *c, uint8_t *acc);
/* The decision in decision (LE offer) applies here: records it, and for the
 * application's round writes the result; error for the application. */
enum comm_error ft_apply(struct comm *ctx, struct comm_collective *c, const uint8_t *offer);
/* The rebuild's root: the adoption message for decision entry i (false:
 * no spare there), built at message; its spare in *node. */
bool ft_adopt_message(struct comm *ctx, struct comm_collective *c, uint32_t i,
                      uint8_t *message, uint32_t *node);
/* A spare: the new communicator from an adoption message. */
enum comm_error ft_adopt_apply(struct comm *ctx, const uint8_t *message, uint32_t length,
                               uint32_t *new_comm);
/* A collective (or round) completed on comm slot: decisions it proves
 * known go, except that of round keep_seq on it (< 0: none). */
void ft_collective_done(struct comm *ctx, uint16_t slot, int keep_seq);
/* A strict allreduce or barrier finished here (result in c->recv, native):
 * kept on its communicator for members still in it. */
void ft_result_done(struct comm *ctx, const struct comm_collective *c, uint8_t seq);
/* Background rounds due start once a collective slot is free: kept
 * decisions served first, then abstentions from result rounds a rebuilding
 * member skipped (see DESIGN.md, "Strict collectives"). */
void ft_background_due(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
/* The context ids in use here, and those a kept decision's rebuild will
 * take when the application asks (reserved: no other creation takes them). */
void ft_contexts_taken(const struct comm *ctx, uint64_t *used);
/* Whether a kept decision here will make a communicator on context with
 * generation gen (its frames may come first: they wait for it). */
bool ft_context_pending(const struct comm *ctx, uint8_t context, uint16_t gen);
/* The view went: a rebuild waiting for its result round fails with error. */
void ft_attach_fail(struct comm *ctx, uint16_t comm, enum comm_error error,
                    struct comm_outbox *out);
/* Whether a kept decision waits for a slot to be served. */
bool ft_background_waiting(const struct comm *ctx);
/* A REVOKE frame from node source (fenced and decoded). */
void ft_on_revoke(struct comm *ctx, uint32_t source, const struct comm_frame *frame,
                  uint64_t now_ns, struct comm_outbox *out);
/* A new view: revoked communicators tell their new tree neighbours. */
void ft_view_installed(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
void ft_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);
uint64_t ft_deadline(const struct comm *ctx);

#endif /* COMM_INTERNAL_H */
