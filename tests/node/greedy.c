/*
 * greedy: a test application (never in a product image) that keeps the
 * runtime from running, to show that the node names it: a `starved` event
 * when it calls again, and, when it starved past the detector's timeout,
 * the expulsion that follows counted as the node's own pause.
 *
 * Arguments: arg[0] the greedy rank; arg[1] and arg[2] how long (ms) it
 * computes without a call in iterations 1 and 2.  Every other iteration,
 * and every other rank, calls the runtime at once.  No communication: a
 * greedy rank's expulsion must not hang the others (failure semantics come
 * with issue 14).  ok: the computation ran for the time asked; the digest
 * is the CRC-32 of the iterations done, the same on every rank.
 */
#include "lib/crc32.h"
#include "node/tori.h"
#include "tests/node/greedy.h"

/* Computes until ms have passed, reading only the clock (no runtime). */
static uint64_t compute_for(int64_t ms)
{
    uint64_t until = tori_now_ns() + (uint64_t)ms * 1000000u;
    uint64_t x = 1;
    while (tori_now_ns() < until)
        x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

struct tori_result tori_test_app_greedy(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    uint32_t rank = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK)
        return outcome;
    bool greedy = (int64_t)rank == args->arg[0];
    bool ok = true;
    uint32_t digest = 0;
    for (uint32_t i = 1; i <= args->iterations; i++) {
        int64_t ms = i == 1 ? args->arg[1] : i == 2 ? args->arg[2] : 0;
        if (greedy && ms > 0) {
            uint64_t began = tori_now_ns();
            /* The result is kept so that the loop is not optimised away. */
            ok = ok && compute_for(ms) != 0 &&
                 tori_now_ns() - began >= (uint64_t)ms * 1000000u;
        }
        digest = crc32_update(digest, &i, sizeof i);
        outcome.iterations = i;
        tori_iteration_done(i);
    }
    outcome.ok = ok;
    outcome.digest = digest;
    return outcome;
}
