/*
 * The exhaustive explorer: every interleaving of the membership state
 * machine's steps for a few nodes, over the real C code (membership/,
 * built with CONFIG_MAX_NODES=8 so that a context is small), checking the
 * simulator's invariants (sim/sim_invariant.h) in every state reached and
 * agreement in every quiescent one.
 *
 * A state is every node's context, the one clock, the messages in flight
 * (FIFO per pair of nodes, as over the torus's reliable links: the oldest
 * of each pair may be delivered next; --reorder: any of them; none is lost
 * but as below) and what the
 * checker remembers (lives, the epoch registry).  A step is one of:
 *   deliver  one message in flight to its (live) destination;
 *   tick     the clock jumps to the earliest deadline of any node, and
 *            that node's timers run: when nothing is in flight (messages
 *            are faster than every timeout), or while messages are in
 *            flight at most --early-ticks times a path (a slow message
 *            races a timeout);
 *   crash    a node stops for good (at most --crashes; the root included);
 *            the messages to it are lost, those it sent stay in flight;
 *   lose     a message a crashed node sent is lost (it died before the
 *            frame left: a change that reached some children only);
 *   suspect  a live node's detector notices a crashed tree neighbour
 *            (membership_suspect; heartbeats are off, so this is the
 *            detector), whenever it is not probing or reporting it yet;
 *   join     the spare (the last id, outside the initial view) boots and
 *            starts joining (with --join, once).
 * Depth-first with a table of state hashes (64-bit; a state seen again at
 * the same or a smaller depth is not explored again), so the search is
 * exhaustive up to --depth steps unless --max-states stops it first; both
 * are printed.  Quiescent: nothing in flight, no timer armed, no crash
 * left undetected; there every running node must hold the same view,
 * which is exactly the running nodes (the simulator's agreement).
 *
 * A violation prints the steps from the initial state and exits 1 (0 with
 * --expect-violation, whose absence exits 1).  Bad arguments: one line,
 * exit 2.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "membership/membership.h"
#include "sim/sim_invariant.h"

#define EX_NODES_MAX 5u
#define EX_MSGS_MAX 40u
#define EX_MSG_BYTES 160u
#define EX_EPOCHS_MAX 32u
#define EX_DEPTH_MAX 200u
#define EX_START_NS 1000000u

struct ex_msg {
    uint8_t from;
    uint8_t to;
    uint16_t length;
    uint8_t bytes[EX_MSG_BYTES];
};

struct ex_node {
    struct membership ctx;
    bool running;
    struct sim_life life;
    uint64_t hash; /* of ctx (but its counters), kept up to date */
};

struct ex_epoch {
    uint64_t epoch;
    struct sim_epoch_view view;
};

struct ex_state {
    struct ex_node node[EX_NODES_MAX];
    uint32_t msg_count;
    struct ex_msg msg[EX_MSGS_MAX]; /* sorted (canonical order) */
    uint32_t epoch_count;
    struct ex_epoch epochs[EX_EPOCHS_MAX]; /* sorted by epoch */
    uint8_t crashes;
    uint8_t crashed; /* bit per crashed id */
    bool joined;
    uint8_t early_ticks; /* ticks taken while messages were in flight */
    uint64_t now;        /* the one clock */
};

enum ex_kind { EX_DELIVER, EX_LOSE, EX_TICK, EX_CRASH, EX_SUSPECT, EX_JOIN };

struct ex_step {
    uint8_t kind;
    uint8_t a; /* deliver: from; others: the node */
    uint8_t b; /* deliver: to; suspect: the suspected */
    uint8_t type;
    uint64_t epoch;
    uint64_t at_ns;
};

struct ex_params {
    uint32_t nodes;
    uint32_t crashes;
    bool join;
    uint32_t depth;
    uint64_t max_states;
    uint32_t early_ticks;
    bool reorder; /* messages of one pair may overtake each other */
    bool show_cut; /* print the first path the depth bound cuts */
    bool expect_violation;
};

struct ex_stats {
    uint64_t states;      /* distinct states explored */
    uint64_t transitions; /* steps taken */
    uint64_t revisits;    /* steps into a state already explored */
    uint64_t quiescent;   /* quiescent states checked for agreement */
    uint32_t quiescent_depth; /* the deepest of them */
    uint64_t depth_cut;   /* states at the depth bound with steps left */
    uint32_t max_depth;
    uint64_t views;       /* distinct epochs installed, summed over paths' ends */
    uint32_t max_epochs;
    bool crash_root;      /* some path crashed a root */
    bool joined_in;       /* some quiescent state had the spare in the view */
    bool two_crashes_agreed; /* some quiescent state after two crashes */
    bool stopped;         /* --max-states reached */
    bool violation;
};

static struct ex_params P;
static struct ex_stats S;
static struct ex_state *stack;   /* stack[d]: the state at depth d */
static struct ex_step steps[EX_DEPTH_MAX];
static struct membership_outbox outbox;
static char why[256];

/* ------------------------------------------------------------------ */
/* Hashing                                                              */
/* ------------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t w)
{
    h ^= w;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t size)
{
    const uint8_t *p = data;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mix(h, w);
    }
    uint64_t tail = 0;
    memcpy(&tail, p + i, size - i);
    return mix(h, tail ^ ((uint64_t)size << 56));
}

/* Counters are what happened, not state: left out, so paths meet. */
static void node_rehash(struct ex_node *n)
{
    n->hash = hash_bytes(0x1234567ull, &n->ctx, offsetof(struct membership, counters));
}

static uint64_t state_hash(const struct ex_state *s)
{
    uint64_t h = 0xC0FFEEull;
    for (uint32_t i = 0; i < P.nodes; i++) {
        const struct ex_node *n = &s->node[i];
        h = mix(h, n->hash);
        h = mix(h, (uint64_t)n->running |
                       (uint64_t)n->life.started << 16 | (uint64_t)n->life.incarnation << 32);
        h = mix(h, n->life.epoch);
    }
    for (uint32_t i = 0; i < s->msg_count; i++) {
        const struct ex_msg *m = &s->msg[i];
        h = mix(h, (uint64_t)m->from << 32 | (uint64_t)m->to << 16 | m->length);
        h = hash_bytes(h, m->bytes, m->length);
    }
    for (uint32_t i = 0; i < s->epoch_count; i++) {
        h = mix(h, s->epochs[i].epoch);
        h = mix(h, s->epochs[i].view.digest ^ s->epochs[i].view.live);
    }
    h = mix(h, s->now);
    return mix(h, (uint64_t)s->early_ticks << 24 | (uint64_t)s->crashes << 16 |
                      (uint64_t)s->crashed << 8 | s->joined);
}

/* Open addressing: the hash and the smallest depth it was explored at. */
#define EX_TABLE_BITS 24u
#define EX_TABLE_SIZE (1u << EX_TABLE_BITS)
static uint64_t *table_key;
static uint8_t *table_depth;
static uint64_t table_used;

/* True when the state must be explored (new, or now reached at a smaller depth). */
static bool table_visit(uint64_t h, uint32_t depth)
{
    if (h == 0) {
        h = 1;
    }
    uint64_t i = h & (EX_TABLE_SIZE - 1u);
    for (;;) {
        if (table_key[i] == 0) {
            if (table_used >= EX_TABLE_SIZE / 10u * 9u) {
                S.stopped = true;
                return false;
            }
            table_key[i] = h;
            table_depth[i] = (uint8_t)depth;
            table_used++;
            return true;
        }
        if (table_key[i] == h) {
            if (depth < table_depth[i]) {
                table_depth[i] = (uint8_t)depth;
                return true;
            }
            return false;
        }
        i = (i + 1u) & (EX_TABLE_SIZE - 1u);
    }
}

/* ------------------------------------------------------------------ */
/* The model                                                            */
/* ------------------------------------------------------------------ */

static void make_config(struct membership_config *c, uint32_t id)
{
    membership_config_defaults(c);
    uint32_t ring[1] = {P.nodes};
    if (torus_geometry_init(&c->geometry, 1, ring, NULL, NULL) != TORUS_GEOMETRY_OK) {
        fprintf(stderr, "explore: a ring of %" PRIu32 " nodes is no geometry\n", P.nodes);
        exit(2);
    }
    c->node_id = id;
    c->member_count = P.join ? P.nodes - 1u : P.nodes;
    c->radix = 2; /* the deepest trees: relays between the root and the leaves */
    membership_config_timeouts_ms(c, 10, 40);
    c->heartbeat_ns = 0; /* the suspect step is the detector */
}

static void init_node(struct ex_node *n, uint32_t id, uint64_t now)
{
    struct membership_config c;
    make_config(&c, id);
    enum membership_init_status status = membership_init(&n->ctx, &c);
    if (status != MEMBERSHIP_INIT_OK) {
        fprintf(stderr, "explore: membership_init(%" PRIu32 "): %s\n", id,
                membership_init_status_text(status));
        exit(2);
    }
    /* Starts the node's clock (its first call); with heartbeats off it sends nothing. */
    membership_tick(&n->ctx, now, &outbox);
    if (outbox.message_count != 0) {
        fprintf(stderr, "explore: node %" PRIu32 " sent at its first tick\n", id);
        exit(2);
    }
    membership_outbox_clear(&outbox);
    node_rehash(n);
}

static int msg_compare(const struct ex_msg *a, const struct ex_msg *b)
{
    if (a->to != b->to) {
        return a->to < b->to ? -1 : 1;
    }
    if (a->from != b->from) {
        return a->from < b->from ? -1 : 1;
    }
    if (a->length != b->length) {
        return a->length < b->length ? -1 : 1;
    }
    return memcmp(a->bytes, b->bytes, a->length);
}

static bool same_pair_or_before(const struct ex_msg *a, const struct ex_msg *b)
{
    return a->to < b->to || (a->to == b->to && a->from <= b->from);
}

/* Under FIFO links only the oldest message of each pair can be delivered next. */
static bool deliverable(const struct ex_state *s, uint32_t i)
{
    if (i == 0) {
        return true;
    }
    const struct ex_msg *a = &s->msg[i - 1];
    const struct ex_msg *b = &s->msg[i];
    if (P.reorder) {
        return msg_compare(a, b) != 0; /* the same message twice: one choice */
    }
    return a->to != b->to || a->from != b->from;
}

static bool fail(const char *fmt, const char *text)
{
    snprintf(why, sizeof why, fmt, text);
    return false;
}

/* Records a view event in the registry (kept sorted by epoch). */
static bool record_view(struct ex_state *s, const struct membership_event_view *v)
{
    uint32_t i = 0;
    while (i < s->epoch_count && s->epochs[i].epoch < v->epoch) {
        i++;
    }
    if (i < s->epoch_count && s->epochs[i].epoch == v->epoch) {
        return true; /* sim_invariant_node compares the holders */
    }
    if (s->epoch_count == EX_EPOCHS_MAX) {
        return fail("%s", "more epochs than the explorer's registry holds");
    }
    memmove(&s->epochs[i + 1], &s->epochs[i], sizeof s->epochs[0] * (s->epoch_count - i));
    s->epochs[i].epoch = v->epoch;
    s->epochs[i].view.digest = v->digest;
    s->epochs[i].view.live = v->live;
    s->epoch_count++;
    return true;
}

/* What node `from` produced: messages in flight (sorted), views recorded. */
static bool drain(struct ex_state *s, uint32_t from)
{
    if (outbox.dropped_messages != 0 || outbox.dropped_events != 0) {
        return fail("%s", "the outbox dropped something");
    }
    for (uint32_t e = 0; e < outbox.event_count; e++) {
        if (outbox.events[e].type == MEMBERSHIP_EVENT_VIEW &&
            !record_view(s, &outbox.events[e].u.view)) {
            return false;
        }
    }
    for (uint32_t i = 0; i < outbox.message_count; i++) {
        uint32_t to = outbox.messages[i].destination;
        if (to >= P.nodes || to == from) {
            snprintf(why, sizeof why, "node %" PRIu32 " sent to bad destination %" PRIu32, from,
                     to);
            return false;
        }
        if (!s->node[to].running) {
            continue; /* lost with the node */
        }
        if (outbox.messages[i].length > EX_MSG_BYTES) {
            return fail("%s", "a message longer than the explorer holds (EX_MSG_BYTES)");
        }
        if (s->msg_count == EX_MSGS_MAX) {
            return fail("%s", "more messages in flight than the explorer holds (EX_MSGS_MAX)");
        }
        struct ex_msg m = {.from = (uint8_t)from,
                           .to = (uint8_t)to,
                           .length = outbox.messages[i].length};
        memcpy(m.bytes, membership_outbox_payload(&outbox, i), m.length);
        /* Sorted by pair; within a pair, in the order sent (P.reorder: by content). */
        uint32_t at = 0;
        while (at < s->msg_count && (P.reorder ? msg_compare(&s->msg[at], &m) <= 0
                                               : same_pair_or_before(&s->msg[at], &m))) {
            at++;
        }
        memmove(&s->msg[at + 1], &s->msg[at], sizeof m * (s->msg_count - at));
        s->msg[at] = m;
        s->msg_count++;
    }
    membership_outbox_clear(&outbox);
    return true;
}

static const struct sim_epoch_view *first_view(const struct ex_state *s, const struct ex_node *n)
{
    if (!membership_has_view(&n->ctx)) {
        return NULL;
    }
    uint64_t epoch = membership_epoch(&n->ctx);
    for (uint32_t i = 0; i < s->epoch_count; i++) {
        if (s->epochs[i].epoch == epoch) {
            return &s->epochs[i].view;
        }
    }
    return NULL;
}

/* The simulator's per-step invariants, on every running node. */
static bool check_nodes(struct ex_state *s)
{
    for (uint32_t id = 0; id < P.nodes; id++) {
        struct ex_node *n = &s->node[id];
        if (n->running && !sim_invariant_node(&n->ctx, id, &n->life, first_view(s, n), why,
                                              sizeof why)) {
            return false;
        }
    }
    return true;
}

/* Crashed id, in n's view, adjacent to n in n's tree (what a heartbeat detector watches). */
static bool watches(const struct ex_node *n, uint32_t id)
{
    uint32_t parent = MEMBERSHIP_NONE;
    uint32_t children[CONFIG_TREE_RADIX_MAX];
    uint32_t child_count = 0;
    uint32_t depth = 0;
    if (!membership_is_member(&n->ctx, id) ||
        !membership_tree_of(&n->ctx, &parent, children, &child_count, &depth)) {
        return false;
    }
    if (parent == id) {
        return true;
    }
    for (uint32_t i = 0; i < child_count; i++) {
        if (children[i] == id) {
            return true;
        }
    }
    return false;
}

/* Already probing or reporting id: nothing new for the detector to say. */
static bool pursuing(const struct membership *ctx, uint32_t id)
{
    for (uint32_t i = 0; i < ctx->probe_count; i++) {
        if (ctx->probes[i].id == id) {
            return true;
        }
    }
    for (uint32_t i = 0; i < ctx->suspect_count; i++) {
        if (ctx->suspects[i].id == id) {
            return true;
        }
    }
    return false;
}

/*
 * A heartbeat detector suspects a crashed tree neighbour again and again
 * until it is out of the view: here whenever it is not already probed or
 * reported (a message it sent before crashing may refute a suspicion).
 */
static bool suspect_enabled(const struct ex_state *s, uint32_t j, uint32_t c)
{
    const struct ex_node *n = &s->node[j];
    return n->running && (s->crashed >> c & 1u) != 0 && watches(n, c) && !pursuing(&n->ctx, c);
}

/* The simulator's agreement, in a quiescent state. */
static bool agreement(const struct ex_state *s)
{
    const struct ex_node *ref = NULL;
    uint32_t ref_id = 0;
    for (uint32_t id = 0; id < P.nodes; id++) {
        const struct ex_node *n = &s->node[id];
        if (!n->running || membership_join_refused(&n->ctx)) {
            continue;
        }
        if (!membership_has_view(&n->ctx)) {
            snprintf(why, sizeof why, "quiescent, but running node %" PRIu32 " holds no view",
                     id);
            return false;
        }
        if (ref == NULL) {
            ref = n;
            ref_id = id;
        } else if (membership_epoch(&n->ctx) != membership_epoch(&ref->ctx) ||
                   membership_digest(&n->ctx) != membership_digest(&ref->ctx)) {
            snprintf(why, sizeof why,
                     "quiescent, but node %" PRIu32 " holds %" PRIx64 " and node %" PRIu32
                     " holds %" PRIx64,
                     id, membership_epoch(&n->ctx), ref_id, membership_epoch(&ref->ctx));
            return false;
        }
    }
    if (ref == NULL) {
        for (uint32_t id = 0; id < P.nodes; id++) {
            if (s->node[id].running && !membership_join_refused(&s->node[id].ctx)) {
                return fail("%s", "quiescent, and no running node holds a view");
            }
        }
        return true; /* nobody left running */
    }
    for (uint32_t id = 0; id < P.nodes; id++) {
        const struct ex_node *n = &s->node[id];
        bool in_job = n->running && !membership_join_refused(&n->ctx);
        if (membership_is_member(&ref->ctx, id) != in_job) {
            snprintf(why, sizeof why, "quiescent view %" PRIx64 " %s node %" PRIu32 ", which is %s",
                     membership_epoch(&ref->ctx), in_job ? "lacks" : "holds", id,
                     in_job ? "running" : "not running");
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Steps                                                                */
/* ------------------------------------------------------------------ */

static bool do_deliver(struct ex_state *s, uint32_t index, struct ex_step *step)
{
    struct ex_msg m = s->msg[index];
    memmove(&s->msg[index], &s->msg[index + 1], sizeof m * (s->msg_count - index - 1u));
    s->msg_count--;
    struct ex_node *n = &s->node[m.to];
    struct membership_msg msg;
    if (membership_decode(m.bytes, m.length, P.nodes, &msg) != MEMBERSHIP_DECODE_OK) {
        snprintf(why, sizeof why, "node %u sent node %u a message that does not decode", m.from,
                 m.to);
        return false;
    }
    step->type = msg.header.type;
    step->epoch = msg.header.epoch;
    step->at_ns = s->now;
    bool stale = sim_message_is_stale(&n->ctx, &msg);
    uint64_t epoch_before = membership_epoch(&n->ctx);
    uint64_t digest_before = membership_digest(&n->ctx);
    membership_receive(&n->ctx, m.bytes, m.length, s->now, &outbox);
    node_rehash(n);
    if (stale && sim_view_changed(&n->ctx, epoch_before, digest_before)) {
        snprintf(why, sizeof why,
                 "a %s from %u at older epoch %" PRIx64 " changed node %u's view",
                 membership_msg_type_name(msg.header.type), m.from, msg.header.epoch, m.to);
        return false;
    }
    return drain(s, m.to);
}

static bool do_lose(struct ex_state *s, uint32_t index, struct ex_step *step)
{
    struct membership_msg msg;
    if (membership_decode(s->msg[index].bytes, s->msg[index].length, P.nodes, &msg) ==
        MEMBERSHIP_DECODE_OK) {
        step->type = msg.header.type;
        step->epoch = msg.header.epoch;
    }
    memmove(&s->msg[index], &s->msg[index + 1], sizeof s->msg[0] * (s->msg_count - index - 1u));
    s->msg_count--;
    return true;
}

static bool do_tick(struct ex_state *s, uint32_t id, struct ex_step *step)
{
    struct ex_node *n = &s->node[id];
    uint64_t at = membership_next_deadline(&n->ctx);
    if (at > s->now) {
        s->now = at;
    }
    step->at_ns = s->now;
    membership_tick(&n->ctx, s->now, &outbox);
    node_rehash(n);
    return drain(s, id);
}

static bool do_crash(struct ex_state *s, uint32_t id)
{
    if (membership_root(&s->node[id].ctx) == id) {
        S.crash_root = true;
    }
    s->node[id].running = false;
    s->crashes++;
    s->crashed |= (uint8_t)(1u << id);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->msg_count; i++) {
        if (s->msg[i].to != id) {
            s->msg[kept++] = s->msg[i];
        }
    }
    s->msg_count = kept;
    return true;
}

static bool do_suspect(struct ex_state *s, uint32_t j, uint32_t c)
{
    struct ex_node *n = &s->node[j];
    membership_suspect(&n->ctx, c, s->now, &outbox);
    node_rehash(n);
    return drain(s, j);
}

static bool do_join(struct ex_state *s, uint32_t id)
{
    struct ex_node *n = &s->node[id];
    s->joined = true;
    n->running = true;
    init_node(n, id, s->now);
    membership_start_join(&n->ctx, s->now, &outbox);
    node_rehash(n);
    return drain(s, id);
}

/* ------------------------------------------------------------------ */
/* Search                                                               */
/* ------------------------------------------------------------------ */

static void print_step(uint32_t i, const struct ex_step *st)
{
    switch (st->kind) {
    case EX_DELIVER:
        printf("  %3" PRIu32 ". deliver %u->%u %s epoch=%" PRIx64 " (at t=%" PRIu64 ")\n", i + 1,
               st->a, st->b, membership_msg_type_name(st->type), st->epoch, st->at_ns);
        break;
    case EX_LOSE:
        printf("  %3" PRIu32 ". lose %u->%u %s epoch=%" PRIx64 " (its sender crashed)\n", i + 1,
               st->a, st->b, membership_msg_type_name(st->type), st->epoch);
        break;
    case EX_TICK:
        printf("  %3" PRIu32 ". tick node %u at t=%" PRIu64 "\n", i + 1, st->a, st->at_ns);
        break;
    case EX_CRASH:
        printf("  %3" PRIu32 ". crash node %u\n", i + 1, st->a);
        break;
    case EX_SUSPECT:
        printf("  %3" PRIu32 ". node %u's detector suspects crashed node %u\n", i + 1, st->a,
               st->b);
        break;
    default:
        printf("  %3" PRIu32 ". node %u boots and joins\n", i + 1, st->a);
        break;
    }
}

static void report_violation(uint32_t depth)
{
    S.violation = true;
    printf("VIOLATION after %" PRIu32 " steps: %s\ntrace:\n", depth, why);
    for (uint32_t i = 0; i < depth; i++) {
        print_step(i, &steps[i]);
    }
    for (uint32_t id = 0; id < P.nodes; id++) {
        const struct ex_node *n = &stack[depth].node[id];
        printf("  node %" PRIu32 ": %s", id, n->running ? "running" : "down");
        if (n->running && membership_has_view(&n->ctx)) {
            printf(", epoch %" PRIx64 " stable %" PRIx64 ", %" PRIu32 " live, root %" PRIu32,
                   membership_epoch(&n->ctx), membership_stable_epoch(&n->ctx),
                   membership_live_count(&n->ctx), membership_root(&n->ctx));
        } else if (n->running) {
            printf(", no view%s", membership_is_joining(&n->ctx) ? " (joining)" : "");
        }
        printf("\n");
    }
}

static void explore(uint32_t depth);

/* Takes one step from stack[depth] into stack[depth + 1] and explores on. */
static void step_into(uint32_t depth, struct ex_step st, uint32_t index)
{
    if (S.violation || S.stopped) {
        return;
    }
    struct ex_state *next = &stack[depth + 1];
    memcpy(next, &stack[depth], sizeof *next);
    bool ok = true;
    switch (st.kind) {
    case EX_DELIVER:
        ok = do_deliver(next, index, &st);
        break;
    case EX_LOSE:
        ok = do_lose(next, index, &st);
        break;
    case EX_TICK:
        if (next->msg_count > 0) {
            next->early_ticks++;
        }
        ok = do_tick(next, st.a, &st);
        break;
    case EX_CRASH:
        ok = do_crash(next, st.a);
        break;
    case EX_SUSPECT:
        ok = do_suspect(next, st.a, st.b);
        break;
    default:
        ok = do_join(next, st.a);
        break;
    }
    steps[depth] = st;
    S.transitions++;
    if (ok) {
        ok = check_nodes(next);
    }
    membership_outbox_clear(&outbox);
    if (!ok) {
        report_violation(depth + 1);
        return;
    }
    if (!table_visit(state_hash(next), depth + 1)) {
        S.revisits++;
        return;
    }
    explore(depth + 1);
}

static void explore(uint32_t depth)
{
    const struct ex_state *s = &stack[depth];
    S.states++;
    if (depth > S.max_depth) {
        S.max_depth = depth;
    }
    if (s->epoch_count > S.max_epochs) {
        S.max_epochs = s->epoch_count;
    }
    if (S.states >= P.max_states) {
        S.stopped = true;
        return;
    }
    /* Quiescent: nothing in flight, no timer, no crash left to detect. */
    bool busy = s->msg_count > 0;
    for (uint32_t id = 0; id < P.nodes && !busy; id++) {
        busy = s->node[id].running && membership_next_deadline(&s->node[id].ctx) !=
                                          MEMBERSHIP_NEVER;
        for (uint32_t c = 0; c < P.nodes && !busy; c++) {
            busy = suspect_enabled(s, id, c);
        }
    }
    if (!busy) {
        S.quiescent++;
        if (depth > S.quiescent_depth) {
            S.quiescent_depth = depth;
        }
        if (!agreement(s)) {
            report_violation(depth);
            return;
        }
        if (P.join && s->joined && s->node[P.nodes - 1u].running &&
            membership_is_member(&s->node[0].ctx, P.nodes - 1u)) {
            S.joined_in = true;
        }
        if (s->crashes == 2) {
            S.two_crashes_agreed = true;
        }
    }
    if (depth == P.depth) {
        if (S.depth_cut == 0 && P.show_cut) {
            printf("the first path cut by the depth bound:\n");
            for (uint32_t i = 0; i < depth; i++) {
                print_step(i, &steps[i]);
            }
        }
        S.depth_cut++;
        return;
    }
    for (uint32_t i = 0; i < s->msg_count; i++) {
        if (!deliverable(s, i)) {
            continue;
        }
        step_into(depth, (struct ex_step){.kind = EX_DELIVER, .a = s->msg[i].from,
                                          .b = s->msg[i].to}, i);
        if ((s->crashed >> s->msg[i].from & 1u) != 0) {
            step_into(depth, (struct ex_step){.kind = EX_LOSE, .a = s->msg[i].from,
                                              .b = s->msg[i].to}, i);
        }
    }
    /* Timers fire in the order of their deadlines, on the one clock. */
    uint64_t earliest = MEMBERSHIP_NEVER;
    for (uint32_t id = 0; id < P.nodes; id++) {
        if (s->node[id].running) {
            uint64_t d = membership_next_deadline(&s->node[id].ctx);
            earliest = d < earliest ? d : earliest;
        }
    }
    for (uint32_t id = 0; id < P.nodes && earliest != MEMBERSHIP_NEVER &&
                          (s->msg_count == 0 || s->early_ticks < P.early_ticks);
         id++) {
        if (s->node[id].running && membership_next_deadline(&s->node[id].ctx) == earliest) {
            step_into(depth, (struct ex_step){.kind = EX_TICK, .a = (uint8_t)id}, 0);
        }
    }
    for (uint32_t j = 0; j < P.nodes; j++) {
        for (uint32_t c = 0; c < P.nodes; c++) {
            if (suspect_enabled(s, j, c)) {
                step_into(depth, (struct ex_step){.kind = EX_SUSPECT, .a = (uint8_t)j,
                                                  .b = (uint8_t)c}, 0);
            }
        }
    }
    if (s->crashes < P.crashes) {
        for (uint32_t id = 0; id < P.nodes; id++) {
            if (s->node[id].running) {
                step_into(depth, (struct ex_step){.kind = EX_CRASH, .a = (uint8_t)id}, 0);
            }
        }
    }
    if (P.join && !s->joined) {
        step_into(depth, (struct ex_step){.kind = EX_JOIN, .a = (uint8_t)(P.nodes - 1u)}, 0);
    }
}

/* ------------------------------------------------------------------ */
/* Main                                                                 */
/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f, "usage: test_explore --nodes N [--crashes K] [--join] [--early-ticks E]\n"
               "                    [--reorder] [--depth D] [--max-states S] [--show-cut]\n"
               "                    [--expect-violation]\n"
               "  N: 3 to %u nodes (with --join, the last is a spare that joins once)\n"
               "  K: 0 to 2 crashes, any node, the root included (default 2)\n"
               "  E: timeouts that may fire while messages are in flight, per path, 0 to 8\n"
               "     (default 0: the network is faster than every timeout)\n"
               "  --reorder: a pair's messages may overtake each other (default: FIFO links)\n"
               "  D: steps from the initial state, 1 to %u (default 40)\n"
               "  S: stop after S states (default 2000000)\n"
               "  --show-cut: print the first path the depth bound cuts (what runs on)\n"
               "  --expect-violation: exit 0 only when a violation is found\n",
            EX_NODES_MAX, EX_DEPTH_MAX - 1u);
}

static uint64_t parse_number(const char *option, const char *text, uint64_t low, uint64_t high)
{
    char *end = NULL;
    unsigned long long v = text != NULL ? strtoull(text, &end, 10) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || v < low || v > high) {
        fprintf(stderr, "test_explore: %s '%s' is not a number from %" PRIu64 " to %" PRIu64 "\n",
                option, text != NULL ? text : "", low, high);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    P = (struct ex_params){.crashes = 2, .depth = 40, .max_states = 2000000};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--nodes") == 0) {
            P.nodes = (uint32_t)parse_number(a, v, 3, EX_NODES_MAX);
            i++;
        } else if (strcmp(a, "--crashes") == 0) {
            P.crashes = (uint32_t)parse_number(a, v, 0, 2);
            i++;
        } else if (strcmp(a, "--depth") == 0) {
            P.depth = (uint32_t)parse_number(a, v, 1, EX_DEPTH_MAX - 1u);
            i++;
        } else if (strcmp(a, "--max-states") == 0) {
            P.max_states = parse_number(a, v, 1, UINT64_C(1) << 40);
            i++;
        } else if (strcmp(a, "--early-ticks") == 0) {
            P.early_ticks = (uint32_t)parse_number(a, v, 0, 8);
            i++;
        } else if (strcmp(a, "--show-cut") == 0) {
            P.show_cut = true;
        } else if (strcmp(a, "--reorder") == 0) {
            P.reorder = true;
        } else if (strcmp(a, "--join") == 0) {
            P.join = true;
        } else if (strcmp(a, "--expect-violation") == 0) {
            P.expect_violation = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "test_explore: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (P.nodes == 0) {
        fprintf(stderr, "test_explore: --nodes is required (see --help)\n");
        return 2;
    }
    stack = calloc(P.depth + 2u, sizeof *stack);
    table_key = calloc(EX_TABLE_SIZE, sizeof *table_key);
    table_depth = calloc(EX_TABLE_SIZE, sizeof *table_depth);
    if (stack == NULL || table_key == NULL || table_depth == NULL) {
        fprintf(stderr, "test_explore: out of memory\n");
        return 2;
    }
    uint32_t members = P.join ? P.nodes - 1u : P.nodes;
    for (uint32_t id = 0; id < members; id++) {
        stack[0].node[id].running = true;
        init_node(&stack[0].node[id], id, EX_START_NS);
    }
    stack[0].now = EX_START_NS;
    clock_t started = clock();
    table_visit(state_hash(&stack[0]), 0);
    explore(0);
    double seconds = (double)(clock() - started) / CLOCKS_PER_SEC;
    printf("explore nodes=%" PRIu32 " members=%" PRIu32 " crashes<=%" PRIu32 " join=%s links=%s "
           "early_ticks<=%" PRIu32 " depth<=%" PRIu32 ": states=%" PRIu64 " transitions=%" PRIu64 " revisits=%" PRIu64
           " quiescent=%" PRIu64 " (deepest %" PRIu32 ") at_depth_bound=%" PRIu64 " max_depth=%" PRIu32
           " max_epochs=%" PRIu32 " seconds=%.1f\n",
           P.nodes, members, P.crashes, P.join ? "yes" : "no", P.reorder ? "reordering" : "fifo", P.early_ticks, P.depth, S.states, S.transitions,
           S.revisits, S.quiescent, S.quiescent_depth, S.depth_cut, S.max_depth, S.max_epochs, seconds);
    printf("covered: root crashed=%s, two crashes settled=%s, joiner settled in the view=%s; "
           "search %s\n",
           S.crash_root ? "yes" : "no", S.two_crashes_agreed ? "yes" : "no",
           S.joined_in ? "yes" : "no",
           S.violation ? "stopped at the violation"
           : S.stopped ? "stopped at the state bound (not exhaustive to the depth)"
           : S.depth_cut > 0 ? "exhaustive to the depth bound"
                             : "exhaustive (every path reached quiescence)");
    if (P.expect_violation) {
        if (!S.violation) {
            printf("FAILED: the planted bug was not found\n");
        }
        return S.violation ? 0 : 1;
    }
    if (!S.violation && S.quiescent == 0) {
        printf("FAILED: no quiescent state reached: agreement never checked (raise --depth)\n");
        return 1;
    }
    return S.violation ? 1 : 0;
}
