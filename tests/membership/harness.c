/* The membership tests' one network (see harness.h). */
#include "tests/membership/harness.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static void harness_fail(struct harness *h, const char *what, uint32_t a, uint32_t b)
{
    fprintf(stderr, "harness: %s (%u, %u) at %llu ns\n", what, a, b, (unsigned long long)h->now);
    h->failures++;
}

void harness_setup_defaults(struct harness_setup *setup)
{
    memset(setup, 0, sizeof *setup);
    setup->radix = CONFIG_TREE_RADIX_DEFAULT;
    setup->layout = MEMBERSHIP_LAYOUT_RADIX;
    setup->watch_torus_neighbours = true;
}

static bool init_node(struct harness *h, uint32_t id, uint32_t incarnation)
{
    struct membership_config c;
    membership_config_defaults(&c);
    c.geometry = h->setup.geometry;
    c.node_id = id;
    c.member_count = h->setup.members;
    c.radix = h->setup.radix;
    c.layout = h->setup.layout;
    c.watch_torus_neighbours = h->setup.watch_torus_neighbours;
    c.incarnation = incarnation;
    c.recovery = h->setup.recovery;
    c.seed_count = h->setup.seed_count;
    memcpy(c.seeds, h->setup.seeds, sizeof c.seeds);
    if (h->setup.detect_ms != 0) {
        membership_config_timeouts_ms(&c, h->setup.heartbeat_ms, h->setup.detect_ms);
    }
    if (h->setup.heartbeat_off) {
        c.heartbeat_ns = 0;
    }
    if (h->setup.timeout_ceiling != 0) {
        c.timeout_ceiling = h->setup.timeout_ceiling;
    }
    enum membership_init_status status = membership_init(&h->nodes[id], &c);
    if (status != MEMBERSHIP_INIT_OK) {
        fprintf(stderr, "harness: node %u: %s\n", id, membership_init_status_text(status));
        return false;
    }
    return true;
}

bool harness_start(struct harness *h, const struct harness_setup *setup)
{
    memset(h, 0, sizeof *h);
    h->setup = *setup;
    h->lose_next_from = MEMBERSHIP_NONE;
    if (setup->geometry.node_count == 0 || setup->geometry.node_count > HARNESS_MAX_NODES) {
        fprintf(stderr, "harness: %u nodes (1 to %u)\n", setup->geometry.node_count,
                HARNESS_MAX_NODES);
        return false;
    }
    for (uint32_t id = 0; id < setup->geometry.node_count; id++) {
        if (!init_node(h, id, 0)) {
            return false;
        }
    }
    return true;
}

static uint32_t node_count(const struct harness *h)
{
    return h->setup.geometry.node_count;
}

void harness_window(struct harness *h)
{
    h->sent_count = 0;
    h->event_count = 0;
    h->delivered = 0;
    h->lost = 0;
}

void harness_collect(struct harness *h, uint32_t from)
{
    struct membership_outbox *out = &h->out;
    for (uint32_t i = 0; i < out->message_count; i++) {
        const struct membership_outgoing *m = &out->messages[i];
        const uint8_t *payload = membership_outbox_payload(out, i);
        struct membership_msg msg;
        if (m->destination >= node_count(h) || m->destination == from) {
            harness_fail(h, "message to a node that does not exist, or to itself", from,
                         m->destination);
            continue;
        }
        if (membership_decode(payload, m->length, node_count(h), &msg) != MEMBERSHIP_DECODE_OK) {
            harness_fail(h, "a payload that does not decode (from, to)", from, m->destination);
        } else if ((msg.header.type == MEMBERSHIP_MSG_HEARTBEAT) != m->loss_tolerant &&
                   !(m->loss_tolerant && msg.header.type == MEMBERSHIP_MSG_RELAY)) {
            /* Only heartbeats (perhaps in a relay's envelope) may be sent
             * best effort (issue 20); everything else must arrive. */
            harness_fail(h, "loss_tolerant on a message that is not a heartbeat, or not on "
                            "a heartbeat (from, to)", from, m->destination);
        }
        if (h->tail - h->head >= HARNESS_QUEUE) {
            harness_fail(h, "FIFO full (from, to)", from, m->destination);
            continue;
        }
        uint32_t slot = h->tail++ % HARNESS_QUEUE;
        struct harness_packet *p = &h->queue[slot];
        p->from = from;
        p->to = m->destination;
        p->length = m->length;
        memcpy(p->bytes, payload, m->length);
        if (h->sent_count < HARNESS_LOG) {
            h->sent[h->sent_count++] = (struct harness_sent){
                .from = from, .to = m->destination, .type = payload[1], .time_ns = h->now,
                .slot = slot};
        } else {
            harness_fail(h, "window log full (from, to)", from, m->destination);
        }
    }
    for (uint32_t i = 0; i < out->event_count; i++) {
        if (h->event_count < HARNESS_EVENTS) {
            h->events[h->event_count++] =
                (struct harness_event){.node = from, .time_ns = h->now, .event = out->events[i]};
        } else {
            harness_fail(h, "window event log full (node, type)", from, out->events[i].type);
        }
    }
    if (out->dropped_messages != 0 || out->dropped_events != 0) {
        harness_fail(h, "outbox dropped (messages, events)", out->dropped_messages,
                     out->dropped_events);
    }
    membership_outbox_clear(out);
}

static bool same_side(const struct harness *h, uint32_t a, uint32_t b)
{
    if (!h->partitioned) {
        return true;
    }
    const struct torus_geometry *g = &h->setup.geometry;
    uint32_t ca = h->partition_dim < 0 ? a : torus_geometry_coord(g, a, (unsigned)h->partition_dim);
    uint32_t cb = h->partition_dim < 0 ? b : torus_geometry_coord(g, b, (unsigned)h->partition_dim);
    return (ca < h->partition_below) == (cb < h->partition_below);
}

/* Lost on the way: a loss rule, a cut pair (link off, block) or the partition. */
static bool lost_on_the_way(struct harness *h, const struct harness_packet *p)
{
    if (p->from == h->lose_next_from && p->bytes[1] == h->lose_next_type) {
        h->lose_next_from = MEMBERSHIP_NONE; /* once */
        return true;
    }
    for (uint32_t i = 0; i < h->cut_count; i++) {
        const struct harness_pair *c = &h->cut[i];
        bool forward = c->from == p->from && c->to == p->to;
        bool back = c->both_ways && c->from == p->to && c->to == p->from;
        if ((forward || back) && h->now < c->until_ns) {
            return true;
        }
    }
    return !same_side(h, p->from, p->to);
}

static void add_cut(struct harness *h, uint32_t from, uint32_t to, bool both_ways, uint64_t until)
{
    if (h->cut_count == HARNESS_RULES) {
        harness_fail(h, "too many cut pairs", from, to);
        return;
    }
    h->cut[h->cut_count++] =
        (struct harness_pair){.from = from, .to = to, .both_ways = both_ways, .until_ns = until};
}

static void remove_cut(struct harness *h, uint32_t a, uint32_t b)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < h->cut_count; i++) {
        const struct harness_pair *c = &h->cut[i];
        bool pair = c->both_ways && ((c->from == a && c->to == b) || (c->from == b && c->to == a));
        if (!pair) {
            h->cut[kept++] = *c;
        }
    }
    h->cut_count = kept;
}

/* The simulator's rule: a restarted node's incarnation is boots * 1024. */
static void join_node(struct harness *h, uint32_t id)
{
    struct membership *m = &h->nodes[id];
    if (h->down[id]) {
        h->boots[id]++;
        h->down[id] = false;
        if (!init_node(h, id, h->boots[id] * 1024u)) {
            h->failures++;
            return;
        }
    } else if (membership_has_view(m) || membership_is_joining(m)) {
        harness_fail(h, "join of a node that is running (node, 0)", id, 0);
        return;
    }
    membership_start_join(m, h->now, &h->out);
    harness_collect(h, id);
}

static void carry_out(struct harness *h, const struct harness_fault *f)
{
    switch (f->kind) {
    case HARNESS_FAULT_KILL:
        h->down[f->node] = true;
        break;
    case HARNESS_FAULT_JOIN:
        join_node(h, f->node);
        break;
    case HARNESS_FAULT_SUSPECT:
        if (!h->down[f->node]) {
            if (!membership_suspect(&h->nodes[f->node], f->other, h->now, &h->out)) {
                harness_fail(h, "suspicion refused (node, suspected)", f->node, f->other);
            }
            harness_collect(h, f->node);
        }
        break;
    case HARNESS_FAULT_LINK_OFF:
    case HARNESS_FAULT_LINK_ON: {
        bool up = f->kind == HARNESS_FAULT_LINK_ON;
        if (up) {
            remove_cut(h, f->node, f->other);
        } else {
            add_cut(h, f->node, f->other, true, MEMBERSHIP_NEVER);
        }
        /* Both ends' torus layers notice. */
        uint32_t ends[2] = {f->node, f->other};
        for (unsigned i = 0; i < 2; i++) {
            if (!h->down[ends[i]]) {
                membership_link_event(&h->nodes[ends[i]], ends[1 - i], up, h->now, &h->out);
                harness_collect(h, ends[i]);
            }
        }
        break;
    }
    case HARNESS_FAULT_BLOCK:
        add_cut(h, f->node, f->other, true, f->time_ns + f->duration_ns);
        break;
    case HARNESS_FAULT_PARTITION:
        h->partitioned = true;
        h->partition_dim = f->dim;
        h->partition_below = f->below;
        break;
    case HARNESS_FAULT_HEAL:
        h->partitioned = false;
        break;
    case HARNESS_FAULT_APPKILL:
    case HARNESS_FAULT_LEAVE:
        if (!h->down[f->node]) {
            uint8_t model =
                f->kind == HARNESS_FAULT_LEAVE ? FAULT_MODEL_LEFT : FAULT_MODEL_PROCESS;
            if (!membership_request_removal(&h->nodes[f->node], model, h->now, &h->out)) {
                harness_fail(h, "removal request refused (node, 0)", f->node, 0);
            }
            harness_collect(h, f->node);
        }
        break;
    }
}

/* Carries out, in script order, the waiting faults whose time has come. */
static void carry_out_due(struct harness *h)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < h->pending_count; i++) {
        struct harness_fault f = h->pending[i];
        if (f.time_ns <= h->now) {
            carry_out(h, &f);
        } else {
            h->pending[kept++] = f;
        }
    }
    h->pending_count = kept;
}

void harness_advance(struct harness *h, uint64_t now)
{
    if (now > h->now) {
        h->now = now;
    }
    carry_out_due(h);
}

void harness_fault(struct harness *h, const struct harness_fault *fault)
{
    if (h->pending_count == HARNESS_RULES) {
        harness_fail(h, "too many faults waiting (kind, node)", fault->kind, fault->node);
        return;
    }
    h->pending[h->pending_count++] = *fault;
    carry_out_due(h);
}

uint32_t harness_deliver(struct harness *h)
{
    uint32_t delivered = 0;
    while (h->head != h->tail) {
        struct harness_packet *p = &h->queue[h->head++ % HARNESS_QUEUE];
        harness_advance(h, h->now + h->hop_ns);
        if (h->down[p->to]) {
            continue;
        }
        if (lost_on_the_way(h, p)) {
            h->lost++;
            continue;
        }
        membership_receive(&h->nodes[p->to], p->bytes, p->length, h->now, &h->out);
        harness_collect(h, p->to);
        delivered++;
    }
    h->delivered += delivered;
    return delivered;
}

void harness_tick(struct harness *h, uint32_t id, uint64_t now)
{
    harness_advance(h, now);
    if (!h->down[id]) {
        membership_tick(&h->nodes[id], h->now, &h->out);
        harness_collect(h, id);
    }
}

static bool reported_in(const struct harness *h, uint32_t from_event, uint32_t who,
                        uint32_t detector)
{
    for (uint32_t i = from_event; i < h->event_count; i++) {
        const struct harness_event *e = &h->events[i];
        if (e->node == detector && e->event.type == MEMBERSHIP_EVENT_FAILURE_DETECTED &&
            e->event.u.failure.who == who) {
            return true;
        }
    }
    return false;
}

uint64_t harness_run(struct harness *h, uint64_t until, uint64_t step, uint32_t who,
                     uint32_t detector)
{
    uint64_t hop = h->hop_ns;
    h->hop_ns = 0; /* a step's messages all arrive at its time */
    for (uint64_t now = h->now; now <= until; now += step) {
        uint32_t first_event = h->event_count;
        harness_advance(h, now);
        for (uint32_t id = 0; id < node_count(h); id++) {
            bool late = h->tick_every_ns[id] != 0 && h->last_tick_ns[id] != 0 &&
                        now - h->last_tick_ns[id] < h->tick_every_ns[id];
            if (!h->down[id] && !late && membership_next_deadline(&h->nodes[id]) <= now) {
                membership_tick(&h->nodes[id], now, &h->out);
                h->last_tick_ns[id] = now;
            }
            harness_collect(h, id);
        }
        harness_deliver(h);
        if (who != MEMBERSHIP_NONE && reported_in(h, first_event, who, detector)) {
            break;
        }
    }
    h->hop_ns = hop;
    return h->now;
}

void harness_message_begin(const struct harness *h, uint32_t to, uint8_t type, uint32_t sender,
                           bool has_view, struct membership_writer *w, uint8_t *buffer,
                           size_t capacity)
{
    struct membership_header header = {
        .type = type,
        .flags = has_view ? MEMBERSHIP_FLAG_HAS_VIEW : 0,
        .sender = sender,
        .incarnation = 0,
        .epoch = membership_epoch(&h->nodes[to]),
        .stable_epoch = membership_stable_epoch(&h->nodes[to]),
    };
    membership_writer_init(w, buffer, capacity);
    membership_put_header(w, &header);
}

void harness_receive(struct harness *h, uint32_t to, const uint8_t *bytes, size_t length)
{
    if (h->down[to]) {
        return;
    }
    membership_receive(&h->nodes[to], bytes, length, h->now, &h->out);
    harness_collect(h, to);
}

static bool sent_matches(const struct harness_sent *s, uint32_t from, int type, uint32_t to)
{
    return (from == MEMBERSHIP_NONE || s->from == from) && (type < 0 || s->type == type) &&
           (to == MEMBERSHIP_NONE || s->to == to);
}

uint32_t harness_count_sent(const struct harness *h, uint32_t from, int type, uint32_t to)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < h->sent_count; i++) {
        count += sent_matches(&h->sent[i], from, type, to) ? 1u : 0u;
    }
    return count;
}

const struct harness_sent *harness_find_sent(const struct harness *h, uint32_t from, int type,
                                             uint32_t to)
{
    for (uint32_t i = 0; i < h->sent_count; i++) {
        if (sent_matches(&h->sent[i], from, type, to)) {
            return &h->sent[i];
        }
    }
    return NULL;
}

const struct harness_packet *harness_payload(const struct harness *h,
                                             const struct harness_sent *sent)
{
    return &h->queue[sent->slot];
}

void harness_drop_queue(struct harness *h)
{
    h->head = h->tail;
}

int harness_msg_type(const char *name)
{
    char lower[32];
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof lower) {
        return -1;
    }
    for (size_t i = 0; i <= n; i++) {
        lower[i] = (char)tolower((unsigned char)name[i]);
    }
    for (unsigned type = 1; type < MEMBERSHIP_MSG_TYPE_LIMIT; type++) {
        if (strcmp(membership_msg_type_name(type), lower) == 0) {
            return (int)type;
        }
    }
    return -1;
}
