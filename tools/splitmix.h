/*
 * The one seeded generator of the host tools and the tests (splitmix64):
 * small, and the same sequence on every machine for a seed, so that a seed
 * names a run.  Header-only, so that tests link nothing for it.  Callers
 * seed the state as they like (the simulator mixes a constant in, the
 * launcher and the tests take the seed as it is).
 */
#ifndef TOOLS_SPLITMIX_H
#define TOOLS_SPLITMIX_H

#include <stdint.h>

/* One step: advances *state and returns the next value. */
static inline uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, bound) (0 when bound is 0; the tiny modulo bias is irrelevant). */
static inline uint64_t splitmix64_below(uint64_t *state, uint64_t bound)
{
    return bound == 0 ? 0 : splitmix64_next(state) % bound;
}

#endif /* TOOLS_SPLITMIX_H */
