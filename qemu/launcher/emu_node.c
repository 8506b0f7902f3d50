#define _GNU_SOURCE
#include "qemu/launcher/emu_node.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void emu_node_init(struct emu_node *node, uint32_t rank)
{
    memset(node, 0, sizeof *node);
    node->rank = rank;
    node->incarnation = 1;
    node->console_in = -1;
    node->console_out = -1;
    node->control_listen = -1;
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
        node->link[l].fd = -1;
}

void emu_node_close_console(struct emu_node *node)
{
    if (node->console_in >= 0)
        close(node->console_in);
    if (node->console_out >= 0)
        close(node->console_out);
    node->console_in = -1;
    node->console_out = -1;
}

void emu_node_release(struct emu_node *node)
{
    emu_node_close_console(node);
    if (node->control_listen >= 0)
        close(node->control_listen);
    node->control_listen = -1;
    if (node->qmp != NULL)
        qmp_close(node->qmp);
    free(node->qmp);
    node->qmp = NULL;
    if (node->log != NULL)
        fclose(node->log);
    node->log = NULL;
    free(node->personality_path);
    free(node->log_path);
    free(node->qmp_path);
    free(node->qmp_name);
    node->personality_path = node->log_path = node->qmp_path = node->qmp_name = NULL;
}

ssize_t emu_node_read_console(struct emu_node *node)
{
    if (node->console_out < 0)
        return 0;
    /* Forget the line handed out last before reading more. */
    if (node->console_consumed > 0) {
        memmove(node->console, node->console + node->console_consumed,
                node->console_length - node->console_consumed);
        node->console_length -= node->console_consumed;
        node->console_consumed = 0;
    }
    size_t room = EMU_NODE_CONSOLE_MAX - node->console_length;
    if (room == 0)
        return -1; /* the caller must take lines out first */
    ssize_t got = read(node->console_out, node->console + node->console_length, room);
    if (got < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -1 : 0;
    if (got == 0) {
        close(node->console_out);
        node->console_out = -1;
        return 0;
    }
    if (node->log != NULL) {
        fwrite(node->console + node->console_length, 1, (size_t)got, node->log);
        fflush(node->log);
    }
    node->console_length += (size_t)got;
    return got;
}

const char *emu_node_next_line(struct emu_node *node, bool final, size_t *length)
{
    for (;;) {
        if (node->console_consumed > 0) {
            memmove(node->console, node->console + node->console_consumed,
                    node->console_length - node->console_consumed);
            node->console_length -= node->console_consumed;
            node->console_consumed = 0;
        }
        char *newline = memchr(node->console, '\n', node->console_length);
        size_t line_length;
        if (newline != NULL) {
            line_length = (size_t)(newline - node->console);
            node->console_consumed = line_length + 1;
        } else if (node->console_length == EMU_NODE_CONSOLE_MAX ||
                   (final && node->console_length > 0)) {
            line_length = node->console_length; /* cut, or the last words */
            node->console_consumed = line_length;
        } else {
            return NULL;
        }
        bool was_skipping = node->console_skipping;
        node->console_skipping = newline == NULL && !final;
        if (was_skipping)
            continue; /* the tail of a line already handed out cut */
        node->console[line_length] = '\0';
        *length = line_length;
        return node->console;
    }
}

bool emu_node_send(struct emu_node *node, const char *command)
{
    if (node->console_in < 0)
        return false;
    char line[256];
    size_t length = strlen(command);
    if (length + 1 >= sizeof line)
        return false;
    memcpy(line, command, length);
    line[length++] = '\n';
    /* Short lines into a pipe are written whole or not at all. */
    ssize_t written = write(node->console_in, line, length);
    return written == (ssize_t)length;
}

void emu_node_print_log_tail(const struct emu_node *node, FILE *out, unsigned lines)
{
    FILE *log = node->log_path != NULL ? fopen(node->log_path, "rb") : NULL;
    if (log == NULL) {
        fprintf(out, "    (no log)\n");
        return;
    }
    /* Read the last 8 KiB; enough for the last lines of any node. */
    char tail[8192 + 1];
    fseek(log, 0, SEEK_END);
    long size = ftell(log);
    long start = size > 8192 ? size - 8192 : 0;
    fseek(log, start, SEEK_SET);
    size_t n = fread(tail, 1, sizeof tail - 1, log);
    fclose(log);
    tail[n] = '\0';
    if (n == 0) {
        fprintf(out, "    (the log is empty)\n");
        return;
    }
    size_t end = n;
    if (end > 0 && tail[end - 1] == '\n')
        end--;
    size_t begin = end;
    unsigned found = 0;
    while (begin > 0 && found < lines) {
        begin--;
        if (tail[begin] == '\n')
            found++;
    }
    if (found == lines)
        begin++;
    char *line = tail + begin;
    tail[end] = '\0';
    while (line != NULL && *line != '\0') {
        char *next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        size_t length = strlen(line);
        if (length > 0 && line[length - 1] == '\r')
            line[length - 1] = '\0';
        fprintf(out, "    | %s\n", line);
        line = next;
    }
}

const char *emu_node_board_name(enum emu_board board)
{
    return board == EMU_BOARD_QEMU ? "qemu" : board == EMU_BOARD_MPI ? "mpi" : "host";
}
