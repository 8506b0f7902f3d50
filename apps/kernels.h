/*
 * The pure computation of the shipped applications: their inputs, closed
 * forms, relaxation steps, references and digests.  No communication, no
 * I/O, no globals: the applications (apps/, over node/tori.h) and the
 * simulator's model applications (sim/sim_app.c, over comm/comm.h) both
 * compute with these, so a digest from tori-sim is the digest a torus of
 * nodes reports.
 */
#ifndef APPS_KERNELS_H
#define APPS_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

/* ---- allreduce ----
 * Iteration i (1-based) on rank r of n, over WORLD:
 *   sum of (r + 1) * i            = i * n (n + 1) / 2
 *   sum of r * r + i + arg[0]     = (n - 1) n (2n - 1) / 6 + n (i + arg[0])
 *   max of (r + i) % n            = n - 1
 *   sum of r + 1 as a double      = n (n + 1) / 2 (exact: small integers;
 *                                   doubles only added, never multiplied)
 * The digest is the CRC-32 of every total in order. */
struct allreduce_values {
    int64_t sums[2]; /* allreduced with SUM */
    int64_t max;     /* with MAX */
    double half;     /* with SUM, as doubles */
};

/* Rank r's contribution to iteration i. */
void allreduce_inputs(uint32_t rank, uint32_t size, uint32_t i, int64_t arg0,
                      struct allreduce_values *in);
/* The totals iteration i must give on every rank. */
void allreduce_expected(uint32_t size, uint32_t i, int64_t arg0, struct allreduce_values *want);
/* The totals over the live ranks of a communicator of `size` with gaps
 * (ascending failed ranks: a BLANK communicator after a failure). */
void allreduce_expected_without(uint32_t size, uint32_t i, int64_t arg0, const uint32_t *gaps,
                                uint32_t gap_count, struct allreduce_values *want);
bool allreduce_equal(const struct allreduce_values *a, const struct allreduce_values *b);
/* Adds one iteration's totals to the digest (the sums, then the max). */
uint32_t allreduce_digest_update(uint32_t digest, const struct allreduce_values *totals);

/* ---- stencil ----
 * 3-D Jacobi relaxation on a periodic grid in fixed point (see
 * apps/stencil.c): each rank an L x L x L block with a one-cell halo. */
#define STENCIL_SCALE_SHIFT 16
/* The job's arguments when left 0: block edge L, iterations between the
 * residual allreduces (the node's app and the simulator's model alike). */
#define STENCIL_DEFAULT_EDGE 4
#define STENCIL_DEFAULT_CHECK_EVERY 10

struct stencil_shape {
    uint32_t procs[3]; /* process grid */
    uint32_t at[3];    /* this rank's place in it */
    uint32_t edge;     /* L */
};

/* The process grid: the torus's first two dimensions (plane = size[0],
 * size[1]), the rest folded into the third; a WORLD that is not a multiple
 * of the plane falls back to a line of ranks. */
void stencil_shape_grid(uint32_t rank, uint32_t size, uint32_t edge, uint32_t torus_x,
                        uint32_t torus_y, struct stencil_shape *g);
/* The rank one step along dim in direction dir (0: +). */
uint32_t stencil_neighbour(const struct stencil_shape *g, unsigned dim, unsigned dir);
/* Cells of one padded block: (edge + 2)^3. */
uint32_t stencil_block_cells(uint32_t edge);
/* Fills the block's interior with the initial pattern; returns its sum. */
int64_t stencil_init_block(const struct stencil_shape *g, int64_t *grid);
/* Copies a face of the interior out (halo false) or a received face into
 * the halo (halo true); face = 2 dim + dir (dir 0: the + side); the buffer
 * holds edge x edge values. */
void stencil_move_face(int64_t *grid, uint32_t edge, unsigned face, int64_t *buffer, bool halo);
/* One relaxation step of the interior; returns the sum of |change|. */
int64_t stencil_relax(uint32_t edge, const int64_t *from, int64_t *to);
int64_t stencil_block_sum(uint32_t edge, const int64_t *grid);
uint64_t stencil_block_checksum(uint32_t edge, const int64_t *grid);
/* The digest: the CRC-32 of the block checksums in rank order. */
uint32_t stencil_digest(const uint64_t *checksums, uint32_t size);

/* The serial reference: the whole grid (procs x edge per dimension). */
uint32_t stencil_reference_points(const struct stencil_shape *g);
void stencil_reference_init(const struct stencil_shape *g, int64_t *grid);
void stencil_reference_step(const struct stencil_shape *g, const int64_t *from, int64_t *to);
/* True when every rank's gathered block checksum is the reference's. */
bool stencil_reference_matches(const struct stencil_shape *g, const int64_t *grid,
                               const uint64_t *checksums, uint32_t size);

/* ---- a group with gaps (issue 14: a BLANK communicator, or REBUILD with
 * no spare left) ----
 * gaps: the failed ranks, ascending.  The live rank at place index
 * (0..size - count - 1), and a live rank's place among the live ranks. */
uint32_t group_live_rank(const uint32_t *gaps, uint32_t gap_count, uint32_t index);
uint32_t group_live_index(const uint32_t *gaps, uint32_t gap_count, uint32_t rank);

#endif /* APPS_KERNELS_H */
