/*
 * The MMU of the qemu-virt node: one flat identity map of 1 MiB sections,
 * built once by start-up code before any C code but this runs.
 *
 * Why at all: with the MMU off every data access is Strongly-ordered, where
 * unaligned accesses fault on newer QEMU versions and on hardware, and gcc
 * emits unaligned accesses for packed wire formats.  The map makes RAM Normal
 * memory (non-cacheable: caches stay off, so virtio DMA needs no cache
 * maintenance) and the device window Device memory (never executable).  The
 * first 128 MiB (unused flash, so also NULL) and everything past RAM are
 * left unmapped: a stray pointer there ends in a data-abort report.
 */
#ifndef BOARD_QEMU_VIRT_MMU_H
#define BOARD_QEMU_VIRT_MMU_H

/* Builds the translation table and turns the MMU on; called from start.S. */
void mmu_enable(void);

#endif /* BOARD_QEMU_VIRT_MMU_H */
