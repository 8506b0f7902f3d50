/*
 * Parsing of node event lines (the format kernel/event.h writes):
 *
 *   tori node=3 event=view t_ns=1234567 epoch=4 root=0 reason="link down"
 *
 * "tori node=" starts an event line; anything else on a console is a plain
 * line.  An event line is accepted only whole: node (digits or "-"), event
 * (a bare token), t_ns (digits), then key=value pairs whose value is a bare
 * token or a double-quoted text, keys unique, printable ASCII only.  Anything
 * else makes it malformed: the launcher counts it and ignores it.
 */
#ifndef TOOLS_EVENT_LINE_H
#define TOOLS_EVENT_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longer than any line a node writes (its event buffer holds 512). */
#define EVENT_LINE_MAX 1024
/* Key=value pairs after node, event and t_ns. */
#define EVENT_LINE_MAX_FIELDS 48

enum event_line_status {
    EVENT_LINE_OK,
    EVENT_LINE_PLAIN,     /* not an event line: ordinary console output */
    EVENT_LINE_MALFORMED, /* starts like an event line but is not one */
};

struct event_field {
    const char *key;
    const char *value; /* without the quotes of a quoted text */
    bool quoted;
};

/* A parsed line: keys and values point into text, which the line owns. */
struct event_line {
    char text[EVENT_LINE_MAX];
    const char *name;
    int64_t node; /* -1 for "-" (before the node knew its rank) */
    uint64_t t_ns;
    unsigned field_count;
    struct event_field fields[EVENT_LINE_MAX_FIELDS];
};

/*
 * Parses one line (without or with its trailing "\n" or "\r\n").  On
 * EVENT_LINE_MALFORMED, *reason (when not NULL) says why, briefly.
 */
enum event_line_status event_line_parse(const char *line, size_t length,
                                        struct event_line *out,
                                        const char **reason);

/* Value of key among the fields after t_ns, or NULL. */
const char *event_line_get(const struct event_line *line, const char *key);

/* Decimal value of key; false when absent or not a plain decimal. */
bool event_line_get_u64(const struct event_line *line, const char *key,
                        uint64_t *out);

#endif /* TOOLS_EVENT_LINE_H */
