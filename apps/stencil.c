/*
 * stencil: 3-D Jacobi relaxation (an explicit diffusion step) on a periodic
 * grid decomposed over WORLD as a process grid laid on the torus: each rank
 * holds an L x L x L block (arg[0], 1..8, default 4) and exchanges its six
 * faces with its grid neighbours every iteration (point-to-point).
 *
 * Fixed point, integers only, so that every board computes the same bits:
 * the update adds, across each of the six faces, the difference to the
 * neighbour divided by 8 with C's truncation toward zero, which is
 * antisymmetric, so the grid's sum is conserved exactly.  Every arg[1]
 * iterations (default 10) a global allreduce checks that invariant and
 * reports the residual (the sum of |change|).  At the end every rank's
 * block checksum is gathered at rank 0, which, when the whole grid has at
 * most STENCIL_REFERENCE_POINTS points, recomputes it serially and compares
 * block by block; the digest (the CRC-32 of the checksums in rank order)
 * and the verdict are broadcast, so every rank reports the same.
 *
 * After a failure (issue 14) it revokes its communicator (ULFM's idiom:
 * ranks blocked on live neighbours learn it too), rebuilds it per the
 * job's mode, resumes as allreduce does (apps/recovery.h: app-recovered)
 * and starts again on the new group's live ranks: under SHRINK a grid over
 * the survivors (a line of ranks when their count is no multiple of the
 * torus's plane) and under BLANK over the live ranks in order, both from
 * iteration 0; under REBUILD the fault-free grid, an adopting spare
 * computing the failed rank's block, from the last coordinated checkpoint
 * when the job takes them (--checkpoint-every; node/tori.h), else from 0.
 * A checkpoint holds the conserved total, the verdict so far and the
 * current block, so a resumed run ends with the fault-free digest.
 */
#include <stddef.h>

#include "apps/kernels.h"
#include "apps/recovery.h"
#include "config/tori_config.h"
#include "node/tori.h"

#define STENCIL_MAX_EDGE CONFIG_APP_STENCIL_MAX_EDGE
#define STENCIL_PADDED (STENCIL_MAX_EDGE + 2)
#define STENCIL_REFERENCE_POINTS CONFIG_APP_STENCIL_REFERENCE_POINTS
#define STENCIL_MAX_RANKS CONFIG_APP_STENCIL_MAX_RANKS

static int64_t cells[2][STENCIL_PADDED * STENCIL_PADDED * STENCIL_PADDED];
static int64_t face_out[6][STENCIL_MAX_EDGE * STENCIL_MAX_EDGE];
static int64_t face_in[6][STENCIL_MAX_EDGE * STENCIL_MAX_EDGE];
static int64_t reference[2][STENCIL_REFERENCE_POINTS];
static uint64_t checksums[STENCIL_MAX_RANKS];

/* What a checkpoint holds: the block being computed on (its padded cells),
 * the grid's total and the verdict so far. */
static struct {
    int64_t *grid;
    uint32_t cells;
    int64_t total;
    int64_t ok;
} state;

static uint32_t save_state(void *context, void *out, uint32_t capacity)
{
    (void)context;
    uint32_t bytes = 16u + state.cells * 8u;
    if (bytes > capacity)
        return bytes; /* too big: the round reports it */
    int64_t *words = out;
    words[0] = state.total;
    words[1] = state.ok;
    for (uint32_t c = 0; c < state.cells; c++)
        words[2 + c] = state.grid[c];
    return bytes;
}

static int load_state(void *context, const void *data, uint32_t length)
{
    (void)context;
    if (length != 16u + state.cells * 8u)
        return TORI_ERR_CHECKPOINT; /* another block size: not this job's grid */
    const int64_t *words = data;
    state.total = words[0];
    state.ok = words[1];
    for (uint32_t c = 0; c < state.cells; c++)
        state.grid[c] = words[2 + c];
    return TORI_OK;
}

/* Sends the six faces and fills the six halos.  A face sent towards +dim
 * arrives as the neighbour's -dim halo: its tag names the side it fills. */
static int exchange_halos(const struct app_group *group, const struct stencil_shape *g,
                          int64_t *grid)
{
    uint32_t face_bytes = g->edge * g->edge * 8u;
    tori_request requests[12];
    for (unsigned face = 0; face < 6; face++) {
        unsigned dim = face / 2;
        unsigned dir = face % 2;
        /* Our halo on side `face` comes from the neighbour that way, which
         * sends its opposite face. */
        uint32_t from = group_live_rank(group->gaps, group->gap_count,
                                        stencil_neighbour(g, dim, dir));
        int error = tori_irecv(group->comm, from, (int32_t)face, face_in[face], face_bytes,
                               &requests[face]);
        if (error != TORI_OK)
            return error;
    }
    for (unsigned face = 0; face < 6; face++) {
        unsigned dim = face / 2;
        unsigned dir = face % 2;
        stencil_move_face(grid, g->edge, face, face_out[face], false);
        /* Our + face fills the + neighbour's - halo (face 2 dim + 1). */
        uint32_t to = group_live_rank(group->gaps, group->gap_count,
                                      stencil_neighbour(g, dim, dir));
        int error = tori_isend(group->comm, to, (int32_t)(face ^ 1u), face_out[face],
                               face_bytes, &requests[6 + face]);
        if (error != TORI_OK)
            return error;
    }
    for (unsigned i = 0; i < 12; i++) {
        int error = tori_wait(&requests[i], NULL);
        if (error != TORI_OK)
            return error;
    }
    for (unsigned face = 0; face < 6; face++)
        stencil_move_face(grid, g->edge, face, face_in[face], true);
    return TORI_OK;
}

/* The whole grid serially, the same steps; then each rank's block
 * checksum compared with the gathered one.  Returns false on a mismatch. */
static bool check_reference(const struct stencil_shape *g, uint32_t iterations, uint32_t size)
{
    stencil_reference_init(g, reference[0]);
    unsigned current = 0;
    for (uint32_t step = 0; step < iterations; step++) {
        stencil_reference_step(g, reference[current], reference[current ^ 1u]);
        current ^= 1u;
        if (step % 16 == 15)
            tori_progress(); /* a long serial check must not starve the node */
    }
    return stencil_reference_matches(g, reference[current], checksums, size);
}

/* The block shape of this rank in the group. */
static void shape_of(const struct app_group *group, uint32_t edge, struct stencil_shape *g)
{
    struct tori_torus torus;
    tori_torus_shape(&torus);
    stencil_shape_grid(group->index, group->live, edge, torus.size[0], torus.size[1], g);
}

/* One run on the group's live ranks, from iteration `from` (0: the start;
 * else a checkpoint restored into cells[0] and state): TORI_OK with the
 * outcome filled, or the error of the call that failed. */
static int run(const struct app_group *group, const struct tori_args *args, uint32_t edge,
               int64_t check_every, uint32_t from, struct tori_result *outcome)
{
    struct stencil_shape g;
    shape_of(group, edge, &g);
    int64_t total = state.total;
    bool ok = state.ok != 0;
    int error = TORI_OK;
    if (from == 0) {
        int64_t local_sum = stencil_init_block(&g, cells[0]);
        error = tori_allreduce(group->comm, &local_sum, &total, 1, TORI_INT64, TORI_SUM);
        if (error != TORI_OK)
            return error;
        ok = true;
    }
    unsigned current = 0;
    for (uint32_t i = from + 1u; i <= args->iterations; i++) {
        error = exchange_halos(group, &g, cells[current]);
        if (error != TORI_OK)
            return error;
        int64_t residual = stencil_relax(g.edge, cells[current], cells[current ^ 1u]);
        current ^= 1u;
        if (i % (uint64_t)check_every == 0 || i == args->iterations) {
            int64_t mine[2] = {stencil_block_sum(g.edge, cells[current]), residual};
            int64_t sums[2];
            error = tori_allreduce(group->comm, mine, sums, 2, TORI_INT64, TORI_SUM);
            if (error != TORI_OK)
                return error;
            ok = ok && sums[0] == total; /* diffusion conserves the sum exactly */
        }
        outcome->iterations = i;
        tori_iteration_done(i);
        state.grid = cells[current];
        state.total = total;
        state.ok = ok;
        error = tori_checkpoint(group->comm, i);
        if (error != TORI_OK)
            return error;
    }
    uint64_t mine = stencil_block_checksum(g.edge, cells[current]);
    /* Gathered at the first live rank: the live ranks' checksums in rank
     * order, packed (a gather leaves a BLANK communicator's gaps out). */
    uint32_t root = group_live_rank(group->gaps, group->gap_count, 0);
    error = tori_gather(group->comm, root, &mine, sizeof mine, checksums);
    if (error != TORI_OK)
        return error;
    /* verdict[0]: 1 when the root's checks passed; verdict[1]: the digest. */
    uint64_t verdict[2] = {1, 0};
    if (group->rank == root) {
        uint32_t points = group->live * g.edge * g.edge * g.edge;
        bool matches = points > STENCIL_REFERENCE_POINTS ||
                       check_reference(&g, args->iterations, group->live);
        verdict[0] = matches ? 1 : 0;
        verdict[1] = stencil_digest(checksums, group->live);
    }
    error = tori_bcast(group->comm, root, verdict, sizeof verdict);
    if (error != TORI_OK)
        return error;
    outcome->ok = ok && verdict[0] == 1;
    outcome->digest = verdict[1];
    return TORI_OK;
}

struct tori_result tori_app_stencil(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    struct app_group group;
    if (!app_group_start(&group))
        return outcome;
    int64_t edge_arg = args->arg[0] == 0 ? STENCIL_DEFAULT_EDGE : args->arg[0];
    int64_t check_every = args->arg[1] == 0 ? STENCIL_DEFAULT_CHECK_EVERY : args->arg[1];
    if (edge_arg < 1 || edge_arg > STENCIL_MAX_EDGE || check_every < 1 ||
        group.size > STENCIL_MAX_RANKS) {
        static const char *const keys[] = {"edge", "check_every", "size"};
        int64_t values[3] = {edge_arg, check_every, group.size};
        tori_report("app-bad-arguments", keys, values, 3); /* edge 1..MAX, check >= 1 */
        return outcome;
    }
    int error = tori_checkpoint_register(save_state, load_state, NULL);
    if (error != TORI_OK)
        return outcome;
    uint32_t full_grid = group.live; /* a restore needs the fault-free grid */
    bool resume = group.adopted; /* an adopting spare joins the survivors' resume */
    for (;;) {
        error = TORI_OK;
        if (resume) {
            /* The resume point is agreed by the restore below (zero
             * everywhere here: apps/recovery.h). */
            int64_t from_iteration = 0;
            error = app_recovery_resume(&group, &from_iteration, 1);
        }
        uint32_t from = 0;
        if (error == TORI_OK && group.live == full_grid && group.gap_count == 0) {
            struct stencil_shape g;
            shape_of(&group, (uint32_t)edge_arg, &g);
            state.grid = cells[0];
            state.cells = stencil_block_cells(g.edge);
            error = tori_restore(group.comm, &from);
            if (error == TORI_ERR_NO_CHECKPOINT)
                error = TORI_OK; /* none yet: from the start */
        }
        if (error == TORI_OK) {
            resume = false;
            error = run(&group, args, (uint32_t)edge_arg, check_every, from, &outcome);
            if (error == TORI_OK)
                return outcome;
        }
        outcome.ok = false;
        /* Revoked first: a failure that reached only some ranks' halo
         * exchange must not leave the others waiting on live neighbours. */
        if (!app_failure(error) || !app_group_rebuild(&group, true))
            return outcome;
        resume = true;
    }
}
