/*
 * Console output, buffered and written when the node has nothing better to
 * do.  On QEMU's PL011 every byte is a trap into the emulator and a write to
 * the launcher's pipe: an 80-byte event line takes 100-900 us, several
 * times a torus hop.  Written inline it would sit on the critical path of
 * every view change; buffered, frames go out first and the line follows as
 * soon as the poll loop finds no work (its timestamp was taken when the
 * event happened).
 *
 * Nothing is lost: a write that does not fit first drains what is buffered,
 * in order.  Halting paths flush.
 */
#ifndef KERNEL_CONSOLE_OUTPUT_H
#define KERNEL_CONSOLE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* Appends bytes to the buffer (draining it first if they do not fit). */
void console_output_write(const char *bytes, size_t length);

/* Writes up to max_bytes of what is buffered to the board; returns how many. */
size_t console_output_drain(size_t max_bytes);

/* Writes everything buffered (before a halt, or for a test to read it). */
void console_output_flush(void);

bool console_output_pending(void);

#endif /* KERNEL_CONSOLE_OUTPUT_H */
