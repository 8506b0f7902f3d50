/*
 * Assertions for every C unit test: each failed check prints file:line, the
 * expression and (for the _EQ and _CONTAINS forms) the values, and is
 * counted; check_report() turns the count into the exit status.  A test goes
 * on after a failed check so that one run shows every broken case.
 *
 * Also the seeded generator of the tools (tools/splitmix.h), so every randomized test draws the same
 * inputs on every run.
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/splitmix.h"

static int check_failures;

#define CHECK(condition)                                                      \
    do {                                                                      \
        if (!(condition)) {                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #condition);                                              \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

/* Like CHECK, with a printf-style explanation (say which values were wrong). */
#define CHECKF(condition, ...)                                                \
    do {                                                                      \
        if (!(condition)) {                                                   \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,  \
                    #condition);                                              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

/* Integer equality; both sides are compared and printed as uint64_t. */
#define CHECK_EQ(actual, expected)                                            \
    do {                                                                      \
        uint64_t check_a_ = (uint64_t)(actual);                               \
        uint64_t check_e_ = (uint64_t)(expected);                             \
        if (check_a_ != check_e_) {                                           \
            fprintf(stderr, "%s:%d: %s is %" PRIu64 ", expected %s = %" PRIu64 "\n", \
                    __FILE__, __LINE__, #actual, check_a_, #expected,         \
                    check_e_);                                                \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

/* `part` must occur in `text`; prints the whole text when it does not. */
#define CHECK_CONTAINS(text, part)                                            \
    do {                                                                      \
        if (strstr((text), (part)) == NULL) {                                 \
            fprintf(stderr, "%s:%d: '%s' not found in:\n%s\n", __FILE__,      \
                    __LINE__, (part), (text));                                \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

/* Stops a test early when failures pile up (a loop gone wrong). */
#define CHECK_BAIL_IF_MANY()                                                  \
    do {                                                                      \
        if (check_failures > 50) {                                            \
            fprintf(stderr, "too many failures, stopping\n");                 \
            return check_report(__FILE__);                                    \
        }                                                                     \
    } while (0)

/* Prints the verdict; returns the exit status for main (0 = all passed). */
static inline int check_report(const char *name)
{
    if (check_failures == 0)
        printf("%s: all checks passed\n", name);
    else
        printf("%s: %d checks failed\n", name, check_failures);
    return check_failures == 0 ? 0 : 1;
}

/* One step of the tools' generator (tools/splitmix.h): advances *state. */
static inline unsigned long long test_random(unsigned long long *state)
{
    uint64_t s = *state;
    uint64_t value = splitmix64_next(&s);
    *state = s;
    return value;
}

/* The same generator behind a struct, for tests that pass it around. */
struct check_rng {
    unsigned long long state;
};

static inline void check_rng_seed(struct check_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

static inline uint64_t check_rng_next(struct check_rng *rng)
{
    return test_random(&rng->state);
}

/* Uniform in 0..bound-1 (bound > 0; the tiny modulo bias is irrelevant). */
static inline uint32_t check_rng_below(struct check_rng *rng, uint32_t bound)
{
    return (uint32_t)(check_rng_next(rng) % bound);
}

/* True with probability percent / 100. */
static inline int check_rng_percent(struct check_rng *rng, unsigned percent)
{
    return check_rng_below(rng, 100) < percent;
}

#endif /* TESTS_CHECK_H */
