#include "qemu/faults/emu_results.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

bool emu_results_init(struct emu_results *results, uint32_t count)
{
    memset(results, 0, sizeof *results);
    results->count = count;
    uint32_t n = count > 0 ? count : 1;
    results->has_view = calloc(n, sizeof *results->has_view);
    results->view_epoch = calloc(n, sizeof *results->view_epoch);
    results->view_digest = calloc(n, sizeof *results->view_digest);
    results->view_ns = calloc(n, sizeof *results->view_ns);
    results->view_ocp_ns = calloc(n, sizeof *results->view_ocp_ns);
    results->view_node_ns = calloc(n, sizeof *results->view_node_ns);
    if (results->has_view == NULL || results->view_epoch == NULL ||
        results->view_digest == NULL || results->view_ns == NULL ||
        results->view_ocp_ns == NULL || results->view_node_ns == NULL) {
        emu_results_free(results);
        return false;
    }
    return true;
}

void emu_results_free(struct emu_results *results)
{
    free(results->faults);
    free(results->checks);
    free(results->has_view);
    free(results->view_epoch);
    free(results->view_digest);
    free(results->view_ns);
    free(results->view_ocp_ns);
    free(results->view_node_ns);
    free(results->not_fired);
    memset(results, 0, sizeof *results);
}

struct emu_fault_record *emu_results_add_fault(struct emu_results *results,
                                               const struct emu_action *action,
                                               uint64_t injected_ns, unsigned group)
{
    if (results->fault_count == results->fault_capacity) {
        unsigned capacity = results->fault_capacity == 0 ? 32 : results->fault_capacity * 2;
        struct emu_fault_record *grown =
            realloc(results->faults, capacity * sizeof *grown);
        if (grown == NULL)
            return NULL;
        results->faults = grown;
        results->fault_capacity = capacity;
    }
    struct emu_fault_record *r = &results->faults[results->fault_count++];
    memset(r, 0, sizeof *r);
    r->index = results->fault_count;
    r->action = *action;
    r->injected_ns = injected_ns;
    r->injected = true;
    r->group = group;
    return r;
}

static void json_string(FILE *out, const char *text);

static void write_not_fired(const struct emu_action *a, FILE *out)
{
    fprintf(out, "{\"record\":\"not-fired\",\"text\":");
    json_string(out, a->text);
    if (a->iteration != 0)
        fprintf(out, ",\"at_iteration\":%" PRIu32 "}\n", a->iteration);
    else if (a->at_recovery) /* its text says how long after (at_ns: once due, job time) */
        fprintf(out, ",\"at_recovery\":true}\n");
    else
        fprintf(out, ",\"at_ns\":%" PRIu64 "}\n", a->at_ns);
    fflush(out);
}

bool emu_results_add_not_fired(struct emu_results *results, const struct emu_action *action,
                               FILE *json_a, FILE *json_b)
{
    if (results->not_fired_count == results->not_fired_capacity) {
        unsigned capacity =
            results->not_fired_capacity == 0 ? 8 : results->not_fired_capacity * 2;
        struct emu_action *grown = realloc(results->not_fired, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        results->not_fired = grown;
        results->not_fired_capacity = capacity;
    }
    results->not_fired[results->not_fired_count++] = *action;
    if (json_a != NULL)
        write_not_fired(action, json_a);
    if (json_b != NULL)
        write_not_fired(action, json_b);
    return true;
}

bool emu_results_touches(const struct emu_results *results, uint32_t node)
{
    for (unsigned i = results->open_first; i < results->fault_count; i++)
        if (results->faults[i].action.node == node)
            return true;
    return false;
}

static void copy_token(char *out, size_t capacity, const char *text)
{
    size_t n = 0;
    for (; text != NULL && *text != '\0' && n + 1 < capacity; text++)
        if ((*text >= 'a' && *text <= 'z') || *text == '-' || (*text >= '0' && *text <= '9'))
            out[n++] = *text;
    out[n] = '\0';
}

static uint64_t get_u64(const struct event_line *line, const char *key)
{
    uint64_t value = 0;
    event_line_get_u64(line, key, &value);
    return value;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double emu_results_median_of(double *values, unsigned n)
{
    if (n == 0)
        return 0.0;
    qsort(values, n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

double emu_results_group_ocp_ns(const struct emu_results *results, uint64_t epoch,
                                unsigned *samples)
{
    *samples = 0;
    double *times = malloc((results->count + 1u) * sizeof *times);
    if (times == NULL)
        return results->ocp_ns;
    unsigned n = 0;
    for (uint32_t r = 0; r < results->count; r++)
        if (results->has_view[r] && results->view_epoch[r] == epoch && results->view_ocp_ns[r] > 0)
            times[n++] = (double)results->view_ocp_ns[r];
    double ocp = n > 0 ? emu_results_median_of(times, n) : results->ocp_ns;
    free(times);
    *samples = n;
    return ocp;
}

void emu_results_on_event(struct emu_results *results, uint32_t rank,
                          const struct event_line *line, uint64_t now_ns)
{
    const char *name = line->name;
    if (rank >= results->count)
        return;
    if (strcmp(name, "view") == 0) {
        uint64_t digest = 0;
        if (emu_agree_parse_hex(event_line_get(line, "digest"), &digest)) {
            results->has_view[rank] = true;
            results->view_epoch[rank] = get_u64(line, "epoch");
            results->view_digest[rank] = digest;
            results->view_ns[rank] = now_ns;
            results->view_ocp_ns[rank] = get_u64(line, "ocp_ns");
            results->view_node_ns[rank] = line->t_ns;
        }
        return;
    }
    /* A link fault's far end answers around it: its near end says network
     * (issue 15), naming the far end; that is this fault's detection. */
    const char *model = event_line_get(line, "model");
    bool network = model != NULL && strcmp(model, "network") == 0;
    for (unsigned i = results->open_first; i < results->fault_count; i++) {
        struct emu_fault_record *r = &results->faults[i];
        if (!r->injected || now_ns < r->injected_ns)
            continue;
        bool link = r->action.kind == EMU_ACTION_LINK_OFF;
        bool at_link_end = link && network && rank == r->action.node;
        if (strcmp(name, "failure-detected") == 0) {
            uint64_t who = UINT64_MAX;
            if (event_line_get_u64(line, "who", &who) && (who == r->action.node || at_link_end) &&
                !r->detected) {
                r->detected = true;
                r->detected_ns = now_ns;
                r->detector = rank;
                r->node_detect_ns = get_u64(line, "detect_ns");
                copy_token(r->cause, sizeof r->cause, event_line_get(line, "cause"));
                copy_token(r->model, sizeof r->model, event_line_get(line, "model"));
            }
        } else if (strcmp(name, "recovery-decision") == 0) {
            uint64_t who = UINT64_MAX;
            if (event_line_get_u64(line, "who", &who) && (who == r->action.node || at_link_end) &&
                !r->decided) {
                r->decided = true;
                copy_token(r->decision_model, sizeof r->decision_model,
                           event_line_get(line, "model"));
                copy_token(r->decision_action, sizeof r->decision_action,
                           event_line_get(line, "action"));
                const char *quarantined = event_line_get(line, "quarantined");
                r->quarantined = quarantined != NULL && strcmp(quarantined, "true") == 0;
            }
        } else if (strcmp(name, "stable") == 0) {
            r->stables++;
            if (!r->stable) {
                r->stable = true;
                r->stable_ns = now_ns;
                r->stable_root = rank;
                r->stable_epoch = get_u64(line, "epoch");
                r->ts_ns = get_u64(line, "ts_ns");
                r->messages = get_u64(line, "messages");
                r->episode_messages = get_u64(line, "episode_messages");
                r->rounds = get_u64(line, "rounds");
                r->stable_live = get_u64(line, "live");
                r->levels = get_u64(line, "levels");
                r->stable_node_ns = line->t_ns;
            }
        } else if (strcmp(name, "joined") == 0 && rank == r->action.node && !r->rejoined) {
            r->rejoined = true;
            r->rejoined_ns = now_ns;
        } else if (strcmp(name, "expelled") == 0 && rank == r->action.node && !r->expelled) {
            r->expelled = true;
            r->expelled_ns = now_ns;
        } else if (strcmp(name, "left") == 0 && rank == r->action.node && !r->left) {
            r->left = true;
            r->left_ns = now_ns;
        }
    }
}

void emu_results_level_installs(const struct emu_results *results, struct emu_check_record *check,
                                const uint8_t *depth_by_id)
{
    check->level_count = 0;
    const struct emu_fault_record *r = &results->faults[check->first];
    if (check->first >= check->last || !r->stable || r->stable_node_ns < r->ts_ns)
        return;
    uint64_t start = r->stable_node_ns - r->ts_ns;
    for (uint32_t id = 0; id < results->count; id++) {
        uint8_t d = depth_by_id[id];
        if (d == UINT8_MAX || d >= TS_MODEL_MAX_LEVELS || !results->has_view[id] ||
            results->view_epoch[id] != r->stable_epoch || results->view_node_ns[id] < start)
            continue;
        double at = (double)(results->view_node_ns[id] - start);
        if (d + 1u > check->level_count) {
            for (unsigned k = check->level_count; k <= d; k++)
                check->level_install_ns[k] = 0.0;
            check->level_count = d + 1u;
        }
        if (at > check->level_install_ns[d])
            check->level_install_ns[d] = at;
    }
}

/* ---- JSON ---- */

static void json_optional_ns(FILE *out, const char *key, bool present, uint64_t value)
{
    if (present)
        fprintf(out, ",\"%s\":%" PRIu64, key, value);
    else
        fprintf(out, ",\"%s\":null", key);
}

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20 || *c > 0x7e)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void write_record(const struct emu_results *results, const struct emu_fault_record *r,
                         const struct emu_check_record *check, FILE *out)
{
    const struct emu_action *a = &r->action;
    fprintf(out, "{\"record\":\"fault\",\"index\":%u,\"action\":\"%s\",\"node\":%u", r->index,
            a->kind == EMU_ACTION_LINK_OFF  ? "link-off"
            : a->kind == EMU_ACTION_LINK_ON ? "link-on"
                                            : emu_action_name(a->kind),
            (unsigned)a->node);
    if (a->kind == EMU_ACTION_LINK_OFF || a->kind == EMU_ACTION_LINK_ON)
        fprintf(out, ",\"link\":\"%s\"", torus_geometry_link_name(a->link));
    fprintf(out, ",\"text\":");
    json_string(out, a->text);
    fprintf(out, ",\"injected_ns\":%" PRIu64 ",\"injected\":%s", r->injected_ns,
            r->injected ? "true" : "false");
    if (a->iteration != 0)
        fprintf(out, ",\"at_iteration\":%" PRIu32 ",\"iteration\":%" PRIu32, a->iteration,
                r->iteration);
    if (a->at_recovery)
        fprintf(out, ",\"at_recovery\":true");
    if (!r->injected) {
        fprintf(out, ",\"error\":");
        json_string(out, r->error);
    }
    fprintf(out, ",\"group\":%u", r->group);
    if (r->detected)
        fprintf(out,
                ",\"detection\":{\"at_ns\":%" PRIu64 ",\"after_ns\":%" PRIu64
                ",\"detector\":%u,\"cause\":\"%s\",\"node_detect_ns\":%" PRIu64 "}",
                r->detected_ns, r->detected_ns - r->injected_ns, (unsigned)r->detector,
                r->cause, r->node_detect_ns);
    else
        fprintf(out, ",\"detection\":null");
    if (r->decided)
        fprintf(out, ",\"decision\":{\"model\":\"%s\",\"action\":\"%s\",\"quarantined\":%s}",
                r->decision_model, r->decision_action, r->quarantined ? "true" : "false");
    else
        fprintf(out, ",\"decision\":null");
    if (r->stable)
        fprintf(out,
                ",\"stable\":{\"at_ns\":%" PRIu64 ",\"root\":%u,\"epoch\":%" PRIu64
                ",\"ts_ns\":%" PRIu64 ",\"messages\":%" PRIu64 ",\"episode_messages\":%" PRIu64
                ",\"rounds\":%" PRIu64 ",\"live\":%" PRIu64 ",\"levels\":%" PRIu64
                ",\"count\":%u}",
                r->stable_ns, (unsigned)r->stable_root, r->stable_epoch, r->ts_ns, r->messages,
                r->episode_messages, r->rounds, r->stable_live, r->levels, r->stables);
    else
        fprintf(out, ",\"stable\":null");
    json_optional_ns(out, "recovery_ns", r->stable, r->stable_ns - r->injected_ns);
    json_optional_ns(out, "rejoined_ns", r->rejoined, r->rejoined_ns - r->injected_ns);
    json_optional_ns(out, "expelled_ns", r->expelled, r->expelled_ns - r->injected_ns);
    json_optional_ns(out, "left_ns", r->left, r->left_ns - r->injected_ns);
    if (r->pinged)
        fprintf(out, ",\"ping\":{\"pairs\":%" PRIu64 ",\"answered\":%" PRIu64 "}",
                r->ping_pairs, r->ping_answered);
    const struct emu_model_tree *t = &check->tree;
    fprintf(out,
            ",\"model\":{\"one_hop_ns\":%.0f,\"ocp_ns\":%.1f,\"ocp_samples\":%u,"
            "\"launcher_ocp_ns\":%.1f,\"levels\":%u,\"hop_sum\":%u,"
            "\"base_ns\":%.0f,\"distance_ns\":%.0f",
            results->one_hop_ns, check->ocp_ns, check->ocp_samples, results->ocp_ns,
            (unsigned)t->model.levels, (unsigned)t->model.hop_sum,
            check->tree.model.base_ns, check->tree.model.distance_ns);
    if (results->fans.count > 0)
        fprintf(out, ",\"contention_ns\":%.0f", t->model.contention_ns);
    else
        fprintf(out, ",\"contention_ns\":null");
    fputc('}', out);
    /* The contention model's inputs and where T_s went, as flat objects. */
    if (results->fans.count > 0) {
        fprintf(out, ",\"fans\":{");
        for (unsigned i = 0; i < results->fans.count; i++)
            fprintf(out, "%s\"k%u\":%.0f", i > 0 ? "," : "", results->fans.fanout[i],
                    results->fans.hop_ns[i]);
        fprintf(out, "},\"level_fanout\":{");
        for (uint32_t d = 1; d < t->model.levels && d < TS_MODEL_MAX_LEVELS; d++)
            fprintf(out, "%s\"d%u\":%u", d > 1 ? "," : "", (unsigned)d,
                    (unsigned)t->model.level_max_fanout[d]);
        fputc('}', out);
    }
    if (check->level_count > 0) {
        fprintf(out, ",\"level_install_ns\":{");
        for (unsigned d = 0; d < check->level_count; d++)
            fprintf(out, "%s\"d%u\":%.0f", d > 0 ? "," : "", d, check->level_install_ns[d]);
        fputc('}', out);
    }
    if (r->stable && check->tree.model.distance_ns > 0)
        fprintf(out, ",\"ratio\":%.3f", (double)r->ts_ns / check->tree.model.distance_ns);
    else
        fprintf(out, ",\"ratio\":null");
    fprintf(out, ",\"views\":[");
    bool first = true;
    for (uint32_t n = 0; n < results->count; n++) {
        if (!results->has_view[n] || results->view_ns[n] < r->injected_ns)
            continue;
        fprintf(out, "%s{\"node\":%u,\"epoch\":%" PRIu64 ",\"digest\":\"0x%016" PRIx64
                     "\",\"at_ns\":%" PRIu64 "}",
                first ? "" : ",", (unsigned)n, results->view_epoch[n], results->view_digest[n],
                results->view_ns[n]);
        first = false;
    }
    const struct emu_agreement *g = &check->agreement;
    fprintf(out,
            "],\"agreement\":{\"result\":\"%s\",\"settled\":%s,\"checked_ns\":%" PRIu64
            ",\"asked\":%u,\"answered\":%u,\"members\":%u,\"epoch\":%" PRIu64
            ",\"digest\":\"0x%016" PRIx64 "\",\"live\":%u,\"root\":%" PRId64
            ",\"expected_digest\":\"0x%016" PRIx64 "\",\"expected_live\":%u,"
            "\"expected_root\":%u,\"expect\":\"%s\",\"sides\":%u,\"detections\":%u,"
            "\"false_suspicions\":%u,\"reason\":",
            g->passed ? "pass" : "fail", check->settled ? "true" : "false", check->checked_ns,
            (unsigned)g->asked, (unsigned)g->answered, (unsigned)g->members, g->epoch,
            g->digest, (unsigned)g->live, g->root, g->expected_digest,
            (unsigned)g->expected_live, (unsigned)g->expected_root,
            emu_agree_expect_name(g->expect), (unsigned)g->sides, check->detections,
            check->false_suspicions);
    json_string(out, g->reason);
    fprintf(out, "}}\n");
    fflush(out);
}

struct emu_check_record *emu_results_close_group(struct emu_results *results,
                                                 const struct emu_check_record *check,
                                                 FILE *json_a, FILE *json_b)
{
    if (results->check_count == results->check_capacity) {
        unsigned capacity = results->check_capacity == 0 ? 16 : results->check_capacity * 2;
        struct emu_check_record *grown = realloc(results->checks, capacity * sizeof *grown);
        if (grown == NULL)
            return NULL;
        results->checks = grown;
        results->check_capacity = capacity;
    }
    struct emu_check_record *c = &results->checks[results->check_count++];
    *c = *check;
    c->first = results->open_first;
    c->last = results->fault_count;
    if (!c->agreement.passed)
        results->failed_checks++;
    for (unsigned i = c->first; i < c->last; i++) {
        if (json_a != NULL)
            write_record(results, &results->faults[i], c, json_a);
        if (json_b != NULL)
            write_record(results, &results->faults[i], c, json_b);
    }
    results->open_first = results->fault_count;
    return c;
}

/* ---- the table ---- */

static const struct emu_check_record *check_of(const struct emu_results *results,
                                               const struct emu_fault_record *r)
{
    for (unsigned c = 0; c < results->check_count; c++)
        if (results->checks[c].group == r->group)
            return &results->checks[c];
    return NULL;
}

double emu_results_median(const struct emu_results *results, int column)
{
    double *values = malloc((results->fault_count + 1u) * sizeof *values);
    if (values == NULL)
        return 0.0;
    unsigned n = 0;
    for (unsigned i = 0; i < results->fault_count; i++) {
        const struct emu_fault_record *r = &results->faults[i];
        const struct emu_check_record *c = check_of(results, r);
        if (column == EMU_RESULTS_DETECTION && r->detected)
            values[n++] = (double)(r->detected_ns - r->injected_ns);
        else if (column == EMU_RESULTS_TS && r->stable)
            values[n++] = (double)r->ts_ns;
        else if (column == EMU_RESULTS_RECOVERY && r->stable)
            values[n++] = (double)(r->stable_ns - r->injected_ns);
        else if (column == EMU_RESULTS_RATIO && r->stable && c != NULL &&
                 c->tree.model.distance_ns > 0)
            values[n++] = (double)r->ts_ns / c->tree.model.distance_ns;
    }
    double median = emu_results_median_of(values, n);
    free(values);
    return median;
}

static void format_ms(char *out, size_t capacity, bool present, double ns, bool sign)
{
    if (!present)
        snprintf(out, capacity, "-");
    else
        snprintf(out, capacity, sign ? "+%.3fms" : "%.3fms", ns / 1e6);
}

void emu_results_print_table(const struct emu_results *results, FILE *out)
{
    fprintf(out, "faults (times from the job start; L = %.3f ms one hop from %u pings; model "
                 "2 L S + O_cp H, O_cp the nodes' median time to install the view)\n",
            results->one_hop_ns / 1e6, results->latency_samples);
    fprintf(out, "  %3s %9s  %-24s %10s %-17s %9s %9s %6s %10s  %s\n", "#", "at", "fault",
            "detected", "fault model/action", "T_s", "model", "ratio", "stable", "agreement");
    for (unsigned i = 0; i < results->fault_count; i++) {
        const struct emu_fault_record *r = &results->faults[i];
        const struct emu_check_record *c = check_of(results, r);
        char described[EMU_ACTION_TEXT_MAX], detected[24], ts[24], model[24], ratio[16],
            recovery[24];
        emu_action_describe(&r->action, described, sizeof described);
        if (r->action.iteration != 0) {
            size_t used = strlen(described);
            snprintf(described + used, sizeof described - used, " (iteration %" PRIu32 ")",
                     r->iteration);
        } else if (r->action.at_recovery) {
            size_t used = strlen(described);
            snprintf(described + used, sizeof described - used, " (recovery)");
        }
        format_ms(detected, sizeof detected, r->detected,
                  (double)(r->detected_ns - r->injected_ns), true);
        format_ms(ts, sizeof ts, r->stable, (double)r->ts_ns, false);
        format_ms(model, sizeof model, r->stable && c != NULL,
                  c != NULL ? c->tree.model.distance_ns : 0.0, false);
        if (r->stable && c != NULL && c->tree.model.distance_ns > 0)
            snprintf(ratio, sizeof ratio, "%.2f", (double)r->ts_ns / c->tree.model.distance_ns);
        else
            snprintf(ratio, sizeof ratio, "-");
        format_ms(recovery, sizeof recovery, r->stable, (double)(r->stable_ns - r->injected_ns),
                  true);
        /* The root's decision, else the detection's model ("network": no decision
         * from the root), else "left" for a leave that ended so, else "-". */
        char decision[40];
        if (r->pinged)
            snprintf(decision, sizeof decision, "%" PRIu64 "/%" PRIu64 " pairs",
                     r->ping_answered, r->ping_pairs);
        else if (r->left && !r->detected)
            snprintf(decision, sizeof decision, "left");
        else if (r->decided)
            snprintf(decision, sizeof decision, "%s/%s%s", r->decision_model, r->decision_action,
                     r->quarantined ? "!" : "");
        else
            snprintf(decision, sizeof decision, "%s", r->model[0] != '\0' ? r->model : "-");
        fprintf(out, "  %3u %+8.3fs  %-24s %10s %-17s %9s %9s %6s %10s  ", r->index,
                (double)r->injected_ns / 1e9, described, detected, decision, ts, model, ratio,
                recovery);
        if (!r->injected)
            fprintf(out, "not done: %s\n", r->error);
        else if (c == NULL)
            fprintf(out, "(not checked)\n");
        else if (c->last - 1 != i)
            fprintf(out, "with #%u\n", results->faults[c->last - 1].index);
        else if (c->agreement.passed && c->agreement.expect == EMU_AGREE_NO_VIEW)
            fprintf(out, "pass: no view, %u sides, no majority%s\n",
                    (unsigned)c->agreement.sides, c->settled ? "" : " (not settled)");
        else if (c->agreement.passed && c->agreement.expect == EMU_AGREE_EACH_SIDE)
            fprintf(out, "pass: %u sides, each its own view%s\n",
                    (unsigned)c->agreement.sides, c->settled ? "" : " (not settled)");
        else if (c->agreement.passed)
            fprintf(out, "pass: epoch %" PRIu64 ", %u live, root %" PRId64 "%s\n",
                    c->agreement.epoch, (unsigned)c->agreement.live, c->agreement.root,
                    c->settled ? "" : " (not settled)");
        else
            fprintf(out, "FAIL: %s\n", c->agreement.reason);
    }
    for (unsigned i = 0; i < results->not_fired_count; i++)
        fprintf(out, "  %3s %9s  %-24s not fired: the run ended first\n", "-", "-",
                results->not_fired[i].text);
    fprintf(out, "%u fault%s, %u agreement check%s, %u failed", results->fault_count,
            results->fault_count == 1 ? "" : "s", results->check_count,
            results->check_count == 1 ? "" : "s", results->failed_checks);
    if (results->not_fired_count > 0)
        fprintf(out, ", %u not fired", results->not_fired_count);
    if (emu_results_median(results, EMU_RESULTS_TS) > 0)
        fprintf(out, "; median T_s %.3f ms, detection %.3f ms, T_s/model %.2f",
                emu_results_median(results, EMU_RESULTS_TS) / 1e6,
                emu_results_median(results, EMU_RESULTS_DETECTION) / 1e6,
                emu_results_median(results, EMU_RESULTS_RATIO));
    fputc('\n', out);
    fflush(out);
}

void emu_results_write_summary(const struct emu_results *results, FILE *out)
{
    unsigned errors = 0;
    for (unsigned i = 0; i < results->fault_count; i++)
        errors += !results->faults[i].injected;
    fprintf(out,
            "{\"record\":\"summary\",\"faults\":%u,\"injection_errors\":%u,\"checks\":%u,"
            "\"failed_checks\":%u,\"not_fired\":%u,\"one_hop_ns\":%.0f,\"latency_samples\":%u,"
            "\"ocp_ns\":%.1f,"
            "\"ts_median_ns\":%.0f,\"detection_median_ns\":%.0f,\"recovery_median_ns\":%.0f,"
            "\"ratio_median\":%.3f,\"job_start_emu_ns\":%" PRIu64 "}\n",
            results->fault_count, errors, results->check_count, results->failed_checks,
            results->not_fired_count,
            results->one_hop_ns, results->latency_samples, results->ocp_ns,
            emu_results_median(results, EMU_RESULTS_TS),
            emu_results_median(results, EMU_RESULTS_DETECTION),
            emu_results_median(results, EMU_RESULTS_RECOVERY),
            emu_results_median(results, EMU_RESULTS_RATIO), results->job_start_ns);
    fflush(out);
}
