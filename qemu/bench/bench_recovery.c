#define _GNU_SOURCE
#include "qemu/bench/bench_recovery.h"

#include <stdlib.h>
#include <string.h>

#include "qemu/bench/bench_faults.h"
#include "qemu/faults/emu_results.h"
#include "qemu/launcher/qmp.h"

/* ---- the launcher's JSON lines ---- */

static size_t trimmed_length(const char *line)
{
    size_t length = strlen(line);
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r'))
        length--;
    return length;
}

static bool json_u64(const char *text, size_t length, const char *key, uint64_t *out)
{
    const char *value;
    size_t value_length;
    if (!qmp_json_member(text, length, key, &value, &value_length) || value_length == 0 ||
        value_length >= 24 || value[0] < '0' || value[0] > '9')
        return false;
    char buffer[24];
    memcpy(buffer, value, value_length);
    buffer[value_length] = '\0';
    char *end = NULL;
    unsigned long long number = strtoull(buffer, &end, 10);
    if (end == NULL || *end != '\0')
        return false;
    *out = number;
    return true;
}

/* True when key's value is the JSON string want. */
static bool json_is(const char *text, size_t length, const char *key, const char *want)
{
    const char *value;
    size_t value_length;
    size_t want_length = strlen(want);
    return qmp_json_member(text, length, key, &value, &value_length) &&
           value_length == want_length + 2 && value[0] == '"' &&
           memcmp(value + 1, want, want_length) == 0;
}

void bench_recovery_events_clear(struct bench_recovery_events *events)
{
    memset(events, 0, sizeof *events);
}

void bench_recovery_take_event(struct bench_recovery_events *events, const char *line)
{
    size_t length = trimmed_length(line);
    uint64_t node = 0, t = 0, value = 0;
    if (!json_u64(line, length, "node", &node) || node >= BENCH_RECOVERY_NODES_MAX ||
        !json_u64(line, length, "t_ns", &t) || t == 0)
        return;
    uint64_t emu = 0;
    if (json_u64(line, length, "emu_ns", &emu) && emu <= INT64_MAX && t <= INT64_MAX) {
        int64_t offset = (int64_t)emu - (int64_t)t;
        if (!events->clock_known[node] || offset < events->clock_offset[node])
            events->clock_offset[node] = offset;
        events->clock_known[node] = true;
        if (json_is(line, length, "event", "stable") && json_u64(line, length, "epoch", &value) &&
            events->stable_lines < BENCH_RECOVERY_STABLE_MAX) {
            events->stable_line_epoch[events->stable_lines] = value;
            events->stable_line_emu_ns[events->stable_lines] = emu;
            events->stable_lines++;
        }
    }
    if (json_is(line, length, "event", "comm-detected")) {
        if (json_u64(line, length, "epoch", &value))
            events->view_epoch_seen[node] = value;
    } else if (json_is(line, length, "event", "comm")) {
        /* A rank's communicator cut by this failure's view (a spare's
         * comm-detected comes with no such line: it recovers nothing) */
        if (json_is(line, length, "state", "detected") && events->detected_at[node] == 0 &&
            events->fault_seen && events->stable &&
            events->view_epoch_seen[node] == events->stable_epoch)
            events->detected_at[node] = t;
        else if (json_is(line, length, "state", "recovered") && events->detected_at[node] != 0 &&
                 events->rebuilt_at[node] == 0)
            events->rebuilt_at[node] = t;
    } else if (json_is(line, length, "event", "app-recovered")) {
        uint64_t rebuild = 0, resume = 0;
        if (events->detected_at[node] != 0 && t >= events->detected_at[node] &&
            events->resumed_at[node] == 0 && json_u64(line, length, "rebuild_ns", &rebuild) &&
            json_u64(line, length, "resume_ns", &resume) && rebuild + resume < t) {
            events->resumed_at[node] = t;
            events->noticed_at[node] = t - resume - rebuild;
            events->recovered_ranks++;
        }
    } else if (json_is(line, length, "event", "app-start")) {
        if (json_u64(line, length, "rank", &value) && value == 0) {
            events->rank0_node = (uint32_t)node;
            events->rank0_known = true;
        }
    } else if (json_is(line, length, "event", "app-progress")) {
        if (events->rank0_known && node == events->rank0_node &&
            json_u64(line, length, "iteration", &value) &&
            events->progress < BENCH_RECOVERY_PROGRESS_MAX) {
            events->progress_t[events->progress] = t;
            events->progress_iteration[events->progress] = (uint32_t)value;
            events->progress++;
        }
    }
}

void bench_recovery_take_fault(struct bench_recovery_events *events, const char *line)
{
    struct bench_faults_sample sample;
    if (events->fault_seen || !bench_faults_parse_record(line, &sample) ||
        strcmp(sample.action, "kill") != 0)
        return;
    uint64_t iteration = 0;
    size_t length = trimmed_length(line);
    bool at_iteration = json_u64(line, length, "at_iteration", &iteration);
    if (++events->kills_seen == 1 && at_iteration)
        events->first_kill_iteration = (uint32_t)iteration;
    if (events->kills_seen < (events->failure > 1 ? events->failure : 1u))
        return;
    events->fault_seen = true;
    events->detected = sample.detected;
    events->detection_ns = sample.detection_ns;
    events->stable = sample.stable;
    events->ts_ns = sample.ts_ns;
    events->view_ns = sample.recovery_ns;
    const char *stable;
    size_t stable_length;
    if (qmp_json_member(line, length, "stable", &stable, &stable_length))
        (void)json_u64(stable, stable_length, "epoch", &events->stable_epoch);
    if (at_iteration)
        events->kill_iteration = (uint32_t)iteration;
}

/* ---- phases ---- */

/*
 * When rank n's application noticed: its app-recovered line's stamp less
 * its two spans, but no later than its new communicator was made.  The
 * stamp comes after the clock read that ended the resume span (70 us
 * once under TCG), which shows since the rebuild is made inside the call
 * (comm/DESIGN.md, "The rebuild rides on the result round").
 */
static uint64_t noticed_of(const struct bench_recovery_events *e, uint32_t n)
{
    return e->rebuilt_at[n] != 0 && e->rebuilt_at[n] < e->noticed_at[n] ? e->rebuilt_at[n]
                                                                        : e->noticed_at[n];
}

void bench_recovery_phases(const struct bench_recovery_events *e,
                           struct bench_recovery_phases *p)
{
    memset(p, 0, sizeof *p);
    if (e->detected)
        p->detection_ns = (double)e->detection_ns;
    if (e->stable) {
        p->ts_ns = (double)e->ts_ns;
        p->view_ns = (double)e->view_ns;
    }
    /* The failure on the launcher's clock: the crash's stable line less
     * the launcher's own failure-to-stable time. */
    bool one_clock = false;
    int64_t failure = 0;
    for (unsigned i = 0; e->stable && e->stable_epoch != 0 && i < e->stable_lines; i++) {
        if (e->stable_line_epoch[i] == e->stable_epoch && e->stable_line_emu_ns[i] <= INT64_MAX) {
            failure = (int64_t)e->stable_line_emu_ns[i] - (int64_t)e->view_ns;
            one_clock = true;
            break;
        }
    }
    bool every_rebuilt = true, any = false;
    for (uint32_t n = 0; n < BENCH_RECOVERY_NODES_MAX; n++) {
        if (e->detected_at[n] == 0)
            continue;
        any = true;
        one_clock = one_clock && e->clock_known[n];
        if (noticed_of(e, n) < e->detected_at[n] || e->rebuilt_at[n] < noticed_of(e, n) ||
            e->resumed_at[n] < e->rebuilt_at[n])
            every_rebuilt = false;
    }
    /* The slowest rank's phases: since the failure on the launcher's clock,
     * or else its spans from its view added to the root's stable. */
    double noticed = 0, rebuilt = 0, resumed = 0;
    for (uint32_t n = 0; any && every_rebuilt && n < BENCH_RECOVERY_NODES_MAX; n++) {
        if (e->detected_at[n] == 0)
            continue;
        double base = one_clock ? (double)e->clock_offset[n] - (double)failure
                                : p->view_ns - (double)e->detected_at[n];
        if (base + (double)noticed_of(e, n) > noticed)
            noticed = base + (double)noticed_of(e, n);
        if (base + (double)e->rebuilt_at[n] > rebuilt)
            rebuilt = base + (double)e->rebuilt_at[n];
        if (base + (double)e->resumed_at[n] > resumed)
            resumed = base + (double)e->resumed_at[n];
    }
    p->ranks = e->recovered_ranks;
    if (e->stable && any && every_rebuilt) {
        p->one_clock = one_clock;
        p->noticed_ns = noticed;
        p->rebuilt_ns = rebuilt;
        p->resumed_ns = resumed;
    }
    /* Rank 0's time per iteration before the (first) crash, over 3
     * allreduces: every failure of the run is measured against it. */
    double per_iteration[BENCH_RECOVERY_PROGRESS_MAX];
    unsigned spans = 0;
    for (unsigned i = 1; i < e->progress; i++) {
        uint32_t from = e->progress_iteration[i - 1], to = e->progress_iteration[i];
        if (to <= from || e->progress_t[i] <= e->progress_t[i - 1] ||
            (e->first_kill_iteration != 0 && to > e->first_kill_iteration))
            continue;
        per_iteration[spans++] =
            (double)(e->progress_t[i] - e->progress_t[i - 1]) / (double)(to - from);
    }
    p->allreduce_ns = emu_results_median_of(per_iteration, spans) / 3.0;
    p->complete = p->detection_ns > 0 && p->ts_ns > 0 && p->resumed_ns > 0 &&
                  p->allreduce_ns > 0;
}

double bench_recovery_target_ns(const struct bench_recovery_phases *p)
{
    return BENCH_RECOVERY_TARGET_FACTOR * (p->detection_ns + p->ts_ns) + p->allreduce_ns;
}

void bench_recovery_median(const struct bench_recovery_phases *runs, unsigned count,
                           struct bench_recovery_phases *median)
{
    memset(median, 0, sizeof *median);
    double values[7][BENCH_RECOVERY_RUNS_MAX];
    unsigned n = 0;
    for (unsigned r = 0; r < count && n < BENCH_RECOVERY_RUNS_MAX; r++) {
        if (!runs[r].complete)
            continue;
        values[0][n] = runs[r].detection_ns;
        values[1][n] = runs[r].ts_ns;
        values[2][n] = runs[r].view_ns;
        values[3][n] = runs[r].rebuilt_ns;
        values[4][n] = runs[r].resumed_ns;
        values[5][n] = runs[r].allreduce_ns;
        values[6][n] = runs[r].noticed_ns;
        if (runs[r].ranks > median->ranks)
            median->ranks = runs[r].ranks;
        median->one_clock = n == 0 ? runs[r].one_clock : median->one_clock && runs[r].one_clock;
        n++;
    }
    if (n == 0)
        return;
    median->detection_ns = emu_results_median_of(values[0], n);
    median->ts_ns = emu_results_median_of(values[1], n);
    median->view_ns = emu_results_median_of(values[2], n);
    median->rebuilt_ns = emu_results_median_of(values[3], n);
    median->resumed_ns = emu_results_median_of(values[4], n);
    median->allreduce_ns = emu_results_median_of(values[5], n);
    median->noticed_ns = emu_results_median_of(values[6], n);
    median->complete = true;
}

/* ---- the simulator's output ---- */

void bench_recovery_sim_clear(struct bench_recovery_sim *sim)
{
    memset(sim, 0, sizeof *sim);
}

/* The recovery line's times, each since its kill_ns, which must be the
 * kill this run's detection and view were dated from. */
static void take_sim_recovery(struct bench_recovery_sim *sim, const char *line, size_t length)
{
    uint64_t kill = 0, noticed = 0, rebuilt = 0, resumed = 0;
    json_u64(line, length, "survivors", &sim->survivors);
    if (!sim->killed || !json_u64(line, length, "kill_ns", &kill) || kill != sim->kill_ns ||
        !json_u64(line, length, "noticed_ns", &noticed) ||
        !json_u64(line, length, "rebuilt_ns", &rebuilt) ||
        !json_u64(line, length, "resumed_ns", &resumed) || noticed < kill ||
        rebuilt < noticed || resumed < rebuilt)
        return; /* no recovery finished: its times are absent */
    sim->recovered = true;
    sim->noticed_ns = noticed - kill;
    sim->rebuilt_ns = rebuilt - kill;
    sim->resumed_ns = resumed - kill;
}

void bench_recovery_sim_take(struct bench_recovery_sim *sim, const char *line)
{
    size_t length = trimmed_length(line);
    uint64_t t = 0;
    if (json_is(line, length, "event", "app")) {
        sim->app = json_u64(line, length, "ranks", &sim->ranks) &&
                   json_u64(line, length, "iterations", &sim->iterations) &&
                   json_u64(line, length, "done_ns", &sim->done_ns) &&
                   json_u64(line, length, "comm_messages", &sim->messages) &&
                   json_u64(line, length, "comm_frames", &sim->frames);
    } else if (json_is(line, length, "event", "recovery")) {
        take_sim_recovery(sim, line, length);
    } else if (!json_u64(line, length, "t_ns", &t)) {
        return;
    } else if (!sim->killed) {
        if (json_is(line, length, "event", "inject") && json_is(line, length, "what", "kill")) {
            sim->killed = true;
            sim->kill_ns = t;
        }
    } else if (t < sim->kill_ns) {
        return;
    } else if (!sim->detected && json_is(line, length, "event", "failure-detected")) {
        sim->detected = true;
        sim->detection_ns = t - sim->kill_ns;
    } else if (!sim->stable && json_is(line, length, "event", "stable")) {
        sim->stable = json_u64(line, length, "ts_ns", &sim->ts_ns);
        sim->view_ns = t - sim->kill_ns;
    }
}

void bench_recovery_sim_phases(const struct bench_recovery_sim *sim, double allreduce_ns,
                               struct bench_recovery_phases *p)
{
    memset(p, 0, sizeof *p);
    if (sim->detected)
        p->detection_ns = (double)sim->detection_ns;
    if (sim->stable) {
        p->ts_ns = (double)sim->ts_ns;
        p->view_ns = (double)sim->view_ns;
    }
    if (sim->recovered) {
        p->noticed_ns = (double)sim->noticed_ns;
        p->rebuilt_ns = (double)sim->rebuilt_ns;
        p->resumed_ns = (double)sim->resumed_ns;
        p->ranks = (unsigned)sim->survivors;
    }
    p->allreduce_ns = allreduce_ns;
    p->one_clock = true; /* virtual time */
    p->complete = p->detection_ns > 0 && p->ts_ns > 0 && p->view_ns > 0 && p->resumed_ns > 0 &&
                  p->allreduce_ns > 0;
}

double bench_recovery_sim_allreduce_ns(const struct bench_recovery_sim *sim)
{
    if (!sim->app || sim->iterations == 0)
        return 0.0;
    return (double)sim->done_ns / (3.0 * (double)sim->iterations);
}

double bench_recovery_sim_messages_per_allreduce(const struct bench_recovery_sim *sim)
{
    if (!sim->app || sim->iterations == 0)
        return 0.0;
    return (double)sim->messages / (3.0 * (double)sim->iterations);
}

/* ---- the overhead runs ---- */

void bench_recovery_pingpong_take(struct bench_recovery_pingpong *run, const char *line)
{
    size_t length = trimmed_length(line);
    uint64_t node = 0, value = 0;
    if (!json_u64(line, length, "node", &node) || node != 0)
        return;
    if (json_is(line, length, "event", "app-pingpong")) {
        if (json_u64(line, length, "bytes", &value) && value == 0 &&
            json_u64(line, length, "rtt_ns", &value))
            run->rtt0_ns = value;
    } else if (json_is(line, length, "event", "app-allreduce")) {
        if (json_u64(line, length, "median_ns", &value))
            run->allreduce_ns = value;
    } else if (json_is(line, length, "event", "app-barrier")) {
        if (json_u64(line, length, "median_ns", &value))
            run->barrier_ns = value;
    }
}

/* ---- the in-process loopback (tori-comm-loop) ---- */

static bool json_double(const char *text, size_t length, const char *key, double *out)
{
    const char *value;
    size_t value_length;
    if (!qmp_json_member(text, length, key, &value, &value_length) || value_length == 0 ||
        value_length >= 32 || value[0] < '0' || value[0] > '9')
        return false;
    char buffer[32];
    memcpy(buffer, value, value_length);
    buffer[value_length] = '\0';
    char *end = NULL;
    double number = strtod(buffer, &end);
    if (end == NULL || *end != '\0')
        return false;
    *out = number;
    return true;
}

bool bench_recovery_loop_take(struct bench_recovery_loop *loop, const char *line)
{
    memset(loop, 0, sizeof *loop);
    size_t length = trimmed_length(line);
    uint64_t ft = 0, ranks = 0;
    static const char *const keys[BENCH_LOOP_FIGURES] = {
        "pingpong_ns", "allreduce_ns", "barrier_ns",
        "pingpong_messages", "allreduce_messages", "barrier_messages"};
    if (!json_is(line, length, "tool", "comm-loop") || !json_u64(line, length, "ft", &ft) ||
        ft > 1 || !json_u64(line, length, "ranks", &ranks) || ranks < 2)
        return false;
    for (unsigned k = 0; k < BENCH_LOOP_FIGURES; k++)
        if (!json_double(line, length, keys[k], &loop->figure[k]) || loop->figure[k] <= 0)
            return false;
    loop->ft = ft == 1;
    loop->ranks = ranks;
    loop->seen = true;
    return true;
}

double bench_recovery_ratio(double with, double without)
{
    return with > 0 && without > 0 ? with / without : 0.0;
}

/* ---- output ---- */

static void print_cell(FILE *out, double ns)
{
    if (ns > 0)
        fprintf(out, " %9.2f", ns / 1e6);
    else
        fprintf(out, " %9s", "-");
}

static void print_ratio(FILE *out, double value, double base)
{
    if (value > 0 && base > 0)
        fprintf(out, " %6.2f", value / base);
    else
        fprintf(out, " %6s", "-");
}

void bench_recovery_print_table(FILE *out, const struct bench_recovery_row *rows,
                                unsigned count)
{
    fprintf(out, "\nrecovery after a crash (crash: the run's 1st or 2nd), medians (ms since "
                 "the failure; x D: over the run's detection, x T: over its T_s)\n");
    fprintf(out, "%-18s %-8s %5s %4s %9s %9s %9s %9s %9s %9s %6s %6s %6s %6s %9s %9s %s\n",
            "config", "mode", "crash", "runs", "detect", "T_s", "view", "noticed", "rebuilt",
            "resumed", "view/D", "reb/D", "res/D", "res/T", "allreduce", "target", "verdict");
    for (unsigned i = 0; i < count; i++) {
        const struct bench_recovery_row *r = &rows[i];
        const struct bench_recovery_phases *m = &r->median;
        fprintf(out, "%-18s %-8s %5s %2u/%-1u", r->config, r->mode,
                r->failure > 1 ? "2nd" : "1st", r->complete, r->runs);
        print_cell(out, m->detection_ns);
        print_cell(out, m->ts_ns);
        print_cell(out, m->view_ns);
        print_cell(out, m->noticed_ns);
        print_cell(out, m->rebuilt_ns);
        print_cell(out, m->resumed_ns);
        print_ratio(out, m->view_ns, m->detection_ns);
        print_ratio(out, m->rebuilt_ns, m->detection_ns);
        print_ratio(out, m->resumed_ns, m->detection_ns);
        print_ratio(out, m->resumed_ns - m->view_ns, m->ts_ns);
        print_cell(out, m->allreduce_ns);
        double target = m->complete ? bench_recovery_target_ns(m) : 0.0;
        print_cell(out, target);
        fprintf(out, " %s%s\n",
                !m->complete ? "not measured" : m->resumed_ns <= target ? "met" : "missed",
                m->complete && !m->one_clock ? " (spans on own clocks: up to T_s over)" : "");
    }
}

void bench_recovery_print_row_json(FILE *out, const struct bench_recovery_row *r)
{
    const struct bench_recovery_phases *m = &r->median;
    double target = m->complete ? bench_recovery_target_ns(m) : 0.0;
    fprintf(out,
            "{\"config\":\"%s\",\"mode\":\"%s\",\"failure\":%u,\"runs\":%u,\"complete\":%u,"
            "\"detection_ns\":%.0f,\"ts_ns\":%.0f,\"view_ns\":%.0f,\"noticed_ns\":%.0f,"
            "\"rebuilt_ns\":%.0f,"
            "\"resumed_ns\":%.0f,\"allreduce_ns\":%.0f,\"target_ns\":%.0f,"
            "\"resumed_over_detection\":%.3f,\"resumed_over_detection_plus_ts\":%.3f,"
            "\"met\":%s,\"one_clock\":%s}",
            r->config, r->mode, r->failure, r->runs, r->complete, m->detection_ns, m->ts_ns,
            m->view_ns, m->noticed_ns, m->rebuilt_ns, m->resumed_ns, m->allreduce_ns, target,
            m->detection_ns > 0 ? m->resumed_ns / m->detection_ns : 0.0,
            m->detection_ns + m->ts_ns > 0 ? m->resumed_ns / (m->detection_ns + m->ts_ns) : 0.0,
            m->complete && m->resumed_ns <= target ? "true" : "false",
            m->one_clock ? "true" : "false");
}
