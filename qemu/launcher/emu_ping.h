/*
 * Results of `ping all`: one record per ordered pair (source, destination),
 * checked for completeness (every pair of running nodes answered) and
 * summarized per hop count: how many pairs, and the round-trip median, 90th
 * percentile and maximum.
 */
#ifndef QEMU_LAUNCHER_EMU_PING_H
#define QEMU_LAUNCHER_EMU_PING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "net/torus/geometry.h"

struct emu_ping_sample {
    uint32_t hops;
    uint64_t rtt_ns;
};

struct emu_ping {
    uint32_t nodes;
    uint8_t *answered;  /* [source * nodes + destination]: 0 none, 1 ok, 2 failed */
    struct emu_ping_sample *samples; /* successful pings */
    uint64_t sample_count;
    uint64_t failed;      /* ok=0 answers */
    uint64_t duplicates;  /* a pair answered twice */
    uint64_t bad_records; /* out of range, missing fields */
    uint64_t hop_mismatch; /* hops differ from the shortest path */
};

/* Allocates tables for nodes nodes; false when out of memory. */
bool emu_ping_init(struct emu_ping *ping, uint32_t nodes);
void emu_ping_free(struct emu_ping *ping);

/*
 * Records one answer.  hops may be UINT32_MAX when the node did not say;
 * geometry (may be NULL) supplies the shortest distance then, and is used
 * to count answers whose hop count differs from it.
 */
void emu_ping_record(struct emu_ping *ping, const struct torus_geometry *geometry,
                     uint32_t source, uint32_t destination, uint32_t hops,
                     uint64_t rtt_ns, bool ok);

/*
 * Counts the ordered pairs among running[] (NULL: every node) that did not
 * answer ok, and prints up to `shown` of them to out (may be NULL) as
 * "0->5 (failed)" or "2->7 (no answer)".
 */
uint64_t emu_ping_missing(const struct emu_ping *ping, const bool *running,
                          FILE *out, unsigned shown);

/* Hop-count histogram with RTT median / p90 / max per hop count. */
void emu_ping_report(struct emu_ping *ping, FILE *out);

/* The q-quantile (0..1) of sorted values by the nearest-rank method. */
uint64_t emu_ping_quantile(const uint64_t *sorted, uint64_t count, double q);

#endif /* QEMU_LAUNCHER_EMU_PING_H */
