#define _GNU_SOURCE
#include "qemu/bench/bench_comm.h"

#include <stdlib.h>
#include <string.h>

#include "membership/tree.h"
#include "node/flood.h"
#include "qemu/launcher/emu_app.h"
#include "qemu/launcher/emu_run.h"
#include "tools/cli.h"
#include "tools/event_line.h"

#define TOOL "tori-bench-comm"
#define DEFAULT_ROUNDS BENCH_COMM_ROUNDS_MAX
#define DEFAULT_PINGS 200u
#define DEFAULT_FLOOD_COUNT 10000u
#define DEFAULT_COLLECTIVE_DIMS "4x4x4"

/* ---- options ---- */

void bench_comm_options_usage(FILE *out)
{
    fprintf(out,
            "usage: tori-bench-comm [options]\n"
            "\n"
            "Measures the application layer against the raw torus link of the same\n"
            "run.  Pair runs (one per board, a 1-D torus of %u nodes) run the job\n"
            "`pingpong`: ranks 0 and 1 (neighbours) exchange 0 B to 64 KiB, the median\n"
            "of --rounds round trips per size; then node 0 pings node 1 (the raw frame\n"
            "round trip) and floods it with full frames (the raw bandwidth).  The\n"
            "collective run (host, --collective-dims) times barriers and allreduces\n"
            "against the tree model 2 L x hops, L half the one-hop round trip, hops\n"
            "the torus hops of the longest root-to-rank path of WORLD's tree.\n"
            "\n"
            "  --board qemu|host|both   what runs the pair runs (both)\n"
            "  --rounds N               round trips per size and collective calls,\n"
            "                           1..%u (%u)\n"
            "  --pings N                raw one-hop pings, 1..%u (%u)\n"
            "  --flood-count N          raw flood frames, 1..%u (%u)\n"
            "  --collective-dims DIMS   the host torus of the collective run (%s);\n"
            "                           'none': no collective run\n"
            "  --json                   the JSON record on stdout (the tables then go\n"
            "                           to stderr); it is always written to\n"
            "                           <out>/comm.json\n"
            "  --out DIR                logs, events and comm.json (default: a fresh\n"
            "                           /tmp/tori-bench-comm-XXXXXX)\n"
            "  --image FILE             node image for QEMU (build/qemu-virt/node.elf)\n"
            "  --node-binary FILE       host node program (the build's tori-node)\n"
            "  --qemu PROGRAM           QEMU to run (qemu-system-arm)\n"
            "  --verbose                the launcher's own messages and every event\n"
            "\n"
            "Ratios and their targets (quoted, not enforced): 0 B ping-pong RTT / raw\n"
            "RTT (within 1.2x), 64 KiB ping-pong bandwidth / raw flood (at least 80%%),\n"
            "allreduce and barrier / model (within 1.5x).  Exit status: 0 measured,\n"
            "1 a run failed, 2 bad options, 128+N stopped by signal N.\n",
            BENCH_COMM_RING, BENCH_COMM_ROUNDS_MAX, DEFAULT_ROUNDS, BENCH_COMM_PINGS_MAX,
            DEFAULT_PINGS, TORUS_FLOOD_MAX_COUNT, DEFAULT_FLOOD_COUNT, DEFAULT_COLLECTIVE_DIMS);
}

enum bench_comm_options_result bench_comm_options_parse(
    int argc, char **argv, const char *default_image, const char *default_node_binary,
    struct bench_comm_options *o, char *error, size_t capacity)
{
    memset(o, 0, sizeof *o);
    o->boards = BENCH_LINK_BOARD_QEMU | BENCH_LINK_BOARD_HOST;
    o->rounds = DEFAULT_ROUNDS;
    o->pings = DEFAULT_PINGS;
    o->flood_count = DEFAULT_FLOOD_COUNT;
    o->collective_dims = DEFAULT_COLLECTIVE_DIMS;
    o->image = default_image;
    o->node_binary = default_node_binary;
    o->qemu = "qemu-system-arm";

    const char *board = NULL, *rounds = NULL, *pings = NULL, *count = NULL, *dims = NULL;
    const char *out = NULL, *image = NULL, *node_binary = NULL, *qemu = NULL;
    const struct cli_option options[] = {
        {"--board", &board, NULL},        {"--rounds", &rounds, NULL},
        {"--pings", &pings, NULL},        {"--flood-count", &count, NULL},
        {"--collective-dims", &dims, NULL}, {"--out", &out, NULL},
        {"--image", &image, NULL},        {"--node-binary", &node_binary, NULL},
        {"--qemu", &qemu, NULL},          {"--json", NULL, &o->json},
        {"--verbose", NULL, &o->verbose},
    };
    switch (cli_scan(argc, argv, options, sizeof options / sizeof options[0], error,
                     capacity)) {
    case CLI_SCAN_HELP:
        return BENCH_COMM_OPTIONS_HELP;
    case CLI_SCAN_ERROR:
        return BENCH_COMM_OPTIONS_ERROR;
    case CLI_SCAN_OK:
        break;
    }
    const struct cli_unsigned_option numbers[] = {
        {"--rounds", rounds, 1, BENCH_COMM_ROUNDS_MAX, &o->rounds},
        {"--pings", pings, 1, BENCH_COMM_PINGS_MAX, &o->pings},
        {"--flood-count", count, 1, TORUS_FLOOD_MAX_COUNT, &o->flood_count},
    };
    if (!cli_parse_unsigned_options(numbers, sizeof numbers / sizeof numbers[0], error, capacity))
        return BENCH_COMM_OPTIONS_ERROR;
    if (dims != NULL) {
        /* The launcher's parser judges the dimensions (one message for all). */
        char *probe[] = {TOOL, "--dims", (char *)dims, NULL};
        static struct emu_options checked;
        if (strcmp(dims, "none") == 0) {
            o->collective_dims = NULL;
        } else if (emu_options_parse(3, probe, "-", "-", &checked, error, capacity) !=
                   EMU_OPTIONS_OK) {
            char reason[320];
            snprintf(reason, sizeof reason, "%s", error);
            snprintf(error, capacity, "--collective-%s",
                     strncmp(reason, "--", 2) == 0 ? reason + 2 : reason);
            return BENCH_COMM_OPTIONS_ERROR;
        } else {
            uint64_t nodes = 1;
            for (unsigned d = 0; d < checked.dims; d++)
                nodes *= checked.size[d];
            if (nodes < 2) {
                cli_invalid(error, capacity, "--collective-dims", dims,
                            "a torus of at least 2 nodes, or 'none'");
                return BENCH_COMM_OPTIONS_ERROR;
            }
            o->collective_dims = dims;
        }
    }
    const struct bench_shared_given given = {board, out, image, node_binary, qemu};
    if (!bench_shared_options_take(&given, &o->boards, &o->out_dir, &o->image,
                                   &o->node_binary, &o->qemu, error, capacity))
        return BENCH_COMM_OPTIONS_ERROR;
    return BENCH_COMM_OPTIONS_OK;
}

/* ---- the application's figures ---- */

/* Rank 0's app-pingpong, app-barrier and app-allreduce lines. */
static void observe(void *context, struct emu_node *node, const struct event_line *line)
{
    struct bench_comm_run *run = context;
    if (node->rank != 0)
        return;
    uint64_t value = 0;
    if (strcmp(line->name, "app-pingpong") == 0) {
        struct bench_comm_size size;
        if (run->sizes < BENCH_COMM_MAX_SIZES &&
            event_line_get_u64(line, "bytes", &size.bytes) &&
            event_line_get_u64(line, "rounds", &size.rounds) &&
            event_line_get_u64(line, "rtt_ns", &size.rtt_ns))
            run->size[run->sizes++] = size;
    } else if (strcmp(line->name, "app-barrier") == 0) {
        if (event_line_get_u64(line, "median_ns", &value))
            run->barrier_ns = value;
    } else if (strcmp(line->name, "app-allreduce") == 0) {
        if (event_line_get_u64(line, "median_ns", &value))
            run->allreduce_ns = value;
    }
}

/* ---- one run ---- */

static struct emu run_emu;

int bench_comm_run(const struct bench_comm_options *o, enum bench_comm_kind kind,
                   unsigned board, const char *out_dir, struct bench_comm_run *run)
{
    memset(run, 0, sizeof *run);
    run->kind = kind;
    run->board = board == BENCH_LINK_BOARD_QEMU ? "qemu" : "host";
    run->name = kind == BENCH_COMM_COLLECTIVE ? "host collectives"
                : board == BENCH_LINK_BOARD_QEMU ? "qemu pair"
                                                 : "host pair";
    if (kind == BENCH_COMM_COLLECTIVE)
        snprintf(run->dims, sizeof run->dims, "%s", o->collective_dims);
    else
        snprintf(run->dims, sizeof run->dims, "%u", BENCH_COMM_RING);
    snprintf(run->out_dir, sizeof run->out_dir, "%s", out_dir);
    run->link.name = run->board;
    run->link.attempted = true;
    run->link.max_hops = 1;

    /* The launcher's own options, as if from tori-emu's command line.  The
     * benchmark times messages, not the detector: a detect timeout of a
     * second keeps a busy host from aborting the job over a false
     * suspicion (the default 60 ms did, in a loaded test run). */
    char iterations[16];
    snprintf(iterations, sizeof iterations, "%u", o->rounds);
    char *argv[] = {TOOL, "--dims", run->dims, "--board", (char *)run->board,
                    "--out", (char *)out_dir, "--image", (char *)o->image,
                    "--node-binary", (char *)o->node_binary, "--qemu", (char *)o->qemu,
                    "--app", "pingpong", "--iterations", iterations,
                    "--heartbeat-ms", "100", "--detect-timeout-ms", "1000",
                    o->verbose ? "--verbose" : NULL, NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - (o->verbose ? 1 : 2);
    static struct emu_options emu_options;
    if (emu_options_parse(argc, argv, o->image, o->node_binary, &emu_options, run->error,
                          sizeof run->error) != EMU_OPTIONS_OK) {
        run->status = 1;
        return 1;
    }

    struct emu *emu = &run_emu;
    FILE *quiet = o->verbose ? NULL : fopen("/dev/null", "we");
    fprintf(stderr, TOOL ": %s: starting a torus of %s nodes, job pingpong (logs in %s)\n",
            run->name, run->dims, out_dir);
    bool opened = emu_open(emu, &emu_options, NULL);
    /* The launcher's chatter stays out of the benchmark's output unless
     * --verbose; its errors still reach stderr. */
    emu->human = quiet != NULL ? quiet : stderr;
    emu->observer = observe;
    emu->observer_context = run;
    run->nodes = emu->count;
    bool measured = false;
    if (opened && emu_start_all(emu)) {
        fprintf(stderr, TOOL ": %s: %u nodes ready, pingpong runs (%u rounds)\n", run->name,
                (unsigned)emu->count, o->rounds);
        emu_app_wait(emu);
        bool judged = emu_keep_going(emu) && emu_app_judge(emu);
        bool reported = run->sizes > 0 && run->barrier_ns > 0 && run->allreduce_ns > 0;
        uint32_t aborted = 0;
        for (uint32_t r = 0; r < emu->count; r++)
            aborted += emu->nodes[r].app_aborted ? 1u : 0u;
        if (aborted > 0) {
            judged = false;
            snprintf(run->error, sizeof run->error,
                     "the job pingpong was aborted on %u nodes: a node was taken for "
                     "failed (see the view lines in the logs)",
                     (unsigned)aborted);
        } else if (judged && !reported)
            snprintf(run->error, sizeof run->error,
                     "rank 0 did not report app-pingpong, app-barrier and app-allreduce "
                     "(expected a node image built from this tree: rebuild it)");
        else if (!judged)
            snprintf(run->error, sizeof run->error, "the job pingpong failed (see above)");
        run->link.nodes = emu->count;
        struct bench_link_probe *probe =
            judged && reported ? bench_link_probe_attach(TOOL, emu, &run->link, observe, run)
                               : NULL;
        if (judged && reported && probe == NULL)
            snprintf(run->error, sizeof run->error, "out of memory");
        measured = probe != NULL && bench_link_probe_rtt(probe, o->pings);
        if (measured && kind == BENCH_COMM_PAIR) {
            measured = bench_link_probe_flood(probe, 1, o->flood_count, TORUS_FLOOD_MAX_SIZE,
                                              &run->link.flood[0]);
            run->link.floods = measured ? 1 : 0;
        }
        if (probe != NULL && !measured && run->error[0] == '\0')
            snprintf(run->error, sizeof run->error, "%s", run->link.error);
        bench_link_probe_detach(probe);
    } else if (run->error[0] == '\0') {
        snprintf(run->error, sizeof run->error,
                 opened ? "the torus did not start (see above)"
                        : "the torus could not be set up (see above)");
    }
    uint32_t levels = membership_tree_levels(run->nodes, CONFIG_COMM_TREE_RADIX);
    run->tree_depth = levels > 0 ? levels - 1 : 0;
    run->tree_path_hops = opened ? bench_comm_tree_path_hops(&emu->geometry) : 0;
    int status = emu_close(emu);
    if (quiet != NULL)
        fclose(quiet);
    if ((!opened || !measured) && status == 0)
        status = 1;
    run->status = status;
    return status;
}

void bench_comm_run_free(struct bench_comm_run *run)
{
    bench_link_board_free(&run->link);
}

/* ---- derived figures ---- */

uint64_t bench_comm_raw_rtt_ns(const struct bench_comm_run *run)
{
    return bench_link_one_hop_ns(&run->link);
}

double bench_comm_pingpong_bandwidth(const struct bench_comm_run *run)
{
    if (run->sizes == 0)
        return 0.0;
    const struct bench_comm_size *largest = &run->size[run->sizes - 1];
    /* A round trip carries the message once each way. */
    return bench_link_ratio(2.0 * (double)largest->bytes * 1e9, (double)largest->rtt_ns);
}

double bench_comm_flood_bandwidth(const struct bench_comm_run *run)
{
    if (run->link.floods == 0)
        return 0.0;
    const struct bench_link_flood *f = &run->link.flood[0];
    return bench_link_ratio((double)f->delivered * (double)f->size * 1e9, (double)f->span_ns);
}

uint32_t bench_comm_tree_path_hops(const struct torus_geometry *geometry)
{
    uint32_t count = torus_geometry_node_count(geometry);
    uint32_t *path = calloc(count > 0 ? count : 1, sizeof *path);
    if (path == NULL)
        return 0;
    uint32_t longest = 0;
    for (uint32_t rank = 1; rank < count; rank++) {
        struct membership_tree_links links;
        membership_tree_runs(count, CONFIG_COMM_TREE_RADIX, rank, &links);
        /* A parent's rank is below its children's: its path is known. */
        path[rank] = path[links.parent] + torus_geometry_distance(geometry, rank, links.parent);
        if (path[rank] > longest)
            longest = path[rank];
    }
    free(path);
    return longest;
}

double bench_comm_model_ns(const struct bench_comm_run *run)
{
    /* 2 L x hops with L = RTT / 2. */
    return (double)bench_comm_raw_rtt_ns(run) * (double)run->tree_path_hops;
}
