#include "board/qemu-virt/board_irq.h"

#include <stdint.h>

#include "board/qemu-virt/memory_map.h"
#include "board/qemu-virt/mmio.h"

/* Distributor registers (GICv2 architecture specification, 4.1.2). */
#define GICD_CTLR (QEMU_VIRT_GICD_BASE + 0x000)
#define GICD_TYPER (QEMU_VIRT_GICD_BASE + 0x004)
#define GICD_ISENABLER(n) (QEMU_VIRT_GICD_BASE + 0x100 + 4 * (n))
#define GICD_ICENABLER(n) (QEMU_VIRT_GICD_BASE + 0x180 + 4 * (n))
#define GICD_ICPENDR(n) (QEMU_VIRT_GICD_BASE + 0x280 + 4 * (n))
#define GICD_ICACTIVER(n) (QEMU_VIRT_GICD_BASE + 0x380 + 4 * (n))
#define GICD_IPRIORITYR(id) (QEMU_VIRT_GICD_BASE + 0x400 + (id)) /* bytes */
#define GICD_ITARGETSR(id) (QEMU_VIRT_GICD_BASE + 0x800 + (id))  /* bytes */

/* CPU interface registers (4.1.3). */
#define GICC_CTLR (QEMU_VIRT_GICC_BASE + 0x000)
#define GICC_PMR (QEMU_VIRT_GICC_BASE + 0x004)
#define GICC_BPR (QEMU_VIRT_GICC_BASE + 0x008)
#define GICC_IAR (QEMU_VIRT_GICC_BASE + 0x00c)
#define GICC_EOIR (QEMU_VIRT_GICC_BASE + 0x010)

#define GIC_ENABLE 1u
#define GIC_FIRST_PPI 16
#define GIC_FIRST_SPI 32
#define GIC_IAR_ID_MASK 0x3ffu
/* Interrupts signal when their priority is numerically below the mask. */
#define GIC_PRIORITY_MASK 0xf0u
#define GIC_WAKE_PRIORITY 0xa0u
#define GIC_TARGET_CPU0 0x01u

/* More than a wake can have pending at once: bounds the acknowledge loop. */
#define ACKNOWLEDGE_LIMIT 64

static unsigned implemented_ids; /* from GICD_TYPER.ITLinesNumber */

void board_irq_init(void)
{
    mmio_write32(GICD_CTLR, 0);
    mmio_write32(GICC_CTLR, 0);
    implemented_ids = 32 * ((mmio_read32(GICD_TYPER) & 0x1fu) + 1);
    if (implemented_ids > BOARD_IRQ_MAX_ID + 1)
        implemented_ids = BOARD_IRQ_MAX_ID + 1;
    for (unsigned word = 0; word < implemented_ids / 32; word++) {
        mmio_write32(GICD_ICENABLER(word), 0xffffffffu);
        mmio_write32(GICD_ICPENDR(word), 0xffffffffu);
        mmio_write32(GICD_ICACTIVER(word), 0xffffffffu);
    }
    mmio_write32(GICC_PMR, GIC_PRIORITY_MASK);
    mmio_write32(GICC_BPR, 0);
    mmio_write32(GICD_CTLR, GIC_ENABLE);
    mmio_write32(GICC_CTLR, GIC_ENABLE);
}

bool board_irq_enable(unsigned id)
{
    if (id < GIC_FIRST_PPI || id >= implemented_ids)
        return false;
    mmio_write8(GICD_IPRIORITYR(id), GIC_WAKE_PRIORITY);
    if (id >= GIC_FIRST_SPI)
        mmio_write8(GICD_ITARGETSR(id), GIC_TARGET_CPU0); /* PPIs: fixed */
    mmio_write32(GICD_ISENABLER(id / 32), 1u << (id % 32));
    return true;
}

unsigned board_irq_acknowledge_pending(void)
{
    /* A still-asserted level source is pending again right after its end:
     * each ID is taken once per wake, its driver deals with the rest. */
    uint32_t seen[(BOARD_IRQ_MAX_ID + 32) / 32] = {0};
    unsigned acknowledged = 0;
    while (acknowledged < ACKNOWLEDGE_LIMIT) {
        uint32_t iar = mmio_read32(GICC_IAR);
        uint32_t id = iar & GIC_IAR_ID_MASK;
        if (id > BOARD_IRQ_MAX_ID) /* 1023: nothing (more) pending */
            break;
        mmio_write32(GICC_EOIR, iar);
        acknowledged++;
        uint32_t bit = 1u << (id % 32);
        if (seen[id / 32] & bit)
            break;
        seen[id / 32] |= bit;
    }
    return acknowledged;
}

void board_irq_shutdown(void)
{
    mmio_write32(GICC_CTLR, 0);
    mmio_write32(GICD_CTLR, 0);
}
