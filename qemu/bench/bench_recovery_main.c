/*
 * tori-bench-recovery (./tori bench recovery): issue 14's recovery time per
 * communicator mode on QEMU and host tori (one tori-emu job per run) and
 * in the simulator (one tori-sim job per mode, in virtual time;
 * qemu/bench/bench_recovery.h for the phases).  Logs, events and
 * recovery.json stay under --out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qemu/bench/bench_faults.h"
#include "qemu/bench/bench_link_options.h"
#include "qemu/bench/bench_recovery.h"
#include "qemu/faults/emu_results.h"
#include "qemu/launcher/emu_spawn.h"
#include "tools/cli.h"

#ifndef TORI_DEFAULT_IMAGE
#error "TORI_DEFAULT_IMAGE must be defined by the build"
#endif
#ifndef TORI_DEFAULT_NODE_BINARY
#error "TORI_DEFAULT_NODE_BINARY must be defined by the build"
#endif
#ifndef TORI_DEFAULT_EMU
#error "TORI_DEFAULT_EMU must be defined by the build"
#endif
#ifndef TORI_DEFAULT_SIM
#error "TORI_DEFAULT_SIM must be defined by the build"
#endif
#if !defined(TORI_DEFAULT_LOOP) || !defined(TORI_DEFAULT_LOOP_NOFT) || \
    !defined(TORI_DEFAULT_NODE_BINARY_FT_OFF)
#error "TORI_DEFAULT_LOOP, _LOOP_NOFT and _NODE_BINARY_FT_OFF must be defined by the build"
#endif

#define TOOL "tori-bench-recovery"
#define CONFIGS_MAX 4u
#define MODES_MAX 3u
#define SIM_DIMS_MAX 4u
#define OUT_MAX 400
#define KILLED_NODE 3u       /* issue 14's `kill 3 at iteration N` */
#define SECOND_KILLED_NODE 5u /* --failures 2: then `kill 5`, three tenths later */
/* The simulator's job: a few iterations are enough (the crash at the
 * second, the resume at the third), and they keep 65,536 ranks short. */
#define SIM_ITERATIONS "4"
#define SIM_KILL "kill 3 at iteration 2"

static void usage(FILE *out)
{
    fputs("usage: tori-bench-recovery [options]\n"
          "\n"
          "Runs the job `allreduce` with a crash (kill 3 at the middle iteration, then\n"
          "kill 5 three tenths of the iterations later) under each --comm-mode on each\n"
          "configuration, and times failure -> detection -> view -> communicator rebuilt\n"
          "-> application resumed for each crash, beside the run's own detection time\n"
          "and T_s; target: resumed <= 1.2 x (detection + T_s) + one allreduce (measured\n"
          "in the same run, before the first crash).  Under QEMU the first recovery also\n"
          "pays TCG's translation of the failure path on every node; the second runs\n"
          "translated code, as hardware always does.  The simulator runs the same job\n"
          "(" SIM_ITERATIONS " iterations, " SIM_KILL ") under each mode, in virtual time, beside\n"
          "a crash-free run's allreduce (its time and messages).\n"
          "\n"
          "  --configs LIST     BOARD-DIMS[@HB/DT],... (qemu-2x2x2,host-4x4x4; host-8x8x8\n"
          "                     needs more than 2 cores); 'none'\n"
          "  --modes LIST       of shrink, blank, rebuild (all three; rebuild: a spare a\n"
          "                     crash)\n"
          "  --runs N           runs per configuration and mode, 1..9 (3): medians\n"
          "  --failures N       crashes per QEMU or host run, 1..2 (2): a row for each\n"
          "                     (rebuild: --spares N)\n"
          "  --iterations N     allreduce iterations, 4..100000 (200); the first crash\n"
          "                     comes at the middle one\n"
          "  --sim-dims LIST    the simulator's tori, DIMS,... (16x8x8,16x16x16: 1,024\n"
          "                     and 4,096 ranks; 64x32x32, 65,536 ranks, needs 9.4 GiB\n"
          "                     and about 6 minutes of CPU a mode); 'none'\n"
          "  --overhead-dims DIMS  the host torus of the overhead runs (2x2x2): the job\n"
          "                     pingpong under the default modes (abort, nop), under\n"
          "                     shrink, cont, and on the node built without the failure\n"
          "                     semantics (--node-binary-ft-off), --runs times each in\n"
          "                     turn (heartbeat 100 ms, detector 1 s: nothing fails\n"
          "                     there); 'none'\n"
          "  --loop FILE, --loop-noft FILE  tori-comm-loop with and without the failure\n"
          "                     semantics (the build's): the comm core's cost on an\n"
          "                     in-process loopback, --runs times each in turn; --loop\n"
          "                     none skips it\n"
          "  --node-binary-ft-off FILE  host node built with CONFIG_COMM_FT=0\n"
          "                     (build/host-ft-off: ./tori build host-ft-off)\n"
          "  --out DIR          logs, events and recovery.json (default: a fresh\n"
          "                     /tmp/tori-bench-recovery-XXXXXX)\n"
          "  --json             the JSON record on stdout (the tables then go to stderr)\n"
          "  --image FILE       node image for QEMU (build/qemu-virt/node.elf)\n"
          "  --node-binary FILE host node program (the build's tori-node)\n"
          "  --emu FILE         the launcher (the build's tori-emu)\n"
          "  --sim FILE         the simulator (the build's tori-sim)\n"
          "\n"
          "Exit status: 0 every run measured, 1 a run failed, 2 bad options.\n",
          out);
}

struct options {
    const char *configs, *modes, *sim_dims, *overhead_dims, *out, *image, *node_binary, *emu,
        *sim, *loop, *loop_noft, *node_binary_ft_off;
    unsigned runs, iterations, failures;
    bool json;
    const char *sim_each[SIM_DIMS_MAX]; /* --sim-dims split; sim_count 0 for 'none' */
    unsigned sim_count;
};

/* The iteration of a run's failure-th kill: the middle one, then three
 * tenths later; multiples of the tenth at which the nodes report progress
 * (the launcher fires a kill at a progress report). */
static unsigned kill_iteration(unsigned iterations, unsigned failure)
{
    unsigned tenth = iterations / 10u > 0 ? iterations / 10u : 1u;
    unsigned first = iterations / 2u / tenth * tenth;
    return failure > 1 ? first + 3u * tenth : first;
}

static bool parse(int argc, char **argv, struct options *o, char *error, size_t capacity,
                  bool *help)
{
    memset(o, 0, sizeof *o);
    const char *runs = NULL, *iterations = NULL, *failures = NULL;
    const struct cli_option options[] = {
        {"--configs", &o->configs, NULL},   {"--modes", &o->modes, NULL},
        {"--runs", &runs, NULL},            {"--iterations", &iterations, NULL},
        {"--failures", &failures, NULL},
        {"--sim-dims", &o->sim_dims, NULL}, {"--out", &o->out, NULL},
        {"--overhead-dims", &o->overhead_dims, NULL},
        {"--image", &o->image, NULL},       {"--node-binary", &o->node_binary, NULL},
        {"--emu", &o->emu, NULL},           {"--sim", &o->sim, NULL},
        {"--json", NULL, &o->json},
        {"--loop", &o->loop, NULL},         {"--loop-noft", &o->loop_noft, NULL},
        {"--node-binary-ft-off", &o->node_binary_ft_off, NULL},
    };
    enum cli_scan_result scan =
        cli_scan(argc, argv, options, sizeof options / sizeof options[0], error, capacity);
    *help = scan == CLI_SCAN_HELP;
    if (scan != CLI_SCAN_OK)
        return scan == CLI_SCAN_HELP;
    if (o->configs == NULL)
        o->configs = "qemu-2x2x2,host-4x4x4";
    if (o->modes == NULL)
        o->modes = "shrink,blank,rebuild";
    if (o->sim_dims == NULL)
        o->sim_dims = "16x8x8,16x16x16";
    if (o->overhead_dims == NULL)
        o->overhead_dims = "2x2x2";
    if (o->image == NULL)
        o->image = TORI_DEFAULT_IMAGE;
    if (o->node_binary == NULL)
        o->node_binary = TORI_DEFAULT_NODE_BINARY;
    if (o->emu == NULL)
        o->emu = TORI_DEFAULT_EMU;
    if (o->sim == NULL)
        o->sim = TORI_DEFAULT_SIM;
    if (o->loop == NULL)
        o->loop = TORI_DEFAULT_LOOP;
    if (o->loop_noft == NULL)
        o->loop_noft = TORI_DEFAULT_LOOP_NOFT;
    if (o->node_binary_ft_off == NULL)
        o->node_binary_ft_off = TORI_DEFAULT_NODE_BINARY_FT_OFF;
    o->runs = 3;
    o->iterations = 200;
    o->failures = 2;
    const struct cli_unsigned_option numbers[] = {
        {"--runs", runs, 1, BENCH_RECOVERY_RUNS_MAX, &o->runs},
        {"--iterations", iterations, 4, 100000, &o->iterations},
        {"--failures", failures, 1, 2, &o->failures},
    };
    if (!cli_parse_unsigned_options(numbers, sizeof numbers / sizeof numbers[0], error, capacity))
        return false;
    if (o->failures == 2 && kill_iteration(o->iterations, 2) >= o->iterations)
        return cli_invalid(error, capacity, "--iterations", iterations != NULL ? iterations : "",
                           "at least 7 with --failures 2");
    static char sim_list[256];
    if (strlen(o->sim_dims) >= sizeof sim_list)
        return cli_invalid(error, capacity, "--sim-dims", o->sim_dims, "a shorter list");
    snprintf(sim_list, sizeof sim_list, "%s", o->sim_dims);
    char *save = NULL;
    for (char *item = strcmp(sim_list, "none") == 0 ? NULL : strtok_r(sim_list, ",", &save);
         item != NULL; item = strtok_r(NULL, ",", &save)) {
        unsigned dims = 0;
        uint32_t size[CONFIG_MAX_DIMS];
        if (!cli_parse_dims("--sim-dims", item, &dims, size, error, capacity))
            return false;
        uint64_t nodes = 1;
        for (unsigned d = 0; d < dims; d++)
            nodes *= size[d];
        if (nodes <= KILLED_NODE + 1) /* node 3 killed, and a spare under rebuild */
            return cli_invalid(error, capacity, "--sim-dims", item,
                               "a torus of at least 5 nodes, or 'none'");
        if (o->sim_count == SIM_DIMS_MAX)
            return cli_invalid(error, capacity, "--sim-dims", o->sim_dims,
                               "at most 4 tori");
        o->sim_each[o->sim_count++] = item;
    }
    if (strcmp(o->overhead_dims, "none") != 0) {
        unsigned dims = 0;
        uint32_t size[CONFIG_MAX_DIMS];
        if (!cli_parse_dims("--overhead-dims", o->overhead_dims, &dims, size, error, capacity))
            return false;
        uint64_t nodes = 1;
        for (unsigned d = 0; d < dims; d++)
            nodes *= size[d];
        if (nodes < 2)
            return cli_invalid(error, capacity, "--overhead-dims", o->overhead_dims,
                               "a torus of at least 2 nodes, or 'none'");
    }
    return true;
}

/* Feeds every line of path to take; false when it cannot be read. */
static bool read_lines(const char *path, void (*take)(void *, const char *), void *context)
{
    FILE *file = fopen(path, "re");
    if (file == NULL)
        return false;
    static char line[65536];
    while (fgets(line, sizeof line, file) != NULL)
        take(context, line);
    fclose(file);
    return true;
}

static void take_event(void *context, const char *line)
{
    bench_recovery_take_event(context, line);
}

static void take_fault(void *context, const char *line)
{
    bench_recovery_take_fault(context, line);
}

static void take_sim(void *context, const char *line)
{
    bench_recovery_sim_take(context, line);
}

/* One emu run of config under mode into dir; the phases of each of its
 * o->failures crashes (phases[0], phases[1]). */
static int run_emu(const struct options *o, const struct bench_faults_config *c,
                   const char *mode, const char *dir, struct bench_recovery_phases *phases,
                   FILE *human)
{
    char heartbeat[16], detect[16], iterations[16], script[96], spares[8];
    char log_path[OUT_MAX + 128];
    snprintf(heartbeat, sizeof heartbeat, "%u", c->heartbeat_ms);
    snprintf(detect, sizeof detect, "%u", c->detect_timeout_ms);
    snprintf(iterations, sizeof iterations, "%u", o->iterations);
    int used = snprintf(script, sizeof script, "kill %u at iteration %u", KILLED_NODE,
                        kill_iteration(o->iterations, 1));
    if (o->failures > 1)
        snprintf(script + used, sizeof script - (size_t)used, "; kill %u at iteration %u",
                 SECOND_KILLED_NODE, kill_iteration(o->iterations, 2));
    snprintf(spares, sizeof spares, "%u", o->failures); /* a spare for each crash */
    snprintf(log_path, sizeof log_path, "%s.log", dir);
    bool rebuild = strcmp(mode, "rebuild") == 0;
    char *argv[] = {(char *)o->emu, "--dims", (char *)c->dims, "--board", (char *)c->board,
                    "--heartbeat-ms", heartbeat, "--detect-timeout-ms", detect, "--app",
                    "allreduce", "--iterations", iterations, "--comm-mode", (char *)mode,
                    "--inject", script, "--out", (char *)dir, "--image", (char *)o->image,
                    "--node-binary", (char *)o->node_binary, rebuild ? "--spares" : NULL, spares,
                    NULL};
    fprintf(human, TOOL ": %s %s: %s (log %s)\n", c->name, mode, script, log_path);
    int status = bench_run_logged(TOOL, argv, log_path);
    int failed = status != 0;
    for (unsigned f = 0; f < o->failures; f++) {
        static struct bench_recovery_events events;
        bench_recovery_events_clear(&events);
        events.failure = f + 1u;
        char path[OUT_MAX + 128];
        snprintf(path, sizeof path, "%s/faults.jsonl", dir);
        read_lines(path, take_fault, &events);
        snprintf(path, sizeof path, "%s/events.jsonl", dir);
        read_lines(path, take_event, &events);
        bench_recovery_phases(&events, &phases[f]);
        if (status != 0 || !phases[f].complete)
            fprintf(stderr, TOOL ": %s %s crash %u: %s (exit %d; see %s)\n", c->name, mode,
                    f + 1u, phases[f].complete ? "the job failed" : "phases not all measured",
                    status, log_path);
        failed |= !phases[f].complete;
    }
    return failed ? 1 : 0;
}

static void take_pingpong(void *context, const char *line)
{
    bench_recovery_pingpong_take(context, line);
}

/* The settings the overhead runs compare: the default modes, the failure
 * semantics an application would pick (shrink, cont), and the default
 * modes on the node built without the failure semantics. */
#define OVERHEAD_SETTINGS 3u
#define OVERHEAD_FT_OFF 2u
static const char *const overhead_modes[OVERHEAD_SETTINGS][2] = {
    {"abort", "nop"}, {"shrink", "cont"}, {"abort", "nop"}};
static const char *const overhead_labels[OVERHEAD_SETTINGS] = {"abort,nop", "shrink,cont",
                                                               "ft-off"};

/* One pingpong job on the host torus under setting's modes; false when it
 * did not report every figure. */
static bool run_pingpong(const struct options *o, const char *base, unsigned setting,
                         unsigned run, struct bench_recovery_pingpong *figures, FILE *human)
{
    char dir[OUT_MAX + 64], log_path[OUT_MAX + 128], path[OUT_MAX + 128];
    snprintf(dir, sizeof dir, "%s/overhead-%s-%s%s-%u", base, overhead_modes[setting][0],
             overhead_modes[setting][1], setting == OVERHEAD_FT_OFF ? "-ft-off" : "", run + 1);
    const char *node = setting == OVERHEAD_FT_OFF ? o->node_binary_ft_off : o->node_binary;
    snprintf(log_path, sizeof log_path, "%s.log", dir);
    /* Nothing fails here: a long detector timeout keeps a loaded machine
     * from expelling a node mid-run (both settings alike). */
    char *argv[] = {(char *)o->emu, "--dims", (char *)o->overhead_dims, "--board", "host",
                    "--heartbeat-ms", "100", "--detect-timeout-ms", "1000",
                    "--app", "pingpong", "--iterations", "32", "--comm-mode",
                    (char *)overhead_modes[setting][0], "--msg-mode",
                    (char *)overhead_modes[setting][1], "--out", dir, "--node-binary",
                    (char *)node, NULL};
    fprintf(human, TOOL ": overhead %s: pingpong, %s (log %s)\n", o->overhead_dims,
            overhead_labels[setting], log_path);

    int status = bench_run_logged(TOOL, argv, log_path);
    memset(figures, 0, sizeof *figures);
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    read_lines(path, take_pingpong, figures);
    bool measured = status == 0 && figures->rtt0_ns > 0 && figures->allreduce_ns > 0 &&
                    figures->barrier_ns > 0;
    if (!measured)
        fprintf(stderr, TOOL ": overhead %s: not measured (exit %d; see %s)\n",
                overhead_labels[setting], status, log_path);
    return measured;
}

/* One tori-comm-loop run of program; false when it printed no figures. */
static bool run_loop(const char *program, const char *base, unsigned run,
                     struct bench_recovery_loop *loop, FILE *human)
{
    char log_path[OUT_MAX + 64];
    snprintf(log_path, sizeof log_path, "%s/loop-%s-%u.jsonl", base,
             strstr(program, "noft") != NULL ? "noft" : "ft", run + 1);
    fprintf(human, TOOL ": loopback: %s (log %s)\n", program, log_path);
    char *argv[] = {(char *)program, NULL};
    int status = bench_run_logged(TOOL, argv, log_path);
    memset(loop, 0, sizeof *loop);
    FILE *file = fopen(log_path, "re");
    char line[1024];
    while (file != NULL && fgets(line, sizeof line, file) != NULL && !loop->seen)
        bench_recovery_loop_take(loop, line);
    if (file != NULL)
        fclose(file);
    if (status != 0 || !loop->seen) {
        fprintf(stderr, TOOL ": loopback %s: not measured (exit %d; see %s)\n", program, status,
                log_path);
        return false;
    }
    return true;
}

/* tori-sim --json on dims, the job allreduce under mode (NULL: no crash,
 * the nodes' default abort); false when it failed. */
static bool run_sim(const struct options *o, const char *dims, const char *base,
                    const char *mode, struct bench_recovery_sim *sim, FILE *human)
{
    char log_path[OUT_MAX + 64];
    snprintf(log_path, sizeof log_path, "%s/sim-%.31s-%s.jsonl", base, dims,
             mode != NULL ? mode : "allreduce");
    char *argv[16] = {(char *)o->sim, "--dims", (char *)dims, "--json", "--app", "allreduce",
                      "--iterations", SIM_ITERATIONS};
    unsigned argc = 8;
    if (mode != NULL) {
        argv[argc++] = "--comm-mode";
        argv[argc++] = (char *)mode;
        argv[argc++] = "--inject";
        argv[argc++] = SIM_KILL;
        if (strcmp(mode, "rebuild") == 0) {
            argv[argc++] = "--spares";
            argv[argc++] = "1";
        }
    }
    argv[argc] = NULL;
    fprintf(human, TOOL ": sim %s: %s%s (log %s)\n", dims,
            mode != NULL ? mode : "allreduce without a crash", mode != NULL ? ", " SIM_KILL : "",
            log_path);
    int status = bench_run_logged(TOOL, argv, log_path);
    bench_recovery_sim_clear(sim);
    read_lines(log_path, take_sim, sim);
    bool measured = status == 0 && sim->app && (mode == NULL || sim->recovered);
    if (!measured)
        fprintf(stderr, TOOL ": sim %s %s: %s (exit %d; see %s)\n", dims,
                mode != NULL ? mode : "allreduce",
                status != 0 ? "the job failed" : "no recovery finished", status, log_path);
    return measured;
}

int main(int argc, char **argv)
{
    cli_whole_lines();
    struct options o;
    char error[320];
    bool help = false;
    if (!parse(argc, argv, &o, error, sizeof error, &help)) {
        fprintf(stderr, TOOL ": %s\n", error);
        return 2;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    /* Configurations and modes, all checked before anything starts. */
    static struct bench_faults_config configs[CONFIGS_MAX];
    unsigned config_count = 0;
    char list[512];
    bool want_qemu = false, want_host = false;
    if (strlen(o.configs) >= sizeof list || strlen(o.modes) >= sizeof list) {
        fprintf(stderr, TOOL ": --configs or --modes is too long\n");
        return 2;
    }
    snprintf(list, sizeof list, "%s", o.configs);
    char *save = NULL;
    for (char *item = strcmp(list, "none") == 0 ? NULL : strtok_r(list, ",", &save);
         item != NULL; item = strtok_r(NULL, ",", &save)) {
        if (config_count == CONFIGS_MAX) {
            fprintf(stderr, TOOL ": --configs names more than %u configurations\n", CONFIGS_MAX);
            return 2;
        }
        struct bench_faults_config *c = &configs[config_count++];
        if (!bench_faults_parse_config(item, 1, c, error, sizeof error)) {
            fprintf(stderr, TOOL ": --configs: %s\n", error);
            return 2;
        }
        if (c->nodes <= KILLED_NODE) {
            fprintf(stderr, TOOL ": --configs: %s has %u nodes (expected more than %u: node %u "
                            "is killed)\n",
                    c->name, c->nodes, KILLED_NODE, KILLED_NODE);
            return 2;
        }
        if (o.failures > 1 && c->nodes < 8u) {
            fprintf(stderr, TOOL ": --configs: %s has %u nodes (expected at least 8 for "
                            "--failures 2: node %u is killed second, with two spares under "
                            "rebuild)\n",
                    c->name, c->nodes, SECOND_KILLED_NODE);
            return 2;
        }
        want_qemu |= strcmp(c->board, "host") != 0;
        want_host |= strcmp(c->board, "qemu") != 0;
    }
    const char *modes[MODES_MAX];
    unsigned mode_count = 0;
    static char mode_list[512];
    snprintf(mode_list, sizeof mode_list, "%s", o.modes);
    save = NULL;
    for (char *item = strtok_r(mode_list, ",", &save); item != NULL;
         item = strtok_r(NULL, ",", &save)) {
        if ((strcmp(item, "shrink") != 0 && strcmp(item, "blank") != 0 &&
             strcmp(item, "rebuild") != 0) ||
            mode_count == MODES_MAX) {
            fprintf(stderr, TOOL ": --modes: '%s' is not one of shrink, blank, rebuild (each "
                            "once)\n",
                    item);
            return 2;
        }
        modes[mode_count++] = item;
    }
    if ((config_count == 0 || mode_count == 0) && o.sim_count == 0 &&
        strcmp(o.overhead_dims, "none") == 0 && strcmp(o.loop, "none") == 0) {
        fprintf(stderr, TOOL ": nothing to run (expected --configs, --modes, --sim-dims, "
                        "--overhead-dims or --loop)\n");
        return 2;
    }
    char resolved[PATH_MAX];
    if ((config_count > 0 && mode_count > 0) || strcmp(o.overhead_dims, "none") != 0) {
        want_host |= strcmp(o.overhead_dims, "none") != 0;
        if (!emu_spawn_find_program(o.emu, resolved, sizeof resolved)) {
            fprintf(stderr, TOOL ": launcher '%s' not found (expected a built tori-emu: run "
                            "./tori build host, or pass --emu FILE)\n",
                    o.emu);
            return 2;
        }
        if (!bench_check_programs(TOOL, "qemu-system-arm", o.image, o.node_binary, want_qemu,
                                  want_host))
            return 2;
    }
    if (o.sim_count > 0 && !emu_spawn_find_program(o.sim, resolved, sizeof resolved)) {
        fprintf(stderr, TOOL ": simulator '%s' not found (expected a built tori-sim: run "
                        "./tori build host, or pass --sim FILE)\n",
                o.sim);
        return 2;
    }
    char template[] = "/tmp/tori-bench-recovery-XXXXXX";
    char base[OUT_MAX + 1];
    if (!bench_out_base(TOOL, o.out, template, base, sizeof base))
        return 2;
    if (mkdir(base, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, TOOL ": cannot create --out directory '%s': %s\n", base, strerror(errno));
        return 2;
    }

    FILE *human = o.json ? stderr : stdout;
    int status = 0;
    static struct bench_recovery_row rows[(CONFIGS_MAX * 2u + SIM_DIMS_MAX) * MODES_MAX];
    unsigned row_count = 0;
    for (unsigned c = 0; c < config_count; c++) {
        for (unsigned m = 0; m < mode_count; m++) {
            struct bench_recovery_phases runs[2][BENCH_RECOVERY_RUNS_MAX];
            struct bench_recovery_phases each[2];
            for (unsigned r = 0; r < o.runs; r++) {
                char dir[OUT_MAX + 64];
                snprintf(dir, sizeof dir, "%s/%.31s-%.15s-%u", base, configs[c].name, modes[m],
                         r + 1);
                if (run_emu(&o, &configs[c], modes[m], dir, each, human) != 0)
                    status = 1;
                for (unsigned f = 0; f < o.failures; f++)
                    runs[f][r] = each[f];
            }
            for (unsigned f = 0; f < o.failures; f++) {
                struct bench_recovery_row *row = &rows[row_count++];
                snprintf(row->config, sizeof row->config, "%.31s", configs[c].name);
                snprintf(row->mode, sizeof row->mode, "%.15s", modes[m]);
                row->failure = f + 1u;
                row->runs = o.runs;
                for (unsigned r = 0; r < o.runs; r++)
                    row->complete += runs[f][r].complete ? 1u : 0u;
                bench_recovery_median(runs[f], o.runs, &row->median);
            }
        }
    }

    /* The simulator: the job under each mode, one run each (a run is
     * deterministic), beside a crash-free run's allreduce. */
    static struct bench_recovery_sim jobs[SIM_DIMS_MAX];
    for (unsigned d = 0; d < o.sim_count; d++) {
        if (!run_sim(&o, o.sim_each[d], base, NULL, &jobs[d], human))
            status = 1;
        double allreduce = bench_recovery_sim_allreduce_ns(&jobs[d]);
        for (unsigned m = 0; m < mode_count; m++) {
            struct bench_recovery_row *row = &rows[row_count++];
            snprintf(row->config, sizeof row->config, "sim-%.27s", o.sim_each[d]);
            snprintf(row->mode, sizeof row->mode, "%.15s", modes[m]);
            row->failure = 1;
            static struct bench_recovery_sim run;
            if (!run_sim(&o, o.sim_each[d], base, modes[m], &run, human))
                status = 1;
            bench_recovery_sim_phases(&run, allreduce, &row->median);
            row->runs = 1;
            row->complete = row->median.complete ? 1u : 0u;
            if (!row->median.complete)
                status = 1;
        }
    }

    /* The overhead runs: medians per setting of 0 B RTT, allreduce, barrier. */
    /* Each setting's runs in turn (a, b, c, a, b, c, ...), so that the
     * machine's load drifts over them alike. */
    bool overhead_wanted = strcmp(o.overhead_dims, "none") != 0;
    double overhead[OVERHEAD_SETTINGS][3] = {{0}};
    if (overhead_wanted) {
        double samples[OVERHEAD_SETTINGS][3][BENCH_RECOVERY_RUNS_MAX];
        unsigned n[OVERHEAD_SETTINGS] = {0};
        /* Not built (./tori bench recovery builds it): a note, not a failure. */
        bool ft_off_built = access(o.node_binary_ft_off, X_OK) == 0;
        if (!ft_off_built)
            fprintf(stderr, TOOL ": overhead ft-off: not measured: no node program '%s' "
                            "(./tori build host-ft-off)\n", o.node_binary_ft_off);
        for (unsigned r = 0; r < o.runs; r++) {
            for (unsigned setting = 0; setting < OVERHEAD_SETTINGS; setting++) {
                if (setting == OVERHEAD_FT_OFF && !ft_off_built)
                    continue;
                struct bench_recovery_pingpong figures;
                if (!run_pingpong(&o, base, setting, r, &figures, human)) {
                    status = 1;
                    continue;
                }
                samples[setting][0][n[setting]] = (double)figures.rtt0_ns;
                samples[setting][1][n[setting]] = (double)figures.allreduce_ns;
                samples[setting][2][n[setting]] = (double)figures.barrier_ns;
                n[setting]++;
            }
        }
        for (unsigned setting = 0; setting < OVERHEAD_SETTINGS; setting++)
            for (unsigned k = 0; k < 3; k++)
                overhead[setting][k] = emu_results_median_of(samples[setting][k], n[setting]);
    }

    /* The loopback, with and without the failure semantics, in turn. */
    bool loop_wanted = strcmp(o.loop, "none") != 0;
    double loop[2][BENCH_LOOP_FIGURES] = {{0}}; /* [0]: with, [1]: without */
    uint64_t loop_ranks = 0;
    if (loop_wanted) {
        double samples[2][BENCH_LOOP_FIGURES][BENCH_RECOVERY_RUNS_MAX];
        unsigned n[2] = {0};
        for (unsigned r = 0; r < o.runs; r++) {
            for (unsigned v = 0; v < 2; v++) {
                struct bench_recovery_loop figures;
                if (!run_loop(v == 0 ? o.loop : o.loop_noft, base, r, &figures, human) ||
                    figures.ft != (v == 0)) {
                    status = 1;
                    continue;
                }
                loop_ranks = figures.ranks;
                for (unsigned k = 0; k < BENCH_LOOP_FIGURES; k++)
                    samples[v][k][n[v]] = figures.figure[k];
                n[v]++;
            }
        }
        for (unsigned v = 0; v < 2; v++)
            for (unsigned k = 0; k < BENCH_LOOP_FIGURES; k++)
                loop[v][k] = emu_results_median_of(samples[v][k], n[v]);
    }

    bench_recovery_print_table(human, rows, row_count);
    if (config_count > 0 && strstr(o.configs, "host-8x8x8") == NULL)
        fprintf(human, "(host 8x8x8, issue 14's size, is not a default: on a 2-core machine its "
                       "512 node processes expel each other under the job's load and did not "
                       "finish a rebuild within the app timeout; --configs host-8x8x8 tries)\n");
    if (o.sim_count > 0) {
        fprintf(human,
                "(sim-DIMS: tori-sim, virtual time with BG/L's hop and message costs; one run "
                "per mode, as a run is deterministic; its allreduce from a crash-free run of "
                "the same job; the phases are the slowest survivor's)\n");
        if (strstr(o.sim_dims, "64x32x32") == NULL)
            fprintf(human, "(sim-64x32x32, issue 14's 65,536 ranks, is not a default: 9.4 GiB "
                           "(149,816 B a node) and, measured under shrink, 340 s of CPU for "
                           "the mode run against 30 s without a crash, as every rank's rounds "
                           "on a communicator with a failed member scan all its members; "
                           "--sim-dims 64x32x32 runs it)\n");
        fprintf(human,
                "\noverhead when nothing fails: messages per allreduce, strict collectives on "
                "(the nodes' default), against the plain tree's 2 (N - 1), what the core "
                "built without the failure semantics sends (comm.noft)\n");
    }
    for (unsigned d = 0; d < o.sim_count; d++) {
        const struct bench_recovery_sim *job = &jobs[d];
        double per_allreduce = bench_recovery_sim_messages_per_allreduce(job);
        double plain = job->ranks > 1 ? 2.0 * (double)(job->ranks - 1) : 0.0;
        fprintf(human, "  sim-%-12s %6llu ranks: %.1f messages per allreduce, plain tree %.0f, "
                       "ratio %.4f\n",
                o.sim_each[d], (unsigned long long)job->ranks, per_allreduce, plain,
                plain > 0 ? per_allreduce / plain : 0.0);
    }

    static const char *const overhead_names[3] = {"ping-pong 0 B RTT", "allreduce", "barrier"};
    static const char *const overhead_keys[3] = {"rtt0", "allreduce", "barrier"};
    if (overhead_wanted) {
        fprintf(human,
                "\noverhead of the failure semantics, host %s, job pingpong, medians of %u "
                "runs each, in turn: compiled in (the default abort,nop, and shrink,cont) "
                "against compiled out (ft-off: CONFIG_COMM_FT=0); ratios to ft-off\n",
                o.overhead_dims, o.runs);
        for (unsigned k = 0; k < 3; k++) {
            fprintf(human, "  %-18s abort,nop %8.1f us  shrink,cont %8.1f us  ft-off %8.1f us"
                           "  ratios",
                    overhead_names[k], overhead[0][k] / 1e3, overhead[1][k] / 1e3,
                    overhead[OVERHEAD_FT_OFF][k] / 1e3);
            for (unsigned setting = 0; setting < 2; setting++) {
                double ratio = bench_recovery_ratio(overhead[setting][k],
                                                    overhead[OVERHEAD_FT_OFF][k]);
                if (ratio > 0)
                    fprintf(human, " %.3f", ratio);
                else
                    fprintf(human, " -");
            }
            fputc('\n', human);
        }
    }
    static const char *const loop_names[3] = {"ping-pong 0 B", "allreduce", "barrier"};
    static const char *const loop_keys[3] = {"pingpong", "allreduce", "barrier"};
    if (loop_wanted) {
        fprintf(human,
                "\noverhead of the failure semantics in the comm core's own CPU, in-process "
                "loopback (tori-comm-loop, %llu ranks for the collectives), medians of %u runs "
                "each, in turn: compiled in (default modes) against compiled out\n",
                (unsigned long long)loop_ranks, o.runs);
        for (unsigned k = 0; k < 3; k++) {
            double ratio = bench_recovery_ratio(loop[0][k], loop[1][k]);
            fprintf(human, "  %-14s with %9.1f ns  without %9.1f ns  ratio ", loop_names[k],
                    loop[0][k], loop[1][k]);
            if (ratio > 0)
                fprintf(human, "%.3f", ratio);
            else
                fprintf(human, "-");
            fprintf(human, "   messages %.1f / %.1f\n", loop[0][3 + k], loop[1][3 + k]);
        }
    }

    char path[OUT_MAX + 32];
    snprintf(path, sizeof path, "%s/recovery.json", base);
    FILE *record = fopen(path, "we");
    FILE *outs[2] = {record, o.json ? stdout : NULL};
    for (unsigned f = 0; f < 2; f++) {
        FILE *out = outs[f];
        if (out == NULL)
            continue;
        fprintf(out, "{\"benchmark\":\"recovery\",\"runs\":%u,\"iterations\":%u,"
                     "\"failures\":%u,\"rows\":[",
                o.runs, o.iterations, o.failures);
        for (unsigned i = 0; i < row_count; i++) {
            if (i > 0)
                fputc(',', out);
            bench_recovery_print_row_json(out, &rows[i]);
        }
        fprintf(out, "]");
        if (o.sim_count > 0) {
            fprintf(out, ",\"sim\":[");
            for (unsigned d = 0; d < o.sim_count; d++) {
                const struct bench_recovery_sim *job = &jobs[d];
                double per_allreduce = bench_recovery_sim_messages_per_allreduce(job);
                double plain = job->ranks > 1 ? 2.0 * (double)(job->ranks - 1) : 0.0;
                fprintf(out,
                        "%s{\"dims\":\"%s\",\"ranks\":%llu,\"allreduce_ns\":%.0f,"
                        "\"messages_per_allreduce\":%.1f,\"plain_tree_messages\":%.0f,"
                        "\"message_ratio\":%.4f}",
                        d > 0 ? "," : "", o.sim_each[d], (unsigned long long)job->ranks,
                        bench_recovery_sim_allreduce_ns(job), per_allreduce, plain,
                        plain > 0 ? per_allreduce / plain : 0.0);
            }
            fprintf(out, "]");
        }
        if (overhead_wanted) {
            fprintf(out, ",\"overhead\":{\"dims\":\"%s\",\"runs\":%u", o.overhead_dims, o.runs);
            for (unsigned k = 0; k < 3; k++)
                fprintf(out,
                        ",\"%s_abort_nop_ns\":%.0f,\"%s_shrink_cont_ns\":%.0f,"
                        "\"%s_ft_off_ns\":%.0f,\"%s_ratio\":%.4f,\"%s_ft_ratio\":%.4f",
                        overhead_keys[k], overhead[0][k], overhead_keys[k], overhead[1][k],
                        overhead_keys[k], overhead[OVERHEAD_FT_OFF][k], overhead_keys[k],
                        bench_recovery_ratio(overhead[1][k], overhead[0][k]), overhead_keys[k],
                        bench_recovery_ratio(overhead[0][k], overhead[OVERHEAD_FT_OFF][k]));
            fprintf(out, "}");
        }
        if (loop_wanted) {
            fprintf(out, ",\"loopback\":{\"ranks\":%llu,\"runs\":%u",
                    (unsigned long long)loop_ranks, o.runs);
            for (unsigned k = 0; k < 3; k++)
                fprintf(out,
                        ",\"%s_ft_ns\":%.1f,\"%s_noft_ns\":%.1f,\"%s_ratio\":%.4f,"
                        "\"%s_ft_messages\":%.3f,\"%s_noft_messages\":%.3f",
                        loop_keys[k], loop[0][k], loop_keys[k], loop[1][k], loop_keys[k],
                        bench_recovery_ratio(loop[0][k], loop[1][k]), loop_keys[k],
                        loop[0][3 + k], loop_keys[k], loop[1][3 + k]);
            fprintf(out, "}");
        }
        fprintf(out, "}\n");
    }
    if (record == NULL || fclose(record) != 0)
        fprintf(stderr, TOOL ": cannot write '%s'\n", path);
    else
        fprintf(stderr, TOOL ": record written to %s\n", path);
    return status;
}
