/* tori-bench-link's options: defaults, good command lines, and one clear
 * line for each bad one. */
#include <string.h>

#include "node/flood.h"
#include "qemu/bench/bench_link_options.h"
#include "tests/check.h"

static struct bench_link_options options;
static char error[320];

static enum bench_link_options_result parse(const char *line)
{
    char copy[512];
    char *argv[32];
    int argc = 0;
    snprintf(copy, sizeof copy, "tori-bench-link %s", line);
    for (char *word = strtok(copy, " "); word != NULL && argc < 31; word = strtok(NULL, " "))
        argv[argc++] = word;
    argv[argc] = NULL;
    error[0] = '\0';
    return bench_link_options_parse(argc, argv, "/img", "/node", &options, error,
                                    sizeof error);
}

static void expect_error(const char *line, const char *part)
{
    CHECK(parse(line) == BENCH_LINK_OPTIONS_ERROR);
    CHECK_CONTAINS(error, part);
    CHECK(strchr(error, '\n') == NULL);
}

static void test_defaults(void)
{
    CHECK(parse("") == BENCH_LINK_OPTIONS_OK);
    CHECK(options.boards == (BENCH_LINK_BOARD_QEMU | BENCH_LINK_BOARD_HOST));
    CHECK(options.rounds == 200 && options.ring == 8);
    CHECK(options.flood_count == 20000 && options.flood_size == TORUS_FLOOD_MAX_SIZE);
    CHECK(!options.json && !options.verbose && options.out_dir == NULL);
    CHECK(strcmp(options.image, "/img") == 0 && strcmp(options.node_binary, "/node") == 0);
    CHECK(strcmp(options.qemu, "qemu-system-arm") == 0);
}

static void test_good(void)
{
    CHECK(parse("--board host --rounds 3 --ring 4 --flood-count 100 --flood-size 12 "
                "--json --out /tmp/x --image /i --node-binary /n --qemu /q --verbose") ==
          BENCH_LINK_OPTIONS_OK);
    CHECK(options.boards == BENCH_LINK_BOARD_HOST && options.rounds == 3 &&
          options.ring == 4);
    CHECK(options.flood_count == 100 && options.flood_size == 12);
    CHECK(options.json && options.verbose && strcmp(options.out_dir, "/tmp/x") == 0);
    CHECK(strcmp(options.image, "/i") == 0 && strcmp(options.node_binary, "/n") == 0 &&
          strcmp(options.qemu, "/q") == 0);
    CHECK(parse("--board=qemu --rounds=100000 --ring=64 --flood-size=1450") ==
          BENCH_LINK_OPTIONS_OK);
    CHECK(options.boards == BENCH_LINK_BOARD_QEMU && options.rounds == 100000 &&
          options.ring == 64 && options.flood_size == 1450);
    CHECK(parse("--board both") == BENCH_LINK_OPTIONS_OK);
    CHECK(options.boards == (BENCH_LINK_BOARD_QEMU | BENCH_LINK_BOARD_HOST));
    CHECK(parse("--rounds 5 --help") == BENCH_LINK_OPTIONS_HELP);
    CHECK(parse("-h") == BENCH_LINK_OPTIONS_HELP);
}

static void test_bad(void)
{
    expect_error("--board mixed", "--board 'mixed' is invalid (expected qemu, host or both)");
    expect_error("--rounds 0", "--rounds '0' is invalid (expected a whole number in 1..100000)");
    expect_error("--rounds 100001", "--rounds '100001' is invalid");
    expect_error("--rounds -3", "--rounds '-3' is invalid");
    expect_error("--rounds 5x", "--rounds '5x' is invalid");
    expect_error("--ring 3", "--ring '3' is invalid (expected a whole number in 4..64)");
    expect_error("--ring 65", "--ring '65' is invalid");
    expect_error("--flood-count 0", "--flood-count '0' is invalid (expected a whole number "
                                    "in 1..10000000)");
    expect_error("--flood-size 11", "--flood-size '11' is invalid (expected a whole number "
                                    "in 12..1450)");
    expect_error("--flood-size 1455", "--flood-size '1455' is invalid");
    expect_error("--rounds", "--rounds needs a value");
    expect_error("--board host --board qemu", "--board is given twice");
    expect_error("--bogus", "unknown option '--bogus'");
    expect_error("--out=", "--out is empty (expected a path)");
    expect_error("--image=", "--image is empty");
}

int main(void)
{
    test_defaults();
    test_good();
    test_bad();
    return check_report("emu.bench_link_options");
}
