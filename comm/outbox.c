/*
 * Bounded comm outbox (see outbox.h).
 */
#include "comm/outbox.h"

#include <string.h>

void comm_outbox_clear(struct comm_outbox *out)
{
    out->frame_count = 0;
    out->bytes_used = 0;
    out->completion_count = 0;
    out->event_count = 0;
    out->dropped_frames = 0;
    out->dropped_completions = 0;
    out->dropped_events = 0;
}

const uint8_t *comm_outbox_payload(const struct comm_outbox *out, uint32_t i)
{
    return out->bytes + out->frames[i].offset;
}

bool comm_outbox_has_room(const struct comm_outbox *out)
{
    return out->frame_count < CONFIG_COMM_OUTBOX_FRAMES &&
           COMM_OUTBOX_BYTES - out->bytes_used >= COMM_MAX_PAYLOAD;
}

bool comm_outbox_put(struct comm_outbox *out, uint32_t destination, uint64_t epoch,
                     const struct comm_frame *frame)
{
    size_t length = 0;
    if (out->frame_count < CONFIG_COMM_OUTBOX_FRAMES) {
        length = comm_encode(frame, out->bytes + out->bytes_used,
                             COMM_OUTBOX_BYTES - out->bytes_used);
    }
    if (length == 0) {
        out->dropped_frames++;
        return false;
    }
    struct comm_outgoing *f = &out->frames[out->frame_count++];
    f->destination = destination;
    f->epoch = epoch;
    f->offset = out->bytes_used;
    f->length = (uint32_t)length;
    out->bytes_used += (uint32_t)length;
    return true;
}

void comm_outbox_complete(struct comm_outbox *out, uint32_t request, uint8_t error)
{
    if (out->completion_count >= COMM_OUTBOX_COMPLETIONS) {
        out->dropped_completions++;
        return;
    }
    struct comm_completion *c = &out->completions[out->completion_count++];
    c->request = request;
    c->error = error;
}

struct comm_event *comm_outbox_event(struct comm_outbox *out, uint8_t type, uint64_t t_ns)
{
    if (out->event_count >= COMM_OUTBOX_EVENTS) {
        out->dropped_events++;
        return NULL;
    }
    struct comm_event *e = &out->events[out->event_count++];
    memset(e, 0, sizeof *e);
    e->type = type;
    e->t_ns = t_ns;
    return e;
}

const char *comm_event_name(uint8_t type)
{
    switch (type) {
    case COMM_EVENT_SUSPECT:
        return "comm-suspect";
    case COMM_EVENT_DETECTED:
        return "comm-detected";
    case COMM_EVENT_PEER_RESTARTED:
        return "comm-peer-restarted";
    case COMM_EVENT_ABORT:
        return "comm-abort";
    case COMM_EVENT_REVOKED:
        return "comm-revoked";
    default:
        return "?";
    }
}
