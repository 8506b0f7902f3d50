/* lib/crc32.c: the IEEE CRC-32 check value, and continuing a CRC in pieces. */
#include <stdint.h>
#include <string.h>

#include "lib/crc32.h"
#include "tests/check.h"

int main(void)
{
    static const char text[] = "123456789";
    size_t length = strlen(text);
    /* The standard check value of CRC-32/ISO-HDLC (Ethernet, zlib). */
    CHECK_EQ(crc32_update(0, text, length), 0xCBF43926u);
    CHECK_EQ(crc32_update(0, text, 0), 0);
    for (size_t split = 0; split <= length; split++)
        CHECK_EQ(crc32_update(crc32_update(0, text, split), text + split, length - split),
                 0xCBF43926u);
    return check_report("lib.crc32");
}
