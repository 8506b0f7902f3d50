#include "node/ping.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/console_command.h"
#include "kernel/event.h"
#include "lib/le.h"

/* Payload: sequence (4), sender clock (8), path length seen (1), LE. */
#define PING_PAYLOAD_SIZE 13

static void report(uint32_t destination, uint32_t hops, uint64_t rtt_ns, bool ok)
{
    event_begin("ping");
    event_add_u64("dst", destination);
    event_add_u64("hops", hops);
    event_add_u64("rtt_ns", rtt_ns);
    event_add_u64("ok", ok ? 1 : 0);
    event_end();
}

static void send_ping(struct torus_ping *ping, struct torus_ping_slot *slot,
                      uint64_t now_ns)
{
    uint8_t payload[PING_PAYLOAD_SIZE] = {0};
    le_put_u32(payload, slot->sequence);
    le_put_u64(payload + 4, now_ns);
    slot->sent_ns = now_ns;
    enum torus_network_status status =
        torus_network_send(ping->network, slot->destination,
                           TORUS_FRAME_TYPE_PING, 0, payload, sizeof payload,
                           now_ns);
    if (status == TORUS_NETWORK_OK || slot->refusals >= TORUS_PING_REFUSALS) {
        slot->attempts++;
        slot->deadline_ns = now_ns + TORUS_PING_TIMEOUT_NS;
    } else {
        slot->refusals++;
        slot->deadline_ns = now_ns + TORUS_PING_REFUSED_RETRY_NS;
    }
}

static void on_ping(void *context, const struct torus_frame_header *header,
                    const uint8_t *payload, uint64_t now_ns)
{
    struct torus_ping *ping = context;
    if (header->payload_length != PING_PAYLOAD_SIZE)
        return;
    uint8_t reply[PING_PAYLOAD_SIZE];
    memcpy(reply, payload, PING_PAYLOAD_SIZE);
    reply[12] = (uint8_t)(header->hops + 1); /* forwards + the last hop */
    torus_network_send(ping->network, header->source, TORUS_FRAME_TYPE_PONG, 0,
                       reply, sizeof reply, now_ns);
}

static void finish_if_done(struct torus_ping *ping)
{
    if (!ping->sweeping || ping->next_destination <= ping->last_destination)
        return;
    for (unsigned i = 0; i < TORUS_PING_WINDOW; i++)
        if (ping->slots[i].active)
            return;
    ping->sweeping = false;
    event_begin("ping-done");
    event_add_u64("ok", ping->answered);
    event_add_u64("failed", ping->failed);
    event_end();
}

static void finish_fan(struct torus_ping_fan *fan, bool ok, uint64_t end_ns)
{
    fan->active = false;
    event_begin("ping-fan");
    event_add_u64("n", fan->count);
    event_add_u64("answered", fan->answered);
    event_add_u64("max_hops", fan->max_hops);
    event_add_u64("rtt_ns", end_ns - fan->sent_ns);
    event_add_u64("ok", ok ? 1 : 0);
    event_end();
}

/* A PONG of the fan in flight; false when it is not one. */
static bool fan_answer(struct torus_ping_fan *fan, uint32_t source, uint32_t sequence,
                       uint32_t hops, uint64_t now_ns)
{
    for (uint32_t i = 0; fan->active && i < fan->count; i++) {
        if (fan->done[i] || fan->sequence[i] != sequence || fan->destination[i] != source)
            continue;
        fan->done[i] = true;
        fan->answered++;
        fan->last_answer_ns = now_ns;
        if (hops > fan->max_hops)
            fan->max_hops = hops;
        if (fan->answered == fan->count)
            finish_fan(fan, true, now_ns);
        return true;
    }
    return false;
}

static void on_pong(void *context, const struct torus_frame_header *header,
                    const uint8_t *payload, uint64_t now_ns)
{
    struct torus_ping *ping = context;
    if (header->payload_length != PING_PAYLOAD_SIZE)
        return;
    uint32_t sequence = le_get_u32(payload);
    if (fan_answer(&ping->fan, header->source, sequence, payload[12], now_ns))
        return;
    for (unsigned i = 0; i < TORUS_PING_WINDOW; i++) {
        struct torus_ping_slot *slot = &ping->slots[i];
        if (slot->active && slot->sequence == sequence &&
            slot->destination == header->source) {
            uint64_t sent = le_get_u64(payload + 4);
            report(slot->destination, payload[12], now_ns - sent, true);
            slot->active = false;
            ping->answered++;
            finish_if_done(ping);
            return;
        }
    }
    /* A late answer to a ping already given up: ignored. */
}

static void start_sweep(struct torus_ping *ping, uint32_t first, uint32_t last,
                        bool skip_self)
{
    ping->sweeping = true;
    ping->skip_self = skip_self;
    ping->next_destination = first;
    ping->last_destination = last;
    ping->answered = 0;
    ping->failed = 0;
}

/* "fan A,B,...": distinct nodes other than this one, all sent at once. */
static void start_fan(struct torus_ping *ping, const char *list, uint64_t now_ns)
{
    struct torus_ping_fan *fan = &ping->fan;
    uint32_t node_count = torus_geometry_node_count(&ping->network->geometry);
    uint32_t destinations[TORUS_PING_FAN_MAX];
    uint32_t count = 0;
    const char *cursor = list;
    for (;;) {
        char *end = NULL;
        unsigned long destination = strtoul(cursor, &end, 10);
        if (end == cursor || (*end != ',' && *end != '\0') || destination >= node_count ||
            destination == ping->network->rank || count == TORUS_PING_FAN_MAX) {
            console_command_reply_error("ping: fan expects up to 8 distinct other node ids, "
                                        "comma-separated");
            return;
        }
        for (uint32_t i = 0; i < count; i++) {
            if (destinations[i] == destination) {
                console_command_reply_error("ping: fan names a node twice");
                return;
            }
        }
        destinations[count++] = (uint32_t)destination;
        if (*end == '\0')
            break;
        cursor = end + 1;
    }
    memset(fan, 0, sizeof *fan);
    fan->active = true;
    fan->count = count;
    fan->sent_ns = now_ns;
    fan->deadline_ns = now_ns + TORUS_PING_TIMEOUT_NS;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t payload[PING_PAYLOAD_SIZE] = {0};
        fan->destination[i] = destinations[i];
        fan->sequence[i] = ++ping->sequence;
        le_put_u32(payload, fan->sequence[i]);
        le_put_u64(payload + 4, now_ns);
        /* A refused send is not retried: the fan then ends at its deadline, ok=0. */
        torus_network_send(ping->network, destinations[i], TORUS_FRAME_TYPE_PING, 0, payload,
                           sizeof payload, now_ns);
    }
}

static void command_ping(void *context, const char *arguments, uint64_t now_ns)
{
    struct torus_ping *ping = context;
    uint32_t node_count = torus_geometry_node_count(&ping->network->geometry);
    if (strncmp(arguments, "fan ", 4) == 0) {
        if (ping->fan.active)
            console_command_reply_error("ping: a fan is already running");
        else
            start_fan(ping, arguments + 4, now_ns);
        return;
    }
    if (ping->sweeping) {
        console_command_reply_error("ping: a sweep is already running");
        return;
    }
    if (strcmp(arguments, "all") == 0) {
        start_sweep(ping, 0, node_count - 1, true);
        return;
    }
    char *end = NULL;
    unsigned long destination = strtoul(arguments, &end, 10);
    if (end == arguments || *end != '\0' || destination >= node_count) {
        console_command_reply_error("ping: expected 'all', 'fan A,B,...' or a node id below "
                                    "the node count");
        return;
    }
    start_sweep(ping, (uint32_t)destination, (uint32_t)destination, false);
}

void torus_ping_init(struct torus_ping *ping, struct torus_network *network)
{
    memset(ping, 0, sizeof *ping);
    ping->network = network;
    torus_network_set_handler(network, TORUS_FRAME_TYPE_PING, on_ping, ping);
    torus_network_set_handler(network, TORUS_FRAME_TYPE_PONG, on_pong, ping);
    console_command_register("ping", command_ping, ping, CONSOLE_ARGUMENTS);
}

unsigned torus_ping_poll(struct torus_ping *ping, uint64_t now_ns)
{
    unsigned work = 0;
    if (ping->fan.active && now_ns >= ping->fan.deadline_ns) {
        finish_fan(&ping->fan, false, now_ns);
        work++;
    }
    if (!ping->sweeping)
        return work;
    for (unsigned i = 0; i < TORUS_PING_WINDOW; i++) {
        struct torus_ping_slot *slot = &ping->slots[i];
        if (slot->active && now_ns >= slot->deadline_ns) {
            if (slot->attempts < TORUS_PING_ATTEMPTS) {
                send_ping(ping, slot, now_ns);
            } else {
                report(slot->destination, 0, now_ns - slot->sent_ns, false);
                slot->active = false;
                ping->failed++;
            }
            work++;
        }
        while (!slot->active && ping->next_destination <= ping->last_destination) {
            uint32_t destination = ping->next_destination++;
            if (ping->skip_self && destination == ping->network->rank)
                continue;
            slot->active = true;
            slot->destination = destination;
            slot->sequence = ++ping->sequence;
            slot->attempts = 0;
            slot->refusals = 0;
            send_ping(ping, slot, now_ns);
            work++;
        }
    }
    finish_if_done(ping);
    return work;
}

uint64_t torus_ping_next_deadline(const struct torus_ping *ping)
{
    uint64_t next = ping->fan.active ? ping->fan.deadline_ns : UINT64_MAX;
    for (unsigned i = 0; i < TORUS_PING_WINDOW; i++) {
        const struct torus_ping_slot *slot = &ping->slots[i];
        if (slot->active && slot->deadline_ns < next)
            next = slot->deadline_ns;
    }
    if (ping->sweeping && ping->next_destination <= ping->last_destination)
        return 0;
    return next;
}
