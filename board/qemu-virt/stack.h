/*
 * The node's one stack (CONFIG_STACK_SIZE bytes, between the linker symbols
 * __stack_bottom and __stack_top).  Start-up code paints it with
 * BOARD_STACK_PAINT before the first call, so the deepest use so far is
 * where the paint stops being intact: a high-water mark for the stack-bound
 * evidence (board_stack_usage, board/board.h).  (A fault resets the stack
 * pointer to the top and overwrites the stack's upper end; the node halts
 * afterwards.)
 */
#ifndef BOARD_QEMU_VIRT_STACK_H
#define BOARD_QEMU_VIRT_STACK_H

/* Shared with start.S, hence a plain #define. */
#define BOARD_STACK_PAINT 0x5354414b /* "STAK" */

#endif /* BOARD_QEMU_VIRT_STACK_H */
