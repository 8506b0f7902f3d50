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
        size_t parent = (i - 1) / 2;
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
    struct sim_event last = q->items[--q->count];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= q->count) {
            break;
        }
        if (child + 1 < q->count && earlier(&q->items[child + 1], &q->items[child])) {
            child++;
        }
        if (!earlier(&q->items[child], &last)) {
            break;
        }
        q->items[i] = q->items[child];
        i = child;
    }
    if (q->count > 0) {
        q->items[i] = last;
    }
    return true;
}
