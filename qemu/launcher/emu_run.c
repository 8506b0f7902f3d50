/* The run: the poll loop and the phases of a run (see emu_run.h). */
#define _GNU_SOURCE
#include "qemu/launcher/emu_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "qemu/launcher/emu_app.h"
#include "qemu/launcher/emu_mpi.h"
#include "qemu/launcher/emu_console.h"
#include "qemu/launcher/emu_process.h"
#include "qemu/launcher/emu_setup.h"

#define TOOL "tori-emu"
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

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

uint64_t emu_line_ns(const struct emu *emu)
{
    return emu->wake_ns;
}

uint64_t emu_line_job_ns(const struct emu *emu)
{
    return emu->job_started && emu->wake_ns > emu->job_start_ns
               ? emu->wake_ns - emu->job_start_ns
               : 0;
}

uint64_t emu_job_ns(const struct emu *emu)
{
    return emu->job_started ? emu_now_ns(emu) - emu->job_start_ns : 0;
}

void emu_progress_end(struct emu *emu)
{
    if (emu->progress_open) {
        fputc('\n', stderr);
        emu->progress_open = false;
    }
}

void emu_complain(struct emu *emu, const char *format, ...)
{
    emu_progress_end(emu);
    va_list arguments;
    va_start(arguments, format);
    fputs(TOOL ": ", stderr);
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
}

bool emu_keep_going(const struct emu *emu)
{
    return !emu->failed && emu->interrupted == 0;
}

/* ---- the loop ---- */

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
    n = emu_mpi_poll_fds(emu, emu->poll_set, emu->poll_rank, (unsigned)n);
    int ready = poll(emu->poll_set, n, emu_reach_poll_ms(emu, timeout_ms));
    emu->wake_ns = emu_now_ns(emu);
    if (ready < 0 && errno != EINTR) {
        emu_complain(emu, "poll: %s", strerror(errno));
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
        } else if (emu->poll_set[i].fd == emu->nodes[emu->poll_rank[i]].control_listen) {
            emu_mpi_accept(emu, &emu->nodes[emu->poll_rank[i]]);
        } else {
            emu_console_pump(emu, &emu->nodes[emu->poll_rank[i]], false);
        }
    }
    emu_process_reap(emu);
    emu_reach_tick(emu);
}

/* ---- phases ---- */

/* Every QEMU node's monitor answers, and says it is running. */
static bool check_qmp(struct emu *emu)
{
    unsigned asked = 0;
    for (uint32_t r = 0; r < emu->count && emu_keep_going(emu); r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->board != EMU_BOARD_QEMU || node->pid <= 0)
            continue;
        char reply[256];
        enum qmp_status status = emu_process_qmp(emu, node, "query-status", NULL, reply,
                                                 sizeof reply);
        const char *value;
        size_t length;
        bool running = status == QMP_OK &&
                       qmp_json_member(reply, strlen(reply), "status", &value, &length) &&
                       length == 9 && memcmp(value, "\"running\"", 9) == 0;
        if (!running) {
            emu_complain(emu, "node %u: QMP %s: %s %s (expected status running)",
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
    if (emu->progress_tty)
        fflush(stderr); /* the one line left open on purpose: a terminal's */
    emu->progress_open = emu->progress_tty;
}

/* Every node but the idle spares: they wait for a `join` (fault runs). */
static uint32_t first_nodes(const struct emu *emu)
{
    return emu->count - emu->options->idle_spares;
}

static bool start_all(struct emu *emu)
{
    for (uint32_t r = 0; r < first_nodes(emu) && emu_keep_going(emu); r++) {
        if (!emu_process_start(emu, &emu->nodes[r]))
            return false;
        emu_step(emu, 0);
        show_progress(emu, r + 1, false);
    }
    return emu_keep_going(emu);
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
    while (emu_keep_going(emu) && emu->ready < first_nodes(emu)) {
        if (emu_now_ns(emu) >= deadline) {
            uint32_t missing = first_nodes(emu) - emu->ready;
            struct emu_node *first = NULL;
            for (uint32_t r = 0; r < first_nodes(emu) && first == NULL; r++)
                if (emu->nodes[r].state != EMU_NODE_READY)
                    first = &emu->nodes[r];
            emu_complain(emu, "node %u (%s, pid %d) is not ready after %.1f s%s", (unsigned)
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
            emu_process_show_tail(emu, first);
            emu->failed = true;
            return false;
        }
        emu_step(emu, 100);
        show_progress(emu, emu->count, false);
    }
    if (!emu_keep_going(emu))
        return false;
    if (emu->count >= 16 || emu->progress_open)
        show_progress(emu, emu->count, true);
    emu_progress_end(emu);
    fprintf(emu->human, TOOL ": all %u nodes ready after %.2f s", (unsigned)first_nodes(emu),
            (double)emu->all_ready_ns / 1e9);
    if (emu->options->idle_spares > 0)
        fprintf(emu->human, " (%u spare%s not started)", (unsigned)emu->options->idle_spares,
                emu->options->idle_spares == 1 ? "" : "s");
    else if (emu->options->spares > 0)
        fprintf(emu->human, " (%u of them spare%s, waiting to adopt a failed rank)",
                (unsigned)emu->options->spares, emu->options->spares == 1 ? "" : "s");
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
            emu_complain(emu, "node %u: cannot send `start` to its console", (unsigned)r);
            emu->failed = true;
            return false;
        }
        node->job_started = true;
    }
    return true;
}

bool emu_ping_sweep(struct emu *emu, const bool *which)
{
    const struct emu_options *o = emu->options;
    emu_ping_free(&emu->ping);
    if (!emu_ping_init(&emu->ping, emu->count)) {
        emu_complain(emu, "out of memory for ping results");
        emu->failed = true;
        return false;
    }
    for (uint32_t r = 0; r < emu->count; r++)
        emu->nodes[r].ping_asked = emu->nodes[r].ping_done = false;
    uint32_t next = 0;
    uint32_t done = 0;
    uint32_t asked = 0;
    for (uint32_t r = 0; r < emu->count; r++)
        asked += which == NULL || which[r];
    while (emu_keep_going(emu) && done < asked) {
        while (emu->ping_active < o->ping_parallel && next < emu->count) {
            struct emu_node *node = &emu->nodes[next++];
            if (which != NULL && !which[node->rank])
                continue;
            if (emu_reach_busy(emu, node)) {
                next--; /* its sample ping first: one sweep at a time on a node */
                break;
            }
            node->ping_asked = true;
            node->ping_asked_ns = emu_now_ns(emu);
            if (emu_node_send(node, "ping all")) {
                emu->ping_active++;
            } else {
                emu_complain(emu, "node %u: cannot send `ping all` to its console",
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
                emu_complain(emu, "node %u: no ping-done %.1f s after `ping all` (see "
                                  "--ping-timeout and %s)",
                             (unsigned)r, (double)o->ping_timeout_ns / 1e9, node->log_path);
                emu_console_finish_ping(emu, node);
                emu->failed = true;
            }
            done += node->ping_asked && node->ping_done;
        }
    }
    return emu_keep_going(emu);
}

static bool run_ping(struct emu *emu)
{
    fprintf(emu->human, TOOL ": ping: every node pings every other, %u at a time\n",
            emu->options->ping_parallel);
    fflush(emu->human);
    if (!emu_ping_sweep(emu, NULL))
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
        emu_progress_end(emu);
        fprintf(stderr, TOOL ": ping failed: %llu of %llu pairs did not answer: ",
                (unsigned long long)missing, (unsigned long long)pairs);
        emu_ping_missing(&emu->ping, NULL, stderr, 8);
        fputc('\n', stderr);
        emu->failed = true;
        return false;
    }
    return true;
}

static void collect_stats(struct emu *emu);

/* The CPU time of every node process at the window's start, and each
 * node's counters in a `stats` event (the last one, at the end, less this
 * one is what the window cost in frames). */
static void window_open(struct emu *emu)
{
    collect_stats(emu);
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        node->window_pid = emu_process_cpu_ns(node, &node->window_cpu_ns) ? node->pid : 0;
    }
}

/* What the nodes used since window_open: those still in the same process. */
static void window_close(struct emu *emu, uint64_t window_ns)
{
    emu->window_cpu_ns = 0;
    emu->window_nodes = 0;
    emu->window_ns = window_ns;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        uint64_t cpu_ns;
        if (node->window_pid == 0 || node->window_pid != node->pid ||
            !emu_process_cpu_ns(node, &cpu_ns) || cpu_ns < node->window_cpu_ns)
            continue;
        emu->window_cpu_ns += cpu_ns - node->window_cpu_ns;
        emu->window_nodes++;
    }
}

/*
 * <out>/cpu.json and a line: the host CPU the node processes used in the
 * --duration window, per node per second (a fraction of one core), so that
 * an idle torus's cost is a figure (issue 20).
 */
static void window_report(struct emu *emu)
{
    if (emu->window_nodes == 0 || emu->window_ns == 0)
        return;
    double seconds = (double)emu->window_ns / 1e9;
    double per_node = (double)emu->window_cpu_ns / 1e9 / emu->window_nodes / seconds;
    fprintf(emu->human, TOOL ": node CPU %.2f s over %.1f s for %u nodes: %.4f s per node per "
                        "second\n",
            (double)emu->window_cpu_ns / 1e9, seconds, (unsigned)emu->window_nodes, per_node);
    int fd = openat(emu->out_dir_fd, "cpu.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FILE *file = fd < 0 ? NULL : fdopen(fd, "w");
    if (file == NULL) {
        if (fd >= 0)
            close(fd);
        emu_complain(emu, "cannot write cpu.json in %s", emu->out_dir);
        return;
    }
    fprintf(file, "{\"nodes\":%u,\"window_s\":%.3f,\"cpu_s\":%.3f,\"cpu_per_node_s\":%.6f}\n",
            (unsigned)emu->window_nodes, seconds, (double)emu->window_cpu_ns / 1e9, per_node);
    fclose(file);
}

static void run_for(struct emu *emu, bool forever, uint64_t duration_ns)
{
    uint64_t start = emu_now_ns(emu);
    uint64_t end = start + duration_ns;
    /* A window to measure: --duration D (a --ping run passes 0). */
    bool measured = !forever && duration_ns > 0;
    if (measured)
        window_open(emu);
    while (emu_keep_going(emu) && (forever || emu_now_ns(emu) < end)) {
        uint64_t left = forever ? 500 * NS_PER_MS : end - emu_now_ns(emu);
        if (!forever && emu_now_ns(emu) >= end)
            break;
        emu_step(emu, (int)(left > 500 * NS_PER_MS ? 500 : left / NS_PER_MS + 1));
    }
    if (measured)
        window_close(emu, emu_now_ns(emu) - start);
}

static void summarize(struct emu *emu)
{
    emu_progress_end(emu);
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
    if (emu->reach.on)
        fprintf(out, TOOL ": reach: %u sample%s in reach.jsonl\n", emu->reach.samples,
                emu->reach.samples == 1 ? "" : "s");
    window_report(emu);
    fprintf(out, TOOL ": logs, personalities and events.jsonl in %s\n", emu->out_dir);
    fflush(out);
}

/*
 * Before the nodes stop: every running node's counters (frames dropped by
 * reason, retransmissions) as a `stats` event in events.jsonl, and its comm
 * core's as a `comm-state` event, for the run report.  A node that does not answer within a second is left out.
 */
static void collect_stats(struct emu *emu)
{
    if (!emu->job_started || emu->interrupted != 0)
        return;
    unsigned asked = 0;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        node->stats_asked = node->stats_answered = false;
        /* "comm" first: its comm-state line comes before the stats one */
        if (node->state == EMU_NODE_READY && !node->hung && !node->panicked &&
            emu_node_send(node, "comm") && emu_node_send(node, "stats")) {
            node->stats_asked = true;
            asked++;
        }
    }
    uint64_t end = emu_now_ns(emu) + 1000 * NS_PER_MS;
    while (asked > 0 && emu_now_ns(emu) < end && emu->interrupted == 0) {
        emu_step(emu, 50);
        asked = 0;
        for (uint32_t r = 0; r < emu->count; r++)
            asked += emu->nodes[r].stats_asked && !emu->nodes[r].stats_answered &&
                     emu->nodes[r].state == EMU_NODE_READY;
    }
}

/* The end of every run: no node left running, the summary printed. */
static void stop_and_summarize(struct emu *emu)
{
    collect_stats(emu);
    emu_process_stop_all(emu);
    emu_reach_end(emu);
    if (emu->interrupted != 0)
        emu_complain(emu, "stopped by signal %d (%s); every node stopped", emu->interrupted,
                     strsignal(emu->interrupted));
    summarize(emu);
}

int emu_run(const struct emu_options *options, const struct emu_hooks *hooks)
{
    static struct emu emu;
    if (!emu_open(&emu, options, hooks)) {
        emu_setup_release(&emu);
        return 2;
    }
    const char *boards[] = {"qemu", "host", "mixed qemu/host", "mpi"};
    fprintf(emu.human, TOOL ": %u nodes (%s %s, %s), out %s\n", (unsigned)emu.count,
            options->dims_text, options->mesh_mask != 0 ? "mesh/torus" : "torus",
            boards[options->boards], emu.out_dir);
    fflush(emu.human);

    if (start_all(&emu) && wait_ready(&emu) && (!options->check_qmp || check_qmp(&emu))) {
        if (hooks != NULL && hooks->run != NULL) {
            hooks->run(&emu);
            if (options->app_set)
                emu_app_wait(&emu);
        } else if (emu_start_job(&emu)) {
            bool pinged = !options->ping || run_ping(&emu);
            if (options->app_set) {
                fprintf(emu.human, TOOL ": job started: %s, %u iterations; app timeout "
                                   "%.1f s\n", job_app_name(options->app_job.app),
                        (unsigned)options->app_job.iterations,
                        (double)emu_app_timeout_ns(&emu) / 1e9);
                fflush(emu.human);
                emu_app_wait(&emu);
            } else if (pinged && emu_keep_going(&emu)) {
                bool forever = !options->duration_set && !options->ping;
                if (forever) {
                    fprintf(emu.human, TOOL ": running; Ctrl-C stops every node\n");
                    fflush(emu.human);
                }
                run_for(&emu, forever, options->duration_ns);
            }
        }
    }
    stop_and_summarize(&emu);
    /* A job run passes only on every compute node's ok=true and one digest. */
    if (options->app_set && emu.job_started && emu.interrupted == 0 && !emu_app_judge(&emu))
        emu.failed = true;
    unsigned failed_checks =
        hooks != NULL && hooks->failed_checks != NULL ? hooks->failed_checks(&emu) : 0;
    if (failed_checks > 0)
        emu_complain(&emu, "%u agreement check%s failed", failed_checks,
                     failed_checks == 1 ? "" : "s");
    int status = emu.interrupted != 0                ? 128 + emu.interrupted
                 : emu.failed || failed_checks > 0 ? 1
                 : emu.app_aborted                 ? EMU_EXIT_ABORTED
                                                   : 0;
    emu_setup_release(&emu);
    return status;
}

/* ---- the phases, for programs that drive a torus themselves ---- */

bool emu_open(struct emu *emu, const struct emu_options *options, const struct emu_hooks *hooks)
{
    memset(emu, 0, sizeof *emu);
    emu->options = options;
    emu->hooks = hooks;
    emu->signal_fd = -1;
    emu->out_dir_fd = -1;
    emu->human = options->json ? stderr : stdout;
    emu->origin_ns = monotonic_ns();
    emu->progress_tty = isatty(STDERR_FILENO) != 0;
    return emu_setup_prepare(emu) && emu_setup_signals(emu) && emu_reach_open(emu);
}

bool emu_start_all(struct emu *emu)
{
    return start_all(emu) && wait_ready(emu) && emu_start_job(emu);
}

int emu_close(struct emu *emu)
{
    if (emu->out_dir != NULL)
        stop_and_summarize(emu);
    int status = emu->interrupted != 0 ? 128 + emu->interrupted : emu->failed ? 1 : 0;
    emu_setup_release(emu);
    return status;
}
