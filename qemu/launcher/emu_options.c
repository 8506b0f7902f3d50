#include "qemu/launcher/emu_options.h"

#define STR_VALUE(x) #x
#define STR(x) STR_VALUE(x)

/* QEMU tori above 16 nodes: the detect timeout per 8 nodes, its most, and
 * heartbeats per timeout (see emu_options_parse). */
#define EMU_QEMU_TIMEOUT_PER_8_NODES_MS 250u
#define EMU_QEMU_TIMEOUT_MOST_MS 5000u
#define EMU_QEMU_BEATS_PER_TIMEOUT 4u

#include <string.h>

#include "kernel/personality.h"
#include "tools/cli.h"
#include "tools/fault.h"
#include "tools/job_options.h"

void emu_options_usage(FILE *out)
{
    fputs(
        "usage: tori-emu --dims DIMS [options]\n"
        "       tori-emu --demo\n"
        "\n"
        "Runs a whole torus on this machine: one QEMU instance or host process per\n"
        "node, links over UDP on 127.0.0.1, events collected from every console.\n"
        "\n"
        "  --dims DIMS          torus shape, e.g. 2x2x2 (1 to 6 sizes)\n"
        "  --mesh[=x,z|all]     make dimensions meshes (alone: all of them)\n"
        "  --board qemu|host|mixed|mpi  what runs each node (qemu); mixed puts QEMU on\n"
        "                       nodes with an even coordinate sum, host on the rest;\n"
        "                       mpi: every node an MPI rank of one mpiexec (no\n"
        "                       restart, reboot, join or --spares)\n"
        "  --mpiexec PROGRAM    the MPI launcher for --board mpi (mpiexec: MPICH's)\n"
        "  --mpi-kill stop|kill  how --board mpi kills a rank: stop (SIGSTOP, it stops\n"
        "                       dead; MPICH's mpiexec survives it) or kill (SIGKILL)\n"
        "  --radix N            membership tree radix, power of two 2..16 (4)\n"
        "  --tree radix|torus|box  membership tree layout (radix)\n"
        "  --heartbeat-ms N     membership heartbeat period (" STR(PERSONALITY_DEFAULT_HEARTBEAT_MS) ";\n"
        "                       above 16 nodes, QEMU: a quarter of the detect\n"
        "                       timeout; host: 10 per 16 nodes, at most 100)\n"
        "  --detect-timeout-ms N  silence before a node is suspected (" STR(PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS) ";\n"
        "                       above 16 nodes, QEMU: 250 per 8 nodes, at most\n"
        "                       5000, or 4 heartbeats; host: 10 heartbeats)\n"
        "  --link-rto-ms N      link retransmission timeout (" STR(PERSONALITY_DEFAULT_LINK_RTO_MS) "; above 16\n"
        "                       nodes the detect timeout / 2 (retries + 1), at least 10)\n"
        "  --link-retries N     resends before a link is down (" STR(PERSONALITY_DEFAULT_LINK_RETRIES) ")\n"
        "  --partition primary|every-side  who goes on after a partition (primary)\n"
        "  --timeout-ceiling N  the detector's timeouts adapt to a slow host up to N\n"
        "                       times the set ones, 1..64 (" STR(PERSONALITY_DEFAULT_TIMEOUT_CEILING) "; 1: fixed)\n"
        "  --spares K           the last K ranks are spares: not started until a\n"
        "                       fault script joins them (join N); under --comm-mode\n"
        "                       rebuild they start as members and wait to adopt a\n"
        "                       failed rank\n"
        "  --duration D         run D after every node is ready (e.g. 500ms, 1.5s, 2m;\n"
        "                       0: stop at once); default: until --ping is done, or\n"
        "                       until Ctrl-C\n"
        "  --ping               every node pings every other node; exit 0 only if\n"
        "                       every pair answered; hop and round-trip statistics\n"
        "  --ping-parallel N    nodes pinging at the same time (2)\n"
        "  --ping-timeout D     how long one node's `ping all` may take (60s)\n"
        "  --reach INTERVAL[,PAIRS]  every INTERVAL of the job, PAIRS (64) ordered\n"
        "                       pairs of running nodes pinged (every pair when\n"
        "                       fewer): one line each in <out>/reach.jsonl, the\n"
        "                       fraction reachable and the route stretch\n"
        "  --ready-timeout D    how long the nodes may take to be ready\n"
        "                       (20s + 500ms per node)\n"
        "  --json               one JSON object per node event on stdout\n"
        "                       (the human summary then goes to stderr)\n"
        "  --out DIR            logs, personalities, sockets, events.jsonl\n"
        "                       (default: a fresh /tmp/tori-emu-XXXXXX)\n"
        "  --base-port P        link UDP ports P, P+1, ... (default: the system\n"
        "                       picks free ports)\n"
        "  --image FILE         node image for QEMU (build/qemu-virt/node.elf)\n"
        "  --node-binary FILE   host node program (the build's tori-node; with\n"
        "                       --board mpi its tori-node-mpi)\n"
        "  --qemu PROGRAM       QEMU to run (qemu-system-arm)\n"
        "  --job FILE           job block for every node (tori-personality --job-out)\n"
        "  --app NAME           run a job: allreduce, stencil or pingpong on every\n"
        "                       compute node; exit 0 only when every surviving or\n"
        "                       adopting rank reports ok=true with one digest\n"
        "  --iterations N       its iterations (" STR(EMU_APP_DEFAULT_ITERATIONS) ")\n"
        "  --progress K         app-progress every K iterations (a tenth)\n"
        "  --app-args a,b,c     up to 4 application arguments\n"
        "  --app-timeout D      how long the job may take (30s + per iteration)\n"
        "  --comm-mode MODE     what WORLD does when a rank fails: abort (the job\n"
        "                       ends: exit 3), blank (gaps), shrink (survivors\n"
        "                       renumbered) or rebuild (a spare adopts the rank)\n"
        "  --msg-mode nop|cont  after a failure every call fails until the rebuild\n"
        "                       (nop), or only calls naming a failed rank (cont)\n"
        "  --routing MODE       detour (dimension order with local detours) or table\n"
        "                       (Phoenix routing tables for fault regions)\n"
        "  --recovery POLICY    what the root decides per fault model, e.g.\n"
        "                       'process=restart; physical=migrate; network=ignore;\n"
        "                       repeated(3 in 60s)=migrate' (in the job block; the\n"
        "                       launcher carries out restart)\n"
        "  --lossy-link COUNT/MS  a link that resends more than COUNT frames within\n"
        "                       MS ms is a network fault (64/1000; in the job block)\n"
        "  --seeds a,b          up to 4 seed nodes (in the job block): a joining or\n"
        "                       rejoining node asks them first\n"
        "  --verbose            print each instance's command line, and every\n"
        "                       event (also boot, ready, ping) as it comes\n"
        "  --check-qmp          once ready, ask each QEMU node's QMP socket\n"
        "                       (<out>/nodeN.qmp) for its status; fail unless running\n"
        "  --auth on|off        tag every frame with a job key (SipHash-2-4) made for\n"
        "                       this run from /dev/urandom, never shown (default on;\n"
        "                       off: frames carry only a CRC, to measure the cost)\n"
        "  --pcap               capture every link end's frames, both directions, in\n"
        "                       <out>/pcap/nodeN-DIR.pcap (pcap, for tshark/Wireshark\n"
        "                       with tools/wireshark/tori.lua)\n"
        "\n"
        "Faults (times count from the job start, once every node is ready):\n"
        "  --inject SCRIPT      items separated by ';' (the fault language of\n"
        "                       tools/fault.h, as tori-sim --emit-script writes it):\n"
        "                         kill N at T         SIGKILL the node\n"
        "                         hang N at T [for D] QMP stop / SIGSTOP (then resume)\n"
        "                         resume N at T       QMP cont / SIGCONT\n"
        "                         link N DIR off|on at T [for D]  cut / mend the cable\n"
        "                                             at N's link DIR (both ends)\n"
        "                         link A B off|on at T [for D]  every cable between\n"
        "                                             neighbours A and B\n"
        "                         reboot N at T       QMP system_reset (QEMU nodes)\n"
        "                         restart N at T      start a killed node again\n"
        "                                             (same id, new incarnation)\n"
        "                         join N at T         start spare N (see --spares)\n"
        "                       e.g. 'kill 3 at 2s; hang 5 at 4s for 1s; join 7 at 6s'\n"
        "  --inject-file FILE   the script from a file (items separated by ';' or\n"
        "                       lines, '#' comments), e.g. from tori-sim --emit-script\n"
        "  --sequential         an item never comes before the torus settled after\n"
        "                       the one before (and was checked): script times become\n"
        "                       the least spacing between items (equal times still go\n"
        "                       together)\n"
        "  --chaos SPEC         random faults: seed=S,rate=R,kinds=kill,hang,link,\n"
        "                       reboot,join[,count=N][,duration=D][,hold=D]; each\n"
        "                       fault waits for the last to settle, and is undone\n"
        "                       (restart, resume, mend) after hold\n"
        "  --fault-rates GROUPS with --chaos seed=S,duration=D[,hold=H]: the faults\n"
        "                       are drawn from per-group rates instead (as tori-sim\n"
        "                       --fault-rates: 'x<2: process=2, physical=0.5;\n"
        "                       default: network=1'), each at its drawn time, several\n"
        "                       at once: appkill, kill, link off for H\n"
        "  --settle-quiet D     no membership event for D means settled\n"
        "                       (6 detect timeouts, at least 300ms)\n"
        "  --settle-timeout D   check agreement at the latest after D\n"
        "                       (60 detect timeouts, at least 10s)\n"
        "  After each fault settles every live node is asked `view`: same epoch,\n"
        "  digest and root on all, and the expected members.  Records per fault in\n"
        "  <out>/faults.jsonl (stdout too with --json), then a summary table.\n"
        "  --demo               a 2x2x2 QEMU torus: kill a leaf, then the root, then\n"
        "                       restart the leaf (each once the last settled); every\n"
        "                       view change and the table\n"
        "\n"
        "Exit status: 0 success, 1 a node failed (not ready, panic, exit, ping) or an\n"
        "agreement check failed, 2 bad options or setup, 3 the job was aborted\n"
        "(--comm-mode abort: every node reported app-abort), 130/143 interrupted.\n",
        out);
}

static bool parse_duration_option(const char *option, const char *value, bool allow_zero,
                                  uint64_t *out, char *error, size_t capacity)
{
    if (!cli_parse_time_ns(value, allow_zero, out))
        return cli_invalid(error, capacity, option, value,
                           allow_zero ? CLI_TIME_EXPECTED ", or 0" : CLI_TIME_EXPECTED);
    return true;
}

struct raw_options {
    const char *dims, *mesh, *board, *radix, *tree, *spares, *duration;
    const char *ready_timeout, *ping_timeout, *ping_parallel, *out, *base_port;
    const char *image, *node_binary, *qemu, *job, *auth, *mpiexec, *mpi_kill;
    const char *app, *iterations, *progress, *app_args, *app_timeout, *comm_mode, *msg_mode;
    const char *checkpoint_every, *recovery, *lossy_link, *seeds, *routing, *reach;
    const char *heartbeat_ms, *detect_timeout_ms, *link_rto_ms, *link_retries, *partition;
    const char *timeout_ceiling;
    const char *inject, *inject_file, *chaos, *fault_rates, *settle_quiet, *settle_timeout;
    bool mesh_all, ping, json, demo, verbose, check_qmp, sequential, pcap;
};

static enum emu_options_result collect(int argc, char **argv, struct raw_options *raw,
                                       char *error, size_t capacity)
{
    const struct cli_option options[] = {
        {"--dims", &raw->dims, NULL},
        {"--mesh", &raw->mesh, &raw->mesh_all}, /* --mesh alone: every dimension */
        {"--board", &raw->board, NULL},
        {"--radix", &raw->radix, NULL},
        {"--tree", &raw->tree, NULL},
        {"--spares", &raw->spares, NULL},
        {"--duration", &raw->duration, NULL},
        {"--ready-timeout", &raw->ready_timeout, NULL},
        {"--ping-timeout", &raw->ping_timeout, NULL},
        {"--ping-parallel", &raw->ping_parallel, NULL},
        {"--reach", &raw->reach, NULL},
        {"--out", &raw->out, NULL},
        {"--base-port", &raw->base_port, NULL},
        {"--image", &raw->image, NULL},
        {"--node-binary", &raw->node_binary, NULL},
        {"--qemu", &raw->qemu, NULL},
        {"--mpiexec", &raw->mpiexec, NULL},
        {"--mpi-kill", &raw->mpi_kill, NULL},
        {"--job", &raw->job, NULL},
        {"--auth", &raw->auth, NULL},
        {"--app", &raw->app, NULL},
        {"--iterations", &raw->iterations, NULL},
        {"--progress", &raw->progress, NULL},
        {"--app-args", &raw->app_args, NULL},
        {"--app-timeout", &raw->app_timeout, NULL},
        {"--comm-mode", &raw->comm_mode, NULL},
        {"--msg-mode", &raw->msg_mode, NULL},
        {"--checkpoint-every", &raw->checkpoint_every, NULL},
        {"--recovery", &raw->recovery, NULL},
        {"--lossy-link", &raw->lossy_link, NULL},
        {"--seeds", &raw->seeds, NULL},
        {"--routing", &raw->routing, NULL},
        {"--heartbeat-ms", &raw->heartbeat_ms, NULL},
        {"--detect-timeout-ms", &raw->detect_timeout_ms, NULL},
        {"--link-rto-ms", &raw->link_rto_ms, NULL},
        {"--link-retries", &raw->link_retries, NULL},
        {"--partition", &raw->partition, NULL},
        {"--timeout-ceiling", &raw->timeout_ceiling, NULL},
        {"--inject", &raw->inject, NULL},
        {"--inject-file", &raw->inject_file, NULL},
        {"--chaos", &raw->chaos, NULL},
        {"--fault-rates", &raw->fault_rates, NULL},
        {"--settle-quiet", &raw->settle_quiet, NULL},
        {"--settle-timeout", &raw->settle_timeout, NULL},
        {"--ping", NULL, &raw->ping},
        {"--json", NULL, &raw->json},
        {"--demo", NULL, &raw->demo},
        {"--verbose", NULL, &raw->verbose},
        {"--check-qmp", NULL, &raw->check_qmp},
        {"--pcap", NULL, &raw->pcap},
        {"--sequential", NULL, &raw->sequential},
    };
    switch (cli_scan(argc, argv, options, sizeof options / sizeof options[0], error,
                     capacity)) {
    case CLI_SCAN_HELP:
        return EMU_OPTIONS_HELP;
    case CLI_SCAN_ERROR:
        return EMU_OPTIONS_ERROR;
    case CLI_SCAN_OK:
        break;
    }
    return EMU_OPTIONS_OK;
}

/* --app and its options: the job block tori-personality would write. */
static bool parse_app(const struct raw_options *raw, struct emu_options *o, char *error,
                      size_t capacity)
{
    if (raw->app == NULL) {
        const char *stray = raw->iterations != NULL    ? "--iterations"
                            : raw->progress != NULL    ? "--progress"
                            : raw->app_args != NULL    ? "--app-args"
                            : raw->app_timeout != NULL ? "--app-timeout"
                            : raw->comm_mode != NULL   ? "--comm-mode"
                            : raw->msg_mode != NULL    ? "--msg-mode"
                            : raw->checkpoint_every != NULL ? "--checkpoint-every"
                            : raw->recovery != NULL    ? "--recovery"
                            : raw->lossy_link != NULL  ? "--lossy-link"
                            : raw->seeds != NULL       ? "--seeds"
                            : raw->routing != NULL     ? "--routing"
                                                       : NULL;
        if (stray != NULL)
            snprintf(error, capacity, "%s needs --app (expected --app NAME)", stray);
        return stray == NULL;
    }
    const char *clash = raw->job != NULL ? "--job" : raw->ping ? "--ping"
                        : raw->duration != NULL ? "--duration" : NULL;
    if (clash != NULL) {
        snprintf(error, capacity, "--app and %s cannot be combined (expected one of them: "
                                  "an --app run ends when every node reported)", clash);
        return false;
    }
    uint32_t node_count = 1;
    for (unsigned d = 0; d < o->dims; d++)
        node_count *= o->size[d];
    const struct job_options wanted = {.app = raw->app,
                                       .iterations = raw->iterations,
                                       .progress = raw->progress,
                                       .app_args = raw->app_args,
                                       .comm_mode = raw->comm_mode,
                                       .msg_mode = raw->msg_mode,
                                       .routing = raw->routing,
                                       .checkpoint_every = raw->checkpoint_every,
                                       .recovery = raw->recovery,
                                       .lossy_link = raw->lossy_link,
                                       .seeds = raw->seeds,
                                       .node_count = node_count,
                                       .default_iterations = EMU_APP_DEFAULT_ITERATIONS,
                                       .max_iterations = EMU_APP_MAX_ITERATIONS};
    if (!job_options_build(&wanted, &o->app_job, error, capacity))
        return false;
    if (o->app_job.comm_mode == JOB_COMM_REBUILD)
        o->idle_spares = 0; /* they join at once and wait to adopt a failed rank */
    o->app_progress_set = raw->progress != NULL;
    if (!o->app_progress_set) {
        uint32_t tenth = o->app_job.iterations / 10;
        o->app_job.progress_interval = tenth > 0 ? tenth : 1;
    }
    if (raw->app_timeout != NULL &&
        !parse_duration_option("--app-timeout", raw->app_timeout, false, &o->app_timeout_ns,
                               error, capacity))
        return false;
    o->app_set = true;
    return true;
}

enum emu_options_result emu_options_parse(int argc, char **argv,
                                          const char *default_image,
                                          const char *default_node_binary,
                                          struct emu_options *o, char *error,
                                          size_t capacity)
{
    struct raw_options raw;
    memset(&raw, 0, sizeof raw);
    memset(o, 0, sizeof *o);
    enum emu_options_result result = collect(argc, argv, &raw, error, capacity);
    if (result != EMU_OPTIONS_OK)
        return result;

    o->ping = raw.ping;
    o->json = raw.json;
    o->demo = raw.demo;
    o->verbose = raw.verbose;
    o->check_qmp = raw.check_qmp;
    o->pcap = raw.pcap;
    o->auth = raw.auth == NULL || strcmp(raw.auth, "on") == 0;
    if (raw.auth != NULL && !o->auth && strcmp(raw.auth, "off") != 0) {
        cli_invalid(error, capacity, "--auth", raw.auth, "on or off");
        return EMU_OPTIONS_ERROR;
    }    o->sequential = raw.sequential || raw.demo;
    o->image = raw.image != NULL ? raw.image : default_image;
    o->node_binary = raw.node_binary != NULL ? raw.node_binary : default_node_binary;
    o->qemu = raw.qemu != NULL ? raw.qemu : "qemu-system-arm";
    o->mpiexec = raw.mpiexec != NULL ? raw.mpiexec : "mpiexec";
    o->job = raw.job;
    o->out_dir = raw.out;
    o->radix = CONFIG_TREE_RADIX_DEFAULT;
    o->tree_layout = PERSONALITY_TREE_RADIX;
    o->ping_parallel = 2;
    o->ping_timeout_ns = 60ull * 1000000000u;
    o->heartbeat_ms = PERSONALITY_DEFAULT_HEARTBEAT_MS;
    o->detect_timeout_ms = PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS;
    o->link_rto_ms = PERSONALITY_DEFAULT_LINK_RTO_MS;
    o->link_retries = PERSONALITY_DEFAULT_LINK_RETRIES;
    o->partition_policy = PERSONALITY_PARTITION_PRIMARY;
    o->timeout_ceiling = PERSONALITY_DEFAULT_TIMEOUT_CEILING;

    if (raw.dims == NULL && raw.demo)
        raw.dims = "2x2x2";
    if (raw.dims == NULL) {
        snprintf(error, capacity, "--dims is missing (expected the torus shape, e.g. "
                                  "--dims 2x2x2)");
        return EMU_OPTIONS_ERROR;
    }
    if (!cli_parse_dims("--dims", raw.dims, &o->dims, o->size, error, capacity))
        return EMU_OPTIONS_ERROR;
    o->dims_text = raw.dims;
    uint32_t nodes = 1;
    for (unsigned d = 0; d < o->dims; d++)
        nodes *= o->size[d];

    if (raw.mesh_all)
        o->mesh_mask = (uint8_t)((1u << o->dims) - 1u);
    if (raw.mesh != NULL) {
        char reason[160];
        if (!cli_parse_mesh(raw.mesh, o->dims, &o->mesh_mask, reason, sizeof reason)) {
            snprintf(error, capacity, "--mesh %s", reason);
            return EMU_OPTIONS_ERROR;
        }
    }
    if (raw.board == NULL || strcmp(raw.board, "qemu") == 0)
        o->boards = EMU_BOARDS_QEMU;
    else if (strcmp(raw.board, "host") == 0)
        o->boards = EMU_BOARDS_HOST;
    else if (strcmp(raw.board, "mixed") == 0)
        o->boards = EMU_BOARDS_MIXED;
    else if (strcmp(raw.board, "mpi") == 0)
        o->boards = EMU_BOARDS_MPI;
    else {
        cli_invalid(error, capacity, "--board", raw.board, "qemu, host, mixed or mpi");
        return EMU_OPTIONS_ERROR;
    }
    if (o->boards == EMU_BOARDS_MPI && raw.node_binary == NULL)
        o->node_binary = TORI_DEFAULT_MPI_NODE_BINARY;
    if (raw.mpiexec != NULL && o->boards != EMU_BOARDS_MPI) {
        snprintf(error, capacity, "--mpiexec needs --board mpi (expected it only for MPI "
                                  "ranks)");
        return EMU_OPTIONS_ERROR;
    }
    if (raw.mpi_kill != NULL && o->boards != EMU_BOARDS_MPI) {
        snprintf(error, capacity, "--mpi-kill needs --board mpi (other boards always kill "
                                  "with SIGKILL)");
        return EMU_OPTIONS_ERROR;
    }
    o->mpi_kill_real = raw.mpi_kill != NULL && strcmp(raw.mpi_kill, "kill") == 0;
    if (raw.mpi_kill != NULL && !o->mpi_kill_real && strcmp(raw.mpi_kill, "stop") != 0) {
        cli_invalid(error, capacity, "--mpi-kill", raw.mpi_kill, "stop or kill");
        return EMU_OPTIONS_ERROR;
    }

    uint64_t value = 0;
    if (raw.radix != NULL) {
        if (!cli_parse_u64(raw.radix, 2, 16, &value) || (value & (value - 1)) != 0) {
            cli_invalid(error, capacity, "--radix", raw.radix, "a power of two in 2..16");
            return EMU_OPTIONS_ERROR;
        }
        o->radix = (uint8_t)value;
    }
    if (raw.tree != NULL) {
        if (!personality_tree_layout_from_name(raw.tree, &o->tree_layout)) {
            cli_invalid(error, capacity, "--tree", raw.tree, "radix, torus or box");
            return EMU_OPTIONS_ERROR;
        }
    }
    struct {
        const char *name, *text;
        uint64_t min, max;
    } timings[] = {
        {"--heartbeat-ms", raw.heartbeat_ms, 1, 65535},
        {"--detect-timeout-ms", raw.detect_timeout_ms, 2, 65535},
        {"--link-rto-ms", raw.link_rto_ms, 1, 65535},
        {"--link-retries", raw.link_retries, 1, 255},
    };
    uint64_t timing_values[4] = {o->heartbeat_ms, o->detect_timeout_ms, o->link_rto_ms,
                                 o->link_retries};
    for (unsigned t = 0; t < 4; t++) {
        if (timings[t].text != NULL &&
            !cli_parse_u64_option(timings[t].name, timings[t].text, timings[t].min,
                                  timings[t].max, &timing_values[t], error, capacity))
            return EMU_OPTIONS_ERROR;
    }
    /*
     * Every node of an emulated torus shares this machine's cores, so a
     * large torus gets slower timings unless told otherwise: timeouts grow
     * with the node count beyond 16, which keeps the detector free of false
     * suspicions when the host is busy.  Host nodes, which cost
     * microseconds a frame, heartbeat 10 ms per 16 nodes (at most 100),
     * suspecting after 10 heartbeats.  QEMU nodes cost the host 0.1-0.3 ms
     * of CPU per frame sent or received (issue 20), and an idle torus
     * costs what its heartbeats cost, so they heartbeat only four times per
     * detect timeout (250 ms per 8 nodes, at most 5 s): at 4x4x4 500 ms
     * against 2 s, where ten per timeout (200 ms) kept 0.86-1.34 of this
     * machine's two cores busy doing nothing and took a third of the
     * all-pairs ping's time.  The adaptive detector (gap deviations, local
     * health) gives the slack that more beats per timeout used to.
     */
    if (nodes > 16) {
        bool emulated = o->boards == EMU_BOARDS_QEMU || o->boards == EMU_BOARDS_MIXED;
        if (emulated) {
            uint64_t timeout = (nodes + 7) / 8 * EMU_QEMU_TIMEOUT_PER_8_NODES_MS;
            if (raw.detect_timeout_ms == NULL)
                timing_values[1] = timeout > EMU_QEMU_TIMEOUT_MOST_MS ? EMU_QEMU_TIMEOUT_MOST_MS
                                                                      : timeout;
            if (raw.heartbeat_ms == NULL) {
                uint64_t beat = timing_values[1] / EMU_QEMU_BEATS_PER_TIMEOUT;
                timing_values[0] = beat < 1 ? 1 : beat;
            }
            if (raw.heartbeat_ms != NULL && raw.detect_timeout_ms == NULL)
                timing_values[1] = timing_values[0] * EMU_QEMU_BEATS_PER_TIMEOUT;
        } else {
            uint64_t heartbeat = (nodes + 15) / 16 * 10;
            if (raw.heartbeat_ms == NULL)
                timing_values[0] = heartbeat > 100 ? 100 : heartbeat;
            if (raw.detect_timeout_ms == NULL)
                timing_values[1] = timing_values[0] * 10;
        }
    }
    /* A link must not be declared down (which makes membership probe and
     * suspect) before the detector itself would suspect the silence. */
    if (nodes > 16 && raw.link_rto_ms == NULL) {
        uint64_t rto = timing_values[1] / (2 * (timing_values[3] + 1));
        timing_values[2] = rto < 10 ? 10 : rto;
    }
    o->heartbeat_ms = (uint16_t)timing_values[0];
    o->detect_timeout_ms = (uint16_t)timing_values[1];
    o->link_rto_ms = (uint16_t)timing_values[2];
    o->link_retries = (uint8_t)timing_values[3];
    if (o->detect_timeout_ms <= o->heartbeat_ms) {
        char expected[64];
        snprintf(expected, sizeof expected, "more than --heartbeat-ms (%u)",
                 (unsigned)o->heartbeat_ms);
        cli_invalid(error, capacity, "--detect-timeout-ms",
                    raw.detect_timeout_ms != NULL ? raw.detect_timeout_ms : "(default)",
                    expected);
        return EMU_OPTIONS_ERROR;
    }
    if (raw.partition != NULL) {
        if (strcmp(raw.partition, "primary") == 0)
            o->partition_policy = PERSONALITY_PARTITION_PRIMARY;
        else if (strcmp(raw.partition, "every-side") == 0)
            o->partition_policy = PERSONALITY_PARTITION_EVERY_SIDE;
        else {
            cli_invalid(error, capacity, "--partition", raw.partition,
                        "primary or every-side");
            return EMU_OPTIONS_ERROR;
        }
    }
    if (raw.timeout_ceiling != NULL &&
        !job_options_parse_timeout_ceiling("--timeout-ceiling", raw.timeout_ceiling,
                                           &o->timeout_ceiling, error, capacity))
        return EMU_OPTIONS_ERROR;
    if (raw.spares != NULL) {
        if (!cli_parse_u64(raw.spares, 0, nodes - 1, &value)) {
            char expected[64];
            snprintf(expected, sizeof expected, "0..%u, fewer than the nodes",
                     (unsigned)(nodes - 1));
            cli_invalid(error, capacity, "--spares", raw.spares, expected);
            return EMU_OPTIONS_ERROR;
        }
        o->spares = (uint32_t)value;
        o->idle_spares = o->spares;
    }
    if (raw.duration != NULL) {
        if (!parse_duration_option("--duration", raw.duration, true, &o->duration_ns,
                                   error, capacity))
            return EMU_OPTIONS_ERROR;
        o->duration_set = true;
    }
    if (raw.inject != NULL && raw.inject_file != NULL) {
        snprintf(error, capacity, "--inject and --inject-file cannot be combined (expected one "
                                  "script)");
        return EMU_OPTIONS_ERROR;
    }
    const char *inject_option = raw.inject_file != NULL ? "--inject-file" : "--inject";
    if (raw.inject_file != NULL) {
        char *text = NULL; /* kept for the run, like argv */
        char reason[280];
        if (!fault_script_read_file(raw.inject_file, &text, reason, sizeof reason)) {
            snprintf(error, capacity, "--inject-file: %s", reason);
            return EMU_OPTIONS_ERROR;
        }
        raw.inject = text;
    }
    o->inject_text = raw.inject;
    o->inject_option = inject_option;
    o->chaos_text = raw.chaos;
    o->fault_rates_text = raw.fault_rates;
    if (raw.fault_rates != NULL && raw.chaos == NULL) {
        snprintf(error, capacity, "--fault-rates needs --chaos (expected --chaos "
                                  "seed=S,duration=D with the rates)");
        return EMU_OPTIONS_ERROR;
    }
    if (raw.settle_quiet != NULL &&
        !parse_duration_option("--settle-quiet", raw.settle_quiet, false,
                               &o->settle_quiet_ns, error, capacity))
        return EMU_OPTIONS_ERROR;
    if (raw.settle_timeout != NULL &&
        !parse_duration_option("--settle-timeout", raw.settle_timeout, false,
                               &o->settle_timeout_ns, error, capacity))
        return EMU_OPTIONS_ERROR;
    if (o->boards == EMU_BOARDS_MPI && o->spares > 0) {
        snprintf(error, capacity, "--spares cannot be used with --board mpi (expected no "
                                  "spares: a rank cannot join an MPI world later)");
        return EMU_OPTIONS_ERROR;
    }
    if (raw.ping && o->spares > 0) {
        snprintf(error, capacity, "--ping and --spares cannot be combined (expected one of "
                                  "them: spares are not started until a fault run joins them)");
        return EMU_OPTIONS_ERROR;
    }
    if (raw.sequential && raw.inject == NULL) {
        snprintf(error, capacity, "--sequential needs --inject (expected a script to pace)");
        return EMU_OPTIONS_ERROR;
    }
    if (raw.ping && (raw.inject != NULL || raw.chaos != NULL)) {
        snprintf(error, capacity, "--ping and --inject/--chaos cannot be combined (expected "
                                  "one of them: a fault run measures its own latency)");
        return EMU_OPTIONS_ERROR;
    }
    if (raw.ready_timeout != NULL &&
        !parse_duration_option("--ready-timeout", raw.ready_timeout, false,
                               &o->ready_timeout_ns, error, capacity))
        return EMU_OPTIONS_ERROR;
    if (raw.ping_timeout != NULL &&
        !parse_duration_option("--ping-timeout", raw.ping_timeout, false,
                               &o->ping_timeout_ns, error, capacity))
        return EMU_OPTIONS_ERROR;
    if (raw.ping_parallel != NULL) {
        if (!cli_parse_u64(raw.ping_parallel, 1, 1024, &value)) {
            cli_invalid(error, capacity, "--ping-parallel", raw.ping_parallel,
                        "a count in 1..1024");
            return EMU_OPTIONS_ERROR;
        }
        o->ping_parallel = (unsigned)value;
    }
    if (raw.reach != NULL) {
        char reason[160];
        if (!reach_options_parse(raw.reach, &o->reach, reason, sizeof reason)) {
            snprintf(error, capacity, "--reach: %s", reason);
            return EMU_OPTIONS_ERROR;
        }
        o->reach_set = true;
    }
    if (raw.base_port != NULL) {
        if (!cli_parse_u64(raw.base_port, 1024, 65535, &value)) {
            cli_invalid(error, capacity, "--base-port", raw.base_port,
                        "a UDP port in 1024..65535");
            return EMU_OPTIONS_ERROR;
        }
        o->base_port = (uint32_t)value;
    }
    if (!parse_app(&raw, o, error, capacity))
        return EMU_OPTIONS_ERROR;
    if (raw.out != NULL && raw.out[0] == '\0') {
        cli_invalid(error, capacity, "--out", raw.out, "a directory name");
        return EMU_OPTIONS_ERROR;
    }
    return EMU_OPTIONS_OK;
}
