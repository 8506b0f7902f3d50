/*
 * Buffered console output: nothing reaches the board until drained; drains
 * write at most what they are asked, in order; a burst larger than the
 * buffer loses nothing and keeps its order; the poll loop drains only when
 * it has no other work.
 */
#include <stdio.h>
#include <string.h>

#include "config/tori_config.h"
#include "kernel/console_output.h"
#include "kernel/event.h"
#include "kernel/poll.h"
#include "tests/check.h"
#include "tests/kernel/test_board.h"

static unsigned busy_passes;

/* A poller with work for a few passes, then it stops the loop. */
static unsigned busy_poller(void *context, uint64_t now_ns)
{
    (void)context;
    (void)now_ns;
    if (busy_passes == 0) {
        poll_stop();
        return 1;
    }
    busy_passes--;
    /* Still busy: nothing may have been written behind the work's back. */
    CHECK_EQ(strlen(test_board_console), 0);
    return 1;
}

int main(void)
{
    test_board_reset();
    console_output_write("abc", 3);
    CHECK(console_output_pending());
    CHECK_EQ(strlen(test_board_console), 0);
    CHECK_EQ(console_output_drain(2), 2);
    CHECK(strcmp(test_board_console, "ab") == 0);
    CHECK_EQ(console_output_drain(100), 1);
    CHECK(strcmp(test_board_console, "abc") == 0);
    CHECK(!console_output_pending());
    CHECK_EQ(console_output_drain(100), 0);

    /* A burst of numbered lines beyond the buffer: all there, in order. */
    test_board_reset();
    static char expected[CONFIG_CONSOLE_BUFFER + 2048];
    size_t expected_length = 0;
    for (unsigned i = 0; expected_length + 32 < sizeof expected; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "line %u\n", i);
        console_output_write(line, (size_t)n);
        memcpy(expected + expected_length, line, (size_t)n);
        expected_length += (size_t)n;
    }
    CHECK(strlen(test_board_console) > 0); /* the buffer overflowed: written */
    expected[expected_length] = '\0';
    CHECK(strcmp(test_board_console_text(), expected) == 0);
    CHECK(!console_output_pending());
    CHECK(expected_length < sizeof test_board_console);

    /* The poll loop: an event line waits while a poller has work, and is
     * out when the loop ends. */
    test_board_reset();
    event_begin("waiting");
    event_end();
    busy_passes = 3;
    poll_register("busy", busy_poller, NULL);
    poll_run();
    CHECK(strstr(test_board_console, "event=waiting") != NULL);
    CHECK(!console_output_pending());
    return check_report("test_console_output");
}
