/*
 * The simulator's model applications: allreduce and stencil as small state
 * machines over one node's comm core (comm/comm.h), computing with the very
 * same kernels as the real applications (apps/kernels.h), so that their
 * digests are the ones a torus of nodes reports.  No threads: a model
 * issues non-blocking requests and advances when they complete
 * (sim_app_advance after every call into the node's core).
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

/* --iterations: the default and the bound (tori-emu's bound). */
#define SIM_APP_DEFAULT_ITERATIONS 10u
#define SIM_APP_MAX_ITERATIONS 1000000u

enum sim_app_kind { SIM_APP_NONE = 0, SIM_APP_ALLREDUCE, SIM_APP_STENCIL };

struct sim_app_params {
    enum sim_app_kind kind;
    uint32_t iterations;
    int64_t arg[4];     /* as the job block's: 0 means the application's default */
    uint32_t torus_x;   /* the torus's first two sizes (stencil's process grid) */
    uint32_t torus_y;
};

enum sim_app_state { SIM_APP_IDLE = 0, SIM_APP_RUNNING, SIM_APP_DONE, SIM_APP_FAILED };

/* One rank's model application. */
struct sim_app {
    uint8_t state;        /* enum sim_app_state */
    uint8_t phase;
    uint32_t rank;
    uint32_t size;
    uint32_t iteration;   /* the one under way (1-based) */
    uint32_t requests[SIM_APP_REQUESTS];
    uint32_t pending;     /* bit i: requests[i] not complete yet */
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
    uint64_t *checksums;  /* rank 0: every rank's */
    uint64_t verdict[2];
};

/* The stencil's block edge and check interval from the arguments
 * (defaults 4 and 10, as apps/stencil.c); false when out of range. */
bool sim_app_stencil_args(const struct sim_app_params *params, uint32_t *edge,
                          int64_t *check_every);

const char *sim_app_name(enum sim_app_kind kind);

/* Starts rank's model (its comm core holds its first view).  False when out
 * of memory. */
bool sim_app_start(struct sim_app *app, const struct sim_app_params *params, uint32_t rank,
                   uint32_t size, struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);

/* Advances the model as far as its completed requests let it. */
void sim_app_advance(struct sim_app *app, const struct sim_app_params *params, struct comm *ctx,
                     uint64_t now_ns, struct comm_outbox *out);

void sim_app_free(struct sim_app *app);

#endif /* SIM_SIM_APP_H */
