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

/* Adds a command during init; panics when the table is full. */
void console_command_register(const char *name, console_command_fn handler,
                              void *context);

/* Registers the console poller and the built-in commands (help, halt). */
void console_command_init(void);

/* Answers a command that cannot be done: `event=console-error reason="..."`. */
void console_command_reply_error(const char *reason);

/* Feeds bytes as if typed: used by the poller and by tests. */
unsigned console_command_feed(const char *bytes, unsigned length,
                              uint64_t now_ns);

#endif /* KERNEL_CONSOLE_COMMAND_H */
