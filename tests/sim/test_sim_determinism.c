/*
 * Same parameters and seed: byte-identical simulator output.  Runs the
 * issue's example (kill, root kill, rejoin; on 8x8x4 to stay quick under
 * the sanitizers) and a chaos scenario twice
 * each through the library, writing to temporary files, and compares; then
 * checks that a different scenario does give different output (so the
 * comparison can fail).  With the tori-sim path as argument, also runs the
 * command line twice and compares its output.
 */
#define _POSIX_C_SOURCE 200809L /* popen: a host test */

#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim_chaos.h"
#include "tests/check.h"
#include "tests/sim/sim_case.h"

/* Reads a whole stream into a malloc'd buffer. */
static char *slurp(FILE *f, size_t *length)
{
    fflush(f);
    long size = ftell(f);
    rewind(f);
    char *buffer = malloc((size_t)size + 1);
    if (buffer == NULL) {
        return NULL;
    }
    *length = fread(buffer, 1, (size_t)size, f);
    buffer[*length] = '\0';
    return buffer;
}

static char *run_case(const struct sim_case *c, size_t *length)
{
    FILE *f = tmpfile();
    if (f == NULL) {
        return NULL;
    }
    struct sim_result r;
    sim_case_run(c, &r, f);
    CHECK(r.ran && r.ok);
    char *text = slurp(f, length);
    fclose(f);
    sim_case_free(&r);
    return text;
}

static char *run_chaos(uint64_t seed, size_t *length)
{
    struct torus_geometry g;
    sim_case_geometry("4x4x4", &g);
    struct sim_params p;
    sim_params_defaults(&p, &g);
    p.heartbeat_ns = 4u * sim_unit_ns(&p);
    p.seed = seed;
    p.verbosity = 2;
    struct fault items[64];
    size_t count = sim_chaos_generate(&p, seed, 6, 100u * sim_unit_ns(&p), items, 64);
    char error[128];
    struct sim *sim = sim_create(&p, error, sizeof error);
    CHECK(sim != NULL);
    sim_add_injections(sim, items, count);
    FILE *f = tmpfile();
    CHECK(sim_run(sim, f));
    char *text = slurp(f, length);
    fclose(f);
    sim_destroy(sim);
    return text;
}

static char *run_command(const char *command, size_t *length)
{
    FILE *f = popen(command, "r");
    if (f == NULL) {
        return NULL;
    }
    size_t capacity = 1 << 16;
    char *buffer = malloc(capacity);
    *length = 0;
    size_t got;
    while (buffer != NULL && (got = fread(buffer + *length, 1, capacity - *length - 1, f)) > 0) {
        *length += got;
        if (capacity - *length < 1024) {
            capacity *= 2;
            buffer = realloc(buffer, capacity);
        }
    }
    int status = pclose(f);
    CHECK(status == 0);
    if (buffer != NULL) {
        buffer[*length] = '\0';
    }
    return buffer;
}

static void same(char *a, size_t la, char *b, size_t lb, const char *what)
{
    CHECKF(a != NULL && b != NULL && la > 0 && la == lb && memcmp(a, b, la) == 0,
           "%s: two runs differ (%zu and %zu bytes)", what, la, lb);
}

int main(int argc, char **argv)
{
    struct sim_case example = {
        .dims = "8x8x4",
        .radix = 4,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = UINT64_MAX,
        .inject = "kill 5 at 1ms; kill 0 at 3ms; join 5 at 10ms",
    };
    size_t la;
    size_t lb;
    char *a = run_case(&example, &la);
    char *b = run_case(&example, &lb);
    same(a, la, b, lb, "example");
    CHECK(a != NULL && strstr(a, "event=stable") != NULL && strstr(a, "summary") == NULL);
    example.inject = "kill 6 at 1ms; kill 0 at 3ms; join 6 at 10ms";
    size_t lc;
    char *c = run_case(&example, &lc);
    CHECK(c != NULL && (lc != la || memcmp(a, c, la) != 0)); /* the comparison can fail */
    free(a);
    free(b);
    free(c);

    a = run_chaos(77, &la);
    b = run_chaos(77, &lb);
    same(a, la, b, lb, "chaos seed 77");
    c = run_chaos(78, &lc);
    CHECK(c != NULL && (lc != la || memcmp(a, c, la) != 0));
    free(a);
    free(b);
    free(c);

    if (argc > 1) {
        char command[512];
        snprintf(command, sizeof command,
                 "'%s' --dims 8x8x4 --radix 8 --tree torus --inject 'kill 9 at 1ms; hang 3 at "
                 "2ms for 5ms; join 9 at 12ms' --json",
                 argv[1]);
        a = run_command(command, &la);
        b = run_command(command, &lb);
        same(a, la, b, lb, "tori-sim --json");
        free(a);
        free(b);
        snprintf(command, sizeof command, "'%s' --dims 2x2x2 --chaos --seeds 20 --seed 5", argv[1]);
        a = run_command(command, &la);
        b = run_command(command, &lb);
        same(a, la, b, lb, "tori-sim --chaos");
        free(a);
        free(b);
    }
    return check_report("sim.determinism");
}
