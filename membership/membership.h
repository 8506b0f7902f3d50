/*
 * The radix-tree membership protocol (Varma et al. 2006) as a pure state
 * machine: a message or a tick goes in (with the current time), messages and
 * events come out into a caller-provided outbox.  No I/O, no clock reads, no
 * globals, no allocation, no recursion; one context per node, sized by
 * CONFIG_MAX_NODES (see membership_context_bytes()).
 *
 * The view is the set of live members plus an epoch; the tree is derived
 * from the view alone (membership/tree.h).  A change goes root -> leaves
 * along the new tree (FAILED_NODE, ROOT_DEAD, ROOT_AND_NODE_FAILURE,
 * NEW_NODE_JOIN, ALIVE_NODE_JOIN) as a delta over a named base epoch, and
 * acks come back up (FAILURE_ACK, JOIN_ACK); the root that minted it reports
 * `stable` when the last ack arrives.  A node that cannot apply a delta
 * (it missed a change, or is joining) fetches the whole view in chunks.
 *
 * Ordering of views: each node keeps (stable_epoch, epoch), stable_epoch
 * being the last view it knows to have completed.  A message whose sender is
 * behind (older epoch, or a newer epoch on a branch that does not contain our
 * last completed view) is counted, dropped and answered with VIEW_NOTICE;
 * a sender ahead makes us fetch its view; a sender that knows a completed
 * view that we never installed, newer than our history, means we are on a
 * dead branch: we are expelled and rejoin.  Only join requests, probes and
 * state transfer are exempt.
 *
 * Partitions, primary policy: a root may install a change only if the new
 * view keeps a strict majority of the reference view (the last completed
 * one; a tie goes to the side holding the reference's root).  The count is
 * conservative: every removal since the reference counts against it.
 * A side that fails the test emits `partitioned`, drops its view and keeps
 * trying to rejoin.  EVERY_SIDE policy: no test; when sides meet again the
 * branch with the newer completed view wins and the others rejoin it.
 *
 * No view anywhere (machine/reform.c): a node of the last completed view
 * that has tried to rejoin for a bounded time without finding a view holder
 * asks that view's members (REFORM); the lowest-id one answering without a
 * view mints a new view once a strict majority of the completed view votes
 * for it (primary), or after one round of asking (every side); the others
 * join it.  A view holder heard from ends the re-forming: it is joined.
 */
#ifndef MEMBERSHIP_MEMBERSHIP_H
#define MEMBERSHIP_MEMBERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "membership/codec.h"
#include "membership/digest.h"
#include "membership/layout.h"
#include "membership/outbox.h"
#include "membership/reference.h"
#include "membership/tree.h"
#include "membership/view.h"
#include "net/torus/geometry.h"

#define MEMBERSHIP_NONE UINT32_MAX
#define MEMBERSHIP_NEVER UINT64_MAX

/* Bounded tables of the state machine. */
#define MEMBERSHIP_WATCH_MAX (CONFIG_TREE_RADIX_MAX + 1 + CONFIG_MAX_LINKS)
#define MEMBERSHIP_PROBE_MAX 16
#define MEMBERSHIP_SUSPECT_MAX 64
#define MEMBERSHIP_QUEUE_FAILED_MAX 1024
#define MEMBERSHIP_QUEUE_JOINED_MAX 256
#define MEMBERSHIP_RECENT_JOINS 16
#define MEMBERSHIP_HISTORY 16
#define MEMBERSHIP_NOTICE_CACHE 8
#define MEMBERSHIP_REMOVALS_MAX 64 /* nodes whose recent removals the root counts */
#define MEMBERSHIP_RELAY_MAX 8     /* members reached through a relay at once */
#define MEMBERSHIP_TIMEOUT_CEILING_MAX 64u
#define MEMBERSHIP_TIMEOUT_CEILING_DEFAULT 4u

enum membership_policy {
    MEMBERSHIP_POLICY_PRIMARY = 0,    /* only a majority side continues */
    MEMBERSHIP_POLICY_EVERY_SIDE = 1, /* every side forms its own view */
};

/* View holders a joiner remembers having heard from (the most recent). */
#define MEMBERSHIP_JOIN_HEARD_MAX 4u

/* Most seed nodes a configuration names (the job block holds 4). */
#define MEMBERSHIP_SEEDS_MAX 4

struct membership_config {
    uint32_t node_id;
    uint32_t incarnation;  /* boot incarnation; a restart must use a larger one */
    uint32_t member_count; /* initial view: ids 0..member_count-1 (no messages) */
    unsigned radix;        /* 2, 4, 8, 16 */
    enum membership_layout_kind layout;
    enum membership_policy policy;
    struct torus_geometry geometry; /* node count, coordinates, neighbours */
    bool watch_torus_neighbours;    /* heartbeat torus neighbours, not only tree ones */
    uint64_t heartbeat_ns;          /* heartbeat period; 0 disables heartbeats */
    uint64_t heartbeat_timeout_ns;  /* silence before a watched member is suspected */
    uint64_t probe_timeout_ns;      /* HOW_ARE_YOU answer wait */
    uint64_t ack_timeout_ns;        /* per tree level below a node, for view acks */
    uint64_t report_timeout_ns;     /* FAILURE_DET_ACK wait before suspecting the root */
    uint64_t join_timeout_ns;       /* join answer wait before trying the next contact */
    uint64_t sync_timeout_ns;       /* view chunk wait */
    /* The most the detector widens a heartbeat or probe timeout (local
     * health, observed heartbeat gaps), as a multiple of the configured
     * one: 1 never widens; default 4. */
    uint32_t timeout_ceiling;
    /* What the root decides per fault model (lib/recovery.h; the job's):
     * version 0 is no policy, and changes carry no decisions. */
    struct recovery_policy recovery;
    /* Seed nodes (the job's, issue 16): a joiner asks these first, before
     * its last view; ids below the node count. */
    uint32_t seeds[MEMBERSHIP_SEEDS_MAX];
    uint32_t seed_count;
};

enum membership_init_status {
    MEMBERSHIP_INIT_OK = 0,
    MEMBERSHIP_INIT_BAD_NODE,      /* node_id >= node count */
    MEMBERSHIP_INIT_BAD_COUNT,     /* member_count > node count, or too many nodes */
    MEMBERSHIP_INIT_BAD_RADIX,     /* not a power of two in 2..CONFIG_TREE_RADIX_MAX */
    MEMBERSHIP_INIT_BAD_LAYOUT,
    MEMBERSHIP_INIT_BAD_POLICY,
    MEMBERSHIP_INIT_BAD_TIMEOUT,   /* a zero timeout, heartbeat timeout <= period, or a
                                    * timeout ceiling outside 1..MEMBERSHIP_TIMEOUT_CEILING_MAX */
    MEMBERSHIP_INIT_BAD_RECOVERY,  /* the recovery policy fails recovery_policy_check */
    MEMBERSHIP_INIT_BAD_SEEDS,     /* more than MEMBERSHIP_SEEDS_MAX, or one not a node */
};

struct membership_counters {
    uint32_t received;
    uint32_t drops_malformed;   /* failed decode */
    uint32_t drops_stale;       /* older epoch (or dead branch sender) */
    uint32_t drops_no_view;     /* we or the sender hold no view */
    uint32_t drops_config;      /* a joiner or chunk with another configuration */
    uint32_t drops_unexpected;  /* well-formed but out of place */
    uint32_t drops_bad_ack;     /* an ack counting more members than its subtree holds */
    uint32_t notices_sent;
    uint32_t suspicions;
    uint32_t false_suspicions;  /* a probed node that answered */
    uint32_t reports_refuted;   /* root: a reported member answered its probe (kept) */
    uint32_t reports_sent;
    uint32_t report_timeouts;
    uint32_t views_installed;
    uint32_t syncs_started;
    uint32_t syncs_completed;
    uint32_t chunks_sent;
    uint32_t rounds_started;    /* as coordinating root */
    uint32_t rounds_superseded; /* of those, started over a round in flight */
    uint32_t rounds_incomplete;
    uint32_t acks_asked;        /* a child sent the change again after its ack was late */
    uint32_t expulsions;
    uint32_t partitions;
    uint32_t joins_sent;
    uint32_t table_overflows;   /* a bounded table was full */
    uint32_t pauses;            /* long silences of our own (we were stopped) */
    uint32_t timeouts_widened;  /* our own timers fired late: local health widened timeouts */
    uint32_t suspicions_refuted; /* a member we suspected, or asked before accusing, talked (kept) */
    uint32_t probes_outlived;   /* a probe, suspicion or queued report of a life a view replaced */
    uint32_t relays_sent;       /* our messages sent to a relay in an envelope */
    uint32_t relays_forwarded;  /* envelopes sent on as the relay */
    uint32_t relays_delivered;  /* envelopes opened as their target */
    uint32_t relays_refused;    /* envelopes from or for a non-member, misaddressed, no view */
    uint32_t probes_indirect;   /* root: a member we suspected, probed through a third one */
    uint32_t reforms_started;   /* rounds of asking the last completed view (no view anywhere) */
    uint32_t reforms;           /* views minted after no node held one */
};

/* One watched neighbour (tree or torus) for heartbeats. */
struct membership_watch {
    uint32_t id;
    uint64_t last_heard_ns;
    uint64_t last_beat_ns; /* its last HEARTBEAT, MEMBERSHIP_NEVER: none yet */
    uint64_t gap_mean_ns;  /* smoothed gap between its heartbeats */
    uint64_t gap_dev_ns;   /* smoothed deviation of that gap */
    bool suspected;
    bool far; /* not a torus neighbour: its heartbeats cross other nodes */
};

/*
 * A member alive but out of our reach (the root refuted our report of it,
 * or it spoke to us through a relay): what we send it goes to the relay
 * in an envelope, and every RELAY_RETEST-th heartbeat also goes direct;
 * any direct message from it ends the entry.
 */
struct membership_relay {
    uint32_t peer;
    uint32_t relay;
    uint32_t beats; /* heartbeats sent through the relay (the retest's count) */
};

struct membership_probe {
    uint32_t id;
    uint64_t started_ns;
    uint64_t deadline_ns;
    bool link_down; /* started by our link to it going down (an answer: a network fault) */
    bool silence;   /* started by its heartbeat silence while we were late ourselves */
};

enum membership_suspect_state { SUSPECT_NEW = 0, SUSPECT_REPORTED, SUSPECT_ACKED };

struct membership_suspect {
    uint32_t id;
    uint8_t state;
    uint32_t sequence;
    uint64_t recheck_ns; /* ACKED: report again if still a member by then */
};

/*
 * The children a node waits for in a round (a member's, or the root's): a
 * late ack gets the child asked again (the change re-sent, with a probe)
 * before the child is reported, see round_acks_expire.
 */
struct membership_acks {
    uint32_t count;
    uint32_t children[CONFIG_TREE_RADIX_MAX];
    uint32_t pending;  /* bit per child still to ack */
    uint32_t heard;    /* pending children heard from since they were last asked */
    uint32_t asks;     /* times the late ones were asked again */
    uint32_t max_asks;
    uint64_t wait_ns;  /* the first wait: the acks of a whole subtree */
    uint64_t deadline_ns;
};

/* This node's part in the dissemination of one change. */
struct membership_round {
    bool active;
    bool waiting_sync; /* must fetch the view before forwarding */
    uint64_t epoch;
    uint32_t parent;   /* id to ack */
    struct membership_acks acks; /* waiting_sync: no children, the deadline for the view */
    uint32_t messages;
    uint32_t reached;  /* members of our subtree that acked, us included */
    bool incomplete;
    uint8_t ack_type;
    uint64_t done_epoch; /* last epoch acked upward */
    uint16_t change_length;
    uint8_t change[MEMBERSHIP_MAX_PAYLOAD];
};

#define MEMBERSHIP_SEARCH_BATCH 32
#define MEMBERSHIP_SWEEP_MAX 256

/* Probing the subtree of a child that never acked (see detector_sweep_subtree). */
struct membership_sweep {
    bool active;
    uint32_t count;
    uint32_t ids[MEMBERSHIP_SWEEP_MAX];
    uint64_t answered[MEMBERSHIP_SWEEP_MAX / 64];
    uint64_t deadline_ns;
};

/* Looking for the next root after the root failed (batched linear scan). */
struct membership_root_search {
    bool active;
    bool waiting;      /* deadline armed */
    uint32_t root;     /* the dead root this search replaces */
    uint32_t base_rank;
    uint32_t count;
    uint32_t ids[MEMBERSHIP_SEARCH_BATCH];
    uint32_t answered; /* bit per candidate that answered the probe */
    uint64_t deadline_ns;
};

/* Probing every member before a minority verdict (see partition_census_start). */
struct membership_census {
    bool active;
    bool notify;           /* after a minority verdict: telling who answered */
    uint64_t vouch_until_ns; /* a majority verdict rounds may rely on until then */
    uint32_t next_rank;
    uint32_t answered_ref; /* answering members of the reference view (us included) */
    uint64_t deadline_ns;
    uint64_t bits[MEMBERSHIP_VIEW_WORDS]; /* positions that answered */
};

/*
 * Re-forming a view after every node lost its own (see reform.c): rounds
 * of REFORM to the lowest ids of the last completed view and to our
 * candidate; votes for us are counted in the census bits (no census runs
 * without a view).
 */
struct membership_reform {
    bool active;
    uint64_t viewless_since_ns; /* MEMBERSHIP_NEVER: holding a view, or not eligible */
    uint32_t vote;              /* who we follow, MEMBERSHIP_NONE: no vote yet */
    uint64_t vote_sent_ns;      /* when we last voted for `vote` */
    uint32_t lowest;            /* lowest id heard without a view in this round (us included) */
    uint32_t heard_lowest;      /* the same, of the round before (the vote's choice) */
    uint32_t votes;             /* members voting for us in two rounds, us included */
    uint32_t rounds;
    uint32_t scan_from;         /* ids this round asks: the reference's from here ... */
    uint32_t scan_end;          /* ... to here (REFORM_SCAN members) */
    uint64_t max_counter;       /* highest epoch counter heard (the minted one goes above) */
    uint64_t deadline_ns;
};

struct membership_join_entry {
    uint32_t id;
    uint32_t incarnation;
};

/*
 * The root's count of one node's removals (lib/recovery.h: the cascade):
 * the window opens at the first removal and a removal after it closes
 * opens a new one; quarantine lasts (until a new root, which starts
 * counting afresh).
 */
struct membership_removals {
    uint32_t id;
    uint32_t count;
    uint64_t window_start_ns;
    bool quarantined;
};

/* The minting root: queued changes, the round in flight, the episode. */
struct membership_coordinator {
    bool acting;       /* accepted a ROOT_FAILURE: root until the next view */
    uint32_t failed[MEMBERSHIP_QUEUE_FAILED_MAX];
    uint32_t failed_at_us[MEMBERSHIP_QUEUE_FAILED_MAX]; /* when queued (wrapping us) */
    uint8_t failed_model[MEMBERSHIP_QUEUE_FAILED_MAX];  /* enum fault_model as reported */
    /* The one detector whose report awaits evidence (the root's probe of the
     * node, or a second detector), MEMBERSHIP_NONE: evidence in hand. */
    uint32_t failed_by[MEMBERSHIP_QUEUE_FAILED_MAX];
    uint32_t failed_count;
    uint64_t evidence_deadline_ns; /* the first probe of a reported node to expire */
    struct membership_join_entry joins[MEMBERSHIP_QUEUE_JOINED_MAX];
    uint32_t join_count;
    /* round in flight */
    bool active;
    uint64_t epoch;
    struct membership_acks acks;
    uint8_t change_type;   /* the change minted, to send it again (see coord_write_change) */
    bool base_stable;
    bool since_stable; /* its failed ids are every failure since the stable view */
    uint64_t base_epoch;
    uint32_t round_failed_count; /* its failed ids: batch_failed */
    uint32_t messages;
    uint32_t reached;          /* members that acked this round */
    uint32_t low_reach_rounds; /* rounds in a row reaching no majority of the reference */
    bool incomplete;
    uint64_t started_ns;
    struct membership_join_entry round_joins[MEMBERSHIP_MAX_CHANGE_JOINED];
    uint32_t round_join_count;
    /* The batch being assembled for the next change: kept here, not on the
     * stack, whose frames the certification bounds. */
    uint32_t batch_failed[MEMBERSHIP_MAX_CHANGE_FAILED];
    uint32_t batch_failed_at[MEMBERSHIP_MAX_CHANGE_FAILED];
    uint8_t batch_failed_model[MEMBERSHIP_MAX_CHANGE_FAILED];
    /* The round's decisions, per failed id (with a policy, or when a member
     * left: the change carries them, so that every node tells a leave). */
    uint8_t round_model[MEMBERSHIP_MAX_CHANGE_FAILED];
    uint8_t round_action[MEMBERSHIP_MAX_CHANGE_FAILED];
    bool round_decided;
    struct membership_removals removals[MEMBERSHIP_REMOVALS_MAX];
    uint32_t removals_count;
    struct membership_join_entry batch_joins[MEMBERSHIP_MAX_CHANGE_JOINED];
    /* episode: from the first accepted report to a completed view */
    bool episode;
    uint64_t episode_start_ns;
    uint64_t episode_first_round_ns; /* MEMBERSHIP_NEVER until the episode's first mint */
    uint32_t episode_rounds;
    uint32_t episode_messages;
    uint32_t detector_messages;
    struct membership_join_entry recent[MEMBERSHIP_RECENT_JOINS];
    uint32_t recent_next;
    /* Before declaring a minority: probing the reported once more. */
    bool confirming;
    bool confirmed;
    uint64_t confirm_deadline_ns;
};

/* Fetching a whole view in chunks. */
struct membership_sync {
    bool active;
    uint32_t source;
    uint64_t epoch;   /* of the chunks being assembled; 0 before the first */
    uint64_t stable_epoch;
    uint32_t next_from;
    uint32_t live;
    uint64_t digest;
    uint32_t ref_count;
    uint32_t ref_removed;
    uint32_t ref_root;
    uint64_t deadline_ns;
    uint32_t attempts;
    uint32_t messages; /* requests sent and chunks received, for round counts */
    uint64_t staging[MEMBERSHIP_VIEW_WORDS];
};

struct membership_joiner {
    bool active;
    bool rejoin;       /* NODE_ALIVE (original id) rather than NEW_NODE */
    uint32_t contact;  /* rank in the contact list (the last view) */
    uint32_t tried;    /* contacts asked in this pass of the list */
    bool wide;         /* this pass goes over every node id, not the last view */
    uint32_t quick;    /* contacts skipped at once since the last timeout */
    uint32_t seed_next; /* seeds asked in this pass (they come first) */
    uint32_t hint;     /* ask this one first (who expelled us), or MEMBERSHIP_NONE */
    /* View holders heard from while joining, not asked yet, oldest first:
     * asked after the seeds, the newest first (issue 16). */
    uint32_t heard[MEMBERSHIP_JOIN_HEARD_MAX];
    uint32_t heard_count;
    uint32_t target;
    bool redirected;
    bool reached_root; /* this attempt's request went to a root (by redirection) */
    uint32_t backoff;  /* attempts in a row that did not get us in (the wait doubles) */
    uint32_t requests; /* requests sent in this life (seeds the jitter) */
    uint64_t asked_ns; /* when the last contact was asked */
    uint32_t flaps;    /* expulsions in a row soon after getting in */
    uint64_t in_since_ns; /* when we last got in (MEMBERSHIP_NEVER: not by joining) */
    uint64_t deadline_ns;
    bool refused;      /* a root refused us (quarantine): we stopped trying */
};

struct membership {
    struct membership_config config;
    struct membership_layout layout;
    uint32_t self;
    uint32_t self_pos;
    uint32_t incarnation;
    uint32_t config_digest;
    uint32_t node_count;

    bool has_view;
    uint64_t epoch;
    uint64_t stable_epoch;
    /* The last epoch whose recovery decisions this node reported: once per
     * epoch, whether it applied the change or fetched the whole view. */
    uint64_t decisions_epoch;
    struct membership_view view; /* live positions; the contact list when joining */
    uint64_t digest;
    uint32_t root_pos;
    uint32_t levels;
    struct membership_tree_links links;
    struct membership_reference ref; /* the last completed view (primary rule) */
    uint64_t history[MEMBERSHIP_HISTORY];
    uint32_t history_count;

    uint32_t neighbours[CONFIG_MAX_LINKS];
    uint32_t neighbour_count;
    struct membership_watch watch[MEMBERSHIP_WATCH_MAX];
    uint32_t watch_count;
    uint64_t next_heartbeat_ns;
    uint32_t heartbeat_count;
    /* Local health: how late our own heartbeat timer fired, as a multiplier
     * of the timeouts in sixteenths (16: on time), see detector.c. */
    uint32_t health_x16;
    bool beat_timed; /* a heartbeat was sent in this view: the next one's lateness counts */
    struct membership_probe probes[MEMBERSHIP_PROBE_MAX];
    uint32_t probe_count;
    struct membership_suspect suspects[MEMBERSHIP_SUSPECT_MAX];
    uint32_t suspect_count;
    struct membership_root_search search;
    struct membership_sweep sweep;
    struct membership_census census;
    struct membership_relay relays[MEMBERSHIP_RELAY_MAX];
    uint32_t relay_count;
    uint32_t report_sequence;
    uint32_t report_target;
    uint64_t report_deadline_ns;

    struct membership_round round;
    struct membership_coordinator coord;
    struct membership_sync sync;
    struct membership_joiner join;
    struct membership_reform reform;

    uint32_t notice_sender[MEMBERSHIP_NOTICE_CACHE];
    uint64_t notice_epoch[MEMBERSHIP_NOTICE_CACHE];
    uint32_t notice_next;

    uint64_t last_now_ns;
    uint64_t lag_epoch;       /* newest epoch seen ahead of ours (not a change) */
    uint32_t lag_source;
    uint64_t lag_deadline_ns; /* fetch the view from lag_source then */
    uint32_t root_check;      /* our root asked to join: is it still root? (probed) */
    uint32_t pending_work; /* WORK_* flags, run before an entry point returns */
    bool leaving;          /* asked the root to remove us (a process fault): no rejoin */
    uint8_t leaving_model; /* with what model (FAULT_MODEL_LEFT: a graceful leave) */
    struct membership_counters counters;
};

/* Fills timeouts and policy defaults (radix CONFIG_TREE_RADIX_DEFAULT). */
void membership_config_defaults(struct membership_config *config);

/*
 * The longest a joiner waits between two requests once fully backed off
 * (join timeout x 2^3, plus up to half of that as jitter): an observer that
 * wants to know whether joiners got in must wait at least this long.
 */
uint64_t membership_join_wait_max_ns(const struct membership_config *config);

/*
 * Derives the timeouts from a personality's heartbeat_ms and
 * detect_timeout_ms: heartbeat period, heartbeat/probe/ack-per-level
 * timeouts = detect timeout, report timeout = 2x, join timeout = 4x,
 * sync timeout = detect timeout.
 */
void membership_config_timeouts_ms(struct membership_config *config, uint32_t heartbeat_ms,
                                   uint32_t detect_timeout_ms);

/*
 * Initialises a context in the initial view (ids 0..member_count-1, epoch
 * 0, root = first in layout order), with no messages.  A node outside the
 * initial view (a spare) or restarted must then call membership_start_join.
 */
enum membership_init_status membership_init(struct membership *ctx,
                                            const struct membership_config *config);
const char *membership_init_status_text(enum membership_init_status status);

/* Handles one received payload. */
void membership_receive(struct membership *ctx, const uint8_t *payload, size_t length,
                        uint64_t now_ns, struct membership_outbox *out);

/* Runs every timer due at now_ns. */
void membership_tick(struct membership *ctx, uint64_t now_ns, struct membership_outbox *out);

/* Earliest time membership_tick has work, MEMBERSHIP_NEVER when none. */
uint64_t membership_next_deadline(const struct membership *ctx);

/* The torus layer saw the link to a neighbour go down (probe it) or up. */
void membership_link_event(struct membership *ctx, uint32_t neighbour, bool up, uint64_t now_ns,
                           struct membership_outbox *out);

/*
 * The link to a neighbour resends past its loss limit (issue 15: "a link's
 * retransmissions exceed a threshold"): probe the neighbour as for a link
 * that went down; if it answers, that is a network fault (failure-detected
 * and a recovery-decision with model network, no view change, under a
 * recovery policy); if it does not, the probe reports it as usual.
 */
void membership_link_lossy(struct membership *ctx, uint32_t neighbour, uint64_t now_ns,
                           struct membership_outbox *out);

/*
 * The application suspects a member (no answer to its own traffic): probe
 * it with HOW_ARE_YOU and report it if it stays silent.  Returns false when
 * the node is not a member (or is this node).
 */
bool membership_suspect(struct membership *ctx, uint32_t node, uint64_t now_ns,
                        struct membership_outbox *out);

/*
 * This node's application is gone while its runtime serves on (a process
 * fault, lib/recovery.h), or it leaves the job (FAULT_MODEL_LEFT, a
 * graceful leave: no failure-detected anywhere, a `left` event instead of
 * a decision): asks the root to remove this node with that model.  Once
 * out of the view it stays out (no rejoin; a restart is the launcher's).
 * A root asks the next member, which takes over as root and removes it.
 * Returns false when the node is no member (or the only one).
 */
bool membership_request_removal(struct membership *ctx, uint8_t model, uint64_t now_ns,
                                struct membership_outbox *out);

/* Drops any view and joins through the contact list (spares, restarts). */
void membership_start_join(struct membership *ctx, uint64_t now_ns, struct membership_outbox *out);

/* Queries. */
bool membership_has_view(const struct membership *ctx);
bool membership_is_member(const struct membership *ctx, uint32_t id);
uint64_t membership_epoch(const struct membership *ctx);
uint64_t membership_stable_epoch(const struct membership *ctx);
uint64_t membership_digest(const struct membership *ctx);
uint32_t membership_live_count(const struct membership *ctx);
uint32_t membership_root(const struct membership *ctx); /* id, MEMBERSHIP_NONE without view */
uint32_t membership_incarnation(const struct membership *ctx);
bool membership_is_joining(const struct membership *ctx);
/* A root refused our join (quarantine): no more attempts in this life. */
bool membership_join_refused(const struct membership *ctx);
/*
 * The torus links of this node (bit L: link L) whose far node routes should
 * go around: out of this node's view, or suspected dead by its detector.
 * A suspect counts before any view change: a dead node's torus neighbours
 * suspect it first, and the change that removes it may reach them after
 * the acks of nearer members have crossed them.  0 without a view.
 */
uint32_t membership_links_to_avoid(const struct membership *ctx);

/*
 * The nodes routes should go around (torus_route_next_hop_around): out of
 * this node's view, then its suspected torus neighbours.  Writes up to max
 * ids and returns how many there are: more than max means too many to
 * list (the caller then routes without the list).  0 without a view.
 */
uint32_t membership_shunned_nodes(const struct membership *ctx, uint32_t *ids, uint32_t max);
/*
 * The silence after which this node suspects watched member id now (its
 * heartbeat gaps and our local health included), 0 when id is not watched.
 */
uint64_t membership_watch_timeout(const struct membership *ctx, uint32_t id);
/* Our local-health multiplier of the detector's timeouts, in sixteenths (16: on time). */
uint32_t membership_local_health_x16(const struct membership *ctx);
/* Tree neighbours of this node in its view (ids); false without a view. */
bool membership_tree_of(const struct membership *ctx, uint32_t *parent, uint32_t *children,
                        uint32_t *child_count, uint32_t *depth);
const struct membership_counters *membership_get_counters(const struct membership *ctx);
/* Bytes of one context at this build's CONFIG_MAX_NODES. */
size_t membership_context_bytes(void);

#endif /* MEMBERSHIP_MEMBERSHIP_H */
