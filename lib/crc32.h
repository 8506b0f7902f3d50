/*
 * CRC-32 (IEEE 802.3 polynomial, reflected), as used by Ethernet and zlib.
 * Guards the personality block and every torus frame.
 */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t length);

#endif /* LIB_CRC32_H */
