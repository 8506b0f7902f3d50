/* Console command lines: assembly across reads, dispatch by first word,
 * unknown commands and overlong lines answered, never overrun. */
#include "kernel/console_command.h"
#include "tests/check.h"
#include "tests/kernel/test_board.h"

static char last_arguments[CONSOLE_COMMAND_LINE_MAX];
static int calls;

static void command_echo(void *context, const char *arguments, uint64_t now_ns)
{
    (void)now_ns;
    *(int *)context += 1;
    strncpy(last_arguments, arguments, sizeof last_arguments - 1);
    calls++;
}

int main(void)
{
    int echo_count = 0;
    test_board_reset();
    console_command_register("echo", command_echo, &echo_count);

    CHECK(console_command_feed("ec", 2, 0) == 0);
    CHECK(calls == 0);
    CHECK(console_command_feed("ho  a b\n", 8, 0) == 1);
    CHECK(calls == 1 && echo_count == 1);
    CHECK(strcmp(last_arguments, "a b") == 0);

    CHECK(console_command_feed("  echo\r\n", 8, 0) == 2);
    CHECK(calls == 2 && strcmp(last_arguments, "") == 0);

    test_board_reset();
    console_command_feed("bogus 1\n", 8, 0);
    CHECK_CONTAINS(test_board_console_text(), "event=console-error");
    CHECK_CONTAINS(test_board_console_text(), "unknown command");
    CHECK(calls == 2);

    test_board_reset();
    char long_line[3 * CONSOLE_COMMAND_LINE_MAX];
    memset(long_line, 'e', sizeof long_line);
    console_command_feed(long_line, sizeof long_line, 0);
    console_command_feed("\n", 1, 0);
    CHECK_CONTAINS(test_board_console_text(), "command line too long");
    CHECK(calls == 2);
    /* The next line is clean again. */
    console_command_feed("echo ok\n", 8, 0);
    CHECK(calls == 3 && strcmp(last_arguments, "ok") == 0);
    return check_report("test_console_command");
}
