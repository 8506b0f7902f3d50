/* lib/siphash.c: the 64 reference vectors of the SipHash paper (key 00..0f,
 * message 00 01 .. n-1 for n = 0..63), one call and in pieces. */
#include <stdint.h>

#include "lib/siphash.h"
#include "tests/check.h"

static const uint64_t expected[64] = {
    0x726fdb47dd0e0e31ull, /* 0 */
    0x74f839c593dc67fdull, /* 1 */
    0x0d6c8009d9a94f5aull, /* 2 */
    0x85676696d7fb7e2dull, /* 3 */
    0xcf2794e0277187b7ull, /* 4 */
    0x18765564cd99a68dull, /* 5 */
    0xcbc9466e58fee3ceull, /* 6 */
    0xab0200f58b01d137ull, /* 7 */
    0x93f5f5799a932462ull, /* 8 */
    0x9e0082df0ba9e4b0ull, /* 9 */
    0x7a5dbbc594ddb9f3ull, /* 10 */
    0xf4b32f46226bada7ull, /* 11 */
    0x751e8fbc860ee5fbull, /* 12 */
    0x14ea5627c0843d90ull, /* 13 */
    0xf723ca908e7af2eeull, /* 14 */
    0xa129ca6149be45e5ull, /* 15 */
    0x3f2acc7f57c29bdbull, /* 16 */
    0x699ae9f52cbe4794ull, /* 17 */
    0x4bc1b3f0968dd39cull, /* 18 */
    0xbb6dc91da77961bdull, /* 19 */
    0xbed65cf21aa2ee98ull, /* 20 */
    0xd0f2cbb02e3b67c7ull, /* 21 */
    0x93536795e3a33e88ull, /* 22 */
    0xa80c038ccd5ccec8ull, /* 23 */
    0xb8ad50c6f649af94ull, /* 24 */
    0xbce192de8a85b8eaull, /* 25 */
    0x17d835b85bbb15f3ull, /* 26 */
    0x2f2e6163076bcfadull, /* 27 */
    0xde4daaaca71dc9a5ull, /* 28 */
    0xa6a2506687956571ull, /* 29 */
    0xad87a3535c49ef28ull, /* 30 */
    0x32d892fad841c342ull, /* 31 */
    0x7127512f72f27cceull, /* 32 */
    0xa7f32346f95978e3ull, /* 33 */
    0x12e0b01abb051238ull, /* 34 */
    0x15e034d40fa197aeull, /* 35 */
    0x314dffbe0815a3b4ull, /* 36 */
    0x027990f029623981ull, /* 37 */
    0xcadcd4e59ef40c4dull, /* 38 */
    0x9abfd8766a33735cull, /* 39 */
    0x0e3ea96b5304a7d0ull, /* 40 */
    0xad0c42d6fc585992ull, /* 41 */
    0x187306c89bc215a9ull, /* 42 */
    0xd4a60abcf3792b95ull, /* 43 */
    0xf935451de4f21df2ull, /* 44 */
    0xa9538f0419755787ull, /* 45 */
    0xdb9acddff56ca510ull, /* 46 */
    0xd06c98cd5c0975ebull, /* 47 */
    0xe612a3cb9ecba951ull, /* 48 */
    0xc766e62cfcadaf96ull, /* 49 */
    0xee64435a9752fe72ull, /* 50 */
    0xa192d576b245165aull, /* 51 */
    0x0a8787bf8ecb74b2ull, /* 52 */
    0x81b3e73d20b49b6full, /* 53 */
    0x7fa8220ba3b2eceaull, /* 54 */
    0x245731c13ca42499ull, /* 55 */
    0xb78dbfaf3a8d83bdull, /* 56 */
    0xea1ad565322a1a0bull, /* 57 */
    0x60e61c23a3795013ull, /* 58 */
    0x6606d7e446282b93ull, /* 59 */
    0x6ca4ecb15c5f91e1ull, /* 60 */
    0x9f626da15c9625f3ull, /* 61 */
    0xe51b38608ef25f57ull, /* 62 */
    0x958a324ceb064572ull, /* 63 */
};

int main(void)
{
    uint8_t key[SIPHASH_KEY_BYTES];
    uint8_t message[64];
    for (unsigned i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)i;
    for (unsigned i = 0; i < sizeof message; i++)
        message[i] = (uint8_t)i;
    /* The paper's worked example (its appendix A): 15 bytes. */
    CHECK_EQ(siphash24(key, message, 15), 0xa129ca6149be45e5ull);
    for (unsigned n = 0; n < 64; n++) {
        CHECK_EQ(siphash24(key, message, n), expected[n]);
        /* Fed in two pieces at every split, then byte by byte. */
        for (unsigned split = 0; split <= n; split++) {
            struct siphash_state state;
            siphash_init(&state, key);
            siphash_update(&state, message, split);
            siphash_update(&state, message + split, n - split);
            CHECK_EQ(siphash_final(&state), expected[n]);
        }
        struct siphash_state state;
        siphash_init(&state, key);
        for (unsigned i = 0; i < n; i++)
            siphash_update(&state, message + i, 1);
        CHECK_EQ(siphash_final(&state), expected[n]);
    }
    /* Another key, another tag. */
    key[0] ^= 1;
    CHECK(siphash24(key, message, 15) != 0xa129ca6149be45e5ull);
    return check_report("lib.siphash");
}
