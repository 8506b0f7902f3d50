#include "lib/format.h"

unsigned format_u64(char *out, uint64_t value)
{
    char digits[20];
    unsigned n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (unsigned i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    return n;
}

unsigned format_hex(char *out, uint64_t value)
{
    static const char hex[] = "0123456789abcdef";
    char digits[16];
    unsigned n = 0;
    do {
        digits[n++] = hex[value & 0xF];
        value >>= 4;
    } while (value != 0);
    out[0] = '0';
    out[1] = 'x';
    for (unsigned i = 0; i < n; i++)
        out[2 + i] = digits[n - 1 - i];
    return n + 2;
}
