/*
 * virtio-mmio transport on QEMU's virt machine: where the devices are, what
 * their registers are, and how a device's interrupt wakes the idle loop.
 * This is what a virtio driver (virtio-net for the torus links) builds on;
 * the driver itself lives elsewhere.
 *
 * Slots.  virt has QEMU_VIRT_VIRTIO_MMIO_SLOTS (32) transports; slot N is at
 * 0x0a000000 + N * 0x200 and raises GIC interrupt 48 + N (SPI 16 + N, level
 * triggered).  An empty slot reads magic "virt" with DeviceID 0.  QEMU fills
 * slots from the top (31 first) unless a device is given bus=virtio-mmio-bus.N.
 *
 * Versions.  QEMU 7.2 offers version 1 ("legacy") unless started with
 * `-global virtio-mmio.force-legacy=false`, which gives version 2 ("modern").
 * Registers marked [v1] or [v2] exist only in that version; the others are
 * common.  The main differences for a driver:
 *   - queue memory: v1 writes GuestPageSize once, then per queue QueueNum,
 *     QueueAlign and QueuePFN (the page number of one contiguous, page-aligned
 *     legacy vring); v2 writes QueueNum, the three 64-bit addresses
 *     (QueueDesc/QueueDriver/QueueDevice) and then QueueReady = 1.
 *   - features: v2 must accept VIRTIO_F_VERSION_1 (bit 32, selector 1) and
 *     set FEATURES_OK before DRIVER_OK; v1 has 32 feature bits, no FEATURES_OK.
 *   - virtio-net header per frame: 10 bytes in v1 (without MRG_RXBUF),
 *     12 bytes in v2.
 *
 * Interrupts.  tori has no interrupt handlers (see board_irq.h).  To let a
 * device end the node's WFI, call board_irq_enable(device.irq) during init.
 * The board acknowledges the GIC after each wake; the driver, when it polls,
 * must read InterruptStatus and write those bits to InterruptACK, which drops
 * the device's line (else the next WFI returns at once and the node spins).
 * Poll the used rings after the acknowledgement, so that nothing that
 * arrives in between is missed.
 *
 * Memory.  RAM is Normal non-cacheable memory (mmu.h), so rings and buffers
 * need no cache maintenance, only ordering: virtio_mmio_barrier() between
 * filling descriptors/rings and the avail index, and before QueueNotify.
 * Guest physical addresses equal the driver's pointers (identity map).
 */
#ifndef BOARD_QEMU_VIRT_VIRTIO_MMIO_H
#define BOARD_QEMU_VIRT_VIRTIO_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "board/qemu-virt/board_irq.h"
#include "board/qemu-virt/memory_map.h"
#include "board/qemu-virt/mmio.h"

/* Register offsets from a slot's base (virtio 1.1, 4.2.2 and 4.2.4). */
enum virtio_mmio_register {
    VIRTIO_MMIO_MAGIC_VALUE = 0x000,         /* "virt" = 0x74726976 */
    VIRTIO_MMIO_VERSION = 0x004,             /* 1 legacy, 2 modern */
    VIRTIO_MMIO_DEVICE_ID = 0x008,           /* 0: empty slot */
    VIRTIO_MMIO_VENDOR_ID = 0x00c,
    VIRTIO_MMIO_DEVICE_FEATURES = 0x010,     /* 32 bits chosen by ..._SEL */
    VIRTIO_MMIO_DEVICE_FEATURES_SEL = 0x014,
    VIRTIO_MMIO_DRIVER_FEATURES = 0x020,
    VIRTIO_MMIO_DRIVER_FEATURES_SEL = 0x024,
    VIRTIO_MMIO_GUEST_PAGE_SIZE = 0x028,     /* [v1] */
    VIRTIO_MMIO_QUEUE_SEL = 0x030,
    VIRTIO_MMIO_QUEUE_NUM_MAX = 0x034,       /* 0: queue does not exist */
    VIRTIO_MMIO_QUEUE_NUM = 0x038,
    VIRTIO_MMIO_QUEUE_ALIGN = 0x03c,         /* [v1] */
    VIRTIO_MMIO_QUEUE_PFN = 0x040,           /* [v1] vring address / page size */
    VIRTIO_MMIO_QUEUE_READY = 0x044,         /* [v2] */
    VIRTIO_MMIO_QUEUE_NOTIFY = 0x050,        /* write the queue index */
    VIRTIO_MMIO_INTERRUPT_STATUS = 0x060,
    VIRTIO_MMIO_INTERRUPT_ACK = 0x064,
    VIRTIO_MMIO_STATUS = 0x070,              /* write 0 to reset the device */
    VIRTIO_MMIO_QUEUE_DESC_LOW = 0x080,      /* [v2] descriptor table */
    VIRTIO_MMIO_QUEUE_DESC_HIGH = 0x084,     /* [v2] */
    VIRTIO_MMIO_QUEUE_DRIVER_LOW = 0x090,    /* [v2] available ring */
    VIRTIO_MMIO_QUEUE_DRIVER_HIGH = 0x094,   /* [v2] */
    VIRTIO_MMIO_QUEUE_DEVICE_LOW = 0x0a0,    /* [v2] used ring */
    VIRTIO_MMIO_QUEUE_DEVICE_HIGH = 0x0a4,   /* [v2] */
    VIRTIO_MMIO_CONFIG_GENERATION = 0x0fc,   /* [v2] */
    VIRTIO_MMIO_CONFIG = 0x100,              /* device-specific configuration */
};

#define VIRTIO_MMIO_MAGIC 0x74726976u
#define VIRTIO_MMIO_VERSION_LEGACY 1u
#define VIRTIO_MMIO_VERSION_MODERN 2u

/* Device IDs (virtio 1.1, 5). */
#define VIRTIO_DEVICE_ID_NET 1u

/* Device status bits (2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE 1u
#define VIRTIO_STATUS_DRIVER 2u
#define VIRTIO_STATUS_DRIVER_OK 4u
#define VIRTIO_STATUS_FEATURES_OK 8u
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 64u
#define VIRTIO_STATUS_FAILED 128u

/* InterruptStatus / InterruptACK bits (4.2.2). */
#define VIRTIO_INTERRUPT_USED_BUFFER 1u
#define VIRTIO_INTERRUPT_CONFIG_CHANGE 2u

/* Feature bit 32, i.e. bit 0 with DEVICE/DRIVER_FEATURES_SEL = 1 [v2]. */
#define VIRTIO_F_VERSION_1_BIT 32u

/* virtio-net configuration space: the MAC address, 6 bytes at CONFIG. */
#define VIRTIO_NET_CONFIG_MAC 0x000
#define VIRTIO_NET_F_MAC_BIT 5u
#define VIRTIO_NET_HEADER_SIZE_LEGACY 10u
#define VIRTIO_NET_HEADER_SIZE_MODERN 12u

/* Legacy queues are placed in pages of this size (GuestPageSize). */
#define VIRTIO_MMIO_LEGACY_PAGE_SIZE 4096u

/* One transport found by virtio_mmio_find(). */
struct virtio_mmio_device {
    unsigned slot;      /* 0..QEMU_VIRT_VIRTIO_MMIO_SLOTS-1 */
    uintptr_t base;     /* register block */
    unsigned irq;       /* GIC interrupt ID, for board_irq_enable() */
    uint32_t version;   /* VIRTIO_MMIO_VERSION_LEGACY or _MODERN */
    uint32_t device_id; /* VIRTIO_DEVICE_ID_* */
};

static inline uintptr_t virtio_mmio_slot_base(unsigned slot)
{
    return (uintptr_t)QEMU_VIRT_VIRTIO_MMIO_BASE +
           (uintptr_t)slot * QEMU_VIRT_VIRTIO_MMIO_STRIDE;
}

static inline unsigned virtio_mmio_slot_irq(unsigned slot)
{
    return QEMU_VIRT_VIRTIO_MMIO_FIRST_IRQ + slot;
}

/*
 * Finds the devices with the given device ID, lowest slot first, and fills
 * up to `capacity` of them into out.  Returns how many there are in all
 * (which may exceed capacity).  Slots with a bad magic or an unknown
 * version are skipped.
 */
unsigned virtio_mmio_find(uint32_t device_id, struct virtio_mmio_device *out,
                          unsigned capacity);

static inline uint32_t virtio_mmio_read(const struct virtio_mmio_device *device,
                                        enum virtio_mmio_register offset)
{
    return mmio_read32(device->base + (uintptr_t)offset);
}

static inline void virtio_mmio_write(const struct virtio_mmio_device *device,
                                     enum virtio_mmio_register offset,
                                     uint32_t value)
{
    mmio_write32(device->base + (uintptr_t)offset, value);
}

/* A byte of the device-specific configuration space (e.g. the MAC). */
static inline uint8_t virtio_mmio_read_config8(const struct virtio_mmio_device *device,
                                               unsigned offset)
{
    return mmio_read8(device->base + VIRTIO_MMIO_CONFIG + offset);
}

/* Orders memory writes (rings, buffers) before later ones and before the
 * next device register access. */
static inline void virtio_mmio_barrier(void)
{
    __asm__ volatile("dsb sy" : : : "memory");
}

#endif /* BOARD_QEMU_VIRT_VIRTIO_MMIO_H */
