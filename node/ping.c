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

static void on_pong(void *context, const struct torus_frame_header *header,
                    const uint8_t *payload, uint64_t now_ns)
{
    struct torus_ping *ping = context;
    if (header->payload_length != PING_PAYLOAD_SIZE)
        return;
    uint32_t sequence = le_get_u32(payload);
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

static void command_ping(void *context, const char *arguments, uint64_t now_ns)
{
    (void)now_ns;
    struct torus_ping *ping = context;
    uint32_t node_count = torus_geometry_node_count(&ping->network->geometry);
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
        console_command_reply_error("ping: expected 'all' or a node id below the node count");
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
    if (!ping->sweeping)
        return 0;
    unsigned work = 0;
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
    uint64_t next = UINT64_MAX;
    for (unsigned i = 0; i < TORUS_PING_WINDOW; i++) {
        const struct torus_ping_slot *slot = &ping->slots[i];
        if (slot->active && slot->deadline_ns < next)
            next = slot->deadline_ns;
    }
    if (ping->sweeping && ping->next_destination <= ping->last_destination)
        return 0;
    return next;
}
