/*
 * The deterministic simulator: every node of a torus in one process, each
 * running the very same membership state machine as a real node, driven in
 * virtual time by a priority queue of events.
 *
 * A message sent at time t from a to b is delivered at
 *   t + hops(a, b) * hop_ns
 * into b's inbox, provided b is running and on a's side of any partition
 * at that moment.  With routes on, the message instead follows the hops
 * the nodes' routers (net/torus/route.c) choose as things stand when it is
 * sent - each transit node with its own links (down after a link-down
 * notice) and its own membership's shunned neighbours - and is lost when
 * that route crosses a dead or hung node, a partition's cut, or runs out
 * of TTL: what a real torus does to frames routed through a node that
 * died before the routers learned of it.  A node handles one message at a time and each costs
 * cp_ns (so messages queue up at busy nodes); what it sends leaves when it
 * is done.  Timers cost nothing, and due timers run before the next
 * message, as in a node's poll loop (a backlog delays them by one message
 * at most).  Same parameters and seed: byte-identical output.
 *
 * After every step the invariants are checked (self inclusion, one view per
 * epoch, epochs never going back within a life, no state change from an
 * older epoch's message) and, at the end, agreement: every running node of
 * the primary side holds the same view, which is exactly the running nodes.
 * A violation stops the run with the seed, the step and a trace.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/sim_app.h"
#include "sim/sim_inject.h"
#include "membership/codec.h"
#include "membership/membership.h"
#include "net/torus/geometry.h"
#include "tools/reach.h"
#include "tools/ts_model.h"

struct sim_params {
    struct torus_geometry geometry;
    unsigned radix;
    enum membership_layout_kind layout;
    enum membership_policy policy;
    uint32_t timeout_ceiling; /* the adaptive detector's bound (membership_config) */
    uint32_t members;        /* initial view: ids below; the rest are spares */
    uint64_t hop_ns;         /* latency of one torus hop */
    uint64_t cp_ns;          /* time a node spends on each message */
    uint64_t link_detect_ns; /* a dead neighbour's link reported down after this; 0: never */
    uint64_t heartbeat_ns;   /* heartbeat period; 0: heartbeats off */
    uint64_t unit_ns;        /* timeout unit (0: derived, about one round trip) */
    uint64_t settle_ns;      /* run this long after the last injection (0: derived) */
    uint64_t seed;
    bool routes;        /* messages follow the routers' hops (see above); false: by distance */
    bool routing_table; /* routes on: the nodes' routing tables (net/torus/route_table.h),
                           advertisements one hop_ns a hop; false: detours (route.h) */
    bool json;
    unsigned verbosity; /* 0: stable and summary; 1: + node events but views; 2: all */
    uint32_t trace_node; /* print every message this node handles (UINT32_MAX: none) */
    const char *pcap_dir; /* --pcap DIR: every node's frames (sim/sim_pcap.h); NULL: none */
    struct sim_app_params app; /* kind NONE: membership only */
    uint32_t recovery_kills;   /* --recovery-kills: kills drawn while a rebuild runs */
    struct recovery_policy recovery; /* --recovery: the roots' decisions (version 0: none) */
    uint32_t seeds[MEMBERSHIP_SEEDS_MAX]; /* --seed-nodes: joiners ask these first */
    uint32_t seed_count;
    /* --app model: every recovery-decision a node emits, as it emits it
     * (NULL: none); and the launcher's part, RESTART carried out: the node
     * decided on is killed restart_ns after the decision and boots again (a
     * new life that rejoins) restart_ns after that, once per view that
     * decides it. */
    void (*on_decision)(void *context, uint64_t t_ns, uint32_t at,
                        const struct membership_event_decision *decision);
    void *decision_context;
    /* --reach INTERVAL[,PAIRS] (routes on): every reach_interval_ns from 0,
     * ordered pairs of running nodes routed as a message would be then
     * (every pair, or reach_pairs drawn with the seed); each sample is a
     * `reach-sample` line and goes to on_reach (may be NULL). */
    uint64_t reach_interval_ns; /* 0: no sampler */
    uint32_t reach_pairs;
    uint64_t reach_end_ns; /* no sample after this (0: to the end of the run) */
    void (*on_reach)(void *context, const struct reach_sample *sample);
    void *reach_context;
    bool launcher_restarts;
    uint64_t restart_ns;
};

/* Fills defaults for a geometry (radix 4, radix layout, BG/L latencies). */
void sim_params_defaults(struct sim_params *params, const struct torus_geometry *geometry);

/* The timeout unit used for params (about one round trip across the torus). */
uint64_t sim_unit_ns(const struct sim_params *params);

/* The membership's heartbeat timeout: 4 heartbeats, or 16 units without them. */
uint64_t sim_detect_timeout_ns(const struct sim_params *params);

/* The quiet time after the last fault that ends a run (settle_ns, or 400 units). */
uint64_t sim_settle_ns(const struct sim_params *params);

/*
 * The shortest heartbeat period the detector works with; sim_create
 * refuses a shorter one.  A member is suspected after 4 periods of silence
 * (8 for one that is not a torus neighbour, which beats every other
 * period).  Those 4 periods must outlast two timeout units, two round trips
 * across the torus with handling on the way: one for a heartbeat crossing
 * the torus, one for the view change that tells its sender whom to beat.
 * And a node must keep up with the heartbeats it is sent, spending at most
 * half of each period on them: one from every torus neighbour and one
 * every other period from each tree neighbour (up to radix children and a
 * parent), cp_ns each.  Shorter, and live nodes look dead and are expelled
 * again and again until the run fails.  (Checked on 2- to 4-dimensional
 * tori of 4 to 256 nodes, radix 2 to 16, hop and cp from 1 ns to 50 us,
 * with crashes, hangs, partitions and rejoins.)
 */
uint64_t sim_heartbeat_min_ns(const struct sim_params *params);

struct sim_stable {
    uint64_t t_ns;
    uint32_t root;
    uint64_t epoch;
    uint64_t ts_ns;
    uint64_t confirm_ns; /* of ts_ns: the root's wait for evidence (issue 20) */
    uint32_t messages;
    uint32_t episode_messages;
    uint32_t detector_messages;
    uint32_t rounds;
    uint32_t live;
    struct ts_model model; /* T_s models of the tree of the stable node's view */
};

struct sim_stats {
    uint64_t steps;
    uint64_t end_ns;
    uint64_t sent[MEMBERSHIP_MSG_TYPE_LIMIT];
    uint64_t sent_total;
    uint64_t delivered;
    uint64_t dropped_dead;
    uint64_t dropped_partition;
    uint64_t dropped_route; /* routes on: lost on the way (dead or hung transit, cut, TTL) */
    uint64_t ttl_expired;   /* routes on: of those, out of TTL (a bug with tables) */
    uint64_t route_adverts; /* --routing table: advertisements sent */
    uint64_t outbox_overflow;
    uint32_t stable_count;
    struct sim_stable last_stable;
    struct sim_stable first_stable;
    uint32_t failures_detected;
    uint32_t false_detections;   /* a running node reported by someone */
    uint32_t faults_classified[FAULT_MODEL_LIMIT]; /* process, network detections */
    uint32_t decisions[FAULT_MODEL_LIMIT];  /* recovery-decision events, every node's */
    uint32_t joins_refused;
    uint64_t detect_latency_max; /* failure to first report, for killed nodes */
    uint32_t views_installed;
    uint32_t distinct_views;
    uint32_t joined;
    uint64_t last_joined_ns; /* the latest `joined` event (a joiner got its view) */
    uint32_t expelled;
    uint32_t left_events; /* `left` events, every node's (the leaver's own too) */
    uint32_t nodes_left;  /* leavers that halted once out of the view */
    uint32_t pings;       /* `ping all` items carried out */
    uint64_t ping_pairs;  /* ordered pairs of running nodes they pinged */
    uint64_t ping_missing; /* ... that did not answer (each fails the run) */
    uint32_t reach_samples; /* --reach samples taken */
    uint32_t partitioned;
    uint32_t reformed;    /* `reformed` events: views minted after no node held one */
    uint64_t last_injection_ns; /* time of the last scripted fault (0: none) */
    uint64_t last_change_ns;    /* last view, join, expulsion or partition event */
    uint64_t final_epoch;
    uint32_t final_live;
    uint32_t final_viewers;
    bool violation;
    char violation_text[256];
    /* --app: every member of the initial view runs the model over its comm core */
    uint32_t app_ranks;
    uint32_t app_finished;
    uint32_t app_ok;
    uint32_t app_digests;      /* distinct digests among the finished ranks */
    uint64_t app_digest;       /* rank 0's (or the first finished rank's) */
    uint32_t app_iterations;   /* the fewest any rank completed */
    uint64_t app_done_ns;      /* the last rank's completion */
    uint64_t comm_frames;      /* comm frames sent (data, acks, control) */
    uint64_t comm_bytes;
    uint64_t comm_retransmissions;
    uint64_t comm_messages;    /* messages completed at their senders */
    uint64_t comm_outbox_overflow; /* control frames, completions, events that did not fit */
    uint32_t app_failed;       /* ranks whose model failed (a comm error) */
    bool app_aborted;          /* a fault ended the job (ABORT mode, as on the nodes) */
    uint64_t app_aborted_ns;
    char app_abort_text[160];  /* the first reason */
    uint32_t faults_not_done;  /* timed by iteration: their node was not in the state */
    uint32_t faults_not_fired; /* timed by iteration: the job ended first */
    /* --comm-mode other than abort: recovery and issue 14's checks */
    uint32_t app_rebuilds;     /* rebuilds the ranks started (summed) */
    uint32_t app_adopted;      /* spares adopted */
    uint32_t app_restored;     /* ranks that resumed from a checkpoint (their last life) */
    uint32_t app_restored_iteration; /* the newest such checkpoint */
    uint32_t app_retaken;      /* restarted nodes that took their rank back (RESTART) */
    uint32_t app_survivors;    /* ranks that finished */
    uint64_t ft_maps;          /* rank maps checked */
    uint64_t ft_epochs;        /* communicator epochs seen */
    uint64_t ft_outcomes;      /* collective outcomes checked */
    uint64_t ft_agrees;
    /* Recovery timing (virtual ns, 0: none): the first kill, and of the
     * survivors' first recovery the slowest rank's notice (its rebuild
     * began), rebuild done and resume (sim/sim_app.h). */
    uint64_t first_kill_ns;
    uint64_t recovery_noticed_ns;
    uint64_t recovery_rebuilt_ns;
    uint64_t recovery_resumed_ns;
};

struct sim;

/* The memory every node's contexts take (sim_create refuses a run that
 * needs more than the machine has). */
uint64_t sim_bytes_needed(const struct sim_params *params);

/* Allocates every node's context once; NULL (with a reason) on failure. */
struct sim *sim_create(const struct sim_params *params, char *error, size_t error_capacity);
void sim_destroy(struct sim *sim);

/* Adds scripted faults (copied). */
bool sim_add_injections(struct sim *sim, const struct fault *items, size_t count);

/*
 * Runs to the end (last injection + settle), writing lines to out (may be
 * NULL), then checks agreement.  Returns false on an invariant violation.
 */
bool sim_run(struct sim *sim, FILE *out);

/*
 * Every result line sim_run prints (faults, detections, stable, ...) also
 * goes to records as a JSON object, whatever out's format (tori-sim --out).
 */
void sim_set_records(struct sim *sim, FILE *records);

const struct sim_stats *sim_get_stats(const struct sim *sim);

/* Every ordered pair of running nodes routed as a message would be now
 * (routes on; a pair is one source, one destination, itself excluded). */
struct sim_reach {
    uint64_t pairs;
    uint64_t delivered;
    uint64_t ttl_expired; /* lost to the TTL: a loop or a long detour */
    double stretch_mean;  /* of delivered pairs: hops over minimal torus hops */
    double stretch_max;
};
void sim_reach_all_pairs(const struct sim *sim, struct sim_reach *reach);
const struct sim_params *sim_get_params(const struct sim *sim);
/* The node's state machine (read-only), for tests. */
const struct membership *sim_node(const struct sim *sim, uint32_t id);

#endif /* SIM_SIM_H */
