#define _GNU_SOURCE /* mkdtemp */
#include "qemu/bench/bench_link_options.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/flood.h"
#include "qemu/launcher/emu_spawn.h"
#include "tools/cli.h"

#define DEFAULT_ROUNDS 200u
#define DEFAULT_RING 8u
#define DEFAULT_FLOOD_COUNT 20000u
#define DEFAULT_FLOOD_SIZE TORUS_FLOOD_MAX_SIZE

void bench_link_options_usage(FILE *out)
{
    fprintf(out,
            "usage: tori-bench-link [options]\n"
            "\n"
            "Measures the torus links on this machine: one-hop round-trip time and\n"
            "its spread, the added round trip of each further hop (least-squares\n"
            "slope over hop counts, as a ratio to the one-hop RTT of the same run),\n"
            "and a flood of frames over one and two hops (delivered/sent, loss,\n"
            "retransmissions and drops from the node counters, throughput as frames\n"
            "per one-hop RTT).  Each board runs a 1-D torus of --ring nodes; node 0\n"
            "pings nodes 1..ring/2 in turn and floods nodes 1 and 2.\n"
            "\n"
            "  --board qemu|host|both  what runs the nodes (both)\n"
            "  --rounds N           pings per hop count, 1..%u (%u)\n"
            "  --ring N             nodes in the 1-D torus, %u..%u (%u)\n"
            "  --flood-count N      frames per flood, 1..%u (%u)\n"
            "  --flood-size N       payload bytes per frame, %u..%u (%u: full size)\n"
            "  --json               one JSON object with every result on stdout\n"
            "                       (the table then goes to stderr)\n"
            "  --out DIR            node logs and events (default: a fresh\n"
            "                       /tmp/tori-bench-link-XXXXXX)\n"
            "  --image FILE         node image for QEMU (build/qemu-virt/node.elf)\n"
            "  --node-binary FILE   host node program (the build's tori-node)\n"
            "  --qemu PROGRAM       QEMU to run (qemu-system-arm)\n"
            "  --verbose            the launcher's own messages and every event\n"
            "\n"
            "Times are quoted beside, and as ratios to, the one-hop RTT measured in\n"
            "the same run.  Exit status: 0 measured, 1 a torus or a phase failed,\n"
            "2 bad options, 128+N stopped by signal N.\n",
            BENCH_LINK_ROUNDS_MAX, DEFAULT_ROUNDS, BENCH_LINK_RING_MIN,
            BENCH_LINK_RING_MAX, DEFAULT_RING, TORUS_FLOOD_MAX_COUNT,
            DEFAULT_FLOOD_COUNT, TORUS_FLOOD_MIN_SIZE, TORUS_FLOOD_MAX_SIZE,
            DEFAULT_FLOOD_SIZE);
}

bool bench_check_programs(const char *tool, const char *qemu, const char *image,
                          const char *node_binary, bool qemu_needed, bool host_needed)
{
    const struct emu_programs wanted = {
        .qemu = qemu, .image = image, .node_binary = node_binary};
    static struct emu_program_paths paths;
    char error[EMU_PATH_MAX + 256];
    if (!emu_spawn_check_programs(&wanted, qemu_needed, host_needed, &paths, error,
                                  sizeof error)) {
        fprintf(stderr, "%s: %s\n", tool, error);
        return false;
    }
    return true;
}

bool bench_out_base(const char *tool, const char *given, char *template_path, char *base,
                    size_t capacity)
{
    const char *text = given;
    if (text == NULL) {
        if (mkdtemp(template_path) == NULL) {
            fprintf(stderr, "%s: cannot create a directory under /tmp: %s\n", tool,
                    strerror(errno));
            return false;
        }
        text = template_path;
    }
    if (strlen(text) >= capacity) {
        fprintf(stderr, "%s: --out path is %zu characters long (expected at most %zu)\n", tool,
                strlen(text), capacity - 1);
        return false;
    }
    snprintf(base, capacity, "%s", text);
    return true;
}

bool bench_shared_options_take(const struct bench_shared_given *given, unsigned *boards,
                               const char **out_dir, const char **image,
                               const char **node_binary, const char **qemu, char *error,
                               size_t capacity)
{
    if (given->board != NULL) {
        if (strcmp(given->board, "qemu") == 0) {
            *boards = BENCH_LINK_BOARD_QEMU;
        } else if (strcmp(given->board, "host") == 0) {
            *boards = BENCH_LINK_BOARD_HOST;
        } else if (strcmp(given->board, "both") != 0) {
            return cli_invalid(error, capacity, "--board", given->board, "qemu, host or both");
        }
    }
    const struct {
        const char *name;
        const char *value;
        const char **target;
    } paths[] = {{"--out", given->out, out_dir},
                 {"--image", given->image, image},
                 {"--node-binary", given->node_binary, node_binary},
                 {"--qemu", given->qemu, qemu}};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (paths[p].value != NULL && paths[p].value[0] == '\0') {
            snprintf(error, capacity, "%s is empty (expected a path)", paths[p].name);
            return false;
        }
    }
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (paths[p].value != NULL)
            *paths[p].target = paths[p].value;
    }
    return true;
}

enum bench_link_options_result bench_link_options_parse(
    int argc, char **argv, const char *default_image, const char *default_node_binary,
    struct bench_link_options *o, char *error, size_t capacity)
{
    memset(o, 0, sizeof *o);
    o->boards = BENCH_LINK_BOARD_QEMU | BENCH_LINK_BOARD_HOST;
    o->rounds = DEFAULT_ROUNDS;
    o->ring = DEFAULT_RING;
    o->flood_count = DEFAULT_FLOOD_COUNT;
    o->flood_size = DEFAULT_FLOOD_SIZE;
    o->image = default_image;
    o->node_binary = default_node_binary;
    o->qemu = "qemu-system-arm";

    const char *board = NULL, *rounds = NULL, *ring = NULL, *count = NULL, *size = NULL;
    const char *out = NULL, *image = NULL, *node_binary = NULL, *qemu = NULL;
    const struct cli_option options[] = {
        {"--board", &board, NULL},       {"--rounds", &rounds, NULL},
        {"--ring", &ring, NULL},         {"--flood-count", &count, NULL},
        {"--flood-size", &size, NULL},   {"--out", &out, NULL},
        {"--image", &image, NULL},       {"--node-binary", &node_binary, NULL},
        {"--qemu", &qemu, NULL},         {"--json", NULL, &o->json},
        {"--verbose", NULL, &o->verbose},
    };
    switch (cli_scan(argc, argv, options, sizeof options / sizeof options[0], error,
                     capacity)) {
    case CLI_SCAN_HELP:
        return BENCH_LINK_OPTIONS_HELP;
    case CLI_SCAN_ERROR:
        return BENCH_LINK_OPTIONS_ERROR;
    case CLI_SCAN_OK:
        break;
    }
    const struct cli_unsigned_option numbers[] = {
        {"--rounds", rounds, 1, BENCH_LINK_ROUNDS_MAX, &o->rounds},
        {"--ring", ring, BENCH_LINK_RING_MIN, BENCH_LINK_RING_MAX, &o->ring},
        {"--flood-count", count, 1, TORUS_FLOOD_MAX_COUNT, &o->flood_count},
        {"--flood-size", size, TORUS_FLOOD_MIN_SIZE, TORUS_FLOOD_MAX_SIZE, &o->flood_size},
    };
    if (!cli_parse_unsigned_options(numbers, sizeof numbers / sizeof numbers[0], error, capacity))
        return BENCH_LINK_OPTIONS_ERROR;
    const struct bench_shared_given given = {board, out, image, node_binary, qemu};
    if (!bench_shared_options_take(&given, &o->boards, &o->out_dir, &o->image,
                                   &o->node_binary, &o->qemu, error, capacity))
        return BENCH_LINK_OPTIONS_ERROR;
    return BENCH_LINK_OPTIONS_OK;
}
