/*
 * The membership codec (membership/codec.h): any payload of a MEMBERSHIP
 * torus frame.  Whatever it accepts has every list entry inside the payload
 * and below the node count, and intervals inside the chunk's range; every
 * refusal and every type has a name.
 */
#include <string.h>

#include "membership/codec.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_CODEC_NODES 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct membership_msg msg;
    enum membership_decode_status status = membership_decode(data, size, FUZZ_CODEC_NODES, &msg);
    FUZZ_CHECK(status < MEMBERSHIP_DECODE_STATUS_COUNT &&
                   membership_decode_status_text(status) != NULL,
               "status %d", (int)status);
    if (status != MEMBERSHIP_DECODE_OK) {
        return 0;
    }
    FUZZ_CHECK(size <= MEMBERSHIP_MAX_PAYLOAD, "accepted %zu bytes", size);
    FUZZ_CHECK(membership_msg_type_name(msg.header.type) != NULL, "type %u", msg.header.type);
    FUZZ_CHECK(msg.header.sender < FUZZ_CODEC_NODES, "sender %u", msg.header.sender);
    uint32_t id = 0;
    uint32_t incarnation = 0;
    switch (msg.header.type) {
    case MEMBERSHIP_MSG_NODE_FAILURE:
    case MEMBERSHIP_MSG_ROOT_FAILURE:
        for (uint32_t i = 0; i < msg.body.report.count; i++) {
            id = membership_msg_report_id(&msg, i);
            FUZZ_CHECK(id < FUZZ_CODEC_NODES, "reported id %u", id);
        }
        break;
    case MEMBERSHIP_MSG_FAILURE_ACK:
    case MEMBERSHIP_MSG_JOIN_ACK:
        FUZZ_CHECK(msg.body.ack.reached <= FUZZ_CODEC_NODES, "reached %u", msg.body.ack.reached);
        break;
    case MEMBERSHIP_MSG_VIEW_CHUNK:
        FUZZ_CHECK(msg.body.chunk.from_pos <= msg.body.chunk.to_pos &&
                       msg.body.chunk.to_pos <= FUZZ_CODEC_NODES,
                   "chunk range %u..%u", msg.body.chunk.from_pos, msg.body.chunk.to_pos);
        if (msg.body.chunk.encoding == MEMBERSHIP_CHUNK_INTERVALS) {
            for (uint32_t i = 0; i < msg.body.chunk.count; i++) {
                uint32_t start = 0;
                uint32_t length = 0;
                membership_msg_interval(&msg, i, &start, &length);
                FUZZ_CHECK(start >= msg.body.chunk.from_pos &&
                               (uint64_t)start + length <= msg.body.chunk.to_pos,
                           "interval %u+%u outside %u..%u", start, length,
                           msg.body.chunk.from_pos, msg.body.chunk.to_pos);
            }
        }
        break;
    default:
        if (membership_msg_is_change(msg.header.type)) {
            for (uint32_t i = 0; i < msg.body.change.failed_count; i++) {
                id = membership_msg_failed_id(&msg, i);
                FUZZ_CHECK(id < FUZZ_CODEC_NODES, "failed id %u", id);
            }
            for (uint32_t i = 0; i < msg.body.change.joined_count; i++) {
                membership_msg_joined(&msg, i, &id, &incarnation);
                FUZZ_CHECK(id < FUZZ_CODEC_NODES, "joined id %u", id);
            }
        }
        break;
    }
    return 0;
}
