#include "board/qemu-virt/stack.h"

#include "board/board.h"

#include <stdint.h>

#include "config/tori_config.h"

/*
 * The storage of the one stack.  The linker script places the .stack section
 * (NOLOAD, after .bss) and brackets it with __stack_bottom/__stack_top, which
 * start.S paints and loads into SP.  Nothing refers to this array by name.
 */
__attribute__((section(".stack"), used, aligned(16)))
static uint32_t node_stack[CONFIG_STACK_SIZE / sizeof(uint32_t)];

bool board_stack_usage(size_t *high_water, size_t *size, const char **why)
{
    /* The stack grows down: the lowest overwritten word marks the depth. */
    /* volatile: the compiler never sees the stores, which are the CPU's. */
    const volatile uint32_t *words = node_stack;
    size_t count = sizeof node_stack / sizeof node_stack[0];
    size_t untouched = 0;
    while (untouched < count && words[untouched] == BOARD_STACK_PAINT)
        untouched++;
    *high_water = (count - untouched) * sizeof(uint32_t);
    *size = sizeof node_stack;
    *why = NULL;
    return true;
}
