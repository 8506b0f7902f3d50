#include "tests/kernel/test_board.h"

#include "kernel/console_output.h"

#include <string.h>

#include "board/board.h"

uint64_t test_board_clock_ns;
char test_board_console[16384];
static size_t console_length;
jmp_buf test_board_halt_jump;
int test_board_halt_code;

void test_board_reset(void)
{
    console_output_flush(); /* nothing of the step before is left behind */
    test_board_clock_ns = 0;
    console_length = 0;
    test_board_console[0] = '\0';
    test_board_halt_code = -1;
    test_board_stack_high_water = 0;
}

void board_init(void) {}
const char *board_name(void) { return "test"; }
uint64_t board_now_ns(void) { return test_board_clock_ns; }

void board_console_write(const char *bytes, size_t length)
{
    size_t room = sizeof test_board_console - 1 - console_length;
    if (length > room)
        length = room;
    memcpy(test_board_console + console_length, bytes, length);
    console_length += length;
    test_board_console[console_length] = '\0';
}

size_t board_console_read(char *buffer, size_t capacity)
{
    (void)buffer;
    (void)capacity;
    return 0;
}

const uint8_t *board_personality_block(size_t *length)
{
    *length = 0;
    return NULL;
}

const uint8_t *board_job_block(size_t *length)
{
    *length = 0;
    return NULL;
}

bool board_link_key(uint8_t key[BOARD_KEY_BYTES])
{
    (void)key;
    return false;
}

bool board_keyless_allowed(void)
{
    return true;
}

void board_idle_until(uint64_t deadline_ns)
{
    test_board_clock_ns = deadline_ns;
}

uint32_t board_reset_count(void)
{
    return 0;
}

uint8_t *board_checkpoint_store(size_t *bytes, bool *survives_reset)
{
    static uint8_t store[4096];
    *bytes = sizeof store;
    *survives_reset = false;
    return store;
}

uint8_t *board_checkpoint_mirror(size_t *bytes)
{
    static uint8_t mirror[3 * 1024];
    *bytes = sizeof mirror;
    return mirror;
}

size_t test_board_stack_high_water;

bool board_stack_usage(size_t *high_water, size_t *size, const char **why)
{
    *high_water = test_board_stack_high_water;
    *size = 4096;
    *why = test_board_stack_high_water == 0 ? "a test board measures nothing" : NULL;
    return test_board_stack_high_water != 0;
}

_Noreturn void board_halt(int code)
{
    test_board_halt_code = code;
    longjmp(test_board_halt_jump, 1);
}

const char *test_board_console_text(void)
{
    console_output_flush();
    return test_board_console;
}
