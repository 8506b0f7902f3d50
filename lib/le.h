/*
 * Little-endian loads and stores of fixed-layout blocks and frames, byte by
 * byte (no alignment needed, the same bytes on ARM and x86).
 */
#ifndef LIB_LE_H
#define LIB_LE_H

#include <stdint.h>

static inline uint16_t le_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t le_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t le_get_u64(const uint8_t *p)
{
    return (uint64_t)le_get_u32(p) | ((uint64_t)le_get_u32(p + 4) << 32);
}

static inline void le_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void le_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le_put_u64(uint8_t *p, uint64_t v)
{
    le_put_u32(p, (uint32_t)v);
    le_put_u32(p + 4, (uint32_t)(v >> 32));
}

#endif /* LIB_LE_H */
