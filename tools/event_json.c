#include "tools/event_json.h"

#include <stdio.h>
#include <string.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

bool event_json_is_number(const char *c)
{
    if (*c == '-')
        c++;
    if (*c == '0')
        c++;
    else if (is_digit(*c))
        while (is_digit(*c))
            c++;
    else
        return false;
    if (*c == '.') {
        c++;
        if (!is_digit(*c))
            return false;
        while (is_digit(*c))
            c++;
    }
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!is_digit(*c))
            return false;
        while (is_digit(*c))
            c++;
    }
    return *c == '\0';
}

/* A bounded writer: once full it stays full, and the caller sees 0. */
struct writer {
    char *out;
    size_t capacity;
    size_t length;
    bool full;
};

static void put(struct writer *w, const char *text, size_t n)
{
    if (w->full || w->length + n + 1 > w->capacity) {
        w->full = true;
        return;
    }
    memcpy(w->out + w->length, text, n);
    w->length += n;
}

static void put_text(struct writer *w, const char *text)
{
    put(w, text, strlen(text));
}

static void put_string(struct writer *w, const char *text)
{
    put(w, "\"", 1);
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\') {
            char escaped[2] = {'\\', *c};
            put(w, escaped, 2);
        } else if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) {
            char escaped[8];
            snprintf(escaped, sizeof escaped, "\\u%04x", (unsigned)(unsigned char)*c);
            put_text(w, escaped);
        } else {
            put(w, c, 1);
        }
    }
    put(w, "\"", 1);
}

size_t event_json_format(const struct event_line *line, uint32_t node,
                         uint64_t emu_ns, char *out, size_t capacity)
{
    struct writer w = {out, capacity, 0, capacity == 0};
    char number[64];
    put_text(&w, "{\"event\":");
    put_string(&w, line->name);
    snprintf(number, sizeof number, ",\"node\":%u,\"t_ns\":%llu,\"emu_ns\":%llu",
             (unsigned)node, (unsigned long long)line->t_ns,
             (unsigned long long)emu_ns);
    put_text(&w, number);
    for (unsigned i = 0; i < line->field_count; i++) {
        const struct event_field *field = &line->fields[i];
        /* The launcher's own keys win over a node's key of the same name. */
        if (strcmp(field->key, "emu_ns") == 0)
            continue;
        put(&w, ",", 1);
        put_string(&w, field->key);
        put(&w, ":", 1);
        if (!field->quoted && event_json_is_number(field->value))
            put_text(&w, field->value);
        else
            put_string(&w, field->value);
    }
    put(&w, "}", 1);
    if (w.full) {
        if (capacity > 0)
            out[0] = '\0';
        return 0;
    }
    out[w.length] = '\0';
    return w.length;
}
