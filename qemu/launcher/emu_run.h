/*
 * A running emulated torus: the node table, the one poll() loop over every
 * node's console, and the phases of a run (start, wait until ready, ping,
 * run for a duration, shut down).  Spares (--spares) are not started at
 * first.  The pieces, one file each:
 *   qemu/launcher/emu_setup.h    everything before the first node starts, and release
 *   qemu/launcher/emu_process.h  node processes: start, signal, QMP, reap, stop
 *   qemu/launcher/emu_console.h  console lines to events (ready, panic, ping, ...)
 *   this file           the loop (emu_step), the phases, messages, clocks
 * A program built on the launcher hooks into a run's phases (struct
 * emu_hooks) or reads its events (emu_event_observer); the launcher never
 * calls into such a program.  Fault runs (qemu/faults/emu_faults.h) are
 * hooks, and build on the same pieces: emu_process_start (restart with a
 * new incarnation, join a spare), emu_process_signal, emu_process_qmp and
 * emu_step.
 */
#ifndef QEMU_LAUNCHER_EMU_RUN_H
#define QEMU_LAUNCHER_EMU_RUN_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "net/torus/geometry.h"
#include "qemu/launcher/emu_node.h"
#include "qemu/launcher/emu_options.h"
#include "qemu/launcher/emu_ping.h"
#include "qemu/launcher/emu_reach.h"
#include "qemu/launcher/emu_spawn.h"

struct emu;

/*
 * A part of a run that hooks into the launcher's phases (tori-emu's fault
 * injection); any hook may be NULL.
 */
struct emu_hooks {
    /* In emu_open, before anything starts; false after a one-line error. */
    bool (*prepare)(struct emu *emu);
    /* The job phase once every node is ready, instead of the plain run. */
    bool (*run)(struct emu *emu);
    /* Every event line, after the launcher handled it. */
    void (*on_event)(struct emu *emu, struct emu_node *node, const struct event_line *line);
    /* A node became ready after the job started, before it is told `start`. */
    void (*on_ready)(struct emu *emu, struct emu_node *node);
    /* Checks that failed: the run's exit status is 1 when there are any. */
    unsigned (*failed_checks)(const struct emu *emu);
    /* In emu_close (and after a failed emu_open). */
    void (*release)(struct emu *emu);
    /* On a torus of more than 16 nodes the hooks summarize view lines,
     * which are then not shown one by one. */
    bool summarizes_views;
};

/* Distinct event names counted for the closing summary. */
#define EMU_EVENT_KINDS 48

/*
 * Called with every event line a node writes, before the launcher handles
 * it: how a program built on the launcher (tori-bench-link) reads answers.
 */
typedef void (*emu_event_observer)(void *context, struct emu_node *node,
                                   const struct event_line *line);

struct emu_event_count {
    char name[32];
    unsigned count;
};

/* What the job's checkpoints and restores cost (issue 15), from the nodes'
 * `checkpoint` and `restore` lines, for the run's summary. */
struct emu_checkpoint_figures {
    uint32_t commits, generations, bytes, buddy_hops_max;
    uint64_t round_ns_sum, round_ns_max;
    uint32_t restores, from_own, from_buddy, from_mirror, generation, iteration;
    uint64_t moved_bytes, load_ns_max;
};

struct emu {
    const struct emu_options *options;
    struct emu_programs programs;           /* pointing into program_paths */
    struct emu_program_paths program_paths; /* absolute, checked */
    struct torus_geometry geometry;
    uint32_t count;
    struct emu_node *nodes;

    char *out_dir; /* absolute */
    int out_dir_fd;
    FILE *events;  /* <out>/events.jsonl */
    FILE *human;   /* stdout, or stderr under --json */
    int signal_fd;
    struct pollfd *poll_set;
    uint32_t *poll_rank;

    uint64_t origin_ns;    /* CLOCK_MONOTONIC at start: emu times count from it */
    uint64_t all_ready_ns; /* when the last node became ready */
    bool job_started;      /* every node was told `start` */
    uint64_t job_start_ns; /* emu time of that */
    /* When poll last returned: the arrival stamp of every line read in that
     * pass, so lines keep the order in which they could have been written
     * (a later line read first from a lower descriptor is not stamped
     * earlier than a line already waiting in another pipe). */
    uint64_t wake_ns;
    const struct emu_hooks *hooks; /* NULL: a plain run */
    void *hook_state;              /* the hooks' own, set by their prepare */
    uint32_t running, ready;
    int mpiexec_pid;       /* the MPI board's world (emu_mpi.h), 0: none */
    int mpiexec_status;
    bool mpi_world_ended;  /* mpiexec was started and has exited */
    uint32_t mpi_killed;   /* ranks sent a real SIGKILL (--mpi-kill kill) */
    bool stopping;         /* shutting down: exits are expected */
    int interrupted;       /* the signal that asked us to stop, or 0 */
    bool failed;           /* a node failed: exit status 1 */
    bool app_judged;       /* the job's failure has been told (once per run) */
    bool app_over;         /* the job ended: each node's app_was_down is kept */
    bool comm_failed;      /* a communicator check failed (told once) */
    bool app_aborted;      /* every live rank reported app-abort: exit EMU_EXIT_ABORTED */
    struct emu_checkpoint_figures checkpoints;

    uint64_t event_lines, malformed_lines, plain_lines;
    struct emu_event_count event_counts[EMU_EVENT_KINDS];

    struct emu_ping ping;
    unsigned ping_active;
    struct emu_reach reach; /* --reach: the sampler (emu_reach.h) */

    bool progress_tty;
    bool progress_open; /* a progress line without its newline */
    uint64_t progress_last_ns;

    /* --duration: what the nodes' processes cost the host over the window
     * (issue 20's idle torus): CPU time of those measured at both ends
     * (the same process, not restarted), and the window. */
    uint64_t window_cpu_ns, window_ns;
    uint32_t window_nodes;

    emu_event_observer observer; /* NULL: none */
    void *observer_context;
};

/* The exit status of a run whose job was aborted (--comm-mode abort). */
#define EMU_EXIT_ABORTED 3

/* Runs the torus the options describe (hooks may be NULL); returns the exit status. */
int emu_run(const struct emu_options *options, const struct emu_hooks *hooks);

/*
 * The phases of emu_run for programs that drive a torus themselves (the
 * benchmarks): emu_open prepares everything (false: a message was printed;
 * call emu_close anyway); emu_start_all starts every node, waits until all
 * are ready and sends `start`; between them and emu_close the program sends
 * commands (emu_node_send) and turns the loop (emu_step).  emu_close stops
 * every node (no orphan), prints the summary, releases everything and
 * returns the exit status emu_run would have.
 */
bool emu_open(struct emu *emu, const struct emu_options *options, const struct emu_hooks *hooks);
bool emu_start_all(struct emu *emu);
int emu_close(struct emu *emu);

/* Nanoseconds since the launcher started. */
uint64_t emu_now_ns(const struct emu *emu);

/* The arrival stamp of the console line being handled (emu time; job time). */
uint64_t emu_line_ns(const struct emu *emu);
uint64_t emu_line_job_ns(const struct emu *emu);

/*
 * One turn of the loop: waits up to timeout_ms for console output, signals
 * or child exits, and handles them all.
 */
void emu_step(struct emu *emu, int timeout_ms);

/*
 * Starts the job: tells every ready node `start` (its membership service
 * runs from then on).  From then on a node that becomes ready again
 * (restarted, rebooted, joined) is told `start` as soon as it is ready.
 */
bool emu_start_job(struct emu *emu);

/* Nanoseconds since the job started (0 before). */
uint64_t emu_job_ns(const struct emu *emu);

/*
 * For the pieces of a run: a one-line error on stderr ("tori-emu: ..."),
 * ending a progress line first; the end of such a progress line; and
 * whether the run goes on (nothing failed, no signal asked us to stop).
 */
__attribute__((format(printf, 2, 3))) void emu_complain(struct emu *emu, const char *format,
                                                        ...);
void emu_progress_end(struct emu *emu);
bool emu_keep_going(const struct emu *emu);

/*
 * `ping all` on every node of which[] (NULL: every node), --ping-parallel
 * at a time, each within --ping-timeout (else the run fails): the answers
 * in emu->ping, initialised here.  False when the run is ending.
 */
bool emu_ping_sweep(struct emu *emu, const bool *which);

#endif /* QEMU_LAUNCHER_EMU_RUN_H */
