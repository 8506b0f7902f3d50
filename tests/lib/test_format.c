/* lib/format.c: decimal and hex digits at the edges of their range. */
#include <stdint.h>
#include <string.h>

#include "lib/format.h"
#include "tests/check.h"

static void check_u64(uint64_t value, const char *expected)
{
    char out[20];
    unsigned n = format_u64(out, value);
    CHECK_EQ(n, strlen(expected));
    CHECK(n == strlen(expected) && memcmp(out, expected, n) == 0);
}

static void check_hex(uint64_t value, const char *expected)
{
    char out[18];
    unsigned n = format_hex(out, value);
    CHECK_EQ(n, strlen(expected));
    CHECK(n == strlen(expected) && memcmp(out, expected, n) == 0);
}

int main(void)
{
    check_u64(0, "0");
    check_u64(7, "7");
    check_u64(1000000, "1000000");
    check_u64(UINT64_MAX, "18446744073709551615");
    check_hex(0, "0x0");
    check_hex(0xab, "0xab");
    check_hex(UINT64_MAX, "0xffffffffffffffff");
    return check_report("lib.format");
}
