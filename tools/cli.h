/*
 * Command-line parsing shared by the host tools (tori-personality,
 * tori-emu, tori-bench-link, tori-bench-faults, and tori-sim's times): the
 * scan of argv against a table of options, and the values.  Strict: a value
 * is accepted whole or refused, never partly read, so that every bad option
 * can be reported in one clear line ("OPTION 'VALUE' is invalid (expected ...)").
 */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"

/* Longest option value echoed back in an error message. */
#define CLI_ECHO_MAX 40

/* Decimal digits only (no sign, no spaces), min <= value <= max. */
bool cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/*
 * The one syntax of times and durations in every tool (tori-emu's options
 * and fault scripts, tori-sim's options and fault scripts, the benchmarks):
 * an integer or decimal with a unit, ns, us, ms, s or m (minutes): "250us",
 * "1.5ms", "2s", "0.5s", "2m"; or "0" alone.  Up to 7 days, in whole
 * nanoseconds ("1.5ns" is refused), at most 9 decimals.  Zero ("0", "0ms") only when
 * allow_zero.  Fills *out_ns.
 */
bool cli_parse_time_ns(const char *text, bool allow_zero, uint64_t *out_ns);

/* The words for an error message about a value cli_parse_time_ns refused. */
#define CLI_TIME_EXPECTED "a time like 250us, 1.5ms, 2s or 2m"

/* Room for cli_format_time's text. */
#define CLI_TIME_TEXT_MAX 32

/*
 * A time as cli_parse_time_ns reads it back, exactly, in the largest unit
 * that keeps it whole: "0", "1500us", "2ms", "3s".  Returns out (or "0").
 */
const char *cli_format_time(uint64_t ns, char out[CLI_TIME_TEXT_MAX]);

/*
 * A mesh spec for a geometry of dims dimensions: "all", "none", or a
 * comma-separated list of dimension letters "x,z" (x y z u v w).  Fills *mask
 * (bit d: dimension d is a mesh); on failure writes the reason to error.
 */
bool cli_parse_mesh(const char *spec, unsigned dims, uint8_t *mask, char *error,
                    size_t capacity);

/*
 * Matches argv[*index] against a value-taking option "--name VALUE" or
 * "--name=VALUE".  Returns 1 and sets *value (advancing *index past a
 * separate VALUE) on a match, 0 when argv[*index] is another option, and -1
 * when the option is there but its value is missing.
 */
int cli_take_value(int argc, char **argv, int *index, const char *name,
                   const char **value);

/* True when arg is exactly the flag "--name". */
bool cli_is_flag(const char *arg, const char *name);

/* Copies text cut to CLI_ECHO_MAX characters (with "...") for messages. */
const char *cli_echo(const char *text, char buffer[CLI_ECHO_MAX + 4]);

/*
 * One option a tool accepts, for cli_scan: a flag ("--json": sets *flag), an
 * option with a value ("--out DIR" or "--out=DIR": sets *value), or both:
 * bare "--mesh" sets *flag and "--mesh=SPEC" sets *value (then a separate
 * word after it is not its value).
 */
struct cli_option {
    const char *name;
    const char **value; /* NULL: takes no value */
    bool *flag;         /* NULL: must have a value */
};

enum cli_scan_result { CLI_SCAN_OK, CLI_SCAN_HELP, CLI_SCAN_ERROR };

/*
 * Reads argv[1..argc-1] against options, in order: -h or --help stops with
 * CLI_SCAN_HELP; an unknown option, a missing value or an option with a
 * value given twice stops with CLI_SCAN_ERROR and the reason in error.
 * Values point into argv; what is not given keeps its NULL or false.
 */
enum cli_scan_result cli_scan(int argc, char **argv, const struct cli_option *options,
                              size_t count, char *error, size_t capacity);

/*
 * Writes "OPTION 'VALUE' is invalid (expected EXPECTED)" to error, the
 * value cut for echoing; returns false.
 */
bool cli_invalid(char *error, size_t capacity, const char *option, const char *value,
                 const char *expected);

/* A whole number in min..max, else cli_invalid ("a whole number in MIN..MAX"). */
bool cli_parse_u64_option(const char *option, const char *value, uint64_t min,
                          uint64_t max, uint64_t *out, char *error, size_t capacity);
/* The same into an unsigned (max must fit one). */
bool cli_parse_unsigned_option(const char *option, const char *value, unsigned min,
                               unsigned max, unsigned *out, char *error, size_t capacity);

/* A tool's numeric options as a table: each given one (value not NULL) is
 * parsed as above into *out; false at the first bad one. */
struct cli_unsigned_option {
    const char *name, *value;
    unsigned min, max, *out;
};
bool cli_parse_unsigned_options(const struct cli_unsigned_option *options, size_t count,
                                char *error, size_t capacity);

/*
 * A torus shape like "4x4x2" (net/torus/geometry.h), every size at most
 * 65535 (a personality field is 16 bits).  Fills *dims and size[0..dims-1];
 * on failure writes the reason, naming option, to error.
 */
bool cli_parse_dims(const char *option, const char *text, unsigned *dims,
                    uint32_t size[CONFIG_MAX_DIMS], char *error, size_t capacity);

/*
 * Makes stdout and stderr write whole lines only: both line-buffered, each
 * with room for any line a tool prints, so that with both sent to one file
 * (`tori-emu --json > run.log 2>&1`) a JSON line on stdout and a human line
 * on stderr never cut into each other (a fully buffered stdout used to be
 * written out in blocks that ended mid-line).  Call first in main.  A
 * tool that leaves a line open on purpose (a progress line on a terminal)
 * flushes it itself.
 */
void cli_whole_lines(void);

#endif /* TOOLS_CLI_H */
