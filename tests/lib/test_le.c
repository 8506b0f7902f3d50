/* lib/le.h: byte order on the wire is little-endian whatever the host's,
 * at any alignment, and every store reads back. */
#include <stdint.h>
#include <string.h>

#include "lib/le.h"
#include "tests/check.h"

int main(void)
{
    uint8_t buffer[16];
    memset(buffer, 0xEE, sizeof buffer);
    /* Odd offsets: no alignment assumed. */
    le_put_u16(buffer + 1, 0x1234u);
    CHECK_EQ(buffer[1], 0x34);
    CHECK_EQ(buffer[2], 0x12);
    CHECK_EQ(buffer[0], 0xEE);
    CHECK_EQ(buffer[3], 0xEE);
    CHECK_EQ(le_get_u16(buffer + 1), 0x1234u);

    le_put_u32(buffer + 3, 0xA1B2C3D4u);
    static const uint8_t u32_bytes[] = {0xD4, 0xC3, 0xB2, 0xA1};
    CHECK(memcmp(buffer + 3, u32_bytes, 4) == 0);
    CHECK_EQ(le_get_u32(buffer + 3), 0xA1B2C3D4u);

    le_put_u64(buffer + 5, 0x0102030405060708ull);
    static const uint8_t u64_bytes[] = {8, 7, 6, 5, 4, 3, 2, 1};
    CHECK(memcmp(buffer + 5, u64_bytes, 8) == 0);
    CHECK_EQ(le_get_u64(buffer + 5), 0x0102030405060708ull);
    CHECK_EQ(buffer[13], 0xEE);

    /* The top bit survives every width (no sign extension). */
    le_put_u16(buffer, 0xFFFFu);
    CHECK_EQ(le_get_u16(buffer), 0xFFFFu);
    le_put_u32(buffer, 0x80000001u);
    CHECK_EQ(le_get_u32(buffer), 0x80000001u);
    le_put_u64(buffer, UINT64_MAX - 1);
    CHECK_EQ(le_get_u64(buffer), UINT64_MAX - 1);
    return check_report("lib.le");
}
