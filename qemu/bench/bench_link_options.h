/*
 * tori-bench-link's command line, parsed and checked before anything
 * starts (one clear line for every bad option).
 */
#ifndef QEMU_BENCH_BENCH_LINK_OPTIONS_H
#define QEMU_BENCH_BENCH_LINK_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Bits of bench_link_options.boards. */
#define BENCH_LINK_BOARD_QEMU 0x1u
#define BENCH_LINK_BOARD_HOST 0x2u

#define BENCH_LINK_RING_MIN 4u  /* two hop counts at least: a slope */
#define BENCH_LINK_RING_MAX 64u
#define BENCH_LINK_ROUNDS_MAX 100000u

struct bench_link_options {
    unsigned boards;       /* BENCH_LINK_BOARD_* bits */
    unsigned rounds;       /* pings per hop count */
    unsigned ring;         /* nodes of the 1-D torus */
    unsigned flood_count;  /* frames per flood */
    unsigned flood_size;   /* payload bytes per frame */
    bool json, verbose;
    const char *out_dir;   /* NULL: a fresh /tmp/tori-bench-link-XXXXXX */
    const char *image, *node_binary, *qemu;
};

/* The options both emulation benchmarks (link, comm) take, as cli_scan left
 * them: NULL when not given. */
struct bench_shared_given {
    const char *board, *out, *image, *node_binary, *qemu;
};

/* Checks the shared options (--board qemu|host|both; paths not empty) and
 * overrides the defaults already in *boards and the four paths; false with
 * a one-line reason in error. */
bool bench_shared_options_take(const struct bench_shared_given *given, unsigned *boards,
                               const char **out_dir, const char **image,
                               const char **node_binary, const char **qemu, char *error,
                               size_t capacity);

/* What the chosen boards need (QEMU and the image, the host node binary),
 * checked before anything starts; false with the reason printed after
 * "TOOL: " on stderr. */
bool bench_check_programs(const char *tool, const char *qemu, const char *image,
                          const char *node_binary, bool qemu_needed, bool host_needed);

/* The run's output directory: --out as given, else a fresh directory made
 * from template (e.g. "/tmp/tori-bench-link-XXXXXX", rewritten in place),
 * copied into base, which holds at most capacity - 1 characters; false with
 * the reason printed after "TOOL: " on stderr. */
bool bench_out_base(const char *tool, const char *given, char *template_path, char *base,
                    size_t capacity);

enum bench_link_options_result {
    BENCH_LINK_OPTIONS_OK,
    BENCH_LINK_OPTIONS_HELP,
    BENCH_LINK_OPTIONS_ERROR,
};

/*
 * Parses argv; defaults supply image and node binary.  On error writes a
 * one-line reason (without the "tori-bench-link: " prefix).
 */
enum bench_link_options_result bench_link_options_parse(
    int argc, char **argv, const char *default_image, const char *default_node_binary,
    struct bench_link_options *options, char *error, size_t capacity);

void bench_link_options_usage(FILE *out);

#endif /* QEMU_BENCH_BENCH_LINK_OPTIONS_H */
