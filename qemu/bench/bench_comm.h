/*
 * tori-bench-comm (./tori bench comm): the application layer's cost over
 * the raw torus link, measured in the same run (FT-MPI section 4.1 on tori).
 * Every run is one torus started by the launcher (qemu/launcher/emu_run.h)
 * with the job `pingpong` (apps/pingpong.c, through tori-emu's --app
 * machinery, qemu/launcher/emu_app.h); once every node reported, the raw
 * link is measured on the same nodes with tori-bench-link's probe
 * (qemu/bench/bench_link.h):
 *
 *   pair runs (per board, a 1-D torus of BENCH_COMM_RING nodes)
 *       ping-pong between ranks 0 and 1 (neighbours), 0 B to 64 KiB, the
 *       median of --rounds round trips per size; beside it the raw one-hop
 *       frame round trip (`ping 1`, median of --pings) and a raw frame
 *       flood over the same link (`flood 1`).
 *   the collective run (host, --collective-dims, 4x4x4)
 *       barrier and allreduce (one int64 sum) latency, rank 0's median of
 *       --rounds calls, against the tree model 2 L x hops: L half the
 *       one-hop median round trip of the same run, hops the torus hops of
 *       the longest path from the root down the communicator's tree (radix
 *       CONFIG_COMM_TREE_RADIX): a tree edge spans several hops, and a
 *       frame pays L at every one of them.
 *
 * Ratios, with their targets (quoted, never enforced): small-message RTT /
 * raw frame RTT (within 1.2x), 64 KiB ping-pong bandwidth / raw flood
 * bandwidth (at least 80%), allreduce and barrier / model (within 1.5x).
 */
#ifndef QEMU_BENCH_BENCH_COMM_H
#define QEMU_BENCH_BENCH_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/tori_config.h"
#include "net/torus/geometry.h"
#include "qemu/bench/bench_link.h"

#define BENCH_COMM_RING 4u          /* nodes of a pair run's 1-D torus */
#define BENCH_COMM_ROUNDS_MAX 64u   /* pingpong keeps at most 64 samples */
#define BENCH_COMM_PINGS_MAX 100000u
/* Sizes pingpong reports: 0, then 1, 2, 4 ... its largest message. */
#define BENCH_COMM_MAX_SIZES 24u

struct bench_comm_options {
    unsigned boards;          /* BENCH_LINK_BOARD_* bits: the pair runs */
    unsigned rounds;          /* ping-pong round trips per size, collective calls */
    unsigned pings;           /* raw one-hop pings */
    unsigned flood_count;     /* raw flood frames (full size) */
    const char *collective_dims; /* NULL: no collective run */
    bool json, verbose;
    const char *out_dir;      /* NULL: a fresh /tmp/tori-bench-comm-XXXXXX */
    const char *image, *node_binary, *qemu;
};

enum bench_comm_options_result {
    BENCH_COMM_OPTIONS_OK,
    BENCH_COMM_OPTIONS_HELP,
    BENCH_COMM_OPTIONS_ERROR,
};

/* Parses argv; on error writes a one-line reason (without the tool's name). */
enum bench_comm_options_result bench_comm_options_parse(
    int argc, char **argv, const char *default_image, const char *default_node_binary,
    struct bench_comm_options *options, char *error, size_t capacity);

void bench_comm_options_usage(FILE *out);

struct bench_comm_size {
    uint64_t bytes, rounds, rtt_ns; /* rank 0's median round trip */
};

enum bench_comm_kind { BENCH_COMM_PAIR, BENCH_COMM_COLLECTIVE };

struct bench_comm_run {
    enum bench_comm_kind kind;
    const char *name;         /* "qemu pair", "host pair", "host collectives" */
    const char *board;        /* "qemu", "host" */
    char dims[32];
    unsigned nodes;
    int status;               /* 0 measured; 1 failed (error); 128+N signal N */
    char error[320];
    char out_dir[512];
    /* The application's figures (rank 0's event lines). */
    unsigned sizes;
    struct bench_comm_size size[BENCH_COMM_MAX_SIZES];
    uint64_t barrier_ns, allreduce_ns; /* 0: not reported */
    uint32_t tree_depth;      /* the collective run's WORLD tree */
    uint32_t tree_path_hops;  /* ... its longest root-to-rank path, in torus hops */
    /* The raw link on the same nodes: ping rounds (hop[0]) and, on pair
     * runs, flood[0] over one hop. */
    struct bench_link_board link;
};

/* Runs one torus (kind, board) with logs under out_dir; returns its status. */
int bench_comm_run(const struct bench_comm_options *options, enum bench_comm_kind kind,
                   unsigned board, const char *out_dir, struct bench_comm_run *run);

void bench_comm_run_free(struct bench_comm_run *run);

/* Figures derived from a run (0 when a term is missing). */
uint64_t bench_comm_raw_rtt_ns(const struct bench_comm_run *run);
/* One-way payload rate of the ping-pong at its largest size, and of the
 * raw flood, in bytes per second. */
double bench_comm_pingpong_bandwidth(const struct bench_comm_run *run);
double bench_comm_flood_bandwidth(const struct bench_comm_run *run);
/* The torus hops of the longest path from the root down WORLD's tree
 * (membership_tree_runs, radix CONFIG_COMM_TREE_RADIX) when every node of
 * geometry is a member: WORLD rank r is node r. */
uint32_t bench_comm_tree_path_hops(const struct torus_geometry *geometry);
/* 2 L x hops, L half the raw one-hop RTT, hops the tree's longest path. */
double bench_comm_model_ns(const struct bench_comm_run *run);

/* The tables and ratios of every run. */
void bench_comm_print_table(FILE *out, const struct bench_comm_options *options,
                            const struct bench_comm_run *runs, unsigned count);

/* The whole record as one JSON object (and a newline). */
void bench_comm_print_json(FILE *out, const struct bench_comm_options *options,
                           const struct bench_comm_run *runs, unsigned count);

#endif /* QEMU_BENCH_BENCH_COMM_H */
