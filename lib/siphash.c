#include "lib/siphash.h"

#include "lib/le.h"

static uint64_t rotate_left(uint64_t x, unsigned bits)
{
    return (x << bits) | (x >> (64u - bits));
}

static void sip_round(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = rotate_left(v[1], 13);
    v[1] ^= v[0];
    v[0] = rotate_left(v[0], 32);
    v[2] += v[3];
    v[3] = rotate_left(v[3], 16);
    v[3] ^= v[2];
    v[0] += v[3];
    v[3] = rotate_left(v[3], 21);
    v[3] ^= v[0];
    v[2] += v[1];
    v[1] = rotate_left(v[1], 17);
    v[1] ^= v[2];
    v[2] = rotate_left(v[2], 32);
}

/* Two compression rounds per 8-byte word (the "2" of SipHash-2-4). */
static void compress(uint64_t v[4], uint64_t word)
{
    v[3] ^= word;
    sip_round(v);
    sip_round(v);
    v[0] ^= word;
}

void siphash_init(struct siphash_state *state, const uint8_t key[SIPHASH_KEY_BYTES])
{
    uint64_t k0 = le_get_u64(key);
    uint64_t k1 = le_get_u64(key + 8);
    /* "somepseudorandomlygeneratedbytes", the paper's initial constants. */
    state->v[0] = k0 ^ 0x736f6d6570736575ull;
    state->v[1] = k1 ^ 0x646f72616e646f6dull;
    state->v[2] = k0 ^ 0x6c7967656e657261ull;
    state->v[3] = k1 ^ 0x7465646279746573ull;
    state->total = 0;
    state->pending = 0;
}

void siphash_update(struct siphash_state *state, const void *data, size_t length)
{
    const uint8_t *bytes = data;
    size_t i = 0;
    /* Finish a partial word first, then whole words straight from data. */
    while (i < length && (state->total & 7u) != 0) {
        state->pending |= (uint64_t)bytes[i++] << (8u * (state->total & 7u));
        state->total++;
        if ((state->total & 7u) == 0) {
            compress(state->v, state->pending);
            state->pending = 0;
        }
    }
    for (; i + 8 <= length; i += 8) {
        compress(state->v, le_get_u64(bytes + i));
        state->total += 8;
    }
    for (; i < length; i++) {
        state->pending |= (uint64_t)bytes[i] << (8u * (state->total & 7u));
        state->total++;
    }
}

uint64_t siphash_final(const struct siphash_state *state)
{
    uint64_t v[4] = {state->v[0], state->v[1], state->v[2], state->v[3]};
    /* Last word: the leftover bytes, the total length mod 256 on top. */
    compress(v, state->pending | (state->total << 56));
    v[2] ^= 0xff;
    for (unsigned r = 0; r < 4; r++) /* the "4": finalization rounds */
        sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_BYTES], const void *data, size_t length)
{
    struct siphash_state state;
    siphash_init(&state, key);
    siphash_update(&state, data, length);
    return siphash_final(&state);
}
