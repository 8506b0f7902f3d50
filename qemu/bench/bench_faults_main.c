/*
 * tori-bench-faults (./tori bench faults): T_s and detection time after
 * node crashes on QEMU and host-process tori, beside the distance model
 * from each run's own one-hop latency (qemu/bench/bench_faults.h).  Each
 * configuration is one tori-emu run; its logs and records stay under --out.
 * Issue 20's detector measurements: --idle-seconds adds an idle run of each
 * configuration (nothing injected: every failure detection is false), and
 * --load keeps that many busy-loop processes running beside every run, so
 * that the host, not the nodes, is slow.  --ping adds the all-pairs ping
 * on the same torus, at the configuration's timings and with the detector
 * all but off (its floor): time, pairs answered, false detections.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/personality.h"
#include "qemu/bench/bench_faults.h"
#include "tools/cli.h"
#include "tools/job_options.h"
#include "qemu/launcher/emu_spawn.h"

#define STR_VALUE(x) #x
#define STR(x) STR_VALUE(x)

#ifndef TORI_DEFAULT_IMAGE
#error "TORI_DEFAULT_IMAGE must be defined by the build"
#endif
#ifndef TORI_DEFAULT_NODE_BINARY
#error "TORI_DEFAULT_NODE_BINARY must be defined by the build"
#endif
#ifndef TORI_DEFAULT_EMU
#error "TORI_DEFAULT_EMU must be defined by the build"
#endif

#define TOOL "tori-bench-faults"
#define CONFIGS_MAX 8
#define LOAD_MAX 64

static void usage(FILE *out)
{
    fputs("usage: tori-bench-faults [options]\n"
          "\n"
          "Kills a spread of nodes (a leaf, inner nodes, the root) one at a time on each\n"
          "configuration, restarting each before the next, and reports the root's\n"
          "stabilization time T_s and the detection time beside the paper's distance\n"
          "model computed from the one-hop latency measured in the same run.\n"
          "\n"
          "  --configs LIST     BOARD-DIMS[@HB/DT],... timeouts in ms after @\n"
          "                     (qemu-2x2x2,qemu-2x2x2@20/200,qemu-4x4x4,host-8x8x8)\n"
          "  --kills N          crashes per configuration, 1..10 (6)\n"
          "  --heartbeat-ms N   heartbeat for every configuration (default: by size,\n"
          "                     the node's default " STR(PERSONALITY_DEFAULT_HEARTBEAT_MS) " up to 16 nodes, 100 up to 64,\n"
          "                     500 above)\n"
          "  --detect-timeout-ms N  detector timeout for every configuration (default:\n"
          "                     by size, " STR(PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS) " up to 16 nodes, else 10 heartbeats;\n"
          "                     links then resend 10 times 25 ms apart)\n"
          "  --timeout-ceiling N  the detector's bound for every configuration: its\n"
          "                     timeouts adapt to a slow host up to N times the set\n"
          "                     ones, 1..64 (" STR(PERSONALITY_DEFAULT_TIMEOUT_CEILING) "; 1: fixed)\n"
          "  --out DIR          where each configuration's run goes, and the summaries\n"
          "                     (DIR/bench-faults.jsonl; default: a fresh\n"
          "                     /tmp/tori-bench-faults-XXXXXX)\n"
          "  --idle-seconds S   after each crash run, the same torus left idle for S s\n"
          "                     (0..3600, 0: none): every failure detection in it is\n"
          "                     false, and is counted; so is its cost: CPU s of the\n"
          "                     node processes per node per second, frames per node\n"
          "                     per second\n"
          "  --ping             after each crash (and idle) run, the all-pairs ping\n"
          "                     (tori-emu --ping) on the same torus at its detector\n"
          "                     timings (link timings: the launcher's), then with\n"
          "                     the same links and the detector all but off\n"
          "                     (heartbeat " STR(BENCH_FAULTS_FLOOR_HEARTBEAT_MS) " ms, detect " STR(BENCH_FAULTS_FLOOR_DETECT_MS) " ms): the floor;\n"
          "                     each ping's time from job start to the last\n"
          "                     ping-done, pairs answered, false detections, view\n"
          "                     changes, and the ratio of the two times\n"
          "  --load N           N busy-loop processes (0..64) run beside every run, so\n"
          "                     that the host is slow, not the nodes\n"
          "  --json             one JSON object per configuration on stdout too (the\n"
          "                     table then goes to stderr)\n"
          "  --image FILE       node image for QEMU (build/qemu-virt/node.elf)\n"
          "  --node-binary FILE host node program (the build's tori-node)\n"
          "  --emu FILE         the launcher (the build's tori-emu)\n"
          "\n"
          "Exit status: 0 every run passed its agreement checks, 1 a run failed\n"
          "(a ping: a pair unanswered; false detections are reported, not failed on),\n"
          "2 bad options.\n",
          out);
}

struct options {
    const char *configs, *out, *image, *node_binary, *emu;
    unsigned kills, heartbeat_ms, detect_timeout_ms, idle_seconds, load;
    uint8_t timeout_ceiling;
    bool json, ping;
};

static bool parse(int argc, char **argv, struct options *o, char *error, size_t capacity,
                  bool *help)
{
    memset(o, 0, sizeof *o);
    const char *kills = NULL, *heartbeat = NULL, *detect = NULL, *idle = NULL, *load = NULL;
    const char *ceiling = NULL;
    const struct cli_option options[] = {
        {"--configs", &o->configs, NULL},     {"--out", &o->out, NULL},
        {"--image", &o->image, NULL},         {"--node-binary", &o->node_binary, NULL},
        {"--emu", &o->emu, NULL},             {"--kills", &kills, NULL},
        {"--heartbeat-ms", &heartbeat, NULL}, {"--detect-timeout-ms", &detect, NULL},
        {"--idle-seconds", &idle, NULL},      {"--load", &load, NULL},
        {"--timeout-ceiling", &ceiling, NULL},
        {"--json", NULL, &o->json},           {"--ping", NULL, &o->ping},
    };
    enum cli_scan_result scan =
        cli_scan(argc, argv, options, sizeof options / sizeof options[0], error, capacity);
    *help = scan == CLI_SCAN_HELP;
    if (scan != CLI_SCAN_OK)
        return scan == CLI_SCAN_HELP;
    if (o->configs == NULL)
        o->configs = "qemu-2x2x2,qemu-2x2x2@20/200,qemu-4x4x4,host-8x8x8";
    if (o->image == NULL)
        o->image = TORI_DEFAULT_IMAGE;
    if (o->node_binary == NULL)
        o->node_binary = TORI_DEFAULT_NODE_BINARY;
    if (o->emu == NULL)
        o->emu = TORI_DEFAULT_EMU;
    uint64_t value = 6;
    if (kills != NULL && !cli_parse_u64(kills, 1, 10, &value))
        return cli_invalid(error, capacity, "--kills", kills, "1..10");
    o->kills = (unsigned)value;
    value = 0;
    if (heartbeat != NULL && !cli_parse_u64(heartbeat, 1, 65535, &value))
        return cli_invalid(error, capacity, "--heartbeat-ms", heartbeat, "1..65535");
    o->heartbeat_ms = (unsigned)value;
    value = 0;
    if (detect != NULL && !cli_parse_u64(detect, 2, 65535, &value))
        return cli_invalid(error, capacity, "--detect-timeout-ms", detect, "2..65535");
    o->detect_timeout_ms = (unsigned)value;
    value = 0;
    if (idle != NULL && !cli_parse_u64(idle, 0, 3600, &value))
        return cli_invalid(error, capacity, "--idle-seconds", idle, "0..3600");
    o->idle_seconds = (unsigned)value;
    value = 0;
    if (load != NULL && !cli_parse_u64(load, 0, LOAD_MAX, &value))
        return cli_invalid(error, capacity, "--load", load, "0.." STR(LOAD_MAX));
    o->load = (unsigned)value;
    o->timeout_ceiling = PERSONALITY_DEFAULT_TIMEOUT_CEILING;
    if (ceiling != NULL &&
        !job_options_parse_timeout_ceiling("--timeout-ceiling", ceiling, &o->timeout_ceiling,
                                           error, capacity))
        return false;
    return true;
}

/* The --load processes: each spins until killed (or until we die). */
static pid_t load_pids[LOAD_MAX];
static unsigned load_count;

static bool load_start(unsigned count)
{
    fflush(NULL);
    for (unsigned i = 0; i < count; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, TOOL ": --load: fork: %s\n", strerror(errno));
            return false;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            volatile unsigned long spin = 0;
            for (;;)
                spin++;
        }
        load_pids[load_count++] = pid;
    }
    return true;
}

static void load_stop(void)
{
    for (unsigned i = 0; i < load_count; i++) {
        kill(load_pids[i], SIGKILL);
        while (waitpid(load_pids[i], NULL, 0) < 0 && errno == EINTR) {
        }
    }
    load_count = 0;
}

/* The link timings of a configuration's runs (the node's defaults when 0). */
static void link_timings(const struct bench_faults_config *config, char *rto, char *retries)
{
    snprintf(rto, 16, "%u", config->link_rto_ms != 0 ? config->link_rto_ms : 4u);
    snprintf(retries, 16, "%u", config->link_retries != 0 ? config->link_retries : 8u);
}

/*
 * A run of the configuration's torus with nothing injected, at the given
 * detector timings: mode and its value (or NULL) say what it does (idle:
 * "--duration 30s"; the all-pairs ping: "--ping").  rto and retries are
 * the link timings, or NULL: the launcher's for those detector timings.
 */
static int run_plain(const struct options *o, const struct bench_faults_config *config,
                     unsigned heartbeat_ms, unsigned detect_ms, char *rto, char *retries,
                     const char *mode, const char *mode_value, const char *dir)
{
    char heartbeat[16], detect[16], ceiling[8], log_path[640];
    snprintf(heartbeat, sizeof heartbeat, "%u", heartbeat_ms);
    snprintf(ceiling, sizeof ceiling, "%u", config->timeout_ceiling);
    snprintf(detect, sizeof detect, "%u", detect_ms);
    snprintf(log_path, sizeof log_path, "%s.log", dir);
    char *argv[32];
    unsigned n = 0;
    char *fixed[] = {(char *)o->emu,        "--dims",    (char *)config->dims,
                     "--board",             (char *)config->board,
                     "--heartbeat-ms",      heartbeat,   "--detect-timeout-ms",
                     detect,                "--timeout-ceiling", ceiling,
                     "--out",               (char *)dir, "--image",
                     (char *)o->image,      "--node-binary", (char *)o->node_binary};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    if (rto != NULL && retries != NULL) {
        argv[n++] = "--link-rto-ms";
        argv[n++] = rto;
        argv[n++] = "--link-retries";
        argv[n++] = retries;
    }
    argv[n++] = (char *)mode;
    if (mode_value != NULL)
        argv[n++] = (char *)mode_value;
    argv[n] = NULL;
    return bench_run_logged(TOOL, argv, log_path);
}

/* The idle run of one configuration: nothing injected, for idle_seconds. */
static int run_idle(const struct options *o, const struct bench_faults_config *config,
                    const char *dir, FILE *human)
{
    char duration[24];
    snprintf(duration, sizeof duration, "%us", o->idle_seconds);
    fprintf(human, TOOL ": %s: idle for %u s, %u busy processes beside (log %s.log)\n",
            config->name, o->idle_seconds, o->load, dir);
    fflush(human);
    return run_plain(o, config, config->heartbeat_ms, config->detect_timeout_ms, NULL, NULL,
                     "--duration", duration, dir);
}

/*
 * --ping: the all-pairs ping on the configuration's torus, at its detector
 * timings and the launcher's link timings for them (floor false: what
 * `tori-emu --ping` with those timings does), or with the detector all but
 * off (floor true) and the same link timings as the ping before it; its
 * events read into run.  False when the run failed (see
 * bench_faults_ping_failed).
 */
static bool run_ping(const struct options *o, const struct bench_faults_config *config,
                     const char *out_dir, bool floor, struct bench_faults_ping *run,
                     FILE *human)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s-%s", out_dir, floor ? "ping-floor" : "ping");
    unsigned heartbeat = floor ? BENCH_FAULTS_FLOOR_HEARTBEAT_MS : config->heartbeat_ms;
    unsigned detect = floor ? BENCH_FAULTS_FLOOR_DETECT_MS : config->detect_timeout_ms;
    fprintf(human, TOOL ": %s: all-pairs ping%s, heartbeat %u ms, detect %u ms, %u busy "
                   "processes beside (log %s.log)\n",
            config->name, floor ? " with the detector all but off" : "", heartbeat, detect,
            o->load, dir);
    fflush(human);
    char rto[16], retries[16];
    bool links = false;
    if (floor) {
        char ping_dir[600];
        unsigned rto_ms, retry_count;
        snprintf(ping_dir, sizeof ping_dir, "%s-ping", out_dir);
        links = bench_faults_read_link_timings(ping_dir, &rto_ms, &retry_count);
        if (links) {
            snprintf(rto, sizeof rto, "%u", rto_ms);
            snprintf(retries, sizeof retries, "%u", retry_count);
        } else {
            /* Not the launcher's choice for a 60 s detector (slow resends). */
            link_timings(config, rto, retries);
            links = true;
            fprintf(stderr, TOOL ": %s: no personality in %s: the floor takes the crash "
                            "run's link timings (%s x %s ms)\n",
                    config->name, ping_dir, retries, rto);
        }
    }
    run->status = run_plain(o, config, heartbeat, detect, links ? rto : NULL,
                            links ? retries : NULL, "--ping", NULL, dir);
    if (!bench_faults_read_events(dir, config->nodes, run))
        fprintf(stderr, TOOL ": %s: no events in %s/events.jsonl (exit %d; see %s.log)\n",
                config->name, dir, run->status, dir);
    return !bench_faults_ping_failed(run);
}

/* Runs tori-emu for one configuration; returns its exit status or -1. */
static int run_config(const struct options *o, const struct bench_faults_config *config,
                      const char *dir, FILE *human)
{
    static char script[2048];
    unsigned gap = bench_faults_script(config, script, sizeof script);
    char heartbeat[16], detect[16], rto[16], retries[16], ceiling[8], settle[24], log_path[640];
    snprintf(heartbeat, sizeof heartbeat, "%u", config->heartbeat_ms);
    snprintf(ceiling, sizeof ceiling, "%u", config->timeout_ceiling);
    snprintf(detect, sizeof detect, "%u", config->detect_timeout_ms);
    /* A torus that never settles is reported; waiting 60 detect timeouts
     * for it would make the benchmark crawl. */
    unsigned settle_s = 12u * config->detect_timeout_ms / 1000u;
    snprintf(settle, sizeof settle, "%us", settle_s < 30u ? 30u : settle_s);
    link_timings(config, rto, retries);
    snprintf(log_path, sizeof log_path, "%s.log", dir);
    fprintf(human, TOOL ": %s: %u crashes, each %u ms after the last settled, heartbeat %u ms, detect %u ms "
                   "(ceiling %ux), link %s x %s ms (log %s)\n",
            config->name, config->kills, gap, config->heartbeat_ms,
            config->detect_timeout_ms, config->timeout_ceiling, retries, rto, log_path);
    fflush(human);
    char *argv[] = {(char *)o->emu,
                    "--dims",
                    (char *)config->dims,
                    "--board",
                    (char *)config->board,
                    "--heartbeat-ms",
                    heartbeat,
                    "--detect-timeout-ms",
                    detect,
                    "--timeout-ceiling",
                    ceiling,
                    "--link-rto-ms",
                    rto,
                    "--link-retries",
                    retries,
                    "--inject",
                    script,
                    "--sequential",
                    "--settle-timeout",
                    settle,
                    "--out",
                    (char *)dir,
                    "--image",
                    (char *)o->image,
                    "--node-binary",
                    (char *)o->node_binary,
                    NULL};
    return bench_run_logged(TOOL, argv, log_path);
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
    static struct bench_faults_summary summaries[CONFIGS_MAX];
    unsigned count = 0;
    char list[512];
    if (strlen(o.configs) >= sizeof list) {
        fprintf(stderr, TOOL ": --configs is too long (expected at most %d configurations)\n",
                CONFIGS_MAX);
        return 2;
    }
    snprintf(list, sizeof list, "%s", o.configs);
    char *save = NULL;
    bool want_qemu = false, want_host = false;
    for (char *item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        if (count == CONFIGS_MAX) {
            fprintf(stderr, TOOL ": --configs names more than %d configurations\n", CONFIGS_MAX);
            return 2;
        }
        struct bench_faults_config *c = &summaries[count].config;
        if (!bench_faults_parse_config(item, o.kills, c, error, sizeof error)) {
            fprintf(stderr, TOOL ": --configs: %s\n", error);
            return 2;
        }
        if (o.heartbeat_ms != 0)
            c->heartbeat_ms = o.heartbeat_ms;
        if (o.detect_timeout_ms != 0)
            c->detect_timeout_ms = o.detect_timeout_ms;
        c->timeout_ceiling = o.timeout_ceiling;
        if (c->detect_timeout_ms <= c->heartbeat_ms) {
            fprintf(stderr, TOOL ": %s: detect timeout %u ms is not above the heartbeat %u ms "
                            "(expected --detect-timeout-ms larger than --heartbeat-ms)\n",
                    c->name, c->detect_timeout_ms, c->heartbeat_ms);
            return 2;
        }
        want_qemu |= strcmp(c->board, "host") != 0;
        want_host |= strcmp(c->board, "qemu") != 0;
        count++;
    }
    if (count == 0) {
        fprintf(stderr, TOOL ": --configs is empty (expected e.g. qemu-2x2x2)\n");
        return 2;
    }
    char resolved[PATH_MAX];
    if (!emu_spawn_find_program(o.emu, resolved, sizeof resolved)) {
        fprintf(stderr, TOOL ": launcher '%s' not found (expected a built tori-emu: run "
                        "./tori build host, or pass --emu FILE)\n",
                o.emu);
        return 2;
    }
    const struct emu_programs wanted = {
        .qemu = "qemu-system-arm", .image = o.image, .node_binary = o.node_binary};
    static struct emu_program_paths paths;
    static char why[EMU_PATH_MAX + 256];
    if (!emu_spawn_check_programs(&wanted, want_qemu, want_host, &paths, why, sizeof why)) {
        fprintf(stderr, TOOL ": %s\n", why);
        return 2;
    }
    char out[400];
    if (o.out != NULL) {
        if (strlen(o.out) >= sizeof out - 1 || (mkdir(o.out, 0755) != 0 && errno != EEXIST)) {
            fprintf(stderr, TOOL ": cannot create --out directory '%.200s' (expected a "
                            "writable path under 400 bytes)\n",
                    o.out);
            return 2;
        }
        snprintf(out, sizeof out, "%s", o.out);
    } else {
        char template[] = "/tmp/tori-bench-faults-XXXXXX";
        if (mkdtemp(template) == NULL) {
            fprintf(stderr, TOOL ": cannot create a directory under /tmp: %s\n",
                    strerror(errno));
            return 2;
        }
        snprintf(out, sizeof out, "%s", template);
    }
    FILE *human = o.json ? stderr : stdout;
    /* <out>/bench-faults.jsonl: the summaries, beside the runs' own
     * faults.jsonl, for tools/plot/tori-plot. */
    char records_path[sizeof out + 32];
    snprintf(records_path, sizeof records_path, "%s/bench-faults.jsonl", out);
    FILE *records = fopen(records_path, "we");
    if (records == NULL) {
        fprintf(stderr, TOOL ": cannot create '%s': %s\n", records_path, strerror(errno));
        return 2;
    }
    int status = 0;
    if (!load_start(o.load)) {
        load_stop();
        return 2;
    }
    for (unsigned i = 0; i < count; i++) {
        struct bench_faults_summary *s = &summaries[i];
        /* out is under 400 bytes and a name under 32: it fits. */
        size_t out_length = strlen(out), name_length = strlen(s->config.name);
        memcpy(s->out_dir, out, out_length);
        s->out_dir[out_length] = '/';
        memcpy(s->out_dir + out_length + 1, s->config.name, name_length + 1);
        s->status = run_config(&o, &s->config, s->out_dir, human);
        if (!bench_faults_read(s->out_dir, s))
            fprintf(stderr, TOOL ": %s: no fault records in %s/faults.jsonl (exit %d; see "
                            "%s.log)\n",
                    s->config.name, s->out_dir, s->status, s->out_dir);
        if (s->status != 0 || s->checks_passed != s->checks || s->faults == 0)
            status = 1;
        s->load = o.load;
        s->idle_seconds = o.idle_seconds;
        if (o.idle_seconds > 0) {
            char idle_dir[sizeof s->out_dir + 8];
            snprintf(idle_dir, sizeof idle_dir, "%s-idle", s->out_dir);
            s->idle_status = run_idle(&o, &s->config, idle_dir, human);
            struct bench_faults_ping idle = {.status = s->idle_status};
            if (!bench_faults_read_events(idle_dir, s->config.nodes, &idle)) {
                fprintf(stderr, TOOL ": %s: no events in %s/events.jsonl (exit %d; see %s.log)\n",
                        s->config.name, idle_dir, s->idle_status, idle_dir);
                status = 1;
            }
            s->idle_failures = idle.detections;
            s->idle_view_changes = idle.view_changes;
            bench_faults_read_idle_cost(idle_dir, s);
            if (s->idle_status != 0)
                status = 1;
        }
        /* Like the idle run's, the pings' false detections are reported, not
         * failed on; a ping that did not finish, or left a pair unanswered
         * (tori-emu then fails), fails the benchmark. */
        s->ping = o.ping;
        if (o.ping) {
            bool ok = run_ping(&o, &s->config, s->out_dir, false, &s->ping_run, human);
            ok = run_ping(&o, &s->config, s->out_dir, true, &s->ping_floor, human) && ok;
            bench_faults_ping_ratio(s);
            if (!ok)
                status = 1;
        }
        bench_faults_write_json(s, records);
        if (o.json)
            bench_faults_write_json(s, stdout);
    }
    load_stop();
    if (fclose(records) != 0) {
        fprintf(stderr, TOOL ": cannot write '%s'\n", records_path);
        status = 1;
    } else {
        fprintf(stderr, TOOL ": records written to %s\n", records_path);
    }
    bench_faults_print_table(summaries, count, human);
    return status;
}
