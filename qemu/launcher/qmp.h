/*
 * A small QMP (QEMU Machine Protocol) client over a node's unix socket
 * (-qmp unix:PATH,server=on,wait=off): connect, read the greeting, enter
 * command mode with qmp_capabilities, then execute commands one at a time.
 * Asynchronous {"event": ...} lines that arrive between replies are skipped
 * and counted; replies are matched by the "id" each command carries, so a
 * late reply to a command that timed out is never taken for another's.
 *
 * Blocking with a timeout on every call; the launcher uses it for short
 * exchanges (stop, cont, set_link, system_reset, quit).
 */
#ifndef QEMU_LAUNCHER_QMP_H
#define QEMU_LAUNCHER_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest line (one JSON object) the client accepts from QEMU. */
#define QMP_LINE_MAX 16384

#define QMP_STATUSES(X)                                                      \
    X(OK, "ok")                                                              \
    X(COMMAND_ERROR, "command failed")    /* QEMU answered {"error": ...} */ \
    X(TIMEOUT, "timed out")                                                  \
    X(CLOSED, "connection closed")                                           \
    X(PROTOCOL, "not a QMP reply")                                           \
    X(SYSTEM, "system error")             /* socket, connect, write */

enum qmp_status {
#define QMP_STATUS_ENUM(name, text) QMP_##name,
    QMP_STATUSES(QMP_STATUS_ENUM)
#undef QMP_STATUS_ENUM
};

struct qmp_client {
    int fd;                    /* -1 when not connected */
    uint64_t next_id;          /* id of the next command */
    unsigned events_skipped;   /* async events seen and skipped */
    char last_event[64];       /* name of the latest skipped event */
    size_t length;             /* bytes waiting in buffer */
    char buffer[QMP_LINE_MAX];
};

/* Prepares an unconnected client. */
void qmp_init(struct qmp_client *client);

/*
 * Connects to the socket at path (retrying while QEMU has not created it
 * yet), checks the greeting and sends qmp_capabilities.  On failure detail
 * says why in a few words.
 */
enum qmp_status qmp_connect(struct qmp_client *client, const char *path,
                            int timeout_ms, char *detail, size_t capacity);

/*
 * Executes command with arguments (a JSON object text, or NULL for none).
 * QMP_OK: reply holds the "return" value as JSON text (often "{}").
 * QMP_COMMAND_ERROR: reply holds QEMU's error description.  Otherwise reply
 * says what went wrong.  reply may be NULL when capacity is 0.
 */
enum qmp_status qmp_execute(struct qmp_client *client, const char *command,
                            const char *arguments, int timeout_ms, char *reply,
                            size_t capacity);

/* Closes the connection (safe on an unconnected client). */
void qmp_close(struct qmp_client *client);

/* "ok", "timed out", ... */
const char *qmp_status_text(enum qmp_status status);

/*
 * JSON helper, exposed for tests: finds key among the top-level members of
 * the object text[0..length) and gives the span of its value.
 */
bool qmp_json_member(const char *text, size_t length, const char *key,
                     const char **value, size_t *value_length);

#endif /* QEMU_LAUNCHER_QMP_H */
