/*
 * Board "host": a node as a Linux process.  The console is stdout, the clock
 * CLOCK_MONOTONIC, idling is ppoll() on the link sockets until the next timer
 * deadline, and the personality comes from a file named on the command line:
 *
 *   tori-node --personality FILE [--job FILE] [--key-file FILE | --auth off]
 *             [driver options...]
 *
 * Without --job the node runs no application.  Its links are UDP sockets
 * any local process can send to, so a node needs a job key (issue 20): in
 * the job block, or in --key-file (16 raw bytes, readable by its owner
 * only: the launcher writes one per run); `--auth off` runs keyless.
 */
#define _GNU_SOURCE
#include "board/board.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "board/host/host.h"
#include "board/host/node_files.h"
#include "config/tori_config.h"
#include "kernel/main.h"

static struct pollfd watched[HOST_MAX_WATCHED_FDS];
static int watched_count;

/* Restored at exit: a terminal's file status is shared with the shell. */
static int stdin_flags = -1;

static int driver_argc;
static char **driver_argv;

void board_init(void)
{
    /* Line-buffered events even when stdout is a pipe to the launcher. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    stdin_flags = fcntl(STDIN_FILENO, F_GETFL);
    if (stdin_flags >= 0 &&
        fcntl(STDIN_FILENO, F_SETFL, stdin_flags | O_NONBLOCK) == 0)
        host_watch_fd(STDIN_FILENO);
}

const char *board_name(void)
{
    return "host";
}


void board_console_write(const char *bytes, size_t length)
{
    fwrite(bytes, 1, length, stdout);
    fflush(stdout);
}

/* stdin is the control channel; at EOF it is dropped from the idle set so
 * ppoll() does not spin on a closed pipe. */
static bool console_input_open = true;

size_t board_console_read(char *buffer, size_t capacity)
{
    if (!console_input_open || capacity == 0)
        return 0;
    ssize_t got = read(STDIN_FILENO, buffer, capacity);
    if (got > 0)
        return (size_t)got;
    if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        console_input_open = false;
        for (int i = 0; i < watched_count; i++)
            if (watched[i].fd == STDIN_FILENO)
                watched[i].fd = -1; /* ppoll ignores negative descriptors */
    }
    return 0;
}

bool host_watch_fd(int fd)
{
    if (watched_count >= HOST_MAX_WATCHED_FDS)
        return false;
    watched[watched_count].fd = fd;
    watched[watched_count].events = POLLIN;
    watched_count++;
    return true;
}

int host_argument_count(void)
{
    return driver_argc;
}

const char *host_argument(int index)
{
    return index >= 0 && index < driver_argc ? driver_argv[index] : NULL;
}

void board_idle_until(uint64_t deadline_ns)
{
    struct timespec timeout;
    struct timespec *timeout_pointer = NULL;
    if (deadline_ns != UINT64_MAX) {
        uint64_t now = board_now_ns();
        uint64_t wait = deadline_ns > now ? deadline_ns - now : 0;
        timeout.tv_sec = (time_t)(wait / 1000000000u);
        timeout.tv_nsec = (long)(wait % 1000000000u);
        timeout_pointer = &timeout;
    }
    if (ppoll(watched, (nfds_t)watched_count, timeout_pointer, NULL) < 0 &&
        errno != EINTR) {
        perror("tori-node: ppoll");
        exit(71);
    }
}




_Noreturn void board_halt(int code)
{
    fflush(stdout);
    if (stdin_flags >= 0)
        fcntl(STDIN_FILENO, F_SETFL, stdin_flags);
    exit(code);
}

static void usage(FILE *out)
{
    fputs("usage: tori-node --personality FILE [--job FILE] [--key-file FILE | --auth off]\n"
          "                 [link options]\n"
          "Runs one tori node as a host process; events go to stdout.\n"
          "--job FILE names the job block (tori-personality --job-out): the\n"
          "application the node runs after start; without it, none.\n"
          "--key-file FILE holds the job key (16 bytes, mode 0600) that tags every\n"
          "frame when the job block has none; --auth off runs without a key (any\n"
          "local process can then forge frames).\n",
          out);
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        int taken = node_files_option("tori-node", argc, argv, &i);
        if (taken < 0)
            return 2;
        if (taken == 0)
            break; /* the rest belongs to the link driver */
    }
    driver_argc = argc - i;
    driver_argv = argv + i;
    if (!node_files_load("tori-node"))
        return 2;
    kernel_main();
}
