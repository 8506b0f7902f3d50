#define _GNU_SOURCE
#include "qemu/faults/emu_faults.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/personality.h"
#include "qemu/faults/emu_agree.h"
#include "qemu/faults/emu_chaos.h"
#include "qemu/faults/emu_fault.h"
#include "qemu/faults/emu_inject.h"
#include "tools/fault.h"
#include "tools/fault_rates.h"
#include "qemu/faults/emu_latency.h"
#include "qemu/faults/emu_model.h"
#include "qemu/faults/emu_results.h"
#include "qemu/faults/emu_sides.h"
#include "qemu/launcher/emu_app.h"
#include "qemu/launcher/emu_ping.h"
#include "qemu/launcher/emu_run.h"

#define TOOL "tori-emu"
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* Start-up latency probe: pings per node, nodes at most. */
#define LATENCY_ROUNDS 5
#define LATENCY_NODES 16
/* Above this many nodes, per-node view lines are counted, not shown. */
#define SHOW_EVERY_NODE_MAX 16
/* Most faults --fault-rates may draw for one campaign. */
#define RATES_FAULTS_MAX 4096u

struct emu_faults {
    struct emu_script script;
    unsigned next_action;
    bool *progress_fired;       /* [script.on_progress_count] */
    uint32_t *progress_seen;    /* [script.on_progress_count]: the app-progress
                                   iteration that made it due (0: not yet) */
    bool *recovery_fired;       /* [script.on_recovery_count]: scheduled at a recovery */
    struct emu_action *undos;   /* "for D" of faults timed by iteration, faults timed
                                   by recovery and their undos, pending */
    unsigned undo_count, undo_capacity;
    bool chaos_on;
    struct emu_chaos_spec chaos_spec;
    struct emu_chaos chaos;
    struct emu_inject_world world;
    bool *qemu;      /* [count] */
    bool *expected;  /* [count]: expected in the view once the torus settles */
    struct emu_model_params model;
    struct emu_latency latency;
    bool probing;
    struct emu_results results;
    FILE *records;   /* <out>/faults.jsonl */
    uint64_t quiet_ns, timeout_ns;

    bool group_open;
    unsigned group;
    uint64_t last_inject_ns;      /* job time of the latest scripted action */
    uint64_t group_begin_ns, last_activity_ns;
    unsigned open_detections, open_false;

    bool checking;
    struct emu_view_answer *answers; /* [count] */

    /* The torus's sides (emu_sides.h), recomputed after every fault. */
    uint32_t *side_of;         /* [count] */
    uint32_t side_count;
    bool *running;             /* [count] scratch: carries traffic */
    bool *check_expected;      /* [count]: expected[] narrowed to the view's side */
    struct emu_sides_expectation expectation;
    bool *reference;           /* [count]: the last settled view's members */
    uint32_t reference_root;
    bool viewless;             /* the last check found no view, rightly */
    bool reform_awaited, reform_seen; /* ... and a side has a majority again */
    uint64_t *undetected_ns;   /* [count]: when a member crashed, not yet detected */
    uint64_t detect_ns;
    uint64_t *restarted_epoch; /* [count]: the view whose RESTART decision we carried out */
};

bool emu_faults_wanted(const struct emu_options *options)
{
    return options->inject_text != NULL || options->chaos_text != NULL || options->demo;
}

/*
 * A fault timed by iteration needs a job whose nodes report that iteration:
 * --app, N within --iterations, and N a multiple of the progress interval
 * (app-progress comes every K iterations; any other N would never be seen).
 */
static bool check_iteration(const struct emu_options *options, const struct fault *item,
                            char *error, size_t capacity)
{
    char text[FAULT_TEXT_MAX];
    fault_format(item, text, sizeof text);
    const char *option = options->inject_option;
    uint32_t n = item->iteration;
    uint32_t every = options->app_job.progress_interval;
    if (!options->app_set) {
        snprintf(error, capacity, "%s: '%s': a fault timed by iteration needs a job (expected "
                                  "--app NAME, or a time like 'kill 3 at 2s')",
                 option, text);
        return false;
    }
    if (n > options->app_job.iterations) {
        snprintf(error, capacity, "%s: '%s': the job runs only %u iterations (expected N <= "
                                  "--iterations)",
                 option, text, (unsigned)options->app_job.iterations);
        return false;
    }
    if (every == 0) {
        snprintf(error, capacity, "%s: '%s': the nodes report no progress under --progress 0 "
                                  "(expected --progress K, N a multiple of K)",
                 option, text);
        return false;
    }
    if (n % every != 0) {
        uint32_t below = n / every * every;
        uint64_t above = (uint64_t)below + every;
        char choices[64];
        if (below == 0)
            snprintf(choices, sizeof choices, "%llu", (unsigned long long)above);
        else
            snprintf(choices, sizeof choices, "%u or %llu", (unsigned)below,
                     (unsigned long long)above);
        snprintf(error, capacity, "%s: '%s': the nodes report progress every %u iterations%s, "
                                  "never at %u (expected a multiple of %u, e.g. %s)",
                 option, text, (unsigned)every,
                 options->app_progress_set ? "" : " (a tenth of --iterations)", (unsigned)n,
                 (unsigned)every, choices);
        return false;
    }
    return true;
}

/* A fault timed by recovery needs a job whose communicators recover (an
 * abort ends the job: nobody rebuilds). */
static bool check_recovery(const struct emu_options *options, const struct fault *item,
                           char *error, size_t capacity)
{
    char text[FAULT_TEXT_MAX];
    fault_format(item, text, sizeof text);
    if (options->app_set && options->app_job.comm_mode != JOB_COMM_ABORT)
        return true;
    snprintf(error, capacity, "%s: '%s': a fault timed by recovery needs a job that recovers "
                              "(expected --app NAME with --comm-mode shrink, blank or rebuild)",
             options->inject_option, text);
    return false;
}

static bool emu_faults_rates(const struct emu_options *options,
                             const struct emu_chaos_spec *spec, struct fault_rates *rates,
                             char *error, size_t capacity);

bool emu_faults_check_options(const struct emu_options *options, struct emu_chaos_spec *spec,
                              char *error, size_t capacity)
{
    char reason[280];
    memset(spec, 0, sizeof *spec);
    if (options->inject_text != NULL) {
        struct fault_script script;
        if (!fault_script_parse(options->inject_text, &script, reason, sizeof reason)) {
            snprintf(error, capacity, "%s: %s", options->inject_option, reason);
            return false;
        }
        size_t items = script.count;
        bool timed_ok = true;
        for (size_t i = 0; i < script.count && timed_ok; i++)
            if (script.items[i].iteration != 0)
                timed_ok = check_iteration(options, &script.items[i], error, capacity);
            else if (script.items[i].at_recovery)
                timed_ok = check_recovery(options, &script.items[i], error, capacity);
        fault_script_free(&script);
        if (!timed_ok)
            return false;
        if (items == 0) {
            snprintf(error, capacity, "%s: %s", options->inject_option, EMU_INJECT_EMPTY);
            return false;
        }
    }
    if (options->chaos_text != NULL &&
        !emu_chaos_parse(options->chaos_text, spec, reason, sizeof reason)) {
        snprintf(error, capacity, "--chaos: %s", reason);
        return false;
    }
    struct fault_rates rates;
    return options->fault_rates_text == NULL ||
           emu_faults_rates(options, spec, &rates, error, capacity);
}

/*
 * --fault-rates: the groups, checked against the torus, and a --chaos spec
 * that gives the draw its seed, horizon (duration) and link hold, but no
 * rate, kinds or count of its own generator.
 */
static bool emu_faults_rates(const struct emu_options *options,
                             const struct emu_chaos_spec *spec, struct fault_rates *rates,
                             char *error, size_t capacity)
{
    if (!fault_rates_parse(options->fault_rates_text, rates, error, capacity))
        return false;
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++)
        mesh[d] = ((options->mesh_mask >> d) & 1u) != 0;
    struct torus_geometry geometry;
    struct torus_geometry_error geometry_error;
    if (torus_geometry_init(&geometry, options->dims, options->size, mesh, &geometry_error) !=
        TORUS_GEOMETRY_OK)
        return true; /* the launcher names the bad --dims itself */
    if (!fault_rates_check_torus(rates, &geometry, error, capacity))
        return false;
    unsigned generator = EMU_CHAOS_GIVEN_RATE | EMU_CHAOS_GIVEN_KINDS | EMU_CHAOS_GIVEN_COUNT;
    if ((spec->given & generator) != 0 || (spec->given & EMU_CHAOS_GIVEN_DURATION) == 0) {
        snprintf(error, capacity, "--chaos: with --fault-rates the rates draw the faults over "
                                  "the duration (expected seed=S,duration=D[,hold=H], no rate, "
                                  "kinds or count)");
        return false;
    }
    return true;
}

static void say(struct emu *emu, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void say(struct emu *emu, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    fputs(TOOL ": ", emu->human);
    vfprintf(emu->human, format, arguments);
    fputc('\n', emu->human);
    va_end(arguments);
    fflush(emu->human);
}

/*
 * The torus's sides now (emu_sides.h) and what the next check will expect
 * of them: called once the faults' world is set up and after every fault.
 * A check that found no view anywhere is followed, once a side has a
 * majority again, by a re-formed view: the group waits for it.  False
 * when out of memory.
 */
static bool find_sides(const struct emu *emu, struct emu_faults *f)
{
    for (uint32_t id = 0; id < emu->count; id++)
        f->running[id] = f->world.state[id] == EMU_INJECT_RUNNING;
    f->side_count = emu_sides_find(&emu->geometry, f->running, f->world.cut, f->side_of);
    if (f->side_count == UINT32_MAX)
        return false;
    struct emu_sides_reference reference = {f->reference, f->reference_root, f->viewless};
    enum emu_sides_policy policy = emu->options->partition_policy ==
                                           PERSONALITY_PARTITION_EVERY_SIDE
                                       ? EMU_SIDES_EVERY_SIDE
                                       : EMU_SIDES_PRIMARY;
    emu_sides_expect(policy, emu->count, f->side_of, f->side_count, f->expected, &reference,
                     f->check_expected, &f->expectation);
    f->reform_awaited = f->viewless && f->expectation.expect == EMU_AGREE_ONE_VIEW;
    return true;
}

/* The demo: a leaf dies, then the root, then the leaf comes back. */
static void demo_script(const struct emu_faults *f, char *text, size_t capacity)
{
    uint32_t root = 0, leaf = 0;
    emu_model_ends(&f->model, f->expected, &root, &leaf);
    snprintf(text, capacity, "kill %u at 1s; kill %u at 2s; restart %u at 3s",
             (unsigned)leaf, (unsigned)root, (unsigned)leaf);
}

/*
 * --chaos with --fault-rates: the campaign drawn up front from the rates
 * (tools/fault_rates.h, the simulator's one draw) over the chaos duration,
 * with the chaos seed, links held off for `hold_ns`, and joined with the
 * --inject script if any.  Each fault then comes at its drawn time, as a
 * script's do, several at once when they fall so: the generator of plain
 * --chaos holds one fault at a time (the next waits for the torus to
 * settle), which a rate per node and group cannot express.
 */
/*
 * A drawn fault that changes nothing where the draw put it (time order):
 * it touches a node killed before, or cuts a pair of nodes whose link is
 * still off from an earlier draw.  The simulator's network ignores these
 * alike; the launcher's injector would refuse them.
 */
static bool rates_fault_moot(const struct fault *drawn, size_t index)
{
    const struct fault *f = &drawn[index];
    bool link = f->kind == FAULT_LINK_OFF;
    for (size_t j = 0; j < index; j++) {
        const struct fault *e = &drawn[j];
        if (e->kind == FAULT_KILL && (e->node == f->node || (link && e->node == f->other)))
            return true;
        bool same_pair = e->kind == FAULT_LINK_OFF &&
                         ((e->node == f->node && e->other == f->other) ||
                          (e->node == f->other && e->other == f->node));
        if (link && same_pair && e->time_ns + e->duration_ns >= f->time_ns)
            return true;
    }
    return false;
}

static bool rates_script(struct emu_faults *f, struct emu *emu, const char *text,
                         uint64_t hold_ns, char *error, size_t capacity)
{
    struct fault_rates rates;
    if (!emu_faults_rates(emu->options, &f->chaos_spec, &rates, error, capacity))
        return false;
    struct fault_script faults;
    memset(&faults, 0, sizeof faults);
    if (text != NULL && !fault_script_parse(text, &faults, error, capacity))
        return false;
    struct fault *drawn = calloc(RATES_FAULTS_MAX, sizeof *drawn);
    bool ok = drawn != NULL;
    if (!ok)
        snprintf(error, capacity, "out of memory");
    size_t dropped = 0, count = 0;
    if (ok)
        count = fault_rates_draw(&rates, &emu->geometry, f->chaos_spec.seed,
                                 f->chaos_spec.duration_ns, hold_ns, drawn, RATES_FAULTS_MAX,
                                 &dropped);
    if (ok && dropped != 0) {
        snprintf(error, capacity, "the rates draw more than %u faults in the duration "
                                  "(expected lower rates or a shorter duration)",
                 RATES_FAULTS_MAX);
        ok = false;
    }
    for (size_t i = 0; ok && i < count; i++)
        if (rates_fault_moot(drawn, i) == false && !fault_script_add(&faults, &drawn[i])) {
            snprintf(error, capacity, "out of memory");
            ok = false;
        }
    if (ok && faults.count == 0) {
        snprintf(error, capacity, "the rates draw no fault in the duration (expected higher "
                                  "rates or a longer duration)");
        ok = false;
    }
    ok = ok && emu_inject_schedule(&faults, &emu->geometry, &f->script, error, capacity);
    free(drawn);
    fault_script_free(&faults);
    return ok;
}

bool emu_faults_prepare(struct emu *emu)
{
    const struct emu_options *o = emu->options;
    struct emu_faults *f = calloc(1, sizeof *f);
    if (f == NULL) {
        fprintf(stderr, TOOL ": out of memory\n");
        return false;
    }
    emu->hook_state = f;
    uint32_t n = emu->count;
    f->qemu = calloc(n, sizeof *f->qemu);
    f->expected = calloc(n, sizeof *f->expected);
    f->answers = calloc(n, sizeof *f->answers);
    f->restarted_epoch = calloc(n, sizeof *f->restarted_epoch);
    f->side_of = calloc(n, sizeof *f->side_of);
    f->running = calloc(n, sizeof *f->running);
    f->check_expected = calloc(n, sizeof *f->check_expected);
    f->reference = calloc(n, sizeof *f->reference);
    f->undetected_ns = calloc(n, sizeof *f->undetected_ns);
    if (f->qemu == NULL || f->expected == NULL || f->answers == NULL ||
        f->restarted_epoch == NULL || f->side_of == NULL || f->running == NULL ||
        f->check_expected == NULL || f->reference == NULL || f->undetected_ns == NULL ||
        !emu_results_init(&f->results, n)) {
        fprintf(stderr, TOOL ": out of memory\n");
        return false;
    }
    uint32_t members = n - o->idle_spares;
    for (uint32_t r = 0; r < n; r++) {
        f->qemu[r] = emu->nodes[r].board == EMU_BOARD_QEMU;
        f->expected[r] = r < members;
        f->reference[r] = r < members;
        f->undetected_ns[r] = UINT64_MAX;
    }
    f->reference_root = 0;
    f->model.geometry = emu->geometry;
    f->model.layout = (enum membership_layout_kind)o->tree_layout; /* same values */
    f->model.radix = o->radix;
    /* The first view holds the compute nodes; spares join after it (under
     * --comm-mode rebuild at once, started with the others), so a view's
     * digest counts them as joined, never as initial members. */
    f->model.initial_members = n - o->spares;
    if (!emu_inject_world_init(&f->world, &emu->geometry, o->idle_spares, f->qemu) ||
        !find_sides(emu, f)) {
        fprintf(stderr, TOOL ": out of memory\n");
        return false;
    }
    char error[320];
    char demo[128];
    const char *text = o->inject_text;
    if (text == NULL && o->demo && o->chaos_text == NULL) {
        demo_script(f, demo, sizeof demo);
        text = demo;
    }
    bool rates_on = o->fault_rates_text != NULL;
    if (o->chaos_text != NULL && !emu_faults_check_options(o, &f->chaos_spec, error, sizeof error)) {
        fprintf(stderr, TOOL ": %s\n", error);
        return false;
    }
    /* A chaos fault is undone after its hold; by default ten detect timeouts. */
    uint64_t default_hold = 10u * (uint64_t)o->detect_timeout_ms * NS_PER_MS;
    if (default_hold < NS_PER_S)
        default_hold = NS_PER_S;
    uint64_t hold = f->chaos_spec.hold_ns != 0 ? f->chaos_spec.hold_ns : default_hold;
    if (text != NULL || rates_on) {
        const char *option = text == NULL                ? "--fault-rates"
                             : o->inject_option != NULL ? o->inject_option
                                                         : "--inject";
        bool parsed = rates_on ? rates_script(f, emu, text, hold, error, sizeof error)
                               : emu_inject_parse(text, &emu->geometry, &f->script, error,
                                                  sizeof error);
        if (!parsed || !emu_inject_check(&f->script, &emu->geometry, o->idle_spares, f->qemu,
                                         error, sizeof error)) {
            fprintf(stderr, TOOL ": %s: %s\n", option, error);
            return false;
        }
        unsigned timed = f->script.count + f->script.on_progress_count;
        for (unsigned i = 0; o->boards == EMU_BOARDS_MPI &&
                            i < timed + f->script.on_recovery_count; i++) {
            const struct emu_action *a = i < f->script.count ? &f->script.actions[i]
                                         : i < timed
                                             ? &f->script.on_progress[i - f->script.count]
                                             : &f->script.on_recovery[i - timed];
            if (a->kind == EMU_ACTION_RESTART || a->kind == EMU_ACTION_REBOOT ||
                a->kind == EMU_ACTION_JOIN) {
                fprintf(stderr, TOOL ": %s: '%s': an MPI rank cannot %s (expected kill, "
                                "hang or link faults with --board mpi)\n",
                        o->inject_option != NULL ? o->inject_option : "--inject", a->text,
                        a->kind == EMU_ACTION_REBOOT ? "reboot" : "come back or join");
                return false;
            }
        }
        for (unsigned i = 0; i < f->script.on_progress_count + f->script.on_recovery_count;
             i++) {
            const struct emu_action *a =
                i < f->script.on_progress_count
                    ? &f->script.on_progress[i]
                    : &f->script.on_recovery[i - f->script.on_progress_count];
            if (a->watch != EMU_WATCH_JOB && a->watch >= members) {
                fprintf(stderr, TOOL ": %s: '%s': node %u is a spare: it runs no application "
                                "(expected a compute node, 0..%u)\n",
                        o->inject_option != NULL ? o->inject_option : "--inject", a->text,
                        (unsigned)a->watch, (unsigned)(members - 1u));
                return false;
            }
        }
        f->progress_fired = calloc(f->script.on_progress_count + 1u, sizeof *f->progress_fired);
        f->progress_seen = calloc(f->script.on_progress_count + 1u, sizeof *f->progress_seen);
        f->recovery_fired = calloc(f->script.on_recovery_count + 1u, sizeof *f->recovery_fired);
        if (f->progress_fired == NULL || f->progress_seen == NULL || f->recovery_fired == NULL) {
            fprintf(stderr, TOOL ": out of memory\n");
            return false;
        }
    }
    if (o->chaos_text != NULL && !rates_on) {
        f->chaos_on = true;
        bool any_qemu = false, reboot_only = f->chaos_spec.kinds == CHAOS_KIND(FAULT_REBOOT);
        for (uint32_t r = 0; r < n; r++)
            any_qemu |= f->qemu[r];
        if (reboot_only && !any_qemu) {
            fprintf(stderr, TOOL ": --chaos: kinds=reboot needs QEMU nodes (expected "
                            "--board qemu or mixed, or other kinds)\n");
            return false;
        }
        unsigned comes_back = CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_RESTART) |
                              CHAOS_KIND(FAULT_REBOOT) | CHAOS_KIND(FAULT_JOIN);
        if (o->boards == EMU_BOARDS_MPI && (f->chaos_spec.kinds & comes_back) != 0) {
            fprintf(stderr, TOOL ": --chaos: kill, restart, reboot and join need a node that "
                            "comes back, which an MPI rank cannot (expected kinds=hang,link "
                            "with --board mpi)\n");
            return false;
        }
        if (f->chaos_spec.kinds == CHAOS_KIND(FAULT_JOIN) && o->idle_spares == 0) {
            fprintf(stderr, TOOL ": --chaos: kinds=join needs spares (expected --spares K)\n");
            return false;
        }
        /* The campaign's clock is the job's: it starts at 0 with the job. */
        if (!emu_chaos_init(&f->chaos, &f->chaos_spec, &emu->geometry, o->idle_spares, f->qemu, 0,
                            default_hold, error, sizeof error)) {
            fprintf(stderr, TOOL ": --chaos: %s\n", error);
            return false;
        }
    }
    /* Quiet longer than a rejoin attempt (4 detect timeouts) takes. */
    uint64_t detect_ns = (uint64_t)o->detect_timeout_ms * NS_PER_MS;
    f->detect_ns = detect_ns;
    f->quiet_ns = o->settle_quiet_ns != 0 ? o->settle_quiet_ns : 6u * detect_ns;
    if (f->quiet_ns < 300 * NS_PER_MS && o->settle_quiet_ns == 0)
        f->quiet_ns = 300 * NS_PER_MS;
    f->timeout_ns = o->settle_timeout_ns != 0 ? o->settle_timeout_ns : 60u * detect_ns;
    if (f->timeout_ns < 10 * NS_PER_S && o->settle_timeout_ns == 0)
        f->timeout_ns = 10 * NS_PER_S;
    if (f->timeout_ns < f->quiet_ns)
        f->timeout_ns = f->quiet_ns;
    return true;
}

void emu_faults_release(struct emu *emu)
{
    struct emu_faults *f = emu->hook_state;
    if (f == NULL)
        return;
    emu_script_free(&f->script);
    free(f->progress_fired);
    free(f->progress_seen);
    free(f->recovery_fired);
    free(f->undos);
    emu_chaos_free(&f->chaos);
    emu_inject_world_free(&f->world);
    emu_latency_free(&f->latency);
    emu_results_free(&f->results);
    if (f->records != NULL)
        fclose(f->records);
    free(f->qemu);
    free(f->expected);
    free(f->restarted_epoch);
    free(f->answers);
    free(f->side_of);
    free(f->running);
    free(f->check_expected);
    free(f->reference);
    free(f->undetected_ns);
    free(f);
    emu->hook_state = NULL;
}

unsigned emu_faults_failed_checks(const struct emu *emu)
{
    const struct emu_faults *f = emu->hook_state;
    return f != NULL ? f->results.failed_checks : 0;
}

/* ---- events ---- */

static bool is_membership_activity(const char *name)
{
    static const char *const names[] = {"view",    "failure-detected", "stable", "joined",
                                        "expelled", "partitioned",      "started", "boot",
                                        "ready",    "reformed"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

/*
 * An app-progress event: the faults it makes due remember the iteration it
 * reported (they fire after this turn of the loop, with that iteration).
 */
static void note_progress(const struct emu *emu, struct emu_faults *f,
                          const struct emu_node *node, const struct event_line *line)
{
    uint64_t iteration = 0;
    bool compute = node->rank < emu->count - emu->options->spares;
    if (!compute || !event_line_get_u64(line, "iteration", &iteration) ||
        iteration > UINT32_MAX)
        return;
    for (unsigned i = 0; i < f->script.on_progress_count; i++) {
        const struct emu_action *a = &f->script.on_progress[i];
        bool watched = a->watch == EMU_WATCH_JOB || a->watch == node->rank;
        if (watched && f->progress_seen[i] == 0 && iteration >= a->iteration)
            f->progress_seen[i] = (uint32_t)iteration;
    }
}

static void on_decision(struct emu *emu, struct emu_faults *f, const struct event_line *line);
static void note_recovery(struct emu *emu, struct emu_faults *f, const struct emu_node *node);

void emu_faults_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    struct emu_faults *f = emu->hook_state;
    if (f == NULL)
        return;
    if (f->probing) {
        emu_latency_on_event(&f->latency, node->rank, line);
        return;
    }
    if (!emu->job_started)
        return;
    uint64_t now = emu_line_job_ns(emu);
    if (f->checking && strcmp(line->name, "view-state") == 0) {
        struct emu_view_answer *a = &f->answers[node->rank];
        if (a->asked && !a->answered && !emu_agree_parse_answer(line, a))
            a->answered = false;
        return;
    }
    if (f->checking && strcmp(line->name, "console-error") == 0)
        return; /* `view` refused: left unanswered, reported by the check */
    if (is_membership_activity(line->name))
        f->last_activity_ns = now;
    if (strcmp(line->name, "app-progress") == 0)
        note_progress(emu, f, node, line);
    if (strcmp(line->name, "app-rebuild") == 0)
        note_recovery(emu, f, node);
    if (strcmp(line->name, "failure-detected") == 0 && f->group_open) {
        uint64_t who = UINT64_MAX;
        const char *model = event_line_get(line, "model");
        /* A process or network fault names a node that is up, rightly. */
        bool physical = model == NULL || strcmp(model, "physical") == 0;
        f->open_detections++;
        /* A node cut off from the detector's side is rightly suspected. */
        if (physical && event_line_get_u64(line, "who", &who) && who < emu->count &&
            !emu_results_touches(&f->results, (uint32_t)who) && f->expected[who] &&
            f->side_of[who] == f->side_of[node->rank])
            f->open_false++;
    }
    uint64_t named = UINT64_MAX;
    if (strcmp(line->name, "failure-detected") == 0 &&
        event_line_get_u64(line, "who", &named) && named < emu->count)
        f->undetected_ns[named] = UINT64_MAX;
    if (strcmp(line->name, "reformed") == 0)
        f->reform_seen = true;
    emu_results_on_event(&f->results, node->rank, line, now);
    if (strcmp(line->name, "recovery-decision") == 0)
        on_decision(emu, f, line);
    if (strcmp(line->name, "join-refused") == 0)
        f->expected[node->rank] = false; /* quarantined: it stays out */
    if (strcmp(line->name, "app-killed") == 0) {
        /* It leaves the view, unless it is the only member. */
        const char *leaving = event_line_get(line, "leaving");
        f->expected[node->rank] = leaving == NULL || strcmp(leaving, "true") != 0;
    }
}

void emu_faults_on_ready(struct emu *emu, struct emu_node *node)
{
    struct emu_faults *f = emu->hook_state;
    if (f == NULL || f->world.cut == NULL || f->world.cut[node->rank] == 0)
        return;
    char error[200];
    if (!emu_fault_reapply_cuts(emu, node, f->world.cut[node->rank], error, sizeof error))
        fprintf(stderr, TOOL ": node %u: cannot cut its links again: %s\n",
                (unsigned)node->rank, error);
}

/* ---- injection ---- */

static void expect_after(struct emu_faults *f, const struct emu_action *action)
{
    switch (action->kind) {
    case EMU_ACTION_KILL:
    case EMU_ACTION_HANG:
    case EMU_ACTION_APPKILL: /* up, but out of the view (it asked to leave) */
    case EMU_ACTION_LEAVE:   /* out of the view, then it halts */
        f->expected[action->node] = false;
        break;
    case EMU_ACTION_RESUME:
    case EMU_ACTION_REBOOT:
    case EMU_ACTION_RESTART:
    case EMU_ACTION_JOIN:
        f->expected[action->node] = true;
        break;
    case EMU_ACTION_LINK_OFF:
    case EMU_ACTION_LINK_ON:
    case EMU_ACTION_PING_ALL:
        break;
    }
}

/*
 * `ping all at T`: every running node pings every other, as --ping does
 * (emu_ping_sweep).  The record keeps the ordered pairs of running nodes
 * and how many answered; a pair that did not fails the run, named in one
 * line.
 */
static void ping_sweep(struct emu *emu, struct emu_fault_record *record)
{
    bool *running = calloc(emu->count, sizeof *running);
    if (running == NULL) {
        fprintf(stderr, TOOL ": out of memory for ping results\n");
        emu->failed = true;
        return;
    }
    uint64_t asked = 0;
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_node *node = &emu->nodes[r];
        running[r] = node->pid > 0 && node->state == EMU_NODE_READY && !node->hung &&
                     node->job_started && !node->left;
        asked += running[r];
    }
    /* A node that did not finish failed the run already; its pairs count. */
    emu_ping_sweep(emu, running);
    if (emu->interrupted != 0 || emu->ping.answered == NULL) {
        free(running);
        return;
    }
    uint64_t pairs = asked > 0 ? asked * (asked - 1u) : 0;
    uint64_t missing = emu_ping_missing(&emu->ping, running, NULL, 0);
    record->pinged = true;
    record->ping_pairs = pairs;
    record->ping_answered = pairs - missing;
    if (missing == 0) {
        say(emu, "ping all (fault #%u): %" PRIu64 " of %" PRIu64 " pairs answered",
            record->index, pairs, pairs);
    } else {
        emu_progress_end(emu);
        fprintf(stderr, TOOL ": ping all (fault #%u): %" PRIu64 " of %" PRIu64
                        " pairs of running nodes did not answer: ",
                record->index, missing, pairs);
        emu_ping_missing(&emu->ping, running, stderr, 8);
        fputc('\n', stderr);
        emu->failed = true;
    }
    emu_ping_free(&emu->ping);
    free(running);
}

static void inject(struct emu *emu, struct emu_faults *f, const struct emu_action *action,
                   uint32_t iteration)
{
    uint64_t now = emu_job_ns(emu);
    if (!f->group_open) {
        f->group_open = true;
        f->group++;
        f->group_begin_ns = now;
        f->open_detections = f->open_false = 0;
        f->reform_seen = false;
    }
    f->last_activity_ns = now;
    struct emu_fault_record *record =
        emu_results_add_fault(&f->results, action, now, f->group);
    if (record == NULL) {
        fprintf(stderr, TOOL ": out of memory for fault records\n");
        emu->failed = true;
        return;
    }
    record->iteration = iteration;
    /* A member that crashes holds its group open until someone detects it. */
    if ((action->kind == EMU_ACTION_KILL || action->kind == EMU_ACTION_HANG) &&
        action->node < emu->count && f->expected[action->node])
        f->undetected_ns[action->node] = now;
    char described[EMU_ACTION_TEXT_MAX];
    emu_action_describe(action, described, sizeof described);
    if (action->iteration != 0)
        say(emu, "fault #%u at %+.3fs, iteration %" PRIu32 " reached: %s", record->index,
            (double)now / 1e9, iteration, described);
    else if (action->at_recovery)
        say(emu, "fault #%u at %+.3fs, %s: %s", record->index, (double)now / 1e9,
            action->watch == EMU_WATCH_JOB ? "the job's recovery under way"
                                           : "its node's recovery under way",
            described);
    else
        say(emu, "fault #%u at %+.3fs: %s", record->index, (double)now / 1e9, described);
    char error[200] = "";
    bool ok = emu_inject_apply(&f->world, action, error, sizeof error);
    if (ok)
        ok = emu_fault_apply(emu, action, error, sizeof error);
    if (!ok) {
        record->injected = false;
        snprintf(record->error, sizeof record->error, "%s", error);
        fprintf(stderr, TOOL ": fault #%u (%s) not done: %s\n", record->index, described,
                error);
        return;
    }
    expect_after(f, action);
    if (f->expected[action->node] && action->kind != EMU_ACTION_JOIN)
        f->undetected_ns[action->node] = UINT64_MAX; /* back before it was detected */
    if (!find_sides(emu, f)) {
        fprintf(stderr, TOOL ": out of memory for the torus's sides\n");
        emu->failed = true;
        return;
    }
    if (action->kind == EMU_ACTION_PING_ALL)
        ping_sweep(emu, record);
}

/* ---- the agreement check ---- */

static bool node_booting(const struct emu *emu)
{
    for (uint32_t r = 0; r < emu->count; r++)
        if (emu->nodes[r].pid > 0 && emu->nodes[r].state == EMU_NODE_STARTED)
            return true;
    return false;
}

/* The longest a crash may go undetected before the check runs anyway: the
 * adaptive detector may widen its timeouts (timeout_ceiling). */
#define EMU_DETECT_WAIT_TIMEOUTS 8u
/* membership's re-forming silence (12 join timeouts without a view) and a
 * few rounds of votes and joins, a join timeout being 4 detect timeouts. */
#define EMU_REFORM_WAIT_TIMEOUTS (4u * 16u)

/*
 * Quiet: no membership event for the quiet period, no node booting, every
 * crashed member detected (or given up on), and a re-formed view minted
 * when one is awaited.
 */
static bool group_quiet(const struct emu *emu, const struct emu_faults *f, uint64_t now)
{
    if (now - f->last_activity_ns < f->quiet_ns || node_booting(emu))
        return false;
    if (f->reform_awaited && !f->reform_seen)
        return false;
    for (uint32_t id = 0; id < emu->count; id++)
        if (f->undetected_ns[id] != UINT64_MAX &&
            now - f->undetected_ns[id] < EMU_DETECT_WAIT_TIMEOUTS * f->detect_ns)
            return false;
    return true;
}

/* The settle timeout, longer while a re-formed view is awaited. */
static uint64_t group_timeout_ns(const struct emu_faults *f)
{
    return f->timeout_ns + (f->reform_awaited ? EMU_REFORM_WAIT_TIMEOUTS * f->detect_ns : 0);
}

static void run_check(struct emu *emu, struct emu_faults *f, bool settled)
{
    memset(f->answers, 0, emu->count * sizeof *f->answers);
    f->checking = true;
    uint32_t asked = 0;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (node->pid <= 0 || node->state != EMU_NODE_READY || node->hung ||
            !node->job_started)
            continue;
        if (emu_node_send(node, "view")) {
            f->answers[r].asked = true;
            asked++;
        }
    }
    uint64_t deadline = emu_now_ns(emu) + 5 * NS_PER_S + (uint64_t)emu->count * 20 * NS_PER_MS;
    for (;;) {
        uint32_t answered = 0;
        for (uint32_t r = 0; r < emu->count; r++)
            answered += f->answers[r].answered;
        if (answered >= asked || emu_now_ns(emu) >= deadline || emu->failed ||
            emu->interrupted != 0)
            break;
        emu_step(emu, 20);
    }
    f->checking = false;

    struct emu_check_record check;
    memset(&check, 0, sizeof check);
    check.group = f->group;
    check.begin_ns = f->group_begin_ns;
    check.checked_ns = emu_job_ns(emu);
    check.settled = settled;
    check.detections = f->open_detections;
    check.false_suspicions = f->open_false;
    /* The expectation from the sides as they are now (app-killed or
     * refused nodes may have left the candidates since the last fault). */
    if (!find_sides(emu, f)) {
        snprintf(check.agreement.reason, sizeof check.agreement.reason,
                 "out of memory for the torus's sides");
    } else if (!emu_sides_evaluate(&f->model, &f->expectation, f->side_of, f->side_count,
                                   f->answers, emu->count, f->check_expected, &check.tree,
                                   &check.agreement)) {
        snprintf(check.agreement.reason, sizeof check.agreement.reason,
                 "cannot compute the expected view");
    } else {
        /* Agreement reached only at the settle timeout still counts; the
         * record and the line say it was never quiet. */
        /* A job's communicators agree too (issue 14). */
        char why[200];
        if (check.agreement.passed && emu->options->app_set &&
            !emu_app_check_comms(emu, f->check_expected, why, sizeof why)) {
            check.agreement.passed = false;
            snprintf(check.agreement.reason, sizeof check.agreement.reason, "%s", why);
        }
    }
    check.ocp_ns = emu_results_group_ocp_ns(&f->results, check.agreement.epoch, &check.ocp_samples);
    ts_model_predict(&check.tree.model, f->results.one_hop_ns, check.ocp_ns);
    ts_model_predict_contention(&check.tree.model, &f->results.fans, check.ocp_ns);
    /* Host processes print times on this machine's one monotonic clock. */
    if (emu->options->boards == EMU_BOARDS_HOST) {
        uint8_t *depth = malloc(emu->count);
        check.first = f->results.open_first;
        check.last = f->results.fault_count;
        if (depth != NULL && emu_model_depths(&f->model, f->check_expected, depth))
            emu_results_level_installs(&f->results, &check, depth);
        free(depth);
    }
    /* The view settled: the reference of the next check's majority.  No
     * view anywhere keeps the old one (the nodes' last completed view). */
    if (f->expectation.expect == EMU_AGREE_ONE_VIEW) {
        memcpy(f->reference, f->check_expected, emu->count * sizeof *f->reference);
        f->reference_root = check.tree.root;
        f->viewless = false;
    } else if (f->expectation.expect == EMU_AGREE_NO_VIEW) {
        f->viewless = check.agreement.passed;
    }
    f->reform_awaited = false;
    const struct emu_check_record *closed = emu_results_close_group(
        &f->results, &check, f->records, emu->options->json ? stdout : NULL);
    f->group_open = false;
    if (closed == NULL) {
        fprintf(stderr, TOOL ": out of memory for check records\n");
        emu->failed = true;
        return;
    }
    const struct emu_agreement *g = &closed->agreement;
    unsigned first = f->results.faults[closed->first].index;
    unsigned last = f->results.faults[closed->last - 1].index;
    char faults[32];
    if (first == last)
        snprintf(faults, sizeof faults, "fault #%u", first);
    else
        snprintf(faults, sizeof faults, "faults #%u-#%u", first, last);
    const char *never = settled ? "" : " (never quiet: checked at the settle timeout)";
    if (g->passed && g->expect == EMU_AGREE_NO_VIEW)
        say(emu, "check #%u (%s): pass: no node holds a view: none of the %u sides keeps a "
                 "majority of the last view's %u members%s",
            closed->group, faults, (unsigned)g->sides, (unsigned)f->expectation.reference,
            never);
    else if (g->passed && g->expect == EMU_AGREE_EACH_SIDE)
        say(emu, "check #%u (%s): pass: each of the %u sides agrees on a view of its own "
                 "nodes (%u members; the largest: epoch %" PRIu64 ", %u live, root %" PRId64
                 ")%s",
            closed->group, faults, (unsigned)g->sides, (unsigned)g->members, g->epoch,
            (unsigned)g->live, g->root, never);
    else if (g->passed)
        say(emu, "check #%u (%s): pass: %u nodes agree on epoch %" PRIu64 ", %u live, root %"
                 PRId64 ", digest 0x%016" PRIx64 "%s%s",
            closed->group, faults, (unsigned)g->members, g->epoch, (unsigned)g->live, g->root,
            g->digest, g->sides > 1 ? " (the majority side; the others out)" : "", never);
    else {
        say(emu, "check #%u (%s): FAIL: %s%s", closed->group, faults, g->reason,
            settled ? "" : " (never quiet: checked at the settle timeout)");
        fprintf(stderr, TOOL ": agreement check #%u failed: %s (logs in %s)\n", closed->group,
                g->reason, emu->out_dir);
    }
}

/* ---- the run ---- */

static bool open_records(struct emu *emu, struct emu_faults *f)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/faults.jsonl", emu->out_dir);
    f->records = fopen(path, "we");
    if (f->records == NULL) {
        fprintf(stderr, TOOL ": cannot create '%s': %s\n", path, strerror(errno));
        emu->failed = true;
        return false;
    }
    return true;
}

static void measure(struct emu *emu, struct emu_faults *f)
{
    f->probing = true;
    bool measured = emu_latency_measure(emu, &f->latency, LATENCY_ROUNDS, LATENCY_NODES);
    f->probing = false;
    f->results.one_hop_ns = emu_latency_one_hop_ns(&f->latency);
    f->results.latency_samples = f->latency.count;
    f->probing = true;
    if (measured && !emu_latency_measure_fans(emu, &f->latency, LATENCY_ROUNDS, LATENCY_NODES,
                                              &f->results.fans))
        fprintf(stderr, TOOL ": warning: %u contended exchanges (ping fan) did not answer; "
                        "the contention model uses the fan-outs that did\n",
                f->latency.fan_failed);
    f->probing = false;
    f->results.ocp_ns = emu_model_measure_ocp_ns(&f->model);
    if (!measured)
        fprintf(stderr, TOOL ": warning: no one-hop ping answered (%u failed): the model "
                        "has no latency (L = 0)\n",
                f->latency.failed);
    say(emu, "one-hop latency L = %.3f ms (median round trip / 2 of %u pings); O_cp: each "
             "view's install time on the nodes (launcher CPU %.2f us if none)",
        f->results.one_hop_ns / 1e6, f->latency.count, f->results.ocp_ns / 1e3);
    for (unsigned i = 0; i < f->results.fans.count; i++)
        say(emu, "under contention: L(%u) = %.3f ms (%.2f x L), a node exchanging with its %u "
                 "nearest at once",
            f->results.fans.fanout[i], f->results.fans.hop_ns[i] / 1e6,
            f->results.one_hop_ns > 0 ? f->results.fans.hop_ns[i] / f->results.one_hop_ns : 0.0,
            f->results.fans.fanout[i]);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/*
 * When the next scripted action is due (job time); UINT64_MAX while it
 * must wait for the open group to be checked (--sequential).
 */
static uint64_t script_due(const struct emu *emu, const struct emu_faults *f)
{
    const struct emu_action *next = &f->script.actions[f->next_action];
    if (!emu->options->sequential || f->next_action == 0)
        return next->at_ns;
    const struct emu_action *previous = &f->script.actions[f->next_action - 1];
    if (next->at_ns == previous->at_ns)
        return 0; /* together with the one before */
    if (f->group_open)
        return UINT64_MAX;
    return f->last_inject_ns + (next->at_ns - previous->at_ns);
}

/* An action for later (undo_due_now does it): false when out of memory. */
static bool schedule(struct emu *emu, struct emu_faults *f, const struct emu_action *action)
{
    if (f->undo_count == f->undo_capacity) {
        unsigned capacity = f->undo_capacity == 0 ? 8 : f->undo_capacity * 2;
        struct emu_action *grown = realloc(f->undos, capacity * sizeof *grown);
        if (grown == NULL) {
            fprintf(stderr, TOOL ": out of memory for fault undos\n");
            emu->failed = true;
            return false;
        }
        f->undos = grown;
        f->undo_capacity = capacity;
    }
    f->undos[f->undo_count++] = *action;
    return true;
}

/* Fires every action timed by iteration whose iteration came; schedules its undo. */
static void fire_by_progress(struct emu *emu, struct emu_faults *f)
{
    for (unsigned i = 0; i < f->script.on_progress_count && !emu->failed; i++) {
        const struct emu_action *a = &f->script.on_progress[i];
        uint32_t reached = f->progress_seen[i];
        if (f->progress_fired[i] || reached == 0)
            continue;
        f->progress_fired[i] = true;
        inject(emu, f, a, reached);
        if (a->hold_ns == 0)
            continue;
        struct emu_action undo;
        emu_action_undo(a, a->hold_ns, emu_job_ns(emu) + a->hold_ns, &undo);
        if (!schedule(emu, f, &undo))
            return;
    }
}

/*
 * An app-rebuild event: node began a recovery (its first, if nothing it
 * watches fired yet).  The faults timed by recovery that it (or any node)
 * makes due are scheduled D after now, each with its "for D" undo after
 * that.  Like those timed by iteration, each fires once.
 */
static void note_recovery(struct emu *emu, struct emu_faults *f, const struct emu_node *node)
{
    uint64_t now = emu_job_ns(emu);
    for (unsigned i = 0; i < f->script.on_recovery_count && !emu->failed; i++) {
        const struct emu_action *a = &f->script.on_recovery[i];
        if (f->recovery_fired[i] || (a->watch != EMU_WATCH_JOB && a->watch != node->rank))
            continue;
        f->recovery_fired[i] = true;
        struct emu_action due = *a;
        due.at_ns = now + a->at_ns; /* from now on: job time */
        if (!schedule(emu, f, &due) || a->hold_ns == 0)
            continue;
        struct emu_action undo;
        emu_action_undo(a, a->hold_ns, due.at_ns + a->hold_ns, &undo);
        schedule(emu, f, &undo);
    }
}

/* When the next pending undo is due (UINT64_MAX: none). */
static uint64_t undo_due(const struct emu_faults *f)
{
    uint64_t due = UINT64_MAX;
    for (unsigned i = 0; i < f->undo_count; i++)
        if (f->undos[i].at_ns < due)
            due = f->undos[i].at_ns;
    return due;
}

/* Does the pending undos whose time came, in time order. */
static void undo_due_now(struct emu *emu, struct emu_faults *f, uint64_t now)
{
    while (f->undo_count > 0 && undo_due(f) <= now && !emu->failed) {
        unsigned first = 0;
        for (unsigned i = 1; i < f->undo_count; i++)
            if (f->undos[i].at_ns < f->undos[first].at_ns)
                first = i;
        struct emu_action undo = f->undos[first];
        f->undos[first] = f->undos[--f->undo_count];
        inject(emu, f, &undo, 0);
    }
}

/*
 * The control system's part of a RESTART decision (issue 15): the first
 * member to announce it (every member does, with the view) has the node
 * restarted: a QEMU node that runs is reset (system_reset keeps its RAM),
 * a host process killed and started again (a new incarnation), a dead
 * node started again.  Network decisions (no view change), quarantined
 * nodes (their rejoin is refused) and nodes whose new life joined in the
 * same change (they restarted already) are left alone.
 */
#define EMU_RESTART_AFTER_KILL_NS (300u * NS_PER_MS)
static void on_decision(struct emu *emu, struct emu_faults *f, const struct event_line *line)
{
    const char *action = event_line_get(line, "action");
    const char *model = event_line_get(line, "model");
    const char *quarantined = event_line_get(line, "quarantined");
    const char *rejoined = event_line_get(line, "rejoined");
    uint64_t who = UINT64_MAX;
    uint64_t epoch = 0;
    if (action == NULL || strcmp(action, "restart") != 0 || model == NULL ||
        strcmp(model, "network") == 0 || (quarantined != NULL && strcmp(quarantined, "true") == 0) ||
        (rejoined != NULL && strcmp(rejoined, "true") == 0) ||
        !event_line_get_u64(line, "who", &who) || who >= emu->count ||
        !event_line_get_u64(line, "epoch", &epoch) || f->restarted_epoch[who] == epoch)
        return;
    f->restarted_epoch[who] = epoch;
    uint32_t id = (uint32_t)who;
    enum emu_inject_state state = f->world.state[id];
    struct emu_action first;
    memset(&first, 0, sizeof first);
    first.node = id;
    first.at_ns = emu_job_ns(emu);
    char text[EMU_ACTION_TEXT_MAX];
    if (f->qemu[id] && state == EMU_INJECT_RUNNING)
        first.kind = EMU_ACTION_REBOOT;
    else if (state == EMU_INJECT_RUNNING || state == EMU_INJECT_HUNG)
        first.kind = EMU_ACTION_KILL;
    else if (state == EMU_INJECT_KILLED)
        first.kind = EMU_ACTION_RESTART;
    else
        return;
    snprintf(text, sizeof text, "%s %u (decision: %s)", emu_action_name(first.kind),
             (unsigned)id, model);
    emu_action_set_text(&first, text);
    say(emu, "recovery-decision: node %u (%s) restart: %s", (unsigned)id, model, text);
    if (!schedule(emu, f, &first) || first.kind != EMU_ACTION_KILL)
        return;
    struct emu_action again = first;
    again.kind = EMU_ACTION_RESTART;
    again.at_ns = first.at_ns + EMU_RESTART_AFTER_KILL_NS;
    snprintf(text, sizeof text, "restart %u (decision: %s)", (unsigned)id, model);
    emu_action_set_text(&again, text);
    schedule(emu, f, &again);
}

/* Every action the run ends before: the job was over first. */
static void report_not_fired(struct emu *emu, struct emu_faults *f)
{
    FILE *json = emu->options->json ? stdout : NULL;
    bool ok = true;
    for (unsigned i = f->next_action; i < f->script.count; i++)
        ok = emu_results_add_not_fired(&f->results, &f->script.actions[i], f->records,
                                       json) && ok;
    for (unsigned i = 0; i < f->script.on_progress_count; i++)
        if (!f->progress_fired[i])
            ok = emu_results_add_not_fired(&f->results, &f->script.on_progress[i], f->records,
                                           json) && ok;
    for (unsigned i = 0; i < f->script.on_recovery_count; i++)
        if (!f->recovery_fired[i])
            ok = emu_results_add_not_fired(&f->results, &f->script.on_recovery[i], f->records,
                                           json) && ok;
    for (unsigned i = 0; i < f->undo_count; i++)
        ok = emu_results_add_not_fired(&f->results, &f->undos[i], f->records, json) && ok;
    unsigned count = f->results.not_fired_count;
    if (!ok)
        fprintf(stderr, TOOL ": out of memory for fault records\n");
    else if (count > 0)
        say(emu, "the job is over: %u scheduled fault%s not fired", count,
            count == 1 ? "" : "s");
}

bool emu_faults_run(struct emu *emu)
{
    struct emu_faults *f = emu->hook_state;
    const struct emu_options *o = emu->options;
    if (!open_records(emu, f))
        return false;
    measure(emu, f);
    if (emu->failed || emu->interrupted != 0 || !emu_start_job(emu))
        return false;
    f->results.job_start_ns = emu->job_start_ns;
    say(emu, "job started: %u actions scheduled%s%s; settle after %.0f ms quiet (at most "
             "%.1f s)",
        f->script.count + f->script.on_progress_count + f->script.on_recovery_count,
        f->script.on_progress_count + f->script.on_recovery_count > 0
            ? " (some by the job's progress)"
            : "",
        f->chaos_on ? " plus chaos" : "", (double)f->quiet_ns / 1e6,
        (double)f->timeout_ns / 1e9);
    if (o->app_set)
        say(emu, "the run ends when the job is over: %s, %u iterations; app timeout %.1f s",
            job_app_name(o->app_job.app), (unsigned)o->app_job.iterations,
            (double)emu_app_timeout_ns(emu) / 1e9);
    f->last_activity_ns = 0;
    bool job_over = false;
    while (!emu->failed && emu->interrupted == 0) {
        uint64_t now = emu_job_ns(emu);
        /* A job run ends with the job (once the open group is checked):
         * faults still to come are reported as not fired. */
        job_over = o->app_set && emu_app_job_over(emu);
        if (job_over && !f->group_open)
            break;
        if (o->duration_set && now >= o->duration_ns) {
            if (f->next_action < f->script.count || (f->chaos_on && !emu_chaos_done(&f->chaos, now)))
                say(emu, "--duration reached: %u scripted actions not done",
                    f->script.count - f->next_action);
            break;
        }
        while (!job_over && f->next_action < f->script.count && script_due(emu, f) <= now &&
               !emu->failed) {
            f->last_inject_ns = now;
            inject(emu, f, &f->script.actions[f->next_action++], 0);
        }
        if (!job_over) {
            fire_by_progress(emu, f);
            undo_due_now(emu, f, emu_job_ns(emu));
        }
        if (f->chaos_on && !f->group_open && !job_over) {
            struct emu_action action;
            if (emu_chaos_next(&f->chaos, now, &action))
                inject(emu, f, &action, 0);
        }
        now = emu_job_ns(emu);
        if (f->group_open) {
            bool quiet = group_quiet(emu, f, now);
            if (quiet || now - f->group_begin_ns >= group_timeout_ns(f)) {
                run_check(emu, f, quiet);
                continue;
            }
        }
        bool script_done = f->next_action >= f->script.count;
        if (!o->app_set && !f->group_open && script_done &&
            (!f->chaos_on || emu_chaos_done(&f->chaos, now)))
            break;
        /* Sleep until something is due. */
        uint64_t due = now + 200 * NS_PER_MS;
        if (!script_done)
            due = min_u64(due, script_due(emu, f));
        if (f->group_open)
            due = min_u64(due, min_u64(f->last_activity_ns + f->quiet_ns,
                                       f->group_begin_ns + group_timeout_ns(f)));
        else if (f->chaos_on)
            due = min_u64(due, emu_chaos_next_due(&f->chaos, now));
        if (o->duration_set)
            due = min_u64(due, o->duration_ns);
        due = min_u64(due, undo_due(f));
        if (f->script.on_progress_count > 0)
            due = min_u64(due, now + 20 * NS_PER_MS); /* app-progress comes as events */
        uint64_t wait_ms = due > now ? (due - now + NS_PER_MS - 1) / NS_PER_MS : 0;
        emu_step(emu, (int)(wait_ms > 200 ? 200 : wait_ms));
    }
    if (f->group_open && !emu->failed && emu->interrupted == 0)
        run_check(emu, f, false);
    if (job_over)
        report_not_fired(emu, f);
    fputc('\n', emu->human);
    emu_results_print_table(&f->results, emu->human);
    emu_results_write_summary(&f->results, f->records);
    if (o->json)
        emu_results_write_summary(&f->results, stdout);
    return true;
}

const struct emu_hooks emu_faults_hooks = {
    .prepare = emu_faults_prepare,
    .run = emu_faults_run,
    .on_event = emu_faults_on_event,
    .on_ready = emu_faults_on_ready,
    .failed_checks = emu_faults_failed_checks,
    .release = emu_faults_release,
    .summarizes_views = true,
};
