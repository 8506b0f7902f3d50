/*
 * The comm test network (see harness.h).
 */
#include "tests/comm/harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked_calloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (p == NULL) {
        fprintf(stderr, "harness: out of memory\n");
        exit(2);
    }
    return p;
}

void harness_error(struct harness *h, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "harness: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    h->errors++;
}

void harness_init(struct harness *h, uint32_t n, uint32_t world, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->n = n;
    h->nodes = checked_calloc(n, sizeof *h->nodes);
    h->hung = checked_calloc(n, sizeof *h->hung);
    h->suspects = checked_calloc(n, sizeof *h->suspects);
    h->detected = checked_calloc(n, sizeof *h->detected);
    h->aborts = checked_calloc(n, sizeof *h->aborts);
    h->revokes = checked_calloc(n, sizeof *h->revokes);
    h->suspected_node = checked_calloc(n, sizeof *h->suspected_node);
    h->heap_capacity = 1024;
    h->heap = checked_calloc(h->heap_capacity, sizeof *h->heap);
    h->held_capacity = 256;
    h->held = checked_calloc(h->held_capacity, sizeof *h->held);
    check_rng_seed(&h->rng, seed);
    h->now_ns = 1000000000u;
    h->delay_min_ns = 10000u;
    h->delay_max_ns = 10000u;
    for (uint32_t i = 0; i < n; i++) {
        struct comm_config config;
        comm_config_defaults(&config);
        config.node_id = i;
        config.node_count = n;
        config.world_size = world;
        config.incarnation = 100u + i;
        config.rto_ns = 2000000u;
        config.rto_max_ns = 20000000u;
        config.ack_delay_ns = 100000u;
        config.suspect_ns = 200000000u;
        enum comm_init_status s = comm_init(&h->nodes[i], &config);
        if (s != COMM_INIT_OK) {
            fprintf(stderr, "harness: comm_init: %s\n", comm_init_status_text(s));
            exit(2);
        }
    }
}

void harness_free(struct harness *h)
{
    free(h->nodes);
    free(h->hung);
    free(h->suspects);
    free(h->detected);
    free(h->aborts);
    free(h->revokes);
    free(h->suspected_node);
    free(h->heap);
    free(h->held);
}

struct comm *harness_node(struct harness *h, uint32_t node)
{
    return &h->nodes[node];
}

struct comm_outbox *harness_begin(struct harness *h)
{
    comm_outbox_clear(&h->out);
    return &h->out;
}

/* ---- the heap ---- */

static bool before(const struct harness_frame *a, const struct harness_frame *b)
{
    return a->deliver_ns < b->deliver_ns ||
           (a->deliver_ns == b->deliver_ns && a->order < b->order);
}

static void heap_swap(struct harness *h, uint32_t i, uint32_t j)
{
    struct harness_frame t = h->heap[i];
    h->heap[i] = h->heap[j];
    h->heap[j] = t;
}

static void heap_push(struct harness *h, const struct harness_frame *f)
{
    if (h->heap_count == h->heap_capacity) {
        h->heap_capacity *= 2;
        h->heap = realloc(h->heap, h->heap_capacity * sizeof *h->heap);
        if (h->heap == NULL) {
            fprintf(stderr, "harness: out of memory\n");
            exit(2);
        }
    }
    uint32_t i = h->heap_count++;
    h->heap[i] = *f;
    while (i > 0 && before(&h->heap[i], &h->heap[(i - 1) / 2])) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_pop(struct harness *h, struct harness_frame *f)
{
    *f = h->heap[0];
    h->heap[0] = h->heap[--h->heap_count];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1;
        uint32_t r = l + 1;
        uint32_t m = i;
        if (l < h->heap_count && before(&h->heap[l], &h->heap[m])) {
            m = l;
        }
        if (r < h->heap_count && before(&h->heap[r], &h->heap[m])) {
            m = r;
        }
        if (m == i) {
            return;
        }
        heap_swap(h, i, m);
        i = m;
    }
}

static void hold(struct harness *h, const struct harness_frame *f)
{
    if (h->held_count == h->held_capacity) {
        h->held_capacity *= 2;
        h->held = realloc(h->held, h->held_capacity * sizeof *h->held);
        if (h->held == NULL) {
            fprintf(stderr, "harness: out of memory\n");
            exit(2);
        }
    }
    h->held[h->held_count++] = *f;
}

static uint64_t random_delay(struct harness *h)
{
    uint64_t spread = h->delay_max_ns - h->delay_min_ns;
    return h->delay_min_ns + (spread == 0 ? 0 : check_rng_next(&h->rng) % (spread + 1u));
}

void harness_end(struct harness *h, uint32_t node)
{
    struct comm_outbox *out = &h->out;
    if (out->dropped_frames != 0) {
        harness_error(h, "node %u dropped %u control frames: outbox full", node,
                      out->dropped_frames);
    }
    for (uint32_t i = 0; i < out->frame_count; i++) {
        const struct comm_outgoing *o = &out->frames[i];
        struct harness_frame f;
        f.source = node;
        f.destination = o->destination;
        f.epoch = o->epoch;
        f.length = o->length;
        memcpy(f.payload, comm_outbox_payload(out, i), o->length);
        if (check_rng_percent(&h->rng, h->loss_percent)) {
            h->lost++;
            continue;
        }
        unsigned copies = check_rng_percent(&h->rng, h->duplicate_percent) ? 2u : 1u;
        h->duplicated += copies - 1u;
        for (unsigned c = 0; c < copies; c++) {
            f.deliver_ns = h->now_ns + random_delay(h);
            f.order = h->next_order++;
            heap_push(h, &f);
        }
    }
    for (uint32_t i = 0; i < out->event_count; i++) {
        if (out->events[i].type == COMM_EVENT_SUSPECT) {
            h->suspects[node]++;
            h->suspected_node[node] = out->events[i].node;
        } else if (out->events[i].type == COMM_EVENT_DETECTED) {
            h->detected[node]++;
        } else if (out->events[i].type == COMM_EVENT_ABORT) {
            h->aborts[node]++;
        } else if (out->events[i].type == COMM_EVENT_REVOKED) {
            h->revokes[node]++;
        }
    }
    comm_outbox_clear(out);
}

void harness_install(struct harness *h, uint64_t epoch, const bool *live, const bool *to)
{
    static struct membership_view view;
    membership_view_reset(&view, h->n);
    for (uint32_t i = 0; i < h->n; i++) {
        if (live == NULL || live[i]) {
            membership_view_add(&view, i);
        }
    }
    for (uint32_t i = 0; i < h->n; i++) {
        if (to == NULL || to[i]) {
            if (!comm_install_view(&h->nodes[i], epoch, &view, NULL, h->now_ns,
                                   harness_begin(h))) {
                harness_error(h, "node %u refused view %llu", i, (unsigned long long)epoch);
            }
            harness_end(h, i);
        }
    }
}

void harness_hang(struct harness *h, uint32_t node)
{
    h->hung[node] = true;
    /* What it had queued stays with it until it resumes. */
    uint32_t kept = 0;
    struct harness_frame f;
    struct harness_frame *rest = checked_calloc(h->heap_count + 1u, sizeof *rest);
    while (h->heap_count > 0) {
        heap_pop(h, &f);
        if (f.source == node) {
            hold(h, &f);
        } else {
            rest[kept++] = f;
        }
    }
    for (uint32_t i = 0; i < kept; i++) {
        heap_push(h, &rest[i]);
    }
    free(rest);
}

void harness_resume(struct harness *h, uint32_t node)
{
    h->hung[node] = false;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < h->held_count; i++) {
        struct harness_frame f = h->held[i];
        if (f.source == node || f.destination == node) {
            if (!h->hung[f.source] && !h->hung[f.destination]) {
                f.deliver_ns = h->now_ns + random_delay(h);
                heap_push(h, &f);
                continue;
            }
        }
        h->held[kept++] = f;
    }
    h->held_count = kept;
}

/* When the next frame is delivered or timer runs (COMM_NEVER: nothing left). */
static uint64_t next_event(const struct harness *h)
{
    uint64_t next = COMM_NEVER;
    if (h->heap_count > 0) {
        next = h->heap[0].deliver_ns;
    }
    for (uint32_t i = 0; i < h->n; i++) {
        if (h->hung[i]) {
            continue;
        }
        uint64_t d = comm_next_deadline(&h->nodes[i]);
        if (d < next) {
            next = d;
        }
    }
    return next;
}

bool harness_step(struct harness *h)
{
    uint64_t next = next_event(h);
    if (next == COMM_NEVER) {
        return false;
    }
    if (next > h->now_ns) {
        h->now_ns = next;
    }
    if (h->heap_count > 0 && h->heap[0].deliver_ns <= h->now_ns) {
        struct harness_frame f;
        heap_pop(h, &f);
        if (h->hung[f.destination]) {
            hold(h, &f);
            return true;
        }
        h->delivered++;
        comm_receive(&h->nodes[f.destination], f.source, f.epoch, f.payload, f.length, h->now_ns,
                     harness_begin(h));
        harness_end(h, f.destination);
        return true;
    }
    for (uint32_t i = 0; i < h->n; i++) {
        if (!h->hung[i] && comm_next_deadline(&h->nodes[i]) <= h->now_ns) {
            comm_tick(&h->nodes[i], h->now_ns, harness_begin(h));
            harness_end(h, i);
        }
    }
    return true;
}

bool harness_run(struct harness *h, bool (*done)(struct harness *h, void *arg), void *arg,
                 uint64_t limit_ns)
{
    uint64_t end = h->now_ns + limit_ns;
    uint64_t last_now = h->now_ns;
    uint32_t same_time_steps = 0;
    while (!done(h, arg)) {
        if (h->now_ns > end || !harness_step(h)) {
            return done(h, arg);
        }
        if (h->now_ns == last_now) {
            /* A core whose deadline never moves would spin here forever. */
            if (++same_time_steps > 1000000u) {
                harness_error(h, "virtual time stuck at %llu ns", (unsigned long long)h->now_ns);
                return false;
            }
        } else {
            last_now = h->now_ns;
            same_time_steps = 0;
        }
    }
    return true;
}

static bool never(struct harness *h, void *arg)
{
    (void)h;
    (void)arg;
    return false;
}

void harness_run_for(struct harness *h, uint64_t duration_ns)
{
    uint64_t end = h->now_ns + duration_ns;
    harness_run(h, never, NULL, duration_ns);
    if (h->now_ns < end) {
        h->now_ns = end;
    }
}

void harness_run_until(struct harness *h, uint64_t duration_ns)
{
    uint64_t end = h->now_ns + duration_ns;
    while (next_event(h) <= end && harness_step(h)) {
    }
    h->now_ns = end;
}

void harness_requests_clear(struct harness_requests *r)
{
    r->count = 0;
}

void harness_requests_add(struct harness_requests *r, uint32_t node, uint32_t handle)
{
    if (r->count >= sizeof r->node / sizeof r->node[0]) {
        fprintf(stderr, "harness: too many requests in one test table\n");
        exit(2);
    }
    r->node[r->count] = node;
    r->handle[r->count] = handle;
    r->done[r->count] = false;
    r->count++;
}

bool harness_requests_poll(struct harness *h, struct harness_requests *r)
{
    bool all = true;
    for (uint32_t i = 0; i < r->count; i++) {
        if (!r->done[i]) {
            r->done[i] = comm_test(&h->nodes[r->node[i]], r->handle[i], &r->status[i]);
            all = all && r->done[i];
        }
    }
    return all;
}

static bool requests_done(struct harness *h, void *arg)
{
    return harness_requests_poll(h, arg);
}

bool harness_requests_wait(struct harness *h, struct harness_requests *r, uint64_t limit_ns)
{
    return harness_run(h, requests_done, r, limit_ns);
}
