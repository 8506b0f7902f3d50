/* Event lines: exact syntax, token sanitising, quoting, and no overrun. */
#include "kernel/event.h"
#include "tests/check.h"
#include "tests/kernel/test_board.h"

int main(void)
{
    test_board_reset();
    test_board_clock_ns = 1234;
    event_begin("boot");
    event_add_str("board", "qemu virt\"x");
    event_end();
    CHECK(strcmp(test_board_console_text(),
                 "tori node=- event=boot t_ns=1234 board=qemu_virt_x\n") == 0);

    test_board_reset();
    event_set_node(17);
    event_begin("view");
    event_add_u64("epoch", 18446744073709551615ull);
    event_add_i64("delta", -5);
    event_add_hex("digest", 0xabcdef);
    event_add_text("reason", "two \"words\"\n");
    event_add_str("empty", "");
    event_end();
    CHECK(strcmp(test_board_console_text(),
                 "tori node=17 event=view t_ns=0 epoch=18446744073709551615 "
                 "delta=-5 digest=0xabcdef reason=\"two 'words' \" empty=-\n") == 0);

    /* An overlong line is cut but stays one terminated line. */
    test_board_reset();
    event_begin("long");
    for (int i = 0; i < 100; i++)
        event_add_text("k", "0123456789");
    event_end();
    size_t length = strlen(test_board_console_text());
    CHECK(length <= 512);
    CHECK(test_board_console_text()[length - 1] == '\n');
    CHECK(strchr(test_board_console_text(), '\n') == test_board_console_text() + length - 1);
    return check_report("test_event");
}
