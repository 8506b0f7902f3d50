/*
 * A board for kernel unit tests: a settable clock, a captured console and a
 * halt that jumps back into the test instead of leaving the process.
 */
#ifndef TESTS_KERNEL_TEST_BOARD_H
#define TESTS_KERNEL_TEST_BOARD_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

extern uint64_t test_board_clock_ns;
/* What board_stack_usage reports as the high-water mark; 0: not measured. */
extern size_t test_board_stack_high_water;
extern char test_board_console[16384];
extern jmp_buf test_board_halt_jump;
extern int test_board_halt_code;

void test_board_reset(void);

/* The captured console, after writing out what the kernel buffered. */
const char *test_board_console_text(void);

#endif
