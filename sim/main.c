/*
 * tori-sim: the deterministic membership simulator's command line.
 *
 *   tori-sim --dims 16x8x8 [--mesh] [--radix 4] [--tree radix|torus|box]
 *            [--hop-ns 4600] [--cp-ns 2000] [--members M]
 *            [--policy primary|every-side] [--heartbeat-us N] [--timeout-ceiling N]
 *            [--link-detect-ns N] [--routes] [--settle-ms N]
 *            [--inject 'kill 5 at 1ms; kill 0 at 3ms; join 5 at 10ms' | --inject-file F]
 *            [--chaos --seeds 1000 --rate R --keep-going] [--seed S]
 *            [--emit-script FILE] [--pcap DIR] [--out DIR]
 *            [--app allreduce|stencil [--iterations N] [--app-args a,b,...]]
 *            [--app model [--spares K] [--fault-rates RATES] [--recovery P]
 *             [--iterations N] [--checkpoint-every K] | --app model --policy-study]
 *            [--json] [--events | --quiet] [--trace-node N]
 *
 * Bad input: one line on stderr, exit 2.  Invariant violation: exit 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/sim.h"
#include "sim/sim_chaos.h"
#include "sim/sim_inject.h"
#include "sim/sim_policy.h"
#include "net/torus/geometry.h"
#include "tools/cli.h"
#include "tools/fault.h"
#include "tools/fault_rates.h"
#include "tools/job_options.h"

#define TOOL "tori-sim"

struct options {
    const char *seed_nodes; /* --seed-nodes a,b: joiners ask these first */
    struct job seed_job;    /* ... parsed against the torus (its seed fields) */
    struct torus_geometry geometry;
    bool have_dims;
    bool mesh;
    unsigned radix;
    enum membership_layout_kind layout;
    enum membership_policy policy;
    uint8_t timeout_ceiling; /* --timeout-ceiling (tools/job_options.h) */
    uint64_t hop_ns;
    uint64_t cp_ns;
    uint64_t members;
    bool members_set;
    int64_t heartbeat_ns; /* -1: automatic */
    const char *heartbeat_option, *heartbeat_text; /* as given, for messages */
    int64_t link_detect_ns;
    const char *link_detect_text;
    uint64_t settle_ns;
    const char *inject;
    char *inject_read; /* the text of --inject-file, freed at exit */
    const char *emit_script; /* --emit-script FILE: the run's faults, in the fault language */
    const char *pcap_dir;    /* --pcap DIR: every node's frames (sim/sim_pcap.h) */
    const char *out_dir;     /* --out DIR: the run's records, DIR/sim.jsonl */
    FILE *records;           /* DIR/sim.jsonl, opened with the options */
    const char *dims_text;
    bool routes;
    const char *routing;     /* --routing detour|table (implies --routes) */
    struct reach_options reach; /* --reach INTERVAL[,PAIRS]; interval 0: none */
    FILE *reach_file;        /* --reach with --out: DIR/reach.jsonl */
    bool chaos;
    enum sim_app_kind app;   /* --app: model applications over every node's comm core */
    struct job_options job_text; /* --app, --iterations, --app-args as given */
    struct job app_job;      /* what they make, as tori-emu makes it (tools/job_options.h) */
    uint64_t spares;         /* --spares K: the last K nodes are spares (--members N-K) */
    bool spares_set;
    uint32_t recovery_kills; /* --recovery-kills N: kills drawn while a rebuild runs */
    struct recovery_policy recovery; /* --recovery POLICY (tools/job_options.h) */
    bool model;              /* --app model: the policy study's application (sim_model.h) */
    bool policy_study;       /* --policy-study: both of ABARIS section 4.3's studies */
    const char *fault_rates_text;
    struct fault_rates fault_rates; /* --fault-rates (tools/fault_rates.h) */
    bool recovery_set;
    bool keep_going;
    uint64_t seeds;
    uint64_t rate_milli; /* faults per millisecond of fault window, x1000 */
    uint64_t seed;
    bool json;
    unsigned verbosity;
    uint32_t trace_node;
    bool trace_set;
};

static _Noreturn void usage_error(const char *fmt, const char *arg, const char *expected)
{
    fprintf(stderr, TOOL ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (expected %s)\n", expected);
    exit(2);
}

static uint64_t parse_u64(const char *option, const char *text, uint64_t min, uint64_t max,
                          const char *expected)
{
    if (text == NULL || text[0] < '0' || text[0] > '9') {
        usage_error("%s needs a number", option, expected);
    }
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (*end != '\0' || value < min || value > max) {
        fprintf(stderr, TOOL ": %s '%s' is out of range (expected %s)\n", option, text, expected);
        exit(2);
    }
    return value;
}

/*
 * A time option: a bare number counts in the unit the option's name gives
 * (--hop-ns 4600, --settle-ms 50); any other value is a time as in the
 * fault script (--hop-ns 4.6us, --settle-ms 0.5s), one parser for both.
 */
static uint64_t parse_time(const char *option, const char *text, uint64_t unit_ns,
                           uint64_t min_ns, uint64_t max_ns, const char *unit_name)
{
    uint64_t value = 0;
    bool ok;
    if (text != NULL && text[0] != '\0' && strspn(text, "0123456789") == strlen(text)) {
        ok = cli_parse_u64(text, 0, max_ns / unit_ns, &value);
        value *= unit_ns;
    } else {
        ok = cli_parse_time_ns(text, true, &value);
    }
    if (!ok || value < min_ns || value > max_ns) {
        char low[CLI_TIME_TEXT_MAX], high[CLI_TIME_TEXT_MAX];
        fprintf(stderr, TOOL ": %s '%s' is invalid (expected %s, or %s, from %s to %s)\n",
                option, text != NULL ? text : "", unit_name, CLI_TIME_EXPECTED,
                cli_format_time(min_ns, low), cli_format_time(max_ns, high));
        exit(2);
    }
    return value;
}

/* "0.5" or "3" -> thousandths. */
static uint64_t parse_rate(const char *text)
{
    if (text == NULL || text[0] < '0' || text[0] > '9') {
        usage_error("--rate needs a number, got '%s'", text ? text : "", "faults per ms, like 0.5");
    }
    char *end = NULL;
    unsigned long long whole = strtoull(text, &end, 10);
    uint64_t milli = whole * 1000u;
    if (*end == '.') {
        uint64_t scale = 100;
        for (end++; *end >= '0' && *end <= '9'; end++) {
            milli += (uint64_t)(*end - '0') * scale;
            scale /= 10;
        }
    }
    if (*end != '\0' || milli == 0 || whole > 1000) {
        usage_error("--rate '%s' is not a rate", text, "faults per ms, 0.001..1000, like 0.5");
    }
    return milli;
}

static void usage(void)
{
    fputs("usage: tori-sim --dims DIMS [options]\n"
          "\n"
          "Runs every node of a torus in one process, in virtual time, with the\n"
          "membership protocol the nodes run, and checks its invariants after\n"
          "every step.  Same seed, same output.\n"
          "\n"
          "  --dims DIMS          torus shape, e.g. 16x8x8 (1 to 6 sizes)\n"
          "  --mesh               every dimension a mesh\n"
          "  --radix N            tree radix: 2, 4, 8 or 16 (4)\n"
          "  --tree radix|torus|box  tree layout (radix)\n"
          "  --members N          initial view: ids 0..N-1 (all)\n"
          "  --policy primary|every-side  partition policy (primary)\n"
          "  --hop-ns N           latency of one torus hop (4600, BG/L)\n"
          "  --cp-ns N            cost of handling one message (2000, BG/L)\n"
          "  --heartbeat-us N     heartbeat period, 0: off (default by size); at least\n"
          "                       the detector's minimum for the torus, hop and cp\n"
          "  --heartbeat-ns N     the same in nanoseconds\n"
          "  --link-detect-ns N   link-down notice after a neighbour dies, 0: off\n"
          "                       (then a crash needs heartbeats to be noticed)\n"
          "  --timeout-ceiling N  the detector's timeouts adapt to late timers up to N\n"
          "                       times the set ones, 1..64 (4; 1: fixed)\n"
          "  --routes             messages follow the routers' hops; lost when a\n"
          "                       route crosses a dead or hung node (default: by\n"
          "                       hop distance, never lost on the way)\n"
          "  --routing MODE       detour (the routers' detours) or table (Phoenix\n"
          "                       routing tables); implies --routes, and ends with a\n"
          "                       'reach' line: every pair of running nodes routed\n"
          "                       as things stand at the end\n"
          "  --reach INTERVAL[,PAIRS]  every INTERVAL from 0 (routes on), every\n"
          "                       ordered pair of running nodes (or PAIRS drawn with\n"
          "                       the seed) routed as a message would be then: a\n"
          "                       'reach-sample' line (pairs, reached, fraction,\n"
          "                       stretch_mean and stretch_max: hops over minimal\n"
          "                       hops); with --out, DIR/reach.jsonl too\n"
          "  --settle-ms N        quiet time that ends a run\n"
          "                       (times: a bare number in the option's unit, or a\n"
          "                       time as in scripts: 4.6us, 1.5ms, 2s)\n"
          "  --inject SCRIPT      'kill 5 at 1ms; kill 0 at 3ms; join 5 at 10ms'\n"
          "                       (the fault language tori-emu reads too: kill,\n"
          "                       restart, join, hang N at T for D, suspect A B,\n"
          "                       link A B|N DIR off|on [for D], block A B at T for D,\n"
          "                       partition x<K, heal; times 1.5ms, 250us, 2s, 0;\n"
          "                       restart: a node killed earlier; join: one killed\n"
          "                       earlier or a spare; no reboot, no resume; with\n"
          "                       --app, 'at iteration N': when the node's model\n"
          "                       has done N iterations, any rank's for restart,\n"
          "                       join, partition and heal)\n"
          "  --inject-file FILE   the script from a file (items separated by ';' or\n"
          "                       lines, '#' comments)\n"
          "  --emit-script FILE   write the run's faults (a chaos seed's too) to FILE in\n"
          "                       the fault language, for tori-emu --inject-file FILE\n"
          "  --app allreduce|stencil  run a model application on every node's comm\n"
          "                       core (stencil: at most 1024 ranks)\n"
          "  --iterations N       its iterations (10)\n"
          "  --comm-mode M        abort (the job ends at a failure), blank, shrink or\n"
          "                       rebuild: the models recover as the applications do\n"
          "  --msg-mode M         nop or cont (tori-emu's)\n"
          "  --spares K           the last K nodes are spares (--members N-K); under\n"
          "                       rebuild they start with the ranks and wait to adopt\n"
          "  --seed-nodes a,b     up to 4 seed nodes a joiner asks first (tori-emu's\n"
          "                       --seeds; this tool's --seeds counts chaos seeds)\n"
          "  --recovery POLICY    the root's decision per fault model, as tori-emu's:\n"
          "                       'process=restart; physical=migrate; network=ignore;\n"
          "                       repeated(3 in 60s)=migrate' (recovery-decision lines);\n"
          "                       with restart the node is restarted and, under\n"
          "                       rebuild, takes its rank back\n"
          "  --checkpoint-every K with --app stencil: a checkpoint every K iterations,\n"
          "                       which a rebuild resumes from\n"
          "  --recovery-kills N   up to N kills, each drawn when a rebuild starts\n"
          "  --app model          the ABARIS policy study's application: fixed work\n"
          "                       (--iterations, 1000, of 100 us), a checkpoint every\n"
          "                       --checkpoint-every K (50) iterations, each fault of a\n"
          "                       rank's node decided by the run's root (--recovery)\n"
          "                       and charged T_elapse + T_load + T_transfer and the\n"
          "                       work since the checkpoint; prints the total time\n"
          "  --fault-rates RATES  with --app model: 'z<2: process=20, physical=1;\n"
          "                       default: network=2' (faults per node per second;\n"
          "                       process: appkill, physical: kill, network: a link\n"
          "                       off), drawn with --seed\n"
          "  --policy-study       with --app model alone: ABARIS 4.3's two studies,\n"
          "                       REPEATED and SWITCH versus PROC'nPHY, beside the\n"
          "                       paper's gains\n"
          "  --app-args a,b,...   its arguments, as tori-emu --app-args (stencil: block\n"
          "                       edge 1..8, check interval; allreduce: an offset)\n"
          "  --chaos              random faults instead of a script\n"
          "  --seeds N            chaos runs, seeds SEED..SEED+N-1 (1)\n"
          "  --rate R             chaos faults per ms (0.5)\n"
          "  --keep-going         chaos: run every seed, count the failed ones\n"
          "  --seed S             first seed (1)\n"
          "  --trace-node N       print what node N receives and sends\n"
          "  --pcap DIR           every node's frames, sent and received, in\n"
          "                       DIR/nodeN.pcap (virtual time; tools/wireshark/tori.lua)\n"
          "  --out DIR            the run's records in DIR/sim.jsonl: its\n"
          "                       configuration, every result line as JSON and the\n"
          "                       summary (tools/plot/tori-report; not with --chaos)\n"
          "  --json               one JSON object per result\n"
          "  --events             print every membership event\n"
          "  --quiet              only the summary\n"
          "\n"
          "Exit status: 0 every invariant held, 1 a violation (seed, step and\n"
          "trace printed), 2 bad options, 3 (--app) a fault aborted the job as it\n"
          "would on the nodes, every invariant held.\n",
          stdout);
    exit(0);
}

/* The --seeds value as text, for a message. */
static const char *argv_seeds_text(uint64_t seeds)
{
    static char text[24];
    snprintf(text, sizeof text, "%" PRIu64, seeds);
    return text;
}

/*
 * Writes the faults a run injects to --emit-script's file, before the run
 * (a failing run leaves its script too): a header naming the run, then one
 * item a line, as tori-emu --inject-file and tori-sim --inject-file read it.
 */
static void emit_script(const struct options *o, uint64_t seed, const struct fault *items,
                        size_t count)
{
    if (o->emit_script == NULL) {
        return;
    }
    FILE *file = fopen(o->emit_script, "w");
    bool ok = file != NULL;
    if (ok) {
        if (o->chaos) {
            fprintf(file, "# tori-sim --dims %s --chaos --seed %" PRIu64 ": %zu faults\n",
                    o->dims_text, seed, count);
        } else {
            fprintf(file, "# tori-sim --dims %s: %zu faults\n", o->dims_text, count);
        }
        ok = fault_script_write(file, items, count);
        ok = fclose(file) == 0 && ok;
    }
    if (!ok) {
        fprintf(stderr, TOOL ": --emit-script '%s': cannot be written\n", o->emit_script);
        exit(2);
    }
}

/*
 * --iterations and --app-args read as tori-emu reads them (one parser,
 * tools/job_options.c), so that a job given to both is the same job; and
 * the stencil's arguments checked before the run, not by a failed rank.
 */
_Static_assert(sizeof(((struct sim_app_params *)0)->arg) == sizeof(((struct job *)0)->app_arg),
               "a model application takes the job block's arguments");

static void check_app_options(struct options *o)
{
    if (o->app == SIM_APP_NONE) {
        const char *given = o->job_text.iterations != NULL  ? "--iterations"
                            : o->job_text.app_args != NULL  ? "--app-args"
                            : o->job_text.comm_mode != NULL ? "--comm-mode"
                            : o->job_text.msg_mode != NULL  ? "--msg-mode"
                            : o->spares_set                 ? "--spares"
                                                            : "--recovery-kills";
        if (o->job_text.iterations != NULL || o->job_text.app_args != NULL ||
            o->job_text.comm_mode != NULL || o->job_text.msg_mode != NULL || o->spares_set ||
            o->recovery_kills != 0) {
            usage_error("%s without --app", given, "--app allreduce|stencil");
        }
        return;
    }
    if (o->recovery_kills != 0 && o->job_text.comm_mode != NULL &&
        strcmp(o->job_text.comm_mode, "abort") == 0) {
        usage_error("%s", "--recovery-kills with --comm-mode abort", "blank, shrink or rebuild");
    }
    char error[256];
    if (!job_options_build(&o->job_text, &o->app_job, error, sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        exit(2);
    }
    struct sim_app_params params = {.kind = o->app};
    memcpy(params.arg, o->app_job.app_arg, sizeof params.arg);
    uint32_t edge = 0;
    int64_t check_every = 0;
    if (o->app == SIM_APP_STENCIL && !sim_app_stencil_args(&params, &edge, &check_every)) {
        fprintf(stderr,
                TOOL ": --app-args '%s' is invalid for the stencil (expected a block edge "
                     "of 1..%u and a check interval of at least 1, 0 for either's default)\n",
                o->job_text.app_args, (unsigned)CONFIG_APP_STENCIL_MAX_EDGE);
        exit(2);
    }
}

/*
 * --app model (sim/sim_model.h): the ABARIS policy study's application.
 * Its costs, scaled from the paper's section 4.3 to a torus in virtual
 * time: 100 us an iteration, a checkpoint every 50 of them costing 100 us,
 * T_load 60 us and a 40 KiB checkpoint (234 us over a 175 MB/s link), the
 * ratios of the paper's 30 s interval, 0.38 s load and 1.325 s transfer.
 */
#define SIM_MODEL_DEFAULT_ITERATIONS 1000u
#define SIM_MODEL_DEFAULT_CHECKPOINT_EVERY 50u
#define SIM_MODEL_ITERATION_NS UINT64_C(100000)
#define SIM_MODEL_CHECKPOINT_NS UINT64_C(100000)
#define SIM_MODEL_LOAD_NS UINT64_C(60000)
#define SIM_MODEL_CHECKPOINT_BYTES UINT64_C(40960)
/* --policy-study: 16 nodes, the ranks on z<2 (ids 0..7), the spares on the rest. */
#define SIM_STUDY_DIMS "2x2x4"
#define SIM_STUDY_SPARES 8u
#define SIM_STUDY_SEEDS 3u

static void model_params(const struct options *o, struct sim_model_params *mp)
{
    memset(mp, 0, sizeof *mp);
    mp->iterations = SIM_MODEL_DEFAULT_ITERATIONS;
    mp->checkpoint_every = SIM_MODEL_DEFAULT_CHECKPOINT_EVERY;
    mp->iteration_ns = SIM_MODEL_ITERATION_NS;
    mp->checkpoint_ns = SIM_MODEL_CHECKPOINT_NS;
    mp->load_ns = SIM_MODEL_LOAD_NS;
    mp->checkpoint_bytes = SIM_MODEL_CHECKPOINT_BYTES;
    mp->link_bytes_per_s = SIM_MODEL_LINK_BYTES_PER_S;
    if (o->job_text.iterations != NULL) {
        mp->iterations = (uint32_t)parse_u64("--iterations", o->job_text.iterations, 1,
                                             SIM_APP_MAX_ITERATIONS, "1..1000000");
    }
    if (o->job_text.checkpoint_every != NULL) {
        mp->checkpoint_every = (uint32_t)parse_u64("--checkpoint-every",
                                                   o->job_text.checkpoint_every, 0,
                                                   mp->iterations, "0..iterations (0: none)");
    }
}

static void check_model_options(struct options *o)
{
    const char *refused = o->job_text.app_args != NULL    ? "--app-args"
                          : o->job_text.comm_mode != NULL ? "--comm-mode"
                          : o->job_text.msg_mode != NULL  ? "--msg-mode"
                          : o->recovery_kills != 0        ? "--recovery-kills"
                          : o->chaos                      ? "--chaos"
                          : o->inject != NULL             ? "--inject"
                          : o->members_set != o->spares_set ? "--members"
                          : o->out_dir != NULL            ? "--out"
                          : o->pcap_dir != NULL           ? "--pcap"
                          : o->emit_script != NULL        ? "--emit-script"
                          : o->json                       ? "--json"
                                                          : NULL;
    if (refused != NULL) {
        usage_error("--app model does not take %s", refused,
                    "--dims, --spares, --fault-rates, --recovery, --iterations, "
                    "--checkpoint-every, --seed, --policy-study");
    }
    if (o->geometry.node_count > SIM_MODEL_MAX_NODES) {
        fprintf(stderr, TOOL ": --app model on %" PRIu32 " nodes (expected at most %u)\n",
                o->geometry.node_count, SIM_MODEL_MAX_NODES);
        exit(2);
    }
    char error[400];
    if (o->fault_rates_text != NULL &&
        !fault_rates_check_torus(&o->fault_rates, &o->geometry, error, sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        exit(2);
    }
    struct sim_model_params mp;
    model_params(o, &mp); /* its errors now, before any run */
}

static void print_model_result(const char *name, const struct sim_policy_result *r)
{
    const struct sim_model *m = &r->model;
    if (r->total_ns == UINT64_MAX) {
        printf("model policy=%s total=lost (node %" PRIu32 ": no spare or an ignored fault) "
               "faults=%" PRIu32 " decisions=%" PRIu32 "\n",
               name, m->lost_node, r->faults, r->decisions);
        return;
    }
    printf("model policy=%s total_ns=%" PRIu64 " fault_free_ns=%" PRIu64 " faults=%" PRIu32
           " decisions=%" PRIu32 " repeated=%" PRIu32 " recoveries=%" PRIu32
           " restarts=%" PRIu32 " migrations=%" PRIu32 " promotions=%" PRIu32
           " elapse_ns=%" PRIu64 " transfer_ns=%" PRIu64 " lost_work_ns=%" PRIu64
           " during_recovery=%" PRIu32 "%s\n",
           name, r->total_ns, r->fault_free_ns, r->faults, r->decisions, r->repeated,
           m->recoveries, m->restarts, m->migrations, m->promotions, m->elapse_ns,
           m->transfer_ns, m->lost_work_ns, m->during_recovery,
           r->violation ? " VIOLATION" : "");
}

static bool model_run(const struct options *o, const struct fault_rates *rates,
                      const struct recovery_policy *policy, uint32_t spares, uint64_t seed,
                      struct sim_policy_result *result)
{
    struct sim_policy_run run = {.geometry = &o->geometry, .spares = spares, .rates = rates,
                                 .policy = *policy, .seed = seed, .horizon = 4};
    model_params(o, &run.model);
    char error[256];
    if (!sim_policy_run(&run, result, error, sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        exit(2);
    }
    return !result->violation;
}

static int run_model(const struct options *o)
{
    uint32_t spares = o->spares_set ? (uint32_t)o->spares : 0;
    struct sim_policy_result result;
    char text[200];
    job_options_format_recovery(&o->recovery, text, sizeof text);
    printf("model dims=%s ranks=%" PRIu32 " spares=%" PRIu32 " seed=%" PRIu64
           " recovery='%s' fault_rates='%s'\n",
           o->dims_text, o->geometry.node_count - spares, spares, o->seed, text,
           o->fault_rates_text != NULL ? o->fault_rates_text : "");
    bool ok = model_run(o, &o->fault_rates, &o->recovery, spares, o->seed, &result);
    print_model_result(text, &result);
    return ok ? 0 : 1;
}

/* A policy in the --recovery language (the one parser); the texts are fixed. */
static struct recovery_policy study_policy(const char *text)
{
    struct recovery_policy policy;
    char error[400];
    if (!job_options_parse_recovery(text, &policy, error, sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        exit(1);
    }
    return policy;
}

#define STUDY_PROCNPHY "process=restart; physical=migrate; network=migrate"
#define STUDY_REPEATED STUDY_PROCNPHY "; repeated(2 in 60s)=migrate"
#define STUDY_SWITCH "process=restart; physical=migrate; network=ignore"

struct study {
    const char *title;
    const char *name;   /* the policy compared with PROC'nPHY */
    const char *policy;
    const char *paper;  /* the paper's gains */
    const char *rates[3];
};

static const struct study studies[] = {
    {"a: frequent process faults on group z<2 (ABARIS 4.3.1)", "REPEATED", STUDY_REPEATED,
     "3-30%",
     {"z<2: process=20; default: process=0.5", "z<2: process=40; default: process=0.5",
      "z<2: process=80; default: process=0.5"}},
    {"b: a faulty group z<2, network faults (ABARIS 4.3.2)", "SWITCH", STUDY_SWITCH, "9-25%",
     {"z<2: network=5, physical=0.5", "z<2: network=10, physical=0.5",
      "z<2: network=20, physical=0.5"}},
};

static int run_policy_study(const struct options *o)
{
    struct recovery_policy procnphy = study_policy(STUDY_PROCNPHY);
    bool ok = true;
    printf("policy-study dims=%s ranks=%u (z<2) spares=%u (z>=2) iterations=%" PRIu32
           " iteration_ns=%" PRIu64 " checkpoint_every=%u checkpoint_ns=%" PRIu64
           " load_ns=%" PRIu64 " checkpoint_bytes=%" PRIu64 " seeds=%" PRIu64 "..%" PRIu64 "\n",
           SIM_STUDY_DIMS, o->geometry.node_count - SIM_STUDY_SPARES, SIM_STUDY_SPARES,
           (uint32_t)SIM_MODEL_DEFAULT_ITERATIONS, SIM_MODEL_ITERATION_NS,
           SIM_MODEL_DEFAULT_CHECKPOINT_EVERY, SIM_MODEL_CHECKPOINT_NS, SIM_MODEL_LOAD_NS,
           SIM_MODEL_CHECKPOINT_BYTES, o->seed, o->seed + SIM_STUDY_SEEDS - 1u);
    printf("policy PROC'nPHY = --recovery '%s'\n", STUDY_PROCNPHY);
    printf("policy REPEATED  = --recovery '%s'\n", STUDY_REPEATED);
    printf("policy SWITCH    = --recovery '%s' (network-aware: a link fault is not a node's)\n",
           STUDY_SWITCH);
    for (size_t s = 0; s < sizeof studies / sizeof studies[0]; s++) {
        const struct study *st = &studies[s];
        struct recovery_policy other = study_policy(st->policy);
        printf("study %s: %s versus PROC'nPHY\n", st->title, st->name);
        for (size_t r = 0; r < 3; r++) {
            struct fault_rates rates;
            char error[400];
            if (!fault_rates_parse(st->rates[r], &rates, error, sizeof error)) {
                fprintf(stderr, TOOL ": %s\n", error);
                return 1;
            }
            uint64_t base = 0, total = 0;
            bool lost = false;
            for (uint64_t k = 0; k < SIM_STUDY_SEEDS; k++) {
                struct sim_policy_result a, b;
                ok = model_run(o, &rates, &procnphy, SIM_STUDY_SPARES, o->seed + k, &a) && ok;
                ok = model_run(o, &rates, &other, SIM_STUDY_SPARES, o->seed + k, &b) && ok;
                for (int v = 0; v < 2; v++) {
                    const struct sim_policy_result *x = v == 0 ? &a : &b;
                    if (x->violation) {
                        printf("  VIOLATION rates='%s' policy=%s seed=%" PRIu64 ": %s\n",
                               st->rates[r], v == 0 ? "PROC'nPHY" : st->name, o->seed + k,
                               x->violation_text);
                    }
                }
                lost = lost || a.total_ns == UINT64_MAX || b.total_ns == UINT64_MAX;
                base += a.total_ns == UINT64_MAX ? 0 : a.total_ns;
                total += b.total_ns == UINT64_MAX ? 0 : b.total_ns;
            }
            if (lost) {
                printf("  rates='%s' a job was lost (no spare left)\n", st->rates[r]);
                ok = false;
                continue;
            }
            double gain = 100.0 * ((double)base - (double)total) / (double)base;
            printf("  rates='%s' PROC'nPHY_ns=%" PRIu64 " %s_ns=%" PRIu64
                   " gain=%+.1f%% (paper: %s)\n",
                   st->rates[r], base / SIM_STUDY_SEEDS, st->name, total / SIM_STUDY_SEEDS,
                   gain, st->paper);
        }
    }
    return ok ? 0 : 1;
}

static void parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->radix = 4;
    o->layout = MEMBERSHIP_LAYOUT_RADIX;
    o->policy = MEMBERSHIP_POLICY_PRIMARY;
    o->timeout_ceiling = MEMBERSHIP_TIMEOUT_CEILING_DEFAULT;
    o->hop_ns = 4600;
    o->cp_ns = 2000;
    o->heartbeat_ns = -1;
    o->link_detect_ns = -1;
    o->seeds = 1;
    o->rate_milli = 500;
    o->seed = 1;
    o->verbosity = 1;
    o->job_text.default_iterations = SIM_APP_DEFAULT_ITERATIONS;
    o->job_text.max_iterations = SIM_APP_MAX_ITERATIONS;
    const char *dims_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = true;
        if (strcmp(a, "--dims") == 0) {
            dims_text = v;
        } else if (strcmp(a, "--radix") == 0) {
            o->radix = (unsigned)parse_u64(a, v, 2, 16, "2, 4, 8 or 16");
            if ((o->radix & (o->radix - 1)) != 0) {
                usage_error("--radix %s is not a power of two", v, "2, 4, 8 or 16");
            }
        } else if (strcmp(a, "--tree") == 0) {
            if (!membership_layout_from_name(v, &o->layout)) {
                usage_error("--tree '%s' is not a layout", v ? v : "", "radix, torus or box");
            }
        } else if (strcmp(a, "--policy") == 0) {
            if (v != NULL && strcmp(v, "primary") == 0) {
                o->policy = MEMBERSHIP_POLICY_PRIMARY;
            } else if (v != NULL && strcmp(v, "every-side") == 0) {
                o->policy = MEMBERSHIP_POLICY_EVERY_SIDE;
            } else {
                usage_error("--policy '%s' is not a policy", v ? v : "", "primary or every-side");
            }
        } else if (strcmp(a, "--timeout-ceiling") == 0) {
            char error[240];
            if (v != NULL && !job_options_parse_timeout_ceiling(a, v, &o->timeout_ceiling, error,
                                                                sizeof error)) {
                fprintf(stderr, TOOL ": %s\n", error);
                exit(2);
            }
        } else if (strcmp(a, "--hop-ns") == 0) {
            o->hop_ns = parse_time(a, v, 1, 1, 1000000000, "nanoseconds");
        } else if (strcmp(a, "--cp-ns") == 0) {
            o->cp_ns = parse_time(a, v, 1, 0, 1000000000, "nanoseconds");
        } else if (strcmp(a, "--members") == 0) {
            o->members = parse_u64(a, v, 1, CONFIG_MAX_NODES, "1..node count");
            o->members_set = true;
        } else if (strcmp(a, "--heartbeat-us") == 0 || strcmp(a, "--heartbeat-ns") == 0) {
            bool us = strcmp(a, "--heartbeat-us") == 0;
            o->heartbeat_ns = (int64_t)parse_time(a, v, us ? 1000 : 1, 0, 10000000000ull,
                                                  us ? "microseconds (0: off)"
                                                     : "nanoseconds (0: off)");
            o->heartbeat_option = a;
            o->heartbeat_text = v;
        } else if (strcmp(a, "--link-detect-ns") == 0) {
            o->link_detect_ns = (int64_t)parse_time(a, v, 1, 0, 1000000000, "nanoseconds (0: off)");
            o->link_detect_text = v;
        } else if (strcmp(a, "--settle-ms") == 0) {
            o->settle_ns = parse_time(a, v, 1000000, 1000000, 100000000000ull, "milliseconds");
        } else if (strcmp(a, "--inject") == 0) {
            if (v == NULL) {
                usage_error("%s needs a fault list", a, "'kill 5 at 1ms; join 5 at 10ms'");
            }
            if (o->inject != NULL) {
                usage_error("%s", "--inject and --inject-file together", "one script");
            }
            o->inject = v;
        } else if (strcmp(a, "--inject-file") == 0) {
            char *text = NULL; /* kept for the run, like argv; freed by main */
            char reason[320];
            if (v != NULL && !fault_script_read_file(v, &text, reason, sizeof reason)) {
                fprintf(stderr, TOOL ": --inject-file: %s\n", reason);
                exit(2);
            }
            if (o->inject != NULL && v != NULL) {
                usage_error("%s", "--inject and --inject-file together", "one script");
            }
            o->inject = text;
            o->inject_read = text;
        } else if (strcmp(a, "--emit-script") == 0) {
            o->emit_script = v;
        } else if (strcmp(a, "--pcap") == 0) {
            o->pcap_dir = v;
        } else if (strcmp(a, "--out") == 0) {
            o->out_dir = v;
        } else if (strcmp(a, "--app") == 0) {
            o->job_text.app = v;
            if (v != NULL && strcmp(v, "allreduce") == 0) {
                o->app = SIM_APP_ALLREDUCE;
            } else if (v != NULL && strcmp(v, "stencil") == 0) {
                o->app = SIM_APP_STENCIL;
            } else if (v != NULL && strcmp(v, "model") == 0) {
                o->model = true;
                o->job_text.app = NULL;
            } else {
                usage_error("--app '%s' is not a model application", v ? v : "",
                            "allreduce, stencil or model");
            }
        } else if (strcmp(a, "--iterations") == 0) {
            o->job_text.iterations = v;
        } else if (strcmp(a, "--app-args") == 0) {
            o->job_text.app_args = v;
        } else if (strcmp(a, "--comm-mode") == 0) {
            o->job_text.comm_mode = v;
        } else if (strcmp(a, "--msg-mode") == 0) {
            o->job_text.msg_mode = v;
        } else if (strcmp(a, "--routing") == 0) {
            if (v == NULL) {
                usage_error("%s needs a mode", a, "detour or table");
            }
            uint8_t mode = job_routing_mode_from_name(v);
            if (job_routing_mode_name(mode) == NULL) {
                usage_error("--routing '%s' is invalid", v, "detour or table");
            }
            o->routing = v;
            o->routes = true;
        } else if (strcmp(a, "--reach") == 0) {
            char error[200];
            if (v == NULL) {
                usage_error("%s needs a value", a, "INTERVAL[,PAIRS], e.g. 100us or 1ms,500");
            }
            if (!reach_options_parse(v, &o->reach, error, sizeof error)) {
                fprintf(stderr, TOOL ": --reach: %s\n", error);
                exit(2);
            }
        } else if (strcmp(a, "--spares") == 0) {
            o->spares = parse_u64(a, v, 0, CONFIG_MAX_NODES, "0..node count - 1");
            o->spares_set = true;
        } else if (strcmp(a, "--seed-nodes") == 0) {
            if (v == NULL) {
                usage_error("%s needs a value", a, "up to 4 node ids, e.g. 0,31");
            }
            o->seed_nodes = v;
        } else if (strcmp(a, "--recovery") == 0) {
            char error[400];
            if (v == NULL) {
                usage_error("%s needs a value", a, JOB_OPTIONS_RECOVERY_EXPECTED);
            }
            if (!job_options_parse_recovery(v, &o->recovery, error, sizeof error)) {
                fprintf(stderr, TOOL ": %s\n", error);
                exit(2);
            }
            o->recovery_set = true;
        } else if (strcmp(a, "--fault-rates") == 0) {
            char error[400];
            if (v != NULL && !fault_rates_parse(v, &o->fault_rates, error, sizeof error)) {
                fprintf(stderr, TOOL ": %s\n", error);
                exit(2);
            }
            o->fault_rates_text = v;
        } else if (strcmp(a, "--checkpoint-every") == 0) {
            o->job_text.checkpoint_every = v;
        } else if (strcmp(a, "--recovery-kills") == 0) {
            o->recovery_kills = (uint32_t)parse_u64(a, v, 0, 1000, "0..1000");
        } else if (strcmp(a, "--seeds") == 0) {
            o->seeds = parse_u64(a, v, 1, 10000000, "1..1e7");
        } else if (strcmp(a, "--rate") == 0) {
            o->rate_milli = parse_rate(v);
        } else if (strcmp(a, "--trace-node") == 0) {
            o->trace_node = (uint32_t)parse_u64(a, v, 0, UINT32_MAX, "a node id");
            o->trace_set = true;
        } else if (strcmp(a, "--seed") == 0) {
            o->seed = parse_u64(a, v, 0, UINT64_MAX, "an integer");
        } else {
            takes = false;
            if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                usage();
            } else if (strcmp(a, "--mesh") == 0) {
                o->mesh = true;
            } else if (strcmp(a, "--routes") == 0) {
                o->routes = true;
            } else if (strcmp(a, "--chaos") == 0) {
                o->chaos = true;
            } else if (strcmp(a, "--policy-study") == 0) {
                o->policy_study = true;
            } else if (strcmp(a, "--keep-going") == 0) {
                o->keep_going = true;
            } else if (strcmp(a, "--json") == 0) {
                o->json = true;
            } else if (strcmp(a, "--events") == 0) {
                o->verbosity = 2;
            } else if (strcmp(a, "--quiet") == 0) {
                o->verbosity = 0;
            } else {
                usage_error("unknown option '%s'", a,
                            "--dims, --mesh, --radix, --tree, --hop-ns, --cp-ns, --members, "
                            "--policy, --heartbeat-us, --heartbeat-ns, --link-detect-ns, "
                            "--timeout-ceiling, --routes, --routing, --reach, "
                            "--settle-ms, --inject, --inject-file, --emit-script, --pcap, --out, "
                            "--chaos, --seeds, --seed-nodes, --rate, --keep-going, --seed, "
                            "--trace-node, --app, --iterations, --app-args, --comm-mode, --msg-mode, --spares, --recovery, "
                            "--recovery-kills, --checkpoint-every, --fault-rates, --policy-study, --json, "
                            "--events, --quiet");
            }
        }
        if (takes) {
            if (v == NULL) {
                usage_error("%s needs a value", a, "see tori-sim --help");
            }
            i++;
        }
    }
    if (o->policy_study && !o->model) {
        usage_error("%s", "--policy-study without --app model", "--app model --policy-study");
    }
    if (o->policy_study && (dims_text != NULL || o->fault_rates_text != NULL ||
                            o->recovery_set || o->spares_set)) {
        usage_error("%s", "--policy-study with --dims, --fault-rates, --recovery or --spares",
                    "--policy-study alone: its studies fix them");
    }
    if (o->policy_study) {
        dims_text = SIM_STUDY_DIMS;
    }
    if (!o->model && o->fault_rates_text != NULL) {
        usage_error("%s without --app model", "--fault-rates", "--app model");
    }
    if (!o->model && o->app != SIM_APP_STENCIL && o->job_text.checkpoint_every != NULL) {
        usage_error("%s without --app model or stencil", "--checkpoint-every",
                    "--app model, or --app stencil (whose state it saves)");
    }
    if (dims_text == NULL) {
        usage_error("%s", "--dims is required", "--dims like 16x8x8");
    }
    o->dims_text = dims_text;
    unsigned dims = 0;
    uint32_t sizes[CONFIG_MAX_DIMS];
    struct torus_geometry_error error;
    if (torus_geometry_parse_dims(dims_text, &dims, sizes, &error) != TORUS_GEOMETRY_OK) {
        char text[160];
        torus_geometry_format_error(&error, text, sizeof text);
        fprintf(stderr, TOOL ": --dims '%s': %s\n", dims_text, text);
        exit(2);
    }
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        mesh[d] = o->mesh;
    }
    if (torus_geometry_init(&o->geometry, dims, sizes, mesh, &error) != TORUS_GEOMETRY_OK) {
        char text[160];
        torus_geometry_format_error(&error, text, sizeof text);
        fprintf(stderr, TOOL ": --dims '%s': %s\n", dims_text, text);
        exit(2);
    }
    if (o->geometry.node_count < 2) {
        usage_error("--dims '%s' has a single node", dims_text, "at least 2 nodes");
    }
    if (o->members_set && o->spares_set) {
        usage_error("%s", "--members and --spares together", "one of them");
    }
    if (o->spares_set) {
        if (o->spares >= o->geometry.node_count) {
            fprintf(stderr, TOOL ": --spares %" PRIu64 " leaves no rank on %" PRIu32
                            " nodes (expected 0..%" PRIu32 ")\n",
                    o->spares, o->geometry.node_count, o->geometry.node_count - 1);
            exit(2);
        }
        o->members = o->geometry.node_count - o->spares;
        o->members_set = true;
    }
    if (o->members_set && o->members > o->geometry.node_count) {
        fprintf(stderr, TOOL ": --members %" PRIu64 " is above the node count %" PRIu32
                        " (expected 1..%" PRIu32 ")\n",
                o->members, o->geometry.node_count, o->geometry.node_count);
        exit(2);
    }
    if (o->seed_nodes != NULL) {
        char seeds_error[200];
        if (!job_options_parse_seeds("--seed-nodes", o->seed_nodes, o->geometry.node_count,
                                     &o->seed_job, seeds_error, sizeof seeds_error)) {
            fprintf(stderr, TOOL ": %s\n", seeds_error);
            exit(2);
        }
    }
    if (o->trace_set && o->trace_node >= o->geometry.node_count) {
        fprintf(stderr, TOOL ": --trace-node %" PRIu32 " is not a node of the %s torus (expected "
                        "0..%" PRIu32 ")\n",
                o->trace_node, dims_text, o->geometry.node_count - 1);
        exit(2);
    }
    if (o->model) {
        check_model_options(o);
        return;
    }
    check_app_options(o);
    uint32_t world = o->members_set ? (uint32_t)o->members : o->geometry.node_count;
    if (o->app == SIM_APP_STENCIL && world > CONFIG_APP_STENCIL_MAX_RANKS) {
        fprintf(stderr, TOOL ": --app stencil on %" PRIu32 " ranks (expected at most %u: "
                        "rank 0 gathers a checksum of every rank)\n",
                world, (unsigned)CONFIG_APP_STENCIL_MAX_RANKS);
        exit(2);
    }
    if (o->chaos && o->inject != NULL) {
        usage_error("%s", "--chaos and --inject together", "one or the other");
    }
    if (o->pcap_dir != NULL && o->chaos && o->seeds != 1) {
        usage_error("--pcap with --seeds %s", argv_seeds_text(o->seeds),
                    "one run to capture: --seeds 1");
    }
    if (o->reach.interval_ns != 0 && !o->routes) {
        usage_error("%s", "--reach without routes", "--routing detour|table or --routes");
    }
    if (o->reach.interval_ns != 0 && o->chaos) {
        usage_error("%s", "--reach with --chaos", "a scripted run to sample");
    }
    if (o->out_dir != NULL && o->chaos) {
        usage_error("%s", "--out with --chaos",
                    "a scripted run to record; a seed's faults replay with --emit-script");
    }
    if (o->out_dir != NULL) {
        /* Made now: a directory that cannot be written is bad input. */
        char path[4096];
        if ((mkdir(o->out_dir, 0755) != 0 && errno != EEXIST) ||
            snprintf(path, sizeof path, "%s/sim.jsonl", o->out_dir) >= (int)sizeof path ||
            (o->records = fopen(path, "w")) == NULL) {
            fprintf(stderr, TOOL ": --out '%s' cannot be written (expected a writable "
                            "directory)\n",
                    o->out_dir);
            exit(2);
        }
        if (o->reach.interval_ns != 0 &&
            (snprintf(path, sizeof path, "%s/reach.jsonl", o->out_dir) >= (int)sizeof path ||
             (o->reach_file = fopen(path, "w")) == NULL)) {
            fprintf(stderr, TOOL ": --out '%s': reach.jsonl cannot be written\n", o->out_dir);
            exit(2);
        }
    }
    if (o->emit_script != NULL && o->chaos && o->seeds != 1) {
        usage_error("--emit-script with --seeds %s", argv_seeds_text(o->seeds),
                    "one run to write: --seeds 1");
    }
    if (o->emit_script != NULL) {
        /* Made (or emptied) now: a path that cannot be written is bad input. */
        FILE *file = fopen(o->emit_script, "w");
        if (file == NULL) {
            fprintf(stderr, TOOL ": --emit-script '%s' cannot be written (expected a file path "
                            "in a writable directory)\n",
                    o->emit_script);
            exit(2);
        }
        fclose(file);
    }
}

/* --reach with --out: each sample as a line of DIR/reach.jsonl (tori-emu's format). */
static void write_reach_line(void *context, const struct reach_sample *sample)
{
    FILE *file = context;
    reach_sample_write_json(sample, NULL, file);
    fputc('\n', file);
}

static void fill_params(const struct options *o, struct sim_params *p, bool heartbeats)
{
    sim_params_defaults(p, &o->geometry);
    p->radix = o->radix;
    p->layout = o->layout;
    p->policy = o->policy;
    p->timeout_ceiling = o->timeout_ceiling;
    p->hop_ns = o->hop_ns;
    p->cp_ns = o->cp_ns;
    p->members = o->members_set ? (uint32_t)o->members : o->geometry.node_count;
    p->pcap_dir = o->pcap_dir;
    if (o->link_detect_ns >= 0) {
        p->link_detect_ns = (uint64_t)o->link_detect_ns;
    }
    p->settle_ns = o->settle_ns;
    p->seed = o->seed;
    p->routes = o->routes;
    p->routing_table = o->routing != NULL &&
                       job_routing_mode_from_name(o->routing) == JOB_ROUTING_TABLE;
    p->reach_interval_ns = o->reach.interval_ns;
    p->reach_pairs = o->reach.pairs;
    if (o->reach_file != NULL) {
        p->on_reach = write_reach_line;
        p->reach_context = o->reach_file;
    }
    p->json = o->json;
    p->verbosity = o->verbosity;
    p->trace_node = o->trace_set ? o->trace_node : UINT32_MAX;
    p->app.kind = o->app;
    p->app.iterations = o->app_job.iterations;
    for (unsigned i = 0; i < JOB_APP_ARGS; i++) {
        p->app.arg[i] = o->app_job.app_arg[i];
    }
    p->app.torus_x = o->geometry.size[0];
    p->app.torus_y = o->geometry.dims > 1 ? o->geometry.size[1] : 1;
    p->app.comm_mode = o->app_job.comm_mode; /* numbered as enum comm_mode */
    p->app.msg_mode = o->app_job.message_mode;
    p->app.checkpoint_every = o->app_job.checkpoint_interval;
    /* The launcher's part: a RESTART decision kills the node a unit later
     * and starts its new life a unit after that; under REBUILD the rebuild
     * waits up to 30 units for it (node/tori.c's RESTART_GRACE). */
    p->launcher_restarts = recovery_policy_uses(&o->recovery, RECOVERY_RESTART);
    p->restart_ns = sim_unit_ns(p);
    p->app.restart_grace_ns = 30u * sim_unit_ns(p);
    p->recovery_kills = o->recovery_kills;
    p->recovery = o->recovery;
    p->seed_count = o->seed_job.seed_count;
    for (uint32_t s = 0; s < o->seed_job.seed_count && s < MEMBERSHIP_SEEDS_MAX; s++) {
        p->seeds[s] = o->seed_job.seed_node[s];
    }
    if (o->heartbeat_ns >= 0) {
        p->heartbeat_ns = (uint64_t)o->heartbeat_ns;
    } else {
        p->heartbeat_ns = heartbeats ? 4u * sim_unit_ns(p) : 0;
    }
    /* node/tori.c's BUSY_GRACE: 30 detector timeouts of retried starts */
    p->app.busy_grace_ns = 30u * sim_detect_timeout_ns(p);
}

/*
 * Timings the detector cannot work with, refused before the run: a
 * heartbeat below its minimum for this torus (sim_heartbeat_min_ns), and,
 * with heartbeats off, a crash nothing would notice (no link-down notice,
 * or one that comes after the run is over).
 */
static void check_timings(const struct options *o, const struct sim_params *p,
                          const struct fault *items, size_t count)
{
    char a[CLI_TIME_TEXT_MAX], b[CLI_TIME_TEXT_MAX];
    uint64_t minimum = sim_heartbeat_min_ns(p);
    if (p->heartbeat_ns != 0 && p->heartbeat_ns < minimum) {
        fprintf(stderr,
                TOOL ": %s '%s' is too short for this torus (expected at least %s: the 4 "
                     "silent heartbeats that make a member suspect must outlast two round "
                     "trips across the torus, and a node must handle the heartbeats of its "
                     "torus and tree neighbours, --cp-ns each, in half a period)\n",
                o->heartbeat_option != NULL ? o->heartbeat_option : "the heartbeat",
                o->heartbeat_text != NULL ? o->heartbeat_text
                                          : cli_format_time(p->heartbeat_ns, b),
                cli_format_time(minimum, a));
        exit(2);
    }
    uint64_t settle = sim_settle_ns(p);
    for (size_t i = 0; p->heartbeat_ns == 0 && i < count; i++) {
        if (items[i].kind == FAULT_KILL &&
            (p->link_detect_ns == 0 || p->link_detect_ns >= settle)) {
            char text[96];
            fault_format(&items[i], text, sizeof text);
            fprintf(stderr,
                    TOOL ": --link-detect-ns '%s' leaves '%s' unnoticed: heartbeats are off "
                         "(expected a link-down notice within the settle window, below %s, "
                         "or heartbeats: --heartbeat-us N)\n",
                    o->link_detect_text != NULL ? o->link_detect_text
                                                : cli_format_time(p->link_detect_ns, b),
                    text, cli_format_time(settle, a));
            exit(2);
        }
    }
}

static void print_summary(const struct sim_params *p, const struct sim_stats *s, FILE *out)
{
    if (p->json) {
        fprintf(out, "{\"event\":\"summary\",\"t_ns\":%" PRIu64 ",\"steps\":%" PRIu64
                     ",\"messages\":%" PRIu64 ",\"delivered\":%" PRIu64 ",\"dropped_dead\":%" PRIu64
                     ",\"dropped_partition\":%" PRIu64 ",\"dropped_route\":%" PRIu64
                     ",\"views\":%" PRIu32
                     ",\"stable\":%" PRIu32 ",\"failures_detected\":%" PRIu32
                     ",\"false_detections\":%" PRIu32 ",\"expelled\":%" PRIu32
                     ",\"joined\":%" PRIu32 ",\"partitioned\":%" PRIu32
                     ",\"left\":%" PRIu32 ",\"final_epoch\":\"%016" PRIx64 "\",\"final_live\":%" PRIu32
                     ",\"outbox_overflow\":%" PRIu64 ",\"ok\":%s}\n",
                s->end_ns, s->steps, s->sent_total, s->delivered, s->dropped_dead,
                s->dropped_partition, s->dropped_route, s->distinct_views, s->stable_count, s->failures_detected,
                s->false_detections, s->expelled, s->joined, s->partitioned, s->nodes_left,
            s->final_epoch,
                s->final_live, s->outbox_overflow, s->violation ? "false" : "true");
        return;
    }
    fprintf(out, "summary t_ns=%" PRIu64 " steps=%" PRIu64 " messages=%" PRIu64
                 " delivered=%" PRIu64 " dropped_dead=%" PRIu64 " dropped_partition=%" PRIu64
                 " dropped_route=%" PRIu64 " views=%" PRIu32 " stable=%" PRIu32 " failures_detected=%" PRIu32
                 " false_detections=%" PRIu32 " expelled=%" PRIu32 " joined=%" PRIu32
                 " partitioned=%" PRIu32 " left=%" PRIu32 " final_epoch=%016" PRIx64 " final_live=%" PRIu32
                 " outbox_overflow=%" PRIu64 " %s\n",
            s->end_ns, s->steps, s->sent_total, s->delivered, s->dropped_dead,
            s->dropped_partition, s->dropped_route, s->distinct_views, s->stable_count, s->failures_detected,
            s->false_detections, s->expelled, s->joined, s->partitioned, s->nodes_left,
            s->final_epoch,
            s->final_live, s->outbox_overflow, s->violation ? "VIOLATION" : "ok");
    fprintf(out, "messages-by-type");
    for (unsigned t = 1; t < MEMBERSHIP_MSG_TYPE_LIMIT; t++) {
        if (s->sent[t] != 0) {
            fprintf(out, " %s=%" PRIu64, membership_msg_type_name(t), s->sent[t]);
        }
    }
    fprintf(out, "\n");
}

/* Under a recovering mode: what recovered and what issue 14's checks saw
 * (--json: an object whose event is the prefix, "chaos recovery" as
 * "chaos-recovery"). */
static void print_recovery(const struct sim_params *p, const struct sim_stats *s, FILE *out,
                           const char *prefix)
{
    if (p->json) {
        fputs("{\"event\":\"", out);
        for (const char *c = prefix; *c != '\0'; c++) {
            fputc(*c == ' ' ? '-' : *c, out);
        }
        fprintf(out,
                "\",\"mode\":\"%s\",\"msg\":\"%s\",\"survivors\":%" PRIu32
                ",\"rebuilds\":%" PRIu32 ",\"adopted\":%" PRIu32 ",\"maps\":%" PRIu64
                ",\"comm_epochs\":%" PRIu64 ",\"outcomes\":%" PRIu64 ",\"agrees\":%" PRIu64,
                job_comm_mode_name(p->app.comm_mode), job_message_mode_name(p->app.msg_mode),
                s->app_survivors, s->app_rebuilds, s->app_adopted, s->ft_maps, s->ft_epochs,
                s->ft_outcomes, s->ft_agrees);
        if (s->recovery_resumed_ns != 0) {
            fprintf(out,
                    ",\"kill_ns\":%" PRIu64 ",\"noticed_ns\":%" PRIu64
                    ",\"rebuilt_ns\":%" PRIu64 ",\"resumed_ns\":%" PRIu64,
                    s->first_kill_ns, s->recovery_noticed_ns, s->recovery_rebuilt_ns,
                    s->recovery_resumed_ns);
        }
        fputs("}\n", out);
        return;
    }
    fprintf(out,
            "%s mode=%s msg=%s survivors=%" PRIu32 " rebuilds=%" PRIu32 " adopted=%" PRIu32
            " maps=%" PRIu64 " comm_epochs=%" PRIu64 " outcomes=%" PRIu64 " agrees=%" PRIu64,
            prefix, job_comm_mode_name(p->app.comm_mode),
            job_message_mode_name(p->app.msg_mode), s->app_survivors, s->app_rebuilds,
            s->app_adopted, s->ft_maps, s->ft_epochs, s->ft_outcomes, s->ft_agrees);
    if (s->recovery_resumed_ns != 0) {
        /* virtual times, as every t_ns: the first kill, then the slowest
         * survivor's first recovery */
        fprintf(out,
                " kill_ns=%" PRIu64 " noticed_ns=%" PRIu64 " rebuilt_ns=%" PRIu64
                " resumed_ns=%" PRIu64,
                s->first_kill_ns, s->recovery_noticed_ns, s->recovery_rebuilt_ns,
                s->recovery_resumed_ns);
    }
    fputc('\n', out);
}

/* The model application's line: its verdict, digest, time and messages;
 * before it, what aborted the job (a fault, as it would on the nodes). */
static void print_app(const struct sim_params *p, const struct sim_stats *s, FILE *out)
{
    bool recovering = p->app.comm_mode != COMM_MODE_ABORT;
    bool ok = recovering ? !s->violation
                         : s->app_ranks > 0 && s->app_finished == s->app_ranks &&
                               s->app_ok == s->app_ranks && s->app_digests == 1;
    if (recovering) {
        print_recovery(p, s, out, "recovery");
    }
    if (recovering && (p->app.checkpoint_every != 0 || p->launcher_restarts)) {
        fprintf(out,
                p->json ? "{\"event\":\"restores\",\"ranks\":%" PRIu32 ",\"iteration\":%" PRIu32
                          ",\"retaken\":%" PRIu32 "}\n"
                        : "restores ranks=%" PRIu32 " iteration=%" PRIu32 " retaken=%" PRIu32 "\n",
                s->app_restored, s->app_restored_iteration, s->app_retaken);
    }
    if (s->app_aborted && !s->violation) {
        fprintf(out, p->json ? "{\"event\":\"app-aborted\",\"t_ns\":%" PRIu64
                               ",\"reason\":\"%s\",\"not_fired\":%" PRIu32
                               ",\"not_done\":%" PRIu32 "}\n"
                             : "app-aborted t_ns=%" PRIu64 " %s: the job cannot complete "
                               "(faults timed by iteration not fired: %" PRIu32
                               ", not done: %" PRIu32 ")\n",
                s->app_aborted_ns, s->app_abort_text, s->faults_not_fired, s->faults_not_done);
    }
    const char *result = ok ? "ok" : s->app_aborted && !s->violation ? "aborted" : "FAILED";
    fprintf(out, p->json ? "{\"event\":\"app\",\"app\":\"%s\",\"ranks\":%" PRIu32
                           ",\"finished\":%" PRIu32 ",\"ok\":%" PRIu32 ",\"digests\":%" PRIu32
                           ",\"digest\":\"%08" PRIx64 "\",\"iterations\":%" PRIu32
                           ",\"done_ns\":%" PRIu64 ",\"comm_frames\":%" PRIu64
                           ",\"comm_bytes\":%" PRIu64 ",\"comm_messages\":%" PRIu64
                           ",\"retransmissions\":%" PRIu64 ",\"comm_outbox_overflow\":%" PRIu64
                           ",\"failed\":%" PRIu32 ",\"result\":\"%s\"}\n"
                         : "app name=%s ranks=%" PRIu32 " finished=%" PRIu32 " ok=%" PRIu32
                           " digests=%" PRIu32 " digest=%08" PRIx64 " iterations=%" PRIu32
                           " done_ns=%" PRIu64 " comm_frames=%" PRIu64 " comm_bytes=%" PRIu64
                           " comm_messages=%" PRIu64 " retransmissions=%" PRIu64
                           " comm_outbox_overflow=%" PRIu64 " failed=%" PRIu32 " %s\n",
            sim_app_name(p->app.kind), s->app_ranks, s->app_finished, s->app_ok, s->app_digests,
            s->app_digest, s->app_iterations == UINT32_MAX ? 0 : s->app_iterations,
            s->app_done_ns, s->comm_frames, s->comm_bytes, s->comm_messages,
            s->comm_retransmissions, s->comm_outbox_overflow, s->app_failed, result);
}

static int run_script(const struct options *o)
{
    struct fault_script script = {0};
    char error[256];
    if (o->inject != NULL &&
        !sim_inject_parse(o->inject, &o->geometry,
                          o->app != SIM_APP_NONE ? o->app_job.iterations : 0, &script, error,
                          sizeof error)) {
        fprintf(stderr, TOOL ": --inject: %s\n", error);
        return 2;
    }
    const struct fault *items = script.items;
    size_t count = script.count;
    for (size_t i = 0; i < count; i++) {
        if (items[i].at_recovery && o->app_job.comm_mode == JOB_COMM_ABORT) {
            char text[FAULT_TEXT_MAX];
            fault_format(&items[i], text, sizeof text);
            fprintf(stderr, TOOL ": --inject: '%s': nothing recovers under --comm-mode abort "
                            "(expected --comm-mode shrink, blank or rebuild)\n",
                    text);
            fault_script_free(&script);
            return 2;
        }
    }
    /* Heartbeats (the protocol's anti-entropy) unless the faults are plain crashes. */
    bool hangs = false;
    for (size_t i = 0; i < count; i++) {
        hangs = hangs || items[i].kind == FAULT_HANG ||
                items[i].kind == FAULT_PARTITION || items[i].kind == FAULT_HEAL ||
                items[i].kind == FAULT_BLOCK;
    }
    if (!sim_inject_check(items, count, o->geometry.node_count,
                          o->members_set ? (uint32_t)o->members : o->geometry.node_count, error,
                          sizeof error)) {
        fprintf(stderr, TOOL ": --inject: %s\n", error);
        fault_script_free(&script);
        return 2;
    }
    struct sim_params p;
    fill_params(o, &p, hangs);
    check_timings(o, &p, items, count);
    struct sim *sim = sim_create(&p, error, sizeof error);
    if (sim == NULL) {
        fprintf(stderr, TOOL ": %s\n", error);
        fault_script_free(&script);
        return 2;
    }
    emit_script(o, p.seed, items, count);
    sim_add_injections(sim, items, count);
    fault_script_free(&script);
    struct sim_params records_params = p; /* the records are JSON whatever is printed */
    records_params.json = true;
    if (o->records != NULL) {
        fprintf(o->records,
                "{\"event\":\"config\",\"dims\":\"%s\",\"nodes\":%" PRIu32
                ",\"radix\":%u,\"tree\":\"%s\",\"hop_ns\":%" PRIu64 ",\"cp_ns\":%" PRIu64
                ",\"heartbeat_ns\":%" PRIu64 ",\"seed\":%" PRIu64 ",\"app\":\"%s\"}\n",
                o->dims_text, o->geometry.node_count, p.radix,
                p.layout == MEMBERSHIP_LAYOUT_TORUS ? "torus" : "radix", p.hop_ns, p.cp_ns,
                p.heartbeat_ns, p.seed,
                p.app.kind != SIM_APP_NONE ? sim_app_name(p.app.kind) : "none");
        sim_set_records(sim, o->records);
    }
    if (!p.json) {
        printf("sim dims=%" PRIu32 " nodes=%" PRIu32 " radix=%u tree=%s hop_ns=%" PRIu64
               " cp_ns=%" PRIu64 " heartbeat_ns=%" PRIu64 " timeout_ceiling=%" PRIu32
               " unit_ns=%" PRIu64 " context_bytes=%zu seed=%" PRIu64 "\n",
               o->geometry.dims, o->geometry.node_count, p.radix,
               membership_layout_name(p.layout), p.hop_ns, p.cp_ns,
               p.heartbeat_ns, p.timeout_ceiling, sim_unit_ns(&p), membership_context_bytes(),
               p.seed);
        if (p.app.kind != SIM_APP_NONE) {
            /* The simulator's comm build (sim/CMakeLists.txt), not the node's. */
            printf("sim app=%s comm_context_bytes=%zu memory_mib=%" PRIu64 "\n",
                   sim_app_name(p.app.kind), sizeof(struct comm), sim_bytes_needed(&p) >> 20);
        }
    }
    bool ok = sim_run(sim, stdout);
    print_summary(&p, sim_get_stats(sim), stdout);
    if (o->routing != NULL) {
        /* Every pair of running nodes routed as things stand at the end. */
        struct sim_reach reach;
        sim_reach_all_pairs(sim, &reach);
        const struct sim_stats *s = sim_get_stats(sim);
        printf(p.json ? "{\"event\":\"reach\",\"routing\":\"%s\",\"pairs\":%" PRIu64
                        ",\"delivered\":%" PRIu64 ",\"unreachable\":%" PRIu64
                        ",\"ttl_expired\":%" PRIu64 ",\"messages_ttl_expired\":%" PRIu64
                        ",\"route_adverts\":%" PRIu64 ",\"stretch_mean\":%.3f"
                        ",\"stretch_max\":%.3f}\n"
                      : "reach routing=%s pairs=%" PRIu64 " delivered=%" PRIu64
                        " unreachable=%" PRIu64 " ttl_expired=%" PRIu64
                        " messages_ttl_expired=%" PRIu64 " route_adverts=%" PRIu64
                        " stretch_mean=%.3f stretch_max=%.3f\n",
               o->routing, reach.pairs, reach.delivered, reach.pairs - reach.delivered,
               reach.ttl_expired, s->ttl_expired, s->route_adverts, reach.stretch_mean,
               reach.stretch_max);
    }
    if (o->records != NULL)
        print_summary(&records_params, sim_get_stats(sim), o->records);
    bool aborted = false;
    if (p.app.kind != SIM_APP_NONE) {
        print_app(&p, sim_get_stats(sim), stdout);
        if (o->records != NULL)
            print_app(&records_params, sim_get_stats(sim), o->records);
        aborted = sim_get_stats(sim)->app_aborted;
    }
    sim_destroy(sim);
    if (o->reach_file != NULL && fclose(o->reach_file) != 0) {
        fprintf(stderr, TOOL ": --out '%s': cannot write reach.jsonl\n", o->out_dir);
        return 1;
    }
    if (o->records != NULL && fclose(o->records) != 0) {
        fprintf(stderr, TOOL ": --out '%s': cannot write sim.jsonl\n", o->out_dir);
        return 1;
    }
    return !ok ? 1 : aborted ? 3 : 0;
}

static void print_replay(const struct options *o, const struct sim_params *pp,
                         const struct fault *items, size_t count)
{
    const struct sim_params p = *pp;
    uint64_t seed = p.seed;
    printf("replay: tori-sim --dims %s%s%s --radix %u --tree %s --policy %s --hop-ns %" PRIu64
           " --cp-ns %" PRIu64 " --heartbeat-ns %" PRIu64 " --link-detect-ns %" PRIu64
           " --seed %" PRIu64,
           o->dims_text, o->mesh ? " --mesh" : "", p.routes ? " --routes" : "", p.radix, membership_layout_name(p.layout),
           p.policy == MEMBERSHIP_POLICY_PRIMARY ? "primary" : "every-side", p.hop_ns,
           p.cp_ns, p.heartbeat_ns, p.link_detect_ns, seed);
    if (p.members != o->geometry.node_count) {
        printf(" --members %" PRIu32, p.members);
    }
    if (p.timeout_ceiling != MEMBERSHIP_TIMEOUT_CEILING_DEFAULT) {
        printf(" --timeout-ceiling %" PRIu32, p.timeout_ceiling);
    }
    if (p.app.kind != SIM_APP_NONE) {
        printf(" --app %s --iterations %" PRIu32 "%s%s", sim_app_name(p.app.kind),
               p.app.iterations, o->job_text.app_args != NULL ? " --app-args " : "",
               o->job_text.app_args != NULL ? o->job_text.app_args : "");
        if (p.app.comm_mode != COMM_MODE_ABORT || p.app.msg_mode != COMM_MSG_NOP) {
            printf(" --comm-mode %s --msg-mode %s", job_comm_mode_name(p.app.comm_mode),
                   job_message_mode_name(p.app.msg_mode));
        }
        if (p.recovery_kills != 0) {
            printf(" --recovery-kills %" PRIu32, p.recovery_kills);
        }
    }
    printf(" --inject '");
    for (size_t i = 0; i < count; i++) {
        char text[96];
        fault_format(&items[i], text, sizeof text);
        printf("%s%s", i ? "; " : "", text);
    }
    printf("'\n");
}

static int run_chaos(const struct options *o)
{
    struct sim_params p;
    fill_params(o, &p, true);
    check_timings(o, &p, NULL, 0);
    uint64_t unit = sim_unit_ns(&p);
    uint64_t window = 100u * unit;
    unsigned events = (unsigned)((o->rate_milli * (window / 1000u)) / 1000000u);
    if (events == 0) {
        events = 1;
    }
    size_t capacity = 2u * events + 4u;
    struct fault *items = calloc(capacity, sizeof *items);
    if (items == NULL) {
        fprintf(stderr, TOOL ": out of memory\n");
        return 1;
    }
    uint64_t stables = 0;
    uint64_t faults = 0;
    uint64_t expelled = 0;
    uint64_t joined = 0;
    uint64_t partitioned = 0;
    uint64_t false_detections = 0;
    uint64_t messages = 0;
    uint64_t max_ts = 0;
    uint64_t failed = 0;
    uint64_t settle_sum = 0;
    uint64_t settle_max = 0;
    uint64_t app_completed = 0; /* --app: jobs that completed, and that a fault aborted */
    uint64_t app_aborted = 0;
    struct sim_stats recovered = {0}; /* recovering modes: summed over the seeds */
    for (uint64_t k = 0; k < o->seeds; k++) {
        uint64_t seed = o->seed + k;
        p.seed = seed;
        p.verbosity = 0;
        size_t count = sim_chaos_generate(&p, seed, events, window, items, capacity);
        char error[256];
        struct sim *sim = sim_create(&p, error, sizeof error);
        if (sim == NULL) {
            fprintf(stderr, TOOL ": %s\n", error);
            free(items);
            return 2;
        }
        emit_script(o, seed, items, count);
        sim_add_injections(sim, items, count);
        if (o->verbosity >= 2) {
            print_replay(o, &p, items, count); /* --events: every scenario, replayable */
        }
        bool ok = sim_run(sim, NULL);
        const struct sim_stats *s = sim_get_stats(sim);
        if (!ok) {
            printf("chaos seed=%" PRIu64 " FAILED: %s\n", seed, s->violation_text);
            print_replay(o, &p, items, count);
            sim_destroy(sim);
            failed++;
            if (o->keep_going) {
                continue;
            }
            free(items);
            return 1;
        }
        /* Settle time: from the last fault to the last change of any view. */
        uint64_t settle = s->last_change_ns > s->last_injection_ns
                              ? s->last_change_ns - s->last_injection_ns
                              : 0;
        settle_sum += settle;
        settle_max = settle > settle_max ? settle : settle_max;
        if (o->keep_going && o->verbosity >= 1) {
            printf("chaos seed=%" PRIu64 " ok settle_ns=%" PRIu64 " stable=%" PRIu32
                   " false_detections=%" PRIu32 " messages=%" PRIu64 "%s\n",
                   seed, settle, s->stable_count, s->false_detections, s->sent_total,
                   p.app.kind == SIM_APP_NONE ? ""
                   : s->app_aborted           ? " app=aborted"
                                              : " app=completed");
        }
        app_aborted += s->app_aborted ? 1u : 0u;
        recovered.app_survivors += s->app_survivors;
        recovered.app_rebuilds += s->app_rebuilds;
        recovered.app_adopted += s->app_adopted;
        recovered.ft_maps += s->ft_maps;
        recovered.ft_epochs += s->ft_epochs;
        recovered.ft_outcomes += s->ft_outcomes;
        recovered.ft_agrees += s->ft_agrees;
        app_completed += p.app.kind != SIM_APP_NONE && !s->app_aborted ? 1u : 0u;
        faults += count;
        stables += s->stable_count;
        expelled += s->expelled;
        joined += s->joined;
        partitioned += s->partitioned;
        false_detections += s->false_detections;
        messages += s->sent_total;
        if (s->stable_count > 0 && s->last_stable.ts_ns > max_ts) {
            max_ts = s->last_stable.ts_ns;
        }
        sim_destroy(sim);
    }
    free(items);
    printf("chaos seeds=%" PRIu64 " first_seed=%" PRIu64 " nodes=%" PRIu32 " radix=%u tree=%s"
           " faults=%" PRIu64 " stable=%" PRIu64 " expelled=%" PRIu64 " joined=%" PRIu64
           " partitioned=%" PRIu64 " false_detections=%" PRIu64 " messages=%" PRIu64
           " max_ts_ns=%" PRIu64 " converged=%" PRIu64 "/%" PRIu64 " mean_settle_ns=%" PRIu64
           " max_settle_ns=%" PRIu64 " violations=%" PRIu64 "\n",
           o->seeds, o->seed, o->geometry.node_count, p.radix,
           membership_layout_name(p.layout), faults, stables, expelled,
           joined, partitioned, false_detections, messages, max_ts, o->seeds - failed, o->seeds,
           o->seeds > failed ? settle_sum / (o->seeds - failed) : 0, settle_max, failed);
    if (p.app.kind != SIM_APP_NONE) {
        printf("chaos app=%s ranks=%" PRIu32 " iterations=%" PRIu32 " completed=%" PRIu64
               " aborted=%" PRIu64 " violations=%" PRIu64 "\n",
               sim_app_name(p.app.kind), p.members, p.app.iterations, app_completed, app_aborted,
               failed);
        if (p.app.comm_mode != COMM_MODE_ABORT) {
            print_recovery(&p, &recovered, stdout, "chaos recovery");
        }
    }
    return failed == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct options o;
    parse_args(argc, argv, &o);
    int status = o.policy_study ? run_policy_study(&o)
                 : o.model      ? run_model(&o)
                 : o.chaos      ? run_chaos(&o)
                                : run_script(&o);
    free(o.inject_read);
    return status;
}
