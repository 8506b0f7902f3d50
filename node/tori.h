/*
 * The application API of a tori node: what an application (apps/) calls to
 * learn its rank, talk to other ranks and keep the node alive.  A thin,
 * blocking layer over the communication core (comm/comm.h).
 *
 * There are no threads and no interrupts: the node's runtime (torus links,
 * membership heartbeats, retransmissions) advances only inside these calls.
 * A blocking call runs the node's poll loop until its request completes; a
 * long computation must call tori_progress() (or tori_iteration_done()) at
 * least every few milliseconds, or the node emits `starved` and, past the
 * detector's timeout, its neighbours take it for dead.
 *
 * Every call returns TORI_OK (0) or an error (tori_error_text names it; the
 * values are comm/comm.h's enum comm_error); a failing call also emits an
 * `app-error` event naming the call and the error (a collective's also
 * its number among the collectives called on its communicator, the same on
 * every rank).  Buffers belong to the
 * application; a non-blocking call keeps its buffer until the request
 * completes.  Communicators and requests are handles (TORI_COMM_WORLD: the
 * initial view's compute nodes, rank = node id).
 */
#ifndef NODE_TORI_H
#define NODE_TORI_H

#include <stdbool.h>
#include <stdint.h>

#define TORI_OK 0
/* The failure errors (comm/comm.h's enum comm_error, checked in tori.c),
 * and the job's end: every call after an ABORT communicator failed. */
#define TORI_ERR_PROC_FAILED 11
#define TORI_ERR_REVOKED 14
#define TORI_ERR_INVALID_RANK 15
/* A recovery call (rebuild, shrink, agree, revoke, failure_ack) or a mode
 * but ABORT on an image built with CONFIG_COMM_FT 0. */
#define TORI_ERR_UNSUPPORTED 16
#define TORI_ERR_ABORTED 64
/* Checkpoints (issue 15): nothing to restore; a round that failed. */
#define TORI_ERR_NO_CHECKPOINT 65
#define TORI_ERR_CHECKPOINT 66
/* tori_comm_free: WORLD is never freed; requests still pending on it. */
#define TORI_ERR_FREE_WORLD 67
#define TORI_ERR_FREE_PENDING 68
#define TORI_COMM_WORLD 0x100u        /* comm/comm.h COMM_WORLD */
#define TORI_COMM_NULL 0u             /* split with TORI_UNDEFINED */
#define TORI_UNDEFINED (-1)
#define TORI_ANY_SOURCE UINT32_MAX
#define TORI_ANY_TAG (-1)
#define TORI_TAG_MAX 32767 /* application tags are 0..TORI_TAG_MAX */
#define TORI_REQUEST_NULL 0u
#define TORI_APP_ARGS 4

typedef uint32_t tori_comm;
typedef uint32_t tori_request;

enum tori_type { TORI_INT64 = 0, TORI_DOUBLE = 1 };
enum tori_op { TORI_SUM = 0, TORI_MIN = 1, TORI_MAX = 2 };

/* A completed receive: who sent it, its tag and its length. */
struct tori_status {
    int error;
    uint32_t source;
    int32_t tag;
    uint32_t count;
};

/* What the job gives the application. */
struct tori_args {
    uint32_t iterations;
    int64_t arg[TORI_APP_ARGS];
};

/* What the application returns: the node reports it as `app-result`. */
struct tori_result {
    bool ok;          /* its answer matched the closed form or reference */
    uint64_t digest;  /* of its result: equal on every rank and every board */
    uint32_t iterations; /* done */
};

/* The torus the job runs on: its shape and this node's coordinates
 * (dimension 0 fastest: the node id is the rank of the coordinates). */
#define TORI_MAX_DIMS 6
struct tori_torus {
    uint32_t dims;
    uint32_t size[TORI_MAX_DIMS];
    uint32_t coord[TORI_MAX_DIMS];
};
void tori_torus_shape(struct tori_torus *out);

/* ---- communicators ---- */
int tori_rank(tori_comm comm, uint32_t *rank);
int tori_size(tori_comm comm, uint32_t *size);
/* Collective: a new communicator with the same members. */
int tori_comm_dup(tori_comm comm, tori_comm *out);
/* Collective: the ranks of each color, ordered by (key, rank); color
 * TORI_UNDEFINED gives TORI_COMM_NULL. */
int tori_comm_split(tori_comm comm, int32_t color, int32_t key, tori_comm *out);
/* Local (MPI_Comm_free): releases *comm and sets it to TORI_COMM_NULL.
 * TORI_ERR_FREE_WORLD for TORI_COMM_WORLD, TORI_ERR_FREE_PENDING while a
 * request of the application on it is pending (wait for them first).
 * Safe after a failure: the old communicator of a rebuild may be freed as
 * soon as the rebuild returns (members still in its round are served from
 * inside the runtime, and its late frames never reach a later
 * communicator); a job that recovers many times must free them, as only
 * a few communicators fit a node. */
int tori_comm_free(tori_comm *comm);

/* ---- failures (issue 14: FT-MPI modes, ULFM operations) ----
 * A view change that removes a member turns every communicator holding it
 * DETECTED.  Then, per the communicator's mode (the job's --comm-mode by
 * default): ABORT ends the job (app-abort on every node; every call
 * returns TORI_ERR_ABORTED); BLANK, SHRINK and REBUILD return
 * TORI_ERR_PROC_FAILED (NOP: from every call until the rebuild; CONT: from
 * calls naming a failed rank) and the application rebuilds. */
enum tori_comm_mode { TORI_MODE_ABORT = 0, TORI_MODE_BLANK, TORI_MODE_SHRINK, TORI_MODE_REBUILD };
enum tori_msg_mode { TORI_MSG_NOP = 0, TORI_MSG_CONT };
enum tori_comm_state { TORI_STATE_OK = 0, TORI_STATE_DETECTED, TORI_STATE_RECOVERED,
                       TORI_STATE_FAILED };

/* What a spare's application starts as (REBUILD). */
struct tori_adoption {
    bool adopted;     /* false: a WORLD rank, not a spare */
    tori_comm comm;   /* the rebuilt communicator it joined */
    uint32_t rank;    /* the failed rank it took */
};

int tori_comm_set_mode(tori_comm comm, enum tori_comm_mode mode, enum tori_msg_mode msg_mode);
enum tori_comm_state tori_comm_state(tori_comm comm);
/* Collective on a failed communicator: the new one per its mode.  It and
 * tori_comm_shrink begin with an `app-rebuild` event (the fault injectors'
 * "at recovery" fires on it). */
int tori_comm_rebuild(tori_comm comm, tori_comm *out);
/* Collective: the survivors, contiguous, whatever the mode (ULFM shrink). */
int tori_comm_shrink(tori_comm comm, tori_comm *out);
/* Every pending and future operation on comm, on every rank, fails with
 * TORI_ERR_REVOKED but rebuild, shrink, agree and failure_ack. */
int tori_comm_revoke(tori_comm comm);
/* Collective: the AND of *flag over the survivors, the same on each. */
int tori_comm_agree(tori_comm comm, uint32_t *flag);
int tori_comm_failure_ack(tori_comm comm);
/* The failed ranks in rank order (at most max; *count: all) and the epoch
 * of the view that removed the last. */
int tori_comm_failed_ranks(tori_comm comm, uint32_t *ranks, uint32_t max, uint32_t *count,
                           uint64_t *epoch);
/* The handler runs inside the application's next call after a failure
 * (never from the runtime's poll loop), or inside the call that failed;
 * NULL: errors are only returned. */
typedef void (*tori_error_handler)(tori_comm comm, int error);
void tori_set_error_handler(tori_error_handler handler);
/* A spare's application (REBUILD): blocks until a rebuild adopts this
 * node (adopted true; a spare expelled meanwhile waits again once it has
 * rejoined) or returns at once on a WORLD rank (false). */
int tori_adopted(struct tori_adoption *out);

/* ---- point-to-point (tags 0..32767; source may be TORI_ANY_SOURCE,
 * tag TORI_ANY_TAG) ---- */
int tori_isend(tori_comm comm, uint32_t dest, int32_t tag, const void *buffer,
               uint32_t length, tori_request *request);
int tori_irecv(tori_comm comm, uint32_t source, int32_t tag, void *buffer, uint32_t capacity,
               tori_request *request);
/* Polls once; *done tells whether the request completed (then it is
 * released, *request becomes TORI_REQUEST_NULL and status is filled). */
int tori_test(tori_request *request, bool *done, struct tori_status *status);
/* Runs the node until the request completes. status may be NULL. */
int tori_wait(tori_request *request, struct tori_status *status);
int tori_send(tori_comm comm, uint32_t dest, int32_t tag, const void *buffer, uint32_t length);
int tori_recv(tori_comm comm, uint32_t source, int32_t tag, void *buffer, uint32_t capacity,
              struct tori_status *status);

/* ---- collectives (every rank of comm calls them in the same order) ---- */
int tori_barrier(tori_comm comm);
int tori_bcast(tori_comm comm, uint32_t root, void *buffer, uint32_t length);
/* count 8-byte elements; recv only at the root; send may equal recv. */
int tori_reduce(tori_comm comm, uint32_t root, const void *send, void *recv, uint32_t count,
                enum tori_type type, enum tori_op op);
int tori_allreduce(tori_comm comm, const void *send, void *recv, uint32_t count,
                   enum tori_type type, enum tori_op op);
/* block bytes from every rank into recv (size x block) in rank order. */
int tori_gather(tori_comm comm, uint32_t root, const void *send, uint32_t block, void *recv);
int tori_allgather(tori_comm comm, const void *send, uint32_t block, void *recv);

/* ---- coordinated checkpoints (issue 15; ABARIS) ----
 * The application registers how to save and load its state; the runtime
 * keeps the last two complete checkpoints of every rank in the node's
 * checkpoint store, each with a copy at the rank's buddy (a torus
 * neighbour), so that a rank lost with its node resumes elsewhere.
 *
 * save writes the state (at most capacity bytes) and returns its length;
 * load takes it back and returns TORI_OK or an error.  Both run inside
 * tori_checkpoint / tori_restore, never from the poll loop. */
typedef uint32_t (*tori_save_fn)(void *context, void *out, uint32_t capacity);
typedef int (*tori_load_fn)(void *context, const void *data, uint32_t length);
int tori_checkpoint_register(tori_save_fn save, tori_load_fn load, void *context);
/* The most bytes save may write on this node. */
uint32_t tori_checkpoint_capacity(void);
/*
 * Collective on comm, called by every rank after each iteration (done:
 * iterations completed); returns TORI_OK at once unless the job's
 * checkpoint interval divides done.  Then a round: every rank has
 * completed its sends (a send completes when its receiver acknowledged
 * it, so no message of the application is in flight: call it with none of
 * yours pending), saves, sends the copy to its buddy and keeps its ward's;
 * an allreduce commits the generation at every rank or at none.  A failure
 * during the round returns the failure's error and leaves the previous
 * checkpoint valid; TORI_ERR_CHECKPOINT when a copy did not verify.
 * Emits `checkpoint`.
 */
int tori_checkpoint(tori_comm comm, uint32_t done);
/*
 * Collective on comm, after a start or a rebuild, by every rank (survivors,
 * a restarted node, an adopting spare): the newest checkpoint every rank
 * completed, loaded through the registered load; *done its iteration.  A
 * rank that lacks it locally gets its buddy's copy (a reset QEMU node
 * still holds its own: zero bytes move).  TORI_ERR_NO_CHECKPOINT at every
 * rank when there is none or a needed copy is lost: start from the
 * beginning.  Emits `restore`.  Communicators whose ranks survive a
 * rebuild (REBUILD, BLANK) only: SHRINK renumbers the ranks.
 */
int tori_restore(tori_comm comm, uint32_t *done);

/* ---- the runtime ---- */
/* Lets the node run once (links, membership, retransmissions). */
void tori_progress(void);
/* After iteration `done` (1-based): tori_progress(), and an `app-progress`
 * event every progress interval of the job. */
void tori_iteration_done(uint32_t done);
/* The node's clock, in nanoseconds. */
uint64_t tori_now_ns(void);
/* The epoch of the membership view this node's communication layer holds
 * (every frame it sends carries it; 0: none, e.g. after an expulsion). */
uint64_t tori_view_epoch(void);
/* Writes one `app-NAME` event line with integer fields (keys: bare words). */
void tori_report(const char *name, const char *const *keys, const int64_t *values,
                 unsigned count);
const char *tori_error_text(int error);

/* ---- the applications shipped in apps/ (the job selects one) ---- */
struct tori_result tori_app_allreduce(const struct tori_args *args);
struct tori_result tori_app_stencil(const struct tori_args *args);
struct tori_result tori_app_pingpong(const struct tori_args *args);

#endif /* NODE_TORI_H */
