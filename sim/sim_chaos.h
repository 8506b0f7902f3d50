/*
 * The simulator's campaign (--chaos): a schedule of random faults in
 * virtual time, the times drawn up front, what happens at each drawn by
 * the one chaos generator (tools/chaos.h) with holds drawn in units of
 * sim_unit_ns:
 * kills (favouring the lowest ids, so roots and their successors die,
 * chained), restarts of dead nodes, short and long hangs, false
 * suspicions, link cuts, and partitions that heal.  Deterministic for a
 * seed.
 */
#ifndef SIM_SIM_CHAOS_H
#define SIM_SIM_CHAOS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"
#include "sim/sim_inject.h"

/*
 * Fills out[0..capacity) with a scenario of about `events` faults spread
 * over window_ns; returns how many were written (all partitions healed and
 * hangs over by window end).
 */
size_t sim_chaos_generate(const struct sim_params *params, uint64_t seed, unsigned events,
                          uint64_t window_ns, struct fault *out, size_t capacity);

#endif /* SIM_SIM_CHAOS_H */
