/*
 * Membership wire format (see codec.h).  Body layouts, after the header:
 *
 *   report      detector u32, sequence u32, failed_root u32, count u16,
 *               flags u8, model u8 (enum fault_model), then count ids (u32)
 *   report ack  sequence u32
 *   change      base_epoch u64, flags u8, reserved u8, failed u16, joined u16,
 *               reserved u16, live_after u32, root_after u32, digest u64,
 *               then failed ids (u32), then joined (id u32, incarnation u32),
 *               then, flag DECIDED, per failed id its model u8 and action u8
 *   ack         epoch u64 (the view acked), messages u32, reached u32, flags u8,
 *               reserved u8 x3
 *   join        config_digest u32, flags u8, reserved u8 x3
 *   redirect    root u32 (UINT32_MAX: the contact holds no view either)
 *   refused     reason u8, reserved u8 x3
 *   join ack    joiner_incarnation u32
 *   view req    from_pos u32
 *   view chunk  config_digest u32, encoding u8, flags u8, count u16,
 *               from_pos u32, to_pos u32, live u32, digest u64,
 *               ref_count u32, ref_removed u32, ref_root u32,
 *               then count intervals (start u32, length u32) or count bytes
 *   partitioned as change (base = the epoch given up, failed = the lost ones)
 *   relay       origin u32, target u32, flags u8, reserved u8, inner_length u16,
 *               then the inner message (a whole message of origin's, no relay)
 *   refuted     peer u32, relay u32
 *   others      empty
 */
#include "membership/codec.h"
#include "lib/le.h"

#include <string.h>

static const char *const decode_status_texts[] = {
#define MEMBERSHIP_DECODE_TEXT(name, text) text,
    MEMBERSHIP_DECODE_STATUSES(MEMBERSHIP_DECODE_TEXT)
#undef MEMBERSHIP_DECODE_TEXT
};

const char *membership_decode_status_text(enum membership_decode_status status)
{
    if ((unsigned)status >= MEMBERSHIP_DECODE_STATUS_COUNT) {
        return "?";
    }
    return decode_status_texts[status];
}

const char *membership_msg_type_name(unsigned type)
{
    switch (type) {
#define MEMBERSHIP_MSG_NAME(name, value, text)                                     \
    case value:                                                                    \
        return text;
        MEMBERSHIP_MSG_TYPES(MEMBERSHIP_MSG_NAME)
#undef MEMBERSHIP_MSG_NAME
    default:
        return "?";
    }
}

bool membership_msg_is_change(unsigned type)
{
    return type == MEMBERSHIP_MSG_FAILED_NODE || type == MEMBERSHIP_MSG_ROOT_DEAD ||
           type == MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE || type == MEMBERSHIP_MSG_NEW_NODE_JOIN ||
           type == MEMBERSHIP_MSG_ALIVE_NODE_JOIN;
}

void membership_writer_init(struct membership_writer *w, uint8_t *buffer, size_t capacity)
{
    w->buffer = buffer;
    w->capacity = capacity;
    w->length = 0;
    w->overflow = false;
}

static void put_bytes(struct membership_writer *w, uint64_t value, unsigned count)
{
    if (w->overflow || w->capacity - w->length < count) {
        w->overflow = true;
        return;
    }
    for (unsigned i = 0; i < count; i++) {
        w->buffer[w->length++] = (uint8_t)(value >> (8u * i));
    }
}

void membership_put_u8(struct membership_writer *w, uint8_t value)
{
    put_bytes(w, value, 1);
}
void membership_put_u16(struct membership_writer *w, uint16_t value)
{
    put_bytes(w, value, 2);
}
void membership_put_u32(struct membership_writer *w, uint32_t value)
{
    put_bytes(w, value, 4);
}
void membership_put_u64(struct membership_writer *w, uint64_t value)
{
    put_bytes(w, value, 8);
}

void membership_put_header(struct membership_writer *w, const struct membership_header *h)
{
    membership_put_u8(w, MEMBERSHIP_WIRE_VERSION);
    membership_put_u8(w, h->type);
    membership_put_u8(w, h->flags);
    membership_put_u8(w, 0);
    membership_put_u32(w, h->sender);
    membership_put_u32(w, h->incarnation);
    membership_put_u64(w, h->epoch);
    membership_put_u64(w, h->stable_epoch);
}

void membership_patch_sender(uint8_t *payload, size_t length, uint32_t sender,
                             uint32_t incarnation)
{
    if (length < MEMBERSHIP_HEADER_SIZE) {
        return;
    }
    for (unsigned i = 0; i < 4; i++) {
        payload[4 + i] = (uint8_t)(sender >> (8u * i));
        payload[8 + i] = (uint8_t)(incarnation >> (8u * i));
    }
}

uint32_t membership_msg_report_id(const struct membership_msg *msg, uint32_t index)
{
    return le_get_u32(msg->list + 4u * index);
}

uint32_t membership_msg_failed_id(const struct membership_msg *msg, uint32_t index)
{
    return le_get_u32(msg->list + 4u * index);
}

void membership_msg_joined(const struct membership_msg *msg, uint32_t index, uint32_t *id,
                           uint32_t *incarnation)
{
    const uint8_t *p = msg->list + 4u * msg->body.change.failed_count + 8u * index;
    *id = le_get_u32(p);
    *incarnation = le_get_u32(p + 4);
}

void membership_msg_decision(const struct membership_msg *msg, uint32_t index, uint8_t *model,
                             uint8_t *action)
{
    const uint8_t *p = msg->list + 4u * msg->body.change.failed_count +
                       8u * msg->body.change.joined_count + 2u * index;
    *model = p[0];
    *action = p[1];
}

void membership_msg_interval(const struct membership_msg *msg, uint32_t index,
                             uint32_t *start, uint32_t *length)
{
    *start = le_get_u32(msg->list + 8u * index);
    *length = le_get_u32(msg->list + 8u * index + 4u);
}

/* Exact-length check for a body of fixed + list bytes. */
static enum membership_decode_status check_length(size_t body, size_t needed)
{
    if (body < needed) {
        return MEMBERSHIP_DECODE_SHORT;
    }
    if (body > needed) {
        return MEMBERSHIP_DECODE_TOO_LONG;
    }
    return MEMBERSHIP_DECODE_OK;
}

static enum membership_decode_status decode_report(const uint8_t *b, size_t body,
                                                   uint32_t node_count,
                                                   struct membership_msg *msg)
{
    if (body < MEMBERSHIP_REPORT_FIXED) {
        return MEMBERSHIP_DECODE_SHORT;
    }
    struct membership_body_report *r = &msg->body.report;
    r->detector = le_get_u32(b);
    r->sequence = le_get_u32(b + 4);
    r->failed_root = le_get_u32(b + 8);
    r->count = le_get_u16(b + 12);
    r->flags = b[14];
    r->model = b[15];
    if ((r->flags & ~MEMBERSHIP_REPORT_PREFIX) != 0 || r->model >= FAULT_MODEL_LIMIT) {
        return MEMBERSHIP_DECODE_RESERVED;
    }
    if (r->count > MEMBERSHIP_MAX_REPORT_IDS) {
        return MEMBERSHIP_DECODE_BAD_COUNT;
    }
    enum membership_decode_status s = check_length(body, MEMBERSHIP_REPORT_FIXED + 4u * r->count);
    if (s != MEMBERSHIP_DECODE_OK) {
        return s;
    }
    if (r->detector >= node_count ||
        (r->failed_root != UINT32_MAX && r->failed_root >= node_count)) {
        return MEMBERSHIP_DECODE_BAD_ID;
    }
    msg->list = b + MEMBERSHIP_REPORT_FIXED;
    for (uint32_t i = 0; i < r->count; i++) {
        if (membership_msg_report_id(msg, i) >= node_count) {
            return MEMBERSHIP_DECODE_BAD_ID;
        }
    }
    return MEMBERSHIP_DECODE_OK;
}

static enum membership_decode_status decode_change(const uint8_t *b, size_t body,
                                                   uint32_t node_count,
                                                   struct membership_msg *msg)
{
    if (body < MEMBERSHIP_CHANGE_FIXED) {
        return MEMBERSHIP_DECODE_SHORT;
    }
    struct membership_body_change *c = &msg->body.change;
    c->base_epoch = le_get_u64(b);
    c->flags = b[8];
    c->failed_count = le_get_u16(b + 10);
    c->joined_count = le_get_u16(b + 12);
    c->live_after = le_get_u32(b + 16);
    c->root_after = le_get_u32(b + 20);
    c->digest_after = le_get_u64(b + 24);
    if (b[9] != 0 || le_get_u16(b + 14) != 0 ||
        (c->flags & ~(MEMBERSHIP_CHANGE_BASE_STABLE | MEMBERSHIP_CHANGE_DIRECT |
                      MEMBERSHIP_CHANGE_DECIDED | MEMBERSHIP_CHANGE_SINCE_STABLE)) != 0) {
        return MEMBERSHIP_DECODE_RESERVED;
    }
    bool decided = (c->flags & MEMBERSHIP_CHANGE_DECIDED) != 0;
    if (c->failed_count > MEMBERSHIP_MAX_CHANGE_FAILED ||
        c->joined_count > MEMBERSHIP_MAX_CHANGE_JOINED ||
        !(decided ? MEMBERSHIP_CHANGE_FITS_DECIDED(c->failed_count, c->joined_count)
                  : MEMBERSHIP_CHANGE_FITS(c->failed_count, c->joined_count))) {
        return MEMBERSHIP_DECODE_BAD_COUNT;
    }
    enum membership_decode_status s =
        check_length(body, MEMBERSHIP_CHANGE_FIXED + (decided ? 6u : 4u) * c->failed_count +
                               8u * c->joined_count);
    if (s != MEMBERSHIP_DECODE_OK) {
        return s;
    }
    if (c->live_after > node_count || c->live_after == 0 || c->root_after >= node_count) {
        return MEMBERSHIP_DECODE_BAD_ID;
    }
    msg->list = b + MEMBERSHIP_CHANGE_FIXED;
    for (uint32_t i = 0; i < c->failed_count; i++) {
        if (membership_msg_failed_id(msg, i) >= node_count) {
            return MEMBERSHIP_DECODE_BAD_ID;
        }
    }
    for (uint32_t i = 0; i < c->joined_count; i++) {
        uint32_t id;
        uint32_t inc;
        membership_msg_joined(msg, i, &id, &inc);
        if (id >= node_count) {
            return MEMBERSHIP_DECODE_BAD_ID;
        }
    }
    for (uint32_t i = 0; decided && i < c->failed_count; i++) {
        uint8_t model;
        uint8_t action;
        membership_msg_decision(msg, i, &model, &action);
        if (model == FAULT_MODEL_NONE || model >= FAULT_MODEL_LIMIT ||
            (action & ~MEMBERSHIP_DECISION_FLAGS) >= RECOVERY_ACTION_LIMIT) {
            return MEMBERSHIP_DECODE_RESERVED;
        }
    }
    return MEMBERSHIP_DECODE_OK;
}

static enum membership_decode_status decode_chunk(const uint8_t *b, size_t body,
                                                  uint32_t node_count,
                                                  struct membership_msg *msg)
{
    if (body < MEMBERSHIP_CHUNK_FIXED) {
        return MEMBERSHIP_DECODE_SHORT;
    }
    struct membership_body_view_chunk *c = &msg->body.chunk;
    c->config_digest = le_get_u32(b);
    c->encoding = b[4];
    c->flags = b[5];
    c->count = le_get_u16(b + 6);
    c->from_pos = le_get_u32(b + 8);
    c->to_pos = le_get_u32(b + 12);
    c->live = le_get_u32(b + 16);
    c->digest = le_get_u64(b + 20);
    c->ref_count = le_get_u32(b + 28);
    c->ref_removed = le_get_u32(b + 32);
    c->ref_root = le_get_u32(b + 36);
    if ((c->flags & ~MEMBERSHIP_CHUNK_FINAL) != 0 ||
        (c->encoding != MEMBERSHIP_CHUNK_INTERVALS && c->encoding != MEMBERSHIP_CHUNK_BITS)) {
        return MEMBERSHIP_DECODE_RESERVED;
    }
    size_t unit = c->encoding == MEMBERSHIP_CHUNK_BITS ? 1u : 8u;
    if ((size_t)c->count * unit > MEMBERSHIP_CHUNK_MAX_DATA) {
        return MEMBERSHIP_DECODE_BAD_COUNT;
    }
    enum membership_decode_status s = check_length(body, MEMBERSHIP_CHUNK_FIXED + unit * c->count);
    if (s != MEMBERSHIP_DECODE_OK) {
        return s;
    }
    if (c->live > node_count || c->ref_count > node_count || c->ref_removed > node_count ||
        c->ref_root >= node_count) {
        return MEMBERSHIP_DECODE_BAD_ID;
    }
    if (c->from_pos >= c->to_pos || c->to_pos > node_count) {
        return MEMBERSHIP_DECODE_BAD_RANGE;
    }
    /* FINAL exactly at the end: after a chunk that is not final, the
     * receiver asks for the next one from its to_pos, which must be a
     * position (a request from the node count would not decode). */
    if (((c->flags & MEMBERSHIP_CHUNK_FINAL) != 0) != (c->to_pos == node_count)) {
        return MEMBERSHIP_DECODE_BAD_RANGE;
    }
    msg->list = b + MEMBERSHIP_CHUNK_FIXED;
    if (c->encoding == MEMBERSHIP_CHUNK_BITS) {
        uint64_t end = (uint64_t)c->from_pos + 8u * (uint64_t)c->count;
        if ((c->from_pos % 8u) != 0 || c->count == 0 ||
            (uint64_t)c->to_pos != (end < node_count ? end : node_count) ||
            (uint64_t)c->to_pos <= end - 8u) {
            return MEMBERSHIP_DECODE_BAD_RANGE;
        }
        return MEMBERSHIP_DECODE_OK;
    }
    uint64_t previous_end = c->from_pos;
    for (uint32_t i = 0; i < c->count; i++) {
        uint32_t start;
        uint32_t length;
        membership_msg_interval(msg, i, &start, &length);
        if (length == 0 || start < previous_end ||
            (uint64_t)start + length > (uint64_t)c->to_pos) {
            return MEMBERSHIP_DECODE_BAD_RANGE;
        }
        previous_end = (uint64_t)start + length;
    }
    return MEMBERSHIP_DECODE_OK;
}

/*
 * The envelope, and of the inner message what the relay needs: a header
 * of origin's, of a type that is no envelope (one hop, never a chain).
 * The receiver decodes the inner message whole before it handles it.
 */
static enum membership_decode_status decode_relay(const uint8_t *b, size_t body,
                                                  uint32_t node_count, struct membership_msg *msg)
{
    if (body < MEMBERSHIP_RELAY_FIXED) {
        return MEMBERSHIP_DECODE_SHORT;
    }
    struct membership_body_relay *r = &msg->body.relay;
    r->origin = le_get_u32(b);
    r->target = le_get_u32(b + 4);
    r->flags = b[8];
    r->inner_length = le_get_u16(b + 10);
    if ((r->flags & ~MEMBERSHIP_RELAY_FORWARDED) != 0 || b[9] != 0) {
        return MEMBERSHIP_DECODE_RESERVED;
    }
    enum membership_decode_status s = check_length(body, MEMBERSHIP_RELAY_FIXED + (size_t)r->inner_length);
    if (s != MEMBERSHIP_DECODE_OK) {
        return s;
    }
    if (r->origin >= node_count || r->target >= node_count || r->origin == r->target) {
        return MEMBERSHIP_DECODE_BAD_ID;
    }
    const uint8_t *inner = b + MEMBERSHIP_RELAY_FIXED;
    if (r->inner_length < MEMBERSHIP_HEADER_SIZE) {
        return MEMBERSHIP_DECODE_SHORT;
    }
    if (inner[0] != MEMBERSHIP_WIRE_VERSION) {
        return MEMBERSHIP_DECODE_VERSION;
    }
    if (inner[1] == 0 || inner[1] >= MEMBERSHIP_MSG_TYPE_LIMIT || inner[1] == MEMBERSHIP_MSG_RELAY) {
        return MEMBERSHIP_DECODE_TYPE;
    }
    if (le_get_u32(inner + 4) != r->origin) {
        return MEMBERSHIP_DECODE_BAD_ID;
    }
    msg->list = inner;
    return MEMBERSHIP_DECODE_OK;
}

static enum membership_decode_status decode_body(const uint8_t *b, size_t body,
                                                 uint32_t node_count,
                                                 struct membership_msg *msg)
{
    switch (msg->header.type) {
    case MEMBERSHIP_MSG_HEARTBEAT:
    case MEMBERSHIP_MSG_HOW_ARE_YOU:
    case MEMBERSHIP_MSG_I_AM_ALIVE:
    case MEMBERSHIP_MSG_VIEW_NOTICE:
        return check_length(body, 0);
    case MEMBERSHIP_MSG_NODE_FAILURE:
    case MEMBERSHIP_MSG_ROOT_FAILURE:
        return decode_report(b, body, node_count, msg);
    case MEMBERSHIP_MSG_FAILURE_DET_ACK: {
        enum membership_decode_status s = check_length(body, 4);
        msg->body.report_ack.sequence = s == MEMBERSHIP_DECODE_OK ? le_get_u32(b) : 0;
        return s;
    }
    case MEMBERSHIP_MSG_PARTITIONED: /* a change body: the minority's lost members */
    case MEMBERSHIP_MSG_FAILED_NODE:
    case MEMBERSHIP_MSG_ROOT_DEAD:
    case MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE:
    case MEMBERSHIP_MSG_NEW_NODE_JOIN:
    case MEMBERSHIP_MSG_ALIVE_NODE_JOIN:
        return decode_change(b, body, node_count, msg);
    case MEMBERSHIP_MSG_FAILURE_ACK:
    case MEMBERSHIP_MSG_JOIN_ACK: {
        enum membership_decode_status s = check_length(body, 20);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.ack.epoch = le_get_u64(b);
        msg->body.ack.messages = le_get_u32(b + 8);
        msg->body.ack.reached = le_get_u32(b + 12);
        msg->body.ack.flags = b[16];
        if ((b[16] & ~MEMBERSHIP_ACK_INCOMPLETE) != 0 || b[17] != 0 || b[18] != 0 || b[19] != 0) {
            return MEMBERSHIP_DECODE_RESERVED;
        }
        if (msg->body.ack.reached > node_count) {
            return MEMBERSHIP_DECODE_BAD_COUNT;
        }
        return MEMBERSHIP_DECODE_OK;
    }
    case MEMBERSHIP_MSG_NEW_NODE:
    case MEMBERSHIP_MSG_NODE_ALIVE: {
        enum membership_decode_status s = check_length(body, 8);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.join.config_digest = le_get_u32(b);
        msg->body.join.flags = b[4];
        if ((b[4] & ~MEMBERSHIP_JOIN_REJOIN) != 0 || b[5] != 0 || b[6] != 0 || b[7] != 0) {
            return MEMBERSHIP_DECODE_RESERVED;
        }
        return MEMBERSHIP_DECODE_OK;
    }
    case MEMBERSHIP_MSG_JOIN_REDIRECT: {
        enum membership_decode_status s = check_length(body, 4);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.redirect.root = le_get_u32(b);
        return msg->body.redirect.root < node_count || msg->body.redirect.root == UINT32_MAX
                   ? MEMBERSHIP_DECODE_OK
                   : MEMBERSHIP_DECODE_BAD_ID;
    }
    case MEMBERSHIP_MSG_JOIN_REFUSED: {
        enum membership_decode_status s = check_length(body, 4);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.refused.reason = b[0];
        if (b[0] != MEMBERSHIP_REFUSED_QUARANTINED || b[1] != 0 || b[2] != 0 || b[3] != 0) {
            return MEMBERSHIP_DECODE_RESERVED;
        }
        return MEMBERSHIP_DECODE_OK;
    }
    case MEMBERSHIP_MSG_JOIN_DET_ACK: {
        enum membership_decode_status s = check_length(body, 4);
        msg->body.join_ack.joiner_incarnation = s == MEMBERSHIP_DECODE_OK ? le_get_u32(b) : 0;
        return s;
    }
    case MEMBERSHIP_MSG_VIEW_REQUEST: {
        enum membership_decode_status s = check_length(body, 4);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.view_request.from_pos = le_get_u32(b);
        return msg->body.view_request.from_pos < node_count ? MEMBERSHIP_DECODE_OK
                                                            : MEMBERSHIP_DECODE_BAD_RANGE;
    }
    case MEMBERSHIP_MSG_VIEW_CHUNK:
        return decode_chunk(b, body, node_count, msg);
    case MEMBERSHIP_MSG_RELAY:
        return decode_relay(b, body, node_count, msg);
    case MEMBERSHIP_MSG_REFUTED: {
        enum membership_decode_status s = check_length(body, 8);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.refuted.peer = le_get_u32(b);
        msg->body.refuted.relay = le_get_u32(b + 4);
        return msg->body.refuted.peer < node_count && msg->body.refuted.relay < node_count
                   ? MEMBERSHIP_DECODE_OK
                   : MEMBERSHIP_DECODE_BAD_ID;
    }
    case MEMBERSHIP_MSG_REFORM: {
        enum membership_decode_status s = check_length(body, 8);
        if (s != MEMBERSHIP_DECODE_OK) {
            return s;
        }
        msg->body.reform.vote = le_get_u32(b);
        msg->body.reform.flags = b[4];
        if ((b[4] & ~MEMBERSHIP_REFORM_ANSWER) != 0 || b[5] != 0 || b[6] != 0 || b[7] != 0) {
            return MEMBERSHIP_DECODE_RESERVED;
        }
        return msg->body.reform.vote < node_count || msg->body.reform.vote == UINT32_MAX
                   ? MEMBERSHIP_DECODE_OK
                   : MEMBERSHIP_DECODE_BAD_ID;
    }
    default:
        return MEMBERSHIP_DECODE_TYPE;
    }
}

enum membership_decode_status membership_decode(const uint8_t *payload, size_t length,
                                                uint32_t node_count, struct membership_msg *msg)
{
    memset(msg, 0, sizeof *msg);
    enum membership_decode_status status = MEMBERSHIP_DECODE_OK;
    if (payload == NULL || length < MEMBERSHIP_HEADER_SIZE) {
        status = MEMBERSHIP_DECODE_SHORT;
    } else if (length > MEMBERSHIP_MAX_PAYLOAD) {
        status = MEMBERSHIP_DECODE_TOO_LONG;
    } else if (payload[0] != MEMBERSHIP_WIRE_VERSION) {
        status = MEMBERSHIP_DECODE_VERSION;
    } else if (payload[1] == 0 || payload[1] >= MEMBERSHIP_MSG_TYPE_LIMIT) {
        status = MEMBERSHIP_DECODE_TYPE;
    } else if ((payload[2] & ~MEMBERSHIP_FLAG_HAS_VIEW) != 0 || payload[3] != 0) {
        status = MEMBERSHIP_DECODE_RESERVED;
    } else {
        msg->header.type = payload[1];
        msg->header.flags = payload[2];
        msg->header.sender = le_get_u32(payload + 4);
        msg->header.incarnation = le_get_u32(payload + 8);
        msg->header.epoch = le_get_u64(payload + 12);
        msg->header.stable_epoch = le_get_u64(payload + 20);
        if (msg->header.sender >= node_count) {
            status = MEMBERSHIP_DECODE_BAD_ID;
        } else {
            status = decode_body(payload + MEMBERSHIP_HEADER_SIZE,
                                 length - MEMBERSHIP_HEADER_SIZE, node_count, msg);
        }
    }
    if (status != MEMBERSHIP_DECODE_OK) {
        memset(msg, 0, sizeof *msg);
    }
    return status;
}
