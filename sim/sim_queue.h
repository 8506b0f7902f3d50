/*
 * The simulator's event queue: a binary min-heap ordered by (time, sequence
 * number), so that events at the same virtual time run in the order they
 * were scheduled and every run is exactly reproducible.  Host tool: grows
 * with realloc.
 */
#ifndef SIM_SIM_QUEUE_H
#define SIM_SIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sim_event_kind {
    SIM_EVENT_DELIVER = 1, /* a message reaches its destination's inbox */
    SIM_EVENT_PROCESS,     /* a node handles the head of its inbox */
    SIM_EVENT_TICK,        /* a node's timers are due */
    SIM_EVENT_LINK,        /* the torus layer reports a link down/up */
    SIM_EVENT_INJECT,      /* a scripted fault */
    SIM_EVENT_RESUME,      /* a hung node runs again */
    SIM_EVENT_KILL,        /* a kill drawn while a rebuild is under way */
    SIM_EVENT_RELAUNCH,    /* the launcher restarts a node (a RESTART decision) */
    SIM_EVENT_ASK_REMOVAL, /* an application killed: its node asks to leave again */
    SIM_EVENT_ADVERT,      /* --routing table: a neighbour's advertisement arrives */
};

struct sim_message;

struct sim_event {
    uint64_t time_ns;
    uint64_t sequence;
    uint8_t kind;
    uint8_t flag;    /* LINK: 1 up, 0 down */
    uint32_t node;   /* the node it happens at */
    uint32_t other;  /* LINK: the neighbour; INJECT: injection index */
    struct sim_message *message;
};

struct sim_queue {
    struct sim_event *items;
    size_t count;
    size_t capacity;
    uint64_t next_sequence;
};

void sim_queue_init(struct sim_queue *q);
void sim_queue_free(struct sim_queue *q);
/* Adds an event (its sequence number is assigned here); false when out of memory. */
bool sim_queue_push(struct sim_queue *q, struct sim_event event);
/* Removes the earliest event into *event; false when empty. */
bool sim_queue_pop(struct sim_queue *q, struct sim_event *event);
uint64_t sim_queue_peek_time(const struct sim_queue *q);

#endif /* SIM_SIM_QUEUE_H */
