/*
 * The comm outbox: what one call into the comm core produced.  Caller
 * provided and bounded: frames (destination node, the view epoch for the
 * torus header, payload packed in one byte arena), completions of
 * application requests and events.  The core writes a data frame only when
 * there is room for it (what does not fit waits in the core for the next
 * call); a control frame, completion or event that does not fit is counted
 * (the protocol's timers send control frames again; a request's completion
 * stays readable with comm_test).  The caller drains it after each call and
 * clears it.
 */
#ifndef COMM_OUTBOX_H
#define COMM_OUTBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "comm/codec.h"
#include "config/tori_config.h"

#define COMM_OUTBOX_BYTES (CONFIG_COMM_OUTBOX_FRAMES * COMM_MAX_PAYLOAD)
#define COMM_OUTBOX_COMPLETIONS 64
#define COMM_OUTBOX_EVENTS 32

enum comm_event_type {
    /* A peer did not answer within suspect_ns: the node glue calls
     * membership_suspect(node), which probes it and decides. */
    COMM_EVENT_SUSPECT = 1,
    /* A view change removed members of a communicator (state DETECTED). */
    COMM_EVENT_DETECTED,
    /* A peer came back with another incarnation: what was pending with its
     * old life failed. */
    COMM_EVENT_PEER_RESTARTED,
    /* A communicator in ABORT mode turned DETECTED (comm, epoch): the node
     * glue ends the job (app-abort).  Once per communicator. */
    COMM_EVENT_ABORT,
    /* A communicator was revoked (comm; node: the revoking rank). */
    COMM_EVENT_REVOKED,
};

struct comm_event {
    uint8_t type; /* enum comm_event_type */
    uint64_t t_ns;
    uint32_t node;   /* SUSPECT, PEER_RESTARTED; REVOKED: the revoking rank */
    uint32_t comm;   /* DETECTED, ABORT, REVOKED: the handle */
    uint32_t count;  /* DETECTED: members out of the view */
    uint64_t epoch;  /* the view epoch when it happened */
};

struct comm_completion {
    uint32_t request;
    uint8_t error; /* enum comm_error */
};

struct comm_outgoing {
    uint32_t destination; /* node id */
    uint64_t epoch;       /* for the torus header's epoch field */
    uint32_t offset;      /* into bytes[] */
    uint32_t length;
};

struct comm_outbox {
    struct comm_outgoing frames[CONFIG_COMM_OUTBOX_FRAMES];
    uint32_t frame_count;
    uint32_t bytes_used;
    uint8_t bytes[COMM_OUTBOX_BYTES];
    struct comm_completion completions[COMM_OUTBOX_COMPLETIONS];
    uint32_t completion_count;
    struct comm_event events[COMM_OUTBOX_EVENTS];
    uint32_t event_count;
    uint32_t dropped_frames; /* control frames that did not fit */
    uint32_t dropped_completions;
    uint32_t dropped_events;
};

void comm_outbox_clear(struct comm_outbox *out);

/* Payload of frame i (i < frame_count). */
const uint8_t *comm_outbox_payload(const struct comm_outbox *out, uint32_t i);

/* True when one more frame of any size fits. */
bool comm_outbox_has_room(const struct comm_outbox *out);

/* Encodes frame for destination; false (counted) when it does not fit. */
bool comm_outbox_put(struct comm_outbox *out, uint32_t destination, uint64_t epoch,
                     const struct comm_frame *frame);

void comm_outbox_complete(struct comm_outbox *out, uint32_t request, uint8_t error);

/* Appends an event (counted drop when full); returns the slot or NULL. */
struct comm_event *comm_outbox_event(struct comm_outbox *out, uint8_t type, uint64_t t_ns);

const char *comm_event_name(uint8_t type);

#endif /* COMM_OUTBOX_H */
