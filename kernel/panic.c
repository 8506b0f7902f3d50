#include "kernel/panic.h"

#include "board/board.h"
#include "kernel/console_output.h"
#include "kernel/event.h"

_Noreturn void kernel_panic_at(const char *reason, uintptr_t caller)
{
    event_begin("panic");
    if (caller != 0)
        event_add_hex("caller", caller);
    event_add_text("reason", reason);
    event_end();
    console_output_flush();
    board_halt(70); /* EX_SOFTWARE: distinguishable from a clean exit */
}

_Noreturn void kernel_panic(const char *reason)
{
    kernel_panic_at(reason, 0);
}
