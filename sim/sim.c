/*
 * The simulator engine (see sim.h).  Host tool: allocates freely, but the
 * nodes themselves run membership/ exactly as on a real node.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf: a host tool */

#include "sim/sim.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/torus/route.h"
#include "net/torus/route_table.h"
#include "sim/sim_ft.h"
#include "sim/sim_invariant.h"
#include "sim/sim_pcap.h"
#include "sim/sim_queue.h"

#define TRACE_LINES 48
#define TRACE_WIDTH 176

/*
 * A line of the trace ring, printed only when a violation is reported: the
 * per-message lines (most of a run's steps) keep their fields and are
 * formatted then; the rare others are formatted when traced.
 */
enum trace_kind { TRACE_TEXT, TRACE_HANDLE, TRACE_COMM, TRACE_LOST };

struct trace_line {
    uint8_t kind;
    uint32_t from, to;
    uint64_t t_ns, epoch, stable, mine;
    const char *name; /* a static string */
    char text[TRACE_WIDTH]; /* TRACE_TEXT */
};

enum sim_node_state {
    NODE_SPARE = 0, /* never booted */
    NODE_UP,
    NODE_HUNG,
    NODE_DEAD,
};

enum sim_message_kind { MESSAGE_MEMBERSHIP = 0, MESSAGE_COMM, MESSAGE_ROUTE };

struct sim_message {
    struct sim_message *next;
    uint32_t source;
    uint32_t destination;
    uint16_t length;
    uint8_t kind;   /* enum sim_message_kind */
    uint64_t epoch; /* comm: the sender's view epoch (the torus header's field) */
    uint8_t bytes[];
};

struct sim_node {
    uint8_t state;
    bool process_pending;
    uint8_t side;
    uint32_t boots;
    uint64_t busy_until;
    uint64_t tick_at; /* time of the pending tick event, UINT64_MAX: none */
    uint64_t died_at;
    struct sim_message *inbox_head;
    struct sim_message *inbox_tail;
    struct sim_life life; /* what the invariants remember of its life */
    bool reported; /* someone reported it since it died */
    uint32_t links_up; /* routes on: this node's links its router may use */
    bool app_killed; /* appkill: its runtime serves, out of the job (until a restart) */
    bool leaving;    /* leave: asked to be removed; halts once out of the view */
    bool halt_due;   /* leave: its `left` event came, it halts after this dispatch */
    uint64_t relaunch_epoch; /* the view whose RESTART the launcher carries out (0: none) */
};

struct epoch_entry {
    uint64_t epoch; /* 0: empty slot (epoch 0 is stored as a flag) */
    uint64_t digest;
    uint32_t live;
    uint32_t installs;
    uint64_t first_ns;
    uint64_t last_ns;
    uint32_t root;
};

#define SIM_BLOCKS_MAX 16

/* A pair of nodes nothing gets between (either way) until a time. */
struct sim_block {
    uint32_t a;
    uint32_t b;
    uint64_t until_ns;
};

struct sim {
    struct sim_params params;
    struct sim_checkpoints checkpoints; /* --checkpoint-every with the stencil */
    uint32_t node_count;
    struct sim_pcap *pcap; /* --pcap, or NULL */
    struct membership *contexts;
    struct sim_node *nodes;
    struct sim_queue queue;
    struct fault *injections;
    size_t injection_count;
    struct membership_outbox *outbox;
    struct sim_stats stats;
    struct epoch_entry *epochs;
    size_t epoch_capacity;
    size_t epoch_count;
    bool epoch_zero_seen;
    struct epoch_entry epoch_zero;
    struct trace_line trace[TRACE_LINES];
    unsigned trace_next;
    unsigned trace_count;
    uint64_t now;
    uint64_t end_ns;
    FILE *out;
    FILE *records; /* NULL, or every line out gets, as JSON (sim_set_records) */
    struct membership_config base_config;
    struct sim_block blocks[SIM_BLOCKS_MAX];
    unsigned block_count;
    /* --app: every node's comm core and its model application */
    struct comm *comms;
    struct comm_outbox *comm_out;
    struct sim_app *apps;
    struct sim_ft *ft;           /* issue 14's invariants (modes other than ABORT) */
    uint32_t *map_scratch;       /* a communicator's rank map, checked */
    uint32_t recovery_kills_left;
    uint64_t recovery_kill_epoch; /* the communicator whose rebuild drew the last */
    uint8_t *fired; /* per injection timed by iteration: it fired */
    struct route_table *tables; /* --routing table: every node's */
    uint64_t reach_next_ns;  /* --reach: the next sample's time */
    uint64_t reach_state;    /* --reach PAIRS: the pairs' generator */
    uint32_t *reach_running; /* --reach PAIRS: the running nodes at a sample */
};

/* ------------------------------------------------------------------ */
/* Parameters and models                                                */
/* ------------------------------------------------------------------ */

void sim_params_defaults(struct sim_params *params, const struct torus_geometry *geometry)
{
    memset(params, 0, sizeof *params);
    params->geometry = *geometry;
    params->radix = 4;
    params->layout = MEMBERSHIP_LAYOUT_RADIX;
    params->policy = MEMBERSHIP_POLICY_PRIMARY;
    params->timeout_ceiling = MEMBERSHIP_TIMEOUT_CEILING_DEFAULT;
    params->members = geometry->node_count;
    params->hop_ns = 4600;
    params->cp_ns = 2000;
    params->link_detect_ns = 10000;
    params->heartbeat_ns = 0;
    params->verbosity = 1;
    params->trace_node = UINT32_MAX;
}

uint64_t sim_unit_ns(const struct sim_params *params)
{
    if (params->unit_ns != 0) {
        return params->unit_ns;
    }
    uint64_t diameter = torus_geometry_diameter(&params->geometry);
    uint64_t unit = 2u * diameter * params->hop_ns + 10u * params->cp_ns;
    return unit < 10000u ? 10000u : unit;
}

uint64_t sim_detect_timeout_ns(const struct sim_params *params)
{
    return params->heartbeat_ns != 0 ? 4u * params->heartbeat_ns : 16u * sim_unit_ns(params);
}

uint64_t sim_settle_ns(const struct sim_params *params)
{
    return params->settle_ns != 0 ? params->settle_ns : 400u * sim_unit_ns(params);
}

uint64_t sim_heartbeat_min_ns(const struct sim_params *params)
{
    uint64_t crossing = (sim_unit_ns(params) + 1u) / 2u;
    uint64_t links = torus_geometry_link_count(&params->geometry);
    /* Heartbeats sent to a node per period, doubled: 2 per torus neighbour,
     * 1 per tree neighbour; at most half of the period handling them. */
    uint64_t doubled = 2u * links + (uint64_t)params->radix + 1u;
    uint64_t handling = doubled * params->cp_ns;
    return crossing > handling ? crossing : handling;
}

/* ------------------------------------------------------------------ */
/* Output and trace                                                     */
/* ------------------------------------------------------------------ */

static void trace(struct sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static struct trace_line *trace_next_line(struct sim *sim, enum trace_kind kind)
{
    struct trace_line *line = &sim->trace[sim->trace_next];
    line->kind = (uint8_t)kind;
    sim->trace_next = (sim->trace_next + 1u) % TRACE_LINES;
    if (sim->trace_count < TRACE_LINES) {
        sim->trace_count++;
    }
    return line;
}

static void trace(struct sim *sim, const char *fmt, ...)
{
    struct trace_line *line = trace_next_line(sim, TRACE_TEXT);
    va_list args;
    va_start(args, fmt);
    vsnprintf(line->text, TRACE_WIDTH, fmt, args);
    va_end(args);
}

/* A message handled, or lost on the way (name: a static string). */
static void trace_message(struct sim *sim, enum trace_kind kind, uint32_t from, uint32_t to,
                          const char *name, uint64_t epoch, uint64_t stable, uint64_t mine)
{
    struct trace_line *line = trace_next_line(sim, kind);
    line->t_ns = sim->now;
    line->from = from;
    line->to = to;
    line->name = name;
    line->epoch = epoch;
    line->stable = stable;
    line->mine = mine;
}

/* The line as trace() would have written it when it was traced. */
static const char *trace_text(struct trace_line *line, char *buffer)
{
    switch ((enum trace_kind)line->kind) {
    case TRACE_HANDLE:
        snprintf(buffer, TRACE_WIDTH,
                 "t=%" PRIu64 " %" PRIu32 "->%" PRIu32 " %s epoch=%" PRIx64 " stable=%" PRIx64
                 " (at %" PRIx64 ")",
                 line->t_ns, line->from, line->to, line->name, line->epoch, line->stable,
                 line->mine);
        return buffer;
    case TRACE_COMM:
        snprintf(buffer, TRACE_WIDTH, "t=%" PRIu64 " %" PRIu32 "->%" PRIu32 " comm epoch=%" PRIx64,
                 line->t_ns, line->from, line->to, line->epoch);
        return buffer;
    case TRACE_LOST:
        snprintf(buffer, TRACE_WIDTH, "t=%" PRIu64 " %" PRIu32 "->%" PRIu32 " %s lost on the way",
                 line->t_ns, line->from, line->to, line->name);
        return buffer;
    case TRACE_TEXT:
        break;
    }
    return line->text;
}

static void violation(struct sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(struct sim *sim, const char *fmt, ...)
{
    if (sim->stats.violation) {
        return;
    }
    sim->stats.violation = true;
    va_list args;
    va_start(args, fmt);
    vsnprintf(sim->stats.violation_text, sizeof sim->stats.violation_text, fmt, args);
    va_end(args);
    FILE *f = sim->out != NULL ? sim->out : stderr;
    fprintf(f, "violation seed=%" PRIu64 " step=%" PRIu64 " t_ns=%" PRIu64 ": %s\n",
            sim->params.seed, sim->stats.steps, sim->now, sim->stats.violation_text);
    fprintf(f, "trace (last %u steps):\n", sim->trace_count);
    for (unsigned i = 0; i < sim->trace_count; i++) {
        unsigned index = (sim->trace_next + TRACE_LINES - sim->trace_count + i) % TRACE_LINES;
        char buffer[TRACE_WIDTH];
        fprintf(f, "  %s\n", trace_text(&sim->trace[index], buffer));
    }
}

/* Starts an output line: text "t_ns=.. node=.. event=.." or a JSON object;
 * each helper writes the records' JSON too. */
static void line_begin(struct sim *sim, uint32_t node, const char *event)
{
    if (sim->out != NULL && !sim->params.json) {
        fprintf(sim->out, "t_ns=%" PRIu64 " node=%" PRIu32 " event=%s", sim->now, node, event);
    }
    FILE *sinks[2] = {sim->out != NULL && sim->params.json ? sim->out : NULL, sim->records};
    for (unsigned i = 0; i < 2; i++) {
        if (sinks[i] != NULL) {
            fprintf(sinks[i], "{\"t_ns\":%" PRIu64 ",\"node\":%" PRIu32 ",\"event\":\"%s\"",
                    sim->now, node, event);
        }
    }
}

static void line_u64(struct sim *sim, const char *key, uint64_t value)
{
    if (sim->out != NULL) {
        fprintf(sim->out, sim->params.json ? ",\"%s\":%" PRIu64 : " %s=%" PRIu64, key, value);
    }
    if (sim->records != NULL) {
        fprintf(sim->records, ",\"%s\":%" PRIu64, key, value);
    }
}

static void line_hex(struct sim *sim, const char *key, uint64_t value)
{
    if (sim->out != NULL) {
        fprintf(sim->out, sim->params.json ? ",\"%s\":\"%016" PRIx64 "\"" : " %s=%016" PRIx64,
                key, value);
    }
    if (sim->records != NULL) {
        fprintf(sim->records, ",\"%s\":\"%016" PRIx64 "\"", key, value);
    }
}

static void line_str(struct sim *sim, const char *key, const char *value)
{
    if (sim->out != NULL) {
        fprintf(sim->out, sim->params.json ? ",\"%s\":\"%s\"" : " %s=%s", key, value);
    }
    if (sim->records != NULL) {
        fprintf(sim->records, ",\"%s\":\"%s\"", key, value);
    }
}

/* Ratios in thousandths, printed as a decimal: deterministic, no floats. */
static void line_ratio(struct sim *sim, const char *key, uint64_t num, uint64_t den)
{
    uint64_t milli = den == 0 ? 0 : (num * 1000u + den / 2u) / den;
    if (sim->out != NULL) {
        fprintf(sim->out,
                sim->params.json ? ",\"%s\":%" PRIu64 ".%03" PRIu64 : " %s=%" PRIu64 ".%03" PRIu64,
                key, milli / 1000u, milli % 1000u);
    }
    if (sim->records != NULL) {
        fprintf(sim->records, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, milli / 1000u,
                milli % 1000u);
    }
}

static void line_end(struct sim *sim)
{
    if (sim->out != NULL) {
        fputs(sim->params.json ? "}\n" : "\n", sim->out);
    }
    if (sim->records != NULL) {
        fputs("}\n", sim->records);
    }
}

/* ------------------------------------------------------------------ */
/* Epoch registry: one view per epoch, whoever installs it               */
/* ------------------------------------------------------------------ */

static struct epoch_entry *epoch_find(struct sim *sim, uint64_t epoch, bool create)
{
    if (epoch == 0) {
        if (!sim->epoch_zero_seen && !create) {
            return NULL;
        }
        if (!sim->epoch_zero_seen) {
            memset(&sim->epoch_zero, 0, sizeof sim->epoch_zero);
            sim->epoch_zero_seen = true;
            sim->stats.distinct_views++;
        }
        return &sim->epoch_zero;
    }
    if (create && (sim->epoch_count + 1) * 2 > sim->epoch_capacity) {
        size_t capacity = sim->epoch_capacity == 0 ? 256 : sim->epoch_capacity * 2;
        struct epoch_entry *table = calloc(capacity, sizeof *table);
        if (table == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < sim->epoch_capacity; i++) {
            if (sim->epochs[i].epoch != 0) {
                size_t j = (size_t)(membership_id_digest((uint32_t)sim->epochs[i].epoch) ^
                                    (sim->epochs[i].epoch >> 32)) &
                           (capacity - 1);
                while (table[j].epoch != 0) {
                    j = (j + 1) & (capacity - 1);
                }
                table[j] = sim->epochs[i];
            }
        }
        free(sim->epochs);
        sim->epochs = table;
        sim->epoch_capacity = capacity;
    }
    if (sim->epoch_capacity == 0) {
        return NULL;
    }
    size_t j = (size_t)(membership_id_digest((uint32_t)epoch) ^ (epoch >> 32)) &
               (sim->epoch_capacity - 1);
    while (sim->epochs[j].epoch != 0) {
        if (sim->epochs[j].epoch == epoch) {
            return &sim->epochs[j];
        }
        j = (j + 1) & (sim->epoch_capacity - 1);
    }
    if (!create) {
        return NULL;
    }
    sim->epochs[j].epoch = epoch;
    sim->epoch_count++;
    sim->stats.distinct_views++;
    return &sim->epochs[j];
}

/* ------------------------------------------------------------------ */
/* Messages and scheduling                                              */
/* ------------------------------------------------------------------ */

static void push(struct sim *sim, uint64_t time_ns, uint8_t kind, uint32_t node, uint32_t other,
                 uint8_t flag, struct sim_message *message)
{
    struct sim_event e = {
        .time_ns = time_ns, .kind = kind, .node = node, .other = other, .flag = flag,
        .message = message,
    };
    if (!sim_queue_push(&sim->queue, e)) {
        fprintf(stderr, "tori-sim: out of memory for the event queue\n");
        exit(1);
    }
}

static void reschedule_tick(struct sim *sim, uint32_t id)
{
    struct sim_node *n = &sim->nodes[id];
    if (n->state != NODE_UP) {
        return;
    }
    uint64_t d = membership_next_deadline(&sim->contexts[id]);
    if (sim->comms != NULL) {
        uint64_t c = comm_next_deadline(&sim->comms[id]);
        if (c != COMM_NEVER && (d == MEMBERSHIP_NEVER || c < d)) {
            d = c;
        }
        /* The model's own clock: a node waits for a restarted rank's node
         * by polling (node/tori.c's await_restarts), woken by time alone. */
        uint64_t a = sim_app_next_deadline(&sim->apps[id]);
        if (a < d) {
            d = a;
        }
    }
    if (d == MEMBERSHIP_NEVER) {
        return;
    }
    if (d < sim->now) {
        d = sim->now;
    }
    if (d < n->tick_at) {
        n->tick_at = d;
        push(sim, d, SIM_EVENT_TICK, id, 0, 0, NULL);
    }
}

static void schedule_process(struct sim *sim, uint32_t id)
{
    struct sim_node *n = &sim->nodes[id];
    if (n->process_pending || n->state != NODE_UP || n->inbox_head == NULL) {
        return;
    }
    n->process_pending = true;
    push(sim, n->busy_until > sim->now ? n->busy_until : sim->now, SIM_EVENT_PROCESS, id, 0, 0,
         NULL);
}

static void free_inbox(struct sim_node *n)
{
    struct sim_message *m = n->inbox_head;
    while (m != NULL) {
        struct sim_message *next = m->next;
        free(m);
        m = next;
    }
    n->inbox_head = NULL;
    n->inbox_tail = NULL;
}

static bool node_running(const struct sim_node *n)
{
    return n->state == NODE_UP || n->state == NODE_HUNG;
}

static void print_event(struct sim *sim, uint32_t id, const struct membership_event *e)
{
    if (e->type == MEMBERSHIP_EVENT_VIEW || e->type == MEMBERSHIP_EVENT_JOINED ||
        e->type == MEMBERSHIP_EVENT_EXPELLED || e->type == MEMBERSHIP_EVENT_PARTITIONED) {
        sim->stats.last_change_ns = sim->now;
    }
    switch (e->type) {
    case MEMBERSHIP_EVENT_VIEW: {
        sim->stats.views_installed++;
        struct epoch_entry *entry = epoch_find(sim, e->u.view.epoch, true);
        if (entry != NULL) {
            if (entry->installs == 0) {
                entry->digest = e->u.view.digest;
                entry->live = e->u.view.live;
                entry->first_ns = sim->now;
                entry->root = e->u.view.root;
            } else if (entry->digest != e->u.view.digest || entry->live != e->u.view.live) {
                violation(sim,
                          "two views with epoch %" PRIx64 ": live %" PRIu32 " digest %016" PRIx64
                          " and live %" PRIu32 " digest %016" PRIx64 " (node %" PRIu32 ")",
                          e->u.view.epoch, entry->live, entry->digest, e->u.view.live,
                          e->u.view.digest, id);
            }
            entry->installs++;
            entry->last_ns = sim->now;
        }
        if (sim->params.verbosity >= 2) {
            line_begin(sim, id, "view");
            line_hex(sim, "epoch", e->u.view.epoch);
            line_u64(sim, "root", e->u.view.root);
            line_u64(sim, "live", e->u.view.live);
            line_hex(sim, "digest", e->u.view.digest);
            line_end(sim);
        }
        break;
    }
    case MEMBERSHIP_EVENT_FAILURE_DETECTED: {
        uint32_t who = e->u.failure.who;
        if (e->u.failure.model == FAULT_MODEL_PHYSICAL) {
            sim->stats.failures_detected++;
        }
        const struct sim_node *target = &sim->nodes[who];
        /* Down, stopped, cut off, or not taking part (partitioned, rejoining). */
        bool truly_down = target->state == NODE_DEAD || target->state == NODE_HUNG ||
                          target->state == NODE_SPARE ||
                          target->side != sim->nodes[id].side ||
                          !membership_has_view(&sim->contexts[who]);
        uint64_t latency = 0;
        bool physical = e->u.failure.model == FAULT_MODEL_PHYSICAL;
        if (!physical) {
            /* A process or network fault: its node is up, and rightly so. */
            sim->stats.faults_classified[e->u.failure.model]++;
        } else if (!truly_down) {
            sim->stats.false_detections++;
        } else if (target->state == NODE_DEAD && !sim->nodes[who].reported) {
            sim->nodes[who].reported = true;
            latency = sim->now - target->died_at;
            if (latency > sim->stats.detect_latency_max) {
                sim->stats.detect_latency_max = latency;
            }
        }
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "failure-detected");
            line_u64(sim, "who", who);
            line_u64(sim, "detect_ns", e->u.failure.detect_ns);
            line_str(sim, "cause", membership_cause_name(e->u.failure.cause));
            line_str(sim, "model", fault_model_name(e->u.failure.model));
            line_str(sim, "truth", truly_down ? "down" : "alive");
            if (latency != 0) {
                line_u64(sim, "since_failure_ns", latency);
            }
            line_end(sim);
        }
        break;
    }
    case MEMBERSHIP_EVENT_STABLE: {
        struct sim_stable s;
        memset(&s, 0, sizeof s);
        s.t_ns = sim->now;
        s.root = id;
        s.epoch = e->u.stable.epoch;
        s.ts_ns = e->u.stable.ts_ns;
        s.confirm_ns = e->u.stable.confirm_ns;
        s.messages = e->u.stable.messages;
        s.episode_messages = e->u.stable.episode_messages;
        s.detector_messages = e->u.stable.detector_messages;
        s.rounds = e->u.stable.rounds;
        s.live = e->u.stable.live;
        ts_model_compute(&sim->contexts[id].view, &sim->contexts[id].layout,
                         sim->contexts[id].config.radix, (double)sim->params.hop_ns,
                         (double)sim->params.cp_ns, &s.model);
        if (sim->stats.stable_count == 0) {
            sim->stats.first_stable = s;
        }
        sim->stats.stable_count++;
        sim->stats.last_stable = s;
        line_begin(sim, id, "stable");
        line_hex(sim, "epoch", s.epoch);
        line_u64(sim, "live", s.live);
        line_u64(sim, "levels", s.model.levels);
        line_u64(sim, "ts_ns", s.ts_ns);
        line_u64(sim, "confirm_ns", s.confirm_ns);
        line_u64(sim, "messages", s.messages);
        line_u64(sim, "episode_messages", s.episode_messages);
        line_u64(sim, "detector_messages", s.detector_messages);
        line_u64(sim, "rounds", s.rounds);
        line_u64(sim, "base_model_ns", (uint64_t)s.model.base_ns);
        line_u64(sim, "hop_sum", s.model.hop_sum);
        line_u64(sim, "distance_model_ns", (uint64_t)s.model.distance_ns);
        line_u64(sim, "path_hops", s.model.path_hops);
        line_u64(sim, "path_model_ns", (uint64_t)s.model.path_ns);
        line_ratio(sim, "ts_per_base", s.ts_ns, (uint64_t)s.model.base_ns);
        line_ratio(sim, "ts_per_distance", s.ts_ns, (uint64_t)s.model.distance_ns);
        line_ratio(sim, "ts_per_path", s.ts_ns, (uint64_t)s.model.path_ns);
        line_ratio(sim, "ts_per_hop", s.ts_ns, sim->params.hop_ns);
        line_end(sim);
        break;
    }
    case MEMBERSHIP_EVENT_JOINED:
        sim->stats.joined++;
        sim->stats.last_joined_ns = sim->now;
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "joined");
            line_hex(sim, "epoch", e->u.joined.epoch);
            line_u64(sim, "root", e->u.joined.root);
            line_end(sim);
        }
        break;
    case MEMBERSHIP_EVENT_EXPELLED:
        sim->stats.expelled++;
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "expelled");
            line_hex(sim, "epoch", e->u.expelled.epoch);
            line_u64(sim, "by", e->u.expelled.by);
            line_end(sim);
        }
        break;
    case MEMBERSHIP_EVENT_RECOVERY_DECISION:
        sim->stats.decisions[e->u.decision.model]++;
        if (sim->params.on_decision != NULL) {
            sim->params.on_decision(sim->params.decision_context, sim->now, id, &e->u.decision);
        }
        if (sim->comms != NULL && e->u.decision.action == RECOVERY_RESTART &&
            !e->u.decision.quarantined && e->u.decision.node < sim->node_count) {
            /* as node/node_membership.c: the rebuild holds the rank for it */
            comm_expect_restart(&sim->comms[id], e->u.decision.node);
        }
        if (sim->params.launcher_restarts && e->u.decision.action == RECOVERY_RESTART &&
            e->u.decision.node < sim->node_count &&
            sim->nodes[e->u.decision.node].relaunch_epoch != e->u.decision.epoch) {
            sim->nodes[e->u.decision.node].relaunch_epoch = e->u.decision.epoch;
            push(sim, sim->now + sim->params.restart_ns, SIM_EVENT_RELAUNCH,
                 e->u.decision.node, 0, 0, NULL);
        }
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "recovery-decision");
            line_u64(sim, "who", e->u.decision.node);
            line_str(sim, "model", fault_model_name(e->u.decision.model));
            line_str(sim, "action", recovery_action_name(e->u.decision.action));
            line_hex(sim, "epoch", e->u.decision.epoch);
            if (e->u.decision.quarantined) {
                line_str(sim, "quarantined", "true");
            }
            if (e->u.decision.rejoined) {
                line_str(sim, "rejoined", "true");
            }
            line_end(sim);
        }
        break;
    case MEMBERSHIP_EVENT_JOIN_REFUSED:
        sim->stats.joins_refused++;
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "join-refused");
            line_u64(sim, "by", e->u.refused.by);
            line_str(sim, "reason", membership_refused_reason_name(e->u.refused.reason));
            line_end(sim);
        }
        break;
    case MEMBERSHIP_EVENT_LEFT:
        sim->stats.left_events++;
        if (e->u.left.who == id) {
            sim->nodes[id].halt_due = true; /* as the node does (node_membership.c) */
        } else if (sim->comms != NULL) {
            comm_member_left(&sim->comms[id], e->u.left.who); /* an orderly exit */
        }
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "left");
            line_u64(sim, "who", e->u.left.who);
            line_hex(sim, "epoch", e->u.left.epoch);
            line_end(sim);
        }
        break;
    case MEMBERSHIP_EVENT_REFORMED:
        sim->stats.reformed++;
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "reformed");
            line_hex(sim, "epoch", e->u.reformed.epoch);
            line_u64(sim, "members", e->u.reformed.members);
            line_hex(sim, "from", e->u.reformed.from);
            line_end(sim);
        }
        break;
    case MEMBERSHIP_EVENT_PARTITIONED:
        sim->stats.partitioned++;
        if (sim->params.verbosity >= 1) {
            line_begin(sim, id, "partitioned");
            line_hex(sim, "epoch", e->u.partitioned.epoch);
            line_u64(sim, "side_live", e->u.partitioned.side_live);
            line_u64(sim, "ref_live", e->u.partitioned.ref_live);
            line_end(sim);
        }
        break;
    default:
        break;
    }
}

/*
 * Routes on: the hops a message takes from source to destination, each
 * chosen by the transit node's router with what that node knows now (its
 * links up, the neighbours its membership shuns), as a real node's network
 * does with every frame.  False when it is lost on the way: a transit node
 * is dead or hung (its links still up: the others do not know yet), the
 * hop crosses a partition's cut, there is no usable link, or the TTL ends.
 */
/* --routing table: the hop the node's network takes (net/torus/network.c):
 * its table's entry, else dimension order over productive links, a shunned
 * neighbour last. */
static int table_hop(const struct sim *sim, uint32_t here, uint32_t destination)
{
    const struct torus_geometry *g = &sim->params.geometry;
    int link = route_table_next_hop(&sim->tables[here], destination);
    if (link != ROUTE_TABLE_DEFAULT) {
        return link;
    }
    uint32_t up = sim->nodes[here].links_up;
    uint32_t shunned = membership_links_to_avoid(&sim->contexts[here]) &
                       ~torus_route_links_towards(g, here, destination);
    link = torus_route_next_hop(g, here, destination, up & ~shunned);
    return link != TORUS_ROUTE_NONE ? link : torus_route_next_hop(g, here, destination, up);
}

static bool route(const struct sim *sim, uint32_t source, uint32_t destination, uint64_t *hops,
                  bool *ttl_expired)
{
    const struct torus_geometry *g = &sim->params.geometry;
    uint32_t here = source;
    int in_link = -1;
    uint32_t ttl = sim->tables != NULL ? route_table_ttl(g) : torus_route_ttl(g);
    *ttl_expired = false;
    for (uint64_t taken = 0;; taken++) {
        if (here == destination) {
            *hops = taken;
            return true;
        }
        if (here != source) {
            if (sim->nodes[here].state != NODE_UP) {
                return false;
            }
            if (ttl <= 1) {
                *ttl_expired = true;
                return false;
            }
            ttl--;
        }
        int link;
        if (sim->tables != NULL) {
            link = table_hop(sim, here, destination);
        } else {
            /* As node/node_membership.c tells the node's network. */
            uint32_t shunned[TORUS_ROUTE_SHUNNED_MAX];
            uint32_t count =
                membership_shunned_nodes(&sim->contexts[here], shunned, TORUS_ROUTE_SHUNNED_MAX);
            link = torus_route_next_hop_around(
                g, here, destination, sim->nodes[here].links_up,
                membership_links_to_avoid(&sim->contexts[here]), in_link,
                count <= TORUS_ROUTE_SHUNNED_MAX ? shunned : NULL, count);
        }
        if (link < 0) {
            return false;
        }
        uint32_t next = torus_geometry_neighbour(g, here, (unsigned)link);
        if (next == TORUS_RANK_NONE || sim->nodes[next].side != sim->nodes[here].side) {
            return false;
        }
        in_link = link ^ 1; /* it arrives on the far end of the same cable */
        here = next;
    }
}

/* --routing table: what node id's table owes its neighbours, each an
 * advertisement one hop_ns away. */
static void advertise(struct sim *sim, uint32_t id)
{
    if (sim->tables == NULL) {
        return;
    }
    struct route_table *table = &sim->tables[id];
    const struct torus_geometry *g = &sim->params.geometry;
    uint8_t buffer[TORUS_FRAME_MAX_PAYLOAD];
    for (unsigned link = 0; link < torus_geometry_link_count(g); link++) {
        while (((route_table_pending(table, sim->now) >> link) & 1u) != 0) {
            size_t length = route_table_advert(table, link, buffer, sizeof buffer, sim->now);
            if (length == 0) {
                break;
            }
            struct sim_message *m = malloc(sizeof *m + length);
            if (m == NULL) {
                fprintf(stderr, "tori-sim: out of memory for messages\n");
                exit(1);
            }
            m->next = NULL;
            m->source = id;
            m->destination = torus_geometry_neighbour(g, id, link);
            m->length = (uint16_t)length;
            m->kind = MESSAGE_ROUTE;
            m->epoch = 0;
            memcpy(m->bytes, buffer, length);
            sim->stats.route_adverts++;
            /* flag: the link it arrives on, the far end of the same cable */
            push(sim, sim->now + sim->params.hop_ns, SIM_EVENT_ADVERT, m->destination, id,
                 (uint8_t)(link ^ 1u), m);
        }
    }
    /* A raise of its own seq held back: a wake-up then (no message). */
    uint64_t due = route_table_next_deadline(table);
    if (due != UINT64_MAX && due > sim->now) {
        push(sim, due, SIM_EVENT_ADVERT, id, id, 0, NULL);
    }
}

/* --routing table: node id's link (to other, every cable) changed. */
static void table_link(struct sim *sim, uint32_t id, uint32_t other, bool up)
{
    if (sim->tables == NULL || sim->nodes[id].state != NODE_UP) {
        return;
    }
    uint32_t cables = torus_route_links_towards(&sim->params.geometry, id, other);
    for (unsigned link = 0; cables != 0; link++, cables >>= 1) {
        if ((cables & 1u) != 0) {
            route_table_link_changed(&sim->tables[id], link, up);
        }
    }
    advertise(sim, id);
}

/* Routes on: links between id and its running neighbours up (down) at both ends. */
static void set_links(struct sim *sim, uint32_t id, bool up)
{
    const struct torus_geometry *g = &sim->params.geometry;
    for (unsigned link = 0; link < torus_geometry_link_count(g); link++) {
        uint32_t n = torus_geometry_neighbour(g, id, link);
        if (n == TORUS_RANK_NONE || n == id || !node_running(&sim->nodes[n])) {
            continue;
        }
        uint32_t here = 1u << link;
        uint32_t there = 1u << (link ^ 1u);
        sim->nodes[id].links_up = up ? sim->nodes[id].links_up | here : sim->nodes[id].links_up & ~here;
        sim->nodes[n].links_up = up ? sim->nodes[n].links_up | there : sim->nodes[n].links_up & ~there;
        table_link(sim, id, n, up);
        table_link(sim, n, id, up);
    }
}

/* --pcap: the message as the torus frame the node sent (at depart, no hop
 * taken yet) or received (now, every hop taken). */
static void capture(struct sim *sim, const struct sim_message *m, bool received, uint64_t t_ns)
{
    if (sim->pcap == NULL) {
        return;
    }
    uint32_t hops = torus_geometry_distance(&sim->params.geometry, m->source, m->destination);
    struct torus_frame_header header;
    memset(&header, 0, sizeof header);
    header.type = m->kind == MESSAGE_COMM ? TORUS_FRAME_TYPE_COMM : TORUS_FRAME_TYPE_MEMBERSHIP;
    header.ttl = (uint8_t)(received ? 1u : hops + 1u);
    header.hops = (uint8_t)(received ? hops : 0u);
    header.source = m->source;
    header.destination = m->destination;
    header.epoch = m->epoch;
    sim_pcap_frame(sim->pcap, received ? m->destination : m->source, t_ns, &header, m->bytes,
                   m->length);
}

/* Delivers a message at depart + its travel time, or counts it lost on the way. */
static void send_message(struct sim *sim, struct sim_message *m, uint64_t depart,
                         const char *what)
{
    capture(sim, m, false, depart);
    uint64_t hops = torus_geometry_distance(&sim->params.geometry, m->source, m->destination);
    bool ttl_expired = false;
    if (sim->params.routes && !route(sim, m->source, m->destination, &hops, &ttl_expired)) {
        sim->stats.dropped_route++;
        sim->stats.ttl_expired += ttl_expired;
        trace_message(sim, TRACE_LOST, m->source, m->destination, what, 0, 0, 0);
        free(m);
        return;
    }
    push(sim, depart + hops * sim->params.hop_ns, SIM_EVENT_DELIVER, m->destination, m->source,
         0, m);
}

/* Sends what a node's membership produced (leaving at depart) and reports its events. */
static void dispatch_membership(struct sim *sim, uint32_t source, uint64_t depart)
{
    struct membership_outbox *out = sim->outbox;
    for (uint32_t i = 0; i < out->message_count; i++) {
        const struct membership_outgoing *o = &out->messages[i];
        if (o->destination >= sim->node_count || o->destination == source) {
            violation(sim, "node %" PRIu32 " sent to bad destination %" PRIu32, source,
                      o->destination);
            continue;
        }
        struct sim_message *m = malloc(sizeof *m + o->length);
        if (m == NULL) {
            fprintf(stderr, "tori-sim: out of memory for messages\n");
            exit(1);
        }
        m->next = NULL;
        m->source = source;
        m->destination = o->destination;
        m->length = o->length;
        m->kind = MESSAGE_MEMBERSHIP;
        m->epoch = membership_epoch(&sim->contexts[source]); /* as the node stamps it */
        memcpy(m->bytes, membership_outbox_payload(out, i), o->length);
        uint8_t type = o->length > 1 ? m->bytes[1] : 0;
        if (type < MEMBERSHIP_MSG_TYPE_LIMIT) {
            sim->stats.sent[type]++;
        }
        if (source == sim->params.trace_node && sim->out != NULL) {
            fprintf(sim->out, "t_ns=%" PRIu64 " node=%" PRIu32 " event=send to=%" PRIu32
                              " type=%s\n",
                    sim->now, source, o->destination, membership_msg_type_name(type));
        }
        sim->stats.sent_total++;
        send_message(sim, m, depart, membership_msg_type_name(type));
    }
    sim->stats.outbox_overflow += out->dropped_messages + out->dropped_events;
    for (uint32_t i = 0; i < out->event_count; i++) {
        print_event(sim, source, &out->events[i]);
    }
    membership_outbox_clear(out);
}

/*
 * Sends what a node's comm core produced, as the node glue does
 * (node/node_comm.c): frames travel like membership messages, stamped
 * with the view epoch; a suspicion goes to the node's membership, which
 * probes and decides.
 */
static void dispatch_comm(struct sim *sim, uint32_t source, uint64_t depart)
{
    struct comm_outbox *out = sim->comm_out;
    for (uint32_t i = 0; i < out->frame_count; i++) {
        const struct comm_outgoing *f = &out->frames[i];
        if (f->destination >= sim->node_count || f->destination == source) {
            violation(sim, "node %" PRIu32 " sent a comm frame to bad destination %" PRIu32,
                      source, f->destination);
            continue;
        }
        struct sim_message *m = malloc(sizeof *m + f->length);
        if (m == NULL) {
            fprintf(stderr, "tori-sim: out of memory for messages\n");
            exit(1);
        }
        m->next = NULL;
        m->source = source;
        m->destination = f->destination;
        m->length = (uint16_t)f->length;
        m->kind = MESSAGE_COMM;
        m->epoch = f->epoch;
        memcpy(m->bytes, comm_outbox_payload(out, i), f->length);
        sim->stats.comm_frames++;
        sim->stats.comm_bytes += f->length;
        send_message(sim, m, depart, "comm");
    }
    sim->stats.comm_outbox_overflow +=
        out->dropped_frames + out->dropped_completions + out->dropped_events;
    uint32_t suspects[COMM_OUTBOX_EVENTS];
    uint32_t suspect_count = 0;
    for (uint32_t i = 0; i < out->event_count; i++) {
        if (out->events[i].type == COMM_EVENT_SUSPECT) {
            suspects[suspect_count++] = out->events[i].node;
        }
    }
    comm_outbox_clear(out);
    for (uint32_t i = 0; i < suspect_count; i++) {
        membership_suspect(&sim->contexts[source], suspects[i], sim->now, sim->outbox);
    }
    if (suspect_count != 0) {
        dispatch_membership(sim, source, depart);
    }
}

/* An allreduce total another than the closed form, or a stencil sum not conserved. */
/*
 * Whether node id runs the job: a rank of WORLD in its first life.  As on
 * the nodes (node/tori.c, node_job_init), a spare runs nothing, and neither
 * does a restarted node, whose ranks went on without it: rejoining a
 * running job comes with the recovery modes (issue 14).  But under REBUILD
 * with the launcher's RESTART carried out (issue 15) a later life waits to
 * adopt, as a spare does, and takes its own rank back.
 */
static bool restarts_rejoin_job(const struct sim *sim)
{
    return sim->params.app.comm_mode == COMM_MODE_REBUILD && sim->params.launcher_restarts;
}

static bool runs_job(const struct sim *sim, uint32_t id)
{
    return (id < sim->params.members || sim->params.app.comm_mode == COMM_MODE_REBUILD) &&
           (sim->nodes[id].boots == 1 || restarts_rejoin_job(sim)) &&
           !sim->nodes[id].app_killed;
}

static bool recovers(const struct sim *sim)
{
    return sim->params.app.comm_mode != COMM_MODE_ABORT;
}


/* The job cannot complete (the one abort mode of the nodes, FT-MPI's
 * ABORT): the first reason is kept; the run ends without waiting for it. */
static void abort_job(struct sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void abort_job(struct sim *sim, const char *fmt, ...)
{
    if (sim->stats.app_aborted) {
        return;
    }
    sim->stats.app_aborted = true;
    sim->stats.app_aborted_ns = sim->now;
    va_list args;
    va_start(args, fmt);
    vsnprintf(sim->stats.app_abort_text, sizeof sim->stats.app_abort_text, fmt, args);
    va_end(args);
    trace(sim, "t=%" PRIu64 " job aborted: %s", sim->now, sim->stats.app_abort_text);
}

/* Faults timed by iteration that node id's progress fires (see sim_inject.h):
 * each is queued now, in script order, and applied as the next steps. */
static void fire_by_iteration(struct sim *sim, uint32_t id)
{
    uint32_t done = sim->apps[id].iterations_done;
    for (size_t i = 0; i < sim->injection_count; i++) {
        const struct fault *f = &sim->injections[i];
        if (f->iteration == 0 || sim->fired[i] || done < f->iteration) {
            continue;
        }
        bool any_rank = f->kind == FAULT_RESTART || f->kind == FAULT_JOIN ||
                        f->kind == FAULT_PARTITION || f->kind == FAULT_HEAL;
        if (!any_rank && f->node != id) {
            continue;
        }
        sim->fired[i] = 1;
        push(sim, sim->now, SIM_EVENT_INJECT, f->node, (uint32_t)i, 0, NULL);
    }
}

/* Faults timed by recovery that node id's model fires: once it started
 * rebuilding (its first recovery), each is queued D later, in script
 * order.  A fault whose node runs nothing then, or that names none, fires
 * at the first rank's (see tools/fault.h). */
static void fire_by_recovery(struct sim *sim, uint32_t id)
{
    if (sim->apps[id].rebuilds == 0) {
        return;
    }
    for (size_t i = 0; i < sim->injection_count; i++) {
        const struct fault *f = &sim->injections[i];
        if (!f->at_recovery || sim->fired[i]) {
            continue;
        }
        bool any_rank = f->kind == FAULT_RESTART || f->kind == FAULT_JOIN ||
                        f->kind == FAULT_PARTITION || f->kind == FAULT_HEAL ||
                        f->kind == FAULT_PING;
        if (!any_rank && f->node != id) {
            continue;
        }
        sim->fired[i] = 1;
        trace(sim, "t=%" PRIu64 " rank %" PRIu32 " is recovering: fault %zu due in %" PRIu64
                   " ns",
              sim->now, id, i, f->time_ns);
        push(sim, sim->now + f->time_ns, SIM_EVENT_INJECT, f->node, (uint32_t)i, 0, NULL);
    }
}

static void check_app(struct sim *sim, uint32_t id)
{
    const struct sim_app *app = &sim->apps[id];
    if (app->wrong_total) {
        violation(sim, "rank %" PRIu32 " of %s: iteration %" PRIu32 " gave a total other than "
                       "the %s",
                  id, sim_app_name(sim->params.app.kind), app->wrong_iteration,
                  sim->params.app.kind == SIM_APP_ALLREDUCE ? "closed form" : "initial sum");
    }
}

/*
 * Under REBUILD the ranks start once the spares are in the view (as
 * tori-emu starts them), or when the spares had a join's longest wait.
 */
static bool job_may_start(const struct sim *sim, uint32_t id)
{
    if (sim->params.app.comm_mode != COMM_MODE_REBUILD || id >= sim->params.members ||
        sim->params.members == sim->node_count) {
        return true;
    }
    return membership_live_count(&sim->contexts[id]) >= sim->node_count ||
           sim->now >= membership_join_wait_max_ns(&sim->base_config);
}

/*
 * Issue 14's invariants after node id's step (sim_ft.h): the rank map of a
 * communicator its model moved to, and every collective it completed; and
 * the chaos knob: a rebuild's start may draw a kill of another rank.
 */
static void check_recovery(struct sim *sim, uint32_t id)
{
    struct sim_app *app = &sim->apps[id];
    const struct comm *comm = &sim->comms[id];
    char why[200];
    if (!app->map_checked && app->rank != COMM_RANK_NONE &&
        (app->stage == SIM_APP_COMPUTE || app->stage == SIM_APP_AGREE) &&
        app->state == SIM_APP_RUNNING) {
        app->map_checked = true;
        for (uint32_t r = 0; r < app->size; r++) {
            /* the group's map (a BLANK gap: COMM_NODE_NONE), not the
             * view: members that failed since are still in it */
            sim->map_scratch[r] = comm_node_of(comm, app->comm, r);
        }
        uint64_t epoch = app->comm == COMM_WORLD ? 0 : comm_epoch_of(comm, app->comm);
        if (!sim_ft_map(sim->ft, epoch, sim->map_scratch, app->size, id, app->rank, why,
                        sizeof why)) {
            violation(sim, "%s", why);
        }
    }
    for (uint32_t i = 0; i < app->outcome_count; i++) {
        if (!sim_ft_outcome(sim->ft, id, &app->outcomes[i], why, sizeof why)) {
            violation(sim, "%s", why);
        }
    }
    app->outcome_count = 0;
    if (app->state == SIM_APP_FAILED && app->error != COMM_ERR_NO_VIEW) {
        violation(sim, "rank %" PRIu32 " of %s failed in %s after %" PRIu32 " iterations: %s",
                  id, sim_app_name(sim->params.app.kind), app->failed_call,
                  app->iterations_done, comm_error_text(app->error));
    }
    /* A second fault while a recovery is under way: once per rebuilt
     * communicator, the first rank that starts rebuilding it draws a live
     * rank (not itself) to kill within two units.  Drawn when the rebuild
     * starts, not while it runs: one decided by the cut collective's
     * result round completes in the call (comm/DESIGN.md). */
    bool began = app->rebuild_began;
    uint64_t epoch = app->rebuild_epoch;
    app->rebuild_began = false;
    if (began && sim->recovery_kills_left > 0 && sim->recovery_kill_epoch != epoch) {
        sim->recovery_kill_epoch = epoch;
        uint64_t draw = (sim->params.seed + 1u) * UINT64_C(0x9e3779b97f4a7c15) ^ sim->now;
        draw ^= draw >> 29;
        uint32_t n = sim->params.members;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t victim = (uint32_t)((draw + k) % n);
            if (victim != id && node_running(&sim->nodes[victim]) && runs_job(sim, victim)) {
                sim->recovery_kills_left--;
                uint64_t delay = (draw >> 32) % (2u * sim_unit_ns(&sim->params));
                push(sim, sim->now + delay, SIM_EVENT_KILL, victim, 0, 0, NULL);
                trace(sim, "t=%" PRIu64 " recovery kill of %" PRIu32 " drawn by %" PRIu32,
                      sim->now, victim, id);
                break;
            }
        }
    }
}

/*
 * Keeps the comm core on the membership's view, as the node glue does
 * (every view installed as a member; none while out), starts the model at
 * the first view and advances it; then sends what came out.
 */
static void follow_comm(struct sim *sim, uint32_t id, uint64_t depart)
{
    const struct membership *m = &sim->contexts[id];
    struct comm *comm = &sim->comms[id];
    struct sim_app *app = &sim->apps[id];
    bool member = membership_has_view(m) && !membership_is_joining(m) &&
                  membership_is_member(m, id);
    if (member && (!comm_has_view(comm) || membership_epoch(m) > comm_view_epoch(comm))) {
        comm_install_view(comm, membership_epoch(m), &m->view, &m->layout, sim->now,
                          sim->comm_out);
    } else if (!member && comm_has_view(comm)) {
        comm_drop_view(comm, membership_incarnation(m) + 1u, sim->now, sim->comm_out);
    }
    if (!runs_job(sim, id)) {
        /* no model: the comm core alone (it forwards nothing to itself) */
    } else if (app->state == SIM_APP_IDLE && comm_has_view(comm) && job_may_start(sim, id)) {
        if (!sim_app_start(app, &sim->params.app,
                           id >= sim->params.members || sim->nodes[id].boots > 1, comm, sim->now,
                           sim->comm_out)) {
            fprintf(stderr, "tori-sim: out of memory for the model application\n");
            exit(1);
        }
    } else {
        sim_app_advance(app, &sim->params.app, comm, sim->now, sim->comm_out);
    }
    if (runs_job(sim, id)) {
        check_app(sim, id);
        if (sim->ft != NULL) {
            check_recovery(sim, id);
        }
        app->outcome_count = 0; /* ABORT: no one looks */
        if (app->state == SIM_APP_FAILED && !recovers(sim)) {
            abort_job(sim, "rank %" PRIu32 " failed in %s after %" PRIu32 " iterations: %s",
                      id, app->failed_call, app->iterations_done, comm_error_text(app->error));
        }
        fire_by_iteration(sim, id);
        fire_by_recovery(sim, id);
    }
    dispatch_comm(sim, id, depart);
}

/* Sends what a node produced (leaving at depart) and, with --app, runs its comm side. */
static void link_events(struct sim *sim, uint32_t id, bool up);

static void dispatch(struct sim *sim, uint32_t source, uint64_t depart)
{
    dispatch_membership(sim, source, depart);
    struct sim_node *n = &sim->nodes[source];
    if (n->halt_due) {
        /* Out of the view as it asked: it halts, as a node does after `leave`. */
        n->halt_due = false;
        n->leaving = false;
        n->state = NODE_DEAD;
        n->died_at = sim->now;
        n->reported = true; /* nobody owes it a detection */
        sim->stats.nodes_left++;
        free_inbox(n);
        link_events(sim, source, false);
        return;
    }
    if (sim->comms != NULL && n->state == NODE_UP) {
        follow_comm(sim, source, depart);
    }
}

/* ------------------------------------------------------------------ */
/* Invariants                                                           */
/* ------------------------------------------------------------------ */

static void check_node(struct sim *sim, uint32_t id)
{
    const struct membership *ctx = &sim->contexts[id];
    struct sim_node *n = &sim->nodes[id];
    const struct sim_epoch_view *first = NULL;
    struct sim_epoch_view recorded;
    if (membership_has_view(ctx)) {
        struct epoch_entry *entry = epoch_find(sim, membership_epoch(ctx), false);
        if (entry != NULL && entry->installs > 0) {
            recorded.digest = entry->digest;
            recorded.live = entry->live;
            first = &recorded;
        }
    }
    char why[160];
    if (!sim_invariant_node(ctx, id, &n->life, first, why, sizeof why)) {
        violation(sim, "%s", why);
    }
}

/* A partition or a blocked pair keeps anything from getting from a to b now. */
static bool cut_off(const struct sim *sim, uint32_t a, uint32_t b)
{
    for (unsigned i = 0; i < sim->block_count; i++) {
        const struct sim_block *k = &sim->blocks[i];
        if (k->until_ns > sim->now && ((k->a == a && k->b == b) || (k->b == a && k->a == b))) {
            return true;
        }
    }
    return sim->nodes[a].side != sim->nodes[b].side;
}

/*
 * `ping all`: every running node pings every other now.  A pair answers
 * when both run (a hung node answers nothing), nothing cuts them apart,
 * and, routes on, the routers' hops get there and back as they would a
 * frame sent now.  One `ping-all` line; a pair that does not answer fails
 * the run (a violation naming the first).
 */
static void ping_all(struct sim *sim)
{
    uint64_t pairs = 0;
    uint64_t missing = 0;
    uint32_t first_source = 0;
    uint32_t first_destination = 0;
    for (uint32_t a = 0; a < sim->node_count; a++) {
        if (sim->nodes[a].state != NODE_UP) {
            continue;
        }
        for (uint32_t b = 0; b < sim->node_count; b++) {
            if (b == a || sim->nodes[b].state != NODE_UP) {
                continue;
            }
            pairs++;
            uint64_t hops = 0;
            bool ttl_expired = false;
            bool answered = !cut_off(sim, a, b) &&
                            (!sim->params.routes || (route(sim, a, b, &hops, &ttl_expired) &&
                                                     route(sim, b, a, &hops, &ttl_expired)));
            if (!answered && missing++ == 0) {
                first_source = a;
                first_destination = b;
            }
        }
    }
    sim->stats.pings++;
    sim->stats.ping_pairs += pairs;
    sim->stats.ping_missing += missing;
    line_begin(sim, 0, "ping-all");
    line_u64(sim, "pairs", pairs);
    line_u64(sim, "answered", pairs - missing);
    line_end(sim);
    if (missing > 0) {
        violation(sim,
                  "ping all: %" PRIu64 " of %" PRIu64 " pairs of running nodes did not answer "
                  "(first %" PRIu32 "->%" PRIu32 ")",
                  missing, pairs, first_source, first_destination);
    }
}

/* Routes on: one ordered pair routed as a message sent now would be (a
 * block or partition between them loses it), added to sample. */
static void reach_pair(const struct sim *sim, uint32_t a, uint32_t b,
                       struct reach_sample *sample, uint64_t *ttl_expired)
{
    uint64_t hops = 0;
    bool expired = false;
    bool reached = !cut_off(sim, a, b) && route(sim, a, b, &hops, &expired);
    reach_sample_add(sample, reached, hops,
                     torus_geometry_distance(&sim->params.geometry, a, b));
    *ttl_expired += expired;
}

/* Every ordered pair of running nodes (sample's t_ns set by the caller). */
static void reach_every_pair(const struct sim *sim, struct reach_sample *sample,
                             uint64_t *ttl_expired)
{
    for (uint32_t a = 0; a < sim->node_count; a++) {
        if (sim->nodes[a].state != NODE_UP) {
            continue;
        }
        for (uint32_t b = 0; b < sim->node_count; b++) {
            if (b != a && sim->nodes[b].state == NODE_UP) {
                reach_pair(sim, a, b, sample, ttl_expired);
            }
        }
    }
}

/* --reach: one sample now, a `reach-sample` line. */
static void reach_sample_now(struct sim *sim)
{
    struct reach_sample sample;
    uint64_t ttl_expired = 0;
    reach_sample_begin(&sample, sim->now);
    if (sim->params.reach_pairs == 0) {
        reach_every_pair(sim, &sample, &ttl_expired);
    } else {
        uint32_t running = 0;
        for (uint32_t id = 0; id < sim->node_count; id++) {
            if (sim->nodes[id].state == NODE_UP) {
                sim->reach_running[running++] = id;
            }
        }
        for (uint32_t i = 0; running >= 2 && i < sim->params.reach_pairs; i++) {
            uint32_t a = 0, b = 0;
            reach_draw_pair(&sim->reach_state, running, &a, &b);
            reach_pair(sim, sim->reach_running[a], sim->reach_running[b], &sample,
                       &ttl_expired);
        }
    }
    sim->stats.reach_samples++;
    line_begin(sim, 0, "reach-sample");
    line_u64(sim, "pairs", sample.tried);
    line_u64(sim, "reached", sample.reached);
    line_ratio(sim, "fraction", sample.reached, sample.tried);
    /* in thousandths, as every ratio of these lines (deterministic text) */
    line_ratio(sim, "stretch_mean", (uint64_t)(sample.stretch_sum * 1000.0 + 0.5),
               sample.reached * 1000u);
    line_ratio(sim, "stretch_max", (uint64_t)(sample.stretch_max * 1000.0 + 0.5), 1000u);
    line_u64(sim, "ttl_expired", ttl_expired);
    line_end(sim);
    if (sim->params.on_reach != NULL) {
        sim->params.on_reach(sim->params.reach_context, &sample);
    }
}

/* --reach: the samples due before `before` (up to and including it when
 * inclusive), in time order. */
static void reach_samples_until(struct sim *sim, uint64_t before, bool inclusive)
{
    if (sim->params.reach_interval_ns == 0 || !sim->params.routes) {
        return;
    }
    uint64_t now = sim->now;
    while (!sim->stats.violation &&
           (sim->params.reach_end_ns == 0 || sim->reach_next_ns <= sim->params.reach_end_ns) &&
           (sim->reach_next_ns < before || (inclusive && sim->reach_next_ns == before))) {
        sim->now = sim->reach_next_ns;
        reach_sample_now(sim);
        sim->reach_next_ns += sim->params.reach_interval_ns;
    }
    sim->now = now > sim->now ? now : sim->now;
}

/* ------------------------------------------------------------------ */
/* Node lifecycle                                                       */
/* ------------------------------------------------------------------ */

static void boot_node(struct sim *sim, uint32_t id, bool join)
{
    struct sim_node *n = &sim->nodes[id];
    struct membership_config config = sim->base_config;
    config.node_id = id;
    /* Each boot 1024 lives above the last: low 16 bits differ (see codec.h). */
    config.incarnation = n->boots * 1024u;
    n->boots++;
    n->app_killed = false;
    n->leaving = false;
    n->halt_due = false;
    enum membership_init_status status = membership_init(&sim->contexts[id], &config);
    if (status != MEMBERSHIP_INIT_OK) {
        fprintf(stderr, "tori-sim: membership_init(%" PRIu32 "): %s\n", id,
                membership_init_status_text(status));
        exit(1);
    }
    if (sim->comms != NULL) {
        struct comm_config cc;
        comm_config_defaults(&cc);
        cc.node_id = id;
        cc.incarnation = config.incarnation + 1u; /* never 0 */
        cc.node_count = sim->node_count;
        cc.world_size = sim->params.members; /* WORLD: the initial view's nodes */
        cc.comm_mode = sim->params.app.comm_mode;
        cc.msg_mode = sim->params.app.msg_mode;
        /* a WORLD node in a later life: a REBUILD may give its rank back */
        cc.restarted = n->boots > 1 && id < sim->params.members;
        enum comm_init_status cs = comm_init(&sim->comms[id], &cc);
        if (cs != COMM_INIT_OK) {
            fprintf(stderr, "tori-sim: comm_init(%" PRIu32 "): %s\n", id,
                    comm_init_status_text(cs));
            exit(1);
        }
        /* The model keeps its first life's state: a restarted node runs none
         * (runs_job), but when the launcher restarts it under REBUILD, where
         * its new life waits to take its rank back. */
        if (n->boots > 1 && restarts_rejoin_job(sim)) {
            sim_app_free(&sim->apps[id]);
            memset(&sim->apps[id], 0, sizeof sim->apps[id]);
        }
    }
    n->state = NODE_UP;
    if (sim->tables != NULL) { /* a new life: empty tables, seqs past the last life's */
        struct route_table_config rc = {
            .geometry = sim->params.geometry,
            .rank = id,
            .link_mask = torus_geometry_link_mask(&sim->params.geometry, id),
            .incarnation = n->boots,
            .raise_hold_ns = sim_unit_ns(&sim->params), /* a burst crosses the torus */
        };
        route_table_init(&sim->tables[id], &rc);
    }
    set_links(sim, id, true); /* a link handshake takes less than a join */
    n->busy_until = sim->now;
    n->tick_at = UINT64_MAX;
    n->process_pending = false;
    n->reported = false;
    n->life.started = false;
    if (join) {
        membership_start_join(&sim->contexts[id], sim->now, sim->outbox);
        dispatch(sim, id, sim->now);
    } else if (sim->comms != NULL) {
        follow_comm(sim, id, sim->now); /* the initial view: the job starts */
    }
    check_node(sim, id);
    reschedule_tick(sim, id);
}

static void link_events(struct sim *sim, uint32_t id, bool up)
{
    if (sim->params.link_detect_ns == 0) {
        return;
    }
    const struct torus_geometry *g = &sim->params.geometry;
    for (unsigned link = 0; link < torus_geometry_link_count(g); link++) {
        uint32_t n = torus_geometry_neighbour(g, id, link);
        if (n != TORUS_RANK_NONE && n != id) {
            push(sim, sim->now + sim->params.link_detect_ns, SIM_EVENT_LINK, n, id, up ? 1 : 0,
                 NULL);
        }
    }
}

static bool on_side(const struct fault *cut, const struct torus_geometry *g, uint32_t id)
{
    if (cut->dim < 0) {
        return id < cut->below;
    }
    return torus_geometry_coord(g, id, (unsigned)cut->dim) < cut->below;
}

/* Link events for every torus link whose two ends are now on different sides. */
static void cut_links(struct sim *sim, const uint8_t *old_side, bool up)
{
    const struct torus_geometry *g = &sim->params.geometry;
    for (uint32_t id = 0; id < sim->node_count; id++) {
        for (unsigned link = 0; link < torus_geometry_link_count(g); link++) {
            uint32_t n = torus_geometry_neighbour(g, id, link);
            if (n == TORUS_RANK_NONE || n == id) {
                continue;
            }
            bool was_cut = old_side[id] != old_side[n];
            bool is_cut = sim->nodes[id].side != sim->nodes[n].side;
            if ((up && was_cut && !is_cut) || (!up && is_cut && !was_cut)) {
                push(sim, sim->now + (sim->params.link_detect_ns ? sim->params.link_detect_ns : 1),
                     SIM_EVENT_LINK, id, n, up ? 1 : 0, NULL);
            }
        }
    }
}

/*
 * A node whose application was killed asks the root to remove it again
 * while it is still a member, as the node's glue does
 * (node/node_membership.c): its request carries no sequence and may be
 * lost, e.g. to a root busy with another removal.  Two timeout units.
 */
static uint64_t ask_again_ns(const struct sim *sim)
{
    return 2u * sim_unit_ns(&sim->params);
}

static void ask_removal_again(struct sim *sim, uint32_t id)
{
    struct sim_node *n = &sim->nodes[id];
    if (n->state != NODE_UP || !(n->app_killed || n->leaving) ||
        !membership_is_member(&sim->contexts[id], id)) {
        return; /* gone, restarted, or out of the view: nothing to ask */
    }
    uint8_t model = n->leaving ? FAULT_MODEL_LEFT : FAULT_MODEL_PROCESS;
    if (membership_request_removal(&sim->contexts[id], model, sim->now, sim->outbox)) {
        dispatch(sim, id, sim->now);
        reschedule_tick(sim, id);
    }
    push(sim, sim->now + ask_again_ns(sim), SIM_EVENT_ASK_REMOVAL, id, 0, 0, NULL);
}

static void apply_injection(struct sim *sim, const struct fault *inj)
{
    char text[96];
    fault_format(inj, text, sizeof text);
    trace(sim, "t=%" PRIu64 " inject %s", sim->now, text);
    line_begin(sim, inj->node, "inject");
    line_str(sim, "what", inj->kind == FAULT_LINK_OFF  ? "link-off"
                          : inj->kind == FAULT_LINK_ON ? "link-on"
                                                       : fault_kind_name(inj->kind));
    if (inj->kind == FAULT_SUSPECT || inj->kind == FAULT_LINK_OFF ||
        inj->kind == FAULT_LINK_ON || inj->kind == FAULT_BLOCK) {
        line_u64(sim, "other", inj->other);
    }
    if (inj->iteration != 0) {
        line_u64(sim, "iteration", inj->iteration);
    }
    if (inj->at_recovery) {
        line_str(sim, "at", "recovery");
    }
    line_end(sim);
    struct sim_node *n = &sim->nodes[inj->node];
    switch (inj->kind) {
    case FAULT_KILL:
        if (!node_running(n)) {
            break;
        }
        if (sim->apps != NULL && !recovers(sim) && runs_job(sim, inj->node) &&
            (sim->apps[inj->node].state == SIM_APP_RUNNING ||
             sim->apps[inj->node].state == SIM_APP_IDLE)) {
            abort_job(sim, "node %" PRIu32 " was killed after %" PRIu32
                           " iterations, before its result",
                      inj->node, sim->apps[inj->node].iterations_done);
        }
        n->state = NODE_DEAD;
        n->died_at = sim->now;
        n->reported = false;
        if (sim->stats.first_kill_ns == 0) {
            sim->stats.first_kill_ns = sim->now;
        }
        free_inbox(n);
        link_events(sim, inj->node, false);
        break;
    case FAULT_JOIN:
    case FAULT_RESTART:
        if (node_running(n)) {
            break; /* already up: nothing to boot */
        }
        free_inbox(n);
        boot_node(sim, inj->node, true);
        link_events(sim, inj->node, true);
        break;
    case FAULT_HANG:
        if (n->state != NODE_UP) {
            break;
        }
        n->state = NODE_HUNG;
        push(sim, sim->now + inj->duration_ns, SIM_EVENT_RESUME, inj->node, 0, 0, NULL);
        break;
    case FAULT_APPKILL:
        /* The application stops dead; the runtime serves on and asks to
         * leave (a root through the next member; alone: nothing happens). */
        if (n->state == NODE_UP &&
            membership_request_removal(&sim->contexts[inj->node], FAULT_MODEL_PROCESS, sim->now,
                                       sim->outbox)) {
            n->app_killed = true;
            dispatch(sim, inj->node, sim->now);
            reschedule_tick(sim, inj->node);
            push(sim, sim->now + ask_again_ns(sim), SIM_EVENT_ASK_REMOVAL, inj->node, 0,
                 0, NULL);
        }
        break;
    case FAULT_PING:
        ping_all(sim);
        break;
    case FAULT_LEAVE:
        /* It asks to be removed (a root through the next member; alone:
         * nothing happens) and halts once out (dispatch). */
        if (n->state == NODE_UP &&
            membership_request_removal(&sim->contexts[inj->node], FAULT_MODEL_LEFT, sim->now,
                                       sim->outbox)) {
            n->leaving = true;
            dispatch(sim, inj->node, sim->now);
            reschedule_tick(sim, inj->node);
            push(sim, sim->now + ask_again_ns(sim), SIM_EVENT_ASK_REMOVAL, inj->node, 0,
                 0, NULL);
        }
        break;
    case FAULT_SUSPECT:
        if (n->state == NODE_UP) {
            membership_suspect(&sim->contexts[inj->node], inj->other, sim->now, sim->outbox);
            dispatch(sim, inj->node, sim->now);
            reschedule_tick(sim, inj->node);
        }
        break;
    case FAULT_LINK_OFF:
    case FAULT_LINK_ON: {
        uint64_t at = sim->now + (sim->params.link_detect_ns ? sim->params.link_detect_ns : 1);
        uint8_t up = inj->kind == FAULT_LINK_ON;
        push(sim, at, SIM_EVENT_LINK, inj->node, inj->other, up, NULL);
        push(sim, at, SIM_EVENT_LINK, inj->other, inj->node, up, NULL);
        if (inj->kind == FAULT_LINK_OFF && inj->duration_ns != 0) {
            /* "for D" of a link cut timed by iteration: mended D after it fired */
            push(sim, at + inj->duration_ns, SIM_EVENT_LINK, inj->node, inj->other, 1, NULL);
            push(sim, at + inj->duration_ns, SIM_EVENT_LINK, inj->other, inj->node, 1, NULL);
        }
        break;
    }
    case FAULT_BLOCK: {
        unsigned slot = 0;
        while (slot < sim->block_count && sim->blocks[slot].until_ns > sim->now) {
            slot++; /* reuse the first expired slot */
        }
        if (slot == SIM_BLOCKS_MAX) {
            violation(sim, "more than %u pairs blocked at once", SIM_BLOCKS_MAX);
            break;
        }
        sim->blocks[slot].a = inj->node;
        sim->blocks[slot].b = inj->other;
        sim->blocks[slot].until_ns = sim->now + inj->duration_ns;
        if (slot == sim->block_count) {
            sim->block_count++;
        }
        break;
    }
    case FAULT_PARTITION:
    case FAULT_HEAL: {
        uint8_t *old_side = malloc(sim->node_count);
        if (old_side == NULL) {
            break;
        }
        for (uint32_t id = 0; id < sim->node_count; id++) {
            old_side[id] = sim->nodes[id].side;
            sim->nodes[id].side =
                inj->kind == FAULT_HEAL ? 0 : (on_side(inj, &sim->params.geometry, id) ? 1 : 0);
        }
        cut_links(sim, old_side, inj->kind == FAULT_HEAL);
        free(old_side);
        break;
    }
    default:
        break;
    }
}

/* ------------------------------------------------------------------ */
/* The event loop                                                       */
/* ------------------------------------------------------------------ */

static void step_deliver(struct sim *sim, const struct sim_event *e)
{
    struct sim_message *m = e->message;
    struct sim_node *n = &sim->nodes[m->destination];
    if (!node_running(n)) {
        sim->stats.dropped_dead++;
        free(m);
        return;
    }
    if (cut_off(sim, m->source, m->destination)) {
        sim->stats.dropped_partition++; /* cut off, by a partition or a blocked pair */
        free(m);
        return;
    }
    capture(sim, m, true, sim->now);
    m->next = NULL;
    if (n->inbox_tail != NULL) {
        n->inbox_tail->next = m;
    } else {
        n->inbox_head = m;
    }
    n->inbox_tail = m;
    schedule_process(sim, m->destination);
}

/* Runs a node's due timers now (they cost nothing). */
static void run_tick(struct sim *sim, uint32_t id)
{
    sim->nodes[id].tick_at = UINT64_MAX;
    membership_tick(&sim->contexts[id], sim->now, sim->outbox);
    if (sim->comms != NULL && comm_next_deadline(&sim->comms[id]) <= sim->now) {
        comm_tick(&sim->comms[id], sim->now, sim->comm_out);
    }
    dispatch(sim, id, sim->now);
    check_node(sim, id);
    reschedule_tick(sim, id);
}

static void step_process(struct sim *sim, uint32_t id)
{
    struct sim_node *n = &sim->nodes[id];
    n->process_pending = false;
    if (n->state != NODE_UP || n->inbox_head == NULL) {
        return;
    }
    if (n->tick_at <= sim->now) {
        /*
         * A node's poll loop runs its due timers between two messages: a
         * burst of messages does not hold back its heartbeats and timeouts.
         */
        run_tick(sim, id);
    }
    struct sim_message *m = n->inbox_head;
    n->inbox_head = m->next;
    if (n->inbox_head == NULL) {
        n->inbox_tail = NULL;
    }
    if (m->kind == MESSAGE_COMM) {
        trace_message(sim, TRACE_COMM, m->source, id, NULL, m->epoch, 0, 0);
        comm_receive(&sim->comms[id], m->source, m->epoch, m->bytes, m->length, sim->now,
                     sim->comm_out);
        sim->stats.delivered++;
        n->busy_until = sim->now + sim->params.cp_ns;
        dispatch(sim, id, n->busy_until);
        free(m);
        schedule_process(sim, id);
        reschedule_tick(sim, id);
        return;
    }
    struct membership *ctx = &sim->contexts[id];
    struct membership_msg msg;
    bool decoded = membership_decode(m->bytes, m->length, sim->node_count, &msg) ==
                   MEMBERSHIP_DECODE_OK;
    /* An envelope for this node is judged by the message inside (membership/machine/relay.c). */
    struct membership_msg judged = msg;
    bool judged_ok = decoded;
    if (decoded && msg.header.type == MEMBERSHIP_MSG_RELAY) {
        judged_ok = membership_decode(msg.list, msg.body.relay.inner_length, sim->node_count,
                                      &judged) == MEMBERSHIP_DECODE_OK;
    }
    bool stale = judged_ok && sim_message_is_stale(ctx, &judged);
    uint64_t epoch_before = membership_epoch(ctx);
    /* Only a stale message's effect on the view is checked. */
    uint64_t digest_before = stale ? membership_digest(ctx) : 0;
    trace_message(sim, TRACE_HANDLE, m->source, id,
                  decoded ? membership_msg_type_name(msg.header.type) : "?", msg.header.epoch,
                  msg.header.stable_epoch, epoch_before);
    if (id == sim->params.trace_node && sim->out != NULL) {
        fprintf(sim->out, "t_ns=%" PRIu64 " node=%" PRIu32 " event=handle from=%" PRIu32
                          " type=%s epoch=%" PRIx64 " stable=%" PRIx64 " mine=%" PRIx64 "\n",
                sim->now, id, m->source, decoded ? membership_msg_type_name(msg.header.type) : "?",
                msg.header.epoch, msg.header.stable_epoch, epoch_before);
    }
    membership_receive(ctx, m->bytes, m->length, sim->now, sim->outbox);
    sim->stats.delivered++;
    n->busy_until = sim->now + sim->params.cp_ns;
    dispatch(sim, id, n->busy_until);
    if (stale && sim_view_changed(ctx, epoch_before, digest_before)) {
        violation(sim, "a %s from %" PRIu32 " at older epoch %" PRIx64
                       " changed node %" PRIu32 "'s view",
                  membership_msg_type_name(judged.header.type), m->source, judged.header.epoch,
                  id);
    }
    check_node(sim, id);
    free(m);
    schedule_process(sim, id);
    reschedule_tick(sim, id);
}

static void step_tick(struct sim *sim, const struct sim_event *e)
{
    struct sim_node *n = &sim->nodes[e->node];
    if (n->tick_at != e->time_ns) {
        return; /* superseded by an earlier tick */
    }
    n->tick_at = UINT64_MAX;
    if (n->state != NODE_UP) {
        return;
    }
    if (n->busy_until > sim->now) {
        n->tick_at = n->busy_until;
        push(sim, n->busy_until, SIM_EVENT_TICK, e->node, 0, 0, NULL);
        return;
    }
    run_tick(sim, e->node);
}

/* Why a fault cannot happen now (NULL: it can), as sim_inject_check says
 * it before the run for the faults timed by time. */
static const char *not_now(const struct sim *sim, const struct fault *f)
{
    const struct sim_node *n = &sim->nodes[f->node];
    switch (f->kind) {
    case FAULT_KILL:
    case FAULT_SUSPECT:
    case FAULT_APPKILL:
    case FAULT_LEAVE:
        return node_running(n) ? NULL : "down";
    case FAULT_HANG:
        return n->state == NODE_UP ? NULL : "not-running";
    case FAULT_RESTART:
        return n->state == NODE_DEAD ? NULL : "not-killed";
    case FAULT_JOIN:
        return node_running(n) ? "running" : NULL;
    default:
        return NULL;
    }
}

/*
 * A fault is due: applied, or reported as not done when its node is not in
 * the state it needs (only possible for faults timed by iteration and the
 * faults of their nodes, which sim_inject_check leaves to the run).  One
 * timed by iteration extends the run to a settle window past it (and past
 * its "for D").
 */
static void inject(struct sim *sim, const struct fault *f)
{
    const char *why = not_now(sim, f);
    if (why != NULL) {
        char text[FAULT_TEXT_MAX];
        fault_format(f, text, sizeof text);
        line_begin(sim, f->node, "not-done");
        line_str(sim, "what", fault_kind_name(f->kind));
        if (f->iteration != 0) {
            line_u64(sim, "iteration", f->iteration);
        }
        if (f->at_recovery) {
            line_str(sim, "at", "recovery");
        }
        line_str(sim, "why", why);
        line_end(sim);
        trace(sim, "t=%" PRIu64 " not done: %s (%s)", sim->now, text, why);
        sim->stats.faults_not_done++;
        return;
    }
    apply_injection(sim, f);
    if (!fault_timed_by_job(f)) {
        return;
    }
    uint64_t end = sim->now + f->duration_ns + sim_settle_ns(&sim->params);
    sim->stats.last_injection_ns = sim->now;
    if (end > sim->end_ns) {
        sim->end_ns = end;
    }
}

static void step(struct sim *sim, const struct sim_event *e)
{
    sim->stats.steps++;
    switch (e->kind) {
    case SIM_EVENT_DELIVER:
        step_deliver(sim, e);
        break;
    case SIM_EVENT_PROCESS:
        step_process(sim, e->node);
        break;
    case SIM_EVENT_TICK:
        step_tick(sim, e);
        break;
    case SIM_EVENT_LINK: {
        struct sim_node *n = &sim->nodes[e->node];
        /* A link comes up only with a running node at the far end (a healed
         * cut next to a dead node does not). */
        uint32_t cables = torus_route_links_towards(&sim->params.geometry, e->node, e->other);
        bool up = e->flag != 0 && node_running(&sim->nodes[e->other]);
        n->links_up = up ? n->links_up | cables : n->links_up & ~cables;
        table_link(sim, e->node, e->other, up);
        if (n->state == NODE_UP) {
            trace(sim, "t=%" PRIu64 " link %" PRIu32 "-%" PRIu32 " %s", sim->now, e->node, e->other,
                  e->flag ? "up" : "down");
            membership_link_event(&sim->contexts[e->node], e->other, e->flag != 0, sim->now,
                                  sim->outbox);
            dispatch(sim, e->node, sim->now);
            check_node(sim, e->node);
            reschedule_tick(sim, e->node);
        }
        break;
    }
    case SIM_EVENT_INJECT:
        inject(sim, &sim->injections[e->other]);
        break;
    case SIM_EVENT_KILL: {
        struct fault kill = {.kind = FAULT_KILL, .node = e->node, .time_ns = sim->now};
        inject(sim, &kill);
        break;
    }
    case SIM_EVENT_ASK_REMOVAL:
        ask_removal_again(sim, e->node);
        break;
    case SIM_EVENT_ADVERT: {
        struct sim_message *m = e->message;
        if (m == NULL) { /* a held raise falls due */
            if (sim->nodes[e->node].state == NODE_UP) {
                advertise(sim, e->node);
            }
            break;
        }
        if (sim->nodes[e->node].state == NODE_UP &&
            ((sim->tables[e->node].up_mask >> e->flag) & 1u) != 0) {
            route_table_receive(&sim->tables[e->node], e->flag, m->bytes, m->length);
            advertise(sim, e->node);
        }
        free(m);
        break;
    }
    case SIM_EVENT_RELAUNCH: {
        /* As the launcher does on a host: the old process goes (flag 0),
         * and restart_ns later a new life starts and rejoins (flag 1). */
        struct fault kill = {.kind = FAULT_KILL, .node = e->node, .time_ns = sim->now};
        struct fault restart = {.kind = FAULT_RESTART, .node = e->node, .time_ns = sim->now};
        if (e->flag == 0) {
            if (node_running(&sim->nodes[e->node])) {
                inject(sim, &kill);
            }
            push(sim, sim->now + sim->params.restart_ns, SIM_EVENT_RELAUNCH, e->node, 0, 1,
                 NULL);
        } else {
            inject(sim, &restart);
        }
        break;
    }
    case SIM_EVENT_RESUME: {
        struct sim_node *n = &sim->nodes[e->node];
        if (n->state == NODE_HUNG) {
            n->state = NODE_UP;
            trace(sim, "t=%" PRIu64 " resume %" PRIu32, sim->now, e->node);
            if (n->busy_until < sim->now) {
                n->busy_until = sim->now;
            }
            schedule_process(sim, e->node);
            n->tick_at = UINT64_MAX;
            reschedule_tick(sim, e->node);
        }
        break;
    }
    default:
        break;
    }
}

/*
 * Agreement once everything settled.  With report false it only answers
 * whether the torus agrees yet (the run goes on while it does not); with
 * report true a disagreement is a violation.
 */
#define DISAGREE(...)                                                                       \
    do {                                                                                    \
        if (report)                                                                         \
            violation(sim, __VA_ARGS__);                                                    \
        return false;                                                                       \
    } while (0)

/* Running, but rightly in no view: its application was killed, or the
 * root refused its rejoin (quarantine). */
static bool out_of_job(const struct sim *sim, uint32_t id)
{
    return sim->nodes[id].app_killed || membership_join_refused(&sim->contexts[id]);
}

static bool agreement(struct sim *sim, bool report)
{
    uint32_t reference[2] = {UINT32_MAX, UINT32_MAX};
    uint32_t running[2] = {0, 0};
    uint32_t viewers[2] = {0, 0};
    for (uint32_t id = 0; id < sim->node_count; id++) {
        const struct sim_node *n = &sim->nodes[id];
        if (!node_running(n) || out_of_job(sim, id)) {
            continue;
        }
        if (n->state == NODE_HUNG) {
            DISAGREE("node %" PRIu32 " still hung at the end (settle longer)", id);
        }
        running[n->side]++;
        if (membership_has_view(&sim->contexts[id])) {
            viewers[n->side]++;
            if (reference[n->side] == UINT32_MAX) {
                reference[n->side] = id;
            }
        }
    }
    bool partitioned = running[1] > 0;
    uint32_t sides_with_views = (viewers[0] > 0) + (viewers[1] > 0);
    if (sides_with_views == 0) {
        if (running[0] + running[1] > 0) {
            DISAGREE("no running node holds a view at the end");
        }
        return true;
    }
    if (partitioned && sim->params.policy == MEMBERSHIP_POLICY_PRIMARY && sides_with_views > 1) {
        DISAGREE("both sides of the partition hold views (primary policy)");
    }
    for (unsigned side = 0; side < 2; side++) {
        if (viewers[side] == 0) {
            continue;
        }
        const struct membership *ref = &sim->contexts[reference[side]];
        for (uint32_t id = 0; id < sim->node_count; id++) {
            const struct sim_node *n = &sim->nodes[id];
            if (!node_running(n) || n->side != side || out_of_job(sim, id)) {
                if (membership_is_member(ref, id)) {
                    DISAGREE("view %" PRIx64 " still holds node %" PRIu32 ", which is %s",
                              membership_epoch(ref), id,
                              !node_running(n)        ? "down"
                              : out_of_job(sim, id)   ? "out of the job (application killed, "
                                                        "or quarantined)"
                                                      : "on the other side");
                }
                continue;
            }
            const struct membership *ctx = &sim->contexts[id];
            if (!membership_has_view(ctx)) {
                DISAGREE("node %" PRIu32 " (running) holds no view; node %" PRIu32
                         " holds %" PRIx64,
                         id, reference[side], membership_epoch(ref));
            }
            if (membership_epoch(ctx) != membership_epoch(ref) ||
                membership_digest(ctx) != membership_digest(ref)) {
                DISAGREE("node %" PRIu32 " holds %" PRIx64 ", node %" PRIu32 " holds %" PRIx64,
                          id, membership_epoch(ctx), reference[side], membership_epoch(ref));
            }
            if (!membership_is_member(ref, id)) {
                DISAGREE("running node %" PRIu32 " is not in the final view", id);
            }
        }
        sim->stats.final_epoch = membership_epoch(ref);
        sim->stats.final_live = membership_live_count(ref);
        sim->stats.final_viewers = viewers[side];
    }
    return true;
}
#undef DISAGREE

/* ------------------------------------------------------------------ */
/* Model applications                                                   */
/* ------------------------------------------------------------------ */

/* How long past the membership's end a run waits for the applications. */
#define SIM_APP_RUN_MAX_NS (100u * 1000u * 1000u * 1000u)

/* True when no running rank of WORLD has its model still under way. */
static bool apps_settled(const struct sim *sim)
{
    if (sim->apps == NULL || sim->stats.app_aborted) {
        return true;
    }
    for (uint32_t id = 0; id < sim->node_count; id++) {
        const struct sim_app *app = &sim->apps[id];
        if ((id >= sim->params.members || sim->nodes[id].boots > 1) &&
            (app->state == SIM_APP_IDLE || app->stage == SIM_APP_ADOPT)) {
            continue; /* a spare (or a restarted node) no rebuild took */
        }
        if (node_running(&sim->nodes[id]) && runs_job(sim, id) &&
            (app->state == SIM_APP_RUNNING || app->state == SIM_APP_IDLE)) {
            return false;
        }
    }
    return true;
}

/* Errors a rank's model may end with when a fault took a rank or this
 * node's view away (ABORT mode: the job ends there). */
static bool fault_error(enum comm_error error)
{
    return error == COMM_ERR_PROC_FAILED || error == COMM_ERR_NO_VIEW;
}

/*
 * At the end under a recovering mode: every rank still running (WORLD's and
 * the adopted spares) finished ok with one digest; a rank may end failed
 * only because it lost its view (expelled: it is out of the job); no
 * strict collective mixed among the survivors (sim_ft_final); and under
 * REBUILD with every failed rank adopted, the allreduce's digest is the
 * fault-free one.
 */
static void recovery_agree(struct sim *sim)
{
    struct sim_stats *st = &sim->stats;
    bool *survived = calloc(sim->node_count, sizeof *survived);
    if (survived == NULL) {
        violation(sim, "out of memory for the final checks");
        return;
    }
    bool gaps_left = false;
    for (uint32_t id = 0; id < sim->node_count; id++) {
        const struct sim_app *app = &sim->apps[id];
        st->app_rebuilds += app->rebuilds;
        st->app_adopted += app->adopted ? 1u : 0u;
        st->app_restored += app->restored != 0 ? 1u : 0u;
        if (app->restored > st->app_restored_iteration) {
            st->app_restored_iteration = app->restored;
        }
        st->app_retaken += sim->nodes[id].boots > 1 && app->adopted ? 1u : 0u;
        if (id >= sim->params.members) {
            st->app_ranks += app->adopted ? 1u : 0u;
            if (app->state == SIM_APP_DONE) {
                st->app_finished++;
                st->app_ok += app->ok ? 1u : 0u;
            }
        }
        survived[id] = app->state == SIM_APP_DONE;
        gaps_left = gaps_left || (survived[id] && app->gap_count > 0);
        if (!runs_job(sim, id) || app->state == SIM_APP_IDLE ||
            (app->stage == SIM_APP_ADOPT && app->state == SIM_APP_RUNNING)) {
            continue; /* never started, or a spare no rebuild took */
        }
        if (app->state == SIM_APP_FAILED && app->error != COMM_ERR_NO_VIEW) {
            violation(sim, "rank %" PRIu32 " of %s failed in %s: %s", id,
                      sim_app_name(sim->params.app.kind), app->failed_call,
                      comm_error_text(app->error));
            break;
        }
        if (app->state == SIM_APP_RUNNING && node_running(&sim->nodes[id]) &&
            membership_is_member(&sim->contexts[id], id)) {
            violation(sim, "rank %" PRIu32 " of %s did not finish (iteration %" PRIu32
                           ", %s)",
                      id, sim_app_name(sim->params.app.kind), app->iteration,
                      app->stage == SIM_APP_REBUILD ? "rebuilding"
                      : app->stage == SIM_APP_AGREE ? "agreeing"
                                                    : "computing");
            break;
        }
        if (app->state != SIM_APP_DONE) {
            continue;
        }
        st->app_survivors++;
        /* The slowest survivor's first recovery, phase by phase. */
        if (app->resumed_ns != 0) {
            st->recovery_noticed_ns = app->noticed_ns > st->recovery_noticed_ns
                                          ? app->noticed_ns : st->recovery_noticed_ns;
            st->recovery_rebuilt_ns = app->rebuilt_ns > st->recovery_rebuilt_ns
                                          ? app->rebuilt_ns : st->recovery_rebuilt_ns;
            st->recovery_resumed_ns = app->resumed_ns > st->recovery_resumed_ns
                                          ? app->resumed_ns : st->recovery_resumed_ns;
        }
        if (!app->ok) {
            violation(sim, "rank %" PRIu32 " of %s ended with ok=false", id,
                      sim_app_name(sim->params.app.kind));
            break;
        }
        if (st->app_survivors == 1) {
            st->app_digest = app->digest;
        } else if (app->digest != st->app_digest) {
            violation(sim, "rank %" PRIu32 " of %s ended with digest %016" PRIx64
                           ", another rank with %016" PRIx64,
                      id, sim_app_name(sim->params.app.kind), app->digest, st->app_digest);
            break;
        }
    }
    char why[200];
    if (!st->violation && !sim_ft_final(sim->ft, survived, why, sizeof why)) {
        violation(sim, "%s", why);
    }
    /* REBUILD: the fault-free answer when spares took every failed rank. */
    if (!st->violation && sim->params.app.comm_mode == COMM_MODE_REBUILD && !gaps_left &&
        st->app_survivors > 0 && sim->params.app.kind == SIM_APP_ALLREDUCE) {
        uint32_t crc = 0;
        for (uint32_t i = 1; i <= sim->params.app.iterations; i++) {
            struct allreduce_values want;
            allreduce_expected(sim->params.members, i, sim->params.app.arg[0], &want);
            crc = allreduce_digest_update(crc, &want);
        }
        if (crc != st->app_digest) {
            violation(sim, "rebuild: digest %016" PRIx64 " is not the fault-free %08" PRIx32,
                      st->app_digest, crc);
        }
    }
    const struct sim_ft_counts *counts = sim_ft_get_counts(sim->ft);
    st->ft_maps = counts->maps;
    st->ft_epochs = counts->epochs;
    st->ft_outcomes = counts->outcomes;
    st->ft_agrees = counts->agrees;
    free(survived);
}

/*
 * At the end: every rank of WORLD finished, ok, with one digest (a rank's
 * failure names the call and the error).  A job a fault aborted (a rank
 * killed before its result, or failed because a rank or its view went) is
 * no violation when the run had faults, but what it did give must still be
 * right: every rank that finished is ok with the one digest, and every
 * failure is one a fault explains.  Fills the app statistics.
 */
static void apps_agree(struct sim *sim)
{
    struct sim_stats *st = &sim->stats;
    st->app_ranks = sim->params.members;
    st->app_iterations = UINT32_MAX;
    bool have_digest = false;
    for (uint32_t id = 0; id < sim->params.members; id++) {
        const struct sim_app *app = &sim->apps[id];
        const struct comm_counters *c = comm_get_counters(&sim->comms[id]);
        st->comm_retransmissions += c->retransmissions;
        st->comm_messages += c->messages_sent;
        if (app->iterations_done < st->app_iterations) {
            st->app_iterations = app->iterations_done;
        }
        st->app_failed += app->state == SIM_APP_FAILED ? 1u : 0u;
        if (app->state != SIM_APP_DONE) {
            continue;
        }
        st->app_finished++;
        st->app_ok += app->ok ? 1u : 0u;
        if (app->done_ns > st->app_done_ns) {
            st->app_done_ns = app->done_ns;
        }
        if (!have_digest) {
            have_digest = true;
            st->app_digest = app->digest;
            st->app_digests = 1;
        } else if (app->digest != st->app_digest) {
            st->app_digests++;
        }
    }
    if (sim->ft != NULL) {
        recovery_agree(sim);
        return;
    }
    bool aborted = st->app_aborted && sim->injection_count > 0;
    for (uint32_t id = 0; id < sim->params.members; id++) {
        const struct sim_app *app = &sim->apps[id];
        if (app->state == SIM_APP_FAILED && !(aborted && fault_error(app->error))) {
            violation(sim, "rank %" PRIu32 " of %s failed in %s: %s", id,
                      sim_app_name(sim->params.app.kind), app->failed_call,
                      comm_error_text(app->error));
            return;
        }
        if (app->state != SIM_APP_DONE && !aborted) {
            violation(sim, "rank %" PRIu32 " of %s did not finish (iteration %" PRIu32 ")", id,
                      sim_app_name(sim->params.app.kind), app->iteration);
            return;
        }
        if (app->state == SIM_APP_DONE && !app->ok) {
            violation(sim, "rank %" PRIu32 " of %s ended with ok=false", id,
                      sim_app_name(sim->params.app.kind));
            return;
        }
        if (app->state == SIM_APP_DONE && app->digest != st->app_digest) {
            violation(sim, "rank %" PRIu32 " of %s ended with digest %016" PRIx64
                           ", rank 0 with %016" PRIx64,
                      id, sim_app_name(sim->params.app.kind), app->digest, st->app_digest);
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */
/* ------------------------------------------------------------------ */

/* The machine's memory (0: unknown). */
static uint64_t host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

uint64_t sim_bytes_needed(const struct sim_params *params)
{
    uint64_t per_node = sizeof(struct membership) + sizeof(struct sim_node);
    if (params->routes && params->routing_table) {
        per_node += sizeof(struct route_table);
    }
    if (params->app.kind != SIM_APP_NONE) {
        per_node += sizeof(struct comm) + sizeof(struct sim_app);
    }
    return (uint64_t)params->geometry.node_count * per_node;
}

struct sim *sim_create(const struct sim_params *params, char *error, size_t error_capacity)
{
    uint32_t n = params->geometry.node_count;
    if (n == 0 || n > CONFIG_MAX_NODES) {
        snprintf(error, error_capacity, "%" PRIu32 " nodes (expected 1..%u, CONFIG_MAX_NODES)", n,
                 (unsigned)CONFIG_MAX_NODES);
        return NULL;
    }
    if (params->heartbeat_ns != 0 && params->heartbeat_ns < sim_heartbeat_min_ns(params)) {
        snprintf(error, error_capacity,
                 "a heartbeat of %" PRIu64 " ns is below %" PRIu64
                 " ns, the shortest the detector works with on this torus",
                 params->heartbeat_ns, sim_heartbeat_min_ns(params));
        return NULL;
    }
    uint64_t need = sim_bytes_needed(params);
    uint64_t have = host_memory_bytes();
    if (have != 0 && need > have) {
        snprintf(error, error_capacity,
                 "%" PRIu32 " nodes need about %" PRIu64 " MiB (%zu bytes of membership%s a "
                 "node), more than this machine's %" PRIu64 " MiB",
                 n, need >> 20, sizeof(struct membership),
                 params->app.kind != SIM_APP_NONE ? " and comm core" : "", have >> 20);
        return NULL;
    }
    struct sim *sim = calloc(1, sizeof *sim);
    if (sim == NULL) {
        snprintf(error, error_capacity, "out of memory");
        return NULL;
    }
    sim->params = *params;
    sim->node_count = n;
    sim->contexts = calloc(n, sizeof *sim->contexts);
    sim->nodes = calloc(n, sizeof *sim->nodes);
    sim->outbox = calloc(1, sizeof *sim->outbox);
    if (sim->contexts == NULL || sim->nodes == NULL || sim->outbox == NULL) {
        snprintf(error, error_capacity, "out of memory for %" PRIu32 " nodes (%zu bytes each)", n,
                 sizeof(struct membership));
        sim_destroy(sim);
        return NULL;
    }
    if (params->routes && params->routing_table) {
        sim->tables = calloc(n, sizeof *sim->tables);
        if (sim->tables == NULL) {
            snprintf(error, error_capacity, "out of memory for %" PRIu32 " routing tables", n);
            sim_destroy(sim);
            return NULL;
        }
    }
    sim->reach_running = calloc(n, sizeof *sim->reach_running);
    /* the pairs' own stream: the same pairs whatever else the seed draws */
    sim->reach_state = params->seed ^ UINT64_C(0x7265616368); /* "reach" */
    if (sim->reach_running == NULL) {
        snprintf(error, error_capacity, "out of memory for %" PRIu32 " nodes", n);
        sim_destroy(sim);
        return NULL;
    }
    if (params->app.kind != SIM_APP_NONE) {
        sim->comms = calloc(n, sizeof *sim->comms);
        sim->comm_out = calloc(1, sizeof *sim->comm_out);
        sim->apps = calloc(n, sizeof *sim->apps);
        if (sim->comms == NULL || sim->comm_out == NULL || sim->apps == NULL) {
            snprintf(error, error_capacity,
                     "out of memory for %" PRIu32 " comm cores (%zu bytes each)", n,
                     sizeof(struct comm));
            sim_destroy(sim);
            return NULL;
        }
        if (params->app.comm_mode != COMM_MODE_ABORT) {
            sim->ft = sim_ft_create(n);
            sim->map_scratch = calloc(n, sizeof *sim->map_scratch);
            if (sim->ft == NULL || sim->map_scratch == NULL) {
                snprintf(error, error_capacity, "out of memory for the communicator checks");
                sim_destroy(sim);
                return NULL;
            }
        }
        sim->recovery_kills_left = params->recovery_kills;
        sim->recovery_kill_epoch = UINT64_MAX;
        uint32_t edge = 0;
        int64_t check_every = 0;
        if (params->app.kind == SIM_APP_STENCIL && params->app.checkpoint_every != 0 &&
            sim_app_stencil_args(&params->app, &edge, &check_every)) {
            if (!sim_checkpoints_init(&sim->checkpoints, params->members,
                                      stencil_block_cells(edge))) {
                snprintf(error, error_capacity, "out of memory for the checkpoints");
                sim_destroy(sim);
                return NULL;
            }
            sim->params.app.checkpoints = &sim->checkpoints;
        }
    }
    sim_queue_init(&sim->queue);
    uint64_t unit = sim_unit_ns(params);
    struct membership_config *c = &sim->base_config;
    membership_config_defaults(c);
    c->member_count = params->members;
    c->radix = params->radix;
    c->layout = params->layout;
    c->policy = params->policy;
    c->timeout_ceiling = params->timeout_ceiling;
    c->recovery = params->recovery;
    c->seed_count = params->seed_count;
    memcpy(c->seeds, params->seeds, sizeof c->seeds);
    c->geometry = params->geometry;
    c->watch_torus_neighbours = true;
    c->heartbeat_ns = params->heartbeat_ns;
    c->heartbeat_timeout_ns = sim_detect_timeout_ns(params);
    c->probe_timeout_ns = 4u * unit;
    c->ack_timeout_ns = 4u * unit;
    c->report_timeout_ns = 8u * unit;
    c->join_timeout_ns = 16u * unit;
    c->sync_timeout_ns = 4u * unit;
    for (uint32_t id = 0; id < n; id++) {
        sim->nodes[id].tick_at = UINT64_MAX;
    }
    if (params->pcap_dir != NULL) {
        sim->pcap = sim_pcap_open(params->pcap_dir, n, error, error_capacity);
        if (sim->pcap == NULL) {
            sim_destroy(sim);
            return NULL;
        }
    }
    return sim;
}

void sim_destroy(struct sim *sim)
{
    if (sim == NULL) {
        return;
    }
    if (!sim_pcap_close(sim->pcap)) {
        fprintf(stderr, "tori-sim: --pcap: a capture could not be written completely\n");
    }
    if (sim->nodes != NULL) {
        for (uint32_t id = 0; id < sim->node_count; id++) {
            free_inbox(&sim->nodes[id]);
        }
    }
    struct sim_event e;
    while (sim_queue_pop(&sim->queue, &e)) {
        free(e.message);
    }
    sim_queue_free(&sim->queue);
    if (sim->apps != NULL) {
        for (uint32_t id = 0; id < sim->node_count; id++) {
            sim_app_free(&sim->apps[id]);
        }
    }
    free(sim->apps);
    sim_checkpoints_free(&sim->checkpoints);
    free(sim->tables);
    free(sim->reach_running);
    sim_ft_destroy(sim->ft);
    free(sim->map_scratch);
    free(sim->fired);
    free(sim->comms);
    free(sim->comm_out);
    free(sim->contexts);
    free(sim->nodes);
    free(sim->outbox);
    free(sim->injections);
    free(sim->epochs);
    free(sim);
}

bool sim_add_injections(struct sim *sim, const struct fault *items, size_t count)
{
    if (count == 0) {
        return true;
    }
    struct fault *grown =
        realloc(sim->injections, (sim->injection_count + count) * sizeof *grown);
    if (grown == NULL) {
        return false;
    }
    memcpy(grown + sim->injection_count, items, count * sizeof *items);
    sim->injections = grown;
    sim->injection_count += count;
    return true;
}

void sim_set_records(struct sim *sim, FILE *records)
{
    sim->records = records;
}

bool sim_run(struct sim *sim, FILE *out)
{
    sim->out = out;
    sim->now = 0;
    uint64_t last = 0;
    free(sim->fired);
    sim->fired = calloc(sim->injection_count > 0 ? sim->injection_count : 1, 1);
    if (sim->fired == NULL) {
        violation(sim, "out of memory");
        return false;
    }
    for (size_t i = 0; i < sim->injection_count; i++) {
        if (fault_timed_by_job(&sim->injections[i])) {
            continue; /* fired by the job (fire_by_iteration, fire_by_recovery) */
        }
        push(sim, sim->injections[i].time_ns, SIM_EVENT_INJECT, sim->injections[i].node,
             (uint32_t)i, 0, NULL);
        if (sim->injections[i].time_ns > last) {
            last = sim->injections[i].time_ns;
        }
    }
    /* The faults end when the last hang or block ends, not when it begins. */
    uint64_t faults_end = last;
    for (size_t i = 0; i < sim->injection_count; i++) {
        const struct fault *inj = &sim->injections[i];
        if ((inj->kind == FAULT_HANG || inj->kind == FAULT_BLOCK) && !fault_timed_by_job(inj) &&
            inj->time_ns + inj->duration_ns > faults_end) {
            faults_end = inj->time_ns + inj->duration_ns;
        }
    }
    uint64_t settle = sim_settle_ns(&sim->params);
    sim->end_ns = faults_end + settle;
    sim->stats.last_injection_ns = last;
    for (uint32_t id = 0; id < sim->node_count; id++) {
        if (id < sim->params.members) {
            boot_node(sim, id, false);
        }
    }
    /* Under REBUILD the spares start with the ranks and join (tori-emu). */
    if (sim->apps != NULL && sim->params.app.comm_mode == COMM_MODE_REBUILD) {
        for (uint32_t id = sim->params.members; id < sim->node_count; id++) {
            boot_node(sim, id, true);
        }
    }
    /* Quiescence, not a fixed window: a joiner turned away may be backing
     * off when the window closes, so the run goes on, a window at a time,
     * until the torus agrees or joiners have had two of their longest waits
     * (past that, disagreement is a liveness failure). */
    uint64_t limit = sim->end_ns + 2u * membership_join_wait_max_ns(&sim->base_config);
    for (;;) {
        struct sim_event e;
        while (!sim->stats.violation && sim_queue_peek_time(&sim->queue) <= sim->end_ns &&
               sim_queue_pop(&sim->queue, &e)) {
            reach_samples_until(sim, e.time_ns, false);
            sim->now = e.time_ns;
            step(sim, &e);
        }
        reach_samples_until(sim, sim->end_ns, true);
        if (sim->stats.violation) {
            break;
        }
        bool settled = apps_settled(sim);
        if (agreement(sim, false) && settled) {
            break;
        }
        /* The model applications may need longer than the membership: the
         * run goes on while they have something under way, up to a bound. */
        if (sim->end_ns >= limit &&
            (settled || sim->queue.count == 0 || sim->end_ns >= limit + SIM_APP_RUN_MAX_NS)) {
            break;
        }
        sim->end_ns += settle;
    }
    sim->now = sim->end_ns > sim->now ? sim->end_ns : sim->now;
    sim->stats.end_ns = sim->now;
    for (size_t i = 0; i < sim->injection_count; i++) {
        const struct fault *f = &sim->injections[i];
        if (fault_timed_by_job(f) && !sim->fired[i]) {
            /* the job ended (or was aborted) before the iteration came, or
             * nobody recovered */
            line_begin(sim, f->node, "not-fired");
            line_str(sim, "what", fault_kind_name(f->kind));
            if (f->at_recovery) {
                line_str(sim, "at", "recovery");
            } else {
                line_u64(sim, "iteration", f->iteration);
            }
            line_end(sim);
            sim->stats.faults_not_fired++;
        }
    }
    if (!sim->stats.violation) {
        agreement(sim, true);
    }
    if (!sim->stats.violation && sim->apps != NULL) {
        apps_agree(sim);
    }
    return !sim->stats.violation;
}

const struct sim_stats *sim_get_stats(const struct sim *sim)
{
    return &sim->stats;
}

const struct sim_params *sim_get_params(const struct sim *sim)
{
    return &sim->params;
}

const struct membership *sim_node(const struct sim *sim, uint32_t id)
{
    return &sim->contexts[id];
}

void sim_reach_all_pairs(const struct sim *sim, struct sim_reach *reach)
{
    struct reach_sample sample;
    memset(reach, 0, sizeof *reach);
    reach_sample_begin(&sample, sim->now);
    reach_every_pair(sim, &sample, &reach->ttl_expired);
    reach->pairs = sample.tried;
    reach->delivered = sample.reached;
    reach->stretch_mean = reach_sample_stretch_mean(&sample);
    reach->stretch_max = sample.stretch_max;
}
