/*
 * Assertions for the net unit tests: report file:line (and both values for
 * the _EQ forms), count failures, and a seeded PRNG so every randomized
 * test is the same on every run.
 */
#ifndef TESTS_NET_NET_CHECK_H
#define TESTS_NET_NET_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(condition)                                                      \
    do {                                                                      \
        if (!(condition)) {                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #condition);                                              \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

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

#define CHECK_CONTAINS(text, part)                                            \
    do {                                                                      \
        if (strstr((text), (part)) == NULL) {                                 \
            fprintf(stderr, "%s:%d: '%s' not found in '%s'\n", __FILE__,      \
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

static inline int check_report(const char *name)
{
    if (check_failures == 0)
        printf("%s: all checks passed\n", name);
    else
        printf("%s: %d checks failed\n", name, check_failures);
    return check_failures == 0 ? 0 : 1;
}

/* xorshift64*: small, fast, deterministic for a given seed. */
struct check_rng {
    uint64_t state;
};

static inline void check_rng_seed(struct check_rng *rng, uint64_t seed)
{
    rng->state = seed != 0 ? seed : 0x9E3779B97F4A7C15ull;
}

static inline uint64_t check_rng_next(struct check_rng *rng)
{
    uint64_t x = rng->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in 0..bound-1 (bound > 0; the tiny modulo bias is irrelevant). */
static inline uint32_t check_rng_below(struct check_rng *rng, uint32_t bound)
{
    return (uint32_t)((check_rng_next(rng) >> 16) % bound);
}

/* True with probability percent / 100. */
static inline int check_rng_percent(struct check_rng *rng, unsigned percent)
{
    return check_rng_below(rng, 100) < percent;
}

#endif /* TESTS_NET_NET_CHECK_H */
