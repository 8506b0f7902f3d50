/* A node's console as the launcher sees it: lines assembled from pipe
 * reads, overlong lines cut, the last partial line at end of file, the log
 * holding every byte, commands written to its input, the tail of its log. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qemu/launcher/emu_node.h"
#include "tests/check.h"

static struct emu_node node;

static void put(int fd, const char *text)
{
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
}

static const char *next(bool final)
{
    size_t length = 0;
    const char *line = emu_node_next_line(&node, final, &length);
    if (line != NULL)
        CHECK(strlen(line) == length);
    return line;
}

static void test_console(void)
{
    char log_path[] = "/tmp/tori-emu-node-test-XXXXXX";
    int log_fd = mkstemp(log_path);
    CHECK(log_fd >= 0);
    close(log_fd);
    emu_node_init(&node, 5);
    node.log_path = strdup(log_path);
    node.log = fopen(log_path, "w");
    int out[2], in[2];
    CHECK(pipe2(out, O_NONBLOCK) == 0 && pipe(in) == 0);
    node.console_out = out[0];
    node.console_in = in[1];

    CHECK(emu_node_read_console(&node) == -1); /* nothing yet */
    put(out[1], "tori node=5 event=boot t_ns=1\r\nhalf");
    CHECK(emu_node_read_console(&node) > 0);
    const char *line = next(false);
    CHECK(line != NULL && strcmp(line, "tori node=5 event=boot t_ns=1\r") == 0);
    CHECK(next(false) == NULL);
    put(out[1], " line\n");
    emu_node_read_console(&node);
    line = next(false);
    CHECK(line != NULL && strcmp(line, "half line") == 0);

    /* An overlong line comes out cut once; its tail is dropped. */
    char *longer = malloc(EMU_NODE_CONSOLE_MAX + 500);
    memset(longer, 'x', EMU_NODE_CONSOLE_MAX + 499);
    longer[EMU_NODE_CONSOLE_MAX + 499] = '\0';
    put(out[1], longer);
    put(out[1], "\nafter\n");
    unsigned cut = 0, after = 0, other = 0;
    for (int turn = 0; turn < 10; turn++) {
        emu_node_read_console(&node);
        while ((line = next(false)) != NULL) {
            if (strcmp(line, "after") == 0)
                after++;
            else if (strlen(line) == EMU_NODE_CONSOLE_MAX)
                cut++;
            else
                other++;
        }
    }
    CHECK(cut == 1 && after == 1 && other == 0);

    /* At end of file the last unterminated words still count. */
    put(out[1], "last words");
    close(out[1]);
    emu_node_read_console(&node);
    CHECK(next(false) == NULL);
    CHECK(emu_node_read_console(&node) == 0 && node.console_out == -1);
    line = next(true);
    CHECK(line != NULL && strcmp(line, "last words") == 0);
    CHECK(next(true) == NULL);

    /* Commands go to its input, newline-terminated. */
    CHECK(emu_node_send(&node, "ping all"));
    char got[16] = {0};
    CHECK(read(in[0], got, sizeof got - 1) == 9 && strcmp(got, "ping all\n") == 0);

    /* The log has every byte, and its tail is printed indented. */
    fflush(node.log);
    FILE *log = fopen(log_path, "r");
    fseek(log, 0, SEEK_END);
    CHECK(ftell(log) == (long)(strlen("tori node=5 event=boot t_ns=1\r\nhalf line\n") +
                               strlen(longer) + strlen("\nafter\nlast words")));
    fclose(log);
    char *text = NULL;
    size_t size = 0;
    FILE *tail = open_memstream(&text, &size);
    emu_node_print_log_tail(&node, tail, 2);
    fclose(tail);
    CHECK(strcmp(text, "    | after\n    | last words\n") == 0);
    free(text);
    free(longer);
    close(in[0]);
    emu_node_release(&node);
    CHECK(node.console_in == -1 && node.log == NULL);
    unlink(log_path);
}

int main(void)
{
    test_console();
    return check_report("emu.node_console");
}
