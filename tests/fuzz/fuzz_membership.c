/*
 * The membership state machine (membership/membership.h) on a 2x2x2 torus,
 * fed message sequences chosen by the input: deliveries in order, losses,
 * timers, time, suspicions, crashes and rejoins, payloads of the input's
 * own bytes, and sent messages edited on the way.  Everything a node sends
 * must be addressed to another node and decode at its peer; nothing a node
 * receives may break it (ASan, UBSan).
 */
#include <string.h>

#include "membership/codec.h"
#include "membership/membership.h"
#include "membership/outbox.h"
#include "net/torus/geometry.h"
#include "tests/fuzz/fuzz.h"

#define NODES 8u
#define QUEUE 256u /* messages in flight */

struct packet {
    uint32_t to;
    uint16_t length;
    uint8_t bytes[MEMBERSHIP_MAX_PAYLOAD];
};

static struct membership nodes[NODES];
static bool down[NODES];
static uint32_t incarnation[NODES];
static struct membership_outbox outbox;
static struct packet queue[QUEUE];
static unsigned queue_head;
static unsigned queue_count;
static struct torus_geometry geometry;
static uint8_t edited[MEMBERSHIP_MAX_PAYLOAD];

static void init_node(uint32_t id)
{
    struct membership_config config;
    membership_config_defaults(&config);
    config.geometry = geometry;
    config.node_id = id;
    config.member_count = NODES;
    config.radix = 2;
    config.incarnation = incarnation[id];
    enum membership_init_status status = membership_init(&nodes[id], &config);
    FUZZ_CHECK(status == MEMBERSHIP_INIT_OK, "init: %s", membership_init_status_text(status));
}

/* What node `from` sent: each message must decode at its peer. */
static void collect(uint32_t from)
{
    for (uint32_t i = 0; i < outbox.message_count; i++) {
        const struct membership_outgoing *m = &outbox.messages[i];
        const uint8_t *payload = membership_outbox_payload(&outbox, i);
        FUZZ_CHECK(m->destination < NODES && m->destination != from,
                   "node %u sends to %u", from, m->destination);
        struct membership_msg msg;
        enum membership_decode_status status =
            membership_decode(payload, m->length, NODES, &msg);
        FUZZ_CHECK(status == MEMBERSHIP_DECODE_OK,
                   "node %u sends %s to %u that does not decode: %s", from,
                   membership_msg_type_name(payload[1]), m->destination,
                   membership_decode_status_text(status));
        if (queue_count < QUEUE) {
            struct packet *p = &queue[(queue_head + queue_count++) % QUEUE];
            p->to = m->destination;
            p->length = m->length;
            memcpy(p->bytes, payload, m->length);
        }
    }
    membership_outbox_clear(&outbox);
}

static void receive(uint32_t to, const uint8_t *bytes, size_t length, uint64_t now)
{
    if (!down[to]) {
        membership_receive(&nodes[to], bytes, length, now, &outbox);
        collect(to);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in;
    fuzz_input_init(&in, data, size);
    if (geometry.node_count == 0) {
        const uint32_t sizes[3] = {2, 2, 2};
        const bool mesh[3] = {false, false, false};
        struct torus_geometry_error error;
        FUZZ_CHECK(torus_geometry_init(&geometry, 3, sizes, mesh, &error) == TORUS_GEOMETRY_OK,
                   "geometry");
    }
    queue_head = 0;
    queue_count = 0;
    membership_outbox_clear(&outbox);
    for (uint32_t id = 0; id < NODES; id++) {
        down[id] = false;
        incarnation[id] = 1;
        init_node(id);
    }
    uint64_t now = 0;
    for (unsigned step = 0; step < 2048 && !fuzz_input_done(&in); step++) {
        uint8_t op = fuzz_u8(&in);
        uint32_t id = (op >> 4) % NODES;
        switch (op % 10u) {
        case 0:
        case 1: /* deliver the oldest message */
            if (queue_count > 0) {
                struct packet *p = &queue[queue_head];
                queue_head = (queue_head + 1u) % QUEUE;
                queue_count--;
                receive(p->to, p->bytes, p->length, now);
            }
            break;
        case 2: /* lose it */
            if (queue_count > 0) {
                queue_head = (queue_head + 1u) % QUEUE;
                queue_count--;
            }
            break;
        case 3: { /* node id's timers, at its next deadline if that is near */
            uint64_t next = membership_next_deadline(&nodes[id]);
            if (next != MEMBERSHIP_NEVER && next > now && next - now < 10000000000u) {
                now = next;
            }
            if (!down[id]) {
                membership_tick(&nodes[id], now, &outbox);
                collect(id);
            }
            break;
        }
        case 4:
            now += (uint64_t)fuzz_u16(&in) * 1000u;
            break;
        case 5: { /* a payload of the input's bytes */
            size_t length = 0;
            const uint8_t *bytes = fuzz_bytes(&in, fuzz_u8(&in) * 6u, &length);
            receive(id, bytes, length, now);
            break;
        }
        case 6: /* the oldest message, edited on the way */
            if (queue_count > 0) {
                struct packet *p = &queue[queue_head];
                memcpy(edited, p->bytes, p->length);
                unsigned edits = 1u + fuzz_u8(&in) % 4u;
                for (unsigned k = 0; k < edits; k++) {
                    edited[fuzz_u16(&in) % p->length] = fuzz_u8(&in);
                }
                receive(p->to, edited, p->length, now);
            }
            break;
        case 7: /* an application suspects another node */
            if (!down[id]) {
                (void)membership_suspect(&nodes[id], fuzz_u8(&in) % NODES, now, &outbox);
                collect(id);
            }
            break;
        case 8: /* a crash, or a crashed node restarting and joining */
            if (!down[id]) {
                down[id] = true;
            } else {
                down[id] = false;
                incarnation[id] += 1u + fuzz_u8(&in) % 3u;
                init_node(id);
                membership_start_join(&nodes[id], now, &outbox);
                collect(id);
            }
            break;
        default: /* a torus link to a neighbour goes down or up */
            if (!down[id]) {
                unsigned link = fuzz_u8(&in) % (2u * geometry.dims);
                uint32_t neighbour = torus_geometry_neighbour(&geometry, id, link);
                if (neighbour < NODES && neighbour != id) {
                    membership_link_event(&nodes[id], neighbour, (op & 0x80u) != 0, now, &outbox);
                    collect(id);
                }
            }
            break;
        }
    }
    return 0;
}
