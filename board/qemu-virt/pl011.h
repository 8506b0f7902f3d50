/*
 * The PL011 UART at QEMU_VIRT_UART_BASE: the node's console, written and
 * read by polling (no buffer, never allocates).  Its receive interrupt is
 * raised only to end a WFI (GIC ID QEMU_VIRT_UART_IRQ, see board_irq.h);
 * it drops once the receive FIFO has been read empty.
 */
#ifndef BOARD_QEMU_VIRT_PL011_H
#define BOARD_QEMU_VIRT_PL011_H

#include <stddef.h>

/* 115200 8N1 with FIFOs, transmit and receive enabled, the receive
 * interrupt raised while received bytes wait. */
void pl011_init(void);

/* Writes the bytes as they are (no newline translation), waiting for room. */
void pl011_write(const char *bytes, size_t length);

/* Takes up to capacity received bytes without waiting; returns how many. */
size_t pl011_read(char *buffer, size_t capacity);

#endif /* BOARD_QEMU_VIRT_PL011_H */
