#include "kernel/stack_report.h"

#include <stdbool.h>
#include <stddef.h>

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"

static void command_stack(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)arguments;
    (void)now_ns;
    size_t high_water = 0, size = 0;
    const char *why = NULL;
    if (!board_stack_usage(&high_water, &size, &why)) {
        const char *parts[] = {"stack: not measured on the ", board_name(), " board (",
                               why != NULL ? why : "no measurement", ")"};
        console_command_reply_error_parts(parts, 5);
        return;
    }
    stack_report_emit("request");
}

void stack_report_init(void)
{
    console_command_register("stack", command_stack, NULL, CONSOLE_NO_ARGUMENTS);
}

void stack_report_emit(const char *reason)
{
    size_t high_water = 0, size = 0;
    const char *why = NULL;
    if (!board_stack_usage(&high_water, &size, &why))
        return; /* nothing measured, nothing to report at halt */
    event_begin("stack");
    event_add_u64("high_water", high_water);
    event_add_u64("size", size);
    event_add_str("reason", reason);
    event_end();
}
