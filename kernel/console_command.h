/*
 * Console commands: the control channel from the launcher (or a person at
 * the serial port) into a running node.  Input is read without blocking by
 * a poller, assembled into lines, and dispatched by the first word through
 * a table filled at init.  Replies are event lines.
 *
 *   ping all | stats | stack | halt | help | ...  (modules add their own)
 */
#ifndef KERNEL_CONSOLE_COMMAND_H
#define KERNEL_CONSOLE_COMMAND_H

#include <stdint.h>

#define CONSOLE_COMMAND_MAX 16
#define CONSOLE_COMMAND_LINE_MAX 128

/* arguments: the rest of the line after the command word, maybe empty. */
typedef void (*console_command_fn)(void *context, const char *arguments,
                                   uint64_t now_ns);

/* What a command takes after its word. */
enum console_arguments {
    /* Nothing: the dispatcher answers anything more with a console-error
     * ("view: takes no arguments (got 'extra')") and never calls it. */
    CONSOLE_NO_ARGUMENTS,
    /* Arguments: the handler reads them and refuses what it cannot use. */
    CONSOLE_ARGUMENTS,
};

/* Adds a command during init; panics when the table is full. */
void console_command_register(const char *name, console_command_fn handler,
                              void *context, enum console_arguments arguments);

/* Registers the console poller and the built-in commands (help, halt). */
void console_command_init(void);

/* Answers a command that cannot be done: `event=console-error reason="..."`. */
void console_command_reply_error(const char *reason);

/* `halt`: the stack report, a `halt` line, the console flushed, then the
 * node stops for good (board_halt(0): exit 0 on the host). */
_Noreturn void console_command_halt(void);

/* The same, the reason given in count pieces joined (cut to fit a line). */
void console_command_reply_error_parts(const char *const *parts, unsigned count);

/* Feeds bytes as if typed: used by the poller and by tests. */
unsigned console_command_feed(const char *bytes, unsigned length,
                              uint64_t now_ns);

#endif /* KERNEL_CONSOLE_COMMAND_H */
