/* Node processes: start, signal, QMP, reap, stop (see emu_process.h). */
#define _GNU_SOURCE
#include "qemu/launcher/emu_process.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/personality.h"
#include "qemu/launcher/emu_console.h"
#include "qemu/launcher/emu_mpi.h"

#define TOOL "tori-emu"
#define NS_PER_S 1000000000ull
/* How long stopped instances get to exit before SIGKILL. */
#define EMU_STOP_GRACE_NS (3 * NS_PER_S)
/* Log lines shown with a failing node. */
#define EMU_TAIL_LINES 12
/* How long one QMP exchange may take (QEMU answers in well under that). */
#define EMU_QMP_TIMEOUT_MS 3000

static void describe_exit(int status, char *out, size_t capacity)
{
    if (WIFEXITED(status))
        snprintf(out, capacity, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, capacity, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, capacity, "ended (wait status 0x%x)", (unsigned)status);
}

void emu_process_show_tail(struct emu *emu, const struct emu_node *node)
{
    emu_progress_end(emu);
    fprintf(stderr, "  last lines of %s:\n", node->log_path);
    emu_node_print_log_tail(node, stderr, EMU_TAIL_LINES);
}

static struct emu_node *node_of_pid(struct emu *emu, pid_t pid)
{
    for (uint32_t i = 0; i < emu->count; i++)
        if (emu->nodes[i].pid == pid)
            return &emu->nodes[i];
    return NULL;
}

/* node's process is gone: its bookkeeping, and a complaint unless the
 * launcher asked for it.  status < 0: not known (an MPI rank is mpiexec's
 * child, not ours: its console's end is all the launcher sees). */
static void node_ended(struct emu *emu, struct emu_node *node, int status)
{
    pid_t pid = node->pid;
    /* Its last words first: the pipe holds them until we read. */
    emu->wake_ns = emu_now_ns(emu);
    emu_console_pump(emu, node, true);
    emu_node_close_console(node);
    if (node->qmp != NULL)
        qmp_close(node->qmp);
    bool was_ready = node->state == EMU_NODE_READY;
    node->pid = 0;
    node->wait_status = status;
    node->state = EMU_NODE_IDLE;
    node->hung = false;
    node->job_started = false;
    emu->running--;
    if (was_ready)
        emu->ready--;
    if (node->expect_exit || emu->stopping || emu->interrupted != 0) {
        node->expect_exit = false;
        return;
    }
    if (node->left && status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return; /* it left the job and halted (`leave`): a clean exit */
    char how[96];
    if (status >= 0)
        describe_exit(status, how, sizeof how);
    else
        snprintf(how, sizeof how, "%s", pid > 0 ? "closed its console (the rank ended)"
                                                : "never connected (the MPI world ended)");
    if (!node->panicked)
        emu_complain(emu, "node %u (%s, pid %d) %s%s%s", (unsigned)node->rank,
                     emu_node_board_name(node->board), (int)pid, how,
                     was_ready ? "" : " before it was ready",
                     status < 0 ? emu_mpi_kill_hint(emu) : "");
    if (status >= 0 || emu->mpi_killed == 0) /* else mpiexec's doing: its log says nothing */
        emu_process_show_tail(emu, node);
    emu->failed = true;
}

static void rank_ended(struct emu *emu, struct emu_node *node)
{
    node_ended(emu, node, -1);
}

void emu_process_reap(struct emu *emu)
{
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (emu_mpi_reaped(emu, pid, status))
            continue;
        struct emu_node *node = node_of_pid(emu, pid);
        if (node != NULL && node->board != EMU_BOARD_MPI)
            node_ended(emu, node, status);
    }
    emu_mpi_collect(emu, rank_ended);
}

bool emu_process_kill(struct emu *emu, struct emu_node *node)
{
    if (node->board != EMU_BOARD_MPI)
        return emu_process_signal(emu, node, SIGKILL);
    pid_t pid = node->pid;
    /* --mpi-kill kill: a real crash, for launchers that survive it (its
     * console's end is then no surprise). */
    if (emu->options->mpi_kill_real) {
        if (!emu_process_signal(emu, node, SIGKILL))
            return false;
        emu->mpi_killed++;
        node_ended(emu, node, -1);
        return true;
    }
    if (!emu_process_signal(emu, node, SIGSTOP))
        return false;
    node->stopped_dead = pid;
    node_ended(emu, node, -1);
    return true;
}

bool emu_process_signal(struct emu *emu, struct emu_node *node, int signal_number)
{
    (void)emu;
    if (node->pid <= 0)
        return false;
    return kill(node->pid, signal_number) == 0;
}

enum qmp_status emu_process_qmp(struct emu *emu, struct emu_node *node, const char *command,
                                const char *arguments, char *reply, size_t capacity)
{
    (void)emu;
    if (node->board != EMU_BOARD_QEMU || node->pid <= 0) {
        snprintf(reply, capacity, "node %u is not a running QEMU node",
                 (unsigned)node->rank);
        return QMP_CLOSED;
    }
    if (node->qmp == NULL) {
        node->qmp = malloc(sizeof *node->qmp);
        if (node->qmp == NULL) {
            snprintf(reply, capacity, "out of memory");
            return QMP_SYSTEM;
        }
        qmp_init(node->qmp);
    }
    if (node->qmp->fd < 0) {
        enum qmp_status status = qmp_connect(node->qmp, node->qmp_path, EMU_QMP_TIMEOUT_MS,
                                             reply, capacity);
        if (status != QMP_OK)
            return status;
    }
    return qmp_execute(node->qmp, command, arguments, EMU_QMP_TIMEOUT_MS, reply, capacity);
}

static bool write_personality(struct emu *emu, struct emu_node *node)
{
    const struct emu_options *o = emu->options;
    struct personality p;
    memset(&p, 0, sizeof p);
    personality_set_defaults(&p);
    uint32_t coords[CONFIG_MAX_DIMS];
    torus_geometry_coords(&emu->geometry, node->rank, coords);
    p.node_id = node->rank;
    p.boot_incarnation = node->incarnation;
    p.dims = (uint8_t)o->dims;
    for (unsigned d = 0; d < o->dims; d++) {
        p.dim_size[d] = (uint16_t)o->size[d];
        p.coord[d] = (uint16_t)coords[d];
    }
    p.mesh_mask = o->mesh_mask;
    p.tree_radix = o->radix;
    p.tree_layout = o->tree_layout;
    p.member_count = emu->count - o->spares;
    p.heartbeat_ms = o->heartbeat_ms;
    p.detect_timeout_ms = o->detect_timeout_ms;
    p.link_rto_ms = o->link_rto_ms;
    p.link_retries = o->link_retries;
    p.partition_policy = o->partition_policy;
    p.timeout_ceiling = o->timeout_ceiling;
    p.role = node->spare ? PERSONALITY_ROLE_SPARE : PERSONALITY_ROLE_COMPUTE;
    struct personality_error error;
    if (!personality_validate(&p, &error)) {
        char message[200];
        personality_format_error(&error, message, sizeof message);
        emu_complain(emu, "node %u: %s", (unsigned)node->rank, message);
        return false;
    }
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    FILE *file = fopen(node->personality_path, "wbe");
    bool written = file != NULL && fwrite(block, 1, sizeof block, file) == sizeof block;
    if (file != NULL && fclose(file) != 0)
        written = false;
    if (!written) {
        emu_complain(emu, "cannot write '%s': %s", node->personality_path, strerror(errno));
        return false;
    }
    return true;
}

bool emu_process_start(struct emu *emu, struct emu_node *node)
{
    if (node->pid != 0)
        return false;
    if (!write_personality(emu, node))
        return false;
    if (node->board == EMU_BOARD_MPI) {
        bool started = emu_mpi_start(emu, node);
        emu->failed |= !started;
        return started;
    }
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
        if (node->link[l].present)
            emu_links_drain(node->link[l].fd);
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_spawn_command(&emu->programs, node, &argv);
    if (emu->options->verbose) {
        emu_progress_end(emu);
        fprintf(stderr, TOOL ": node %u: ", (unsigned)node->rank);
        emu_argv_print(&argv, stderr);
    }
    if (node->log != NULL) {
        fprintf(node->log, "tori-emu: start %u (incarnation %u):", node->starts + 1,
                (unsigned)node->incarnation);
        for (unsigned i = 0; i < argv.count; i++)
            fprintf(node->log, " %s", argv.arg[i]);
        fputc('\n', node->log);
        fflush(node->log);
    }
    char error[256];
    bool started = emu_spawn_start(&emu->programs, node, &argv, error, sizeof error);
    emu_argv_free(&argv);
    if (node->pid > 0) {
        node->state = EMU_NODE_STARTED;
        node->starts++;
        node->started_ns = emu_now_ns(emu);
        node->ready_ns = 0;
        node->panicked = false;
        node->left = false;
        node->ping_asked = node->ping_done = false;
        emu->running++;
    }
    if (!started) {
        emu_complain(emu, "node %u: %s", (unsigned)node->rank, error);
        emu->failed = true;
    }
    return started;
}

void emu_process_rebooting(struct emu *emu, struct emu_node *node)
{
    if (node->state == EMU_NODE_READY && emu->ready > 0)
        emu->ready--;
    node->state = EMU_NODE_STARTED;
    node->job_started = false;
    node->ready_ns = 0;
}

void emu_process_stop_all(struct emu *emu)
{
    emu->stopping = true;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->pid <= 0)
            continue;
        node->expect_exit = true;
        emu_process_signal(emu, node, SIGTERM);
        if (node->hung)
            emu_process_signal(emu, node, SIGCONT);
    }
    uint64_t deadline = emu_now_ns(emu) + EMU_STOP_GRACE_NS;
    while (emu->running > 0 && emu_now_ns(emu) < deadline)
        emu_step(emu, 50);
    for (uint32_t r = 0; r < emu->count; r++)
        if (emu->nodes[r].pid > 0)
            emu_process_signal(emu, &emu->nodes[r], SIGKILL);
    /* The MPI world: ranks are mpiexec's children, never ours to wait for;
     * those stopped dead are killed first. */
    for (uint32_t r = 0; r < emu->count; r++)
        if (emu->nodes[r].stopped_dead > 0) {
            kill(emu->nodes[r].stopped_dead, SIGKILL);
            emu->nodes[r].stopped_dead = 0;
        }
    emu_mpi_stop(emu);
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->board == EMU_BOARD_MPI && node->state != EMU_NODE_IDLE) {
            emu_node_close_console(node);
            node->pid = 0;
            node->state = EMU_NODE_IDLE;
            emu->running--;
        }
    }
    /* SIGKILL cannot be refused: wait for every last one. */
    while (emu->running > 0) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno == ECHILD)
            break;
        struct emu_node *node = pid > 0 ? node_of_pid(emu, pid) : NULL;
        if (node != NULL) {
            emu_node_close_console(node);
            node->pid = 0;
            node->wait_status = status;
            node->state = EMU_NODE_IDLE;
            emu->running--;
        }
    }
}

bool emu_process_cpu_ns(const struct emu_node *node, uint64_t *cpu_ns)
{
    if (node->pid <= 0 || node->board == EMU_BOARD_MPI)
        return false;
    char path[48], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)node->pid);
    FILE *file = fopen(path, "re");
    if (file == NULL)
        return false;
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    /* The command name may hold anything: fields are counted after its ')'. */
    const char *at = strrchr(text, ')');
    unsigned long long utime = 0, stime = 0;
    long ticks = sysconf(_SC_CLK_TCK);
    if (at == NULL || ticks <= 0 ||
        sscanf(at + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
               &stime) != 2)
        return false;
    *cpu_ns = (utime + stime) * (NS_PER_S / (uint64_t)ticks);
    return true;
}
