/*
 * Command-line value parsing shared by the host tools (tori-personality,
 * tori-emu).  Strict: a value is accepted whole or refused, never partly
 * read, so that every bad option can be reported in one clear line.
 */
#ifndef QEMU_CLI_H
#define QEMU_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest option value echoed back in an error message. */
#define CLI_ECHO_MAX 40

/* Decimal digits only (no sign, no spaces), min <= value <= max. */
bool cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A duration: an integer with a unit, "250ms", "5s", "2m", or a bare integer
 * of seconds; from 1 ms up to 7 days.  Fills *out_ns.
 */
bool cli_parse_duration_ns(const char *text, uint64_t *out_ns);

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

#endif /* QEMU_CLI_H */
