/*
 * allreduce: an iterative allreduce of values that depend on rank and
 * iteration, each total checked against its closed form on every rank (the
 * inputs, closed forms and digest: apps/kernels.h).  The digest is the
 * CRC-32 of every total in order: the same on every rank and every board
 * when every total is right.
 *
 * After a failure (issue 14) it rebuilds its communicator per the job's
 * mode and starts the failed iteration again: under SHRINK the closed form
 * over the new size, under BLANK over the live ranks, under REBUILD the
 * fault-free one (a spare took the failed rank).  The members agree on the
 * resume point (iteration, digest so far, verdict so far) by a MAX
 * allreduce, to which an adopting spare offers zeros.
 */
#include "apps/kernels.h"
#include "apps/recovery.h"
#include "node/tori.h"

/* The three allreduces of iteration i. */
static int one_iteration(const struct app_group *g, uint32_t i, int64_t arg0,
                         struct allreduce_values *out)
{
    struct allreduce_values in;
    allreduce_inputs(g->rank, g->size, i, arg0, &in);
    int error = tori_allreduce(g->comm, in.sums, out->sums, 2, TORI_INT64, TORI_SUM);
    if (error == TORI_OK)
        error = tori_allreduce(g->comm, &in.max, &out->max, 1, TORI_INT64, TORI_MAX);
    if (error == TORI_OK)
        error = tori_allreduce(g->comm, &in.half, &out->half, 1, TORI_DOUBLE, TORI_SUM);
    return error;
}

struct tori_result tori_app_allreduce(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    struct app_group g;
    if (!app_group_start(&g))
        return outcome;
    bool ok = true;
    uint32_t digest = 0;
    uint32_t i = 1;
    bool resume = g.adopted; /* an adopting spare learns where the others are */
    while (i <= args->iterations) {
        int error = TORI_OK;
        if (resume) {
            /* {iteration, digest, failed verdict}: a spare offers zeros. */
            int64_t point[3] = {g.adopted && i == 1 && digest == 0 ? 0 : (int64_t)i,
                                (int64_t)digest, ok ? 0 : 1};
            error = app_recovery_resume(&g, point, 3);
            if (error == TORI_OK) {
                i = (uint32_t)point[0];
                digest = (uint32_t)point[1];
                ok = point[2] == 0;
                resume = false;
                continue;
            }
        } else {
            struct allreduce_values out;
            error = one_iteration(&g, i, args->arg[0], &out);
            if (error == TORI_OK) {
                struct allreduce_values want;
                allreduce_expected_without(g.size, i, args->arg[0], g.gaps, g.gap_count,
                                           &want);
                ok = ok && allreduce_equal(&out, &want);
                digest = allreduce_digest_update(digest, &out);
                outcome.iterations = i;
                tori_iteration_done(i);
                i++;
                continue;
            }
        }
        /* Collectives only: each fails on every member once the
         * communicator is DETECTED, so nobody is left waiting: no revoke. */
        if (!app_failure(error) || !app_group_rebuild(&g, false))
            return outcome;
        resume = true;
    }
    outcome.ok = ok;
    outcome.digest = digest;
    return outcome;
}
