/*
 * tori-bench-recovery (./tori bench recovery): issue 14's recovery time per
 * communicator mode.  One run is one tori-emu job (`allreduce`, --comm-mode
 * MODE, a crash at an iteration) or, in the simulator, tori-sim.  This
 * module is the benchmark's arithmetic, from what a run recorded (the
 * simulator's runs: struct bench_recovery_sim below):
 *
 *   failure    the launcher's kill (faults.jsonl: injected)
 *   detection  the first failure-detected (faults.jsonl: detection.after_ns)
 *   view       the root's stable view (faults.jsonl: recovery_ns; the root's
 *              own T_s is stable.ts_ns)
 *   noticed    the slowest rank's start of its tori_comm_rebuild (its
 *              app-recovered line's time less its resume_ns and
 *              rebuild_ns): the failure reaching the application, as an
 *              error from the call it was in
 *   rebuilt    the slowest rank's `comm` line state=recovered
 *              (tori_comm_rebuild done)
 *   resumed    the slowest rank's `app-recovered` line (the resume
 *              allreduce done: apps/recovery.c)
 *
 * Node clocks are not comparable between QEMU instances, so each node's
 * times are moved onto the launcher's clock: by the least emu_ns - t_ns
 * over its lines (the launcher stamps a line when it reads it, after the
 * node wrote it, so the least is the closest; what remains is the
 * quickest a line got through, which the times overstate).  The failure
 * on that clock is the crash's stable line's emu_ns less recovery_ns,
 * both the launcher's.  When a rank's offset or that stable line is
 * missing, the last three phases are instead spans on each node's own
 * clock, from its `comm` line state=detected (its view installed), added
 * to the root's stable time, which overstates by up to T_s (the phases
 * say which: one_clock).  One allreduce is rank 0's time per iteration
 * before the crash (its app-progress lines, own clock) over the three
 * allreduces an iteration makes.  Target (issue 14): resumed <= 1.2 x
 * (detection + T_s) + one allreduce.
 */
#ifndef QEMU_BENCH_BENCH_RECOVERY_H
#define QEMU_BENCH_BENCH_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_RECOVERY_NODES_MAX 4096u
#define BENCH_RECOVERY_PROGRESS_MAX 256u
#define BENCH_RECOVERY_RUNS_MAX 9u
#define BENCH_RECOVERY_STABLE_MAX 16u /* stable lines kept per run */
#define BENCH_RECOVERY_TARGET_FACTOR 1.2

/*
 * What one emu run's events and fault record hold (filled line by line),
 * for one of its kills: `failure` (1 for the first, 2 for the second; set
 * after bench_recovery_events_clear, before any line).  A run with two
 * kills is read twice.  Under QEMU the second recovery runs code TCG has
 * already translated (the first pays the translation of the failure path
 * at every node), which is what hardware runs every time.
 */
struct bench_recovery_events {
    unsigned failure;  /* which kill, 1-based (0: the first) */
    /* faults.jsonl's kill records */
    unsigned kills_seen;
    bool fault_seen, detected, stable;
    uint64_t detection_ns, ts_ns, view_ns; /* view_ns: failure to stable */
    uint32_t kill_iteration;       /* this failure's */
    uint32_t first_kill_iteration; /* the allreduce is timed before it */
    /* events.jsonl, per node (indexed by the launcher's node number); a
     * rank's lines count from its `comm` state=detected that follows a
     * `comm-detected` of this failure's view (its stable epoch) */
    uint64_t view_epoch_seen[BENCH_RECOVERY_NODES_MAX]; /* last comm-detected's */
    uint64_t detected_at[BENCH_RECOVERY_NODES_MAX];  /* comm state=detected */
    uint64_t rebuilt_at[BENCH_RECOVERY_NODES_MAX];   /* comm state=recovered */
    uint64_t resumed_at[BENCH_RECOVERY_NODES_MAX];   /* app-recovered */
    uint64_t noticed_at[BENCH_RECOVERY_NODES_MAX];   /* its rebuild's start */
    /* Each node's clock against the launcher's: the least emu_ns - t_ns
     * over its lines (a line reaches the launcher after it was written, so
     * the least is the closest); see bench_recovery_phases. */
    int64_t clock_offset[BENCH_RECOVERY_NODES_MAX];
    bool clock_known[BENCH_RECOVERY_NODES_MAX];
    /* The crash's stable line (the kill record's stable epoch), if seen. */
    uint64_t stable_epoch;
    unsigned stable_lines;
    uint64_t stable_line_epoch[BENCH_RECOVERY_STABLE_MAX];
    uint64_t stable_line_emu_ns[BENCH_RECOVERY_STABLE_MAX];
    uint32_t rank0_node;
    bool rank0_known;
    unsigned progress;
    uint64_t progress_t[BENCH_RECOVERY_PROGRESS_MAX];
    uint32_t progress_iteration[BENCH_RECOVERY_PROGRESS_MAX];
    unsigned recovered_ranks; /* app-recovered lines */
};

void bench_recovery_events_clear(struct bench_recovery_events *events);
/* One line of events.jsonl (the launcher's JSON of a node's event). */
void bench_recovery_take_event(struct bench_recovery_events *events, const char *line);
/* One line of faults.jsonl; the failure-th kill record counts. */
void bench_recovery_take_fault(struct bench_recovery_events *events, const char *line);

/* One run's phases, each since the failure, in ns (0: not reached). */
struct bench_recovery_phases {
    bool complete; /* every phase measured */
    bool one_clock; /* the ranks' phases dated on the launcher's clock */
    double detection_ns, ts_ns, view_ns, noticed_ns, rebuilt_ns, resumed_ns, allreduce_ns;
    unsigned ranks; /* ranks that reported app-recovered */
};

void bench_recovery_phases(const struct bench_recovery_events *events,
                           struct bench_recovery_phases *phases);

/* 1.2 x (detection + T_s) + one allreduce. */
double bench_recovery_target_ns(const struct bench_recovery_phases *phases);

/* The median of each phase over runs[0..count) (complete runs only). */
void bench_recovery_median(const struct bench_recovery_phases *runs, unsigned count,
                           struct bench_recovery_phases *median);

/*
 * What a tori-sim --json run printed.  The benchmark runs two kinds: the
 * job `allreduce` under a mode with `kill 3 at iteration 2` (its phases,
 * each in virtual ns since the kill: the inject line dates the kill, the
 * first failure-detected and the first stable after it date detection and
 * the view, and the recovery line the slowest survivor's noticed, rebuilt
 * and resumed), and the same job without a crash (one allreduce's time and
 * messages: its app line).  A stable line before the kill (the view a spare
 * joined under rebuild) is not the crash's.
 */
struct bench_recovery_sim {
    bool killed, detected, stable, recovered, app;
    uint64_t kill_ns;                     /* the first kill's t_ns */
    uint64_t detection_ns, ts_ns, view_ns; /* since the kill; ts_ns the stable line's */
    uint64_t noticed_ns, rebuilt_ns, resumed_ns; /* since the kill */
    uint64_t survivors;
    uint64_t ranks, iterations, done_ns, messages, frames; /* the app line */
};

void bench_recovery_sim_clear(struct bench_recovery_sim *sim);
/* One line of tori-sim --json's output. */
void bench_recovery_sim_take(struct bench_recovery_sim *sim, const char *line);
/* An allreduce in virtual time: the job's span over its 3 per iteration. */
double bench_recovery_sim_allreduce_ns(const struct bench_recovery_sim *sim);
/* Messages per allreduce, and the plain tree's 2 (N - 1) for the ranks. */
double bench_recovery_sim_messages_per_allreduce(const struct bench_recovery_sim *sim);
/* A mode run's phases beside allreduce_ns, a crash-free run's allreduce;
 * complete only when the run recovered and every phase is there. */
void bench_recovery_sim_phases(const struct bench_recovery_sim *sim, double allreduce_ns,
                               struct bench_recovery_phases *phases);

/*
 * The overhead when nothing fails, at run time: rank 0's figures from the
 * job `pingpong` (app-pingpong bytes=0, app-allreduce, app-barrier).
 */
struct bench_recovery_pingpong {
    uint64_t rtt0_ns, allreduce_ns, barrier_ns; /* 0: not reported */
};

/* One line of a pingpong run's events.jsonl (rank 0 is node 0 there). */
void bench_recovery_pingpong_take(struct bench_recovery_pingpong *run, const char *line);

/*
 * The overhead compiled in and out: one line of tori-comm-loop (the comm
 * core built as the node has it) or tori-comm-loop-noft (CONFIG_COMM_FT
 * 0), each node's context in one process on a loopback: ns per operation
 * (a 0-byte ping-pong, allreduce and barrier over `ranks`), then messages
 * per operation.  False (and cleared) for any other line.
 */
#define BENCH_LOOP_FIGURES 6u
enum { BENCH_LOOP_PINGPONG_NS = 0, BENCH_LOOP_ALLREDUCE_NS, BENCH_LOOP_BARRIER_NS,
       BENCH_LOOP_PINGPONG_MESSAGES, BENCH_LOOP_ALLREDUCE_MESSAGES, BENCH_LOOP_BARRIER_MESSAGES };
struct bench_recovery_loop {
    bool seen, ft;
    uint64_t ranks;
    double figure[BENCH_LOOP_FIGURES];
};
bool bench_recovery_loop_take(struct bench_recovery_loop *loop, const char *line);
/* with / without, 0 when either is not positive (not measured). */
double bench_recovery_ratio(double with, double without);

/* A configuration's row per mode (and per failure of its runs). */
struct bench_recovery_row {
    char config[32], mode[16];
    unsigned failure; /* 1: the run's first kill, 2: its second */
    unsigned runs, complete;
    struct bench_recovery_phases median;
};

void bench_recovery_print_table(FILE *out, const struct bench_recovery_row *rows,
                                unsigned count);
void bench_recovery_print_row_json(FILE *out, const struct bench_recovery_row *row);

#endif /* QEMU_BENCH_BENCH_RECOVERY_H */
