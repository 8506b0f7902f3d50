/*
 * Interrupt routing on qemu-virt (GICv2) for waking WFI, not for handlers.
 *
 * tori has no interrupt handlers: IRQs stay masked in the CPSR forever.  A
 * WFI still ends when the GIC signals an enabled, pending interrupt to the
 * CPU, masked or not.  So the board enables exactly the interrupts that
 * should end an idle (the virtual timer, and each virtio slot its driver
 * asks for), and after every wake acknowledges and ends what is pending so
 * that the next WFI sleeps again.  Nothing is dispatched: the poll loop
 * simply runs once more and every poller looks at its device.
 */
#ifndef BOARD_QEMU_VIRT_BOARD_IRQ_H
#define BOARD_QEMU_VIRT_BOARD_IRQ_H

#include <stdbool.h>

/* Highest GIC interrupt ID that can be a real interrupt (1020+ are special). */
#define BOARD_IRQ_MAX_ID 1019

/* Resets the distributor and CPU interface: everything disabled, then both
 * enabled with a priority mask that lets enabled interrupts through. */
void board_irq_init(void);

/*
 * Lets interrupt `id` end a WFI: 16..31 are this CPU's PPIs (27 is the
 * virtual timer), 32 and up are SPIs (virtio-mmio slot N is 48 + N, level
 * triggered, routed to CPU 0).  Call during init.  Returns false when the
 * GIC does not implement that ID or it is a software-generated one (< 16).
 */
bool board_irq_enable(unsigned id);

/*
 * After a wake: acknowledges (GICC_IAR) and ends (GICC_EOIR) each pending
 * interrupt once.  A level-triggered source whose line is still high becomes
 * pending again after its end; its driver must clear the device's status
 * (virtio: InterruptACK) when it polls, else the next WFI returns at once.
 * Returns how many interrupts were acknowledged.
 */
unsigned board_irq_acknowledge_pending(void);

/* Disables the distributor and CPU interface, so that nothing wakes a WFI
 * any more (used when the node halts). */
void board_irq_shutdown(void);

#endif /* BOARD_QEMU_VIRT_BOARD_IRQ_H */
