/*
 * Event lines: the node's machine-readable console output, one line each:
 *
 *   tori node=3 event=view t_ns=1234567 epoch=4 root=0 live=7 digest=9f3a..
 *
 * Keys never contain spaces; a value is a bare token, or a double-quoted
 * text (event_add_text) with no double quote inside.  The launcher and tests
 * parse these lines and nothing else.  Formatting uses a static line buffer and never
 * allocates, so events may be written in any phase, panic included.
 */
#ifndef KERNEL_EVENT_H
#define KERNEL_EVENT_H

#include <stdint.h>

/* Node id written in every line; -1 (before the personality) prints "-". */
void event_set_node(int64_t node_id);

/* Starts a line with node, event name and the current time. */
void event_begin(const char *name);
void event_add_u64(const char *key, uint64_t value);
void event_add_i64(const char *key, int64_t value);
void event_add_hex(const char *key, uint64_t value);
/* A bare token: spaces, quotes and control characters become '_'. */
void event_add_str(const char *key, const char *value);
/* Human text: key="value", double quotes become ', controls become ' '. */
void event_add_text(const char *key, const char *value);
/* Ends the line and writes it to the console. */
void event_end(void);

#endif /* KERNEL_EVENT_H */
