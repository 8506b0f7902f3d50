#include "board/qemu-virt/mmu.h"

#include <stdint.h>

#include "board/qemu-virt/memory_map.h"

#define SECTION_SHIFT 20
#define SECTION_COUNT 4096 /* 4 GiB of 1 MiB sections */

/* Short-descriptor section entries (ARMv7-A ARM, B3.5.1), domain 0. */
#define SECTION_TYPE 0x2u
#define SECTION_B (1u << 2)
#define SECTION_XN (1u << 4)
#define SECTION_AP_FULL (3u << 10) /* read/write at PL1 and PL0 */
#define SECTION_TEX(x) ((uint32_t)(x) << 12)
#define SECTION_SHAREABLE (1u << 16)

/* Normal memory, outer and inner non-cacheable: TEX=001, C=0, B=0. */
#define SECTION_NORMAL_UNCACHED \
    (SECTION_TYPE | SECTION_AP_FULL | SECTION_TEX(1) | SECTION_SHAREABLE)
/* Shareable Device memory: TEX=000, C=0, B=1, never executable. */
#define SECTION_DEVICE (SECTION_TYPE | SECTION_AP_FULL | SECTION_B | SECTION_XN)

#define SCTLR_M (1u << 0)  /* MMU enable */
#define SCTLR_A (1u << 1)  /* alignment checking: off, see mmu.h */
#define SCTLR_TRE (1u << 28)
#define SCTLR_AFE (1u << 29)

/* In .bss: zeroed (all sections unmapped) by start-up code before use. */
static _Alignas(16384) uint32_t translation_table[SECTION_COUNT];

static uint32_t section_attributes(uint32_t address)
{
    if (address >= QEMU_VIRT_DEVICE_BASE && address < QEMU_VIRT_DEVICE_END)
        return SECTION_DEVICE;
    if (address >= QEMU_VIRT_RAM_BASE &&
        address - QEMU_VIRT_RAM_BASE < QEMU_VIRT_RAM_SIZE)
        return SECTION_NORMAL_UNCACHED;
    return 0; /* translation fault */
}

void mmu_enable(void)
{
    for (uint32_t i = 0; i < SECTION_COUNT; i++) {
        uint32_t address = i << SECTION_SHIFT;
        uint32_t attributes = section_attributes(address);
        translation_table[i] = attributes != 0 ? (address | attributes) : 0;
    }

    uint32_t sctlr;
    __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr));
    /* TEX remap and access-flag modes off: the TEX/C/B bits above apply. */
    sctlr &= ~(SCTLR_A | SCTLR_TRE | SCTLR_AFE);
    sctlr |= SCTLR_M;

    __asm__ volatile(
        "dsb\n\t"
        "mcr p15, 0, %[zero], c2, c0, 2\n\t" /* TTBCR: TTBR0 for all, short descriptors */
        "mcr p15, 0, %[table], c2, c0, 0\n\t" /* TTBR0: table, walks uncached */
        "mcr p15, 0, %[client], c3, c0, 0\n\t" /* DACR: domain 0 checks permissions */
        "mcr p15, 0, %[zero], c8, c7, 0\n\t" /* TLBIALL */
        "dsb\n\t"
        "isb\n\t"
        "mcr p15, 0, %[sctlr], c1, c0, 0\n\t"
        "isb"
        :
        : [zero] "r"(0u), [table] "r"((uint32_t)(uintptr_t)translation_table),
          [client] "r"(1u), [sctlr] "r"(sctlr)
        : "memory");
}
