/*
 * The init heap: a static region (CONFIG_INIT_HEAP_SIZE) that newlib's
 * _sbrk draws from while the node initialises.  heap_seal() ends that: any
 * later growth request panics, naming the phase and the caller's address.
 * Kitten's boot allocator is the model.
 */
#ifndef KERNEL_HEAP_H
#define KERNEL_HEAP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* Grows the heap by increment bytes; returns the old break or panics. */
void *heap_grow(ptrdiff_t increment, uintptr_t caller);
void heap_seal(void);
bool heap_is_sealed(void);
size_t heap_used(void);

#endif /* KERNEL_HEAP_H */
