#include "kernel/console_command.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "board/board.h"
#include "kernel/console_output.h"
#include "kernel/event.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/stack_report.h"

struct console_command {
    const char *name;
    console_command_fn handler;
    void *context;
    enum console_arguments arguments;
};

static struct console_command commands[CONSOLE_COMMAND_MAX];
static unsigned command_count;
static char line[CONSOLE_COMMAND_LINE_MAX];
static unsigned line_length;
static bool line_overflowed;

void console_command_register(const char *name, console_command_fn handler,
                              void *context, enum console_arguments arguments)
{
    if (command_count >= CONSOLE_COMMAND_MAX)
        kernel_panic("console: command table full (raise CONSOLE_COMMAND_MAX)");
    commands[command_count].name = name;
    commands[command_count].handler = handler;
    commands[command_count].context = context;
    commands[command_count].arguments = arguments;
    command_count++;
}

void console_command_reply_error(const char *reason)
{
    event_begin("console-error");
    event_add_text("reason", reason);
    event_end();
}

void console_command_reply_error_parts(const char *const *parts, unsigned count)
{
    static char reason[CONSOLE_COMMAND_LINE_MAX + 96];
    size_t length = 0;
    for (unsigned i = 0; i < count; i++)
        for (const char *c = parts[i]; *c != '\0' && length + 1 < sizeof reason; c++)
            reason[length++] = *c;
    reason[length] = '\0';
    console_command_reply_error(reason);
}

static void dispatch_line(uint64_t now_ns)
{
    line[line_length] = '\0';
    char *word = line;
    while (*word == ' ' || *word == '\t')
        word++;
    if (*word == '\0')
        return;
    char *arguments = word;
    while (*arguments != '\0' && *arguments != ' ' && *arguments != '\t')
        arguments++;
    if (*arguments != '\0')
        *arguments++ = '\0';
    while (*arguments == ' ' || *arguments == '\t')
        arguments++;
    for (unsigned i = 0; i < command_count; i++) {
        if (strcmp(commands[i].name, word) != 0)
            continue;
        if (commands[i].arguments == CONSOLE_NO_ARGUMENTS && *arguments != '\0') {
            const char *parts[] = {word, ": takes no arguments (got '", arguments, "')"};
            console_command_reply_error_parts(parts, 4);
            return;
        }
        /* cert: indirect call, targets are the handlers registered at init */
        commands[i].handler(commands[i].context, arguments, now_ns);
        return;
    }
    console_command_reply_error("unknown command (try: help)");
}

unsigned console_command_feed(const char *bytes, unsigned length,
                              uint64_t now_ns)
{
    unsigned lines = 0;
    for (unsigned i = 0; i < length; i++) {
        char c = bytes[i];
        if (c == '\n' || c == '\r') {
            if (line_overflowed)
                console_command_reply_error("command line too long");
            else if (line_length > 0)
                dispatch_line(now_ns);
            line_length = 0;
            line_overflowed = false;
            lines++;
        } else if (line_length + 1 < CONSOLE_COMMAND_LINE_MAX) {
            line[line_length++] = c;
        } else {
            line_overflowed = true;
        }
    }
    return lines;
}

static unsigned console_poll(void *context, uint64_t now_ns)
{
    (void)context;
    char bytes[64];
    size_t got = board_console_read(bytes, sizeof bytes);
    if (got == 0)
        return 0;
    console_command_feed(bytes, (unsigned)got, now_ns);
    return 1;
}

static void command_help(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)arguments;
    (void)now_ns;
    static char names[CONSOLE_COMMAND_MAX * 12];
    unsigned n = 0;
    for (unsigned i = 0; i < command_count; i++) {
        for (const char *c = commands[i].name; *c != '\0' && n + 2 < sizeof names; c++)
            names[n++] = *c;
        if (i + 1 < command_count && n + 2 < sizeof names)
            names[n++] = ',';
    }
    names[n] = '\0';
    event_begin("help");
    event_add_str("commands", names);
    event_end();
}

void console_command_halt(void)
{
    stack_report_emit("halt"); /* the certification's runtime stack evidence */
    event_begin("halt");
    event_end();
    console_output_flush();
    board_halt(0);
}

static void command_halt(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)arguments;
    (void)now_ns;
    console_command_halt();
}

void console_command_init(void)
{
    poll_register("console", console_poll, NULL);
    console_command_register("help", command_help, NULL, CONSOLE_NO_ARGUMENTS);
    console_command_register("halt", command_halt, NULL, CONSOLE_NO_ARGUMENTS);
}
