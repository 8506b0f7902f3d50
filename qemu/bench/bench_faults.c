#define _GNU_SOURCE /* O_CLOEXEC */
#include "qemu/bench/bench_faults.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/personality.h"
#include "net/torus/geometry.h"
#include "qemu/faults/emu_results.h"
#include "qemu/launcher/emu_ping.h"
#include "qemu/launcher/qmp.h"

bool bench_faults_parse_config(const char *text, unsigned kills, struct bench_faults_config *config,
                               char *error, size_t capacity)
{
    memset(config, 0, sizeof *config);
    /* An optional "@HB/DT" suffix sets the timeouts of this one. */
    char shape[64];
    const char *at = strchr(text, '@');
    size_t shape_length = at != NULL ? (size_t)(at - text) : strlen(text);
    if (shape_length >= sizeof shape || strlen(text) >= sizeof config->name) {
        snprintf(error, capacity, "'%.40s' is too long (expected BOARD-DIMS[@HB/DT])", text);
        return false;
    }
    memcpy(shape, text, shape_length);
    shape[shape_length] = '\0';
    unsigned heartbeat = 0, detect = 0;
    if (at != NULL) {
        char tail;
        if (sscanf(at + 1, "%u/%u%c", &heartbeat, &detect, &tail) != 2 || heartbeat == 0 ||
            detect <= heartbeat || detect > 65535) {
            snprintf(error, capacity, "'%.40s': '%s' is not HEARTBEAT/DETECT in ms (expected "
                                      "e.g. @20/200, detect above heartbeat)",
                     text, at + 1);
            return false;
        }
    }
    const char *dash = strchr(shape, '-');
    size_t board_length = dash != NULL ? (size_t)(dash - shape) : 0;
    if (dash == NULL || board_length == 0 || board_length >= sizeof config->board ||
        strlen(dash + 1) >= sizeof config->dims) {
        snprintf(error, capacity, "'%.40s' is not a configuration (expected BOARD-DIMS like "
                                  "qemu-2x2x2 or host-8x8x8)",
                 text);
        return false;
    }
    memcpy(config->board, shape, board_length);
    config->board[board_length] = '\0';
    if (strcmp(config->board, "qemu") != 0 && strcmp(config->board, "host") != 0 &&
        strcmp(config->board, "mixed") != 0) {
        snprintf(error, capacity, "'%.40s': unknown board '%s' (expected qemu, host or mixed)",
                 text, config->board);
        return false;
    }
    snprintf(config->dims, sizeof config->dims, "%s", dash + 1);
    unsigned dims = 0;
    uint32_t size[CONFIG_MAX_DIMS];
    struct torus_geometry_error geometry_error;
    if (torus_geometry_parse_dims(config->dims, &dims, size, &geometry_error) !=
        TORUS_GEOMETRY_OK) {
        snprintf(error, capacity, "'%.40s': '%s' is not a torus shape (expected e.g. 4x4x4)",
                 text, config->dims);
        return false;
    }
    config->nodes = 1;
    for (unsigned d = 0; d < dims; d++)
        config->nodes *= size[d];
    if (config->nodes < 3) {
        snprintf(error, capacity, "'%.40s' has %u nodes (expected at least 3)", text,
                 (unsigned)config->nodes);
        return false;
    }
    snprintf(config->name, sizeof config->name, "%s", text);
    for (char *c = config->name; *c != '\0'; c++)
        if (*c == '/')
            *c = '-'; /* the name is also a directory */
    /* Timeouts that keep a loaded 2-core machine free of false suspicions
     * (measured, see the report); the smallest torus runs the defaults. */
    if (config->nodes <= 16) {
        config->heartbeat_ms = PERSONALITY_DEFAULT_HEARTBEAT_MS;
        config->detect_timeout_ms = PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS;
    } else {
        /* 64 QEMU nodes keep 2 cores busy: slower links (a link declared
         * down needs 10 resends 25 ms apart) and a detector well above that.
         * 512 host processes heartbeating every 100 ms saturate 2 cores on
         * their own: every 500 ms leaves room. */
        config->heartbeat_ms = config->nodes <= 64 ? 100 : 500;
        config->detect_timeout_ms = 10u * config->heartbeat_ms;
        config->link_rto_ms = 25;
        config->link_retries = 10;
    }
    if (heartbeat != 0) {
        config->heartbeat_ms = heartbeat;
        config->detect_timeout_ms = detect;
    }
    config->kills = kills;
    config->timeout_ceiling = PERSONALITY_DEFAULT_TIMEOUT_CEILING;
    return true;
}

unsigned bench_faults_script(const struct bench_faults_config *config, char *text,
                             size_t capacity)
{
    uint32_t n = config->nodes;
    /* A leaf (the last id), inner nodes, the root, more leaves. */
    uint32_t candidates[] = {n - 1, n / 2 + 1, 1, 0, n * 3 / 4, n / 4, 2, n - 2, n / 2 - 1, 3};
    uint32_t chosen[16];
    unsigned count = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && count < config->kills &&
                       count < 16;
         i++) {
        bool seen = candidates[i] >= n;
        for (unsigned j = 0; j < count && !seen; j++)
            seen = chosen[j] == candidates[i];
        if (!seen)
            chosen[count++] = candidates[i];
    }
    /* Run with --sequential: each item also waits for the torus to settle
     * after the one before, so the gap is only a breathing space. */
    unsigned gap_ms = 2u * config->detect_timeout_ms;
    if (gap_ms < 1000u)
        gap_ms = 1000u;
    size_t used = 0;
    text[0] = '\0';
    for (unsigned i = 0; i < count && used < capacity; i++) {
        unsigned at = 1000u + 2u * i * gap_ms;
        int wrote = snprintf(text + used, capacity - used, "%skill %u at %ums; restart %u at %ums",
                             i > 0 ? "; " : "", (unsigned)chosen[i], at, (unsigned)chosen[i],
                             at + gap_ms);
        if (wrote < 0)
            break;
        used += (size_t)wrote;
    }
    return gap_ms;
}

/* The span of key in the object text[0..length), or false. */
static bool member(const char *text, size_t length, const char *key, const char **value,
                   size_t *value_length)
{
    return qmp_json_member(text, length, key, value, value_length);
}

static bool number_of(const char *value, size_t length, double *out)
{
    char buffer[64];
    if (length == 0 || length >= sizeof buffer || value[0] == 'n')
        return false;
    memcpy(buffer, value, length);
    buffer[length] = '\0';
    char *end = NULL;
    *out = strtod(buffer, &end);
    return end != NULL && *end == '\0';
}

static bool nested_number(const char *text, size_t length, const char *object, const char *key,
                          double *out)
{
    const char *value;
    size_t value_length;
    if (!member(text, length, object, &value, &value_length) || value[0] != '{')
        return false;
    const char *inner;
    size_t inner_length;
    return member(value, value_length, key, &inner, &inner_length) &&
           number_of(inner, inner_length, out);
}

bool bench_faults_parse_record(const char *line, struct bench_faults_sample *sample)
{
    memset(sample, 0, sizeof *sample);
    size_t length = strlen(line);
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r'))
        length--;
    const char *value;
    size_t value_length;
    if (!member(line, length, "record", &value, &value_length) || value_length != 7 ||
        memcmp(value, "\"fault\"", 7) != 0)
        return false;
    if (!member(line, length, "action", &value, &value_length) || value_length < 2 ||
        value_length - 2 >= sizeof sample->action)
        return false;
    memcpy(sample->action, value + 1, value_length - 2);
    double number = 0;
    if (!member(line, length, "node", &value, &value_length) ||
        !number_of(value, value_length, &number))
        return false;
    sample->node = (uint32_t)number;
    if (nested_number(line, length, "detection", "after_ns", &number)) {
        sample->detected = true;
        sample->detection_ns = (uint64_t)number;
    }
    if (nested_number(line, length, "stable", "ts_ns", &number)) {
        sample->stable = true;
        sample->ts_ns = (uint64_t)number;
        if (nested_number(line, length, "stable", "rounds", &number))
            sample->rounds = (uint64_t)number;
    }
    if (member(line, length, "recovery_ns", &value, &value_length) &&
        number_of(value, value_length, &number))
        sample->recovery_ns = (uint64_t)number;
    if (nested_number(line, length, "model", "distance_ns", &number))
        sample->model_ns = number;
    if (nested_number(line, length, "model", "one_hop_ns", &number))
        sample->one_hop_ns = number;
    if (nested_number(line, length, "model", "ocp_ns", &number))
        sample->ocp_ns = number;
    if (nested_number(line, length, "model", "levels", &number))
        sample->levels = (uint64_t)number;
    if (nested_number(line, length, "model", "hop_sum", &number))
        sample->hop_sum = (uint64_t)number;
    if (nested_number(line, length, "model", "base_ns", &number))
        sample->base_ns = number;
    if (nested_number(line, length, "model", "contention_ns", &number))
        sample->contention_ns = number;
    static const unsigned fanouts[BENCH_FAULTS_FANS] = {1, 2, 4, 8};
    for (unsigned i = 0; i < BENCH_FAULTS_FANS; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%u", fanouts[i]);
        if (nested_number(line, length, "fans", key, &number))
            sample->fan_hop_ns[i] = number;
    }
    for (unsigned d = 0; d < BENCH_FAULTS_LEVELS; d++) {
        char key[8];
        snprintf(key, sizeof key, "d%u", d);
        if (!nested_number(line, length, "level_install_ns", key, &number))
            break;
        sample->install_ns[d] = number;
        sample->install_levels = d + 1u;
    }
    if (member(line, length, "agreement", &value, &value_length)) {
        const char *result;
        size_t result_length;
        sample->passed = member(value, value_length, "result", &result, &result_length) &&
                         result_length == 6 && memcmp(result, "\"pass\"", 6) == 0;
    }
    return true;
}

void bench_faults_summarize(const struct bench_faults_sample *samples, unsigned count,
                            struct bench_faults_summary *s)
{
    double *detection = calloc(count + 1u, sizeof *detection);
    double *ts = calloc(count + 1u, sizeof *ts);
    double *model = calloc(count + 1u, sizeof *model);
    double *ratio = calloc(count + 1u, sizeof *ratio);
    double *recovery = calloc(count + 1u, sizeof *recovery);
    double *rejoin = calloc(count + 1u, sizeof *rejoin);
    double *ocp = calloc(count + 1u, sizeof *ocp);
    double *base = calloc(count + 1u, sizeof *base);
    double *contention = calloc(count + 1u, sizeof *contention);
    double *contention_ratio = calloc(count + 1u, sizeof *contention_ratio);
    double *install = calloc((count + 1u) * BENCH_FAULTS_LEVELS, sizeof *install);
    if (!detection || !ts || !model || !ratio || !recovery || !rejoin || !ocp || !base ||
        !contention || !contention_ratio || !install) {
        free(detection), free(ts), free(model), free(ratio), free(recovery), free(rejoin);
        free(ocp), free(base), free(contention), free(contention_ratio), free(install);
        return;
    }
    unsigned nb = 0, nk = 0, ni = 0;
    memset(s->fan_hop_ns, 0, sizeof s->fan_hop_ns);
    s->install_levels = 0;
    unsigned nd = 0, nt = 0, nm = 0, nr = 0, nc = 0, nj = 0;
    s->faults = count;
    s->checks = s->checks_passed = s->kills = s->detected = s->stabilized = s->multi_round = 0;
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_sample *x = &samples[i];
        s->checks++;
        s->checks_passed += x->passed;
        if (x->one_hop_ns > 0)
            s->one_hop_ns = x->one_hop_ns;
        for (unsigned f = 0; f < BENCH_FAULTS_FANS; f++)
            if (x->fan_hop_ns[f] > 0)
                s->fan_hop_ns[f] = x->fan_hop_ns[f]; /* one measurement per run */
        if (strcmp(x->action, "restart") == 0 || strcmp(x->action, "join") == 0) {
            if (x->stable)
                rejoin[nj++] = (double)x->ts_ns;
            continue;
        }
        if (strcmp(x->action, "kill") != 0)
            continue;
        if (s->kills == 0) {
            s->levels = x->levels;
            s->hop_sum = x->hop_sum;
        }
        s->kills++;
        if (x->detected) {
            s->detected++;
            detection[nd++] = (double)x->detection_ns;
        }
        if (x->stable) {
            s->stabilized++;
            s->multi_round += x->rounds > 1;
            ts[nt++] = (double)x->ts_ns;
            recovery[nc++] = (double)x->recovery_ns;
            if (x->model_ns > 0) {
                ocp[nm] = x->ocp_ns;
                model[nm++] = x->model_ns;
                ratio[nr++] = (double)x->ts_ns / x->model_ns;
            }
            if (x->base_ns > 0)
                base[nb++] = x->base_ns;
            if (x->contention_ns > 0) {
                contention[nk] = x->contention_ns;
                contention_ratio[nk++] = (double)x->ts_ns / x->contention_ns;
            }
            /* Where T_s went: crashes whose tree has the first one's depth. */
            if (x->install_levels > 0 &&
                (s->install_levels == 0 || x->install_levels == s->install_levels)) {
                s->install_levels = x->install_levels;
                for (unsigned d = 0; d < x->install_levels; d++)
                    install[d * (count + 1u) + ni] = x->install_ns[d];
                ni++;
            }
        }
    }
    s->detection_ns = emu_results_median_of(detection, nd);
    s->ts_ns = emu_results_median_of(ts, nt);
    s->model_ns = emu_results_median_of(model, nm);
    s->ocp_ns = emu_results_median_of(ocp, nm);
    s->ratio = emu_results_median_of(ratio, nr);
    s->recovery_ns = emu_results_median_of(recovery, nc);
    s->rejoin_ts_ns = emu_results_median_of(rejoin, nj);
    s->ts_over_l = s->one_hop_ns > 0 ? s->ts_ns / s->one_hop_ns : 0.0;
    s->base_ns = emu_results_median_of(base, nb);
    s->contention_ns = emu_results_median_of(contention, nk);
    s->contention_ratio = emu_results_median_of(contention_ratio, nk);
    for (unsigned d = 0; d < s->install_levels; d++)
        s->install_ns[d] = emu_results_median_of(&install[d * (count + 1u)], ni);
    free(detection), free(ts), free(model), free(ratio), free(recovery), free(rejoin);
    free(ocp), free(base), free(contention), free(contention_ratio), free(install);
}

bool bench_faults_read(const char *dir, struct bench_faults_summary *summary)
{
    char path[700];
    snprintf(path, sizeof path, "%s/faults.jsonl", dir);
    FILE *file = fopen(path, "re");
    if (file == NULL)
        return false;
    struct bench_faults_sample *samples = NULL;
    unsigned count = 0, capacity = 0;
    static char line[65536];
    bool ok = true;
    while (fgets(line, sizeof line, file) != NULL) {
        struct bench_faults_sample sample;
        if (!bench_faults_parse_record(line, &sample))
            continue;
        if (count == capacity) {
            capacity = capacity == 0 ? 32 : capacity * 2;
            struct bench_faults_sample *grown = realloc(samples, capacity * sizeof *grown);
            if (grown == NULL) {
                ok = false;
                break;
            }
            samples = grown;
        }
        samples[count++] = sample;
    }
    fclose(file);
    if (ok)
        bench_faults_summarize(samples, count, summary);
    free(samples);
    return ok && count > 0;
}

static void print_ms(FILE *out, double ns, bool present)
{
    if (present)
        fprintf(out, " %9.3f", ns / 1e6);
    else
        fprintf(out, " %9s", "-");
}

/* A row's last column: a ratio, or "-" when there is none (0). */
static void print_ratio_end(FILE *out, double ratio)
{
    if (ratio > 0)
        fprintf(out, " %7.2f\n", ratio);
    else
        fprintf(out, " %7s\n", "-");
}

static void print_ping_run(const struct bench_faults_ping *run, FILE *out)
{
    char pairs[48];
    snprintf(pairs, sizeof pairs, "%llu/%llu", (unsigned long long)run->answered,
             (unsigned long long)run->pairs);
    if (run->duration_ns > 0)
        fprintf(out, " %8.3f", (double)run->duration_ns / 1e9);
    else
        fprintf(out, " %8s", "-");
    fprintf(out, " %11s %5u %5u %4d", run->read ? pairs : "-", run->detections,
            run->view_changes, run->status);
}

/* --ping: each configuration's all-pairs ping beside its floor. */
static void print_ping(const struct bench_faults_summary *summaries, unsigned count, FILE *out)
{
    bool any = false;
    for (unsigned i = 0; i < count; i++)
        any |= summaries[i].ping;
    if (!any)
        return;
    fprintf(out, "\nAll-pairs ping (tori-emu --ping): job start (the first `started`) to the "
                 "last ping-done, at the configuration's timings and with the detector all but "
                 "off (floor: %u/%u ms); every failure detection is false\n",
            BENCH_FAULTS_FLOOR_HEARTBEAT_MS, BENCH_FAULTS_FLOOR_DETECT_MS);
    fprintf(out, "%-20s %9s %8s %11s %5s %5s %4s %8s %11s %5s %5s %4s %7s\n", "config",
            "timeouts", "ping s", "pairs", "false", "views", "exit", "floor s", "pairs", "false",
            "views", "exit", "ratio");
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        if (!s->ping)
            continue;
        char timeouts[24];
        snprintf(timeouts, sizeof timeouts, "%u/%u", s->config.heartbeat_ms,
                 s->config.detect_timeout_ms);
        fprintf(out, "%-20s %9s", s->config.name, timeouts);
        print_ping_run(&s->ping_run, out);
        print_ping_run(&s->ping_floor, out);
        print_ratio_end(out, s->ping_ratio);
    }
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        if (!s->ping)
            continue;
        const struct bench_faults_ping *runs[2] = {&s->ping_run, &s->ping_floor};
        for (unsigned r = 0; r < 2; r++) {
            const char *which = r == 0 ? "ping" : "floor ping";
            if (!runs[r]->read)
                fprintf(out, "  %s: the %s left no events (tori-emu exit %d)\n",
                        s->config.name, which, runs[r]->status);
            else if (runs[r]->answered < runs[r]->pairs)
                fprintf(out, "  %s: the %s left %llu of %llu pairs unanswered\n",
                        s->config.name, which,
                        (unsigned long long)(runs[r]->pairs - runs[r]->answered),
                        (unsigned long long)runs[r]->pairs);
            if (runs[r]->detections > 0)
                fprintf(out, "  %s: the %s had %u false detections and %u view changes\n",
                        s->config.name, which, runs[r]->detections, runs[r]->view_changes);
        }
        if (s->ping_floor.duration_ns >= BENCH_FAULTS_FLOOR_DETECT_MS * 1000000ull)
            fprintf(out, "  %s: the floor ping outlasted its own detect timeout (%u ms): it "
                         "is no floor\n",
                    s->config.name, BENCH_FAULTS_FLOOR_DETECT_MS);
    }
    fprintf(out, "  ping s: seconds; pairs: ordered pairs answered; false: failure "
                 "detections; views: view changes; exit: tori-emu's; ratio: ping s / floor s\n");
}

void bench_faults_print_table(const struct bench_faults_summary *summaries, unsigned count,
                              FILE *out)
{
    fprintf(out,
            "\nT_s and detection after node crashes (medians; model: distance model "
            "2 L S + O_cp H from the run's own one-hop latency L)\n");
    fprintf(out, "%-20s %5s %9s %9s %8s %9s %9s %9s %7s %7s %9s %6s %9s %7s\n", "config",
            "nodes", "timeouts", "L ms", "O_cp us", "detect ms", "T_s ms", "model ms", "T_s/mod",
            "T_s/L", "fail->st", "H/S", "rejoin ms", "checks");
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        char timeouts[24], shape[16], checks[24];
        snprintf(timeouts, sizeof timeouts, "%u/%u", s->config.heartbeat_ms,
                 s->config.detect_timeout_ms);
        snprintf(shape, sizeof shape, "%u/%u", (unsigned)s->levels, (unsigned)s->hop_sum);
        snprintf(checks, sizeof checks, "%u/%u", s->checks_passed, s->checks);
        fprintf(out, "%-20s %5u %9s", s->config.name, (unsigned)s->config.nodes, timeouts);
        if (s->status < 0 || s->faults == 0) {
            fprintf(out, "  did not run (exit %d; see %s)\n", s->status, s->out_dir);
            continue;
        }
        print_ms(out, s->one_hop_ns, s->one_hop_ns > 0);
        fprintf(out, " %8.1f", s->ocp_ns / 1e3);
        print_ms(out, s->detection_ns, s->detected > 0);
        print_ms(out, s->ts_ns, s->stabilized > 0);
        print_ms(out, s->model_ns, s->model_ns > 0);
        if (s->ratio > 0)
            fprintf(out, " %7.2f %7.1f", s->ratio, s->ts_over_l);
        else
            fprintf(out, " %7s %7s", "-", "-");
        print_ms(out, s->recovery_ns, s->stabilized > 0);
        fprintf(out, " %6s", shape);
        print_ms(out, s->rejoin_ts_ns, s->rejoin_ts_ns > 0);
        fprintf(out, " %7s\n", checks);
    }
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        if (s->faults == 0)
            continue;
        fprintf(out, "  %s: %u crashes, %u detected, %u stabilized, %u needed more than one "
                     "round (a false suspicion on the way); tori-emu exit %d; records in %s\n",
                s->config.name, s->kills, s->detected, s->stabilized, s->multi_round, s->status,
                s->out_dir);
    }
    fprintf(out, "\nThe paper's Figures 6-8: measured T_s beside the base, distance and contention "
                 "models (medians; L(k): one-hop latency while a node exchanges with its k "
                 "nearest at once)\n");
    fprintf(out, "%-20s %8s %8s %8s %8s %9s %9s %9s %9s %7s\n", "config", "L ms", "L(2) ms",
            "L(4) ms", "L(8) ms", "base ms", "dist ms", "cont ms", "T_s ms", "T_s/con");
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        if (s->status < 0 || s->faults == 0)
            continue;
        fprintf(out, "%-20s", s->config.name);
        for (unsigned f = 0; f < BENCH_FAULTS_FANS; f++) {
            double l = f == 0 ? s->one_hop_ns : s->fan_hop_ns[f]; /* L(1) is L */
            if (l > 0)
                fprintf(out, " %8.3f", l / 1e6);
            else
                fprintf(out, " %8s", "-");
        }
        print_ms(out, s->base_ns, s->base_ns > 0);
        print_ms(out, s->model_ns, s->model_ns > 0);
        print_ms(out, s->contention_ns, s->contention_ns > 0);
        print_ms(out, s->ts_ns, s->stabilized > 0);
        print_ratio_end(out, s->contention_ratio);
    }
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        if (s->install_levels == 0)
            continue;
        fprintf(out, "  %s, where T_s goes (nodes' own clocks): the last member at depth d "
                     "installs the view at", s->config.name);
        for (unsigned d = 0; d < s->install_levels; d++)
            fprintf(out, " d%u %.3f ms%s", d, s->install_ns[d] / 1e6,
                    d + 1u < s->install_levels ? "," : "");
        fprintf(out, "; the root is stable at %.3f ms\n", s->ts_ns / 1e6);
    }
    for (unsigned i = 0; i < count; i++) {
        const struct bench_faults_summary *s = &summaries[i];
        if (s->detected > 0)
            fprintf(out, "  %s: crash detection %.2f x the detect timeout (median, %u busy "
                         "processes beside)\n",
                    s->config.name, s->detection_ns / (s->config.detect_timeout_ms * 1e6),
                    s->load);
        if (s->idle_seconds > 0) {
            fprintf(out, "  %s: idle %u s with %u busy processes beside: %u false detections, "
                         "%u view changes (tori-emu exit %d)\n",
                    s->config.name, s->idle_seconds, s->load, s->idle_failures,
                    s->idle_view_changes, s->idle_status);
            if (s->idle_cpu_per_node >= 0 && s->idle_frames_per_node >= 0)
                fprintf(out, "  %s: idle cost %.4f CPU s per node per second (%.2f cores for "
                             "the %u nodes), %.1f frames per node per second\n",
                        s->config.name, s->idle_cpu_per_node,
                        s->idle_cpu_per_node * s->config.nodes, (unsigned)s->config.nodes,
                        s->idle_frames_per_node);
        }
    }
    print_ping(summaries, count, out);
    fprintf(out, "  timeouts: heartbeat/detect ms; fail->st: crash to the root's stable "
                 "(detection included); H/S: tree levels / sum of the largest parent-child "
                 "hop count per level; O_cp: median over crashes of the nodes' own time to install "
                 "the new view (the paper measures O_cp on the target)\n");
}

void bench_faults_write_json(const struct bench_faults_summary *s, FILE *out)
{
    fprintf(out,
            "{\"record\":\"bench-faults\",\"config\":\"%s\",\"board\":\"%s\",\"dims\":\"%s\",\"nodes\":%u,"
            "\"heartbeat_ms\":%u,\"detect_timeout_ms\":%u,\"timeout_ceiling\":%u,\"status\":%d,\"faults\":%u,"
            "\"checks\":%u,\"checks_passed\":%u,\"kills\":%u,\"detected\":%u,\"stabilized\":%u,"
            "\"multi_round\":%u,\"one_hop_ns\":%.0f,\"ocp_ns\":%.1f,\"detection_ns\":%.0f,"
            "\"ts_ns\":%.0f,\"model_ns\":%.0f,\"ratio\":%.3f,\"ts_over_l\":%.2f,"
            "\"recovery_ns\":%.0f,\"rejoin_ts_ns\":%.0f,\"levels\":%" PRIu64
            ",\"hop_sum\":%" PRIu64 ",\"base_ns\":%.0f,\"contention_ns\":%.0f,"
            "\"contention_ratio\":%.3f,\"l2_ns\":%.0f,\"l4_ns\":%.0f,\"l8_ns\":%.0f,"
            "\"load\":%u,\"idle_s\":%u,\"idle_false_detections\":%u,"
            "\"idle_cpu_per_node_s\":%.6f,\"idle_frames_per_node_s\":%.1f,"
            "\"idle_view_changes\":%u,",
            s->config.name, s->config.board, s->config.dims, (unsigned)s->config.nodes,
            s->config.heartbeat_ms, s->config.detect_timeout_ms, s->config.timeout_ceiling, s->status, s->faults, s->checks,
            s->checks_passed, s->kills, s->detected, s->stabilized, s->multi_round, s->one_hop_ns,
            s->ocp_ns, s->detection_ns, s->ts_ns, s->model_ns, s->ratio, s->ts_over_l,
            s->recovery_ns, s->rejoin_ts_ns, s->levels, s->hop_sum, s->base_ns, s->contention_ns,
            s->contention_ratio, s->fan_hop_ns[1], s->fan_hop_ns[2], s->fan_hop_ns[3], s->load,
            s->idle_seconds, s->idle_failures,
            s->idle_seconds > 0 ? s->idle_cpu_per_node : -1.0,
            s->idle_seconds > 0 ? s->idle_frames_per_node : -1.0, s->idle_view_changes);
    if (s->ping) {
        const struct bench_faults_ping *runs[2] = {&s->ping_run, &s->ping_floor};
        for (unsigned r = 0; r < 2; r++)
            fprintf(out,
                    "\"%s\":{\"heartbeat_ms\":%u,\"detect_timeout_ms\":%u,\"status\":%d,"
                    "\"duration_ns\":%" PRIu64 ",\"pairs\":%" PRIu64 ",\"answered\":%" PRIu64
                    ",\"ping_done\":%" PRIu64 ",\"false_detections\":%u,\"view_changes\":%u},",
                    r == 0 ? "ping" : "ping_floor",
                    r == 0 ? s->config.heartbeat_ms : BENCH_FAULTS_FLOOR_HEARTBEAT_MS,
                    r == 0 ? s->config.detect_timeout_ms : BENCH_FAULTS_FLOOR_DETECT_MS,
                    runs[r]->status, runs[r]->duration_ns, runs[r]->pairs, runs[r]->answered,
                    runs[r]->done, runs[r]->detections, runs[r]->view_changes);
        fprintf(out, "\"ping_ratio\":%.3f,", s->ping_ratio);
    }
    fprintf(out, "\"out\":\"%s\"}\n", s->out_dir);
    fflush(out);
}

/* The number after "key": in line; false when absent. */
static bool json_number(const char *line, const char *key, double *value)
{
    char pattern[48];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(line, pattern);
    if (at == NULL)
        return false;
    char *end;
    *value = strtod(at + strlen(pattern), &end);
    return end != at + strlen(pattern);
}

void bench_faults_read_idle_cost(const char *dir, struct bench_faults_summary *summary)
{
    summary->idle_cpu_per_node = -1;
    summary->idle_frames_per_node = -1;
    char path[640], line[4096];
    snprintf(path, sizeof path, "%s/cpu.json", dir);
    FILE *in = fopen(path, "re");
    if (in != NULL) {
        double value;
        if (fgets(line, sizeof line, in) != NULL && json_number(line, "cpu_per_node_s", &value))
            summary->idle_cpu_per_node = value;
        fclose(in);
    }
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    in = fopen(path, "re");
    if (in == NULL)
        return;
    /* Per node, its first and last stats: tori-emu asks for them when the
     * idle window opens and before the nodes stop. */
    enum { NODES_MAX = 4096 };
    static double first_wire[NODES_MAX], first_ns[NODES_MAX], last_wire[NODES_MAX],
        last_ns[NODES_MAX];
    static bool seen[NODES_MAX];
    memset(seen, 0, sizeof seen);
    while (fgets(line, sizeof line, in) != NULL) {
        double node, wire, t_ns;
        if (strstr(line, "\"event\":\"stats\"") == NULL || !json_number(line, "node", &node) ||
            !json_number(line, "wire", &wire) || !json_number(line, "t_ns", &t_ns) ||
            node < 0 || node >= NODES_MAX)
            continue;
        unsigned n = (unsigned)node;
        if (!seen[n]) {
            seen[n] = true;
            first_wire[n] = wire;
            first_ns[n] = t_ns;
        }
        last_wire[n] = wire;
        last_ns[n] = t_ns;
    }
    fclose(in);
    double rate_sum = 0;
    unsigned nodes = 0;
    for (unsigned n = 0; n < NODES_MAX; n++) {
        if (seen[n] && last_ns[n] > first_ns[n]) {
            rate_sum += (last_wire[n] - first_wire[n]) / ((last_ns[n] - first_ns[n]) / 1e9);
            nodes++;
        }
    }
    if (nodes > 0)
        summary->idle_frames_per_node = rate_sum / nodes;
}

bool bench_faults_read_events(const char *dir, uint32_t nodes, struct bench_faults_ping *run)
{
    int status = run->status;
    memset(run, 0, sizeof *run);
    run->status = status;
    char path[640];
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    struct emu_ping pings;
    if (nodes == 0 || !emu_ping_init(&pings, nodes))
        return false;
    FILE *in = fopen(path, "re");
    if (in == NULL) {
        emu_ping_free(&pings);
        return false;
    }
    run->read = true;
    /* The view epochs seen: the first is the start's own view. */
    enum { EPOCHS_MAX = 4096 };
    static double epochs[EPOCHS_MAX];
    unsigned epoch_count = 0;
    bool started = false;
    double started_ns = 0, done_ns = 0, value;
    static char line[4096];
    while (fgets(line, sizeof line, in) != NULL) {
        double emu_ns = 0;
        bool timed = json_number(line, "emu_ns", &emu_ns);
        if (strstr(line, "\"failure-detected\"") != NULL) {
            run->detections++;
        } else if (strncmp(line, "{\"event\":\"view\",", 16) == 0 &&
                   json_number(line, "epoch", &value)) {
            bool seen = false;
            for (unsigned i = 0; i < epoch_count && !seen; i++)
                seen = epochs[i] == value;
            if (!seen && epoch_count < EPOCHS_MAX)
                epochs[epoch_count++] = value;
        } else if (strncmp(line, "{\"event\":\"started\",", 19) == 0 && timed) {
            if (!started || emu_ns < started_ns)
                started_ns = emu_ns;
            started = true;
        } else if (strncmp(line, "{\"event\":\"ping-done\",", 21) == 0 && timed) {
            run->done++;
            if (emu_ns > done_ns)
                done_ns = emu_ns;
        } else if (strncmp(line, "{\"event\":\"ping\",", 16) == 0) {
            double source, destination, hops = UINT32_MAX, rtt = 0, ok;
            if (!json_number(line, "node", &source) || !json_number(line, "dst", &destination) ||
                !json_number(line, "ok", &ok) || source < 0 || source >= nodes ||
                destination < 0 || destination >= nodes)
                continue;
            json_number(line, "hops", &hops);
            json_number(line, "rtt_ns", &rtt);
            emu_ping_record(&pings, NULL, (uint32_t)source, (uint32_t)destination,
                            hops >= 0 && hops < UINT32_MAX ? (uint32_t)hops : UINT32_MAX,
                            rtt > 0 ? (uint64_t)rtt : 0, ok != 0);
        }
    }
    fclose(in);
    run->view_changes = epoch_count > 0 ? epoch_count - 1u : 0u;
    run->pairs = (uint64_t)nodes * (nodes - 1u);
    run->answered = run->pairs - emu_ping_missing(&pings, NULL, NULL, 0);
    emu_ping_free(&pings);
    if (started && run->done > 0 && done_ns > started_ns)
        run->duration_ns = (uint64_t)(done_ns - started_ns);
    return true;
}

bool bench_faults_read_link_timings(const char *dir, unsigned *rto_ms, unsigned *retries)
{
    char path[640];
    snprintf(path, sizeof path, "%s/node0.personality", dir);
    FILE *in = fopen(path, "rbe");
    if (in == NULL)
        return false;
    uint8_t block[PERSONALITY_SIZE];
    size_t length = fread(block, 1, sizeof block, in);
    fclose(in);
    struct personality p;
    struct personality_error error;
    if (!personality_decode(block, length, &p, &error))
        return false;
    *rto_ms = p.link_rto_ms;
    *retries = p.link_retries;
    return true;
}

bool bench_faults_ping_failed(const struct bench_faults_ping *run)
{
    return run->status != 0 || !run->read || run->answered < run->pairs ||
           run->duration_ns == 0;
}

void bench_faults_ping_ratio(struct bench_faults_summary *s)
{
    s->ping_ratio = s->ping_run.duration_ns > 0 && s->ping_floor.duration_ns > 0
                        ? (double)s->ping_run.duration_ns / (double)s->ping_floor.duration_ns
                        : 0.0;
}

int bench_run_logged(const char *tool, char *const argv[], const char *log_path)
{
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) {
        fprintf(stderr, "%s: cannot create '%s': %s\n", tool, log_path, strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "%s: cannot run %s: %s\n", tool, argv[0], strerror(errno));
        _exit(127);
    }
    close(log);
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", tool, strerror(errno));
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
