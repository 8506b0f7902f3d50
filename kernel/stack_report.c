#include "kernel/stack_report.h"

#include <stddef.h>
#include <stdint.h>

#ifdef TORI_BOARD_PAINTED_STACK
#include "board/qemu-virt/stack.h"
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
    console_command_register("stack", command_stack, NULL);
}

void stack_report_emit(const char *reason)
{
    event_begin("stack");
    event_add_u64("high_water", board_stack_high_water());
    event_add_u64("size", board_stack_size());
    event_add_str("reason", reason);
    event_end();
}
#else
/* The host's stack belongs to the operating system: nothing to report. */
void stack_report_init(void)
{
}

void stack_report_emit(const char *reason)
{
    (void)reason;
}
#endif
