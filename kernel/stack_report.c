#include "kernel/stack_report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"

static void command_stack(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)arguments;
    (void)now_ns;
    stack_report_emit("request");
}

void stack_report_init(void)
{
    size_t high_water = 0;
    size_t size = 0;
    /* A board that cannot measure its stack gets no command. */
    if (board_stack_high_water(&high_water, &size))
        console_command_register("stack", command_stack, NULL);
}

void stack_report_emit(const char *reason)
{
    size_t high_water = 0;
    size_t size = 0;
    if (!board_stack_high_water(&high_water, &size))
        return;
    event_begin("stack");
    event_add_u64("high_water", high_water);
    event_add_u64("size", size);
    event_add_str("reason", reason);
    event_end();
}
