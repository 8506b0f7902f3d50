#include "board/qemu-virt/stack.h"

#include <stdint.h>

#include "config/tori_config.h"

/*
 * The storage of the one stack.  The linker script places the .stack section
 * (NOLOAD, after .bss) and brackets it with __stack_bottom/__stack_top, which
 * start.S paints and loads into SP.  Nothing refers to this array by name.
 */
__attribute__((section(".stack"), used, aligned(16)))
static uint32_t node_stack[CONFIG_STACK_SIZE / sizeof(uint32_t)];

size_t board_stack_high_water(void)
{
    /* The stack grows down: the lowest overwritten word marks the depth. */
    /* volatile: the compiler never sees the stores, which are the CPU's. */
    const volatile uint32_t *words = node_stack;
    size_t count = sizeof node_stack / sizeof node_stack[0];
    size_t untouched = 0;
    while (untouched < count && words[untouched] == BOARD_STACK_PAINT)
        untouched++;
    return (count - untouched) * sizeof(uint32_t);
}

size_t board_stack_size(void)
{
    return sizeof node_stack;
}
