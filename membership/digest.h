/*
 * View digests and the 64-bit mix behind them: pure functions of ids and
 * counts, shared by the state machine, the simulator and the launcher's
 * model (a `view` event's digest can be recomputed from its members).
 */
#ifndef MEMBERSHIP_DIGEST_H
#define MEMBERSHIP_DIGEST_H

#include <stdint.h>

/* splitmix64's finaliser: spreads every input bit over the output. */
static inline uint64_t membership_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/*
 * View digests (as in `view` events): membership_initial_digest(member_count)
 * XOR membership_id_digest(id) for each id whose membership differs from
 * the initial view.  Equal views give equal digests.
 */
uint64_t membership_id_digest(uint32_t id);
uint64_t membership_initial_digest(uint32_t member_count);

#endif /* MEMBERSHIP_DIGEST_H */
