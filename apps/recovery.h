/*
 * What the shipped applications do when a rank fails (issue 14), over
 * node/tori.h: the communicator they compute on (WORLD at first), its live
 * ranks, and the rebuild after a failure per the job's mode (the
 * communicator's: SHRINK renumbers the survivors, BLANK keeps the numbers
 * with gaps, REBUILD has a spare adopt each failed rank).  Afterwards every
 * member agrees on where to resume (app_recovery_resume), the adopting
 * spare included.
 */
#ifndef APPS_RECOVERY_H
#define APPS_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "node/tori.h"

#define APP_RECOVERY_MAX_GAPS 64

struct app_group {
    tori_comm comm;
    tori_comm retired;    /* a rebuilt communicator not freed yet (requests left on it) */
    uint32_t rank, size;  /* in comm */
    uint32_t gaps[APP_RECOVERY_MAX_GAPS]; /* BLANK: failed ranks, ascending */
    uint32_t gap_count;
    uint32_t live;        /* size - gap_count */
    uint32_t index;       /* this rank's place among the live ranks */
    bool adopted;         /* this node is a spare that took a failed rank */
    /* The last rebuild on this node's clock (tori_now_ns), for the
     * app-recovered event; 0: none since the last resume. */
    uint64_t rebuild_started_ns, rebuilt_ns;
};

/* The group to start on: WORLD, or a spare's adopted communicator (it
 * blocks until a rebuild adopts it).  False after an error. */
bool app_group_start(struct app_group *group);

/* True when error is a failure the job's mode lets the application go on
 * after (not an abort, not a programming error). */
bool app_failure(int error);

/*
 * Rebuilds group->comm after a failure and refills the group (under
 * REBUILD with no spare left, the failed rank stays a gap, as under
 * BLANK).  revoke: revoke group->comm first (ULFM's idiom), for an
 * application whose members may wait on one another point to point: a
 * failure that reaches only some of them (under CONT, or before the others
 * learn it) would otherwise leave the rest blocked on live peers gone to
 * rebuild; REVOKED wakes them and sends them to the rebuild too.  An
 * application of collectives only needs none: a collective fails at every
 * member alike.  The old communicator is freed (not WORLD).  False when
 * the revoke or the rebuild failed: its app-error names the call.
 */
bool app_group_rebuild(struct app_group *group, bool revoke);

/*
 * After a (re)start on group: every member's values[0..count) combined by
 * MAX, so that survivors hand their resume point (iteration, digest, ...)
 * to an adopting spare, which offers zeros (an application that starts
 * again from the beginning offers zeros everywhere: the call then holds
 * the members until all are back).  Every application calls it after each
 * rebuild, and an adopting spare once it starts.  After a rebuild, its
 * success reports `app-recovered` (rank, size, rebuild_ns:
 * app_group_rebuild's duration, its revoke included; resume_ns: this
 * call's), both on the node's own clock:
 * ./tori bench recovery times the phases from it.
 */
int app_recovery_resume(struct app_group *group, int64_t *values, uint32_t count);

#endif /* APPS_RECOVERY_H */
