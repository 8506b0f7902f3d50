#include "tools/event_line.h"

#include <string.h>

#include "tools/cli.h"

static const char prefix[] = "tori node=";

static bool is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

static bool is_token_char(char c)
{
    return c > ' ' && c < 0x7f && c != '"';
}

static enum event_line_status malformed(const char **reason, const char *why)
{
    if (reason != NULL)
        *reason = why;
    return EVENT_LINE_MALFORMED;
}

/* Splits text (NUL-terminated, printable) into key=value fields in place. */
static enum event_line_status split_fields(char *text, struct event_field *all,
                                           unsigned capacity, unsigned *count,
                                           const char **reason)
{
    char *c = text;
    *count = 0;
    for (;;) {
        while (*c == ' ')
            c++;
        if (*c == '\0')
            return EVENT_LINE_OK;
        if (*count >= capacity)
            return malformed(reason, "too many fields");
        char *key = c;
        while (is_key_char(*c))
            c++;
        if (c == key || *c != '=')
            return malformed(reason, "a field is not key=value");
        *c++ = '\0';
        struct event_field *field = &all[*count];
        field->key = key;
        if (*c == '"') {
            char *value = ++c;
            char *end = strchr(value, '"');
            if (end == NULL)
                return malformed(reason, "a quoted value is not closed");
            if (end[1] != ' ' && end[1] != '\0')
                return malformed(reason, "text follows a closing quote");
            *end = '\0';
            c = end + 1;
            field->value = value;
            field->quoted = true;
        } else {
            char *value = c;
            while (is_token_char(*c))
                c++;
            if (c == value)
                return malformed(reason, "a value is empty");
            if (*c != ' ' && *c != '\0')
                return malformed(reason, "a bare value holds a quote");
            if (*c == ' ')
                *c++ = '\0';
            field->value = value;
            field->quoted = false;
        }
        for (unsigned i = 0; i < *count; i++)
            if (strcmp(all[i].key, key) == 0)
                return malformed(reason, "a key appears twice");
        (*count)++;
    }
}

static bool parse_decimal(const char *text, uint64_t *out)
{
    return cli_parse_u64(text, 0, UINT64_MAX, out);
}

enum event_line_status event_line_parse(const char *line, size_t length,
                                        struct event_line *out,
                                        const char **reason)
{
    if (reason != NULL)
        *reason = NULL;
    if (length > 0 && line[length - 1] == '\n')
        length--;
    if (length > 0 && line[length - 1] == '\r')
        length--;
    if (length < sizeof prefix - 1 || memcmp(line, prefix, sizeof prefix - 1) != 0)
        return EVENT_LINE_PLAIN;
    if (length >= EVENT_LINE_MAX)
        return malformed(reason, "line too long");
    for (size_t i = 0; i < length; i++)
        if (line[i] < ' ' || line[i] > '~')
            return malformed(reason, "a byte is not printable ASCII");
    memcpy(out->text, line, length);
    out->text[length] = '\0';

    /* node, event and t_ns are fields too; parse all, then take them out. */
    struct event_field all[EVENT_LINE_MAX_FIELDS + 3];
    unsigned count = 0;
    enum event_line_status status =
        split_fields(out->text + 5, all, EVENT_LINE_MAX_FIELDS + 3, &count, reason);
    if (status != EVENT_LINE_OK)
        return status;
    if (count < 3 || strcmp(all[0].key, "node") != 0 ||
        strcmp(all[1].key, "event") != 0 || strcmp(all[2].key, "t_ns") != 0)
        return malformed(reason, "node, event and t_ns do not open the line");
    uint64_t node = 0;
    if (all[0].quoted)
        return malformed(reason, "node is quoted");
    if (strcmp(all[0].value, "-") == 0)
        out->node = -1;
    else if (parse_decimal(all[0].value, &node) && node <= INT64_MAX)
        out->node = (int64_t)node;
    else
        return malformed(reason, "node is not a number or -");
    if (all[1].quoted)
        return malformed(reason, "event name is quoted");
    out->name = all[1].value;
    if (all[2].quoted || !parse_decimal(all[2].value, &out->t_ns))
        return malformed(reason, "t_ns is not a number");
    out->field_count = count - 3;
    for (unsigned i = 3; i < count; i++)
        out->fields[i - 3] = all[i];
    return EVENT_LINE_OK;
}

const char *event_line_get(const struct event_line *line, const char *key)
{
    for (unsigned i = 0; i < line->field_count; i++)
        if (strcmp(line->fields[i].key, key) == 0)
            return line->fields[i].value;
    return NULL;
}

bool event_line_get_u64(const struct event_line *line, const char *key,
                        uint64_t *out)
{
    const char *value = event_line_get(line, key);
    return value != NULL && parse_decimal(value, out);
}
