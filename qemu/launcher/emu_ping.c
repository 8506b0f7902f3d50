#include "qemu/launcher/emu_ping.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool emu_ping_init(struct emu_ping *ping, uint32_t nodes)
{
    memset(ping, 0, sizeof *ping);
    ping->nodes = nodes;
    uint64_t pairs = (uint64_t)nodes * nodes;
    ping->answered = calloc(pairs > 0 ? pairs : 1, 1);
    ping->samples = calloc(pairs > 0 ? pairs : 1, sizeof *ping->samples);
    if (ping->answered == NULL || ping->samples == NULL) {
        emu_ping_free(ping);
        return false;
    }
    return true;
}

void emu_ping_free(struct emu_ping *ping)
{
    free(ping->answered);
    free(ping->samples);
    ping->answered = NULL;
    ping->samples = NULL;
}

void emu_ping_record(struct emu_ping *ping, const struct torus_geometry *geometry,
                     uint32_t source, uint32_t destination, uint32_t hops,
                     uint64_t rtt_ns, bool ok)
{
    if (source >= ping->nodes || destination >= ping->nodes || source == destination) {
        ping->bad_records++;
        return;
    }
    uint8_t *slot = &ping->answered[(uint64_t)source * ping->nodes + destination];
    if (*slot != 0) {
        ping->duplicates++;
        return;
    }
    *slot = ok ? 1 : 2;
    if (!ok) {
        ping->failed++;
        return;
    }
    uint32_t shortest =
        geometry != NULL ? torus_geometry_distance(geometry, source, destination) : hops;
    if (hops == UINT32_MAX)
        hops = shortest;
    else if (hops != shortest)
        ping->hop_mismatch++;
    ping->samples[ping->sample_count].hops = hops;
    ping->samples[ping->sample_count].rtt_ns = rtt_ns;
    ping->sample_count++;
}

uint64_t emu_ping_missing(const struct emu_ping *ping, const bool *running, FILE *out,
                          unsigned shown)
{
    uint64_t missing = 0;
    for (uint32_t s = 0; s < ping->nodes; s++) {
        if (running != NULL && !running[s])
            continue;
        for (uint32_t d = 0; d < ping->nodes; d++) {
            if (d == s || (running != NULL && !running[d]))
                continue;
            uint8_t answer = ping->answered[(uint64_t)s * ping->nodes + d];
            if (answer == 1)
                continue;
            if (out != NULL && missing < shown)
                fprintf(out, "%s%u->%u (%s)", missing > 0 ? ", " : "", (unsigned)s,
                        (unsigned)d, answer == 2 ? "failed" : "no answer");
            missing++;
        }
    }
    if (out != NULL && missing > shown)
        fprintf(out, ", ...");
    return missing;
}

static int compare_samples(const void *a, const void *b)
{
    const struct emu_ping_sample *x = a, *y = b;
    if (x->hops != y->hops)
        return x->hops < y->hops ? -1 : 1;
    return x->rtt_ns < y->rtt_ns ? -1 : x->rtt_ns > y->rtt_ns;
}

uint64_t emu_ping_quantile(const uint64_t *sorted, uint64_t count, double q)
{
    if (count == 0)
        return 0;
    double rank = ceil(q * (double)count);
    uint64_t index = rank < 1.0 ? 0 : (uint64_t)rank - 1;
    return sorted[index < count ? index : count - 1];
}

void emu_ping_report(struct emu_ping *ping, FILE *out)
{
    qsort(ping->samples, ping->sample_count, sizeof *ping->samples, compare_samples);
    uint64_t *rtts = malloc((ping->sample_count > 0 ? ping->sample_count : 1) *
                            sizeof *rtts);
    if (rtts == NULL)
        return;
    fprintf(out, "  %4s %7s %12s %12s %12s\n", "hops", "pairs", "rtt median", "p90",
            "max");
    uint64_t i = 0;
    while (i < ping->sample_count) {
        uint32_t hops = ping->samples[i].hops;
        uint64_t count = 0;
        while (i < ping->sample_count && ping->samples[i].hops == hops)
            rtts[count++] = ping->samples[i++].rtt_ns;
        fprintf(out, "  %4u %7llu %9.3f ms %9.3f ms %9.3f ms\n", (unsigned)hops,
                (unsigned long long)count, emu_ping_quantile(rtts, count, 0.5) / 1e6,
                emu_ping_quantile(rtts, count, 0.9) / 1e6,
                emu_ping_quantile(rtts, count, 1.0) / 1e6);
    }
    free(rtts);
}
