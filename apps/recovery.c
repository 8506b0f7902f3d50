/* The shipped applications' recovery after a failure (see recovery.h). */
#include "apps/recovery.h"

#include "apps/kernels.h"

/* rebuilt: only a rebuilt communicator can have gaps (BLANK). */
static bool fill(struct app_group *group, bool rebuilt)
{
    if (tori_rank(group->comm, &group->rank) != TORI_OK ||
        tori_size(group->comm, &group->size) != TORI_OK)
        return false;
    uint64_t epoch = 0;
    uint32_t count = 0;
    group->gap_count = 0;
    /* Gaps exist only in a rebuilt BLANK communicator: elsewhere the
     * detail call lists none. */
    if (rebuilt && tori_comm_failed_ranks(group->comm, group->gaps, APP_RECOVERY_MAX_GAPS, &count,
                               &epoch) == TORI_OK) {
        if (count > APP_RECOVERY_MAX_GAPS)
            return false;
        group->gap_count = count;
    }
    group->live = group->size - group->gap_count;
    group->index = group_live_index(group->gaps, group->gap_count, group->rank);
    return true;
}

bool app_group_start(struct app_group *group)
{
    struct tori_adoption adoption;
    if (tori_adopted(&adoption) != TORI_OK)
        return false;
    group->comm = adoption.adopted ? adoption.comm : TORI_COMM_WORLD;
    group->retired = TORI_COMM_NULL;
    group->adopted = adoption.adopted;
    group->rebuild_started_ns = group->rebuilt_ns = 0;
    return fill(group, adoption.adopted);
}

bool app_failure(int error)
{
    return error == TORI_ERR_PROC_FAILED || error == TORI_ERR_REVOKED ||
           error == TORI_ERR_INVALID_RANK;
}

bool app_group_rebuild(struct app_group *group, bool revoke)
{
    tori_comm rebuilt = TORI_COMM_NULL;
    group->rebuild_started_ns = tori_now_ns(); /* the revoke is part of the recovery */
    if (revoke && tori_comm_revoke(group->comm) != TORI_OK)
        return false;
    if (tori_comm_rebuild(group->comm, &rebuilt) != TORI_OK)
        return false;
    group->rebuilt_ns = tori_now_ns();
    /* The old communicator goes (a node holds only a few, and a long job
     * recovers many times), unless it is WORLD; a spare's adopted one too.
     * One a failure left requests on (a halo exchange cut short) is tried
     * again at the next rebuild. */
    if (group->retired != TORI_COMM_NULL)
        (void)tori_comm_free(&group->retired);
    if (group->comm != TORI_COMM_WORLD && tori_comm_free(&group->comm) != TORI_OK)
        group->retired = group->comm;
    group->comm = rebuilt;
    return fill(group, true);
}

int app_recovery_resume(struct app_group *group, int64_t *values, uint32_t count)
{
    int error = tori_allreduce(group->comm, values, values, count, TORI_INT64, TORI_MAX);
    if (error == TORI_OK && group->rebuild_started_ns != 0) {
        static const char *const keys[] = {"rank", "size", "rebuild_ns", "resume_ns"};
        int64_t figures[] = {group->rank, group->size,
                             (int64_t)(group->rebuilt_ns - group->rebuild_started_ns),
                             (int64_t)(tori_now_ns() - group->rebuilt_ns)};
        tori_report("app-recovered", keys, figures, 4);
        group->rebuild_started_ns = group->rebuilt_ns = 0;
    }
    return error;
}
