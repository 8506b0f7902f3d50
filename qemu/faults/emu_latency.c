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

static void on_fan(struct emu_latency *latency, const struct event_line *line)
{
    uint64_t ok = 0, hops = 0, rtt = 0;
    event_line_get_u64(line, "ok", &ok);
    unsigned k = latency->fan_index;
    if (ok == 1 && event_line_get_u64(line, "max_hops", &hops) && hops > 0 &&
        event_line_get_u64(line, "rtt_ns", &rtt)) {
        if (latency->fan_samples[k] < EMU_LATENCY_FAN_SAMPLES)
            latency->fan_hop_ns[k][latency->fan_samples[k]++] = (double)rtt / (2.0 * (double)hops);
    } else {
        latency->fan_failed++;
    }
    latency->fan_waiting = false;
}

void emu_latency_on_event(struct emu_latency *latency, uint32_t rank,
                          const struct event_line *line)
{
    if (latency->fan_waiting && rank == latency->node) {
        if (strcmp(line->name, "ping-fan") == 0) {
            on_fan(latency, line);
        } else if (strcmp(line->name, "console-error") == 0) {
            latency->fan_failed++;
            latency->fan_waiting = false;
        }
        return;
    }
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

/* The k nearest ready nodes to node (torus hops, then id) into out; how many. */
static unsigned nearest_ready(const struct emu *emu, uint32_t node, unsigned k, uint32_t *out)
{
    unsigned n = 0;
    for (uint32_t hops = 1; n < k && hops <= emu->count; hops++) {
        for (uint32_t r = 0; r < emu->count && n < k; r++) {
            if (r != node && emu->nodes[r].state == EMU_NODE_READY &&
                torus_geometry_distance(&emu->geometry, node, r) == hops)
                out[n++] = r;
        }
    }
    return n;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool emu_latency_measure_fans(struct emu *emu, struct emu_latency *latency, unsigned rounds,
                              unsigned max_nodes, struct ts_fan_latency *fans)
{
    static const unsigned fanouts[TS_MODEL_FANS] = {1, 2, 4, 8};
    memset(fans, 0, sizeof *fans);
    uint32_t ready = 0;
    for (uint32_t r = 0; r < emu->count; r++)
        ready += emu->nodes[r].state == EMU_NODE_READY;
    uint32_t step = ready > max_nodes ? (ready + max_nodes - 1u) / max_nodes : 1u;
    bool every = true;
    for (unsigned f = 0; f < TS_MODEL_FANS && fanouts[f] < ready; f++) {
        latency->fan_index = f;
        uint32_t seen = 0;
        for (uint32_t r = 0; r < emu->count && emu->interrupted == 0 && !emu->failed; r++) {
            struct emu_node *node = &emu->nodes[r];
            if (node->state != EMU_NODE_READY || seen++ % step != 0)
                continue;
            uint32_t targets[TS_MODEL_FANS * 2];
            unsigned n = nearest_ready(emu, r, fanouts[f], targets);
            if (n < fanouts[f])
                continue;
            char command[128] = "ping fan ";
            size_t used = strlen(command);
            for (unsigned i = 0; i < n; i++)
                used += (size_t)snprintf(command + used, sizeof command - used, "%s%u",
                                         i > 0 ? "," : "", (unsigned)targets[i]);
            for (unsigned round = 0; round < rounds; round++) {
                latency->node = r;
                latency->fan_waiting = emu_node_send(node, command);
                uint64_t deadline = emu_now_ns(emu) + PING_WAIT_NS;
                while (latency->fan_waiting && emu->interrupted == 0 && !emu->failed &&
                       emu_now_ns(emu) < deadline)
                    emu_step(emu, 20);
                if (latency->fan_waiting) {
                    latency->fan_failed++;
                    latency->fan_waiting = false;
                    break;
                }
            }
        }
        unsigned count = latency->fan_samples[f];
        if (count == 0) {
            every = false;
            continue;
        }
        qsort(latency->fan_hop_ns[f], count, sizeof latency->fan_hop_ns[f][0], compare_double);
        fans->fanout[fans->count] = fanouts[f];
        fans->hop_ns[fans->count] = count % 2 == 1 ? latency->fan_hop_ns[f][count / 2]
                                                   : (latency->fan_hop_ns[f][count / 2 - 1] +
                                                      latency->fan_hop_ns[f][count / 2]) /
                                                         2.0;
        fans->count++;
    }
    return every && fans->count > 0;
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
