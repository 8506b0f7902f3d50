/*
 * Panic: the node cannot go on.  Prints an event line with the reason (and
 * the caller's address where one is known) and halts through the board.
 */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdint.h>

_Noreturn void kernel_panic(const char *reason);
_Noreturn void kernel_panic_at(const char *reason, uintptr_t caller);

#endif /* KERNEL_PANIC_H */
