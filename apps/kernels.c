/* The pure computation of the shipped applications (see kernels.h). */
#include "apps/kernels.h"

#include "lib/crc32.h"
#include "lib/le.h"

/* ---- allreduce ---- */

void allreduce_inputs(uint32_t rank, uint32_t size, uint32_t i, int64_t arg0,
                      struct allreduce_values *in)
{
    const int64_t n = size;
    const int64_t r = rank;
    in->sums[0] = (r + 1) * (int64_t)i;
    in->sums[1] = r * r + (int64_t)i + arg0;
    in->max = (r + (int64_t)i) % n;
    in->half = (double)(r + 1);
}

void allreduce_expected(uint32_t size, uint32_t i, int64_t arg0, struct allreduce_values *want)
{
    const int64_t n = size;
    want->sums[0] = (int64_t)i * n * (n + 1) / 2;
    want->sums[1] = (n - 1) * n * (2 * n - 1) / 6 + n * ((int64_t)i + arg0);
    /* The largest (r + i) % n over r in 0..n-1: n - 1 (r = n - 1 - i % n). */
    want->max = n - 1;
    want->half = (double)(n * (n + 1) / 2);
}

static bool is_gap(uint32_t rank, const uint32_t *gaps, uint32_t gap_count)
{
    for (uint32_t k = 0; k < gap_count; k++)
        if (gaps[k] == rank)
            return true;
    return false;
}

void allreduce_expected_without(uint32_t size, uint32_t i, int64_t arg0, const uint32_t *gaps,
                                uint32_t gap_count, struct allreduce_values *want)
{
    allreduce_expected(size, i, arg0, want);
    if (gap_count == 0)
        return;
    for (uint32_t k = 0; k < gap_count; k++) {
        struct allreduce_values lost;
        allreduce_inputs(gaps[k], size, i, arg0, &lost);
        want->sums[0] -= lost.sums[0];
        want->sums[1] -= lost.sums[1];
        want->half -= lost.half; /* small integers: exact in a double */
    }
    /* The largest (r + i) % n over the live r: the value v comes from
     * r = (v - i) mod n. */
    want->max = -1;
    for (uint32_t v = size; v-- > 0;) {
        uint32_t r = (v + size - i % size) % size;
        if (!is_gap(r, gaps, gap_count)) {
            want->max = v;
            break;
        }
    }
}

bool allreduce_equal(const struct allreduce_values *a, const struct allreduce_values *b)
{
    return a->sums[0] == b->sums[0] && a->sums[1] == b->sums[1] && a->max == b->max &&
           a->half == b->half;
}

uint32_t allreduce_digest_update(uint32_t digest, const struct allreduce_values *totals)
{
    digest = crc32_update(digest, totals->sums, sizeof totals->sums);
    return crc32_update(digest, &totals->max, sizeof totals->max);
}

/* ---- stencil ---- */

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

void stencil_shape_grid(uint32_t rank, uint32_t size, uint32_t edge, uint32_t torus_x,
                        uint32_t torus_y, struct stencil_shape *g)
{
    uint32_t plane = torus_x * torus_y;
    if (plane != 0 && size % plane == 0) {
        g->procs[0] = torus_x;
        g->procs[1] = torus_y;
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

static uint32_t rank_at(const struct stencil_shape *g, uint32_t x, uint32_t y, uint32_t z)
{
    return x + g->procs[0] * (y + g->procs[1] * z);
}

uint32_t stencil_neighbour(const struct stencil_shape *g, unsigned dim, unsigned dir)
{
    uint32_t at[3] = {g->at[0], g->at[1], g->at[2]};
    at[dim] = dir == 0 ? (at[dim] + 1) % g->procs[dim]
                       : (at[dim] + g->procs[dim] - 1) % g->procs[dim];
    return rank_at(g, at[0], at[1], at[2]);
}

uint32_t stencil_block_cells(uint32_t edge)
{
    return (edge + 2) * (edge + 2) * (edge + 2);
}

int64_t stencil_init_block(const struct stencil_shape *g, int64_t *grid)
{
    int64_t sum = 0;
    for (uint32_t z = 1; z <= g->edge; z++)
        for (uint32_t y = 1; y <= g->edge; y++)
            for (uint32_t x = 1; x <= g->edge; x++) {
                int64_t v = initial_value(g->at[0] * g->edge + x - 1, g->at[1] * g->edge + y - 1,
                                          g->at[2] * g->edge + z - 1);
                grid[padded_index(g->edge, x, y, z)] = v;
                sum += v;
            }
    return sum;
}

void stencil_move_face(int64_t *grid, uint32_t edge, unsigned face, int64_t *buffer, bool halo)
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

int64_t stencil_relax(uint32_t edge, const int64_t *from, int64_t *to)
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

int64_t stencil_block_sum(uint32_t edge, const int64_t *grid)
{
    int64_t sum = 0;
    for (uint32_t z = 1; z <= edge; z++)
        for (uint32_t y = 1; y <= edge; y++)
            for (uint32_t x = 1; x <= edge; x++)
                sum += grid[padded_index(edge, x, y, z)];
    return sum;
}

static uint32_t add_value(uint32_t crc, int64_t value)
{
    uint8_t bytes[8];
    le_put_u64(bytes, (uint64_t)value);
    return crc32_update(crc, bytes, sizeof bytes);
}

uint64_t stencil_block_checksum(uint32_t edge, const int64_t *grid)
{
    uint32_t crc = 0;
    for (uint32_t z = 1; z <= edge; z++)
        for (uint32_t y = 1; y <= edge; y++)
            for (uint32_t x = 1; x <= edge; x++)
                crc = add_value(crc, grid[padded_index(edge, x, y, z)]);
    return crc;
}

uint32_t stencil_digest(const uint64_t *checksums, uint32_t size)
{
    uint32_t crc = 0;
    for (uint32_t r = 0; r < size; r++)
        crc = add_value(crc, (int64_t)checksums[r]);
    return crc;
}

uint32_t stencil_reference_points(const struct stencil_shape *g)
{
    return g->procs[0] * g->procs[1] * g->procs[2] * g->edge * g->edge * g->edge;
}

void stencil_reference_init(const struct stencil_shape *g, int64_t *grid)
{
    uint32_t n[3] = {g->procs[0] * g->edge, g->procs[1] * g->edge, g->procs[2] * g->edge};
    for (uint32_t z = 0; z < n[2]; z++)
        for (uint32_t y = 0; y < n[1]; y++)
            for (uint32_t x = 0; x < n[0]; x++)
                grid[x + n[0] * (y + n[1] * z)] = initial_value(x, y, z);
}

void stencil_reference_step(const struct stencil_shape *g, const int64_t *from, int64_t *to)
{
    uint32_t n[3] = {g->procs[0] * g->edge, g->procs[1] * g->edge, g->procs[2] * g->edge};
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
}

bool stencil_reference_matches(const struct stencil_shape *g, const int64_t *grid,
                               const uint64_t *checksums, uint32_t size)
{
    uint32_t n[2] = {g->procs[0] * g->edge, g->procs[1] * g->edge};
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
                    crc = add_value(crc, grid[gx + n[0] * (gy + n[1] * gz)]);
                }
        if (crc != checksums[r])
            return false;
    }
    return true;
}

uint32_t group_live_rank(const uint32_t *gaps, uint32_t gap_count, uint32_t index)
{
    uint32_t rank = index;
    for (uint32_t i = 0; i < gap_count && gaps[i] <= rank; i++)
        rank++;
    return rank;
}

uint32_t group_live_index(const uint32_t *gaps, uint32_t gap_count, uint32_t rank)
{
    uint32_t index = rank;
    for (uint32_t i = 0; i < gap_count; i++)
        if (gaps[i] < rank)
            index--;
    return index;
}
