/* Console command lines: assembly across reads, dispatch by first word,
 * unknown commands and overlong lines answered, never overrun; commands
 * that take no arguments refuse them; `stack` answers on every board. */
#include "kernel/console_command.h"
#include "kernel/stack_report.h"
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
    console_command_register("echo", command_echo, &echo_count, CONSOLE_ARGUMENTS);

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

    /* A command without arguments: extra words are refused, never ignored. */
    int plain_count = 0;
    console_command_register("plain", command_echo, &plain_count, CONSOLE_NO_ARGUMENTS);
    test_board_reset();
    console_command_feed("plain extra words\n", 18, 0);
    CHECK(plain_count == 0 && calls == 3);
    CHECK_CONTAINS(test_board_console_text(),
                   "event=console-error t_ns=0 reason=\"plain: takes no arguments (got 'extra "
                   "words')\"\n");
    CHECK(strchr(test_board_console_text(), '\n') ==
          test_board_console_text() + strlen(test_board_console_text()) - 1);
    console_command_feed("  plain  \n", 10, 0);
    CHECK(plain_count == 1 && strcmp(last_arguments, "") == 0);

    /* The built-in commands take none either (halt with words does not halt). */
    console_command_init();
    test_board_reset();
    console_command_feed("help me\nhalt now\n", 17, 0);
    CHECK_CONTAINS(test_board_console_text(), "reason=\"help: takes no arguments (got 'me')\"");
    CHECK_CONTAINS(test_board_console_text(), "reason=\"halt: takes no arguments (got 'now')\"");
    CHECK(test_board_halt_code == -1);

    /* `stack` on every board: measured, or one line saying it is not. */
    stack_report_init();
    test_board_reset();
    console_command_feed("stack\n", 6, 0);
    CHECK_CONTAINS(test_board_console_text(),
                   "event=console-error t_ns=0 reason=\"stack: not measured on the test board "
                   "(a test board measures nothing)\"\n");
    test_board_reset();
    stack_report_emit("halt");
    CHECK(strcmp(test_board_console_text(), "") == 0);
    test_board_stack_high_water = 1184;
    console_command_feed("stack\n", 6, 0);
    CHECK_CONTAINS(test_board_console_text(),
                   "event=stack t_ns=0 high_water=1184 size=4096 reason=request\n");
    test_board_reset();
    test_board_stack_high_water = 1184;
    console_command_feed("stack all\n", 10, 0);
    CHECK_CONTAINS(test_board_console_text(), "reason=\"stack: takes no arguments (got 'all')\"");
    CHECK(strstr(test_board_console_text(), "event=stack") == NULL);
    return check_report("test_console_command");
}
