/*
 * The model applications (see sim_app.h).  Each is a program of phases; a
 * phase issues non-blocking requests and the next runs when they have all
 * completed.  The checks are the real applications': the allreduce's closed
 * forms, the stencil's conserved sum and serial reference (here at every
 * size the host can afford, not only up to the node's reference table).
 * Recovery (issue 14) follows apps/recovery.c and apps/allreduce.c,
 * stencil.c step for step; the group's arithmetic is apps/kernels.h's.
 */
#include "sim/sim_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/tori_config.h"

/* The serial reference runs at rank 0 up to this many grid points (two
 * grids of 8-byte values: 32 MiB). */
#define SIM_STENCIL_REFERENCE_POINTS (1u << 21)

enum allreduce_phase { AR_SUMS = 0, AR_MAX, AR_HALF, AR_CHECK, AR_RESUMED, AR_AGREED };
enum stencil_phase {
    ST_TOTAL = 0,  /* the initial sum, allreduced */
    ST_EXCHANGE,   /* post the halo exchange, or go to the gather */
    ST_RELAX,      /* halos in; one step; maybe the conservation check */
    ST_CHECKED,    /* the check's sums are in */
    ST_GATHER,     /* block checksums to rank 0 */
    ST_VERDICT,    /* rank 0 checks; the verdict and digest broadcast */
    ST_RESULT,
};

const char *sim_app_name(enum sim_app_kind kind)
{
    switch (kind) {
    case SIM_APP_ALLREDUCE:
        return "allreduce";
    case SIM_APP_STENCIL:
        return "stencil";
    default:
        return "none";
    }
}

bool sim_app_stencil_args(const struct sim_app_params *params, uint32_t *edge,
                          int64_t *check_every)
{
    int64_t e = params->arg[0] == 0 ? STENCIL_DEFAULT_EDGE : params->arg[0];
    int64_t c = params->arg[1] == 0 ? STENCIL_DEFAULT_CHECK_EVERY : params->arg[1];
    if (e < 1 || e > CONFIG_APP_STENCIL_MAX_EDGE || c < 1)
        return false;
    *edge = (uint32_t)e;
    *check_every = c;
    return true;
}

static void fail(struct sim_app *app, const char *call, enum comm_error error, uint64_t now_ns)
{
    app->state = SIM_APP_FAILED;
    app->failed_call = call;
    app->error = error;
    app->done_ns = now_ns;
}

static void out_of_memory(void)
{
    fprintf(stderr, "tori-sim: out of memory for the model application\n");
    exit(1);
}

/* FNV-1a: a result's bytes, compared across ranks by the simulator. */
static uint64_t hash_bytes(const void *bytes, uint32_t length)
{
    const uint8_t *p = bytes;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (uint32_t i = 0; i < length; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* Records request i of a call (false when the call failed at once); a
 * start being retried (request 0) is pending only once the core took it. */
static bool issued(struct sim_app *app, unsigned i, enum comm_error error, const char *call,
                   uint64_t now_ns)
{
    if (error != COMM_ERR_OK) {
        fail(app, call, error, now_ns);
        return false;
    }
    if (i != 0 || !app->retrying)
        app->pending |= 1u << i;
    return true;
}

/* app->start made once, into request 0. */
static enum comm_error start_once(struct sim_app *app, struct comm *ctx, uint64_t now_ns,
                                  struct comm_outbox *out)
{
    const struct sim_app_start *s = &app->start;
    uint32_t *r = &app->requests[0];
    switch (s->kind) {
    case SIM_APP_START_ALLREDUCE:
        return comm_iallreduce(ctx, app->comm, s->send, s->recv, s->count,
                               (enum comm_type)s->type, (enum comm_op)s->op, now_ns, out, r);
    case SIM_APP_START_AGREE:
        return comm_iagree(ctx, app->comm, s->flag, now_ns, out, r);
    case SIM_APP_START_GATHER:
        return comm_igather(ctx, app->comm, s->root, s->send, s->count, s->recv, now_ns, out, r);
    case SIM_APP_START_BCAST:
        return comm_ibcast(ctx, app->comm, s->root, s->recv, s->count, now_ns, out, r);
    case SIM_APP_START_REBUILD:
        return comm_irebuild(ctx, app->comm, now_ns, out, &app->made, r);
    default:
        return COMM_ERR_ARG;
    }
}

/*
 * node/tori.c's start: a start the core refuses BUSY while that can clear
 * (its collective slots or its one creation held by its own work) is made
 * again at the model's next steps (retry_start), up to busy_grace_ns; it
 * then counts as issued (COMM_ERR_OK) with nothing pending yet.
 */
static enum comm_error begin(struct sim_app *app, const struct sim_app_params *params,
                             struct comm *ctx, uint64_t now_ns, struct comm_outbox *out,
                             const struct sim_app_start *start)
{
    app->start = *start;
    app->retrying = false;
    enum comm_error error = start_once(app, ctx, now_ns, out);
    if (error == COMM_ERR_BUSY && params->busy_grace_ns != 0 && comm_busy_clears(ctx)) {
        app->retrying = true;
        app->busy_until = now_ns + params->busy_grace_ns;
        return COMM_ERR_OK;
    }
    return error;
}

static enum comm_error begin_allreduce(struct sim_app *app, const struct sim_app_params *params,
                                       struct comm *ctx, uint64_t now_ns,
                                       struct comm_outbox *out, const void *send, void *recv,
                                       uint32_t count, enum comm_type type, enum comm_op op)
{
    const struct sim_app_start s = {.kind = SIM_APP_START_ALLREDUCE,
                                    .type = (uint8_t)type,
                                    .op = (uint8_t)op,
                                    .count = count,
                                    .send = send,
                                    .recv = recv,
                                    .call = "allreduce"};
    return begin(app, params, ctx, now_ns, out, &s);
}

static enum comm_error begin_agree(struct sim_app *app, const struct sim_app_params *params,
                                   struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    const struct sim_app_start s = {
        .kind = SIM_APP_START_AGREE, .flag = &app->agree_flag, .call = "agree"};
    return begin(app, params, ctx, now_ns, out, &s);
}

/* A collective as request 0: its outcome is logged when it completes. */
static bool collective(struct sim_app *app, enum sim_app_collective kind, enum comm_error error,
                       const void *result, uint32_t bytes, const char *call, uint64_t now_ns)
{
    app->coll_kind = (uint8_t)kind;
    app->coll_result = result;
    app->coll_bytes = bytes;
    if (error != COMM_ERR_OK)
        app->coll_kind = SIM_APP_COLL_NONE; /* refused at once: no outcome */
    return issued(app, 0, error, call, now_ns);
}

static void log_outcome(struct sim_app *app, const struct comm *ctx, enum comm_error error)
{
    if (app->outcome_count >= SIM_APP_OUTCOMES)
        abort(); /* the simulator looks after every advance */
    struct sim_app_outcome *o = &app->outcomes[app->outcome_count++];
    o->epoch = app->comm == COMM_WORLD ? 0 : comm_epoch_of(ctx, app->comm);
    o->seq = app->coll_seq++;
    o->kind = app->coll_kind;
    o->error = (uint8_t)error;
    o->hash = error == COMM_ERR_OK && app->coll_kind != SIM_APP_COLL_GATHER
                  ? hash_bytes(app->coll_result, app->coll_bytes)
                  : 0;
    app->coll_kind = SIM_APP_COLL_NONE;
}

static void finish(struct sim_app *app, bool ok, uint64_t digest, uint64_t now_ns)
{
    app->state = SIM_APP_DONE;
    app->ok = ok;
    app->digest = digest;
    app->done_ns = now_ns;
}

/* The group after a (re)start (apps/recovery.c's fill): rank, size, and a
 * rebuilt communicator's gaps.  False when it has more than the model follows. */
static bool fill_group(struct sim_app *app, const struct comm *ctx, bool rebuilt)
{
    app->rank = comm_rank(ctx, app->comm);
    app->size = comm_size(ctx, app->comm);
    app->gap_count = 0;
    uint32_t count = 0;
    uint64_t epoch = 0;
    if (rebuilt && comm_failed_ranks(ctx, app->comm, app->gaps, SIM_APP_MAX_GAPS, &count,
                                     &epoch) == COMM_ERR_OK) {
        if (count > SIM_APP_MAX_GAPS)
            return false;
        app->gap_count = count;
    }
    app->live = app->size - app->gap_count;
    app->index = group_live_index(app->gaps, app->gap_count, app->rank);
    app->map_checked = false;
    app->coll_seq = 0;
    return true;
}

/* Face buffers for the halo exchange; the old ones, which requests a
 * failure left behind may still read or write, are retired. */
static bool new_faces(struct sim_app *app)
{
    uint32_t edge = app->shape.edge;
    if (app->face_in != NULL) {
        int64_t **grown = realloc(app->retired, (app->retired_count + 2) * sizeof *grown);
        if (grown == NULL)
            return false;
        app->retired = grown;
        app->retired[app->retired_count++] = app->face_in;
        app->retired[app->retired_count++] = app->face_out;
    }
    app->face_out = calloc(6u * edge * edge, sizeof(int64_t));
    app->face_in = calloc(6u * edge * edge, sizeof(int64_t));
    return app->face_out != NULL && app->face_in != NULL;
}

bool sim_app_start(struct sim_app *app, const struct sim_app_params *params, bool spare,
                   struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    memset(app, 0, sizeof *app);
    app->state = SIM_APP_RUNNING;
    app->comm = COMM_WORLD;
    app->old_comm = COMM_NULL;
    app->iteration = 1;
    app->ok = true;
    app->start_ns = now_ns;
    if (!spare && !fill_group(app, ctx, false))
        return false;
    if (params->kind == SIM_APP_STENCIL) {
        uint32_t edge = 4;
        if (!sim_app_stencil_args(params, &edge, &app->check_every))
            return false; /* refused before the run */
        app->shape.edge = edge;
        size_t cells = stencil_block_cells(edge);
        app->cells[0] = calloc(cells, sizeof(int64_t));
        app->cells[1] = calloc(cells, sizeof(int64_t));
        if (app->cells[0] == NULL || app->cells[1] == NULL || !new_faces(app))
            return false;
    }
    if (spare) {
        /* apps/recovery.c's app_group_start: wait for an adoption */
        app->stage = SIM_APP_ADOPT;
        app->rank = COMM_RANK_NONE;
        if (!issued(app, 0, comm_iadopt(ctx, now_ns, out, &app->made, &app->requests[0]),
                    "adopt", now_ns))
            return true;
    }
    sim_app_advance(app, params, ctx, now_ns, out);
    return true;
}

bool sim_checkpoints_init(struct sim_checkpoints *table, uint32_t ranks, size_t cells)
{
    memset(table, 0, sizeof *table);
    table->slots = calloc((size_t)ranks * 2u, sizeof *table->slots);
    if (table->slots == NULL)
        return false;
    table->ranks = ranks;
    table->cells = cells;
    for (size_t i = 0; i < (size_t)ranks * 2u; i++) {
        table->slots[i].cells = calloc(cells, sizeof(int64_t));
        if (table->slots[i].cells == NULL)
            return false;
    }
    return true;
}

void sim_checkpoints_free(struct sim_checkpoints *table)
{
    for (size_t i = 0; table->slots != NULL && i < (size_t)table->ranks * 2u; i++)
        free(table->slots[i].cells);
    free(table->slots);
    memset(table, 0, sizeof *table);
}

/* After iteration `done`: every K of them the rank's state into its slot
 * of that parity (a rank whose group has gaps changes shape: none). */
static void save_checkpoint(const struct sim_app *app, const struct sim_app_params *params)
{
    struct sim_checkpoints *t = params->checkpoints;
    uint32_t k = params->checkpoint_every;
    uint32_t done = app->iterations_done;
    if (t == NULL || k == 0 || done % k != 0 || app->gap_count != 0 || app->rank >= t->ranks)
        return;
    struct sim_checkpoint *slot = &t->slots[app->rank * 2u + (done / k) % 2u];
    memcpy(slot->cells, app->cells[app->current], t->cells * sizeof(int64_t));
    slot->iteration = done;
    slot->live = app->live;
    slot->total = app->total;
    slot->ok = app->ok;
}

/* The slot of rank holding iteration, or NULL. */
static const struct sim_checkpoint *checkpoint_of(const struct sim_checkpoints *t, uint32_t rank,
                                                  uint32_t iteration)
{
    for (unsigned g = 0; g < 2u && iteration != 0; g++) {
        const struct sim_checkpoint *slot = &t->slots[rank * 2u + g];
        if (slot->iteration == iteration)
            return slot;
    }
    return NULL;
}

/* The rebuilt group's resume point: the newest iteration every rank saved
 * (with this group's shape), agreed once per view; 0: from the beginning. */
static uint32_t resume_point(const struct sim_app *app, const struct sim_app_params *params,
                             const struct comm *ctx)
{
    struct sim_checkpoints *t = params->checkpoints;
    if (t == NULL || app->gap_count != 0 || app->size > t->ranks)
        return 0;
    uint64_t epoch = comm_epoch_of(ctx, app->comm);
    if (t->resume_epoch != epoch) {
        uint32_t agreed = UINT32_MAX;
        for (uint32_t r = 0; r < app->size; r++) {
            const struct sim_checkpoint *s = &t->slots[r * 2u];
            uint32_t newest = 0;
            for (unsigned g = 0; g < 2u; g++)
                if (s[g].iteration > newest && s[g].live == app->live)
                    newest = s[g].iteration;
            agreed = newest < agreed ? newest : agreed;
        }
        for (uint32_t r = 0; r < app->size && agreed != 0; r++)
            if (checkpoint_of(t, r, agreed) == NULL)
                agreed = 0; /* a rank's copy of it was overwritten: none */
        t->resume_epoch = epoch;
        t->resume_iteration = agreed == UINT32_MAX ? 0 : agreed;
    }
    return t->resume_iteration;
}

/* The stencil resumes from the agreed checkpoint: false when there is none. */
static bool resume_stencil(struct sim_app *app, const struct sim_app_params *params,
                           const struct comm *ctx)
{
    uint32_t from = resume_point(app, params, ctx);
    const struct sim_checkpoint *slot =
        from != 0 ? checkpoint_of(params->checkpoints, app->rank, from) : NULL;
    if (slot == NULL)
        return false;
    stencil_shape_grid(app->index, app->live, app->shape.edge, params->torus_x, params->torus_y,
                       &app->shape);
    memcpy(app->cells[0], slot->cells, params->checkpoints->cells * sizeof(int64_t));
    app->current = 0;
    app->total = slot->total;
    app->ok = slot->ok;
    app->iterations_done = from;
    app->iteration = from + 1u;
    app->restored = from;
    app->phase = ST_EXCHANGE;
    return true;
}

void sim_app_free(struct sim_app *app)
{
    free(app->cells[0]);
    free(app->cells[1]);
    free(app->face_out);
    free(app->face_in);
    free(app->checksums);
    for (uint32_t i = 0; i < app->retired_count; i++)
        free(app->retired[i]);
    free(app->retired);
    app->retired = NULL;
    app->retired_count = 0;
    app->cells[0] = app->cells[1] = NULL;
    app->face_out = app->face_in = NULL;
    app->checksums = NULL;
}

/* apps/recovery.c's app_failure: errors the modes let a job go on after. */
static bool app_failure(enum comm_error error)
{
    return error == COMM_ERR_PROC_FAILED || error == COMM_ERR_REVOKED ||
           error == COMM_ERR_INVALID_RANK;
}

/*
 * A call failed with error: under ABORT (or an error no mode recovers
 * from) the model fails; otherwise what is still pending is left behind and
 * the rebuild starts (apps/recovery.c's app_group_rebuild).
 */
static void start_rebuild(struct sim_app *app, const struct sim_app_params *params,
                          struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    app->stage = SIM_APP_REBUILD;
    app->rebuild_began = true;
    app->rebuild_epoch = app->comm == COMM_WORLD ? 1 : comm_epoch_of(ctx, app->comm);
    const struct sim_app_start s = {.kind = SIM_APP_START_REBUILD, .call = "rebuild"};
    issued(app, 0, begin(app, params, ctx, now_ns, out, &s), "rebuild", now_ns);
}

/* Waiting for restarted nodes: each back, then a fifteenth of the grace
 * for its application to wait to adopt (node/tori.c gives two detector
 * timeouts), then the rebuild; the grace bounds it all. */
static bool await_step(struct sim_app *app, const struct sim_app_params *params,
                       struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    bool gone = comm_restart_awaited(ctx, app->comm, true);
    if (!gone && app->await_live_at == 0)
        app->await_live_at = now_ns + params->restart_grace_ns / 15u;
    if (now_ns < app->await_until && (gone || now_ns < app->await_live_at))
        return false;
    start_rebuild(app, params, ctx, now_ns, out);
    return true;
}

uint64_t sim_app_next_deadline(const struct sim_app *app)
{
    if (app->state == SIM_APP_RUNNING && app->retrying)
        return app->busy_until; /* the retries' end, if nothing frees the core first */
    if (app->state != SIM_APP_RUNNING || app->stage != SIM_APP_AWAIT)
        return UINT64_MAX;
    if (app->await_live_at != 0 && app->await_live_at < app->await_until)
        return app->await_live_at;
    return app->await_until;
}

static void recover(struct sim_app *app, const struct sim_app_params *params, struct comm *ctx,
                    const char *call, enum comm_error error, uint64_t now_ns,
                    struct comm_outbox *out)
{
    if (params->comm_mode == COMM_MODE_ABORT || !app_failure(error) ||
        app->stage == SIM_APP_REBUILD || app->stage == SIM_APP_ADOPT) {
        fail(app, call, error, now_ns);
        return;
    }
    bool left = false;
    for (unsigned i = 0; i < SIM_APP_REQUESTS; i++) {
        if (app->pending & (1u << i)) {
            app->stale[i] = app->requests[i];
            app->stale_pending |= 1u << i;
            left = true;
        }
    }
    app->pending = 0;
    app->retrying = false;
    app->coll_kind = SIM_APP_COLL_NONE;
    if (left && params->kind == SIM_APP_STENCIL && !new_faces(app)) {
        out_of_memory();
    }
    /* ULFM's idiom, as apps/stencil.c does: revoke first, so that a
     * rank blocked on a live peer that went to rebuild is woken (REVOKED)
     * and rebuilds too, instead of waiting for it forever. */
    if (params->kind == SIM_APP_STENCIL)
        comm_revoke(ctx, app->comm, now_ns, out);
    if (app->rebuilds == 0 && app->noticed_ns == 0)
        app->noticed_ns = now_ns;
    app->rebuilds++;
    if (params->restart_grace_ns != 0 && params->comm_mode == COMM_MODE_REBUILD &&
        comm_restart_awaited(ctx, app->comm, false)) {
        /* node/tori.c's await_restarts: the rank returns to its own node */
        app->stage = SIM_APP_AWAIT;
        app->await_until = now_ns + params->restart_grace_ns;
        app->await_live_at = 0;
        await_step(app, params, ctx, now_ns, out);
        return;
    }
    start_rebuild(app, params, ctx, now_ns, out);
}

/* Requests a failure left behind: released as they complete. */
static void release_stale(struct sim_app *app, struct comm *ctx)
{
    for (unsigned i = 0; i < SIM_APP_REQUESTS && app->stale_pending != 0; i++) {
        if ((app->stale_pending & (1u << i)) != 0 && comm_test(ctx, app->stale[i], NULL))
            app->stale_pending &= ~(1u << i);
    }
}

/* The rebuild (or the adoption) completed: its communicator is the group;
 * then (stencil) the agree and the resume, or (allreduce) the resume
 * allreduce and then the agree. */
static bool recovery_step(struct sim_app *app, const struct sim_app_params *params,
                          struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    if (app->stage == SIM_APP_AGREE) {
        app->stage = SIM_APP_COMPUTE;
        if (params->kind == SIM_APP_STENCIL && app->rebuilt_ns != 0 && app->resumed_ns == 0)
            app->resumed_ns = now_ns;
        if (params->kind == SIM_APP_ALLREDUCE) {
            app->resume = true;
            app->phase = AR_SUMS;
        } else if (!resume_stencil(app, params, ctx)) {
            app->phase = ST_TOTAL; /* the stencil starts again from iteration 0 */
            app->iteration = 1;
            app->current = 0;
        }
        return true;
    }
    if (app->stage == SIM_APP_AWAIT)
        return await_step(app, params, ctx, now_ns, out);
    app->adopted = app->adopted || app->stage == SIM_APP_ADOPT;
    /* The old communicator goes, as apps/recovery.c frees it (a node holds
     * CONFIG_COMM_MAX_COMMS: a job recovering more often than that would
     * run out), unless it is WORLD; one with requests still on it (a halo
     * exchange a failure cut) at the next rebuild.  Its late frames never
     * match a later communicator on its context id (their generation
     * differs), and members still in its round are served from inside
     * (comm/DESIGN.md, "Freeing a communicator"). */
    if (app->stage == SIM_APP_REBUILD) {
        if (app->old_comm != COMM_NULL && comm_free(ctx, app->old_comm) == COMM_ERR_OK)
            app->old_comm = COMM_NULL;
        if (app->comm != COMM_WORLD && comm_free(ctx, app->comm) != COMM_ERR_OK &&
            app->old_comm == COMM_NULL)
            app->old_comm = app->comm;
    }
    app->comm = app->made;
    if (!fill_group(app, ctx, true)) {
        fail(app, "rebuild", COMM_ERR_COUNT, now_ns);
        return false;
    }
    if (app->noticed_ns != 0 && app->rebuilt_ns == 0)
        app->rebuilt_ns = now_ns;
    if (params->kind == SIM_APP_ALLREDUCE) {
        /* apps/allreduce.c resumes at once (its resume allreduce carries
         * the verdict); the model's agree comes after it (AR_RESUMED), so
         * that the recovery it times is the shipped application's. */
        app->stage = SIM_APP_COMPUTE;
        app->resume = true;
        app->phase = AR_SUMS;
        return true;
    }
    app->stage = SIM_APP_AGREE;
    app->agree_flag = app->ok ? 1u : 0u;
    return collective(app, SIM_APP_COLL_AGREE, begin_agree(app, params, ctx, now_ns, out),
                      &app->agree_flag, sizeof app->agree_flag, "agree", now_ns);
}

/* One phase of the allreduce model; false when it waits or stopped. */
static bool allreduce_phase(struct sim_app *app, const struct sim_app_params *params,
                            struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    switch (app->phase) {
    case AR_SUMS:
        if (app->resume) {
            /* {iteration, digest, failed verdict}: a spare offers zeros. */
            app->point[0] = app->adopted && app->iteration == 1 && app->crc == 0
                                ? 0
                                : (int64_t)app->iteration;
            app->point[1] = (int64_t)app->crc;
            app->point[2] = app->ok ? 0 : 1;
            app->phase = AR_RESUMED;
            return collective(app, SIM_APP_COLL_ALLREDUCE,
                              begin_allreduce(app, params, ctx, now_ns, out, app->point,
                                              app->point, 3, COMM_INT64, COMM_MAX),
                              app->point, sizeof app->point, "allreduce", now_ns);
        }
        if (app->iteration > params->iterations) {
            finish(app, app->ok, app->crc, now_ns);
            return false;
        }
        allreduce_inputs(app->rank, app->size, app->iteration, params->arg[0], &app->in);
        app->phase = AR_MAX;
        return collective(app, SIM_APP_COLL_ALLREDUCE,
                          begin_allreduce(app, params, ctx, now_ns, out, app->in.sums,
                                          app->out.sums, 2, COMM_INT64, COMM_SUM),
                          app->out.sums, sizeof app->out.sums, "allreduce", now_ns);
    case AR_RESUMED:
        if (app->rebuilt_ns != 0 && app->resumed_ns == 0)
            app->resumed_ns = now_ns;
        app->iteration = (uint32_t)app->point[0];
        app->crc = (uint32_t)app->point[1];
        app->ok = app->point[2] == 0 && !app->wrong_total;
        app->resume = false;
        /* The model's one addition to apps/allreduce.c: an agree on the
         * verdict after every resume (an adopting spare's first included),
         * so that the campaigns check agree's uniformity under faults. */
        app->phase = AR_AGREED;
        app->agree_flag = app->ok ? 1u : 0u;
        return collective(app, SIM_APP_COLL_AGREE, begin_agree(app, params, ctx, now_ns, out),
                          &app->agree_flag, sizeof app->agree_flag, "agree", now_ns);
    case AR_AGREED:
        app->phase = AR_SUMS;
        return true;
    case AR_MAX:
        app->phase = AR_HALF;
        return collective(app, SIM_APP_COLL_ALLREDUCE,
                          begin_allreduce(app, params, ctx, now_ns, out, &app->in.max,
                                          &app->out.max, 1, COMM_INT64, COMM_MAX),
                          &app->out.max, sizeof app->out.max, "allreduce", now_ns);
    case AR_HALF:
        app->phase = AR_CHECK;
        return collective(app, SIM_APP_COLL_ALLREDUCE,
                          begin_allreduce(app, params, ctx, now_ns, out, &app->in.half,
                                          &app->out.half, 1, COMM_DOUBLE, COMM_SUM),
                          &app->out.half, sizeof app->out.half, "allreduce", now_ns);
    default: {
        struct allreduce_values want;
        allreduce_expected_without(app->size, app->iteration, params->arg[0], app->gaps,
                                   app->gap_count, &want);
        if (!allreduce_equal(&app->out, &want) && !app->wrong_total) {
            app->wrong_total = true;
            app->wrong_iteration = app->iteration;
        }
        app->ok = app->ok && !app->wrong_total;
        app->crc = allreduce_digest_update(app->crc, &app->out);
        app->iterations_done = app->iteration;
        app->iteration++;
        app->phase = AR_SUMS;
        return true;
    }
    }
}

/* The rank of the live neighbour one step along dim (apps/stencil.c). */
static uint32_t neighbour(const struct sim_app *app, unsigned dim, unsigned dir)
{
    return group_live_rank(app->gaps, app->gap_count, stencil_neighbour(&app->shape, dim, dir));
}

/* Posts the six halo receives and sends the six faces (apps/stencil.c's
 * exchange_halos, non-blocking). */
static bool post_exchange(struct sim_app *app, struct comm *ctx, uint64_t now_ns,
                          struct comm_outbox *out, enum comm_error *error, const char **call)
{
    const struct stencil_shape *g = &app->shape;
    uint32_t face_values = g->edge * g->edge;
    uint32_t face_bytes = face_values * 8u;
    for (unsigned face = 0; face < 6; face++) {
        *error = comm_irecv(ctx, app->comm, neighbour(app, face / 2, face % 2), (int32_t)face,
                            app->face_in + face * face_values, face_bytes, now_ns, out,
                            &app->requests[face]);
        *call = "irecv";
        if (*error != COMM_ERR_OK)
            return false;
        app->pending |= 1u << face;
    }
    for (unsigned face = 0; face < 6; face++) {
        int64_t *buffer = app->face_out + face * face_values;
        stencil_move_face(app->cells[app->current], g->edge, face, buffer, false);
        *error = comm_isend(ctx, app->comm, neighbour(app, face / 2, face % 2),
                            (int32_t)(face ^ 1u), buffer, face_bytes, now_ns, out,
                            &app->requests[6 + face]);
        *call = "isend";
        if (*error != COMM_ERR_OK)
            return false;
        app->pending |= 1u << (6 + face);
    }
    return true;
}

/* The root: the serial reference over the live ranks, as apps/stencil.c's
 * check_reference (the checksums packed). */
static bool stencil_reference(const struct sim_app *app, const struct sim_app_params *params)
{
    const struct stencil_shape *g = &app->shape;
    uint32_t points = stencil_reference_points(g);
    if (points > SIM_STENCIL_REFERENCE_POINTS)
        return true; /* too large to check serially: the conserved sum still is */
    int64_t *grids[2] = {calloc(points, sizeof(int64_t)), calloc(points, sizeof(int64_t))};
    bool matches = false;
    if (grids[0] != NULL && grids[1] != NULL) {
        stencil_reference_init(g, grids[0]);
        unsigned current = 0;
        for (uint32_t step = 0; step < params->iterations; step++) {
            stencil_reference_step(g, grids[current], grids[current ^ 1u]);
            current ^= 1u;
        }
        matches = stencil_reference_matches(g, grids[current], app->checksums, app->live);
    }
    free(grids[0]);
    free(grids[1]);
    return matches;
}

/* One phase of the stencil model; false when it waits or stopped.  A call
 * refused at once goes to *error (the caller recovers). */
static bool stencil_phase(struct sim_app *app, const struct sim_app_params *params,
                          struct comm *ctx, uint64_t now_ns, struct comm_outbox *out,
                          enum comm_error *error, const char **call)
{
    const struct stencil_shape *g = &app->shape;
    uint32_t root = group_live_rank(app->gaps, app->gap_count, 0);
    switch (app->phase) {
    case ST_TOTAL:
        stencil_shape_grid(app->index, app->live, app->shape.edge, params->torus_x,
                           params->torus_y, &app->shape);
        app->local[0] = stencil_init_block(g, app->cells[0]);
        app->phase = ST_EXCHANGE;
        *call = "allreduce";
        *error = begin_allreduce(app, params, ctx, now_ns, out, &app->local[0], &app->total, 1,
                                 COMM_INT64, COMM_SUM);
        return *error == COMM_ERR_OK &&
               collective(app, SIM_APP_COLL_ALLREDUCE, *error, &app->total, sizeof app->total,
                          *call, now_ns);
    case ST_EXCHANGE:
        if (app->iteration > params->iterations) {
            app->phase = ST_GATHER;
            return true;
        }
        app->phase = ST_RELAX;
        return post_exchange(app, ctx, now_ns, out, error, call);
    case ST_RELAX: {
        uint32_t face_values = g->edge * g->edge;
        for (unsigned face = 0; face < 6; face++)
            stencil_move_face(app->cells[app->current], g->edge, face,
                              app->face_in + face * face_values, true);
        int64_t residual =
            stencil_relax(g->edge, app->cells[app->current], app->cells[app->current ^ 1u]);
        app->current ^= 1u;
        if (app->iteration % (uint64_t)app->check_every == 0 ||
            app->iteration == params->iterations) {
            app->local[0] = stencil_block_sum(g->edge, app->cells[app->current]);
            app->local[1] = residual;
            app->phase = ST_CHECKED;
            *call = "allreduce";
            *error = begin_allreduce(app, params, ctx, now_ns, out, app->local, app->sums, 2,
                                     COMM_INT64, COMM_SUM);
            return *error == COMM_ERR_OK &&
                   collective(app, SIM_APP_COLL_ALLREDUCE, *error, app->sums, sizeof app->sums,
                              *call, now_ns);
        }
        app->sums[0] = app->total; /* no check this iteration */
        app->phase = ST_CHECKED;
        return true;
    }
    case ST_CHECKED:
        if (app->sums[0] != app->total && !app->wrong_total) {
            app->wrong_total = true; /* diffusion conserves the sum exactly */
            app->wrong_iteration = app->iteration;
        }
        app->ok = app->ok && !app->wrong_total;
        app->iterations_done = app->iteration;
        save_checkpoint(app, params);
        app->iteration++;
        app->phase = ST_EXCHANGE;
        return true;
    case ST_GATHER:
        app->checksum = stencil_block_checksum(g->edge, app->cells[app->current]);
        if (app->rank == root && app->checksums_size < app->size) {
            free(app->checksums);
            app->checksums = calloc(app->size, sizeof(uint64_t));
            app->checksums_size = app->checksums != NULL ? app->size : 0;
            if (app->checksums == NULL)
                out_of_memory();
        }
        app->phase = ST_VERDICT;
        *call = "gather";
        const struct sim_app_start gather = {.kind = SIM_APP_START_GATHER,
                                             .root = root,
                                             .count = sizeof app->checksum,
                                             .send = &app->checksum,
                                             .recv = app->checksums,
                                             .call = "gather"};
        *error = begin(app, params, ctx, now_ns, out, &gather);
        return *error == COMM_ERR_OK &&
               collective(app, SIM_APP_COLL_GATHER, *error, NULL, 0, *call, now_ns);
    case ST_VERDICT:
        app->verdict[0] = 1;
        app->verdict[1] = 0;
        if (app->rank == root) {
            /* The core packs the live ranks' blocks (comm/DESIGN.md: gather
             * leaves the gaps' blocks out), as apps/stencil.c reads them. */
            app->verdict[0] = stencil_reference(app, params) ? 1 : 0;
            app->verdict[1] = stencil_digest(app->checksums, app->live);
        }
        app->phase = ST_RESULT;
        *call = "bcast";
        const struct sim_app_start bcast = {.kind = SIM_APP_START_BCAST,
                                            .root = root,
                                            .count = sizeof app->verdict,
                                            .recv = app->verdict,
                                            .call = "bcast"};
        *error = begin(app, params, ctx, now_ns, out, &bcast);
        return *error == COMM_ERR_OK &&
               collective(app, SIM_APP_COLL_BCAST, *error, app->verdict, sizeof app->verdict,
                          *call, now_ns);
    default:
        finish(app, app->ok && app->verdict[0] == 1, app->verdict[1], now_ns);
        return false;
    }
}

/* A start refused BUSY, made again: taken (pending), still refused while
 * that can clear and the grace lasts (retrying), or refused for good: the
 * error goes where the first start's would have gone. */
static void retry_start(struct sim_app *app, const struct sim_app_params *params,
                        struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    enum comm_error error = start_once(app, ctx, now_ns, out);
    if (error == COMM_ERR_BUSY && comm_busy_clears(ctx) && now_ns < app->busy_until)
        return;
    app->retrying = false;
    if (error == COMM_ERR_OK) {
        app->pending |= 1u;
        return;
    }
    app->coll_kind = SIM_APP_COLL_NONE; /* refused: no outcome */
    if (app->stage == SIM_APP_COMPUTE)
        recover(app, params, ctx, app->start.call, error, now_ns, out);
    else
        fail(app, app->start.call, error, now_ns);
}

void sim_app_advance(struct sim_app *app, const struct sim_app_params *params, struct comm *ctx,
                     uint64_t now_ns, struct comm_outbox *out)
{
    while (app->state == SIM_APP_RUNNING) {
        release_stale(app, ctx);
        bool failed = false;
        for (unsigned i = 0; i < SIM_APP_REQUESTS && !failed; i++) {
            struct comm_status status;
            if ((app->pending & (1u << i)) == 0 || !comm_test(ctx, app->requests[i], &status))
                continue;
            app->pending &= ~(1u << i);
            if (i == 0 && app->coll_kind != SIM_APP_COLL_NONE)
                log_outcome(app, ctx, (enum comm_error)status.error);
            if (status.error != COMM_ERR_OK) {
                recover(app, params, ctx, "wait", (enum comm_error)status.error, now_ns, out);
                failed = true;
            }
        }
        if (failed)
            continue;
        if (app->pending != 0)
            return;
        if (app->retrying) {
            retry_start(app, params, ctx, now_ns, out);
            if (app->retrying)
                return;
            continue;
        }
        enum comm_error error = COMM_ERR_OK;
        const char *call = "";
        bool more;
        if (app->stage != SIM_APP_COMPUTE)
            more = recovery_step(app, params, ctx, now_ns, out);
        else if (params->kind == SIM_APP_ALLREDUCE)
            more = allreduce_phase(app, params, ctx, now_ns, out);
        else
            more = stencil_phase(app, params, ctx, now_ns, out, &error, &call);
        if (app->state == SIM_APP_FAILED && app->stage == SIM_APP_COMPUTE) {
            /* a call refused at once: a failure the mode may recover from */
            app->state = SIM_APP_RUNNING;
            error = app->error;
            call = app->failed_call;
        }
        if (error != COMM_ERR_OK) {
            recover(app, params, ctx, call, error, now_ns, out);
            continue;
        }
        if (!more && app->pending == 0)
            return;
    }
}
