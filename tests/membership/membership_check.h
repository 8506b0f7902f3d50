/* Assertions for the membership and simulator tests: file:line, counted. */
#ifndef TESTS_MEMBERSHIP_MEMBERSHIP_CHECK_H
#define TESTS_MEMBERSHIP_MEMBERSHIP_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(condition)                                                               \
    do {                                                                               \
        if (!(condition)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

/* Like CHECK, with a formatted explanation. */
#define CHECKF(condition, ...)                                                         \
    do {                                                                               \
        if (!(condition)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #condition); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, "\n");                                                     \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

static inline int check_report(const char *name)
{
    if (check_failures == 0) {
        printf("%s: all checks passed\n", name);
    } else {
        printf("%s: %d checks failed\n", name, check_failures);
    }
    return check_failures == 0 ? 0 : 1;
}

/* Deterministic test randomness (splitmix64). */
static inline unsigned long long test_random(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
