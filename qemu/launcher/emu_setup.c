/* Before the first node starts, and after the last stopped (see emu_setup.h). */
#define _GNU_SOURCE
#include "qemu/launcher/emu_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "qemu/launcher/emu_app.h"
#include "qemu/launcher/emu_auth.h"
#include "qemu/launcher/emu_mpi.h"

static char *format_alloc(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *format_alloc(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    char *text = NULL;
    if (vasprintf(&text, format, arguments) < 0)
        text = NULL;
    va_end(arguments);
    return text;
}

static bool make_directories(const char *path)
{
    char partial[PATH_MAX];
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof partial)
        return false;
    memcpy(partial, path, length + 1);
    for (size_t i = 1; i <= length; i++) {
        if (partial[i] != '/' && partial[i] != '\0')
            continue;
        char saved = partial[i];
        partial[i] = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return false;
        partial[i] = saved;
    }
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

static bool prepare_out_dir(struct emu *emu)
{
    char resolved[PATH_MAX];
    if (emu->options->out_dir != NULL) {
        if (!make_directories(emu->options->out_dir) ||
            realpath(emu->options->out_dir, resolved) == NULL) {
            emu_complain(emu, "cannot create --out directory '%s': %s (expected a writable "
                              "directory)",
                         emu->options->out_dir, strerror(errno));
            return false;
        }
    } else {
        char template[] = "/tmp/tori-emu-XXXXXX";
        if (mkdtemp(template) == NULL) {
            emu_complain(emu, "cannot create a directory under /tmp: %s", strerror(errno));
            return false;
        }
        snprintf(resolved, sizeof resolved, "%s", template);
    }
    emu->out_dir = strdup(resolved);
    emu->out_dir_fd = open(resolved, O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *events_path = format_alloc("%s/events.jsonl", resolved);
    emu->events = events_path != NULL ? fopen(events_path, "we") : NULL;
    free(events_path);
    if (emu->out_dir == NULL || emu->out_dir_fd < 0 || emu->events == NULL) {
        emu_complain(emu, "cannot write in '%s': %s", resolved, strerror(errno));
        return false;
    }
    setvbuf(emu->events, NULL, _IOLBF, 0);
    return true;
}

static bool check_programs(struct emu *emu, bool want_qemu, bool want_host)
{
    const struct emu_options *o = emu->options;
    const struct emu_programs wanted = {
        .qemu = o->qemu, .image = o->image, .node_binary = o->node_binary, .job = o->job};
    char error[EMU_PATH_MAX + 256];
    if (!emu_spawn_check_programs(&wanted, want_qemu, want_host, &emu->program_paths, error,
                                  sizeof error)) {
        emu_complain(emu, "%s", error);
        return false;
    }
    return true;
}

static enum emu_board board_of(const struct emu *emu, uint32_t rank)
{
    switch (emu->options->boards) {
    case EMU_BOARDS_HOST:
        return EMU_BOARD_HOST;
    case EMU_BOARDS_MPI:
        return EMU_BOARD_MPI;
    case EMU_BOARDS_MIXED: {
        /* A checkerboard: on even-sized tori every link joins QEMU to host. */
        uint32_t sum = 0;
        for (unsigned d = 0; d < torus_geometry_dims(&emu->geometry); d++)
            sum += torus_geometry_coord(&emu->geometry, rank, d);
        return (sum & 1u) == 0 ? EMU_BOARD_QEMU : EMU_BOARD_HOST;
    }
    case EMU_BOARDS_QEMU:
    default:
        return EMU_BOARD_QEMU;
    }
}

static bool raise_file_limit(struct emu *emu, uint64_t needed)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return true;
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur >= needed)
        return true;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
        emu_complain(emu, "this torus needs about %llu open files but the limit is %llu "
                          "(expected a higher `ulimit -n`, or a smaller torus)",
                     (unsigned long long)needed, (unsigned long long)limit.rlim_max);
        return false;
    }
    limit.rlim_cur = needed;
    setrlimit(RLIMIT_NOFILE, &limit);
    return true;
}

static bool open_links(struct emu *emu)
{
    if (emu->options->boards == EMU_BOARDS_MPI)
        return emu_mpi_prepare(emu); /* links are MPI messages; consoles sockets */
    uint32_t next_port = emu->options->base_port;
    int smallest = INT_MAX;
    char error[256];
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
            if (!node->link[l].present)
                continue;
            int granted = 0;
            uint16_t port = next_port != 0 ? (uint16_t)next_port++ : 0;
            if (!emu_links_open_socket(&node->link[l], port, &granted, error,
                                       sizeof error)) {
                emu_complain(emu, "node %u link %s: %s", (unsigned)r,
                             torus_geometry_link_name(l), error);
                return false;
            }
            if (granted < smallest)
                smallest = granted;
        }
    }
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
            struct emu_link *link = &node->link[l];
            if (!link->present)
                continue;
            link->peer_port = emu->nodes[link->peer].link[link->peer_link].port;
            if (!emu_links_connect(link, error, sizeof error)) {
                emu_complain(emu, "node %u link %s: %s", (unsigned)r,
                             torus_geometry_link_name(l), error);
                return false;
            }
        }
    }
    if (smallest != INT_MAX && smallest < EMU_LINKS_RCVBUF_BYTES)
        emu_complain(emu, "warning: link receive buffers are %d bytes, not %d (frames may "
                          "be lost under load; raise net.core.rmem_max or run as root)",
                     smallest, EMU_LINKS_RCVBUF_BYTES);
    return true;
}

bool emu_setup_prepare(struct emu *emu)
{
    const struct emu_options *o = emu->options;
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++)
        mesh[d] = ((o->mesh_mask >> d) & 1u) != 0;
    struct torus_geometry_error geometry_error;
    if (torus_geometry_init(&emu->geometry, o->dims, o->size, mesh, &geometry_error) !=
        TORUS_GEOMETRY_OK) {
        char reason[160];
        torus_geometry_format_error(&geometry_error, reason, sizeof reason);
        emu_complain(emu, "--dims '%s' is invalid: %s", o->dims_text, reason);
        return false;
    }
    emu->count = torus_geometry_node_count(&emu->geometry);
    char error[256];
    if (!emu_links_check_ports(&emu->geometry, o->base_port, error, sizeof error)) {
        emu_complain(emu, "%s", error);
        return false;
    }
    emu->nodes = calloc(emu->count, sizeof *emu->nodes);
    /* Every console and signals; MPI ranks' control sockets too. */
    emu->poll_set = calloc(2u * emu->count + 1u, sizeof *emu->poll_set);
    emu->poll_rank = calloc(2u * emu->count + 1u, sizeof *emu->poll_rank);
    if (emu->nodes == NULL || emu->poll_set == NULL || emu->poll_rank == NULL) {
        emu_complain(emu, "out of memory for %u nodes", (unsigned)emu->count);
        return false;
    }
    bool want_qemu = false, want_host = false;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        emu_node_init(node, r);
        node->board = board_of(emu, r);
        node->spare = r >= emu->count - o->spares;
        want_qemu |= node->board == EMU_BOARD_QEMU;
        want_host |= node->board == EMU_BOARD_HOST || node->board == EMU_BOARD_MPI;
        emu_links_plan(&emu->geometry, r, node->link);
    }
    if (emu->hooks != NULL && emu->hooks->prepare != NULL && !emu->hooks->prepare(emu))
        return false;
    if (!check_programs(emu, want_qemu, want_host))
        return false;
    char mpiexec[EMU_PATH_MAX];
    if (o->boards == EMU_BOARDS_MPI &&
        !emu_spawn_find_program(o->mpiexec, mpiexec, sizeof mpiexec)) {
        emu_complain(emu, "--mpiexec '%s' is not an executable program (expected MPICH's "
                          "mpiexec: Debian packages mpich, libmpich-dev)", o->mpiexec);
        return false;
    }
    uint64_t files = emu_links_needed(&emu->geometry) + 5ull * emu->count + 64;
    if (!raise_file_limit(emu, files) || !prepare_out_dir(emu))
        return false;
    emu->programs.qemu = emu->program_paths.qemu;
    emu->programs.image = emu->program_paths.image;
    emu->programs.node_binary = emu->program_paths.node_binary;
    emu->programs.out_dir = emu->out_dir;
    if (emu->options->pcap && mkdirat(emu->out_dir_fd, "pcap", 0755) != 0 && errno != EEXIST) {
        emu_complain(emu, "cannot create '%s/pcap': %s", emu->out_dir, strerror(errno));
        return false;
    }
    if (emu->options->app_set && !emu_app_write_job(emu, emu->program_paths.job,
                                                    sizeof emu->program_paths.job))
        return false;
    emu->programs.job = emu->program_paths.job[0] != '\0' ? emu->program_paths.job : NULL;
    if (!emu_auth_prepare(emu))
        return false;
    struct sockaddr_un unix_address;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        node->personality_path = format_alloc("%s/node%u.personality", emu->out_dir, r);
        node->log_path = format_alloc("%s/node%u.log", emu->out_dir, r);
        node->qmp_name = format_alloc("node%u.qmp", r);
        node->pcap = emu->options->pcap;
        /* Unix socket paths hold 107 bytes; reach a deep one through our fd. */
        if (strlen(emu->out_dir) + 16 < sizeof unix_address.sun_path)
            node->qmp_path = format_alloc("%s/node%u.qmp", emu->out_dir, r);
        else
            node->qmp_path = format_alloc("/proc/self/fd/%d/node%u.qmp", emu->out_dir_fd, r);
        if (node->personality_path == NULL || node->log_path == NULL ||
            node->qmp_name == NULL || node->qmp_path == NULL) {
            emu_complain(emu, "out of memory");
            return false;
        }
        node->log = fopen(node->log_path, "we");
        if (node->log == NULL) {
            emu_complain(emu, "cannot create '%s': %s", node->log_path, strerror(errno));
            return false;
        }
    }
    return open_links(emu);
}

bool emu_setup_signals(struct emu *emu)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    emu->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (emu->signal_fd < 0) {
        emu_complain(emu, "signalfd: %s", strerror(errno));
        return false;
    }
    return true;
}

void emu_setup_release(struct emu *emu)
{
    if (emu->hooks != NULL && emu->hooks->release != NULL)
        emu->hooks->release(emu);
    for (uint32_t r = 0; emu->nodes != NULL && r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
            if (node->link[l].fd >= 0)
                close(node->link[l].fd);
        emu_node_release(node);
    }
    free(emu->nodes);
    free(emu->poll_set);
    free(emu->poll_rank);
    emu_ping_free(&emu->ping);
    emu_reach_close(emu);
    if (emu->events != NULL)
        fclose(emu->events);
    if (emu->signal_fd >= 0)
        close(emu->signal_fd);
    if (emu->out_dir_fd >= 0)
        close(emu->out_dir_fd);
    free(emu->out_dir);
}
