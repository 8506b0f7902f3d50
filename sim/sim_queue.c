/*
 * Binary heap of simulator events (see sim_queue.h).
 */
#include "sim/sim_queue.h"

#include <stdlib.h>

static bool earlier(const struct sim_event *a, const struct sim_event *b)
{
    return a->time_ns < b->time_ns || (a->time_ns == b->time_ns && a->sequence < b->sequence);
}

void sim_queue_init(struct sim_queue *q)
{
    q->items = NULL;
    q->count = 0;
    q->capacity = 0;
    q->next_sequence = 0;
}

void sim_queue_free(struct sim_queue *q)
{
    free(q->items);
    sim_queue_init(q);
}

uint64_t sim_queue_peek_time(const struct sim_queue *q)
{
    return q->count == 0 ? UINT64_MAX : q->items[0].time_ns;
}

/* A 4-ary heap: half the levels of a binary one, and a parent's children
 * side by side in memory.  Events are strictly ordered by (time,
 * sequence), so the order they leave in is the same with any heap. */
#define ARITY 4u

bool sim_queue_push(struct sim_queue *q, struct sim_event event)
{
    if (q->count == q->capacity) {
        size_t capacity = q->capacity == 0 ? 1024 : q->capacity * 2;
        struct sim_event *items = realloc(q->items, capacity * sizeof *items);
        if (items == NULL) {
            return false;
        }
        q->items = items;
        q->capacity = capacity;
    }
    event.sequence = q->next_sequence++;
    size_t i = q->count++;
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!earlier(&event, &q->items[parent])) {
            break;
        }
        q->items[i] = q->items[parent];
        i = parent;
    }
    q->items[i] = event;
    return true;
}

bool sim_queue_pop(struct sim_queue *q, struct sim_event *event)
{
    if (q->count == 0) {
        return false;
    }
    *event = q->items[0];
    size_t count = --q->count;
    if (count == 0) {
        return true;
    }
    const struct sim_event last = q->items[count];
    struct sim_event *items = q->items;
    size_t i = 0;
    for (;;) {
        size_t first = ARITY * i + 1;
        if (first >= count) {
            break;
        }
        size_t best = first;
        size_t end = first + ARITY < count ? first + ARITY : count;
        for (size_t c = first + 1; c < end; c++) {
            if (earlier(&items[c], &items[best])) {
                best = c;
            }
        }
        if (!earlier(&items[best], &last)) {
            break;
        }
        items[i] = items[best];
        i = best;
    }
    items[i] = last;
    return true;
}
