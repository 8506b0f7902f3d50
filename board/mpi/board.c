/*
 * Board "mpi": a node as an MPI rank (issue 18).  The node id is the MPI
 * rank, the torus links are MPI point-to-point messages (mpi_link.c), the
 * clock CLOCK_MONOTONIC.  One command line serves every rank: "%r" in any
 * argument is replaced by the rank, so
 *
 *   mpiexec -disable-auto-cleanup -n 8 tori-node-mpi --personality node%r.personality
 *       --key-file run.key [--control node%r.ctl | --start]
 *
 * gives each rank its own personality.  The console is the control channel
 * the launcher opened for this rank (--control PATH: a UNIX stream socket
 * the launcher listens on; a rank's stdin cannot be reached through
 * mpiexec, which forwards it to rank 0 only), or else stdout, with no input
 * but `--start`, which tells the node `start` as soon as it is ready (runs
 * across hosts, where the launcher's socket is out of reach).
 *
 * MPI cannot wake a sleeping process when a message lands, so idling is a
 * ppoll() on the control socket for at most --idle-us (default 500 us)
 * before the poll loop tests the links again: the price of never blocking
 * in MPI.
 */
#define _GNU_SOURCE
#include "board/board.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "board/host/node_files.h"
#include "board/mpi/mpi_board.h"
#include "config/tori_config.h"
#include "kernel/main.h"

#define PROGRAM "tori-node-mpi"
#define MPI_IDLE_DEFAULT_US 500
#define MPI_IDLE_MAX_US 100000

static int control_fd = -1;      /* -1: console on stdout */
static bool start_pending;       /* --start: "start\n" not handed out yet */
static uint64_t idle_slice_ns = MPI_IDLE_DEFAULT_US * 1000ull;

static int driver_argc;
static char **driver_argv;

void board_init(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
}

const char *board_name(void)
{
    return "mpi";
}


void board_console_write(const char *bytes, size_t length)
{
    if (control_fd < 0) {
        /* Line-buffered: whole lines only, so mpiexec does not interleave
         * the ranks' half lines. */
        fwrite(bytes, 1, length, stdout);
        return;
    }
    while (length > 0) {
        ssize_t sent = send(control_fd, bytes, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent <= 0)
            return; /* the launcher is gone: its EOF ends the node (below) */
        bytes += sent;
        length -= (size_t)sent;
    }
}

size_t board_console_read(char *buffer, size_t capacity)
{
    static const char start[] = "start\n";
    if (start_pending && capacity >= sizeof start - 1) {
        start_pending = false;
        memcpy(buffer, start, sizeof start - 1);
        return sizeof start - 1;
    }
    if (control_fd < 0 || capacity == 0)
        return 0;
    ssize_t got = recv(control_fd, buffer, capacity, MSG_DONTWAIT);
    if (got > 0)
        return (size_t)got;
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        /* The launcher closed its end or died: a rank it no longer watches
         * would be left behind, so it stops here. */
        fprintf(stderr, PROGRAM ": rank's control channel closed; stopping\n");
        board_halt(0);
    }
    return 0;
}

void board_idle_until(uint64_t deadline_ns)
{
    uint64_t now = board_now_ns();
    uint64_t wait = deadline_ns > now ? deadline_ns - now : 0;
    if (wait > idle_slice_ns)
        wait = idle_slice_ns;
    struct timespec timeout = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
    struct pollfd control = {control_fd, POLLIN, 0};
    if (ppoll(&control, control_fd >= 0 ? 1 : 0, &timeout, NULL) < 0 && errno != EINTR) {
        perror(PROGRAM ": ppoll");
        exit(71);
    }
}




/* No MPI_Finalize: it waits for every other rank, and a node halts alone
 * (a panic, `halt`, the launcher gone); mpiexec -disable-auto-cleanup
 * keeps the others running. */
_Noreturn void board_halt(int code)
{
    fflush(stdout);
    if (control_fd >= 0)
        close(control_fd);
    _exit(code);
}

int mpi_board_argument_count(void)
{
    return driver_argc;
}

const char *mpi_board_argument(int index)
{
    return index >= 0 && index < driver_argc ? driver_argv[index] : NULL;
}

static void usage(FILE *out)
{
    fputs("usage: mpiexec -disable-auto-cleanup -n N tori-node-mpi --personality FILE\n"
          "         [--job FILE] [--key-file FILE | --auth off]\n"
          "         [--control SOCKET | --start] [--idle-us N]\n"
          "Runs one tori node per MPI rank; the node id is the rank, the links MPI\n"
          "messages.  \"%r\" in any argument is replaced by the rank.\n"
          "--control SOCKET: the launcher's UNIX socket for this rank's console;\n"
          "without it events go to stdout and --start starts the node's job.\n"
          "--idle-us N: longest sleep between link polls (default 500).\n",
          out);
}

/* "%r" -> rank, in place of argv[i] (static room: command lines are short). */
static char expanded[64][512];

static bool expand_rank(int argc, char **argv, int rank)
{
    for (int i = 1; i < argc; i++) {
        const char *mark = strstr(argv[i], "%r");
        if (mark == NULL)
            continue;
        if (i >= (int)(sizeof expanded / sizeof expanded[0]))
            return false;
        int written = snprintf(expanded[i], sizeof expanded[i], "%.*s%d%s",
                               (int)(mark - argv[i]), argv[i], rank, mark + 2);
        if (written < 0 || (size_t)written >= sizeof expanded[i])
            return false;
        argv[i] = expanded[i];
    }
    return true;
}

static bool connect_control(const char *path)
{
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) {
        fprintf(stderr, PROGRAM ": --control '%s': path longer than %zu bytes\n", path,
                sizeof address.sun_path - 1);
        return false;
    }
    strcpy(address.sun_path, path);
    control_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (control_fd < 0 ||
        connect(control_fd, (struct sockaddr *)&address, sizeof address) != 0) {
        fprintf(stderr, PROGRAM ": --control '%s': cannot connect: %s\n", path,
                strerror(errno));
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
    /* A rank dies with its hydra proxy, even stopped dead (a launcher's
     * kill on this board, tori-emu's emu_mpi.h): none outlives the job. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    MPI_Init(&argc, &argv);
    /* Hydra tells survivors of a rank's death with SIGUSR1, whose default
     * action would end them too (set after MPI_Init, which may take it). */
    signal(SIGUSR1, SIG_IGN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!expand_rank(argc, argv, rank)) {
        fprintf(stderr, PROGRAM ": rank %d: an argument is too long after %%r\n", rank);
        return 2;
    }
    const char *control_path = NULL;
    int i = 1;
    for (; i < argc; i++) {
        int taken = node_files_option(PROGRAM, argc, argv, &i);
        if (taken < 0)
            return 2;
        if (taken > 0)
            continue;
        if (strcmp(argv[i], "--control") == 0 && i + 1 < argc) {
            control_path = argv[++i];
        } else if (strcmp(argv[i], "--start") == 0) {
            start_pending = true;
        } else if (strcmp(argv[i], "--idle-us") == 0 && i + 1 < argc) {
            char *end = NULL;
            long us = strtol(argv[++i], &end, 10);
            if (*end != '\0' || us < 1 || us > MPI_IDLE_MAX_US) {
                fprintf(stderr, PROGRAM ": --idle-us '%s': expected 1..%d microseconds\n",
                        argv[i], MPI_IDLE_MAX_US);
                return 2;
            }
            idle_slice_ns = (uint64_t)us * 1000u;
        } else if (strcmp(argv[i], "--control") == 0 || strcmp(argv[i], "--idle-us") == 0) {
            fprintf(stderr, PROGRAM ": %s needs a value\n", argv[i]);
            return 2;
        } else {
            break; /* the rest belongs to the link driver */
        }
    }
    driver_argc = argc - i;
    driver_argv = argv + i;
    if (control_path != NULL && start_pending) {
        fprintf(stderr, PROGRAM ": --control and --start contradict each other (the "
                            "launcher starts the job through the control channel)\n");
        return 2;
    }
    if (!node_files_load(PROGRAM))
        return 2;
    if (control_path != NULL && !connect_control(control_path))
        return 2;
    kernel_main();
}
