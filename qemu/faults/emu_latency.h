/*
 * The one-hop latency L of this run, measured by the launcher before the
 * job starts: a few nodes (all of them on a small torus, 16 spread over a
 * big one) each ping a torus neighbour several times, one ping at a time
 * over the whole torus (console `ping N`; event=ping dst= hops= rtt_ns=).
 * L = median round trip / 2, as the paper measures it (ping-pong).
 *
 * Then L(k) for the contention model (tools/ts_model.h), the paper's way
 * (section 7): the same nodes each exchange with their k nearest nodes at
 * once (console `ping fan A,B,...`; event=ping-fan), k = 1, 2, 4, 8 (fewer
 * on small tori), several times; L(k) = median of (time to the last
 * answer) / (2 x the largest hop count among the k).
 */
#ifndef QEMU_FAULTS_EMU_LATENCY_H
#define QEMU_FAULTS_EMU_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/event_line.h"
#include "tools/ts_model.h"

#define EMU_LATENCY_FAN_SAMPLES 128

struct emu;

struct emu_latency {
    uint64_t *rtt_ns;
    unsigned count, capacity;
    unsigned failed;      /* ok=0 answers, refusals and timeouts */
    unsigned wrong_hops;  /* answers that did not take one hop (not used) */
    /* the ping in flight */
    bool waiting, answered;
    uint32_t node, peer;
    /* the fans: per fan-out, samples of time to the last answer / (2 hops) */
    bool fan_waiting;
    unsigned fan_index;
    unsigned fan_failed;
    unsigned fan_samples[TS_MODEL_FANS];
    double fan_hop_ns[TS_MODEL_FANS][EMU_LATENCY_FAN_SAMPLES];
};

/*
 * Runs the probe (rounds pings from each of up to max_nodes nodes) and
 * returns true when at least one one-hop answer came back.
 */
bool emu_latency_measure(struct emu *emu, struct emu_latency *latency, unsigned rounds,
                         unsigned max_nodes);

/*
 * Measures L(k) (rounds fans from each of up to max_nodes nodes for every
 * k); fans gets the medians.  True when every k measured answered at least
 * once.
 */
bool emu_latency_measure_fans(struct emu *emu, struct emu_latency *latency, unsigned rounds,
                              unsigned max_nodes, struct ts_fan_latency *fans);

/* Takes the ping / ping-done / ping-fan / console-error lines of the node in flight. */
void emu_latency_on_event(struct emu_latency *latency, uint32_t rank,
                          const struct event_line *line);

/* Half the median round trip, ns; 0 without samples. */
double emu_latency_one_hop_ns(const struct emu_latency *latency);

void emu_latency_free(struct emu_latency *latency);

#endif /* QEMU_FAULTS_EMU_LATENCY_H */
