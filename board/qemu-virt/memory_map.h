/*
 * The physical memory map of a tori node on QEMU's `virt` machine (QEMU 7.2,
 * 32-bit Arm, GICv2), shared by the board, the linker script (which is run
 * through the C preprocessor) and the launcher.  Plain integer #defines only:
 * no casts, no suffixes, no C, so that GNU ld can read them too.
 *
 * RAM (from QEMU_VIRT_RAM_BASE, at least QEMU_VIRT_RAM_SIZE bytes):
 *
 *   0x40000000  1 MiB   QEMU's device tree.  For an ELF -kernel that starts
 *                       above RAM base, QEMU 7.2 writes its 1 MiB DTB at the
 *                       base of RAM (limited to the gap below the image); it
 *                       is re-written on system_reset.  tori never reads it.
 *   0x40100000  4 KiB   The personality page: the loader writes the 64-byte
 *                       personality here and the 128-byte job block at
 *                       0x40100400 (-device loader,...,force-raw=on), again
 *                       on every system_reset.  Nothing in the image lives
 *                       here, so neither the ELF load nor start-up code
 *                       (.data copy, .bss zeroing, stack paint) touches it.
 *   0x40101000  60 KiB  unused.
 *   0x40110000  256 KiB The checkpoint store (board_checkpoint_store): the
 *                       application's checkpoints and a buddy's copies.
 *                       Outside the image and the loader's blobs, so that
 *                       system_reset (which reloads only those) keeps it: a
 *                       reset node restores with no transfer.  A new QEMU
 *                       process starts with it zeroed.
 *   0x40150000  704 KiB The checkpoint mirror (board_checkpoint_mirror): a
 *                       standby spare's copies of the ranks it mirrors
 *                       (PROMOTE); outside the image like the store.
 *   0x40200000  rest    The node image: text, rodata, data, bss, the stack.
 *                       The linker script fails the build if it outgrows RAM.
 *
 * Devices (all below RAM, mapped as Device memory by the start-up MMU setup):
 *   0x08000000 GICv2 distributor, 0x08010000 GICv2 CPU interface,
 *   0x09000000 PL011 UART, 0x0a000000 virtio-mmio slots (0x200 bytes each).
 */
#ifndef BOARD_QEMU_VIRT_MEMORY_MAP_H
#define BOARD_QEMU_VIRT_MEMORY_MAP_H

#define QEMU_VIRT_RAM_BASE 0x40000000
/* QEMU's default for virt; the launcher and tests pass -m with this size. */
#define QEMU_VIRT_RAM_SIZE_MIB 128
#define QEMU_VIRT_RAM_SIZE (QEMU_VIRT_RAM_SIZE_MIB * 1024 * 1024)

/* What QEMU keeps for its DTB at the base of RAM (its size in QEMU 7.2). */
#define QEMU_VIRT_DTB_SIZE 0x00100000

/* Where the loader writes the personality block, and the page kept for it. */
#define QEMU_VIRT_PERSONALITY_ADDRESS 0x40100000
#define QEMU_VIRT_PERSONALITY_REGION_SIZE 0x400

/* Where the loader writes the job block (none: the region stays zero). */
#define QEMU_VIRT_JOB_ADDRESS 0x40100400
#define QEMU_VIRT_JOB_REGION_SIZE 0x400

/*
 * The boot record: a few words in the same page, past the personality's
 * room, that the board keeps across system_reset (QEMU re-applies ROM
 * blobs and the ELF but leaves the rest of RAM alone; a new QEMU process
 * starts with RAM zeroed).  It counts resets so that a rebooted node comes
 * back with a new incarnation, as a node with a persistent boot counter.
 */
#define QEMU_VIRT_BOOT_RECORD_ADDRESS 0x40100800

/* Where the loader writes the run's job key (16 bytes, BOARD_KEY_BYTES) for
 * a node without a job block, or with one (the same key); none: zero.  The
 * board reads it once and clears it; system_reset writes it again. */
#define QEMU_VIRT_KEY_ADDRESS 0x40100C00
#define QEMU_VIRT_KEY_REGION_SIZE 0x10

/* The checkpoint store's window (the build's CONFIG_CHECKPOINT_STORE_BYTES
 * of it are used; the board checks the size at compile time). */
#define QEMU_VIRT_CHECKPOINT_ADDRESS 0x40110000
#define QEMU_VIRT_CHECKPOINT_REGION_SIZE 0x00040000
/* The checkpoint mirror's window (CONFIG_CHECKPOINT_MIRROR_BYTES used). */
#define QEMU_VIRT_MIRROR_ADDRESS 0x40150000
#define QEMU_VIRT_MIRROR_REGION_SIZE 0x000B0000

/* Load and run address of node.elf / node.bin (one region, LMA = VMA). */
#define QEMU_VIRT_IMAGE_ADDRESS 0x40200000
#define QEMU_VIRT_IMAGE_MAX_SIZE \
    (QEMU_VIRT_RAM_BASE + QEMU_VIRT_RAM_SIZE - QEMU_VIRT_IMAGE_ADDRESS)

/* Memory-mapped devices. */
#define QEMU_VIRT_GICD_BASE 0x08000000
#define QEMU_VIRT_GICC_BASE 0x08010000
#define QEMU_VIRT_UART_BASE 0x09000000
/* GIC interrupt ID of the PL011 (SPI 1). */
#define QEMU_VIRT_UART_IRQ 33
#define QEMU_VIRT_VIRTIO_MMIO_BASE 0x0a000000
#define QEMU_VIRT_VIRTIO_MMIO_STRIDE 0x200
#define QEMU_VIRT_VIRTIO_MMIO_SLOTS 32
/* GIC interrupt ID of virtio-mmio slot N is this + N (SPI 16 + N). */
#define QEMU_VIRT_VIRTIO_MMIO_FIRST_IRQ 48

/* Device window the MMU maps as Device memory: GIC up to below RAM. */
#define QEMU_VIRT_DEVICE_BASE 0x08000000
#define QEMU_VIRT_DEVICE_END QEMU_VIRT_RAM_BASE

#endif /* BOARD_QEMU_VIRT_MEMORY_MAP_H */
