/* Minimal assertions for unit tests: report file:line and count failures. */
#ifndef TESTS_KERNEL_CHECK_H
#define TESTS_KERNEL_CHECK_H

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

#define CHECK_CONTAINS(text, part)                                            \
    do {                                                                      \
        if (strstr((text), (part)) == NULL) {                                 \
            fprintf(stderr, "%s:%d: '%s' not found in:\n%s\n", __FILE__,      \
                    __LINE__, (part), (text));                                \
            check_failures++;                                                 \
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

#endif
