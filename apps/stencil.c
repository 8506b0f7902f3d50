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
 */
#include "config/tori_config.h"
#include "lib/crc32.h"
#include "lib/le.h"
#include "node/tori.h"


#define STENCIL_MAX_EDGE CONFIG_APP_STENCIL_MAX_EDGE
#define STENCIL_PADDED (STENCIL_MAX_EDGE + 2)
#define STENCIL_REFERENCE_POINTS CONFIG_APP_STENCIL_REFERENCE_POINTS
#define STENCIL_MAX_RANKS CONFIG_APP_STENCIL_MAX_RANKS
#define STENCIL_SCALE_SHIFT 16

struct grid_shape {
    uint32_t procs[3]; /* process grid */
    uint32_t at[3];    /* this rank's place in it */
    uint32_t edge;     /* L */
};

static int64_t cells[2][STENCIL_PADDED * STENCIL_PADDED * STENCIL_PADDED];
static int64_t face_out[6][STENCIL_MAX_EDGE * STENCIL_MAX_EDGE];
static int64_t face_in[6][STENCIL_MAX_EDGE * STENCIL_MAX_EDGE];
static int64_t reference[2][STENCIL_REFERENCE_POINTS];
static uint64_t checksums[STENCIL_MAX_RANKS];

static uint32_t padded_index(uint32_t edge, uint32_t x, uint32_t y, uint32_t z)
{
    uint32_t p = edge + 2;
    return x + p * (y + p * z);
}

/* The initial value of global point (x, y, z): a fixed pattern. */
static int64_t initial_value(uint32_t x, uint32_t y, uint32_t z)
{
    return (int64_t)((x * 73u + y * 179u + z * 283u + 17u) % 1024u) << STENCIL_SCALE_SHIFT;
}

static int64_t flux(int64_t from, int64_t to)
{
    return (to - from) / 8; /* truncation toward zero: flux(a,b) == -flux(b,a) */
}

/* The process grid: the torus's first two dimensions, the rest folded into
 * the third (rank = node id, dimension 0 fastest); a WORLD smaller than the
 * torus (spares) falls back to a line of ranks. */
static void shape_grid(uint32_t rank, uint32_t size, uint32_t edge, struct grid_shape *g)
{
    struct tori_torus torus;
    tori_torus_shape(&torus);
    uint32_t plane = torus.size[0] * torus.size[1];
    if (size % plane == 0) {
        g->procs[0] = torus.size[0];
        g->procs[1] = torus.size[1];
        g->procs[2] = size / plane;
    } else {
        g->procs[0] = size;
        g->procs[1] = 1;
        g->procs[2] = 1;
    }
    g->at[0] = rank % g->procs[0];
    g->at[1] = rank / g->procs[0] % g->procs[1];
    g->at[2] = rank / (g->procs[0] * g->procs[1]);
    g->edge = edge;
}

static uint32_t rank_at(const struct grid_shape *g, uint32_t x, uint32_t y, uint32_t z)
{
    return x + g->procs[0] * (y + g->procs[1] * z);
}

/* The neighbour of this rank one step along dim in direction dir (0: +). */
static uint32_t neighbour(const struct grid_shape *g, unsigned dim, unsigned dir)
{
    uint32_t at[3] = {g->at[0], g->at[1], g->at[2]};
    at[dim] = dir == 0 ? (at[dim] + 1) % g->procs[dim]
                       : (at[dim] + g->procs[dim] - 1) % g->procs[dim];
    return rank_at(g, at[0], at[1], at[2]);
}

/* Copies a face of the interior out (halo == false) or a received face
 * into the halo (halo == true).  face = 2 dim + dir (dir 0: the + side). */
static void move_face(int64_t *grid, uint32_t edge, unsigned face, int64_t *buffer, bool halo)
{
    unsigned dim = face / 2;
    bool plus = face % 2 == 0;
    uint32_t layer = halo ? (plus ? edge + 1 : 0) : (plus ? edge : 1);
    uint32_t n = 0;
    for (uint32_t b = 1; b <= edge; b++) {
        for (uint32_t a = 1; a <= edge; a++) {
            uint32_t c[3];
            c[dim] = layer;
            c[(dim + 1) % 3] = a;
            c[(dim + 2) % 3] = b;
            uint32_t i = padded_index(edge, c[0], c[1], c[2]);
            if (halo)
                grid[i] = buffer[n++];
            else
                buffer[n++] = grid[i];
        }
    }
}

/* Sends the six faces and fills the six halos.  A face sent towards +dim
 * arrives as the neighbour's -dim halo: its tag names the side it fills. */
static int exchange_halos(const struct grid_shape *g, int64_t *grid)
{
    uint32_t face_bytes = g->edge * g->edge * 8u;
    tori_request requests[12];
    for (unsigned face = 0; face < 6; face++) {
        unsigned dim = face / 2;
        unsigned dir = face % 2;
        /* Our halo on side `face` comes from the neighbour that way, which
         * sends its opposite face. */
        int error = tori_irecv(TORI_COMM_WORLD, neighbour(g, dim, dir), (int32_t)face,
                               face_in[face], face_bytes, &requests[face]);
        if (error != TORI_OK)
            return error;
    }
    for (unsigned face = 0; face < 6; face++) {
        unsigned dim = face / 2;
        unsigned dir = face % 2;
        move_face(grid, g->edge, face, face_out[face], false);
        /* Our + face fills the + neighbour's - halo (face 2 dim + 1). */
        int error = tori_isend(TORI_COMM_WORLD, neighbour(g, dim, dir), (int32_t)(face ^ 1u),
                               face_out[face], face_bytes, &requests[6 + face]);
        if (error != TORI_OK)
            return error;
    }
    for (unsigned i = 0; i < 12; i++) {
        int error = tori_wait(&requests[i], NULL);
        if (error != TORI_OK)
            return error;
    }
    for (unsigned face = 0; face < 6; face++)
        move_face(grid, g->edge, face, face_in[face], true);
    return TORI_OK;
}

/* One relaxation step of the interior; returns the sum of |change|. */
static int64_t relax(uint32_t edge, const int64_t *from, int64_t *to)
{
    int64_t residual = 0;
    for (uint32_t z = 1; z <= edge; z++) {
        for (uint32_t y = 1; y <= edge; y++) {
            for (uint32_t x = 1; x <= edge; x++) {
                int64_t u = from[padded_index(edge, x, y, z)];
                int64_t change = flux(u, from[padded_index(edge, x + 1, y, z)]) +
                                 flux(u, from[padded_index(edge, x - 1, y, z)]) +
                                 flux(u, from[padded_index(edge, x, y + 1, z)]) +
                                 flux(u, from[padded_index(edge, x, y - 1, z)]) +
                                 flux(u, from[padded_index(edge, x, y, z + 1)]) +
                                 flux(u, from[padded_index(edge, x, y, z - 1)]);
                to[padded_index(edge, x, y, z)] = u + change;
                residual += change < 0 ? -change : change;
            }
        }
    }
    return residual;
}

static uint32_t add_value(uint32_t crc, int64_t value)
{
    uint8_t bytes[8];
    le_put_u64(bytes, (uint64_t)value);
    return crc32_update(crc, bytes, sizeof bytes);
}

static uint64_t block_checksum(uint32_t edge, const int64_t *grid)
{
    uint32_t crc = 0;
    for (uint32_t z = 1; z <= edge; z++)
        for (uint32_t y = 1; y <= edge; y++)
            for (uint32_t x = 1; x <= edge; x++)
                crc = add_value(crc, grid[padded_index(edge, x, y, z)]);
    return crc;
}

/* The whole grid serially, the same steps; then each rank's block
 * checksum compared with the gathered one.  Returns false on a mismatch. */
static bool check_reference(const struct grid_shape *g, uint32_t iterations, uint32_t size)
{
    uint32_t n[3] = {g->procs[0] * g->edge, g->procs[1] * g->edge, g->procs[2] * g->edge};
    for (uint32_t z = 0; z < n[2]; z++)
        for (uint32_t y = 0; y < n[1]; y++)
            for (uint32_t x = 0; x < n[0]; x++)
                reference[0][x + n[0] * (y + n[1] * z)] = initial_value(x, y, z);
    unsigned current = 0;
    for (uint32_t step = 0; step < iterations; step++) {
        const int64_t *from = reference[current];
        int64_t *to = reference[current ^ 1u];
        for (uint32_t z = 0; z < n[2]; z++) {
            for (uint32_t y = 0; y < n[1]; y++) {
                for (uint32_t x = 0; x < n[0]; x++) {
                    int64_t u = from[x + n[0] * (y + n[1] * z)];
                    uint32_t xp = (x + 1) % n[0], xm = (x + n[0] - 1) % n[0];
                    uint32_t yp = (y + 1) % n[1], ym = (y + n[1] - 1) % n[1];
                    uint32_t zp = (z + 1) % n[2], zm = (z + n[2] - 1) % n[2];
                    int64_t change = flux(u, from[xp + n[0] * (y + n[1] * z)]) +
                                     flux(u, from[xm + n[0] * (y + n[1] * z)]) +
                                     flux(u, from[x + n[0] * (yp + n[1] * z)]) +
                                     flux(u, from[x + n[0] * (ym + n[1] * z)]) +
                                     flux(u, from[x + n[0] * (y + n[1] * zp)]) +
                                     flux(u, from[x + n[0] * (y + n[1] * zm)]);
                    to[x + n[0] * (y + n[1] * z)] = u + change;
                }
            }
        }
        current ^= 1u;
        if (step % 16 == 15)
            tori_progress(); /* a long serial check must not starve the node */
    }
    for (uint32_t r = 0; r < size; r++) {
        uint32_t at[3] = {r % g->procs[0], r / g->procs[0] % g->procs[1],
                          r / (g->procs[0] * g->procs[1])};
        uint32_t crc = 0;
        for (uint32_t z = 0; z < g->edge; z++)
            for (uint32_t y = 0; y < g->edge; y++)
                for (uint32_t x = 0; x < g->edge; x++) {
                    uint32_t gx = at[0] * g->edge + x;
                    uint32_t gy = at[1] * g->edge + y;
                    uint32_t gz = at[2] * g->edge + z;
                    crc = add_value(crc, reference[current][gx + n[0] * (gy + n[1] * gz)]);
                }
        if (crc != checksums[r])
            return false;
    }
    return true;
}

struct tori_result tori_app_stencil(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    uint32_t rank = 0;
    uint32_t size = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK ||
        tori_size(TORI_COMM_WORLD, &size) != TORI_OK)
        return outcome;
    int64_t edge_arg = args->arg[0] == 0 ? 4 : args->arg[0];
    int64_t check_every = args->arg[1] == 0 ? 10 : args->arg[1];
    if (edge_arg < 1 || edge_arg > STENCIL_MAX_EDGE || check_every < 1 ||
        size > STENCIL_MAX_RANKS) {
        static const char *const keys[] = {"edge", "check_every", "size"};
        int64_t values[3] = {edge_arg, check_every, size};
        tori_report("app-bad-arguments", keys, values, 3); /* edge 1..MAX, check >= 1 */
        return outcome;
    }
    struct grid_shape g;
    shape_grid(rank, size, (uint32_t)edge_arg, &g);
    int64_t local_sum = 0;
    for (uint32_t z = 1; z <= g.edge; z++)
        for (uint32_t y = 1; y <= g.edge; y++)
            for (uint32_t x = 1; x <= g.edge; x++) {
                int64_t v = initial_value(g.at[0] * g.edge + x - 1, g.at[1] * g.edge + y - 1,
                                          g.at[2] * g.edge + z - 1);
                cells[0][padded_index(g.edge, x, y, z)] = v;
                local_sum += v;
            }
    int64_t total = 0;
    if (tori_allreduce(TORI_COMM_WORLD, &local_sum, &total, 1, TORI_INT64, TORI_SUM) != TORI_OK)
        return outcome;
    bool ok = true;
    unsigned current = 0;
    for (uint32_t i = 1; i <= args->iterations; i++) {
        if (exchange_halos(&g, cells[current]) != TORI_OK)
            return outcome;
        int64_t residual = relax(g.edge, cells[current], cells[current ^ 1u]);
        current ^= 1u;
        if (i % (uint64_t)check_every == 0 || i == args->iterations) {
            int64_t mine[2] = {0, residual};
            for (uint32_t z = 1; z <= g.edge; z++)
                for (uint32_t y = 1; y <= g.edge; y++)
                    for (uint32_t x = 1; x <= g.edge; x++)
                        mine[0] += cells[current][padded_index(g.edge, x, y, z)];
            int64_t sums[2];
            if (tori_allreduce(TORI_COMM_WORLD, mine, sums, 2, TORI_INT64, TORI_SUM) != TORI_OK)
                return outcome;
            ok = ok && sums[0] == total; /* diffusion conserves the sum exactly */
        }
        outcome.iterations = i;
        tori_iteration_done(i);
    }
    uint64_t mine = block_checksum(g.edge, cells[current]);
    if (tori_gather(TORI_COMM_WORLD, 0, &mine, sizeof mine, checksums) != TORI_OK)
        return outcome;
    /* verdict[0]: 1 when rank 0's checks passed; verdict[1]: the digest. */
    uint64_t verdict[2] = {1, 0};
    if (rank == 0) {
        uint32_t points = size * g.edge * g.edge * g.edge;
        bool matches = points > STENCIL_REFERENCE_POINTS ||
                       check_reference(&g, args->iterations, size);
        uint32_t crc = 0;
        for (uint32_t r = 0; r < size; r++)
            crc = add_value(crc, (int64_t)checksums[r]);
        verdict[0] = matches ? 1 : 0;
        verdict[1] = crc;
    }
    if (tori_bcast(TORI_COMM_WORLD, 0, verdict, sizeof verdict) != TORI_OK)
        return outcome;
    outcome.ok = ok && verdict[0] == 1;
    outcome.digest = verdict[1];
    return outcome;
}
