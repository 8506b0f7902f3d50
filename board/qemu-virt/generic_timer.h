/*
 * The ARM generic timer: the virtual counter (CNTVCT) is the node's
 * monotonic clock, and the virtual timer (CNTV_CVAL/CNTV_CTL, GIC PPI 27)
 * raises the interrupt that ends a WFI at the next deadline.  The counter
 * frequency is read from CNTFRQ (62.5 MHz on QEMU), never assumed.
 */
#ifndef BOARD_QEMU_VIRT_GENERIC_TIMER_H
#define BOARD_QEMU_VIRT_GENERIC_TIMER_H

#include <stdbool.h>
#include <stdint.h>

/* GIC interrupt ID of the virtual timer on virt (PPI 11). */
#define GENERIC_TIMER_VIRTUAL_IRQ 27

/* Reads CNTFRQ and disarms the virtual timer; false if CNTFRQ is 0. */
bool generic_timer_init(void);

/* Nanoseconds since the counter started (QEMU: since the machine started). */
uint64_t generic_timer_now_ns(void);

/* Counter ticks <-> nanoseconds, without 64-bit overflow; to ticks rounds
 * up so that a timer never fires before its deadline. */
uint64_t generic_timer_ticks_to_ns(uint64_t ticks);
uint64_t generic_timer_ns_to_ticks(uint64_t ns);

/* Arms the virtual timer to assert its interrupt at deadline_ns. */
void generic_timer_arm_at(uint64_t deadline_ns);

/* Disables the virtual timer, dropping its interrupt line. */
void generic_timer_disarm(void);

/* Armed, and its deadline reached: its interrupt line is up. */
bool generic_timer_expired(void);

#endif /* BOARD_QEMU_VIRT_GENERIC_TIMER_H */
