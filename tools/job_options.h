/*
 * The job block's command-line options, shared by every tool that writes
 * one (tori-personality --job-out, tori-emu --app): --app NAME,
 * --iterations N, --progress K, --app-args a,b,..., --comm-mode
 * abort|blank|shrink|rebuild, --msg-mode nop|cont, --checkpoint-every K,
 * --routing detour|table, --recovery POLICY, --lossy-link COUNT/MS and
 * --seeds a,b (seed nodes: a joiner asks them first) turned into a
 * validated struct job (kernel/job.h), so that both accept and refuse the
 * same values with the same one-line errors.  Encoding stays job_encode's.
 * Also the per-job option that travels in the personality instead,
 * --timeout-ceiling N (below).
 */
#ifndef TOOLS_JOB_OPTIONS_H
#define TOOLS_JOB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/job.h"

/* What the command line said: NULL for an option not given. */
struct job_options {
    const char *app, *iterations, *progress, *app_args;
    const char *comm_mode, *msg_mode; /* WORLD's failure and message modes */
    const char *routing;              /* --routing detour|table (issue 16) */
    const char *checkpoint_every;     /* --checkpoint-every K (iterations) */
    const char *recovery;             /* --recovery POLICY (job_options_parse_recovery) */
    const char *lossy_link;           /* --lossy-link COUNT/MS: the link loss limit */
    const char *seeds;                /* --seeds a,b: up to JOB_SEED_NODES node ids */
    uint32_t node_count;         /* seeds must be below it (0: not checked here) */
    uint32_t default_iterations; /* when --iterations is not given (>= 1) */
    uint32_t max_iterations;     /* the tool's bound (>= default_iterations) */
};

/* The application names a job may give, for messages. */
#define JOB_OPTIONS_APPS "allreduce, stencil, pingpong, greedy, stale or ftprobe"
#define JOB_OPTIONS_COMM_MODES "abort, blank, shrink or rebuild"
#define JOB_OPTIONS_MSG_MODES "nop or cont"
#define JOB_OPTIONS_ROUTING_MODES "detour or table"

/*
 * Fills *job from the options (job_set_defaults first); without --progress
 * there is no app-progress; without --comm-mode / --msg-mode the modes are
 * abort and nop (MPI's default), but rebuild when --recovery names restart,
 * migrate or promote (the rank goes on in another life or node).  False with a one-line error, "--iterations '0'
 * is invalid (expected a count in 1..4294967295)", in error.
 */
bool job_options_build(const struct job_options *options, struct job *job, char *error,
                       size_t capacity);

/* The link loss limit (kernel/job.h): more than COUNT frames resent on one
 * link within MS milliseconds is a network fault. */
#define JOB_OPTIONS_LOSSY_LINK_EXPECTED "COUNT/MS, both in 1..65535 (e.g. 64/1000)"

/* "a,b,c" into job->app_arg (up to JOB_APP_ARGS signed 64-bit integers,
 * each whole); false with a one-line error naming --app-args. */
bool job_options_parse_args(const char *text, struct job *job, char *error, size_t capacity);

/* "0,31" into job->seed_count and seed_node: up to JOB_SEED_NODES node ids,
 * below node_count when it is not 0; false with a one-line error naming
 * option. */
bool job_options_parse_seeds(const char *option, const char *text, uint32_t node_count,
                             struct job *job, char *error, size_t capacity);

/*
 * The one recovery policy parser (lib/recovery.h), for every tool:
 * clauses separated by ';', each MODEL=ACTION with MODEL process, physical
 * or network, or `repeated(K in Ns)=ACTION` (K 1..255, N 1..65535
 * seconds), or `quarantine=Q` (removals in the window at which a node is
 * refused; K < Q <= 255; default 2K, none when 2K > 255).  ACTION: ignore,
 * restart, migrate or promote.  Omitted models are ignored; "none" alone
 * is no policy.  False with a one-line error naming --recovery.
 */
#define JOB_OPTIONS_RECOVERY_EXPECTED                                                    \
    "clauses like 'process=restart; physical=migrate; repeated(3 in 60s)=migrate' "     \
    "(models process, physical, network, repeated(K in Ns), quarantine=Q; actions "      \
    "ignore, restart, migrate, promote)"
bool job_options_parse_recovery(const char *text, struct recovery_policy *policy, char *error,
                                size_t capacity);

/* The canonical text of a policy (what the parser reads back), "none" for
 * none; cut to fit. */
void job_options_format_recovery(const struct recovery_policy *policy, char *out,
                                 size_t capacity);

/*
 * --timeout-ceiling N: the adaptive detector's bound for the job, the one
 * parser of every tool (tori-emu, tori-sim, tori-personality, bench
 * faults).  No detector timeout grows past N times the configured one; 1
 * turns adaptation off.  It travels in the personality (byte 21, beside
 * the detect timeout), not the job block: a job block exists only with
 * --app, and the detector matters most without one (--ping, idle runs).
 * False with a one-line error naming option.
 */
#define JOB_OPTIONS_TIMEOUT_CEILING_EXPECTED                                             \
    "a whole number in 1..64: the detector's timeouts grow to at most this many "      \
    "times the set ones (1: fixed; default 4)"
bool job_options_parse_timeout_ceiling(const char *option, const char *text,
                                       uint8_t *ceiling, char *error, size_t capacity);

#endif /* TOOLS_JOB_OPTIONS_H */
