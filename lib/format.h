/*
 * Number formatting for console lines, without printf: newlib's printf
 * family may allocate, and nothing may allocate after init.
 */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H

#include <stdint.h>

/* Decimal digits of value into out (at least 20 bytes); no NUL; returns count. */
unsigned format_u64(char *out, uint64_t value);

/* "0x" and lowercase hex digits into out (at least 18 bytes); no NUL. */
unsigned format_hex(char *out, uint64_t value);

#endif /* LIB_FORMAT_H */
