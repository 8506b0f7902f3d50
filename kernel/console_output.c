#include "kernel/console_output.h"

#include "board/board.h"
#include "config/tori_config.h"

/* A ring of bytes: head is the next to write out, length how many wait. */
static char pending[CONFIG_CONSOLE_BUFFER];
static size_t head;
static size_t length;

size_t console_output_drain(size_t max_bytes)
{
    size_t written = 0;
    while (length != 0 && written < max_bytes) {
        size_t run = sizeof pending - head; /* up to the end of the ring */
        if (run > length)
            run = length;
        if (run > max_bytes - written)
            run = max_bytes - written;
        board_console_write(pending + head, run);
        head = (head + run) % sizeof pending;
        length -= run;
        written += run;
    }
    return written;
}

void console_output_flush(void)
{
    console_output_drain(sizeof pending);
}

void console_output_write(const char *bytes, size_t count)
{
    if (count > sizeof pending - length)
        console_output_flush();
    if (count > sizeof pending) {
        board_console_write(bytes, count);
        return;
    }
    for (size_t i = 0; i < count; i++)
        pending[(head + length + i) % sizeof pending] = bytes[i];
    length += count;
}

bool console_output_pending(void)
{
    return length != 0;
}
