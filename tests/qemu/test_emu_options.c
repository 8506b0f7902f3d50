/* tori-emu's options and the shared value parsers: good command lines,
 * and one clear line for each bad one. */
#include <string.h>

#include "kernel/personality.h"
#include "tools/cli.h"
#include "tools/job_options.h"
#include "qemu/faults/emu_faults.h"
#include "qemu/launcher/emu_options.h"
#include "tests/check.h"

static struct emu_options options;
static char error[320];

static enum emu_options_result parse(const char *line)
{
    char copy[512];
    char *argv[32];
    int argc = 0;
    snprintf(copy, sizeof copy, "tori-emu %s", line);
    for (char *word = strtok(copy, " "); word != NULL && argc < 31; word = strtok(NULL, " "))
        argv[argc++] = word;
    argv[argc] = NULL;
    error[0] = '\0';
    return emu_options_parse(argc, argv, "/img", "/node", &options, error, sizeof error);
}

static void expect_error(const char *line, const char *part)
{
    CHECK(parse(line) == EMU_OPTIONS_ERROR);
    CHECK_CONTAINS(error, part);
    CHECK(strchr(error, '\n') == NULL);
}

static void test_good(void)
{
    CHECK(parse("--dims 4x4x4 --board host --json --radix 8 --tree torus "
                "--spares 2 --duration 1500ms --base-port 30000 --out /tmp/x") ==
          EMU_OPTIONS_OK);
    CHECK(options.dims == 3 && options.size[2] == 4 && options.boards == EMU_BOARDS_HOST);
    CHECK(!options.ping && options.json && options.radix == 8 && options.tree_layout == 1);
    CHECK(options.spares == 2 && options.duration_set &&
          options.duration_ns == 1500000000ull);
    CHECK(options.base_port == 30000 && strcmp(options.out_dir, "/tmp/x") == 0);
    CHECK(strcmp(options.image, "/img") == 0 && strcmp(options.node_binary, "/node") == 0);
    CHECK(strcmp(options.qemu, "qemu-system-arm") == 0);
    CHECK(options.mesh_mask == 0 && options.boards == EMU_BOARDS_HOST);

    CHECK(parse("--dims=3x3 --mesh") == EMU_OPTIONS_OK && options.mesh_mask == 3);
    /* The job key is on unless --auth off (issue 20). */
    CHECK(options.auth);
    CHECK(parse("--dims 2x2 --auth off") == EMU_OPTIONS_OK && !options.auth);
    CHECK(parse("--dims 2x2 --auth=on") == EMU_OPTIONS_OK && options.auth);
    CHECK(options.boards == EMU_BOARDS_QEMU && !options.duration_set);
    /* The options take the fault script's times ("at 1.5s"), decimals too. */
    CHECK(parse("--dims 2x2 --duration 0.5s --settle-quiet 1.5s") == EMU_OPTIONS_OK);
    CHECK(options.duration_ns == 500000000ull && options.settle_quiet_ns == 1500000000ull);
    CHECK(parse("--dims 3x3x3 --mesh=x,z --board mixed --duration 0") == EMU_OPTIONS_OK);
    CHECK(options.mesh_mask == 5 && options.boards == EMU_BOARDS_MIXED);
    CHECK(options.duration_set && options.duration_ns == 0);
    CHECK(parse("--demo") == EMU_OPTIONS_OK);
    CHECK(options.demo && options.dims == 3 && options.size[0] == 2 &&
          options.boards == EMU_BOARDS_QEMU && !options.duration_set);
    CHECK(options.sequential && options.heartbeat_ms == PERSONALITY_DEFAULT_HEARTBEAT_MS &&
          options.detect_timeout_ms == PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS);
    CHECK(parse("--demo --detect-timeout-ms 90") == EMU_OPTIONS_OK);
    CHECK(options.detect_timeout_ms == 90 &&
          options.heartbeat_ms == PERSONALITY_DEFAULT_HEARTBEAT_MS);
    /* Beyond 16 nodes the detector slows with the node count; on QEMU
     * four heartbeats per timeout (an idle emulated node costs host CPU
     * per frame, issue 20), on host ten. */
    CHECK(parse("--dims 4x4x2 --board host") == EMU_OPTIONS_OK);
    CHECK(options.heartbeat_ms == 20 && options.detect_timeout_ms == 200);
    CHECK(parse("--dims 4x4x2") == EMU_OPTIONS_OK);
    CHECK(options.heartbeat_ms == 250 && options.detect_timeout_ms == 1000 &&
          options.link_rto_ms == 55);
    CHECK(parse("--dims 4x4x4") == EMU_OPTIONS_OK);
    CHECK(options.heartbeat_ms == 500 && options.detect_timeout_ms == 2000 &&
          options.link_rto_ms == 111);
    CHECK(parse("--dims 4x4x4 --board mixed") == EMU_OPTIONS_OK &&
          options.heartbeat_ms == 500 && options.detect_timeout_ms == 2000);
    CHECK(parse("--dims 16x16x16") == EMU_OPTIONS_OK && options.heartbeat_ms == 1250 &&
          options.detect_timeout_ms == 5000);
    /* One of the two given: the other follows it. */
    CHECK(parse("--dims 4x4x4 --heartbeat-ms 300") == EMU_OPTIONS_OK &&
          options.heartbeat_ms == 300 && options.detect_timeout_ms == 1200);
    CHECK(parse("--dims 4x4x4 --detect-timeout-ms 4000") == EMU_OPTIONS_OK &&
          options.heartbeat_ms == 1000 && options.detect_timeout_ms == 4000);
    CHECK(parse("--dims 4x4x4 --heartbeat-ms 1000 --detect-timeout-ms 10000") ==
              EMU_OPTIONS_OK &&
          options.heartbeat_ms == 1000 && options.detect_timeout_ms == 10000);
    CHECK(parse("--dims 4x4x4 --board host") == EMU_OPTIONS_OK &&
          options.heartbeat_ms == 40 && options.detect_timeout_ms == 400);
    CHECK(parse("--dims 4x4") == EMU_OPTIONS_OK);
    CHECK(options.heartbeat_ms == PERSONALITY_DEFAULT_HEARTBEAT_MS &&
          options.detect_timeout_ms == PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS);
    CHECK(parse("--dims 2 --check-qmp --verbose") == EMU_OPTIONS_OK);
    CHECK(options.check_qmp && options.verbose && !options.ping && !options.pcap);
    CHECK(parse("--dims 2 --pcap") == EMU_OPTIONS_OK && options.pcap);
    CHECK(parse("--dims 2 --help") == EMU_OPTIONS_HELP);
    CHECK(parse("--dims 2x2 --ping") == EMU_OPTIONS_OK && options.ping);
    CHECK(parse("--dims 4x4x4 --tree box") == EMU_OPTIONS_OK &&
          options.tree_layout == PERSONALITY_TREE_BOX);
}

/* --timeout-ceiling (issue 20): the detector's bound, 1..64, default 4,
 * through the one parser (tools/job_options.h) the other tools use. */
static void test_timeout_ceiling(void)
{
    CHECK(parse("--dims 2x2") == EMU_OPTIONS_OK &&
          options.timeout_ceiling == PERSONALITY_DEFAULT_TIMEOUT_CEILING);
    CHECK(parse("--dims 2x2 --timeout-ceiling 1") == EMU_OPTIONS_OK &&
          options.timeout_ceiling == 1);
    CHECK(parse("--dims 2x2 --timeout-ceiling=64") == EMU_OPTIONS_OK &&
          options.timeout_ceiling == 64);
    expect_error("--dims 2x2 --timeout-ceiling 0",
                 "--timeout-ceiling '0' is invalid (expected a whole number in 1..64: the "
                 "detector's timeouts grow to at most this many times the set ones (1: fixed; "
                 "default 4))");
    expect_error("--dims 2x2 --timeout-ceiling 65", "--timeout-ceiling '65' is invalid");
    expect_error("--dims 2x2 --timeout-ceiling 4x", "--timeout-ceiling '4x' is invalid");
    expect_error("--dims 2x2 --timeout-ceiling", "--timeout-ceiling needs a value");
    /* The parser itself, as the other tools call it. */
    uint8_t ceiling = 9;
    char text[200];
    CHECK(job_options_parse_timeout_ceiling("--x", "17", &ceiling, text, sizeof text) &&
          ceiling == 17);
    CHECK(!job_options_parse_timeout_ceiling("--x", "-1", &ceiling, text, sizeof text) &&
          ceiling == 17);
    CHECK_CONTAINS(text, "--x '-1' is invalid (expected a whole number in 1..64");
    CHECK(!job_options_parse_timeout_ceiling("--x", NULL, &ceiling, text, sizeof text));
}

static void test_bad(void)
{
    expect_error("", "--dims is missing");
    expect_error("--dims 2x", "--dims '2x' is invalid");
    expect_error("--dims 2x0x2", "size 0");
    expect_error("--dims 2x2x2x2x2x2x2", "--dims '2x2x2x2x2x2x2' is invalid");
    expect_error("--dims 70000", "is invalid");
    expect_error("--dims 2x2 --board arm", "--board 'arm' is invalid (expected qemu, host, mixed or mpi)");
    expect_error("--dims 2x2 --auth maybe", "--auth 'maybe' is invalid (expected on or off)");
    expect_error("--dims 2x2 --radix 6", "--radix '6' is invalid (expected a power of two");
    expect_error("--dims 2x2 --spares 4", "--spares '4' is invalid (expected 0..3");
    expect_error("--dims 2x2 --duration 5x", "--duration '5x' is invalid");
    expect_error("--dims 2x2 --ready-timeout 0", "--ready-timeout '0' is invalid");
    expect_error("--dims 2x2 --base-port 80", "--base-port '80' is invalid (expected a UDP port");
    expect_error("--dims 2x2 --mesh=q", "--mesh 'q' is not a mesh spec");
    expect_error("--dims 2x2 --mesh=x,x", "names dimension x twice");
    expect_error("--dims 2x2 --tree ring", "--tree 'ring' is invalid");
    expect_error("--dims 2x2 --frobnicate", "unknown option '--frobnicate'");
    expect_error("--dims 2x2 --dims 3x3", "--dims is given twice");
    expect_error("--dims 2x2 --out", "--out needs a value");
    expect_error("--dims 2x2 --ping-parallel 0", "--ping-parallel '0' is invalid");
    /* --reach INTERVAL[,PAIRS] (issue 16): the one time syntax, 1..1e6 pairs. */
    expect_error("--dims 2x2 --reach soon", "--reach: interval 'soon' is invalid");
    expect_error("--dims 2x2 --reach 0", "--reach: interval '0' is invalid");
    expect_error("--dims 2x2 --reach 1s,0", "--reach: pairs '0' is invalid (expected 1..1000000)");
    expect_error("--dims 2x2 --reach 1s,", "--reach: pairs '' is invalid");
    expect_error("--dims 2x2 --reach ,8", "--reach: expected INTERVAL[,PAIRS]");
    expect_error("--dims 2x2 --reach", "--reach needs a value");
}

static void test_values(void)
{
    uint64_t ns = 0;
    /* One syntax for every time of every tool (tools/cli.h). */
    CHECK(cli_parse_time_ns("250ms", false, &ns) && ns == 250000000ull);
    CHECK(cli_parse_time_ns("5s", false, &ns) && ns == 5000000000ull);
    CHECK(cli_parse_time_ns("0.5s", false, &ns) && ns == 500000000ull);
    CHECK(cli_parse_time_ns("1.5ms", false, &ns) && ns == 1500000ull);
    CHECK(cli_parse_time_ns("250us", false, &ns) && ns == 250000ull);
    CHECK(cli_parse_time_ns("4600ns", false, &ns) && ns == 4600ull);
    CHECK(cli_parse_time_ns("2.5us", false, &ns) && ns == 2500ull);
    CHECK(cli_parse_time_ns("2m", false, &ns) && ns == 120000000000ull);
    CHECK(cli_parse_time_ns("0.001m", false, &ns) && ns == 60000000ull);
    CHECK(cli_parse_time_ns("0.000000001s", false, &ns) && ns == 1ull);
    CHECK(cli_parse_time_ns("0", true, &ns) && ns == 0);
    CHECK(cli_parse_time_ns("0ms", true, &ns) && ns == 0);
    CHECK(!cli_parse_time_ns("0", false, &ns) && !cli_parse_time_ns("0.0s", false, &ns));
    CHECK(!cli_parse_time_ns("10", true, &ns));  /* a unit is needed */
    CHECK(!cli_parse_time_ns("1.5ns", true, &ns)); /* whole nanoseconds only */
    CHECK(!cli_parse_time_ns("0.0000000001s", true, &ns));
    CHECK(!cli_parse_time_ns("", true, &ns) && !cli_parse_time_ns("s", true, &ns));
    CHECK(!cli_parse_time_ns("5 s", true, &ns) && !cli_parse_time_ns("-5s", true, &ns));
    CHECK(!cli_parse_time_ns("1.s", true, &ns) && !cli_parse_time_ns(".5s", true, &ns));
    CHECK(!cli_parse_time_ns("2h", true, &ns) && !cli_parse_time_ns("5S", true, &ns));
    CHECK(cli_parse_time_ns("10080m", false, &ns) && ns == 604800000000000ull);
    CHECK(!cli_parse_time_ns("10081m", false, &ns) && !cli_parse_time_ns("99999999999m", true, &ns));
    CHECK(!cli_parse_time_ns("999999999999999999999s", true, &ns));
    uint64_t value = 0;
    CHECK(cli_parse_u64("42", 0, 100, &value) && value == 42);
    CHECK(!cli_parse_u64("101", 0, 100, &value) && !cli_parse_u64("+1", 0, 100, &value));
    CHECK(!cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &value));
    CHECK(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &value) &&
          value == UINT64_MAX);
    uint8_t mask = 0;
    char why[160];
    CHECK(cli_parse_mesh("all", 3, &mask, why, sizeof why) && mask == 7);
    CHECK(cli_parse_mesh("none", 3, &mask, why, sizeof why) && mask == 0);
    CHECK(cli_parse_mesh("y", 3, &mask, why, sizeof why) && mask == 2);
    CHECK(!cli_parse_mesh("z", 2, &mask, why, sizeof why));
    CHECK_CONTAINS(why, "letters from 'xy'");
    CHECK(!cli_parse_mesh("x,", 2, &mask, why, sizeof why));
    CHECK(!cli_parse_mesh("xy", 2, &mask, why, sizeof why));
    char echo[CLI_ECHO_MAX + 4];
    const char *long_text = "0123456789012345678901234567890123456789-and-more";
    CHECK(strlen(cli_echo(long_text, echo)) == CLI_ECHO_MAX + 3);
}

static struct emu_chaos_spec chaos_spec;

/* --inject and --chaos values hold spaces: argv built by hand.  The launcher
 * reads them; the fault hooks check them, as tori-emu does before it starts. */
static enum emu_options_result parse_fault_option(const char *option, const char *value)
{
    char *argv[] = {"tori-emu", "--dims", "2x2x2", (char *)option, (char *)value, NULL};
    error[0] = '\0';
    enum emu_options_result result =
        emu_options_parse(5, argv, "/img", "/node", &options, error, sizeof error);
    if (result == EMU_OPTIONS_OK && emu_faults_wanted(&options) &&
        !emu_faults_check_options(&options, &chaos_spec, error, sizeof error))
        return EMU_OPTIONS_ERROR;
    return result;
}

static void expect_fault_error(const char *option, const char *value, const char *part)
{
    CHECK(parse_fault_option(option, value) == EMU_OPTIONS_ERROR);
    CHECK_CONTAINS(error, part);
    CHECK(strchr(error, '\n') == NULL);
}

static void test_fault_options(void)
{
    CHECK(parse_fault_option("--inject", "kill 3 at 2s; hang 5 at 4s for 1s; link 6 x+ off "
                                         "at 6s; reboot 2 at 9s; restart 3 at 11s") ==
          EMU_OPTIONS_OK);
    CHECK(options.inject_text != NULL && options.chaos_text == NULL);
    CHECK(parse_fault_option("--chaos", "seed=7,rate=0.5,kinds=kill,hang,count=20") ==
          EMU_OPTIONS_OK);
    CHECK(options.chaos_text != NULL && chaos_spec.seed == 7 && chaos_spec.count == 20);
    CHECK(chaos_spec.kinds == (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG)));
    CHECK(parse_fault_option("--settle-quiet", "500ms") == EMU_OPTIONS_OK &&
          options.settle_quiet_ns == 500000000ull);
    expect_fault_error("--inject", "kil 3 at 2s",
                       "--inject: 'kil 3 at 2s': unknown action 'kil' (expected kill, hang, "
                       "resume, link, reboot, restart, join, suspect, block, "
                       "partition, heal, appkill, leave, cut or ping)");
    expect_fault_error("--inject", "kill 3 at 2s; hang x at 1s", "'hang x at 1s': 'x' is not");
    expect_fault_error("--inject", "", "the script is empty");
    expect_fault_error("--chaos", "seed=1,rate=fast", "--chaos: rate='fast' is invalid");
    expect_fault_error("--settle-timeout", "soon", "--settle-timeout 'soon' is invalid");
    char *both[] = {"tori-emu", "--dims", "2", "--ping", "--inject", "kill 1 at 1s", NULL};
    CHECK(emu_options_parse(6, both, "/img", "/node", &options, error, sizeof error) ==
          EMU_OPTIONS_ERROR);
    CHECK_CONTAINS(error, "--ping and --inject/--chaos cannot be combined");
    char *spares[] = {"tori-emu", "--dims", "2x2", "--ping", "--spares", "1", NULL};
    CHECK(emu_options_parse(6, spares, "/img", "/node", &options, error, sizeof error) ==
          EMU_OPTIONS_ERROR);
    CHECK_CONTAINS(error, "--ping and --spares cannot be combined");
}

/* The MPI board (issue 18): its own node program, and no spares. */
static void test_mpi(void)
{
    CHECK(parse("--dims 2x2x2 --board mpi") == EMU_OPTIONS_OK);
    CHECK(options.boards == EMU_BOARDS_MPI && strcmp(options.mpiexec, "mpiexec") == 0);
    CHECK_CONTAINS(options.node_binary, "board/mpi/tori-node-mpi");
    CHECK(parse("--dims 2x2x2 --board mpi --node-binary /n --mpiexec /m") == EMU_OPTIONS_OK);
    CHECK(strcmp(options.node_binary, "/n") == 0 && strcmp(options.mpiexec, "/m") == 0);
    expect_error("--dims 2x2x2 --board mpi --spares 1",
                 "--spares cannot be used with --board mpi (expected no spares");
    expect_error("--dims 2x2x2 --board host --mpiexec /m", "--mpiexec needs --board mpi");
    /* --mpi-kill: stop (SIGSTOP, the default) or a real kill. */
    CHECK(parse("--dims 2x2x2 --board mpi") == EMU_OPTIONS_OK && !options.mpi_kill_real);
    CHECK(parse("--dims 2x2x2 --board mpi --mpi-kill kill") == EMU_OPTIONS_OK &&
          options.mpi_kill_real);
    CHECK(parse("--dims 2x2x2 --board mpi --mpi-kill stop") == EMU_OPTIONS_OK &&
          !options.mpi_kill_real);
    expect_error("--dims 2x2x2 --board mpi --mpi-kill term",
                 "--mpi-kill 'term' is invalid (expected stop or kill)");
    expect_error("--dims 2x2x2 --board host --mpi-kill kill", "--mpi-kill needs --board mpi");
}

int main(void)
{
    test_good();
    test_mpi();
    test_timeout_ceiling();
    test_bad();
    test_values();
    test_fault_options();
    return check_report("emu.options");
}
