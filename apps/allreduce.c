/*
 * allreduce: an iterative allreduce of values that depend on rank and
 * iteration, each total checked against its closed form on every rank.
 *
 * Iteration i (1-based) on rank r of n, over WORLD:
 *   sum of (r + 1) * i            = i * n (n + 1) / 2
 *   sum of r * r + i + arg[0]     = (n - 1) n (2n - 1) / 6 + n (i + arg[0])
 *   max of (r + i) % n            = n - 1 when n <= i, else the max over r
 *   sum of r + 1 as a double      = n (n + 1) / 2 (exact: small integers;
 *                                   doubles only added, never multiplied)
 * The digest is the CRC-32 of every total in order: the same on every rank
 * and every board when every total is right.
 */
#include "lib/crc32.h"
#include "node/tori.h"

/* The largest (r + i) % n over r in 0..n-1: n - 1 (r = n - 1 - i % n). */
static int64_t expected_max(uint32_t n)
{
    return (int64_t)n - 1;
}

struct tori_result tori_app_allreduce(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    uint32_t rank = 0;
    uint32_t size = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK ||
        tori_size(TORI_COMM_WORLD, &size) != TORI_OK)
        return outcome;
    const int64_t n = size;
    const int64_t r = rank;
    bool ok = true;
    uint32_t digest = 0;
    for (uint32_t i = 1; i <= args->iterations; i++) {
        int64_t sums[2] = {(r + 1) * (int64_t)i, r * r + (int64_t)i + args->arg[0]};
        int64_t totals[2];
        int64_t max_in = (r + (int64_t)i) % n;
        int64_t max_out = 0;
        double half_in = (double)(r + 1);
        double half_out = 0.0;
        if (tori_allreduce(TORI_COMM_WORLD, sums, totals, 2, TORI_INT64, TORI_SUM) != TORI_OK ||
            tori_allreduce(TORI_COMM_WORLD, &max_in, &max_out, 1, TORI_INT64, TORI_MAX) !=
                TORI_OK ||
            tori_allreduce(TORI_COMM_WORLD, &half_in, &half_out, 1, TORI_DOUBLE, TORI_SUM) !=
                TORI_OK)
            return outcome;
        int64_t want_sum = (int64_t)i * n * (n + 1) / 2;
        int64_t want_squares = (n - 1) * n * (2 * n - 1) / 6 + n * ((int64_t)i + args->arg[0]);
        double want_half = (double)(n * (n + 1) / 2);
        ok = ok && totals[0] == want_sum && totals[1] == want_squares &&
             max_out == expected_max(size) && half_out == want_half;
        digest = crc32_update(digest, totals, sizeof totals);
        digest = crc32_update(digest, &max_out, sizeof max_out);
        outcome.iterations = i;
        tori_iteration_done(i);
    }
    outcome.ok = ok;
    outcome.digest = digest;
    return outcome;
}
