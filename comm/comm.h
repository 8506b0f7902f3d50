/*
 * The communication core: communicators, point-to-point messages and
 * collectives over the membership view, as a pure state machine in the
 * style of membership/: frames (with the sender's view epoch), ticks and
 * application requests go in, with the current time; frames, request
 * completions and events come out into a caller-provided outbox.  No I/O,
 * no clock reads, no globals, no allocation, no recursion; one context per
 * node, every table sized in config/tori_config.h (comm_context_bytes()).
 * The application owns every buffer it hands in: the core keeps pointers
 * until the request completes.  comm/DESIGN.md has the state machine, the
 * message formats, the flow-control and reliability rules, and the failure
 * semantics (FT-MPI / ULFM modes, rebuild, shrink, agree, revoke).
 *
 * - Views: the node glue installs every view the membership installs
 *   (comm_install_view) and drops it when the node is expelled
 *   (comm_drop_view).  Frames are fenced by epoch: one carrying another
 *   epoch than the current view's is counted and dropped, never delivered.
 * - WORLD holds node ids 0..world_size-1 (the initial view's compute
 *   nodes; spares lie outside and have no WORLD rank), rank = node id.
 * - Point-to-point: isend/irecv with tags, COMM_ANY_SOURCE and COMM_ANY_TAG,
 *   non-overtaking between a pair; messages up to CONFIG_COMM_MAX_MESSAGE,
 *   fragmented and reassembled all-or-nothing in the posted buffer;
 *   unexpected messages wait in a bounded pool, and a sender whose message
 *   does not fit waits until the receiver grants room or posts a match.
 * - Reliability: a session per peer with sequence numbers, acks, selective
 *   retransmission in a bounded window; a peer silent for suspect_ns is
 *   reported (COMM_EVENT_SUSPECT) for membership_suspect.
 * - Collectives over a radix-CONFIG_COMM_TREE_RADIX "runs" tree of the
 *   communicator's ranks, rooted at the root: barrier, broadcast, reduce,
 *   allreduce (sum, min, max of int64 and double, in a fixed combining order
 *   so that every run gives the same bits), gather, allgather; dup and
 *   split.  Each is a request advanced by frames.
 * - Failures (issue 14): a view change that removes a member turns every
 *   communicator holding it DETECTED; its mode says what follows (ABORT:
 *   an event for the glue; NOP / CONT for point-to-point; BLANK, SHRINK,
 *   REBUILD for comm_irebuild).  Rebuild, shrink and agree are one round
 *   each over the members in the view, uniform even when members fail
 *   during it; revoke floods a REVOKE frame; strict collectives (the
 *   default) agree on their outcome.
 */
#ifndef COMM_COMM_H
#define COMM_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/codec.h"
#include "comm/outbox.h"
#include "config/tori_config.h"
#include "membership/layout.h"
#include "membership/view.h"

#define COMM_ANY_SOURCE UINT32_MAX
#define COMM_ANY_TAG (-1)
#define COMM_RANK_NONE UINT32_MAX /* this node is not in the communicator */
#define COMM_NEVER UINT64_MAX
#define COMM_REQUEST_NULL 0u
#define COMM_NULL 0u              /* no communicator (split with COMM_UNDEFINED) */
#define COMM_WORLD 0x100u         /* slot 0, generation 1: never freed */
#define COMM_UNDEFINED (-1)       /* split color: no new communicator for this rank */

/* Errors: every request completes with one; calls return one. */
#define COMM_ERRORS(X)                                                                   \
    X(OK, "ok")                                                                          \
    X(PENDING, "not complete yet")                                                       \
    X(ARG, "invalid argument")                                                           \
    X(COMM, "no such communicator")                                                      \
    X(RANK, "rank outside the communicator")                                             \
    X(TAG, "tag outside 0..COMM_TAG_MAX")                                                \
    X(COUNT, "longer than the buffer or the configured maximum")                         \
    X(REQUEST, "no such request")                                                        \
    X(BUSY, "a bounded table is full: retry after completions")                          \
    X(TRUNCATE, "message longer than the receive buffer")                                \
    X(MISMATCH, "collective arguments differ between ranks")                             \
    X(PROC_FAILED, "a peer left the view or restarted")                                  \
    X(NO_VIEW, "this node holds no view")                                                \
    X(NOT_MEMBER, "this node is not in the communicator")                              \
    X(REVOKED, "the communicator was revoked")                                           \
    X(INVALID_RANK, "the rank is a gap of a BLANK communicator")                           \
    X(UNSUPPORTED, "failure semantics compiled out (CONFIG_COMM_FT=0)")

enum comm_error {
#define COMM_ERROR_ENUM(name, text) COMM_ERR_##name,
    COMM_ERRORS(COMM_ERROR_ENUM)
#undef COMM_ERROR_ENUM
    COMM_ERROR_COUNT
};

enum comm_type { COMM_INT64 = 0, COMM_DOUBLE = 1 };
enum comm_op { COMM_SUM = 0, COMM_MIN = 1, COMM_MAX = 2, COMM_BOR = 3 /* int64 only */ };

/*
 * Communicator states (FT-MPI's OK / DETECTED / RECOVERED / FAILED): a view
 * change that removes a member moves every communicator holding it to
 * DETECTED; losing the view moves them all to FAILED.  A rebuilt
 * communicator starts RECOVERED and turns OK at its first completed
 * collective.
 */
enum comm_state { COMM_STATE_OK = 0, COMM_STATE_DETECTED, COMM_STATE_RECOVERED, COMM_STATE_FAILED };

/* Per-rank states: FAILED = out of the view; UNAVAILABLE = suspected by us,
 * not (yet) removed. */
enum comm_rank_state { COMM_RANK_OK = 0, COMM_RANK_UNAVAILABLE, COMM_RANK_FAILED };

/* What a communicator becomes when a member fails (issue 14; numbered as
 * kernel/job.h's enum job_comm_mode). */
enum comm_mode { COMM_MODE_ABORT = 0, COMM_MODE_BLANK, COMM_MODE_SHRINK, COMM_MODE_REBUILD };
/* Point-to-point on a DETECTED communicator: NOP fails every call until
 * rebuilt; CONT fails only calls naming a failed rank. */
enum comm_msg_mode { COMM_MSG_NOP = 0, COMM_MSG_CONT };

struct comm_config {
    uint32_t node_id;
    uint32_t incarnation; /* this life's (never 0); the membership's boot incarnation */
    uint32_t node_count;  /* node ids < node_count <= CONFIG_MAX_NODES */
    uint32_t world_size;  /* WORLD = node ids 0..world_size-1 */
    bool restarted;       /* a WORLD node booted again: its rank died with its
                           * old life; a REBUILD may give it back (comm_iadopt) */
    uint64_t rto_ns;      /* first retransmission timeout */
    uint64_t rto_max_ns;  /* retransmission backoff cap */
    uint64_t ack_delay_ns; /* an ack waits this long for a frame to ride on */
    uint64_t suspect_ns;  /* a peer silent this long while we wait on it: suspect */
    /* Defaults every new communicator takes (WORLD too): enum comm_mode,
     * enum comm_msg_mode, and whether reduce-like collectives are strict
     * (same result or an error at every survivor). */
    uint8_t comm_mode;
    uint8_t msg_mode;
    bool strict_collectives;
    /* PROMOTE (issue 15): the job mirrors checkpoints to standby spares.
     * Then every node holds NODES (comm_nodes), and a REBUILD pairs a
     * failed rank with the spare that mirrors it (recovery_mirror_node)
     * before any other. */
    bool mirrors;
};


enum comm_init_status {
    COMM_INIT_OK = 0,
    COMM_INIT_BAD_NODE,        /* node_id >= node_count */
    COMM_INIT_BAD_COUNT,       /* node_count 0 or > CONFIG_MAX_NODES */
    COMM_INIT_BAD_WORLD,       /* world_size 0 or > node_count */
    COMM_INIT_BAD_INCARNATION, /* 0 */
    COMM_INIT_BAD_TIMEOUT,     /* a zero timeout, rto_max < rto, suspect <= rto */
    COMM_INIT_NO_FT,           /* CONFIG_COMM_FT 0: a mode but ABORT, NOP, plain collectives */
};

/* A completed request: what comm_test reports. */
struct comm_status {
    enum comm_error error;
    uint32_t source; /* receives: the sender's rank */
    int32_t tag;     /* receives: the message's tag */
    uint32_t count;  /* receives: bytes received */
    uint32_t comm;   /* dup/split: the new communicator (COMM_NULL: none) */
};

struct comm_counters {
    uint64_t frames_received;
    uint64_t frames_sent;
    uint64_t data_frames_sent;
    uint64_t retransmissions;
    uint64_t messages_sent;     /* completed sends (acknowledged) */
    uint64_t messages_received; /* completed receives */
    uint32_t views_installed;
    uint32_t views_refused;     /* not newer, or another size */
    uint32_t decode_drops[COMM_DECODE_STATUS_COUNT]; /* by reason */
    uint32_t drops_no_view;          /* this node holds no view */
    uint32_t drops_stale_epoch;      /* older view than ours: never delivered */
    uint32_t drops_ahead_epoch;      /* newer view than ours, no room to hold it (resent later) */
    uint32_t frames_held;            /* newer view than ours: kept until we install it */
    uint32_t held_delivered;         /* ... delivered when we did (then checked as any frame) */
    uint32_t held_dropped;           /* ... dropped: a newer view came first, or we lost ours */
    uint32_t drops_stale_incarnation; /* addressed to an earlier life of this node */
    uint32_t drops_not_member;       /* sender out of our view */
    uint32_t drops_unknown_session;  /* DATA for a token we do not hold (answered RESET) */
    uint32_t drops_stale_session;    /* answer for a session we no longer hold */
    uint32_t drops_duplicate;        /* frame already received */
    uint32_t drops_out_of_order;     /* beyond the window, or of a message not placed yet */
    uint32_t drops_bad_fragment;     /* offset or total disagree with the message */
    uint32_t discarded_messages;     /* bad envelope, truncated or cancelled: consumed unread */
    uint32_t unexpected_messages;    /* matched no posted receive on arrival */
    uint32_t deferred_messages;      /* recorded, consumed unread, GRANTed later */
    uint32_t waits_sent;             /* first fragments refused: no record left */
    uint32_t grants_sent;
    uint32_t busy_sent;
    uint32_t opens_sent;
    uint32_t opens_ahead;            /* of them, opened at a view change, before any send */
    uint32_t closes_sent;
    uint32_t acks_sent;
    uint32_t resets;                 /* RESET sent or received */
    uint32_t suspicions;
    uint32_t peer_restarts;
    uint32_t control_frames_lost;    /* did not fit the outbox */
    uint32_t adoptions_refused;      /* adoption messages malformed or not for us */
    uint32_t revokes_refused;        /* REVOKE frames for no communicator of ours */
    uint32_t drops_stale_context;    /* messages and revokes of a freed communicator's
                                      * context generation: consumed unread */
    uint32_t ft_scans;               /* scans of every communicator for the failure
                                      * machinery's work (background rounds, revoke
                                      * floods): none while nothing failed */
};

/* ---- the state (read through the functions below, not directly) ---- */

#define COMM_NONE16 UINT16_MAX
#define COMM_NODE_NONE UINT32_MAX
#define COMM_POOL_BLOCKS (CONFIG_COMM_POOL_BYTES / CONFIG_COMM_POOL_BLOCK)
#define COMM_CONTEXT_WORDS (COMM_CONTEXT_IDS / 64u)
/* A frame of a newer view than ours, kept whole until we install it. */
struct comm_held_frame {
    uint64_t epoch;
    uint32_t source;
    uint16_t length;
    uint8_t bytes[COMM_MAX_PAYLOAD];
};
/* A view's left-out node ids kept (struct comm dead[]): the failures one
 * communicator can record, as many again for nodes never in the view. */
#define COMM_DEAD_SLOTS (2u * CONFIG_COMM_FT_MAX_EDITS)
#define COMM_DEAD_UNKNOWN UINT32_MAX
#define COMM_HOLD_SLOTS (CONFIG_COMM_HOLD_FRAMES > 0 ? CONFIG_COMM_HOLD_FRAMES : 1)
_Static_assert(COMM_MAX_PAYLOAD <= UINT16_MAX, "a held frame's length must fit 16 bits");

/* Internal requests of one collective: one per child and one for the parent. */
#define COMM_COLL_SUBS (CONFIG_COMM_TREE_RADIX + 1)
#define COMM_REQUEST_SLOTS (CONFIG_COMM_MAX_REQUESTS + CONFIG_COMM_MAX_COLLECTIVES * COMM_COLL_SUBS)
#define COMM_COLL_STEPS 5

_Static_assert(COMM_REQUEST_SLOTS < COMM_NONE16, "request index must fit 16 bits");

struct comm_request {
    uint8_t state;  /* COMM_REQ_* (comm/internal.h) */
    uint8_t kind;   /* send, receive, collective */
    uint8_t error;  /* the outcome; a pending send: what its completion reports (NOP) */
    uint8_t owner;  /* 0: the application; c + 1: collective slot c */
    uint8_t send_state;   /* sends: normal, resending, skipping, deferred */
    uint8_t transmission; /* sends: bumped when a deferred message goes again */
    bool grant_seen;      /* sends: GRANTed while still skipping */
    uint16_t generation;
    uint16_t next;  /* queue link: a peer's send queue, the posted list, the orphans */
    uint16_t comm;  /* communicator slot */
    uint16_t context; /* wire context, collective space included */
    bool any_tag;
    uint32_t node;  /* sends: destination node; receives: source node once matched */
    uint32_t rank;  /* sends: destination rank; receives: source rank or COMM_ANY_SOURCE */
    uint32_t tag;   /* wire tag */
    const uint8_t *source; /* sends */
    uint8_t *target;       /* receives */
    uint32_t length;       /* sends: bytes; receives: capacity */
    uint32_t frames_total; /* sends */
    uint32_t frames_sent;
    uint32_t frames_acked;
    uint32_t resend_of;    /* sends: the seq at which the receiver deferred it */
    struct comm_status status;
};

/* One frame in a peer's send window (index: seq % CONFIG_COMM_WINDOW). */
struct comm_window_slot {
    uint64_t sent_ns;
    uint32_t fragment : 24;    /* < 2^24 frames: CONFIG_COMM_MAX_MESSAGE <= 1 GiB */
    uint32_t transmission : 8; /* its request's, when the frame entered the window */
    uint16_t request;
    uint8_t state;  /* free, in flight, acked */
    uint8_t tries;
};

/* A peer this node holds a session with: both directions. */
struct comm_peer {
    uint32_t node;        /* COMM_NODE_NONE: free slot */
    uint32_t incarnation; /* the peer's; 0 until heard */
    uint64_t used_ns;     /* last activity (recycling picks the oldest idle) */
    uint64_t heard_ns;    /* last valid frame from it */
    uint64_t waiting_since_ns; /* since when we wait on it (COMM_NEVER: we do not) */
    uint64_t suspect_at_ns;
    bool suspected;       /* reported, not heard from since */
    bool recycle;         /* we want the slot back: close when idle */
    uint8_t recycle_tries; /* CLOSE_REQs sent for it */
    uint64_t recycle_due_ns; /* CLOSE_REQ again then (it may have been lost) */
    /* our session to the peer */
    uint8_t tx_state;     /* closed, opening, open, closing */
    bool tx_close_asked;  /* the peer asked us to close when idle */
    bool tx_blocked;      /* WAIT: the first fragment at tx_blocked_seq has no room */
    uint8_t tx_tries;
    uint32_t tx_generation;
    uint32_t tx_token;
    uint32_t tx_next;     /* next sequence number to assign */
    uint32_t tx_una;      /* oldest unacknowledged */
    uint32_t tx_blocked_seq;
    uint8_t tx_dup_acks;  /* acks in a row that moved nothing */
    bool tx_fast;         /* resend tx_una now (fast retransmission) */
    uint16_t tx_head;     /* send requests with frames not yet in the window */
    uint16_t tx_tail;
    uint16_t tx_deferred_head; /* sends the receiver deferred, waiting for GRANT */
    uint16_t tx_deferred_tail;
    uint64_t tx_timer_ns; /* OPEN / CLOSE resend, WAIT probe */
    struct comm_window_slot window[CONFIG_COMM_WINDOW];
    /* the peer's session to us */
    uint8_t rx_state;     /* closed, open */
    uint8_t rx_target;    /* where the message being received goes */
    uint16_t rx_index;    /* its request or record */
    uint32_t rx_sid;
    uint32_t rx_generation;
    uint32_t rx_expected; /* next in-order sequence number */
    uint32_t rx_mask;     /* bit i: rx_expected + 1 + i received */
    uint32_t rx_deferred; /* bit i: rx_expected - 1 - i was a deferred first fragment */
    uint32_t rx_first_seq; /* the message being received */
    uint32_t rx_frames;
    uint32_t rx_total;
    bool ack_pending;
    uint32_t ack_unsent;  /* frames received since the last ack */
    uint64_t ack_due_ns;
};

/* An unexpected message, in arrival order. */
struct comm_record {
    uint8_t state;    /* free, waiting (envelope only: deferred), arriving, complete */
    bool discard;     /* matched by a receive too short: consume unread */
    bool reserved;    /* holds pool blocks (first_block; none for 0 bytes) */
    bool granted;     /* waiting: its sender was told to send it (GRANT) */
    uint8_t grant_tries;
    uint64_t grant_due_ns; /* GRANT again then if the message has not come */
    uint16_t next;
    uint16_t peer;    /* waiting, arriving: peer slot */
    uint16_t request; /* the receive bound to it */
    uint16_t self_send; /* a send to ourselves waiting for its match */
    uint16_t first_block;
    uint16_t context;
    uint16_t context_gen; /* the communicator generation its envelope named */
    uint32_t node;    /* source node */
    uint32_t source_rank;
    uint32_t tag;
    uint32_t length;
    uint32_t seq;     /* waiting: the seq its first fragment was deferred at */
};

/* A gap of a BLANK group (an edit's node). */
#define COMM_GAP_NODE (UINT32_MAX - 1u)
/* A decision of a round (u64 words, little-endian on the wire): the epoch
 * it was made in plus one (0: none), the result (agree: the flag | error <<
 * 32; rebuild: the context | error << 32; a strict allreduce or barrier:
 * error << 32), a count (rebuild: group changes; strict: result values),
 * then the rebuild's changes (old rank << 32 | node: COMM_NODE_NONE
 * removed, a gap, or the spare that adopts it) or the strict result. */
#define COMM_FT_RESULT_WORDS (CONFIG_COMM_FT ? CONFIG_COMM_REDUCE_MAX / 8u : 0u)
#define COMM_FT_DECISION_WORDS                                                           \
    (3u + (CONFIG_COMM_FT_MAX_EDITS > COMM_FT_RESULT_WORDS ? CONFIG_COMM_FT_MAX_EDITS     \
                                                             : COMM_FT_RESULT_WORDS))

struct comm_communicator {
    bool in_use;
    uint8_t state;      /* enum comm_state */
    uint8_t context;    /* context id (wire) */
    uint8_t group;      /* base: range of node ids, or a list in the map pool */
    uint16_t generation; /* of the handle (slot reuse) */
    /* Its life on its context id, agreed by its members when it was made
     * (above every generation any member gave a communicator before) and
     * carried in every DATA and REVOKE frame: frames of a freed one never
     * match a later one that reuses the id.  WORLD and NODES: 0. */
    uint16_t context_gen;
    /* The application freed it, but a decision members may still need is
     * kept (and served) here until a collective shows everyone has it, or
     * its slot is wanted; its handle is refused meanwhile. */
    bool released;
    uint32_t first;     /* range: first node id; list: offset in the map pool */
    uint32_t extent;    /* base ranks 0..extent-1 */
    uint32_t size;      /* extent - excluded_count */
    uint32_t rank;      /* ours, COMM_RANK_NONE outside */
    uint32_t failed;    /* members out of the current view (gaps included) */
    uint32_t collective_seq;
    uint64_t epoch;     /* the view it was made in (rebuilds give a new one) */
    /* failure semantics (issue 14) */
    uint8_t mode;       /* enum comm_mode */
    uint8_t msg_mode;   /* enum comm_msg_mode */
    bool strict;        /* strict collectives */
    bool revoked;
    bool abort_told;    /* COMM_EVENT_ABORT sent (once) */
    uint8_t recovery_seq; /* rebuilds and agreements so far (they name their rounds) */
    bool abstain_due;   /* rebuilding: its next collective's result round to abstain from */
    bool serve_due;     /* its kept decision to serve in the background once a slot is free */
    bool abstain_queued; /* an abstention gave its slot to a decision served */
    bool only_left;     /* DETECTED by leaves alone (comm/DESIGN.md, "A member that left") */
    uint8_t abstain_seq; /* its collective number */
    uint64_t failure_epoch; /* view that removed the last member that failed */
    uint32_t acked;     /* failed_log entries acknowledged (ULFM failure_ack) */
    uint32_t failed_log_count; /* members seen failing, in order (the log may be full) */
    uint32_t failed_log[CONFIG_COMM_FT_MAX_EDITS]; /* their ranks */
    /* Group edits over the base (sorted by base rank): base ranks removed
     * (SHRINK: ranks after them move down), and base ranks that are gaps
     * (COMM_GAP_NODE) or adopted by a spare (its node id). */
    uint16_t excluded_count;
    uint16_t edit_count;
    uint32_t excluded[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t edit_base[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t edit_node[CONFIG_COMM_FT_MAX_EDITS];
    /* The last decision this node learnt on it (a rebuild's, an agree's, or
     * the result of a strict allreduce or barrier it returned), kept (and
     * re-offered) until a later collective shows every member has it. */
    bool decision_held;
    uint8_t decision_kind;  /* the round's collective kind */
    uint8_t decision_seq;
    uint16_t produced;      /* rebuild: the new communicator's slot */
    bool decision_taught;   /* by a round here, in view decision_view (else a result returned) */
    uint64_t decision_view;
    uint64_t decision[COMM_FT_DECISION_WORDS];
    uint16_t decision_words; /* words of it past which all are 0 (kept cheap to reset) */
    /* The application's rebuild (or shrink) that a cut strict collective's
     * result round decides (comm/DESIGN.md, "The rebuild rides on the
     * result round"): attach_taken once the kept decision's rebuild made
     * its communicator here; attach_wait while the call waits for the
     * result round of x's collective attach_round to end here (request
     * attach_req, its recovery number attach_seq, its mode attach_mode). */
    bool attach_taken;
    bool attach_wait;
    uint8_t attach_seq;
    uint8_t attach_mode;
    uint8_t attach_round; /* the collective number of the result round it waits on */
    uint16_t attach_req;
    uint32_t *attach_new_comm;
    /* Revoke: flooded over the members' tree, each neighbour told until it
     * answers (or leaves the view). */
    uint32_t revoker;       /* the rank that revoked it */
    uint8_t revoke_targets_count;
    uint8_t revoke_acked;   /* bit per target */
    uint8_t revoke_tries;
    uint64_t revoke_due_ns;
    uint32_t revoke_targets[COMM_COLL_SUBS];
};

struct comm_coll_step {
    uint8_t kind;     /* reduce, broadcast, gather */
    bool decode;      /* broadcast: the data is a reduce result (LE) for recv */
    uint8_t *buffer;  /* broadcast, gather: where the data lies */
    uint32_t bytes;   /* broadcast: length; gather: block; reduce: vector */
};

/* One collective in flight: a short program of tree steps. */
struct comm_collective {
    uint8_t state;    /* free, running, draining (failed, internal requests finishing) */
    uint8_t kind;     /* barrier, bcast, ... */
    uint8_t op;
    uint8_t type;
    uint8_t step;
    uint8_t step_count;
    uint8_t phase;
    uint16_t comm;
    uint16_t request;  /* the application's request */
    uint32_t tag_base;
    uint32_t root;
    uint32_t size;
    uint32_t vrank;    /* rank relative to the root */
    uint32_t parent;   /* virtual rank, COMM_RANK_NONE at the root */
    uint32_t child_count;
    uint32_t children[CONFIG_COMM_TREE_RADIX]; /* virtual ranks */
    uint32_t subtree;  /* ranks in our subtree, us included */
    uint32_t combined; /* reduce: children combined so far (in order) */
    uint32_t count;    /* reduce: elements */
    const uint8_t *send;
    uint8_t *recv;
    struct comm_coll_step steps[COMM_COLL_STEPS];
    int32_t color;     /* split */
    /* recovery rounds (rebuild, agree) and adoption */
    bool background;   /* serving others' round: no application request */
    bool restart;      /* draining, then again in the new view */
    bool parked;       /* a round failed here, not by a view: again in the next one */
    bool abstain;      /* a result round of a collective never started here */
    bool in_hand;      /* a strict allreduce or barrier cut after its result
                        * came down: OK at the cut, its sends still draining */
    bool handed;       /* ... its request completed (hand_over) */
    bool attach_offered; /* a result round whose offer here named the rebuild
                          * it may decide (no creation starts meanwhile) */
    uint8_t round_seq; /* the communicator's recovery number */
    uint8_t rebuild_mode; /* enum comm_mode the rebuild applies */
    uint8_t round_error;  /* the decision's error for the application */
    uint32_t nodes[COMM_COLL_SUBS]; /* node of each child and of the parent */
    uint32_t spare_next;  /* root: next decision entry to tell its spare */
    uint32_t *flag;       /* agree */
    uint32_t *new_comm;   /* rebuild, adopt */
    /* strict collectives: the operation, then an agree on its outcome */
    bool strict_phase;    /* the agree runs (kind is now AGREE) */
    uint8_t strict_error; /* the operation's own outcome here */
    uint32_t strict_flag; /* 1: it succeeded here; then the agreed AND */
    uint32_t result_count; /* a strict allreduce's values, for its result round */
    uint8_t own[8];    /* split: our (color, key) as sent */
    /* dup, split: contexts in use, then their union (OR); then the next
     * context generation (the members' largest) */
    uint64_t contexts[COMM_CONTEXT_WORDS + 1u];
    uint8_t scratch[CONFIG_COMM_COLL_SCRATCH];
};

struct comm {
    struct comm_config config;
    uint32_t incarnation;
    bool has_view;
    uint64_t epoch;
    struct membership_view live; /* the view's live layout positions */
    struct membership_layout layout; /* positions <-> node ids (has_layout) */
    bool has_layout;
    /* The node ids the view leaves out, found once per view so that a
     * round's tree skips failed members in O(failed), not O(size);
     * COMM_DEAD_UNKNOWN when more than fit (then the view is searched). */
    uint32_t dead_count;
    uint32_t dead[COMM_DEAD_SLOTS];
    uint64_t last_now_ns;

    struct comm_communicator comms[CONFIG_COMM_MAX_COMMS];
    uint64_t contexts_used[COMM_CONTEXT_WORDS];
    /* The lowest context generation this node may give a new communicator
     * (each creation agrees on the members' largest and moves past it). */
    uint32_t next_context_gen;
    uint32_t map[CONFIG_COMM_MAP_ENTRIES]; /* rank -> node id of list communicators */

    struct comm_request requests[COMM_REQUEST_SLOTS];
    uint16_t posted_head; /* receives waiting for a message, in posting order */
    uint16_t posted_tail;
    uint16_t orphan_head; /* sends waiting for a peer slot */
    uint16_t orphan_tail;

    struct comm_peer peers[CONFIG_COMM_MAX_PEERS];
    uint32_t pump_next;   /* round-robin start among peers */

    struct comm_record records[CONFIG_COMM_MAX_UNEXPECTED];
    uint16_t record_head; /* arrival order */
    uint16_t record_tail;
    uint16_t block_next[COMM_POOL_BLOCKS];
    uint16_t free_block;
    uint32_t free_blocks;
    uint8_t pool[CONFIG_COMM_POOL_BYTES];

    struct comm_collective colls[CONFIG_COMM_MAX_COLLECTIVES];
    uint32_t coll_work;   /* bit per collective slot to advance */
    bool creating;        /* a dup or split is in flight */
    /* Failure machinery that may have work: set wherever a communicator
     * gets serve_due, abstain_due or abstain_queued (ft_background), or a
     * revoke flood waits for answers (ft_revoking); cleared by the scan
     * that finds none left.  Without them every frame and call scanned
     * every communicator for work that exists only after a failure. */
    bool ft_background;
    bool ft_revoking;

    /* Nodes the membership root decided to restart (ABARIS RESTART): a
     * REBUILD gives a failed rank back to its own node once it is back. */
    uint32_t restarting[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t restarting_count;
    /* Nodes the next views remove because they left (a graceful leave). */
    uint32_t leaving[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t leaving_count;

    /* Frames of newer views, in arrival order (held_count of them). */
    struct comm_held_frame held[COMM_HOLD_SLOTS];
    uint32_t held_count;

    struct comm_counters counters;
};

/* ---- setting up ---- */

/* Timeouts that suit emulated tori (rto 5 ms up to 100 ms, ack delay
 * 200 us, suspect 500 ms); ids and sizes left 0. */
void comm_config_defaults(struct comm_config *config);

/* Initialises a context with no view (nothing is sent or delivered until
 * comm_install_view).  WORLD exists from here on. */
enum comm_init_status comm_init(struct comm *ctx, const struct comm_config *config);
const char *comm_init_status_text(enum comm_init_status status);

/*
 * Installs a view the membership installed: its epoch and live set.  The
 * view's bits are layout positions of `layout` (NULL: positions are node
 * ids).  Members that left: every request naming them fails with
 * PROC_FAILED, their sessions are dropped, every communicator holding them
 * turns DETECTED (event), and collectives on those communicators fail.
 * Messages they completed before stay deliverable.  Returns false (and
 * changes nothing) for an epoch not newer than ours or a view whose size is
 * not node_count.
 */
bool comm_install_view(struct comm *ctx, uint64_t epoch, const struct membership_view *view,
                       const struct membership_layout *layout, uint64_t now_ns,
                       struct comm_outbox *out);

/*
 * This node lost its view (expelled, partitioned, restarting its
 * membership): every pending request fails with NO_VIEW, every session and
 * unexpected message is forgotten, every communicator turns FAILED, and the
 * context takes incarnation (the membership's new one) so that nothing
 * addressed to the old life is accepted.
 */
void comm_drop_view(struct comm *ctx, uint32_t incarnation, uint64_t now_ns,
                    struct comm_outbox *out);

/* ---- frames and time ---- */

/*
 * Handles one received COMM payload from node `source`, sent in view
 * `epoch` (the torus header's epoch field).
 */
void comm_receive(struct comm *ctx, uint32_t source, uint64_t epoch, const uint8_t *payload,
                  size_t length, uint64_t now_ns, struct comm_outbox *out);

/* Runs every timer due at now_ns and sends what waited for outbox room. */
void comm_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);

/* Earliest time comm_tick has work (now when frames wait for room),
 * COMM_NEVER when none. */
uint64_t comm_next_deadline(const struct comm *ctx);

/* ---- communicators ---- */

/* NODES: every node id, spares too, rank = node id (slot 1, the reserved
 * context COMM_CONTEXT_NODES, messages go on past failures), for the
 * runtime's traffic with spares; COMM_NULL without config.mirrors. */
uint32_t comm_nodes(const struct comm *ctx);
/* Node is in the view this core installed last. */
bool comm_node_live(const struct comm *ctx, uint32_t node);
uint32_t comm_size(const struct comm *ctx, uint32_t comm);  /* 0: no such communicator */
uint32_t comm_rank(const struct comm *ctx, uint32_t comm);  /* COMM_RANK_NONE: not in it */
enum comm_state comm_state_of(const struct comm *ctx, uint32_t comm);
uint64_t comm_epoch_of(const struct comm *ctx, uint32_t comm);
enum comm_rank_state comm_rank_state_of(const struct comm *ctx, uint32_t comm, uint32_t rank);
/* Node id of a rank (COMM_NODE_NONE when out of range). */
uint32_t comm_node_of(const struct comm *ctx, uint32_t comm, uint32_t rank);

/* Collective over comm: a new communicator with the same members (status.comm). */
enum comm_error comm_idup(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                          struct comm_outbox *out, uint32_t *request);
/* Collective over comm: the ranks of each color, ordered by (key, rank);
 * COMM_UNDEFINED gives COMM_NULL.  comm's size x 8 bytes must fit
 * CONFIG_COMM_COLL_SCRATCH.  One dup or split in flight per node. */
enum comm_error comm_isplit(struct comm *ctx, uint32_t comm, int32_t color, int32_t key,
                            uint64_t now_ns, struct comm_outbox *out, uint32_t *request);
/* Local: frees a communicator (not WORLD, not NODES; ARG) with no
 * request of the application pending on it (BUSY).  The handle is refused
 * from then on.  Safe after a recovery: a decision members still in a
 * round may need stays kept (and served) inside until a collective on the
 * communicator it made completes, or until its slot is wanted; frames of
 * it still in flight never match a later communicator that reuses its
 * context id (comm/DESIGN.md, "Freeing a communicator"). */
enum comm_error comm_free(struct comm *ctx, uint32_t comm);

/* ---- point-to-point ---- */

enum comm_error comm_isend(struct comm *ctx, uint32_t comm, uint32_t dest, int32_t tag,
                           const void *buffer, uint32_t length, uint64_t now_ns,
                           struct comm_outbox *out, uint32_t *request);
enum comm_error comm_irecv(struct comm *ctx, uint32_t comm, uint32_t source, int32_t tag,
                           void *buffer, uint32_t capacity, uint64_t now_ns,
                           struct comm_outbox *out, uint32_t *request);

/*
 * True when the request is complete: fills *status (may be NULL) and
 * releases the request.  An unknown handle is complete with error REQUEST.
 */
bool comm_test(struct comm *ctx, uint32_t request, struct comm_status *status);

/* ---- collectives (every rank of comm calls them in the same order) ---- */

enum comm_error comm_ibarrier(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                              struct comm_outbox *out, uint32_t *request);
enum comm_error comm_ibcast(struct comm *ctx, uint32_t comm, uint32_t root, void *buffer,
                            uint32_t length, uint64_t now_ns, struct comm_outbox *out,
                            uint32_t *request);
/* count elements of 8 bytes, at most CONFIG_COMM_REDUCE_MAX / 8; recv only
 * at the root (reduce) or at every rank (allreduce); send may equal recv. */
enum comm_error comm_ireduce(struct comm *ctx, uint32_t comm, uint32_t root, const void *send,
                             void *recv, uint32_t count, enum comm_type type, enum comm_op op,
                             uint64_t now_ns, struct comm_outbox *out, uint32_t *request);
enum comm_error comm_iallreduce(struct comm *ctx, uint32_t comm, const void *send, void *recv,
                                uint32_t count, enum comm_type type, enum comm_op op,
                                uint64_t now_ns, struct comm_outbox *out, uint32_t *request);
/* block bytes from every rank, into recv (size x block bytes) in rank order
 * at the root (gather) or everywhere (allgather).  Gather: the largest
 * subtree below the root times block must fit CONFIG_COMM_COLL_SCRATCH;
 * allgather: size x block <= CONFIG_COMM_MAX_MESSAGE. */
enum comm_error comm_igather(struct comm *ctx, uint32_t comm, uint32_t root, const void *send,
                             uint32_t block, void *recv, uint64_t now_ns,
                             struct comm_outbox *out, uint32_t *request);
enum comm_error comm_iallgather(struct comm *ctx, uint32_t comm, const void *send,
                                uint32_t block, void *recv, uint64_t now_ns,
                                struct comm_outbox *out, uint32_t *request);

/* ---- failure semantics (issue 14: FT-MPI modes, ULFM operations) ---- */

/* CONFIG_COMM_FT 0: ABORT and NOP only (else UNSUPPORTED); the failure
 * calls below return UNSUPPORTED, comm_failed_ranks excepted. */
/* Local: the communicator's modes from now on. */
enum comm_error comm_set_mode(struct comm *ctx, uint32_t comm, enum comm_mode mode,
                              enum comm_msg_mode msg_mode);
/* The detail call: ranks of comm out of the view (FAILED), in rank order
 * (at most max written, *count = all of them), and the epoch of the view
 * that removed the last. */
enum comm_error comm_failed_ranks(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                  uint32_t max, uint32_t *count, uint64_t *epoch);
/* ULFM: acknowledge every failure seen so far (ANY_SOURCE receives work
 * again), and list the acknowledged ranks. */
enum comm_error comm_failure_ack(struct comm *ctx, uint32_t comm);
enum comm_error comm_failure_get_acked(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                       uint32_t max, uint32_t *count);
/* Collective on the failed communicator, per its mode (SHRINK: survivors in
 * rank order; BLANK: same ranks, the failed ones gaps (INVALID_RANK);
 * REBUILD: spares adopt the gaps in rank order, lowest node id first, gaps
 * when none is left); ARG in ABORT mode.  Works on DETECTED and revoked
 * communicators; one rebuild, dup or split in flight per node (BUSY).
 * Every survivor gets the same new communicator (context, epoch, map), even
 * when members fail during it.  *new_comm is valid once the request
 * completes OK (status.comm too); the new one is RECOVERED, then OK. */
enum comm_error comm_irebuild(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                              struct comm_outbox *out, uint32_t *new_comm, uint32_t *request);
/* The SHRINK rebuild whatever the mode (ULFM shrink). */
enum comm_error comm_ishrink(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                             struct comm_outbox *out, uint32_t *new_comm, uint32_t *request);
/* Every pending and future operation on comm, everywhere, fails REVOKED
 * except rebuild, shrink, agree and failure_ack. */
enum comm_error comm_revoke(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                            struct comm_outbox *out);
/* Uniform AND of *flag over the survivors (written to *flag when done, the
 * same at every survivor, even when members fail during it).  The error is
 * uniform too, as ULFM's MPI_Comm_agree raises PROC_FAILED "consistently at
 * all processes": PROC_FAILED everywhere when some participant of the
 * deciding view had failures it had not acknowledged before its call
 * (comm_failure_ack), OK everywhere otherwise; a failure noticed only here
 * (a peer reset or restarted) never ends it with a local error, it waits
 * for the view that settles it.  Works on DETECTED and revoked
 * communicators. */
enum comm_error comm_iagree(struct comm *ctx, uint32_t comm, uint32_t *flag, uint64_t now_ns,
                            struct comm_outbox *out, uint32_t *request);
/* A spare (node id >= world_size) or a restarted WORLD node: completes when
 * a REBUILD adopted it (*new_comm, our rank = the gap taken: a restarted
 * node's own rank), or never.  ARG on a WORLD node in its first life. */
enum comm_error comm_iadopt(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out,
                            uint32_t *new_comm, uint32_t *request);

/* ---- queries ---- */

/*
 * The node will restart (the membership root's recovery decision): a
 * REBUILD then hands each rank it held back to it, when it is in the view
 * again, rather than to a spare.  Every member must be told alike (the
 * decision comes with the view).  False when the table is full.
 */
bool comm_expect_restart(struct comm *ctx, uint32_t node);
/*
 * The node left and came back within one view change (a fast reboot: its
 * new life joined in the change that removed the old one): its old life's
 * ranks fail as if it had left the view.  Every member must be told alike
 * (the membership's decision says so).
 */
void comm_node_restarted(struct comm *ctx, uint32_t node, uint64_t now_ns,
                         struct comm_outbox *out);
bool comm_restart_expected(const struct comm *ctx, uint32_t node);
/*
 * Before a REBUILD of comm: a failed rank whose node is expected to
 * restart (comm_expect_restart) and, gone_only, is not back in the view
 * yet.  The wait for such a node before the rebuild (node/tori.c's
 * await_restarts, the simulator's model) asks this.
 */
bool comm_restart_awaited(const struct comm *ctx, uint32_t comm, bool gone_only);
/*
 * The node left (the membership's `left` event, which comes with the view
 * change that removes it): when a view removes it, its communicators treat
 * it as an orderly exit, not a failure (comm/DESIGN.md, "A member that
 * left").  Every member must be told alike.  False when the table is full
 * (it then counts as failed).
 */
bool comm_member_left(struct comm *ctx, uint32_t node);

/*
 * After a start that returned COMM_ERR_BUSY: true when the same start may
 * be accepted later with nothing done by the application, because what it
 * lacked is held by the core's own work (a collective slot of a background
 * round or of a collective still draining, a creation still draining), not
 * by the application's requests (its request table has room).  The
 * blocking layer retries such a start (comm/DESIGN.md, "Strict
 * collectives").
 */
bool comm_busy_clears(const struct comm *ctx);
bool comm_has_view(const struct comm *ctx);
uint64_t comm_view_epoch(const struct comm *ctx);
const struct comm_counters *comm_get_counters(const struct comm *ctx);
const char *comm_error_text(enum comm_error error);
/* Bytes of one context at this build's configuration. */
size_t comm_context_bytes(void);

#endif /* COMM_COMM_H */
