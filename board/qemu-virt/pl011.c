#include "board/qemu-virt/pl011.h"

#include <stdint.h>

#include "board/qemu-virt/memory_map.h"
#include "board/qemu-virt/mmio.h"

/* Registers (PL011 TRM, 3.2). */
#define UART_DR (QEMU_VIRT_UART_BASE + 0x000)
#define UART_FR (QEMU_VIRT_UART_BASE + 0x018)
#define UART_IBRD (QEMU_VIRT_UART_BASE + 0x024)
#define UART_FBRD (QEMU_VIRT_UART_BASE + 0x028)
#define UART_LCR_H (QEMU_VIRT_UART_BASE + 0x02c)
#define UART_CR (QEMU_VIRT_UART_BASE + 0x030)
#define UART_IMSC (QEMU_VIRT_UART_BASE + 0x038)
#define UART_ICR (QEMU_VIRT_UART_BASE + 0x044)

#define FR_BUSY (1u << 3)
#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)
#define DR_DATA 0xffu
#define INT_RX (1u << 4)     /* receive */
#define INT_RT (1u << 6)     /* receive timeout */
#define INT_ALL 0x7ffu
#define LCR_H_FEN (1u << 4)
#define LCR_H_WLEN_8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE (1u << 8)
#define CR_RXE (1u << 9)

/* virt's UART clock is 24 MHz: 24e6 / (16 * 115200) = 13 + 1/64. */
#define BAUD_DIVISOR_INTEGER 13
#define BAUD_DIVISOR_FRACTION 1

void pl011_init(void)
{
    mmio_write32(UART_CR, 0);
    while (mmio_read32(UART_FR) & FR_BUSY)
        ;
    mmio_write32(UART_IMSC, 0);
    mmio_write32(UART_ICR, INT_ALL);
    mmio_write32(UART_IBRD, BAUD_DIVISOR_INTEGER);
    mmio_write32(UART_FBRD, BAUD_DIVISOR_FRACTION);
    mmio_write32(UART_LCR_H, LCR_H_WLEN_8 | LCR_H_FEN);
    mmio_write32(UART_CR, CR_UARTEN | CR_TXE | CR_RXE);
    /* Input wakes the idle node; the line drops when the FIFO is empty. */
    mmio_write32(UART_IMSC, INT_RX | INT_RT);
}

void pl011_write(const char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        while (mmio_read32(UART_FR) & FR_TXFF)
            ;
        mmio_write32(UART_DR, (uint8_t)bytes[i]);
    }
}

size_t pl011_read(char *buffer, size_t capacity)
{
    size_t count = 0;
    while (count < capacity && (mmio_read32(UART_FR) & FR_RXFE) == 0)
        buffer[count++] = (char)(mmio_read32(UART_DR) & DR_DATA);
    /* Break/framing/parity flags in DR bits 8..11 are not reported: the
     * console is a control channel, a damaged line is rejected as a command. */
    return count;
}
