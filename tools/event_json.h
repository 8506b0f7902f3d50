/*
 * JSON form of a parsed event line, one object per line:
 *
 *   {"event":"view","node":3,"t_ns":1234567,"emu_ns":5120000,"epoch":4,...}
 *
 * "node" is the rank of the instance the line came from (the launcher knows
 * it even when the node wrote "-"); "emu_ns" is when the launcher read the
 * line, on its own clock from its start.  The line's keys follow in order: a
 * bare value that is a JSON number is written as a number, everything else
 * (quoted texts, hex, names) as a string.
 */
#ifndef TOOLS_EVENT_JSON_H
#define TOOLS_EVENT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/event_line.h"

/* Room for any parsed line as JSON (every byte escaped twice over). */
#define EVENT_JSON_MAX (3 * EVENT_LINE_MAX)

/* True when text is a JSON number (-?int frac? exp?). */
bool event_json_is_number(const char *text);

/*
 * Writes the object (no newline) into out; returns its length, or 0 when
 * capacity is too small (out then holds an empty string).
 */
size_t event_json_format(const struct event_line *line, uint32_t node,
                         uint64_t emu_ns, char *out, size_t capacity);

#endif /* TOOLS_EVENT_JSON_H */
