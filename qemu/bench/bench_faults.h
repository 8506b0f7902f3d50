/*
 * tori-bench-faults (./tori bench faults): stabilization time T_s and
 * detection time after node crashes, beside the paper's distance model
 * computed from the one-hop latency measured in the same run.
 *
 * Each configuration (board and torus shape) is one tori-emu fault run
 * (qemu/faults/emu_faults.h): a script kills a spread of nodes (a leaf, inner
 * nodes, the root) one at a time and restarts each before the next, each
 * fault waiting until the torus settled after the one before (--sequential).  The launcher measures L (half
 * the median one-hop ping round trip) before the job starts; every record
 * in <out>/<config>/faults.jsonl carries the root's T_s, the detection
 * time, and the model for the view after the fault.  This module turns the
 * records into medians per configuration: T_s, detection, model, T_s/model,
 * T_s/L, failure-to-stable time (detection included), and how many
 * crashes needed more than one round (a false suspicion on the way).
 */
#ifndef QEMU_BENCH_BENCH_FAULTS_H
#define QEMU_BENCH_BENCH_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_FAULTS_NAME_MAX 32

struct bench_faults_config {
    char name[BENCH_FAULTS_NAME_MAX]; /* "qemu-2x2x2" */
    char board[8];                    /* qemu, host, mixed */
    char dims[BENCH_FAULTS_NAME_MAX]; /* "2x2x2" */
    uint32_t nodes;
    unsigned heartbeat_ms, detect_timeout_ms;
    unsigned link_rto_ms, link_retries; /* 0: the personality defaults */
    unsigned timeout_ceiling;           /* the detector's bound (--timeout-ceiling) */
    unsigned kills;
};

/*
 * Parses "BOARD-DIMS[@HB/DT]" (qemu-2x2x2, host-8x8x8@100/1000) into
 * config: timeouts from the suffix, else by size; its name is the text with
 * '/' made '-' (it names the run's directory).  False with a one-line reason.
 */
bool bench_faults_parse_config(const char *text, unsigned kills, struct bench_faults_config *config,
                               char *error, size_t capacity);

/*
 * The --inject script (run with --sequential): config->kills crashes of
 * distinct nodes, each restarted before the next, at least a gap apart
 * after the torus settled.  Returns the gap in ms.
 */
unsigned bench_faults_script(const struct bench_faults_config *config, char *text,
                             size_t capacity);

#define BENCH_FAULTS_FANS 4   /* fan-outs 1, 2, 4, 8 */
#define BENCH_FAULTS_LEVELS 8

/* One fault record of faults.jsonl, the fields the benchmark uses. */
struct bench_faults_sample {
    char action[16];
    uint32_t node;
    bool detected, stable, passed;
    uint64_t detection_ns, ts_ns, recovery_ns, rounds, levels, hop_sum;
    double model_ns, one_hop_ns, ocp_ns;
    double base_ns, contention_ns;             /* 0: not in the record */
    double fan_hop_ns[BENCH_FAULTS_FANS];      /* L(k), k = 1, 2, 4, 8; 0: not measured */
    unsigned install_levels;                   /* 0: nodes not on one clock */
    double install_ns[BENCH_FAULTS_LEVELS];    /* latest install at depth d from the round */
};

/* Parses one line; false when it is not a fault record (summary, junk). */
bool bench_faults_parse_record(const char *line, struct bench_faults_sample *sample);

/*
 * What a run's events.jsonl says of its detector and of its all-pairs ping
 * (tori-emu --ping, every `ping` answer and `ping-done`).  Every failure
 * detection in a run that kills nothing is false.  The ping's duration is
 * taken on the launcher's clock (emu_ns), from the job's start (the first
 * node's `started`: membership and its detector begin there, and the
 * launcher sends the first `ping all` right after `start`) to the last
 * `ping-done`.
 */
struct bench_faults_ping {
    int status;               /* tori-emu's exit status (-1: could not run) */
    bool read;                /* events.jsonl was there */
    unsigned detections;      /* failure-detected events */
    unsigned view_changes;    /* distinct view epochs after the first */
    uint64_t pairs, answered; /* ordered pairs of the torus; those answered ok */
    uint64_t done;            /* ping-done events (one per node that finished) */
    uint64_t duration_ns;     /* first `started` to last `ping-done`; 0: not both */
};

/*
 * The detector all but off, for the ping's floor: heartbeats and a detect
 * timeout far above an all-pairs ping's length (the launcher takes up to
 * 65535 ms): nobody can be suspected by silence before a minute has
 * passed.  A floor run that lasts longer than that is flagged.  Its link
 * timings are those the launcher chose for the ping it is the floor of.
 */
#define BENCH_FAULTS_FLOOR_HEARTBEAT_MS 15000
#define BENCH_FAULTS_FLOOR_DETECT_MS 60000

struct bench_faults_summary {
    struct bench_faults_config config;
    int status;                /* tori-emu's exit status (-1: could not run) */
    unsigned faults, checks_passed, checks; /* records and their verdicts */
    unsigned kills, detected, stabilized, multi_round;
    double one_hop_ns, ocp_ns;
    double detection_ns, ts_ns, model_ns, ratio, ts_over_l, recovery_ns; /* medians */
    double rejoin_ts_ns;       /* median T_s of the restarts' join episodes */
    /* The paper's Figures 6-8: the models beside T_s (medians over crashes). */
    double base_ns, contention_ns, contention_ratio;
    double fan_hop_ns[BENCH_FAULTS_FANS];
    unsigned install_levels;
    double install_ns[BENCH_FAULTS_LEVELS];
    uint64_t levels, hop_sum;  /* of the first crash's expected view */
    char out_dir[512];
    /* --idle-seconds: the same torus left alone (issue 20), under --load */
    unsigned load;             /* busy-loop processes during every run */
    unsigned idle_seconds;     /* 0: no idle run */
    int idle_status;           /* its tori-emu exit status */
    unsigned idle_failures;    /* failure-detected events: all false (nothing failed) */
    /* What the idle torus costs the host (issue 20): CPU seconds of the node
     * processes per node per second of the idle window (a fraction of one
     * core; tori-emu's cpu.json), and frames each node put on the wire per
     * second over the window (its first and last `stats`: heartbeats,
     * forwarded frames, link acks and keepalives).  Negative: not measured. */
    double idle_cpu_per_node, idle_frames_per_node;
    unsigned idle_view_changes;
    /* --ping: the all-pairs ping on the same torus at the configuration's
     * timings, then the same with the detector all but off (the floor). */
    bool ping;
    struct bench_faults_ping ping_run, ping_floor;
    double ping_ratio;         /* ping_run / ping_floor duration; 0: either is missing */
};

/* Reads <dir>/events.jsonl of a torus of nodes into run (all but status);
 * false when the file cannot be read or nodes is 0. */
bool bench_faults_read_events(const char *dir, uint32_t nodes, struct bench_faults_ping *run);

/*
 * The link timings a tori-emu run in dir gave its nodes (<dir>/node0.
 * personality): the ping at the configuration's timings takes the
 * launcher's, and its floor the same ones.  False when not readable.
 */
bool bench_faults_read_link_timings(const char *dir, unsigned *rto_ms, unsigned *retries);

/* summary->ping_ratio from its two ping runs. */
void bench_faults_ping_ratio(struct bench_faults_summary *summary);

/* A ping run that failed: not run, events unread, a pair unanswered. */
bool bench_faults_ping_failed(const struct bench_faults_ping *run);

/* Medians over samples (kills for T_s and detection, restarts for rejoins). */
void bench_faults_summarize(const struct bench_faults_sample *samples, unsigned count,
                            struct bench_faults_summary *summary);

/*
 * The idle cost of the run in dir into summary->idle_cpu_per_node (from
 * <dir>/cpu.json) and ->idle_frames_per_node (each node's first and last
 * `stats` events in <dir>/events.jsonl); each is -1 when not found.
 */
void bench_faults_read_idle_cost(const char *dir, struct bench_faults_summary *summary);

/* Reads <dir>/faults.jsonl into the summary; false when it cannot. */
bool bench_faults_read(const char *dir, struct bench_faults_summary *summary);

void bench_faults_print_table(const struct bench_faults_summary *summaries, unsigned count,
                              FILE *out);
void bench_faults_write_json(const struct bench_faults_summary *summary, FILE *out);

/*
 * Runs argv (argv[0] a path) with its stdout and stderr into log_path and
 * waits: its exit status, 128 + the signal that ended it, or -1 with a
 * line on stderr prefixed by tool when it could not be started.  The
 * benchmarks that drive tori-emu and tori-sim runs share it.
 */
int bench_run_logged(const char *tool, char *const argv[], const char *log_path);

#endif /* QEMU_BENCH_BENCH_FAULTS_H */
