#include "kernel/event.h"

#include <stdbool.h>
#include <stddef.h>

#include "board/board.h"
#include "kernel/console_output.h"
#include "lib/format.h"

/* Long enough for any event; an overlong line is cut, never overrun. */
#define EVENT_LINE_CAPACITY 512

static char line[EVENT_LINE_CAPACITY];
static unsigned line_length;
static int64_t event_node_id = -1;

static void put_char(char c)
{
    /* Two bytes stay free for the closing quote and newline. */
    if (line_length < EVENT_LINE_CAPACITY - 2)
        line[line_length++] = c;
}

static void put_text(const char *text)
{
    while (*text != '\0')
        put_char(*text++);
}

static void put_u64(uint64_t value)
{
    char digits[20];
    unsigned n = format_u64(digits, value);
    for (unsigned i = 0; i < n; i++)
        put_char(digits[i]);
}

static void put_key(const char *key)
{
    put_char(' ');
    put_text(key);
    put_char('=');
}

void event_set_node(int64_t node_id)
{
    event_node_id = node_id;
}

void event_begin(const char *name)
{
    line_length = 0;
    put_text("tori node=");
    if (event_node_id < 0)
        put_char('-');
    else
        put_u64((uint64_t)event_node_id);
    put_text(" event=");
    put_text(name);
    put_key("t_ns");
    put_u64(board_now_ns());
}

void event_add_u64(const char *key, uint64_t value)
{
    put_key(key);
    put_u64(value);
}

void event_add_i64(const char *key, int64_t value)
{
    put_key(key);
    if (value < 0) {
        put_char('-');
        put_u64((uint64_t)0 - (uint64_t)value);
    } else {
        put_u64((uint64_t)value);
    }
}

void event_add_hex(const char *key, uint64_t value)
{
    char digits[18];
    unsigned n = format_hex(digits, value);
    put_key(key);
    for (unsigned i = 0; i < n; i++)
        put_char(digits[i]);
}

static bool is_token_char(char c)
{
    return c > ' ' && c < 0x7f && c != '"';
}

void event_add_str(const char *key, const char *value)
{
    put_key(key);
    if (*value == '\0')
        put_char('-');
    for (; *value != '\0'; value++)
        put_char(is_token_char(*value) ? *value : '_');
}

void event_add_text(const char *key, const char *value)
{
    put_key(key);
    put_char('"');
    for (; *value != '\0'; value++) {
        char c = *value;
        put_char(c == '"' ? '\'' : (c < ' ' || c >= 0x7f) ? ' ' : c);
    }
    if (line_length < EVENT_LINE_CAPACITY - 1)
        line[line_length++] = '"';
}

void event_end(void)
{
    line[line_length++] = '\n';
    console_output_write(line, line_length);
    line_length = 0;
}
