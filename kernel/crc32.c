#include "kernel/crc32.h"

/*
 * Table-driven, one byte per step: every frame is checksummed at every hop,
 * and the bitwise form cost ~9 ns a byte.  The table costs 1 KiB of .rodata.
 */
#define CRC32_ENTRY(n) crc32_byte(n)
#define CRC32_STEP(c) (((c) >> 1) ^ (0xEDB88320u & (0u - ((c) & 1u))))
#define crc32_byte(n)                                                         \
    CRC32_STEP(CRC32_STEP(CRC32_STEP(CRC32_STEP(                              \
        CRC32_STEP(CRC32_STEP(CRC32_STEP(CRC32_STEP((uint32_t)(n)))))))))
#define CRC32_ROW(base)                                                       \
    CRC32_ENTRY(base + 0), CRC32_ENTRY(base + 1), CRC32_ENTRY(base + 2),      \
    CRC32_ENTRY(base + 3), CRC32_ENTRY(base + 4), CRC32_ENTRY(base + 5),      \
    CRC32_ENTRY(base + 6), CRC32_ENTRY(base + 7)
#define CRC32_BLOCK(base)                                                     \
    CRC32_ROW(base + 0), CRC32_ROW(base + 8), CRC32_ROW(base + 16),           \
    CRC32_ROW(base + 24), CRC32_ROW(base + 32), CRC32_ROW(base + 40),         \
    CRC32_ROW(base + 48), CRC32_ROW(base + 56)

static const uint32_t crc32_table[256] = {
    CRC32_BLOCK(0), CRC32_BLOCK(64), CRC32_BLOCK(128), CRC32_BLOCK(192),
};

uint32_t crc32_update(uint32_t crc, const void *data, size_t length)
{
    const uint8_t *bytes = data;
    crc = ~crc;
    for (size_t i = 0; i < length; i++)
        crc = (crc >> 8) ^ crc32_table[(crc ^ bytes[i]) & 0xFFu];
    return ~crc;
}
