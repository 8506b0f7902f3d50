/*
 * The simulator's model applications: allreduce and stencil as small state
 * machines over one node's comm core (comm/comm.h), computing with the very
 * same kernels as the real applications (apps/kernels.h), so that their
 * digests are the ones a torus of nodes reports.  No threads: a model
 * issues non-blocking requests and advances when they complete
 * (sim_app_advance after every call into the node's core).
 *
 * After a failure (issue 14, a communicator mode other than ABORT) a model
 * recovers as apps/recovery.c does: it rebuilds the communicator it
 * computes on, then (a step of the model's own, so the simulator can check
 * agree's uniformity) agrees on its verdict so far, and resumes: the
 * allreduce at the failed iteration after a MAX allreduce of the resume
 * point (an adopting spare offers zeros), the stencil from iteration 0 on
 * the new group's live ranks.  Every collective's outcome is logged for the
 * simulator's invariant checks (sim/sim_ft.h).
 */
#ifndef SIM_SIM_APP_H
#define SIM_SIM_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "apps/kernels.h"
#include "comm/comm.h"
#include "comm/outbox.h"
#include "config/tori_config.h"

/* The model's own requests in flight at once (the stencil's halo exchange:
 * 6 receives and 6 sends); the simulator's comm build must hold them. */
#define SIM_APP_REQUESTS 12u
_Static_assert(CONFIG_COMM_MAX_REQUESTS >= SIM_APP_REQUESTS,
               "the simulator's comm core must hold a model application's requests");

/* A BLANK group's gaps the model follows (apps/recovery.h's bound). */
#define SIM_APP_MAX_GAPS 64u
/* Collective outcomes logged between two looks by the simulator. */
#define SIM_APP_OUTCOMES 16u

/* --iterations: the default and the bound (tori-emu's bound). */
#define SIM_APP_DEFAULT_ITERATIONS 10u
#define SIM_APP_MAX_ITERATIONS 1000000u

enum sim_app_kind { SIM_APP_NONE = 0, SIM_APP_ALLREDUCE, SIM_APP_STENCIL };

/*
 * The stencil's checkpoints in the simulator (--checkpoint-every K): every
 * K iterations each rank's block, total and verdict so far, the two newest
 * per rank, in one table of the simulator (what the nodes keep in their
 * stores and their buddies' between them: the simulator keeps it whole).
 * A rebuild resumes every rank from the newest iteration all ranks saved,
 * agreed once per rebuilt view.
 */
struct sim_checkpoint {
    uint32_t iteration; /* 0: none */
    uint32_t live;      /* the group's live ranks when saved (its shape) */
    int64_t total;
    bool ok;
    int64_t *cells;
};

struct sim_checkpoints {
    uint32_t ranks;
    size_t cells;                 /* per block */
    struct sim_checkpoint *slots; /* [ranks][2], by iteration / K parity */
    uint64_t resume_epoch;        /* the rebuilt view the resume point is for */
    uint32_t resume_iteration;    /* 0: from the beginning */
};

bool sim_checkpoints_init(struct sim_checkpoints *table, uint32_t ranks, size_t cells);
void sim_checkpoints_free(struct sim_checkpoints *table);

struct sim_app_params {
    enum sim_app_kind kind;
    uint32_t iterations;
    int64_t arg[4];     /* as the job block's: 0 means the application's default */
    uint32_t torus_x;   /* the torus's first two sizes (stencil's process grid) */
    uint32_t torus_y;
    uint8_t comm_mode;  /* enum comm_mode: ABORT ends the job, the others recover */
    uint8_t msg_mode;   /* enum comm_msg_mode */
    uint32_t checkpoint_every;           /* stencil: K, 0 none */
    struct sim_checkpoints *checkpoints; /* the simulator's table (K != 0) */
    /* RESTART: a rebuild waits this long for a failed rank's node that the
     * root decided to restart to be back, so that it takes its rank back. */
    uint64_t restart_grace_ns;
    /* A collective, agree or rebuild whose start the core refused BUSY
     * while that can clear (comm_busy_clears) is started again at the
     * model's next steps for this long (node/tori.c's BUSY_GRACE), then
     * fails BUSY.  0: never retried. */
    uint64_t busy_grace_ns;
};

/* The start of the collective (or rebuild) in request 0, kept to be made
 * again while the core refuses it BUSY (node/tori.c's struct start). */
enum sim_app_start_kind {
    SIM_APP_START_NONE = 0,
    SIM_APP_START_ALLREDUCE,
    SIM_APP_START_AGREE,
    SIM_APP_START_GATHER,
    SIM_APP_START_BCAST,
    SIM_APP_START_REBUILD,
};
struct sim_app_start {
    uint8_t kind;      /* enum sim_app_start_kind */
    uint8_t type;      /* allreduce: enum comm_type */
    uint8_t op;        /* allreduce: enum comm_op */
    uint32_t root;     /* gather, bcast */
    uint32_t count;    /* allreduce: elements; gather: block; bcast: bytes */
    const void *send;  /* allreduce, gather */
    void *recv;        /* allreduce, gather; bcast's buffer */
    uint32_t *flag;    /* agree */
    const char *call;  /* for a failure */
};

enum sim_app_collective {
    SIM_APP_COLL_NONE = 0,
    SIM_APP_COLL_ALLREDUCE, /* strict: one result or one error everywhere */
    SIM_APP_COLL_GATHER,    /* strict: its outcome only (the data is the root's) */
    SIM_APP_COLL_BCAST,     /* not strict: every OK has the root's bytes */
    SIM_APP_COLL_AGREE,     /* uniform: one flag and one error everywhere */
};

/* One completed collective: which (the communicator's epoch, 0 for WORLD,
 * and its collective number there), its outcome and its result's hash. */
struct sim_app_outcome {
    uint64_t epoch;
    uint32_t seq;
    uint8_t kind;  /* enum sim_app_collective */
    uint8_t error; /* enum comm_error */
    uint64_t hash; /* of the result (OK only; gather: 0) */
};

enum sim_app_state { SIM_APP_IDLE = 0, SIM_APP_RUNNING, SIM_APP_DONE, SIM_APP_FAILED };
/* Where a recovering model is (NONE: computing). */
enum sim_app_stage { SIM_APP_COMPUTE = 0, SIM_APP_ADOPT, SIM_APP_REBUILD, SIM_APP_AGREE,
                     SIM_APP_AWAIT /* a restarted rank's node, before the rebuild */ };

/* One rank's model application. */
struct sim_app {
    uint8_t state;        /* enum sim_app_state */
    uint8_t phase;
    uint8_t stage;        /* enum sim_app_stage */
    uint32_t rank;        /* in comm */
    uint32_t size;
    uint32_t iteration;   /* the one under way (1-based) */
    uint32_t requests[SIM_APP_REQUESTS];
    uint32_t pending;     /* bit i: requests[i] not complete yet */
    uint32_t stale[SIM_APP_REQUESTS]; /* requests a failure left behind, released */
    uint32_t stale_pending;           /* as they complete (their results unused) */
    /* the group computed on (apps/recovery.h's struct app_group) */
    uint32_t comm;        /* COMM_WORLD, then each rebuild's */
    uint32_t made;        /* what the rebuild or adoption under way makes */
    uint32_t old_comm;    /* a rebuilt communicator not freed yet (requests left on it) */
    uint32_t gaps[SIM_APP_MAX_GAPS];
    uint32_t gap_count;
    uint32_t live;        /* size - gap_count */
    uint32_t index;       /* this rank's place among the live ranks */
    bool adopted;         /* a spare (or a restarted node) that took a failed rank */
    uint32_t restored;    /* stencil: the checkpoint's iteration it last resumed from */
    uint64_t await_until; /* SIM_APP_AWAIT: the grace's end */
    uint64_t await_live_at; /* ... and the settling's, once the nodes are back (0: not yet) */
    bool resume;          /* allreduce: the resume point is agreed next */
    bool map_checked;     /* the simulator checked comm's rank map */
    uint32_t rebuilds;    /* rebuilds started */
    /* A rebuild started since the simulator last looked (--recovery-kills
     * draws then: the rebuild may complete in the call itself), and the
     * epoch of the communicator it rebuilds (1: WORLD). */
    bool rebuild_began;
    uint64_t rebuild_epoch;
    /* The first recovery's virtual times (0: not reached): the failure
     * reached the model (its rebuild began), the rebuild completed, the
     * model resumed (allreduce: the resume point agreed; stencil: the
     * agree done).  What `./tori bench recovery` times. */
    uint64_t noticed_ns;
    uint64_t rebuilt_ns;
    uint64_t resumed_ns;
    uint32_t agree_flag;
    int64_t point[3];     /* allreduce's resume point: iteration, digest, failed */
    /* the collective in flight (request 0) and the outcomes not yet looked at */
    uint8_t coll_kind;    /* enum sim_app_collective */
    uint32_t coll_seq;    /* collectives completed on comm */
    const void *coll_result;
    uint32_t coll_bytes;
    struct sim_app_outcome outcomes[SIM_APP_OUTCOMES];
    uint32_t outcome_count;
    struct sim_app_start start; /* the last start made */
    bool retrying;        /* start refused BUSY: made again at the next steps */
    uint64_t busy_until;  /* ... until then (params busy_grace_ns) */
    bool ok;              /* every check so far */
    uint32_t crc;
    uint64_t start_ns;
    uint64_t done_ns;
    /* the result (DONE) or the failure (FAILED) */
    uint64_t digest;
    uint32_t iterations_done;
    const char *failed_call;
    enum comm_error error;
    bool wrong_total;     /* an allreduce gave another value than the closed form */
    uint32_t wrong_iteration;
    /* allreduce */
    struct allreduce_values in;
    struct allreduce_values out;
    /* stencil */
    struct stencil_shape shape;
    int64_t check_every;
    unsigned current;
    int64_t *cells[2];
    int64_t *face_out;    /* 6 faces of edge x edge */
    int64_t *face_in;
    int64_t total;
    int64_t local[2];
    int64_t sums[2];
    uint64_t checksum;
    uint64_t *checksums;  /* the first live rank: every rank's (size of them) */
    uint32_t checksums_size;
    int64_t **retired;    /* face buffers a failure left to stale requests */
    uint32_t retired_count;
    uint64_t verdict[2];
};

/* The stencil's block edge and check interval from the arguments
 * (defaults 4 and 10, as apps/stencil.c); false when out of range. */
bool sim_app_stencil_args(const struct sim_app_params *params, uint32_t *edge,
                          int64_t *check_every);

const char *sim_app_name(enum sim_app_kind kind);

/* Starts rank's model (its comm core holds its first view); spare: a node
 * outside WORLD that waits for a REBUILD to adopt it.  False when out of
 * memory. */
bool sim_app_start(struct sim_app *app, const struct sim_app_params *params, bool spare,
                   struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);

/* Advances the model as far as its completed requests let it. */
void sim_app_advance(struct sim_app *app, const struct sim_app_params *params, struct comm *ctx,
                     uint64_t now_ns, struct comm_outbox *out);

/* When the model must be advanced though nothing arrives (waiting for a
 * restarted rank's node: the grace or the settling ends); UINT64_MAX: never. */
uint64_t sim_app_next_deadline(const struct sim_app *app);

void sim_app_free(struct sim_app *app);

#endif /* SIM_SIM_APP_H */
