/*
 * The wire codec: every message type round-trips; every truncation and
 * extension of a valid payload is refused; targeted corruptions are
 * refused with the right reason; random and bit-flipped payloads never
 * crash the decoder (nor the state machine fed with them) and are counted.
 */
#include <stdint.h>
#include <string.h>

#include "membership/codec.h"
#include "membership/membership.h"
#include "tests/check.h"

#define NODES 64u

static size_t header(uint8_t *buf, uint8_t type, struct membership_writer *w)
{
    struct membership_header h = {
        .type = type, .flags = MEMBERSHIP_FLAG_HAS_VIEW, .sender = 5, .incarnation = 7,
        .epoch = MEMBERSHIP_EPOCH(3, 1, 7), .stable_epoch = MEMBERSHIP_EPOCH(2, 1, 7),
    };
    membership_writer_init(w, buf, MEMBERSHIP_MAX_PAYLOAD);
    membership_put_header(w, &h);
    return w->length;
}

/* A valid example of each type; returns its length. */
static size_t build(uint8_t *buf, unsigned type)
{
    struct membership_writer w;
    header(buf, (uint8_t)type, &w);
    switch (type) {
    case MEMBERSHIP_MSG_NODE_FAILURE:
    case MEMBERSHIP_MSG_ROOT_FAILURE:
        membership_put_u32(&w, 9);  /* detector */
        membership_put_u32(&w, 42); /* sequence */
        membership_put_u32(&w, type == MEMBERSHIP_MSG_ROOT_FAILURE ? 0 : UINT32_MAX);
        membership_put_u16(&w, 3);
        membership_put_u16(&w, 0);
        membership_put_u32(&w, 11);
        membership_put_u32(&w, 12);
        membership_put_u32(&w, 63);
        break;
    case MEMBERSHIP_MSG_FAILURE_DET_ACK:
        membership_put_u32(&w, 42);
        break;
    case MEMBERSHIP_MSG_FAILED_NODE:
    case MEMBERSHIP_MSG_ROOT_DEAD:
    case MEMBERSHIP_MSG_ROOT_AND_NODE_FAILURE:
    case MEMBERSHIP_MSG_NEW_NODE_JOIN:
    case MEMBERSHIP_MSG_ALIVE_NODE_JOIN:
    case MEMBERSHIP_MSG_PARTITIONED:
        membership_put_u64(&w, MEMBERSHIP_EPOCH(2, 1, 7));
        membership_put_u8(&w, MEMBERSHIP_CHANGE_BASE_STABLE);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, 2); /* failed */
        membership_put_u16(&w, 1); /* joined */
        membership_put_u16(&w, 0);
        membership_put_u32(&w, 61);
        membership_put_u32(&w, 0);
        membership_put_u64(&w, 0x1234567890abcdefull);
        membership_put_u32(&w, 20);
        membership_put_u32(&w, 21);
        membership_put_u32(&w, 33);
        membership_put_u32(&w, 1025);
        break;
    case MEMBERSHIP_MSG_FAILURE_ACK:
    case MEMBERSHIP_MSG_JOIN_ACK:
        membership_put_u64(&w, MEMBERSHIP_EPOCH(3, 1, 7));
        membership_put_u32(&w, 17);
        membership_put_u32(&w, 9);
        membership_put_u8(&w, MEMBERSHIP_ACK_INCOMPLETE);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, 0);
        break;
    case MEMBERSHIP_MSG_NEW_NODE:
    case MEMBERSHIP_MSG_NODE_ALIVE:
        membership_put_u32(&w, 0xabcdef01u);
        membership_put_u8(&w, MEMBERSHIP_JOIN_REJOIN);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, 0);
        break;
    case MEMBERSHIP_MSG_JOIN_REDIRECT:
        membership_put_u32(&w, 3);
        break;
    case MEMBERSHIP_MSG_JOIN_REFUSED:
        membership_put_u8(&w, MEMBERSHIP_REFUSED_QUARANTINED);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, 0);
        break;
    case MEMBERSHIP_MSG_JOIN_DET_ACK:
        membership_put_u32(&w, 77);
        break;
    case MEMBERSHIP_MSG_VIEW_REQUEST:
        membership_put_u32(&w, 16);
        break;
    case MEMBERSHIP_MSG_VIEW_CHUNK:
        membership_put_u32(&w, 0xabcdef01u);
        membership_put_u8(&w, MEMBERSHIP_CHUNK_INTERVALS);
        membership_put_u8(&w, MEMBERSHIP_CHUNK_FINAL);
        membership_put_u16(&w, 2);
        membership_put_u32(&w, 8);      /* from */
        membership_put_u32(&w, NODES); /* to */
        membership_put_u32(&w, 30);
        membership_put_u64(&w, 99);
        membership_put_u32(&w, 64);
        membership_put_u32(&w, 3);
        membership_put_u32(&w, 0);
        membership_put_u32(&w, 8);
        membership_put_u32(&w, 10);
        membership_put_u32(&w, 40);
        membership_put_u32(&w, 20);
        break;
    case MEMBERSHIP_MSG_RELAY: {
        membership_put_u32(&w, 5); /* origin: the sender, as the inner message's */
        membership_put_u32(&w, 9); /* target */
        membership_put_u8(&w, 0);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, MEMBERSHIP_HEADER_SIZE);
        struct membership_header inner = {
            .type = MEMBERSHIP_MSG_HEARTBEAT, .flags = MEMBERSHIP_FLAG_HAS_VIEW, .sender = 5,
            .incarnation = 7, .epoch = MEMBERSHIP_EPOCH(3, 1, 7),
            .stable_epoch = MEMBERSHIP_EPOCH(2, 1, 7),
        };
        membership_put_header(&w, &inner);
        break;
    }
    case MEMBERSHIP_MSG_REFUTED:
        membership_put_u32(&w, 9); /* peer */
        membership_put_u32(&w, 0); /* relay */
        break;
    case MEMBERSHIP_MSG_REFORM:
        membership_put_u32(&w, 2); /* vote */
        membership_put_u8(&w, MEMBERSHIP_REFORM_ANSWER);
        membership_put_u8(&w, 0);
        membership_put_u16(&w, 0);
        break;
    default: /* HEARTBEAT, HOW_ARE_YOU, I_AM_ALIVE, VIEW_NOTICE: header only */
        break;
    }
    CHECK(!w.overflow);
    return w.length;
}

static void round_trips(void)
{
    uint8_t buf[MEMBERSHIP_MAX_PAYLOAD + 8];
    struct membership_msg msg;
    for (unsigned type = 1; type < MEMBERSHIP_MSG_TYPE_LIMIT; type++) {
        size_t length = build(buf, type);
        enum membership_decode_status s = membership_decode(buf, length, NODES, &msg);
        CHECKF(s == MEMBERSHIP_DECODE_OK, "type %s: %s", membership_msg_type_name(type),
               membership_decode_status_text(s));
        CHECK(msg.header.type == type && msg.header.sender == 5 && msg.header.incarnation == 7);
        CHECK(msg.header.epoch == MEMBERSHIP_EPOCH(3, 1, 7));
        CHECK(msg.header.stable_epoch == MEMBERSHIP_EPOCH(2, 1, 7));
        CHECK(strcmp(membership_msg_type_name(type), "?") != 0);
        /* Every truncation is refused, and so is one byte more. */
        for (size_t cut = 0; cut < length; cut++) {
            CHECKF(membership_decode(buf, cut, NODES, &msg) != MEMBERSHIP_DECODE_OK,
                   "type %u cut to %zu", type, cut);
        }
        buf[length] = 0;
        CHECK(membership_decode(buf, length + 1, NODES, &msg) != MEMBERSHIP_DECODE_OK);
        /* The same message names an id out of range for a smaller torus. */
        if (type == MEMBERSHIP_MSG_NODE_FAILURE || membership_msg_is_change(type)) {
            CHECK(membership_decode(buf, length, 40, &msg) == MEMBERSHIP_DECODE_BAD_ID);
        }
    }
    /* Field values. */
    size_t length = build(buf, MEMBERSHIP_MSG_ROOT_FAILURE);
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    CHECK(msg.body.report.detector == 9 && msg.body.report.sequence == 42 &&
          msg.body.report.failed_root == 0 && msg.body.report.count == 3);
    CHECK(membership_msg_report_id(&msg, 2) == 63);
    length = build(buf, MEMBERSHIP_MSG_FAILED_NODE);
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    CHECK(msg.body.change.failed_count == 2 && msg.body.change.joined_count == 1);
    CHECK(msg.body.change.live_after == 61 && msg.body.change.digest_after == 0x1234567890abcdefull);
    uint32_t id;
    uint32_t inc;
    membership_msg_joined(&msg, 0, &id, &inc);
    CHECK(id == 33 && inc == 1025);
    CHECK(membership_msg_failed_id(&msg, 1) == 21);
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    uint32_t start;
    uint32_t span;
    membership_msg_interval(&msg, 1, &start, &span);
    CHECK(start == 40 && span == 20);
}

/* Envelopes: one hop, the inner message of the origin's. */
static void relay_envelopes(void)
{
    uint8_t buf[MEMBERSHIP_MAX_PAYLOAD + 8];
    struct membership_msg msg;
    const size_t body = MEMBERSHIP_HEADER_SIZE;
    const size_t inner = body + MEMBERSHIP_RELAY_FIXED;
    size_t length = build(buf, MEMBERSHIP_MSG_RELAY);
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    CHECK(msg.body.relay.origin == 5 && msg.body.relay.target == 9 && msg.body.relay.flags == 0);
    CHECK(msg.body.relay.inner_length == MEMBERSHIP_HEADER_SIZE && msg.list == buf + inner);
    buf[inner + 1] = MEMBERSHIP_MSG_RELAY; /* an envelope in an envelope */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_TYPE);
    build(buf, MEMBERSHIP_MSG_RELAY);
    buf[inner + 4] = 6; /* the inner message is not the origin's */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_ID);
    build(buf, MEMBERSHIP_MSG_RELAY);
    buf[body + 4] = 5; /* target = origin */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_ID);
    build(buf, MEMBERSHIP_MSG_RELAY);
    buf[body + 8] = 0x02; /* unknown flag */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_RESERVED);
    build(buf, MEMBERSHIP_MSG_RELAY);
    buf[body + 10] = MEMBERSHIP_HEADER_SIZE - 1u; /* no whole header inside */
    CHECK(membership_decode(buf, length - 1u, NODES, &msg) == MEMBERSHIP_DECODE_SHORT);
    length = build(buf, MEMBERSHIP_MSG_REFUTED);
    buf[body] = NODES; /* peer out of range */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_ID);
}

static void targeted(void)
{
    uint8_t buf[MEMBERSHIP_MAX_PAYLOAD + 8];
    struct membership_msg msg;
    size_t length = build(buf, MEMBERSHIP_MSG_HEARTBEAT);
    buf[0] = 2;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_VERSION);
    build(buf, MEMBERSHIP_MSG_HEARTBEAT);
    buf[1] = 0;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_TYPE);
    buf[1] = MEMBERSHIP_MSG_TYPE_LIMIT;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_TYPE);
    build(buf, MEMBERSHIP_MSG_HEARTBEAT);
    buf[2] = 0x80;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_RESERVED);
    build(buf, MEMBERSHIP_MSG_HEARTBEAT);
    buf[4] = NODES; /* sender */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_ID);
    CHECK(membership_decode(NULL, 0, NODES, &msg) == MEMBERSHIP_DECODE_SHORT);
    uint8_t big[MEMBERSHIP_MAX_PAYLOAD + 1];
    memset(big, 0, sizeof big);
    CHECK(membership_decode(big, sizeof big, NODES, &msg) == MEMBERSHIP_DECODE_TOO_LONG);

    /* Report count over the limit. */
    length = build(buf, MEMBERSHIP_MSG_NODE_FAILURE);
    buf[MEMBERSHIP_HEADER_SIZE + 12] = 0xff;
    buf[MEMBERSHIP_HEADER_SIZE + 13] = 0xff;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_COUNT);
    /* Intervals out of order, overlapping, empty, beyond the range. */
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    uint8_t *first = buf + MEMBERSHIP_HEADER_SIZE + MEMBERSHIP_CHUNK_FIXED;
    first[0] = 45; /* first interval starts after the second */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    first[4] = 0; /* empty interval */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    first[0] = 2; /* before from */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    first[12] = 30; /* second interval runs past to */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    /* A final chunk must end at the node count. */
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    CHECK(membership_decode(buf, length, NODES + 1, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    /* ... and one that ends there must be final: its receiver would ask
     * for the next chunk from the node count, a request that does not
     * decode (found by the fuzz target membership). */
    length = build(buf, MEMBERSHIP_MSG_VIEW_CHUNK);
    buf[MEMBERSHIP_HEADER_SIZE + 5] = 0;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    /* Bitmap chunks: from on a byte boundary, exactly as many bytes as the span. */
    {
        struct membership_writer w;
        header(buf, MEMBERSHIP_MSG_VIEW_CHUNK, &w);
        membership_put_u32(&w, 1);
        membership_put_u8(&w, MEMBERSHIP_CHUNK_BITS);
        membership_put_u8(&w, MEMBERSHIP_CHUNK_FINAL);
        membership_put_u16(&w, 2);
        membership_put_u32(&w, 48);
        membership_put_u32(&w, NODES);
        membership_put_u32(&w, 3);
        membership_put_u64(&w, 0);
        membership_put_u32(&w, 0);
        membership_put_u32(&w, 0);
        membership_put_u32(&w, 0);
        membership_put_u8(&w, 0x07);
        membership_put_u8(&w, 0x00);
        CHECK(membership_decode(buf, w.length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
        buf[MEMBERSHIP_HEADER_SIZE + 8] = 47; /* from not a multiple of 8 */
        CHECK(membership_decode(buf, w.length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
        buf[MEMBERSHIP_HEADER_SIZE + 8] = 40; /* span 24 bits but only 2 bytes */
        CHECK(membership_decode(buf, w.length, NODES, &msg) == MEMBERSHIP_DECODE_BAD_RANGE);
    }
    /* The writer never overruns. */
    uint8_t small[10];
    struct membership_writer w;
    membership_writer_init(&w, small, sizeof small);
    membership_put_u64(&w, 1);
    membership_put_u32(&w, 2);
    CHECK(w.overflow && w.length == 8);
}

static struct membership machine;
static struct membership_outbox outbox;

static void fuzz(void)
{
    unsigned long long rng = 99;
    uint8_t buf[MEMBERSHIP_MAX_PAYLOAD + 64];
    struct membership_msg msg;
    struct membership_config config;
    membership_config_defaults(&config);
    uint32_t sizes[3] = {4, 4, 4};
    CHECK(torus_geometry_init(&config.geometry, 3, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    config.member_count = NODES;
    config.node_id = 3;
    CHECK(membership_init(&machine, &config) == MEMBERSHIP_INIT_OK);
    unsigned ok = 0;
    unsigned fed = 0;
    for (unsigned round = 0; round < 200000; round++) {
        size_t length = (size_t)(test_random(&rng) % sizeof buf);
        unsigned mode = (unsigned)(test_random(&rng) % 3);
        if (mode == 0) {
            for (size_t i = 0; i < length; i++) {
                buf[i] = (uint8_t)test_random(&rng);
            }
        } else {
            /* A valid message with a few bytes changed, maybe cut. */
            unsigned type = 1 + (unsigned)(test_random(&rng) % (MEMBERSHIP_MSG_TYPE_LIMIT - 1));
            size_t valid = build(buf, type);
            unsigned flips = (unsigned)(test_random(&rng) % 4);
            for (unsigned f = 0; f < flips; f++) {
                buf[test_random(&rng) % valid] ^= (uint8_t)(1u << (test_random(&rng) % 8));
            }
            length = mode == 1 ? valid : (size_t)(test_random(&rng) % (valid + 1));
        }
        enum membership_decode_status s = membership_decode(buf, length, NODES, &msg);
        CHECK((unsigned)s < MEMBERSHIP_DECODE_STATUS_COUNT);
        ok += s == MEMBERSHIP_DECODE_OK;
        if ((round % 4) == 0) {
            membership_receive(&machine, buf, length, 1000u + round, &outbox);
            membership_outbox_clear(&outbox);
            fed++;
        }
    }
    const struct membership_counters *c = membership_get_counters(&machine);
    CHECK(c->received == fed);
    CHECK(c->drops_malformed > 0 && c->drops_malformed < fed);
    CHECK(ok > 0);
    /* Whatever it was fed, the node still holds a view with itself in it. */
    CHECK(!membership_has_view(&machine) || membership_is_member(&machine, 3));
    printf("fuzz: %u of 200000 payloads decoded, %u fed to a node, %u counted malformed\n", ok,
           fed, c->drops_malformed);
}

/* Issue 15: a report's fault model, a change's decisions, a refusal. */
static void recovery_fields(void)
{
    uint8_t buf[MEMBERSHIP_MAX_PAYLOAD + 8];
    struct membership_msg msg;
    size_t length = build(buf, MEMBERSHIP_MSG_NODE_FAILURE);
    buf[MEMBERSHIP_HEADER_SIZE + 15] = FAULT_MODEL_PROCESS;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    CHECK(msg.body.report.model == FAULT_MODEL_PROCESS && msg.body.report.flags == 0);
    buf[MEMBERSHIP_HEADER_SIZE + 15] = FAULT_MODEL_LIMIT;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_RESERVED);

    /* A change with decisions: (model, action) per failed id after the lists. */
    length = build(buf, MEMBERSHIP_MSG_FAILED_NODE);
    buf[MEMBERSHIP_HEADER_SIZE + 8] |= MEMBERSHIP_CHANGE_DECIDED;
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_SHORT);
    buf[length] = FAULT_MODEL_PHYSICAL;
    buf[length + 1] = RECOVERY_MIGRATE;
    buf[length + 2] = FAULT_MODEL_REPEATED;
    buf[length + 3] = RECOVERY_RESTART | MEMBERSHIP_DECISION_QUARANTINED;
    CHECK(membership_decode(buf, length + 4, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    uint8_t model = 0;
    uint8_t action = 0;
    membership_msg_decision(&msg, 1, &model, &action);
    CHECK(model == FAULT_MODEL_REPEATED &&
          action == (RECOVERY_RESTART | MEMBERSHIP_DECISION_QUARANTINED));
    membership_msg_decision(&msg, 0, &model, &action);
    CHECK(model == FAULT_MODEL_PHYSICAL && action == RECOVERY_MIGRATE);
    buf[length] = FAULT_MODEL_NONE; /* a removal always has a model */
    CHECK(membership_decode(buf, length + 4, NODES, &msg) == MEMBERSHIP_DECODE_RESERVED);
    buf[length] = FAULT_MODEL_PHYSICAL;
    buf[length + 1] = RECOVERY_ACTION_LIMIT;
    CHECK(membership_decode(buf, length + 4, NODES, &msg) == MEMBERSHIP_DECODE_RESERVED);

    length = build(buf, MEMBERSHIP_MSG_JOIN_REFUSED);
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_OK);
    CHECK(msg.body.refused.reason == MEMBERSHIP_REFUSED_QUARANTINED);
    buf[MEMBERSHIP_HEADER_SIZE] = 2; /* no such reason */
    CHECK(membership_decode(buf, length, NODES, &msg) == MEMBERSHIP_DECODE_RESERVED);
}

int main(void)
{
    relay_envelopes();
    round_trips();
    recovery_fields();
    targeted();
    fuzz();
    return check_report("membership.codec");
}
