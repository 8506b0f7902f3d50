#include "qemu/faults/emu_latency.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu/launcher/emu_ping.h"
#include "qemu/launcher/emu_run.h"

/* One ping answers within TORUS_PING_ATTEMPTS x 1 s; leave room. */
#define PING_WAIT_NS (4000000000ull)

static bool add_sample(struct emu_latency *latency, uint64_t rtt)
{
    if (latency->count == latency->capacity) {
        unsigned capacity = latency->capacity == 0 ? 64 : latency->capacity * 2;
        uint64_t *grown = realloc(latency->rtt_ns, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        latency->rtt_ns = grown;
        latency->capacity = capacity;
    }
    latency->rtt_ns[latency->count++] = rtt;
    return true;
}

void emu_latency_on_event(struct emu_latency *latency, uint32_t rank,
                          const struct event_line *line)
{
    if (!latency->waiting || rank != latency->node)
        return;
    if (strcmp(line->name, "ping") == 0) {
        uint64_t destination = 0, hops = 0, rtt = 0, ok = 0;
        if (!event_line_get_u64(line, "dst", &destination) || destination != latency->peer)
            return;
        event_line_get_u64(line, "ok", &ok);
        event_line_get_u64(line, "hops", &hops);
        if (ok == 1 && event_line_get_u64(line, "rtt_ns", &rtt) && hops == 1)
            add_sample(latency, rtt);
        else if (ok == 1)
            latency->wrong_hops++;
        else
            latency->failed++;
        latency->answered = true;
    } else if (strcmp(line->name, "ping-done") == 0 ||
               strcmp(line->name, "console-error") == 0) {
        if (!latency->answered)
            latency->failed++;
        latency->waiting = false;
    }
}

/* A neighbour of node that is ready, or UINT32_MAX. */
static uint32_t ready_neighbour(const struct emu *emu, const struct emu_node *node)
{
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
        const struct emu_link *link = &node->link[l];
        if (link->present && link->peer != node->rank &&
            emu->nodes[link->peer].state == EMU_NODE_READY)
            return link->peer;
    }
    return UINT32_MAX;
}

bool emu_latency_measure(struct emu *emu, struct emu_latency *latency, unsigned rounds,
                         unsigned max_nodes)
{
    uint32_t ready = 0;
    for (uint32_t r = 0; r < emu->count; r++)
        ready += emu->nodes[r].state == EMU_NODE_READY;
    uint32_t step = ready > max_nodes ? (ready + max_nodes - 1u) / max_nodes : 1u;
    uint32_t seen = 0;
    for (uint32_t r = 0; r < emu->count && emu->interrupted == 0 && !emu->failed; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->state != EMU_NODE_READY || seen++ % step != 0)
            continue;
        uint32_t peer = ready_neighbour(emu, node);
        if (peer == UINT32_MAX)
            continue;
        char command[32];
        snprintf(command, sizeof command, "ping %u", (unsigned)peer);
        for (unsigned round = 0; round < rounds; round++) {
            latency->node = r;
            latency->peer = peer;
            latency->answered = false;
            latency->waiting = emu_node_send(node, command);
            uint64_t deadline = emu_now_ns(emu) + PING_WAIT_NS;
            while (latency->waiting && emu->interrupted == 0 && !emu->failed &&
                   emu_now_ns(emu) < deadline)
                emu_step(emu, 20);
            if (latency->waiting) {
                latency->failed++;
                latency->waiting = false;
                break; /* this node does not answer: try the next one */
            }
        }
    }
    return latency->count > 0;
}

double emu_latency_one_hop_ns(const struct emu_latency *latency)
{
    if (latency->count == 0)
        return 0.0;
    uint64_t *sorted = malloc(latency->count * sizeof *sorted);
    if (sorted == NULL)
        return 0.0;
    memcpy(sorted, latency->rtt_ns, latency->count * sizeof *sorted);
    for (unsigned i = 1; i < latency->count; i++) {
        uint64_t value = sorted[i];
        unsigned j = i;
        while (j > 0 && sorted[j - 1] > value) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = value;
    }
    double median = (double)emu_ping_quantile(sorted, latency->count, 0.5);
    free(sorted);
    return median / 2.0;
}

void emu_latency_free(struct emu_latency *latency)
{
    free(latency->rtt_ns);
    memset(latency, 0, sizeof *latency);
}
