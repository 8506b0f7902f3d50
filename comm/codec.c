/*
 * Comm wire format (see codec.h).  One validation, used by decode after
 * parsing and by encode before writing, so nothing is encoded that a
 * receiver would refuse.
 */
#include "comm/codec.h"

#include "lib/le.h"

#include <string.h>

_Static_assert(COMM_FRAGMENT_BYTES >= 64, "frames too small for comm fragments");
_Static_assert(COMM_KIND_LIMIT <= 256, "kind must fit one byte");

static const char *const decode_status_texts[] = {
#define COMM_DECODE_TEXT(name, text) text,
    COMM_DECODE_STATUSES(COMM_DECODE_TEXT)
#undef COMM_DECODE_TEXT
};

const char *comm_decode_status_text(enum comm_decode_status status)
{
    if ((unsigned)status >= COMM_DECODE_STATUS_COUNT) {
        return "?";
    }
    return decode_status_texts[status];
}

const char *comm_kind_name(unsigned kind)
{
    switch (kind) {
#define COMM_KIND_NAME(name, value, text, body)                                          \
    case value:                                                                          \
        return text;
        COMM_KINDS(COMM_KIND_NAME)
#undef COMM_KIND_NAME
    default:
        return "?";
    }
}

/* Fixed body bytes of a kind (DATA: before its bytes); 0 for unknown kinds. */
static uint32_t body_size(unsigned kind)
{
    switch (kind) {
#define COMM_KIND_BODY(name, value, text, body)                                          \
    case value:                                                                          \
        return body;
        COMM_KINDS(COMM_KIND_BODY)
#undef COMM_KIND_BODY
    default:
        return 0;
    }
}

static uint8_t allowed_flags(unsigned kind)
{
    if (kind == COMM_KIND_DATA) {
        return COMM_FLAG_FIRST | COMM_FLAG_ACK | COMM_FLAG_SKIP | COMM_FLAG_RESEND |
               COMM_FLAG_ACK_NOW;
    }
    if (kind == COMM_KIND_CLOSE) {
        return COMM_FLAG_UNKNOWN;
    }
    if (kind == COMM_KIND_REVOKE) {
        return COMM_FLAG_REVOKE_ACK;
    }
    return 0;
}

/* The fragment bytes a DATA frame at offset of a total-byte message holds. */
static uint32_t fragment_length(uint32_t offset, uint32_t total)
{
    uint32_t left = total - offset;
    return left < COMM_FRAGMENT_BYTES ? left : COMM_FRAGMENT_BYTES;
}

static enum comm_decode_status validate_data(const struct comm_frame *f)
{
    if (f->total > CONFIG_COMM_MAX_MESSAGE) {
        return COMM_DECODE_TOTAL;
    }
    if (f->offset % COMM_FRAGMENT_BYTES != 0 || (f->offset >= f->total && f->offset != 0)) {
        return COMM_DECODE_OFFSET;
    }
    bool first = (f->flags & COMM_FLAG_FIRST) != 0;
    bool skip = (f->flags & COMM_FLAG_SKIP) != 0;
    if (skip && (first || f->data_length != 0)) {
        return COMM_DECODE_SKIP;
    }
    if (!skip && f->data_length != fragment_length(f->offset, f->total)) {
        return COMM_DECODE_LENGTH;
    }
    if (first != (f->offset == 0)) {
        return COMM_DECODE_ENVELOPE;
    }
    if ((f->flags & COMM_FLAG_RESEND) != 0 ? !first : f->resend_of != 0) {
        return COMM_DECODE_RESEND;
    }
    if (!first && (f->context != 0 || f->context_gen != 0 || f->source_rank != 0 || f->tag != 0)) {
        return COMM_DECODE_ENVELOPE;
    }
    if ((f->context & ~COMM_CONTEXT_KNOWN_BITS) != 0) {
        return COMM_DECODE_CONTEXT;
    }
    if (first && (f->context & COMM_CONTEXT_INTERNAL) == 0 && f->tag > COMM_TAG_MAX) {
        return COMM_DECODE_TAG;
    }
    if ((f->flags & COMM_FLAG_ACK) != 0) {
        if (f->ack_sid == 0) {
            return COMM_DECODE_ACK_FIELDS;
        }
    } else if (f->ack_sid != 0 || f->ack_cum != 0 || f->ack_mask != 0 || f->ack_deferred != 0) {
        return COMM_DECODE_ACK_FIELDS;
    }
    return COMM_DECODE_OK;
}

static enum comm_decode_status validate(const struct comm_frame *f)
{
    unsigned kind = f->kind;
    if (kind == 0 || kind >= COMM_KIND_LIMIT) {
        return COMM_DECODE_KIND;
    }
    if ((f->flags & ~allowed_flags(kind)) != 0) {
        return COMM_DECODE_FLAGS;
    }
    if (f->sender_incarnation == 0 || (f->receiver_incarnation == 0 && kind != COMM_KIND_OPEN &&
                                       kind != COMM_KIND_REVOKE)) {
        return COMM_DECODE_INCARNATION;
    }
    if (kind == COMM_KIND_REVOKE) {
        /* sessionless: a revoke flooded to members we may never have met */
        return f->context < COMM_CONTEXT_IDS ? COMM_DECODE_OK : COMM_DECODE_CONTEXT;
    }
    if (f->session == 0 || (kind == COMM_KIND_ACCEPT && f->token == 0)) {
        return COMM_DECODE_SESSION;
    }
    if (kind == COMM_KIND_DATA) {
        return validate_data(f);
    }
    return COMM_DECODE_OK;
}

enum comm_decode_status comm_decode(const uint8_t *payload, size_t length,
                                    struct comm_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    if (payload == NULL || length < COMM_HEADER_SIZE) {
        return COMM_DECODE_SHORT;
    }
    if (payload[0] != COMM_WIRE_VERSION) {
        return COMM_DECODE_VERSION;
    }
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = payload[1];
    f.flags = payload[2];
    f.sender_incarnation = le_get_u32(payload + 4);
    f.receiver_incarnation = le_get_u32(payload + 8);
    uint32_t body = body_size(f.kind);
    if (body == 0) {
        return COMM_DECODE_KIND;
    }
    if (payload[3] != 0) {
        return COMM_DECODE_RESERVED;
    }
    size_t rest = length - COMM_HEADER_SIZE;
    if (rest < body) {
        return COMM_DECODE_SHORT;
    }
    if (f.kind != COMM_KIND_DATA && rest > body) {
        return COMM_DECODE_TOO_LONG;
    }
    const uint8_t *b = payload + COMM_HEADER_SIZE;
    f.session = le_get_u32(b);
    switch (f.kind) {
    case COMM_KIND_REVOKE:
        f.session = 0;
        if (le_get_u16(b) >= COMM_CONTEXT_IDS) {
            return COMM_DECODE_CONTEXT;
        }
        f.context = le_get_u16(b);
        f.context_gen = le_get_u16(b + 2);
        f.source_rank = le_get_u32(b + 4);
        f.seq = le_get_u32(b + 8);
        break;
    case COMM_KIND_ACCEPT:
        f.token = le_get_u32(b + 4);
        break;
    case COMM_KIND_ACK:
        f.seq = le_get_u32(b + 4);
        f.mask = le_get_u32(b + 8);
        f.deferred = le_get_u32(b + 12);
        break;
    case COMM_KIND_WAIT:
    case COMM_KIND_GRANT:
    case COMM_KIND_CLOSE:
        f.seq = le_get_u32(b + 4);
        break;
    case COMM_KIND_DATA:
        f.seq = le_get_u32(b + 4);
        f.offset = le_get_u32(b + 8);
        f.total = le_get_u32(b + 12);
        f.context = le_get_u16(b + 16);
        f.context_gen = le_get_u16(b + 18);
        f.source_rank = le_get_u32(b + 20);
        f.tag = le_get_u32(b + 24);
        f.resend_of = le_get_u32(b + 28);
        f.ack_sid = le_get_u32(b + 32);
        f.ack_cum = le_get_u32(b + 36);
        f.ack_mask = le_get_u32(b + 40);
        f.ack_deferred = le_get_u32(b + 44);
        f.data = b + COMM_DATA_FIXED;
        f.data_length = (uint32_t)(rest - COMM_DATA_FIXED);
        if (f.data_length == 0) {
            f.data = NULL;
        }
        break;
    default:
        break;
    }
    enum comm_decode_status status = validate(&f);
    if (status == COMM_DECODE_OK) {
        *frame = f;
    }
    return status;
}

size_t comm_encode(const struct comm_frame *frame, uint8_t *out, size_t capacity)
{
    if (validate(frame) != COMM_DECODE_OK ||
        (frame->kind == COMM_KIND_DATA && frame->data_length > 0 && frame->data == NULL)) {
        return 0;
    }
    uint32_t body = body_size(frame->kind);
    size_t length = COMM_HEADER_SIZE + body +
                    (frame->kind == COMM_KIND_DATA ? frame->data_length : 0u);
    if (out == NULL || capacity < length || length > COMM_MAX_PAYLOAD) {
        return 0;
    }
    memset(out, 0, COMM_HEADER_SIZE + body);
    out[0] = COMM_WIRE_VERSION;
    out[1] = frame->kind;
    out[2] = frame->flags;
    le_put_u32(out + 4, frame->sender_incarnation);
    le_put_u32(out + 8, frame->receiver_incarnation);
    uint8_t *b = out + COMM_HEADER_SIZE;
    le_put_u32(b, frame->session);
    switch (frame->kind) {
    case COMM_KIND_REVOKE:
        le_put_u16(b, frame->context);
        le_put_u16(b + 2, frame->context_gen);
        le_put_u32(b + 4, frame->source_rank);
        le_put_u32(b + 8, frame->seq);
        break;
    case COMM_KIND_ACCEPT:
        le_put_u32(b + 4, frame->token);
        break;
    case COMM_KIND_ACK:
        le_put_u32(b + 4, frame->seq);
        le_put_u32(b + 8, frame->mask);
        le_put_u32(b + 12, frame->deferred);
        break;
    case COMM_KIND_WAIT:
    case COMM_KIND_GRANT:
    case COMM_KIND_CLOSE:
        le_put_u32(b + 4, frame->seq);
        break;
    case COMM_KIND_DATA:
        le_put_u32(b + 4, frame->seq);
        le_put_u32(b + 8, frame->offset);
        le_put_u32(b + 12, frame->total);
        le_put_u16(b + 16, frame->context);
        le_put_u16(b + 18, frame->context_gen);
        le_put_u32(b + 20, frame->source_rank);
        le_put_u32(b + 24, frame->tag);
        le_put_u32(b + 28, frame->resend_of);
        le_put_u32(b + 32, frame->ack_sid);
        le_put_u32(b + 36, frame->ack_cum);
        le_put_u32(b + 40, frame->ack_mask);
        le_put_u32(b + 44, frame->ack_deferred);
        if (frame->data_length > 0) {
            memcpy(b + COMM_DATA_FIXED, frame->data, frame->data_length);
        }
        break;
    default:
        break;
    }
    return length;
}
