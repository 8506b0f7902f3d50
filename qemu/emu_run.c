#define _GNU_SOURCE
#include "qemu/emu_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/personality.h"
#include "qemu/emu_faults.h"
#include "qemu/event_json.h"
#include "qemu/event_line.h"

#define TOOL "tori-emu"
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* How long stopped instances get to exit before SIGKILL. */
#define EMU_STOP_GRACE_NS (3 * NS_PER_S)
/* Log lines shown with a failing node. */
#define EMU_TAIL_LINES 12

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * NS_PER_S + (uint64_t)now.tv_nsec;
}

uint64_t emu_now_ns(const struct emu *emu)
{
    return monotonic_ns() - emu->origin_ns;
}

uint64_t emu_job_ns(const struct emu *emu)
{
    return emu->job_started ? emu_now_ns(emu) - emu->job_start_ns : 0;
}

static void progress_end(struct emu *emu)
{
    if (emu->progress_open) {
        fputc('\n', stderr);
        emu->progress_open = false;
    }
}

__attribute__((format(printf, 2, 3))) static void complain(struct emu *emu,
                                                           const char *format, ...)
{
    progress_end(emu);
    va_list arguments;
    va_start(arguments, format);
    fputs(TOOL ": ", stderr);
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
}

/* Nothing failed and nobody asked us to stop. */
static bool keep_going(const struct emu *emu)
{
    return !emu->failed && emu->interrupted == 0;
}

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

static void show_tail(struct emu *emu, const struct emu_node *node)
{
    progress_end(emu);
    fprintf(stderr, "  last lines of %s:\n", node->log_path);
    emu_node_print_log_tail(node, stderr, EMU_TAIL_LINES);
}

/* ---- events ---- */

static void count_event(struct emu *emu, const char *name)
{
    for (unsigned i = 0; i < EMU_EVENT_KINDS; i++) {
        struct emu_event_count *kind = &emu->event_counts[i];
        if (kind->name[0] == '\0')
            snprintf(kind->name, sizeof kind->name, "%s", name);
        if (strcmp(kind->name, name) == 0) {
            kind->count++;
            return;
        }
    }
}

/*
 * Events a person need not see one by one (they are counted in the
 * summary): start-up chatter and ping answers.  --demo and --verbose show
 * them all; a link going down is always shown.
 */
static bool is_routine(const struct emu *emu, const struct event_line *line)
{
    const char *name = line->name;
    if (strcmp(name, "link") == 0) {
        const char *state = event_line_get(line, "state");
        return state != NULL && strcmp(state, "up") == 0;
    }
    /* A fault run on a big torus: one line per node per view is too many
     * (the agreement checks summarize them). */
    if (emu->faults != NULL && emu->count > 16 &&
        (strcmp(name, "view") == 0 || strcmp(name, "started") == 0 ||
         strcmp(name, "link-cut") == 0))
        return true;
    return strcmp(name, "boot") == 0 || strcmp(name, "ready") == 0 ||
           strcmp(name, "network") == 0 || strcmp(name, "ping") == 0 ||
           strcmp(name, "ping-done") == 0 || strcmp(name, "view-state") == 0;
}

static void show_event(struct emu *emu, const struct emu_node *node,
                       const struct event_line *line)
{
    progress_end(emu);
    /* Times from the job start once it started (fault scripts count from it). */
    double seconds = emu->job_started
                         ? ((double)emu_now_ns(emu) - (double)emu->job_start_ns) / 1e9
                         : (double)emu_now_ns(emu) / 1e9;
    fprintf(emu->human, "  %+9.3fs  node %-4u %-14s", seconds, (unsigned)node->rank,
            line->name);
    for (unsigned i = 0; i < line->field_count; i++) {
        const struct event_field *field = &line->fields[i];
        fprintf(emu->human, field->quoted ? " %s=\"%s\"" : " %s=%s", field->key,
                field->value);
    }
    fputc('\n', emu->human);
    fflush(emu->human);
}

static void on_ping(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    uint64_t destination = 0, hops = UINT32_MAX, rtt = 0, ok = 0;
    if (emu->ping.answered == NULL)
        return; /* a ping nobody asked for through --ping */
    if (!event_line_get_u64(line, "dst", &destination) ||
        !event_line_get_u64(line, "ok", &ok) || destination > UINT32_MAX) {
        emu->ping.bad_records++;
        return;
    }
    event_line_get_u64(line, "hops", &hops);
    if (ok != 0 && !event_line_get_u64(line, "rtt_ns", &rtt)) {
        emu->ping.bad_records++;
        return;
    }
    emu_ping_record(&emu->ping, &emu->geometry, node->rank, (uint32_t)destination,
                    hops > UINT32_MAX ? UINT32_MAX : (uint32_t)hops, rtt, ok != 0);
}

static void finish_ping(struct emu *emu, struct emu_node *node)
{
    if (node->ping_asked && !node->ping_done) {
        node->ping_done = true;
        if (emu->ping_active > 0)
            emu->ping_active--;
    }
}

static void on_event(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    const char *name = line->name;
    count_event(emu, name);
    if (emu->observer != NULL)
        emu->observer(emu->observer_context, node, line);
    if (strcmp(name, "ready") == 0) {
        uint64_t incarnation = 0;
        if (event_line_get_u64(line, "incarnation", &incarnation) && incarnation <= UINT32_MAX)
            node->reported_incarnation = (uint32_t)incarnation;
        if (node->state == EMU_NODE_STARTED) {
            node->state = EMU_NODE_READY;
            node->ready_ns = emu_now_ns(emu);
            emu->ready++;
            if (emu->ready == emu->running)
                emu->all_ready_ns = node->ready_ns;
            if (emu->job_started && !node->job_started) {
                /* Back (or new) after the job started: it joins the job. */
                emu_faults_on_ready(emu, node);
                if (emu_node_send(node, "start"))
                    node->job_started = true;
                else
                    complain(emu, "node %u: cannot send `start` to its console",
                             (unsigned)node->rank);
            }
        }
    } else if (strcmp(name, "panic") == 0) {
        const char *reason = event_line_get(line, "reason");
        node->panicked = true;
        snprintf(node->panic_reason, sizeof node->panic_reason, "%s",
                 reason != NULL ? reason : "(no reason given)");
        complain(emu, "node %u (%s) panicked: %s", (unsigned)node->rank,
                 emu_node_board_name(node->board), node->panic_reason);
        emu->failed = true;
    } else if (strcmp(name, "ping") == 0) {
        on_ping(emu, node, line);
    } else if (strcmp(name, "ping-done") == 0) {
        uint64_t ok = 0, failed = 0;
        event_line_get_u64(line, "ok", &ok);
        event_line_get_u64(line, "failed", &failed);
        node->ping_ok = (unsigned)ok;
        node->ping_failed = (unsigned)failed;
        finish_ping(emu, node);
    } else if (strcmp(name, "console-error") == 0 && node->ping_asked &&
               !node->ping_done) {
        const char *reason = event_line_get(line, "reason");
        complain(emu, "node %u refused `ping all`: %s (expected a node image with "
                      "the ping command)",
                 (unsigned)node->rank, reason != NULL ? reason : "console error");
        finish_ping(emu, node);
        emu->failed = true;
    }
    if (emu->faults != NULL)
        emu_faults_on_event(emu, node, line);
    if (!is_routine(emu, line) || emu->options->verbose)
        show_event(emu, node, line);
}

static void on_line(struct emu *emu, struct emu_node *node, const char *text,
                    size_t length)
{
    static struct event_line line;
    const char *reason = NULL;
    enum event_line_status status = event_line_parse(text, length, &line, &reason);
    if (status == EVENT_LINE_PLAIN) {
        emu->plain_lines++;
        return;
    }
    if (status == EVENT_LINE_MALFORMED) {
        emu->malformed_lines++;
        node->malformed++;
        return;
    }
    emu->event_lines++;
    node->events++;
    static char json[EVENT_JSON_MAX];
    size_t json_length = event_json_format(&line, node->rank, emu_now_ns(emu), json,
                                           sizeof json);
    if (json_length > 0) {
        if (emu->events != NULL)
            fprintf(emu->events, "%s\n", json);
        if (emu->options->json) {
            progress_end(emu);
            fprintf(stdout, "%s\n", json);
        }
    }
    on_event(emu, node, &line);
}

/*
 * Reads what a node wrote (a bounded amount per call, to be fair to the
 * others).  exited: its process is gone, so read everything waiting and
 * take the last partial line too, but never wait for more (a grandchild
 * might hold the pipe open).
 */
static void pump_console(struct emu *emu, struct emu_node *node, bool exited)
{
    for (unsigned turn = 0; (exited || turn < 64) && node->console_out >= 0; turn++) {
        ssize_t got = emu_node_read_console(node);
        bool at_end = got == 0 || (exited && got < 0);
        size_t length = 0;
        const char *text;
        while ((text = emu_node_next_line(node, at_end, &length)) != NULL)
            on_line(emu, node, text, length);
        if (got <= 0)
            break;
    }
}

/* ---- processes ---- */

static struct emu_node *node_of_pid(struct emu *emu, pid_t pid)
{
    for (uint32_t i = 0; i < emu->count; i++)
        if (emu->nodes[i].pid == pid)
            return &emu->nodes[i];
    return NULL;
}

static void reap(struct emu *emu)
{
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        struct emu_node *node = node_of_pid(emu, pid);
        if (node == NULL)
            continue;
        /* Its last words first: the pipe holds them until we read. */
        pump_console(emu, node, true);
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
            continue;
        }
        char how[96];
        describe_exit(status, how, sizeof how);
        if (!node->panicked)
            complain(emu, "node %u (%s, pid %d) %s%s", (unsigned)node->rank,
                     emu_node_board_name(node->board), (int)pid, how,
                     was_ready ? "" : " before it was ready");
        show_tail(emu, node);
        emu->failed = true;
    }
}

bool emu_signal_node(struct emu *emu, struct emu_node *node, int signal_number)
{
    (void)emu;
    if (node->pid <= 0)
        return false;
    return kill(node->pid, signal_number) == 0;
}

void emu_step(struct emu *emu, int timeout_ms)
{
    nfds_t n = 0;
    emu->poll_set[n].fd = emu->signal_fd;
    emu->poll_set[n].events = POLLIN;
    emu->poll_rank[n++] = UINT32_MAX;
    for (uint32_t i = 0; i < emu->count; i++) {
        if (emu->nodes[i].console_out < 0)
            continue;
        emu->poll_set[n].fd = emu->nodes[i].console_out;
        emu->poll_set[n].events = POLLIN;
        emu->poll_rank[n++] = i;
    }
    int ready = poll(emu->poll_set, n, timeout_ms);
    if (ready < 0 && errno != EINTR) {
        complain(emu, "poll: %s", strerror(errno));
        emu->failed = true;
        return;
    }
    for (nfds_t i = 0; ready > 0 && i < n; i++) {
        if (emu->poll_set[i].revents == 0)
            continue;
        if (emu->poll_rank[i] == UINT32_MAX) {
            struct signalfd_siginfo info;
            while (read(emu->signal_fd, &info, sizeof info) == (ssize_t)sizeof info) {
                if (info.ssi_signo != SIGCHLD && emu->interrupted == 0)
                    emu->interrupted = (int)info.ssi_signo;
            }
        } else {
            pump_console(emu, &emu->nodes[emu->poll_rank[i]], false);
        }
    }
    reap(emu);
}

/* How long one QMP exchange may take (QEMU answers in well under that). */
#define EMU_QMP_TIMEOUT_MS 3000

enum qmp_status emu_qmp(struct emu *emu, struct emu_node *node, const char *command,
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

/* Every QEMU node's monitor answers, and says it is running. */
static bool check_qmp(struct emu *emu)
{
    unsigned asked = 0;
    for (uint32_t r = 0; r < emu->count && keep_going(emu); r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->board != EMU_BOARD_QEMU || node->pid <= 0)
            continue;
        char reply[256];
        enum qmp_status status = emu_qmp(emu, node, "query-status", NULL, reply,
                                         sizeof reply);
        const char *value;
        size_t length;
        bool running = status == QMP_OK &&
                       qmp_json_member(reply, strlen(reply), "status", &value, &length) &&
                       length == 9 && memcmp(value, "\"running\"", 9) == 0;
        if (!running) {
            complain(emu, "node %u: QMP %s: %s %s (expected status running)",
                     (unsigned)r, node->qmp_path, qmp_status_text(status), reply);
            emu->failed = true;
            return false;
        }
        asked++;
        emu_step(emu, 0);
    }
    fprintf(emu->human, TOOL ": QMP: %u QEMU node%s running\n", asked,
            asked == 1 ? "" : "s");
    fflush(emu->human);
    return true;
}

/* ---- set-up ---- */

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
            complain(emu, "cannot create --out directory '%s': %s (expected a writable "
                          "directory)",
                     emu->options->out_dir, strerror(errno));
            return false;
        }
    } else {
        char template[] = "/tmp/tori-emu-XXXXXX";
        if (mkdtemp(template) == NULL) {
            complain(emu, "cannot create a directory under /tmp: %s", strerror(errno));
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
        complain(emu, "cannot write in '%s': %s", resolved, strerror(errno));
        return false;
    }
    setvbuf(emu->events, NULL, _IOLBF, 0);
    return true;
}

static bool check_programs(struct emu *emu, bool want_qemu, bool want_host)
{
    const struct emu_options *o = emu->options;
    char resolved[PATH_MAX];
    if (want_qemu) {
        if (!emu_spawn_find_program(o->qemu, resolved, sizeof resolved)) {
            if (strchr(o->qemu, '/') == NULL)
                complain(emu, "%s not found in PATH (expected QEMU for Arm: install the "
                              "Debian package qemu-system-arm, or pass --qemu PROGRAM)",
                         o->qemu);
            else
                complain(emu, "--qemu '%s' is not an executable file", o->qemu);
            return false;
        }
        if (access(o->image, R_OK) != 0) {
            complain(emu, "node image '%s' not found (expected a built image: run "
                          "./tori build qemu-virt, or pass --image FILE)",
                     o->image);
            return false;
        }
    }
    if (want_host && !emu_spawn_find_program(o->node_binary, resolved, sizeof resolved)) {
        complain(emu, "node program '%s' not found (expected a built tori-node: run "
                      "./tori build host, or pass --node-binary FILE)",
                 o->node_binary);
        return false;
    }
    return true;
}

static enum emu_board board_of(const struct emu *emu, uint32_t rank)
{
    switch (emu->options->boards) {
    case EMU_BOARDS_HOST:
        return EMU_BOARD_HOST;
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
    p.role = node->spare ? PERSONALITY_ROLE_SPARE : PERSONALITY_ROLE_COMPUTE;
    struct personality_error error;
    if (!personality_validate(&p, &error)) {
        char message[200];
        personality_format_error(&error, message, sizeof message);
        complain(emu, "node %u: %s", (unsigned)node->rank, message);
        return false;
    }
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    FILE *file = fopen(node->personality_path, "wbe");
    bool written = file != NULL && fwrite(block, 1, sizeof block, file) == sizeof block;
    if (file != NULL && fclose(file) != 0)
        written = false;
    if (!written) {
        complain(emu, "cannot write '%s': %s", node->personality_path, strerror(errno));
        return false;
    }
    return true;
}

static bool raise_file_limit(struct emu *emu, uint64_t needed)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return true;
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur >= needed)
        return true;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
        complain(emu, "this torus needs about %llu open files but the limit is %llu "
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
                complain(emu, "node %u link %s: %s", (unsigned)r,
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
                complain(emu, "node %u link %s: %s", (unsigned)r,
                         torus_geometry_link_name(l), error);
                return false;
            }
        }
    }
    if (smallest != INT_MAX && smallest < EMU_LINKS_RCVBUF_BYTES)
        complain(emu, "warning: link receive buffers are %d bytes, not %d (frames may "
                      "be lost under load; raise net.core.rmem_max or run as root)",
                 smallest, EMU_LINKS_RCVBUF_BYTES);
    return true;
}

static bool prepare(struct emu *emu)
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
        complain(emu, "--dims '%s' is invalid: %s", o->dims_text, reason);
        return false;
    }
    emu->count = torus_geometry_node_count(&emu->geometry);
    char error[256];
    if (!emu_links_check_ports(&emu->geometry, o->base_port, error, sizeof error)) {
        complain(emu, "%s", error);
        return false;
    }
    emu->nodes = calloc(emu->count, sizeof *emu->nodes);
    emu->poll_set = calloc(emu->count + 1u, sizeof *emu->poll_set);
    emu->poll_rank = calloc(emu->count + 1u, sizeof *emu->poll_rank);
    if (emu->nodes == NULL || emu->poll_set == NULL || emu->poll_rank == NULL) {
        complain(emu, "out of memory for %u nodes", (unsigned)emu->count);
        return false;
    }
    bool want_qemu = false, want_host = false;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        emu_node_init(node, r);
        node->board = board_of(emu, r);
        node->spare = r >= emu->count - o->spares;
        want_qemu |= node->board == EMU_BOARD_QEMU;
        want_host |= node->board == EMU_BOARD_HOST;
        emu_links_plan(&emu->geometry, r, node->link);
    }
    if (emu_faults_wanted(o) && !emu_faults_prepare(emu))
        return false;
    if (!check_programs(emu, want_qemu, want_host))
        return false;
    uint64_t files = emu_links_needed(&emu->geometry) + 5ull * emu->count + 64;
    if (!raise_file_limit(emu, files) || !prepare_out_dir(emu))
        return false;
    emu->programs.qemu = o->qemu;
    emu->programs.image = o->image;
    emu->programs.node_binary = o->node_binary;
    emu->programs.out_dir = emu->out_dir;
    struct sockaddr_un unix_address;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        node->personality_path = format_alloc("%s/node%u.personality", emu->out_dir, r);
        node->log_path = format_alloc("%s/node%u.log", emu->out_dir, r);
        node->qmp_name = format_alloc("node%u.qmp", r);
        /* Unix socket paths hold 107 bytes; reach a deep one through our fd. */
        if (strlen(emu->out_dir) + 16 < sizeof unix_address.sun_path)
            node->qmp_path = format_alloc("%s/node%u.qmp", emu->out_dir, r);
        else
            node->qmp_path = format_alloc("/proc/self/fd/%d/node%u.qmp", emu->out_dir_fd, r);
        if (node->personality_path == NULL || node->log_path == NULL ||
            node->qmp_name == NULL || node->qmp_path == NULL) {
            complain(emu, "out of memory");
            return false;
        }
        node->log = fopen(node->log_path, "we");
        if (node->log == NULL) {
            complain(emu, "cannot create '%s': %s", node->log_path, strerror(errno));
            return false;
        }
    }
    return open_links(emu);
}

static bool setup_signals(struct emu *emu)
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
        complain(emu, "signalfd: %s", strerror(errno));
        return false;
    }
    return true;
}

bool emu_start_node(struct emu *emu, struct emu_node *node)
{
    if (node->pid != 0)
        return false;
    if (!write_personality(emu, node))
        return false;
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
        if (node->link[l].present)
            emu_links_drain(node->link[l].fd);
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_spawn_command(&emu->programs, node, &argv);
    if (emu->options->verbose) {
        progress_end(emu);
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
        node->ping_asked = node->ping_done = false;
        emu->running++;
    }
    if (!started) {
        complain(emu, "node %u: %s", (unsigned)node->rank, error);
        emu->failed = true;
    }
    return started;
}

/* ---- phases ---- */

static void show_progress(struct emu *emu, uint32_t started, bool force)
{
    uint64_t now = emu_now_ns(emu);
    uint64_t every = emu->progress_tty ? 200 * NS_PER_MS : 5 * NS_PER_S;
    if (!force && now - emu->progress_last_ns < every)
        return;
    if (!emu->progress_tty && emu->count < 16 && !force)
        return;
    emu->progress_last_ns = now;
    fprintf(stderr, "%s" TOOL ": %u nodes: %u started, %u ready (%.1f s)%s",
            emu->progress_tty ? "\r" : "", (unsigned)emu->count, (unsigned)started,
            (unsigned)emu->ready, (double)now / 1e9, emu->progress_tty ? "" : "\n");
    emu->progress_open = emu->progress_tty;
}

/* Every node but the spares: they wait for a `join` (fault runs). */
static uint32_t first_nodes(const struct emu *emu)
{
    return emu->count - emu->options->spares;
}

static bool start_all(struct emu *emu)
{
    for (uint32_t r = 0; r < first_nodes(emu) && keep_going(emu); r++) {
        if (!emu_start_node(emu, &emu->nodes[r]))
            return false;
        emu_step(emu, 0);
        show_progress(emu, r + 1, false);
    }
    return keep_going(emu);
}

static uint64_t ready_timeout(const struct emu *emu)
{
    if (emu->options->ready_timeout_ns != 0)
        return emu->options->ready_timeout_ns;
    return 20 * NS_PER_S + (uint64_t)emu->count * 500 * NS_PER_MS;
}

static bool wait_ready(struct emu *emu)
{
    uint64_t deadline = emu_now_ns(emu) + ready_timeout(emu);
    while (keep_going(emu) && emu->ready < first_nodes(emu)) {
        if (emu_now_ns(emu) >= deadline) {
            uint32_t missing = first_nodes(emu) - emu->ready;
            struct emu_node *first = NULL;
            for (uint32_t r = 0; r < first_nodes(emu) && first == NULL; r++)
                if (emu->nodes[r].state != EMU_NODE_READY)
                    first = &emu->nodes[r];
            complain(emu, "node %u (%s, pid %d) is not ready after %.1f s%s", (unsigned)
                     first->rank, emu_node_board_name(first->board), (int)first->pid,
                     (double)ready_timeout(emu) / 1e9,
                     missing > 1 ? " (nor are others; see their logs)" : "");
            if (missing > 1) {
                fprintf(stderr, "  not ready:");
                for (uint32_t r = 0, shown = 0; r < first_nodes(emu) && shown < 16; r++)
                    if (emu->nodes[r].state != EMU_NODE_READY) {
                        fprintf(stderr, " %u", (unsigned)r);
                        shown++;
                    }
                fprintf(stderr, "%s\n", missing > 16 ? " ..." : "");
            }
            show_tail(emu, first);
            emu->failed = true;
            return false;
        }
        emu_step(emu, 100);
        show_progress(emu, emu->count, false);
    }
    if (!keep_going(emu))
        return false;
    if (emu->count >= 16 || emu->progress_open)
        show_progress(emu, emu->count, true);
    progress_end(emu);
    fprintf(emu->human, TOOL ": all %u nodes ready after %.2f s", (unsigned)first_nodes(emu),
            (double)emu->all_ready_ns / 1e9);
    if (emu->options->spares > 0)
        fprintf(emu->human, " (%u spare%s not started)", (unsigned)emu->options->spares,
                emu->options->spares == 1 ? "" : "s");
    fputc('\n', emu->human);
    fflush(emu->human);
    return true;
}

bool emu_start_job(struct emu *emu)
{
    /* The job starts on every node at once, as the control system would
     * launch it: each node's membership service runs from `start` on. */
    emu->job_started = true;
    emu->job_start_ns = emu_now_ns(emu);
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->state != EMU_NODE_READY)
            continue;
        if (!emu_node_send(node, "start")) {
            complain(emu, "node %u: cannot send `start` to its console", (unsigned)r);
            emu->failed = true;
            return false;
        }
        node->job_started = true;
    }
    return true;
}

void emu_node_rebooting(struct emu *emu, struct emu_node *node)
{
    if (node->state == EMU_NODE_READY && emu->ready > 0)
        emu->ready--;
    node->state = EMU_NODE_STARTED;
    node->job_started = false;
    node->ready_ns = 0;
}

static bool run_ping(struct emu *emu)
{
    const struct emu_options *o = emu->options;
    if (!emu_ping_init(&emu->ping, emu->count)) {
        complain(emu, "out of memory for ping results");
        emu->failed = true;
        return false;
    }
    fprintf(emu->human, TOOL ": ping: every node pings every other, %u at a time\n",
            o->ping_parallel);
    fflush(emu->human);
    uint32_t next = 0;
    uint32_t done = 0;
    while (keep_going(emu) && done < emu->count) {
        while (emu->ping_active < o->ping_parallel && next < emu->count) {
            struct emu_node *node = &emu->nodes[next++];
            node->ping_asked = true;
            node->ping_asked_ns = emu_now_ns(emu);
            if (emu_node_send(node, "ping all")) {
                emu->ping_active++;
            } else {
                complain(emu, "node %u: cannot send `ping all` to its console",
                         (unsigned)node->rank);
                node->ping_done = true;
            }
        }
        emu_step(emu, 100);
        uint64_t now = emu_now_ns(emu);
        done = 0;
        for (uint32_t r = 0; r < emu->count; r++) {
            struct emu_node *node = &emu->nodes[r];
            if (node->ping_asked && !node->ping_done &&
                now - node->ping_asked_ns > o->ping_timeout_ns) {
                /* A node that cannot finish fails the run: stop here. */
                complain(emu, "node %u: no ping-done %.1f s after `ping all` (see "
                              "--ping-timeout and %s)",
                         (unsigned)r, (double)o->ping_timeout_ns / 1e9, node->log_path);
                finish_ping(emu, node);
                emu->failed = true;
            }
            done += node->ping_done;
        }
    }
    if (!keep_going(emu))
        return false;
    uint64_t pairs = (uint64_t)emu->count * (emu->count - 1u);
    uint64_t missing = emu_ping_missing(&emu->ping, NULL, NULL, 0);
    fprintf(emu->human, TOOL ": ping: %llu of %llu ordered pairs answered\n",
            (unsigned long long)(pairs - missing), (unsigned long long)pairs);
    emu_ping_report(&emu->ping, emu->human);
    if (emu->ping.hop_mismatch > 0)
        fprintf(emu->human, "  %llu answers took a path longer or shorter than the "
                            "shortest hop distance\n",
                (unsigned long long)emu->ping.hop_mismatch);
    if (emu->ping.bad_records + emu->ping.duplicates > 0)
        fprintf(emu->human, "  %llu ping lines were unusable or duplicates\n",
                (unsigned long long)(emu->ping.bad_records + emu->ping.duplicates));
    fflush(emu->human);
    if (missing > 0) {
        progress_end(emu);
        fprintf(stderr, TOOL ": ping failed: %llu of %llu pairs did not answer: ",
                (unsigned long long)missing, (unsigned long long)pairs);
        emu_ping_missing(&emu->ping, NULL, stderr, 8);
        fputc('\n', stderr);
        emu->failed = true;
        return false;
    }
    return true;
}

static void run_for(struct emu *emu, bool forever, uint64_t duration_ns)
{
    uint64_t end = emu_now_ns(emu) + duration_ns;
    while (keep_going(emu) && (forever || emu_now_ns(emu) < end)) {
        uint64_t left = forever ? 500 * NS_PER_MS : end - emu_now_ns(emu);
        if (!forever && emu_now_ns(emu) >= end)
            break;
        emu_step(emu, (int)(left > 500 * NS_PER_MS ? 500 : left / NS_PER_MS + 1));
    }
}

static void shut_down(struct emu *emu)
{
    emu->stopping = true;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->pid <= 0)
            continue;
        node->expect_exit = true;
        emu_signal_node(emu, node, SIGTERM);
        if (node->hung)
            emu_signal_node(emu, node, SIGCONT);
    }
    uint64_t deadline = emu_now_ns(emu) + EMU_STOP_GRACE_NS;
    while (emu->running > 0 && emu_now_ns(emu) < deadline)
        emu_step(emu, 50);
    for (uint32_t r = 0; r < emu->count; r++)
        if (emu->nodes[r].pid > 0)
            emu_signal_node(emu, &emu->nodes[r], SIGKILL);
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

static void summarize(struct emu *emu)
{
    progress_end(emu);
    FILE *out = emu->human;
    fprintf(out, TOOL ": %llu events", (unsigned long long)emu->event_lines);
    const char *separator = " (";
    for (unsigned i = 0; i < EMU_EVENT_KINDS && emu->event_counts[i].name[0] != '\0'; i++) {
        fprintf(out, "%s%s %u", separator, emu->event_counts[i].name,
                emu->event_counts[i].count);
        separator = ", ";
    }
    fprintf(out, "%s", separator[0] == ',' ? ")" : "");
    if (emu->malformed_lines > 0)
        fprintf(out, "; %llu malformed event lines ignored",
                (unsigned long long)emu->malformed_lines);
    fputc('\n', out);
    unsigned panicked = 0;
    for (uint32_t r = 0; r < emu->count; r++)
        panicked += emu->nodes[r].panicked;
    if (panicked > 0)
        fprintf(out, TOOL ": %u node%s panicked\n", panicked, panicked == 1 ? "" : "s");
    fprintf(out, TOOL ": logs, personalities and events.jsonl in %s\n", emu->out_dir);
    fflush(out);
}

static void release(struct emu *emu)
{
    emu_faults_release(emu);
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
    if (emu->events != NULL)
        fclose(emu->events);
    if (emu->signal_fd >= 0)
        close(emu->signal_fd);
    if (emu->out_dir_fd >= 0)
        close(emu->out_dir_fd);
    free(emu->out_dir);
}

int emu_run(const struct emu_options *options)
{
    static struct emu emu;
    memset(&emu, 0, sizeof emu);
    emu.options = options;
    emu.signal_fd = -1;
    emu.out_dir_fd = -1;
    emu.human = options->json ? stderr : stdout;
    emu.origin_ns = monotonic_ns();
    emu.progress_tty = isatty(STDERR_FILENO) != 0;

    if (!prepare(&emu) || !setup_signals(&emu)) {
        release(&emu);
        return 2;
    }
    const char *boards[] = {"qemu", "host", "mixed qemu/host"};
    fprintf(emu.human, TOOL ": %u nodes (%s %s, %s), out %s\n", (unsigned)emu.count,
            options->dims_text, options->mesh_mask != 0 ? "mesh/torus" : "torus",
            boards[options->boards], emu.out_dir);
    fflush(emu.human);

    if (start_all(&emu) && wait_ready(&emu) && (!options->check_qmp || check_qmp(&emu))) {
        if (emu.faults != NULL) {
            emu_faults_run(&emu);
        } else if (emu_start_job(&emu)) {
            bool pinged = !options->ping || run_ping(&emu);
            if (pinged && keep_going(&emu)) {
                bool forever = !options->duration_set && !options->ping;
                if (forever) {
                    fprintf(emu.human, TOOL ": running; Ctrl-C stops every node\n");
                    fflush(emu.human);
                }
                run_for(&emu, forever, options->duration_ns);
            }
        }
    }
    shut_down(&emu);
    if (emu.interrupted != 0)
        complain(&emu, "stopped by signal %d (%s); every node stopped", emu.interrupted,
                 strsignal(emu.interrupted));
    summarize(&emu);
    unsigned failed_checks = emu_faults_failed_checks(&emu);
    if (failed_checks > 0)
        complain(&emu, "%u agreement check%s failed", failed_checks,
                 failed_checks == 1 ? "" : "s");
    int status = emu.interrupted != 0                ? 128 + emu.interrupted
                 : emu.failed || failed_checks > 0 ? 1
                                                   : 0;
    release(&emu);
    return status;
}

/* ---- the phases, for programs that drive a torus themselves ---- */

bool emu_open(struct emu *emu, const struct emu_options *options)
{
    memset(emu, 0, sizeof *emu);
    emu->options = options;
    emu->signal_fd = -1;
    emu->out_dir_fd = -1;
    emu->human = options->json ? stderr : stdout;
    emu->origin_ns = monotonic_ns();
    emu->progress_tty = isatty(STDERR_FILENO) != 0;
    return prepare(emu) && setup_signals(emu);
}

bool emu_start_all(struct emu *emu)
{
    return start_all(emu) && wait_ready(emu) && emu_start_job(emu);
}

int emu_close(struct emu *emu)
{
    if (emu->out_dir != NULL) {
        shut_down(emu);
        if (emu->interrupted != 0)
            complain(emu, "stopped by signal %d (%s); every node stopped", emu->interrupted,
                     strsignal(emu->interrupted));
        summarize(emu);
    }
    int status = emu->interrupted != 0 ? 128 + emu->interrupted : emu->failed ? 1 : 0;
    release(emu);
    return status;
}
