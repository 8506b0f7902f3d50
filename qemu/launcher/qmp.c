#define _GNU_SOURCE
#include "qemu/launcher/qmp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

const char *qmp_status_text(enum qmp_status status)
{
    switch (status) {
#define QMP_STATUS_TEXT(name, text)                                          \
    case QMP_##name:                                                         \
        return text;
        QMP_STATUSES(QMP_STATUS_TEXT)
#undef QMP_STATUS_TEXT
    }
    return "?";
}

void qmp_init(struct qmp_client *client)
{
    client->fd = -1;
    client->next_id = 1;
    client->events_skipped = 0;
    client->last_event[0] = '\0';
    client->length = 0;
}

void qmp_close(struct qmp_client *client)
{
    if (client->fd >= 0)
        close(client->fd);
    client->fd = -1;
    client->length = 0;
}

static int64_t now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void say(char *out, size_t capacity, const char *text)
{
    if (out != NULL && capacity > 0)
        snprintf(out, capacity, "%s", text);
}

/* ---- minimal JSON scanning: spans only, no allocation, no recursion ---- */

static size_t skip_space(const char *t, size_t i, size_t n)
{
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n'))
        i++;
    return i;
}

/* t[i] is '"': returns the index after the closing quote, or n. */
static size_t skip_string(const char *t, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return n;
}

/* Skips one value starting at i; returns the index after it, or n. */
static size_t skip_value(const char *t, size_t i, size_t n)
{
    if (i >= n)
        return n;
    if (t[i] == '"')
        return skip_string(t, i, n);
    if (t[i] == '{' || t[i] == '[') {
        unsigned depth = 0;
        while (i < n) {
            if (t[i] == '"') {
                i = skip_string(t, i, n);
                continue;
            }
            if (t[i] == '{' || t[i] == '[')
                depth++;
            else if (t[i] == '}' || t[i] == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ')
        i++;
    return i;
}

bool qmp_json_member(const char *t, size_t n, const char *key, const char **value,
                     size_t *value_length)
{
    size_t key_length = strlen(key);
    size_t i = skip_space(t, 0, n);
    if (i >= n || t[i] != '{')
        return false;
    i = skip_space(t, i + 1, n);
    while (i < n && t[i] == '"') {
        size_t key_start = i + 1;
        size_t key_end = skip_string(t, i, n);
        if (key_end >= n)
            return false;
        bool match = key_end - 1 - key_start == key_length &&
                     memcmp(t + key_start, key, key_length) == 0;
        i = skip_space(t, key_end, n);
        if (i >= n || t[i] != ':')
            return false;
        i = skip_space(t, i + 1, n);
        size_t start = i;
        i = skip_value(t, i, n);
        if (i >= n || i == start)
            return false; /* a member is always followed by ',' or '}' */
        if (match) {
            *value = t + start;
            *value_length = i - start;
            return true;
        }
        i = skip_space(t, i, n);
        if (i < n && t[i] == ',')
            i = skip_space(t, i + 1, n);
        else
            return false;
    }
    return false;
}

/* Copies a JSON string value's text (escapes kept simple) into out. */
static void copy_string_value(const char *value, size_t length, char *out,
                              size_t capacity)
{
    if (out == NULL || capacity == 0)
        return;
    size_t o = 0;
    size_t i = (length >= 2 && value[0] == '"') ? 1 : 0;
    size_t end = (i == 1) ? length - 1 : length;
    for (; i < end && o + 1 < capacity; i++) {
        if (value[i] == '\\' && i + 1 < end)
            i++;
        out[o++] = value[i];
    }
    out[o] = '\0';
}

static void copy_span(const char *value, size_t length, char *out, size_t capacity)
{
    if (out == NULL || capacity == 0)
        return;
    size_t n = length < capacity - 1 ? length : capacity - 1;
    memcpy(out, value, n);
    out[n] = '\0';
}

/* ---- line transport ---- */

static enum qmp_status send_all(struct qmp_client *client, const char *text,
                                int64_t deadline)
{
    size_t length = strlen(text);
    size_t sent = 0;
    while (sent < length) {
        ssize_t n = send(client->fd, text + sent, length - sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return (errno == EPIPE || errno == ECONNRESET) ? QMP_CLOSED : QMP_SYSTEM;
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return QMP_TIMEOUT;
        struct pollfd p = {client->fd, POLLOUT, 0};
        poll(&p, 1, (int)left);
    }
    return QMP_OK;
}

/*
 * Reads one line into line[0..*length) (newline removed), waiting until the
 * deadline.  The line stays in the buffer until the next call.
 */
static enum qmp_status read_line(struct qmp_client *client, int64_t deadline,
                                 size_t *consumed, size_t *length)
{
    /* Drop the previous line first. */
    if (*consumed > 0) {
        memmove(client->buffer, client->buffer + *consumed, client->length - *consumed);
        client->length -= *consumed;
        *consumed = 0;
    }
    for (;;) {
        char *newline = memchr(client->buffer, '\n', client->length);
        if (newline != NULL) {
            size_t line_length = (size_t)(newline - client->buffer);
            *consumed = line_length + 1;
            if (line_length > 0 && client->buffer[line_length - 1] == '\r')
                line_length--;
            *length = line_length;
            return QMP_OK;
        }
        if (client->length >= sizeof client->buffer)
            return QMP_PROTOCOL; /* a line longer than we accept */
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return QMP_TIMEOUT;
        struct pollfd p = {client->fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)left);
        if (ready < 0 && errno != EINTR)
            return QMP_SYSTEM;
        if (ready <= 0)
            continue;
        ssize_t n = recv(client->fd, client->buffer + client->length,
                         sizeof client->buffer - client->length, MSG_DONTWAIT);
        if (n == 0)
            return QMP_CLOSED;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return errno == ECONNRESET ? QMP_CLOSED : QMP_SYSTEM;
        }
        client->length += (size_t)n;
    }
}

static void note_event(struct qmp_client *client, const char *line, size_t length)
{
    const char *value;
    size_t value_length;
    client->events_skipped++;
    if (qmp_json_member(line, length, "event", &value, &value_length))
        copy_string_value(value, value_length, client->last_event,
                          sizeof client->last_event);
}

/* Waits for the reply carrying id; skips events and replies to others. */
static enum qmp_status await_reply(struct qmp_client *client, uint64_t id,
                                   int64_t deadline, char *reply, size_t capacity)
{
    char id_text[24];
    int id_length = snprintf(id_text, sizeof id_text, "%llu", (unsigned long long)id);
    size_t consumed = 0;
    enum qmp_status status = QMP_OK;
    for (;;) {
        size_t length = 0;
        status = read_line(client, deadline, &consumed, &length);
        if (status != QMP_OK)
            break;
        const char *line = client->buffer;
        const char *value;
        size_t value_length;
        if (length == 0)
            continue;
        if (qmp_json_member(line, length, "event", &value, &value_length)) {
            note_event(client, line, length);
            continue;
        }
        if (!qmp_json_member(line, length, "id", &value, &value_length) ||
            value_length != (size_t)id_length || memcmp(value, id_text, value_length) != 0)
            continue; /* a late reply to an earlier command, or untagged */
        if (qmp_json_member(line, length, "return", &value, &value_length)) {
            copy_span(value, value_length, reply, capacity);
            status = QMP_OK;
        } else if (qmp_json_member(line, length, "error", &value, &value_length)) {
            const char *desc;
            size_t desc_length;
            if (qmp_json_member(value, value_length, "desc", &desc, &desc_length))
                copy_string_value(desc, desc_length, reply, capacity);
            else
                copy_span(value, value_length, reply, capacity);
            status = QMP_COMMAND_ERROR;
        } else {
            say(reply, capacity, "a reply with neither return nor error");
            status = QMP_PROTOCOL;
        }
        break;
    }
    /* Keep whatever follows the consumed line for the next exchange. */
    if (consumed > 0) {
        memmove(client->buffer, client->buffer + consumed, client->length - consumed);
        client->length -= consumed;
    }
    return status;
}

enum qmp_status qmp_execute(struct qmp_client *client, const char *command,
                            const char *arguments, int timeout_ms, char *reply,
                            size_t capacity)
{
    if (reply != NULL && capacity > 0)
        reply[0] = '\0';
    if (client->fd < 0) {
        say(reply, capacity, "not connected");
        return QMP_CLOSED;
    }
    int64_t deadline = now_ms() + timeout_ms;
    uint64_t id = client->next_id++;
    char request[1024];
    int length;
    if (arguments != NULL)
        length = snprintf(request, sizeof request,
                          "{\"execute\":\"%s\",\"arguments\":%s,\"id\":%llu}\r\n",
                          command, arguments, (unsigned long long)id);
    else
        length = snprintf(request, sizeof request, "{\"execute\":\"%s\",\"id\":%llu}\r\n",
                          command, (unsigned long long)id);
    if (length < 0 || (size_t)length >= sizeof request) {
        say(reply, capacity, "command too long");
        return QMP_PROTOCOL;
    }
    enum qmp_status status = send_all(client, request, deadline);
    if (status != QMP_OK) {
        say(reply, capacity, qmp_status_text(status));
        return status;
    }
    status = await_reply(client, id, deadline, reply, capacity);
    if (status != QMP_OK && status != QMP_COMMAND_ERROR && status != QMP_PROTOCOL)
        say(reply, capacity, qmp_status_text(status));
    return status;
}

enum qmp_status qmp_connect(struct qmp_client *client, const char *path,
                            int timeout_ms, char *detail, size_t capacity)
{
    qmp_close(client);
    say(detail, capacity, "");
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) {
        say(detail, capacity, "socket path too long");
        return QMP_SYSTEM;
    }
    strcpy(address.sun_path, path);
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            say(detail, capacity, strerror(errno));
            return QMP_SYSTEM;
        }
        if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) {
            client->fd = fd;
            break;
        }
        int error = errno;
        close(fd);
        /* Not there yet (QEMU still starting): wait a little and retry. */
        if ((error == ENOENT || error == ECONNREFUSED) && now_ms() < deadline) {
            struct timespec pause = {0, 20 * 1000 * 1000};
            nanosleep(&pause, NULL);
            continue;
        }
        say(detail, capacity, strerror(error));
        return error == ENOENT || error == ECONNREFUSED ? QMP_TIMEOUT : QMP_SYSTEM;
    }
    size_t consumed = 0;
    size_t length = 0;
    enum qmp_status status = read_line(client, deadline, &consumed, &length);
    const char *value;
    size_t value_length;
    if (status == QMP_OK &&
        !qmp_json_member(client->buffer, length, "QMP", &value, &value_length)) {
        say(detail, capacity, "the greeting is not a QMP greeting");
        status = QMP_PROTOCOL;
    }
    if (status != QMP_OK) {
        if (detail != NULL && capacity > 0 && detail[0] == '\0')
            say(detail, capacity, qmp_status_text(status));
        qmp_close(client);
        return status;
    }
    memmove(client->buffer, client->buffer + consumed, client->length - consumed);
    client->length -= consumed;
    int left = (int)(deadline - now_ms());
    status = qmp_execute(client, "qmp_capabilities", NULL, left > 0 ? left : 1, detail,
                         capacity);
    if (status != QMP_OK) {
        qmp_close(client);
        return status;
    }
    say(detail, capacity, "");
    return QMP_OK;
}
