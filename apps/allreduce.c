/*
 * allreduce: an iterative allreduce of values that depend on rank and
 * iteration, each total checked against its closed form on every rank (the
 * inputs, closed forms and digest: apps/kernels.h).  The digest is the
 * CRC-32 of every total in order: the same on every rank and every board
 * when every total is right.
 */
#include "apps/kernels.h"
#include "node/tori.h"

struct tori_result tori_app_allreduce(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    uint32_t rank = 0;
    uint32_t size = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK ||
        tori_size(TORI_COMM_WORLD, &size) != TORI_OK)
        return outcome;
    bool ok = true;
    uint32_t digest = 0;
    for (uint32_t i = 1; i <= args->iterations; i++) {
        struct allreduce_values in;
        struct allreduce_values out;
        struct allreduce_values want;
        allreduce_inputs(rank, size, i, args->arg[0], &in);
        if (tori_allreduce(TORI_COMM_WORLD, in.sums, out.sums, 2, TORI_INT64, TORI_SUM) !=
                TORI_OK ||
            tori_allreduce(TORI_COMM_WORLD, &in.max, &out.max, 1, TORI_INT64, TORI_MAX) !=
                TORI_OK ||
            tori_allreduce(TORI_COMM_WORLD, &in.half, &out.half, 1, TORI_DOUBLE, TORI_SUM) !=
                TORI_OK)
            return outcome;
        allreduce_expected(size, i, args->arg[0], &want);
        ok = ok && allreduce_equal(&out, &want);
        digest = allreduce_digest_update(digest, &out);
        outcome.iterations = i;
        tori_iteration_done(i);
    }
    outcome.ok = ok;
    outcome.digest = digest;
    return outcome;
}
