/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit MAC, short
 * and fast on short inputs.  Tags every torus frame with the job key
 * (net/torus/frame.h).  Incremental, so a frame's tag field can be hashed
 * as zeros without a copy.  Pure: no I/O, no globals, no allocation.
 */
#ifndef LIB_SIPHASH_H
#define LIB_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_BYTES 16u

struct siphash_state {
    uint64_t v[4];
    uint64_t total;   /* bytes taken so far (the length byte wants mod 256) */
    uint64_t pending; /* up to 7 bytes not yet a full word, little-endian */
};

void siphash_init(struct siphash_state *state, const uint8_t key[SIPHASH_KEY_BYTES]);
void siphash_update(struct siphash_state *state, const void *data, size_t length);
uint64_t siphash_final(const struct siphash_state *state);

/* One call: the tag of data[0..length) under key. */
uint64_t siphash24(const uint8_t key[SIPHASH_KEY_BYTES], const void *data, size_t length);

#endif /* LIB_SIPHASH_H */
