/*
 * What the libFuzzer harnesses of tests/fuzz share: a reader that turns the
 * fuzzer's bytes into choices (never reading past them: an exhausted input
 * reads as zeros), and the one way a harness reports a broken property
 * (a line on stderr, then abort(), which libFuzzer records as a crash with
 * the input that caused it).  Test-only code: never in a node image.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* libFuzzer's entry point, defined by each harness. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_input {
    const uint8_t *data;
    size_t size;
    size_t at;
};

static inline void fuzz_input_init(struct fuzz_input *in, const uint8_t *data, size_t size)
{
    in->data = data;
    in->size = size;
    in->at = 0;
}

static inline bool fuzz_input_done(const struct fuzz_input *in)
{
    return in->at >= in->size;
}

static inline uint8_t fuzz_u8(struct fuzz_input *in)
{
    return in->at < in->size ? in->data[in->at++] : 0;
}

static inline uint16_t fuzz_u16(struct fuzz_input *in)
{
    uint16_t low = fuzz_u8(in);
    return (uint16_t)(low | (uint16_t)fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_input *in)
{
    uint32_t low = fuzz_u16(in);
    return low | (uint32_t)fuzz_u16(in) << 16;
}

/* Up to want bytes of the input, in place; *got says how many. */
static inline const uint8_t *fuzz_bytes(struct fuzz_input *in, size_t want, size_t *got)
{
    size_t left = in->size - (in->at < in->size ? in->at : in->size);
    *got = want < left ? want : left;
    const uint8_t *bytes = *got > 0 ? in->data + in->at : NULL;
    in->at += *got;
    return bytes;
}

#define FUZZ_CHECK(condition, ...)                                                          \
    do {                                                                                    \
        if (!(condition)) {                                                                 \
            fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #condition);           \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fputc('\n', stderr);                                                            \
            abort();                                                                        \
        }                                                                                   \
    } while (0)

#endif /* TESTS_FUZZ_FUZZ_H */
