#include "board/qemu-virt/virtio_mmio.h"

unsigned virtio_mmio_find(uint32_t device_id, struct virtio_mmio_device *out,
                          unsigned capacity)
{
    unsigned found = 0;
    for (unsigned slot = 0; slot < QEMU_VIRT_VIRTIO_MMIO_SLOTS; slot++) {
        uintptr_t base = virtio_mmio_slot_base(slot);
        if (mmio_read32(base + VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC)
            continue;
        uint32_t version = mmio_read32(base + VIRTIO_MMIO_VERSION);
        if (version != VIRTIO_MMIO_VERSION_LEGACY &&
            version != VIRTIO_MMIO_VERSION_MODERN)
            continue;
        if (mmio_read32(base + VIRTIO_MMIO_DEVICE_ID) != device_id)
            continue;
        if (found < capacity) {
            out[found].slot = slot;
            out[found].base = base;
            out[found].irq = virtio_mmio_slot_irq(slot);
            out[found].version = version;
            out[found].device_id = device_id;
        }
        found++;
    }
    return found;
}
