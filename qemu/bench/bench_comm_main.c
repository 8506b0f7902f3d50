/*
 * tori-bench-comm (./tori bench comm): the application layer's ping-pong
 * and collectives against the raw torus link of the same run, on QEMU and
 * host-process nodes (see qemu/bench/bench_comm.h for what and how).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu/bench/bench_comm.h"
#include "qemu/launcher/emu_spawn.h"
#include "tools/cli.h"

#ifndef TORI_DEFAULT_IMAGE
#error "TORI_DEFAULT_IMAGE must be defined by the build"
#endif
#ifndef TORI_DEFAULT_NODE_BINARY
#error "TORI_DEFAULT_NODE_BINARY must be defined by the build"
#endif

#define TOOL "tori-bench-comm"
/* Longest --out accepted: run directories and node files go below it. */
#define BENCH_COMM_OUT_MAX 400
#define BENCH_COMM_RUNS 3u /* qemu pair, host pair, host collectives */

/* <base>/comm.json: the record of every run, whatever the outcome. */
static void write_record(const char *base, const struct bench_comm_options *o,
                         const struct bench_comm_run *runs, unsigned count)
{
    char path[BENCH_COMM_OUT_MAX + 16];
    snprintf(path, sizeof path, "%s/comm.json", base);
    FILE *file = fopen(path, "we");
    if (file == NULL) {
        fprintf(stderr, TOOL ": cannot write '%s': %s\n", path, strerror(errno));
        return;
    }
    bench_comm_print_json(file, o, runs, count);
    if (fclose(file) != 0)
        fprintf(stderr, TOOL ": cannot write '%s': %s\n", path, strerror(errno));
    else
        fprintf(stderr, TOOL ": record written to %s\n", path);
}

int main(int argc, char **argv)
{
    cli_whole_lines();
    static struct bench_comm_options options;
    char error[320];
    switch (bench_comm_options_parse(argc, argv, TORI_DEFAULT_IMAGE, TORI_DEFAULT_NODE_BINARY,
                                     &options, error, sizeof error)) {
    case BENCH_COMM_OPTIONS_HELP:
        bench_comm_options_usage(stdout);
        return 0;
    case BENCH_COMM_OPTIONS_ERROR:
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    case BENCH_COMM_OPTIONS_OK:
        break;
    }
    /* The collective run is a host torus whatever the pair boards. */
    if (!bench_check_programs(TOOL, options.qemu, options.image, options.node_binary,
                              (options.boards & BENCH_LINK_BOARD_QEMU) != 0,
                              (options.boards & BENCH_LINK_BOARD_HOST) != 0 ||
                                  options.collective_dims != NULL))
        return 2;

    char template[] = "/tmp/tori-bench-comm-XXXXXX";
    char base[BENCH_COMM_OUT_MAX + 1];
    if (!bench_out_base(TOOL, options.out_dir, template, base, sizeof base))
        return 2;

    static struct bench_comm_run runs[BENCH_COMM_RUNS];
    static const struct {
        enum bench_comm_kind kind;
        unsigned board;
        const char *dir;
    } order[BENCH_COMM_RUNS] = {
        {BENCH_COMM_PAIR, BENCH_LINK_BOARD_QEMU, "qemu-pair"},
        {BENCH_COMM_PAIR, BENCH_LINK_BOARD_HOST, "host-pair"},
        {BENCH_COMM_COLLECTIVE, BENCH_LINK_BOARD_HOST, "host-collectives"},
    };
    unsigned count = 0;
    int worst = 0;
    for (unsigned i = 0; i < BENCH_COMM_RUNS; i++) {
        if (order[i].kind == BENCH_COMM_PAIR ? (options.boards & order[i].board) == 0
                                             : options.collective_dims == NULL)
            continue;
        char out_dir[BENCH_COMM_OUT_MAX + 24];
        snprintf(out_dir, sizeof out_dir, "%s/%s", base, order[i].dir);
        int status = bench_comm_run(&options, order[i].kind, order[i].board, out_dir,
                                    &runs[count]);
        if (status != 0)
            fprintf(stderr, TOOL ": %s: %s\n", runs[count].name,
                    runs[count].error[0] != '\0' ? runs[count].error : "failed");
        count++;
        if (status > worst)
            worst = status;
        if (status >= 128)
            break; /* interrupted: no further run */
    }
    bench_comm_print_table(options.json ? stderr : stdout, &options, runs, count);
    write_record(base, &options, runs, count);
    if (options.json)
        bench_comm_print_json(stdout, &options, runs, count);
    for (unsigned r = 0; r < count; r++)
        bench_comm_run_free(&runs[r]);
    return worst;
}
