/*
 * Bounded outbox (see outbox.h).
 */
#include "membership/outbox.h"

#include <string.h>

void membership_outbox_clear(struct membership_outbox *out)
{
    out->message_count = 0;
    out->bytes_used = 0;
    out->event_count = 0;
    out->dropped_messages = 0;
    out->dropped_events = 0;
}

const uint8_t *membership_outbox_payload(const struct membership_outbox *out, uint32_t i)
{
    return out->bytes + out->messages[i].offset;
}

void membership_outbox_begin(struct membership_outbox *out, struct membership_writer *writer)
{
    size_t free_bytes = MEMBERSHIP_OUTBOX_BYTES - out->bytes_used;
    if (out->message_count >= MEMBERSHIP_OUTBOX_MESSAGES) {
        free_bytes = 0;
    }
    if (free_bytes > MEMBERSHIP_MAX_PAYLOAD) {
        free_bytes = MEMBERSHIP_MAX_PAYLOAD;
    }
    membership_writer_init(writer, out->bytes + out->bytes_used, free_bytes);
}

bool membership_outbox_commit(struct membership_outbox *out, uint32_t destination,
                              const struct membership_writer *writer)
{
    if (writer->overflow || out->message_count >= MEMBERSHIP_OUTBOX_MESSAGES) {
        out->dropped_messages++;
        return false;
    }
    struct membership_outgoing *m = &out->messages[out->message_count++];
    m->destination = destination;
    m->offset = (uint16_t)out->bytes_used;
    m->length = (uint16_t)writer->length;
    m->loss_tolerant = false;
    out->bytes_used += (uint32_t)writer->length;
    return true;
}

bool membership_outbox_prepend(struct membership_outbox *out, uint32_t i, const uint8_t *bytes,
                               size_t count)
{
    struct membership_outgoing *m = &out->messages[i];
    if (m->length + count > MEMBERSHIP_MAX_PAYLOAD ||
        out->bytes_used + count > MEMBERSHIP_OUTBOX_BYTES) {
        return false;
    }
    uint8_t *start = out->bytes + m->offset;
    memmove(start + count, start, out->bytes_used - m->offset);
    memcpy(start, bytes, count);
    m->length = (uint16_t)(m->length + count);
    for (uint32_t j = i + 1u; j < out->message_count; j++) {
        out->messages[j].offset = (uint16_t)(out->messages[j].offset + count);
    }
    out->bytes_used += (uint32_t)count;
    return true;
}

bool membership_outbox_copy(struct membership_outbox *out, uint32_t i, uint32_t destination)
{
    struct membership_writer w;
    membership_outbox_begin(out, &w);
    size_t length = out->messages[i].length;
    if (w.capacity < length) {
        w.overflow = true;
    } else {
        memcpy(w.buffer, membership_outbox_payload(out, i), length);
        w.length = length;
    }
    bool loss_tolerant = out->messages[i].loss_tolerant;
    if (!membership_outbox_commit(out, destination, &w))
        return false;
    out->messages[out->message_count - 1u].loss_tolerant = loss_tolerant;
    return true;
}

struct membership_event *membership_outbox_event(struct membership_outbox *out, uint8_t type,
                                                 uint64_t t_ns)
{
    if (out->event_count >= MEMBERSHIP_OUTBOX_EVENTS) {
        out->dropped_events++;
        return NULL;
    }
    struct membership_event *e = &out->events[out->event_count++];
    memset(e, 0, sizeof *e);
    e->type = type;
    e->t_ns = t_ns;
    return e;
}

const char *membership_event_name(uint8_t type)
{
    switch (type) {
#define MEMBERSHIP_EVENT_NAME(name, value, text)                                    \
    case value:                                                                    \
        return text;
        MEMBERSHIP_EVENT_TYPES(MEMBERSHIP_EVENT_NAME)
#undef MEMBERSHIP_EVENT_NAME
    default:
        return "?";
    }
}

const char *membership_refused_reason_name(uint8_t reason)
{
    return reason == MEMBERSHIP_REFUSED_QUARANTINED ? "quarantined" : "?";
}

const char *membership_cause_name(uint8_t cause)
{
    switch (cause) {
    case MEMBERSHIP_CAUSE_HEARTBEAT:
        return "heartbeat";
    case MEMBERSHIP_CAUSE_PROBE:
        return "probe";
    case MEMBERSHIP_CAUSE_ACK:
        return "ack";
    case MEMBERSHIP_CAUSE_REPORT:
        return "report";
    case MEMBERSHIP_CAUSE_APPLICATION:
        return "application";
    default:
        return "?";
    }
}
