/*
 * tori-bench-link (./tori bench link): one-hop round-trip time, the cost of
 * each further hop, and loss and retransmissions under a flood, on QEMU and
 * host-process nodes (see qemu/bench/bench_link.h for what is measured and how).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu/bench/bench_link.h"
#include "qemu/bench/bench_link_options.h"
#include "tools/cli.h"
#include "qemu/launcher/emu_spawn.h"

#ifndef TORI_DEFAULT_IMAGE
#error "TORI_DEFAULT_IMAGE must be defined by the build"
#endif
#ifndef TORI_DEFAULT_NODE_BINARY
#error "TORI_DEFAULT_NODE_BINARY must be defined by the build"
#endif

#define TOOL "tori-bench-link"
/* Longest --out accepted: board directories and node files go below it. */
#define BENCH_LINK_OUT_MAX 400

int main(int argc, char **argv)
{
    cli_whole_lines();
    static struct bench_link_options options;
    char error[320];
    switch (bench_link_options_parse(argc, argv, TORI_DEFAULT_IMAGE,
                                     TORI_DEFAULT_NODE_BINARY, &options, error,
                                     sizeof error)) {
    case BENCH_LINK_OPTIONS_HELP:
        bench_link_options_usage(stdout);
        return 0;
    case BENCH_LINK_OPTIONS_ERROR:
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    case BENCH_LINK_OPTIONS_OK:
        break;
    }
    if (!bench_check_programs(TOOL, options.qemu, options.image, options.node_binary,
                              (options.boards & BENCH_LINK_BOARD_QEMU) != 0,
                              (options.boards & BENCH_LINK_BOARD_HOST) != 0))
        return 2;

    char template[] = "/tmp/tori-bench-link-XXXXXX";
    char base[BENCH_LINK_OUT_MAX + 1];
    if (!bench_out_base(TOOL, options.out_dir, template, base, sizeof base))
        return 2;

    static struct bench_link_board boards[2];
    static const unsigned order[2] = {BENCH_LINK_BOARD_QEMU, BENCH_LINK_BOARD_HOST};
    unsigned count = 0;
    int worst = 0;
    for (unsigned i = 0; i < 2; i++) {
        if ((options.boards & order[i]) == 0)
            continue;
        char out_dir[BENCH_LINK_OUT_MAX + 8];
        snprintf(out_dir, sizeof out_dir, "%s/%s", base,
                 order[i] == BENCH_LINK_BOARD_QEMU ? "qemu" : "host");
        int status = bench_link_run_board(&options, order[i], out_dir, &boards[count]);
        if (status != 0)
            fprintf(stderr, TOOL ": %s: %s\n", boards[count].name,
                    boards[count].error[0] != '\0' ? boards[count].error : "failed");
        count++;
        if (status > worst)
            worst = status;
        if (status >= 128)
            break; /* interrupted: no further board */
    }
    bench_link_print_table(options.json ? stderr : stdout, &options, boards, count);
    if (options.json)
        bench_link_print_json(stdout, &options, boards, count);
    for (unsigned b = 0; b < count; b++)
        bench_link_board_free(&boards[b]);
    return worst;
}
