/*
 * The model applications (see sim_app.h).  Each is a program of phases; a
 * phase issues non-blocking requests and the next runs when they have all
 * completed.  The checks are the real applications': the allreduce's closed
 * forms, the stencil's conserved sum and serial reference (here at every
 * size the host can afford, not only up to the node's reference table).
 */
#include "sim/sim_app.h"

#include <stdlib.h>
#include <string.h>

#include "config/tori_config.h"

/* The serial reference runs at rank 0 up to this many grid points (two
 * grids of 8-byte values: 32 MiB). */
#define SIM_STENCIL_REFERENCE_POINTS (1u << 21)

enum allreduce_phase { AR_SUMS = 0, AR_MAX, AR_HALF, AR_CHECK };
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

/* Records request i of a call; false (the model failed) on an error. */
static bool issued(struct sim_app *app, unsigned i, enum comm_error error, const char *call,
                   uint64_t now_ns)
{
    if (error != COMM_ERR_OK) {
        fail(app, call, error, now_ns);
        return false;
    }
    app->pending |= 1u << i;
    return true;
}

static void finish(struct sim_app *app, bool ok, uint64_t digest, uint64_t now_ns)
{
    app->state = SIM_APP_DONE;
    app->ok = ok;
    app->digest = digest;
    app->done_ns = now_ns;
}

bool sim_app_start(struct sim_app *app, const struct sim_app_params *params, uint32_t rank,
                   uint32_t size, struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    memset(app, 0, sizeof *app);
    app->state = SIM_APP_RUNNING;
    app->rank = rank;
    app->size = size;
    app->iteration = 1;
    app->ok = true;
    app->start_ns = now_ns;
    if (params->kind == SIM_APP_STENCIL) {
        uint32_t edge = 4;
        if (!sim_app_stencil_args(params, &edge, &app->check_every))
            return false; /* refused before the run */
        stencil_shape_grid(rank, size, edge, params->torus_x, params->torus_y, &app->shape);
        size_t cells = stencil_block_cells(edge);
        app->cells[0] = calloc(cells, sizeof(int64_t));
        app->cells[1] = calloc(cells, sizeof(int64_t));
        app->face_out = calloc(6u * edge * edge, sizeof(int64_t));
        app->face_in = calloc(6u * edge * edge, sizeof(int64_t));
        app->checksums = rank == 0 ? calloc(size, sizeof(uint64_t)) : NULL;
        if (app->cells[0] == NULL || app->cells[1] == NULL || app->face_out == NULL ||
            app->face_in == NULL || (rank == 0 && app->checksums == NULL))
            return false;
    }
    sim_app_advance(app, params, ctx, now_ns, out);
    return true;
}

void sim_app_free(struct sim_app *app)
{
    free(app->cells[0]);
    free(app->cells[1]);
    free(app->face_out);
    free(app->face_in);
    free(app->checksums);
    app->cells[0] = app->cells[1] = NULL;
    app->face_out = app->face_in = NULL;
    app->checksums = NULL;
}

/* One phase of the allreduce model; false when it waits or stopped. */
static bool allreduce_phase(struct sim_app *app, const struct sim_app_params *params,
                            struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    uint32_t *r = &app->requests[0];
    switch (app->phase) {
    case AR_SUMS:
        if (app->iteration > params->iterations) {
            finish(app, app->ok, app->crc, now_ns);
            return false;
        }
        allreduce_inputs(app->rank, app->size, app->iteration, params->arg[0], &app->in);
        app->phase = AR_MAX;
        return issued(app, 0,
                      comm_iallreduce(ctx, COMM_WORLD, app->in.sums, app->out.sums, 2,
                                      COMM_INT64, COMM_SUM, now_ns, out, r),
                      "allreduce", now_ns);
    case AR_MAX:
        app->phase = AR_HALF;
        return issued(app, 0,
                      comm_iallreduce(ctx, COMM_WORLD, &app->in.max, &app->out.max, 1,
                                      COMM_INT64, COMM_MAX, now_ns, out, r),
                      "allreduce", now_ns);
    case AR_HALF:
        app->phase = AR_CHECK;
        return issued(app, 0,
                      comm_iallreduce(ctx, COMM_WORLD, &app->in.half, &app->out.half, 1,
                                      COMM_DOUBLE, COMM_SUM, now_ns, out, r),
                      "allreduce", now_ns);
    default: {
        struct allreduce_values want;
        allreduce_expected(app->size, app->iteration, params->arg[0], &want);
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

/* Posts the six halo receives and sends the six faces (apps/stencil.c's
 * exchange_halos, non-blocking). */
static bool post_exchange(struct sim_app *app, struct comm *ctx, uint64_t now_ns,
                          struct comm_outbox *out)
{
    const struct stencil_shape *g = &app->shape;
    uint32_t face_values = g->edge * g->edge;
    uint32_t face_bytes = face_values * 8u;
    for (unsigned face = 0; face < 6; face++) {
        enum comm_error e = comm_irecv(ctx, COMM_WORLD, stencil_neighbour(g, face / 2, face % 2),
                                       (int32_t)face, app->face_in + face * face_values,
                                       face_bytes, now_ns, out, &app->requests[face]);
        if (!issued(app, face, e, "irecv", now_ns))
            return false;
    }
    for (unsigned face = 0; face < 6; face++) {
        int64_t *buffer = app->face_out + face * face_values;
        stencil_move_face(app->cells[app->current], g->edge, face, buffer, false);
        enum comm_error e = comm_isend(ctx, COMM_WORLD, stencil_neighbour(g, face / 2, face % 2),
                                       (int32_t)(face ^ 1u), buffer, face_bytes, now_ns, out,
                                       &app->requests[6 + face]);
        if (!issued(app, 6 + face, e, "isend", now_ns))
            return false;
    }
    return true;
}

/* Rank 0: the serial reference, as apps/stencil.c's check_reference. */
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
        matches = stencil_reference_matches(g, grids[current], app->checksums, app->size);
    }
    free(grids[0]);
    free(grids[1]);
    return matches;
}

/* One phase of the stencil model; false when it waits or stopped. */
static bool stencil_phase(struct sim_app *app, const struct sim_app_params *params,
                          struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    const struct stencil_shape *g = &app->shape;
    switch (app->phase) {
    case ST_TOTAL:
        app->local[0] = stencil_init_block(g, app->cells[0]);
        app->phase = ST_EXCHANGE;
        return issued(app, 0,
                      comm_iallreduce(ctx, COMM_WORLD, &app->local[0], &app->total, 1,
                                      COMM_INT64, COMM_SUM, now_ns, out,
                                      &app->requests[0]),
                      "allreduce", now_ns);
    case ST_EXCHANGE:
        if (app->iteration > params->iterations) {
            app->phase = ST_GATHER;
            return true;
        }
        app->phase = ST_RELAX;
        return post_exchange(app, ctx, now_ns, out);
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
            return issued(app, 0,
                          comm_iallreduce(ctx, COMM_WORLD, app->local, app->sums, 2,
                                          COMM_INT64, COMM_SUM, now_ns, out,
                                          &app->requests[0]),
                          "allreduce", now_ns);
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
        app->iteration++;
        app->phase = ST_EXCHANGE;
        return true;
    case ST_GATHER:
        app->checksum = stencil_block_checksum(g->edge, app->cells[app->current]);
        app->phase = ST_VERDICT;
        return issued(app, 0,
                      comm_igather(ctx, COMM_WORLD, 0, &app->checksum, sizeof app->checksum,
                                   app->checksums, now_ns, out, &app->requests[0]),
                      "gather", now_ns);
    case ST_VERDICT:
        app->verdict[0] = 1;
        app->verdict[1] = 0;
        if (app->rank == 0) {
            app->verdict[0] = stencil_reference(app, params) ? 1 : 0;
            app->verdict[1] = stencil_digest(app->checksums, app->size);
        }
        app->phase = ST_RESULT;
        return issued(app, 0,
                      comm_ibcast(ctx, COMM_WORLD, 0, app->verdict, sizeof app->verdict, now_ns,
                                  out, &app->requests[0]),
                      "bcast", now_ns);
    default:
        finish(app, app->ok && app->verdict[0] == 1, app->verdict[1], now_ns);
        return false;
    }
}

void sim_app_advance(struct sim_app *app, const struct sim_app_params *params, struct comm *ctx,
                     uint64_t now_ns, struct comm_outbox *out)
{
    while (app->state == SIM_APP_RUNNING) {
        for (unsigned i = 0; i < SIM_APP_REQUESTS; i++) {
            struct comm_status status;
            if ((app->pending & (1u << i)) == 0 || !comm_test(ctx, app->requests[i], &status))
                continue;
            app->pending &= ~(1u << i);
            if (status.error != COMM_ERR_OK) {
                fail(app, "wait", status.error, now_ns);
                return;
            }
        }
        if (app->pending != 0)
            return;
        bool more = params->kind == SIM_APP_ALLREDUCE
                        ? allreduce_phase(app, params, ctx, now_ns, out)
                        : stencil_phase(app, params, ctx, now_ns, out);
        if (!more && app->pending == 0)
            return;
    }
}
