/* The MPI board's world under the launcher (see emu_mpi.h). */
#define _GNU_SOURCE
#include "qemu/launcher/emu_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qemu/launcher/emu_spawn.h"

/* The ranks' longest sleep between link polls (tori-node-mpi --idle-us). */
#define EMU_MPI_IDLE_US 500u
#define EMU_MPI_IDLE_MAX_US 20000u

bool emu_mpi_prepare(struct emu *emu)
{
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        struct sockaddr_un address;
        memset(&address, 0, sizeof address);
        address.sun_family = AF_UNIX;
        int length = snprintf(address.sun_path, sizeof address.sun_path, "%s/node%u.ctl",
                              emu->out_dir, (unsigned)r);
        if (length < 0 || (size_t)length >= sizeof address.sun_path) {
            emu_complain(emu, "--out '%s' is too long for the MPI board's control sockets "
                              "(expected a path under %zu bytes)", emu->out_dir,
                         sizeof address.sun_path - 16);
            return false;
        }
        unlink(address.sun_path);
        node->control_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (node->control_listen < 0 ||
            bind(node->control_listen, (struct sockaddr *)&address, sizeof address) != 0 ||
            listen(node->control_listen, 1) != 0) {
            emu_complain(emu, "cannot listen on '%s': %s", address.sun_path, strerror(errno));
            return false;
        }
    }
    return true;
}

/* The child: mpiexec with its output in <out>/mpiexec.log, dying with us. */
static _Noreturn void exec_mpiexec(struct emu *emu, pid_t parent, char **argv)
{
    emu_spawn_child_reset(parent);
    int null = open("/dev/null", O_RDONLY);
    int log = openat(emu->out_dir_fd, "mpiexec.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null < 0 || log < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(log, STDOUT_FILENO) < 0 ||
        dup2(log, STDERR_FILENO) < 0 || chdir(emu->out_dir) != 0)
        _exit(126);
    execvp(argv[0], argv);
    fprintf(stderr, "tori-emu: cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(127);
}

static bool spawn_world(struct emu *emu)
{
    const struct emu_programs *p = &emu->programs;
    char count[16], idle[16];
    snprintf(count, sizeof count, "%u", (unsigned)emu->count);
    /* A rank cannot sleep until a message lands: it wakes every idle slice
     * to test its links.  Beyond 16 ranks the slice grows with them, as
     * the detector's timings do, so the wake-ups of all ranks together
     * stay within what this machine's cores can run. */
    unsigned idle_us = EMU_MPI_IDLE_US * (emu->count > 16 ? emu->count / 16 : 1);
    snprintf(idle, sizeof idle, "%u", idle_us < EMU_MPI_IDLE_MAX_US ? idle_us
                                                                      : EMU_MPI_IDLE_MAX_US);
    char *argv[32];
    unsigned n = 0;
    argv[n++] = (char *)emu->options->mpiexec;
    argv[n++] = "-disable-auto-cleanup";
    argv[n++] = "-genv";
    argv[n++] = "UCX_TLS";
    argv[n++] = "sm,self";
    argv[n++] = "-wdir";
    argv[n++] = emu->out_dir;
    argv[n++] = "-n";
    argv[n++] = count;
    argv[n++] = (char *)p->node_binary;
    argv[n++] = "--personality";
    argv[n++] = "node%r.personality";
    argv[n++] = "--control";
    argv[n++] = "node%r.ctl";
    argv[n++] = "--idle-us";
    argv[n++] = idle;
    if (p->job != NULL) {
        argv[n++] = "--job";
        argv[n++] = (char *)p->job;
    }
    if (p->auth_off) {
        argv[n++] = "--auth";
        argv[n++] = "off";
    } else if (p->key_file != NULL) {
        argv[n++] = "--key-file";
        argv[n++] = (char *)p->key_file;
    }
    argv[n] = NULL;
    if (emu->options->verbose) {
        emu_progress_end(emu);
        fprintf(stderr, "tori-emu: the MPI world:");
        for (unsigned i = 0; i < n; i++)
            fprintf(stderr, " %s", argv[i]);
        fputc('\n', stderr);
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        emu_complain(emu, "cannot start mpiexec: %s", strerror(errno));
        return false;
    }
    if (pid == 0)
        exec_mpiexec(emu, parent, argv);
    emu->mpiexec_pid = pid;
    return true;
}

bool emu_mpi_start(struct emu *emu, struct emu_node *node)
{
    if (node->starts > 0) {
        emu_complain(emu, "node %u: an MPI rank cannot be started again (an MPI world has "
                          "no way back in)", (unsigned)node->rank);
        return false;
    }
    node->state = EMU_NODE_STARTED;
    node->starts++;
    node->started_ns = emu_now_ns(emu);
    node->ready_ns = 0;
    emu->running++;
    if (node->rank + 1u < emu->count)
        return true; /* the world starts with its last rank */
    return spawn_world(emu);
}

unsigned emu_mpi_poll_fds(const struct emu *emu, struct pollfd *set, uint32_t *rank,
                          unsigned n)
{
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_node *node = &emu->nodes[r];
        if (node->control_listen < 0 || node->state != EMU_NODE_STARTED || node->pid != 0)
            continue;
        set[n].fd = node->control_listen;
        set[n].events = POLLIN;
        rank[n++] = r;
    }
    return n;
}

void emu_mpi_accept(struct emu *emu, struct emu_node *node)
{
    int fd = accept4(node->control_listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    struct ucred peer;
    socklen_t length = sizeof peer;
    int out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    /* Only a process of ours may speak for a rank. */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.pid <= 0 ||
        peer.uid != getuid() || out < 0) {
        emu_complain(emu, "node %u: cannot identify the rank on its control socket "
                          "(expected a process of this user)", (unsigned)node->rank);
        emu->failed = true;
        close(fd);
        if (out >= 0)
            close(out);
        return;
    }
    /* One connection per rank and life: later ones are refused. */
    close(node->control_listen);
    node->control_listen = -1;
    node->pid = peer.pid;
    node->console_in = fd;
    node->console_out = out;
}

const char *emu_mpi_kill_hint(const struct emu *emu)
{
    return emu->mpi_killed > 0 ? ": after a real SIGKILL of a rank mpiexec took the others "
                                 "down (expected --mpi-kill stop, or a launcher that "
                                 "survives SIGKILL)"
                               : "";
}

bool emu_mpi_reaped(struct emu *emu, int pid, int status)
{
    if (emu->mpiexec_pid <= 0 || pid != emu->mpiexec_pid)
        return false;
    emu->mpiexec_pid = 0;
    emu->mpiexec_status = status;
    emu->mpi_world_ended = true;
    if (!emu->stopping && emu->interrupted == 0) {
        emu_complain(emu, "mpiexec ended (wait status 0x%x) while the run went on; see "
                          "%s/mpiexec.log%s", (unsigned)status, emu->out_dir,
                     emu_mpi_kill_hint(emu));
        emu->failed = true;
    }
    return true;
}

void emu_mpi_collect(struct emu *emu, void (*ended)(struct emu *, struct emu_node *))
{
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->board != EMU_BOARD_MPI || node->state == EMU_NODE_IDLE)
            continue;
        bool console_gone = node->pid > 0 && node->console_out < 0;
        bool never_came = node->pid == 0 && emu->mpi_world_ended;
        if (console_gone || never_came)
            ended(emu, node);
    }
}

void emu_mpi_stop(struct emu *emu)
{
    if (emu->mpiexec_pid <= 0)
        return;
    kill(emu->mpiexec_pid, SIGTERM);
    for (unsigned waited = 0; waited < 30; waited++) {
        int status = 0;
        if (waitpid(emu->mpiexec_pid, &status, WNOHANG) == emu->mpiexec_pid) {
            emu->mpiexec_pid = 0;
            return;
        }
        usleep(100000);
    }
    kill(emu->mpiexec_pid, SIGKILL);
    waitpid(emu->mpiexec_pid, NULL, 0);
    emu->mpiexec_pid = 0;
}
