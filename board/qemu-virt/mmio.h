/*
 * 32-bit and 8-bit device register access for the qemu-virt board.  Device
 * memory is mapped as such by the MMU (mmu.h), so each access is one bus
 * access of exactly that width, in program order with other device accesses.
 */
#ifndef BOARD_QEMU_VIRT_MMIO_H
#define BOARD_QEMU_VIRT_MMIO_H

#include <stdint.h>

static inline uint32_t mmio_read32(uintptr_t address)
{
    return *(const volatile uint32_t *)address;
}

static inline void mmio_write32(uintptr_t address, uint32_t value)
{
    *(volatile uint32_t *)address = value;
}

static inline uint8_t mmio_read8(uintptr_t address)
{
    return *(const volatile uint8_t *)address;
}

static inline void mmio_write8(uintptr_t address, uint8_t value)
{
    *(volatile uint8_t *)address = value;
}

#endif /* BOARD_QEMU_VIRT_MMIO_H */
