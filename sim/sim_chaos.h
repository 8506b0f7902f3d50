/*
 * Random fault scenarios for the simulator's campaign (--chaos): kills
 * (favouring the lowest ids, so roots and their successors die, chained),
 * restarts of dead nodes, short and long hangs, false suspicions, link
 * cuts, and partitions that heal.  The scenario keeps a primary component
 * possible: at most N/8 nodes down at once and a minority side of at most
 * N/4.  Deterministic for a seed.
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
