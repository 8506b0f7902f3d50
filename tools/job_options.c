#include "tools/job_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/personality.h"
#include "tools/cli.h"

bool job_options_parse_args(const char *text, struct job *job, char *error, size_t capacity)
{
    const char *p = text;
    for (unsigned i = 0;; i++) {
        if (i == JOB_APP_ARGS) {
            char expected[48];
            snprintf(expected, sizeof expected, "at most %u integers", (unsigned)JOB_APP_ARGS);
            return cli_invalid(error, capacity, "--app-args", text, expected);
        }
        char *end = NULL;
        errno = 0;
        long long value = strtoll(p, &end, 10);
        if (end == p || errno != 0 || (*end != ',' && *end != '\0') || *p == ' ')
            return cli_invalid(error, capacity, "--app-args", text,
                               "comma-separated signed 64-bit integers, e.g. 8,0,-3");
        job->app_arg[i] = value;
        if (*end == '\0')
            return true;
        p = end + 1;
    }
}

/* The clause [start, end) without the spaces around it. */
static void trim(const char **start, const char **end)
{
    while (*start < *end && (**start == ' ' || **start == '\t'))
        (*start)++;
    while (*end > *start && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
        (*end)--;
}

/* A whole number in min..max in [p, end); false when it is none. */
static bool whole_in(const char *p, const char *end, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t value = 0;
    if (p == end || end - p > 10)
        return false;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        value = value * 10u + (uint64_t)(*p - '0');
    }
    if (value < min || value > max)
        return false;
    *out = (uint32_t)value;
    return true;
}

/* "(K in Ns)" in [p, end). */
static bool parse_repeat(const char *p, const char *end, struct recovery_policy *policy)
{
    if (end - p < 2 || *p != '(' || end[-1] != ')')
        return false;
    const char *inner = p + 1;
    const char *close = end - 1;
    const char *in = NULL;
    for (const char *q = inner; q + 4 <= close && in == NULL; q++)
        if (memcmp(q, " in ", 4) == 0)
            in = q;
    if (in == NULL)
        return false;
    const char *count_end = in;
    const char *window = in + 4;
    const char *window_end = close;
    trim(&inner, &count_end);
    trim(&window, &window_end);
    uint32_t count = 0;
    uint32_t seconds = 0;
    if (window_end == window || window_end[-1] != 's' ||
        !whole_in(inner, count_end, 1, 255, &count) ||
        !whole_in(window, window_end - 1, 1, 65535, &seconds))
        return false;
    policy->repeat_count = (uint8_t)count;
    policy->repeat_window_s = (uint16_t)seconds;
    return true;
}

static bool policy_invalid(char *error, size_t capacity, const char *text, const char *clause,
                           size_t length, const char *why)
{
    snprintf(error, capacity, "--recovery '%s' is invalid: '%.*s' %s (expected %s)", text,
             (int)length, clause, why, JOB_OPTIONS_RECOVERY_EXPECTED);
    return false;
}

bool job_options_parse_recovery(const char *text, struct recovery_policy *policy, char *error,
                                size_t capacity)
{
    memset(policy, 0, sizeof *policy);
    const char *all = text;
    const char *all_end = text + strlen(text);
    trim(&all, &all_end);
    if (all_end - all == 4 && memcmp(all, "none", 4) == 0)
        return true;
    policy->version = RECOVERY_POLICY_VERSION;
    bool given[FAULT_MODEL_LIMIT] = {false};
    bool quarantine_given = false;
    uint32_t quarantine = 0;
    const char *p = text;
    for (;;) {
        const char *semicolon = strchr(p, ';');
        const char *end = semicolon != NULL ? semicolon : p + strlen(p);
        const char *start = p;
        trim(&start, &end);
        size_t length = (size_t)(end - start);
        const char *equals = memchr(start, '=', length);
        if (equals == NULL)
            return policy_invalid(error, capacity, text, start, length, "is no MODEL=ACTION");
        const char *name = start;
        const char *name_end = equals;
        const char *value = equals + 1;
        const char *value_end = end;
        trim(&name, &name_end);
        trim(&value, &value_end);
        const char *paren = memchr(name, '(', (size_t)(name_end - name));
        const char *model_end = paren != NULL ? paren : name_end;
        const char *model_text = name;
        trim(&model_text, &model_end);
        if ((size_t)(model_end - model_text) == 10 && memcmp(model_text, "quarantine", 10) == 0 &&
            paren == NULL) {
            if (quarantine_given)
                return policy_invalid(error, capacity, text, start, length, "is given twice");
            if (!whole_in(value, value_end, 2, 255, &quarantine))
                return policy_invalid(error, capacity, text, start, length,
                                      "needs a limit in 2..255");
            quarantine_given = true;
        } else {
            uint8_t model = fault_model_from_name(model_text, (size_t)(model_end - model_text));
            if (model == FAULT_MODEL_NONE || model > RECOVERY_POLICY_MODELS)
                return policy_invalid(error, capacity, text, start, length,
                                      "names no fault model");
            if (given[model])
                return policy_invalid(error, capacity, text, start, length,
                                      "gives a model twice");
            if ((model == FAULT_MODEL_REPEATED) != (paren != NULL))
                return policy_invalid(error, capacity, text, start, length,
                                      model == FAULT_MODEL_REPEATED
                                          ? "needs its count and window: repeated(K in Ns)"
                                          : "takes no count");
            if (paren != NULL && !parse_repeat(paren, name_end, policy))
                return policy_invalid(error, capacity, text, start, length,
                                      "needs repeated(K in Ns), K 1..255, N 1..65535");
            uint8_t action = recovery_action_from_name(value, (size_t)(value_end - value));
            if (action >= RECOVERY_ACTION_LIMIT)
                return policy_invalid(error, capacity, text, start, length,
                                      "names no action");
            given[model] = true;
            policy->action[model - 1] = action;
        }
        if (semicolon == NULL)
            break;
        p = semicolon + 1;
    }
    if (quarantine_given && policy->repeat_count == 0)
        return policy_invalid(error, capacity, text, "quarantine", 10,
                              "needs repeated(K in Ns)");
    if (quarantine_given && quarantine <= policy->repeat_count)
        return policy_invalid(error, capacity, text, "quarantine", 10,
                              "must be above the repeated count K");
    if (quarantine_given)
        policy->quarantine_limit = (uint8_t)quarantine;
    else if (policy->repeat_count != 0 && 2u * policy->repeat_count <= 255u)
        policy->quarantine_limit = (uint8_t)(2u * policy->repeat_count);
    return true;
}

void job_options_format_recovery(const struct recovery_policy *policy, char *out,
                                 size_t capacity)
{
    if (policy->version == 0) {
        snprintf(out, capacity, "none");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (uint8_t model = 1; model <= RECOVERY_POLICY_MODELS && used < capacity; model++) {
        const char *action = recovery_action_name(policy->action[model - 1]);
        int n;
        if (model == FAULT_MODEL_REPEATED && policy->repeat_count != 0)
            n = snprintf(out + used, capacity - used, "; repeated(%u in %us)=%s",
                         (unsigned)policy->repeat_count, (unsigned)policy->repeat_window_s,
                         action);
        else if (model == FAULT_MODEL_REPEATED)
            n = 0;
        else
            n = snprintf(out + used, capacity - used, "%s%s=%s", model == 1 ? "" : "; ",
                         fault_model_name(model), action);
        used += n > 0 ? (size_t)n : 0;
    }
    if (policy->quarantine_limit != 0 && used < capacity)
        snprintf(out + used, capacity - used, "; quarantine=%u",
                 (unsigned)policy->quarantine_limit);
}

bool job_options_parse_seeds(const char *option, const char *text, uint32_t node_count,
                             struct job *job, char *error, size_t capacity)
{
    char expected[96];
    if (node_count != 0)
        snprintf(expected, sizeof expected, "up to %u node ids below %u, comma-separated, "
                                            "e.g. 0,%u",
                 (unsigned)JOB_SEED_NODES, (unsigned)node_count, (unsigned)(node_count - 1u));
    else
        snprintf(expected, sizeof expected, "up to %u node ids, comma-separated, e.g. 0,31",
                 (unsigned)JOB_SEED_NODES);
    uint32_t limit = node_count != 0 ? node_count - 1u : UINT32_MAX - 1u;
    const char *p = text;
    job->seed_count = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma != NULL ? comma : p + strlen(p);
        uint32_t id = 0;
        if (job->seed_count == JOB_SEED_NODES || !whole_in(p, end, 0, limit, &id))
            return cli_invalid(error, capacity, option, text, expected);
        job->seed_node[job->seed_count++] = id;
        if (comma == NULL)
            return true;
        p = comma + 1;
    }
}

bool job_options_build(const struct job_options *options, struct job *job, char *error,
                       size_t capacity)
{
    job_set_defaults(job);
    if (options->app == NULL) {
        snprintf(error, capacity, "--app is missing (expected " JOB_OPTIONS_APPS ")");
        return false;
    }
    job->app = job_app_from_name(options->app);
    if (job->app == 0)
        return cli_invalid(error, capacity, "--app", options->app, JOB_OPTIONS_APPS);
    job->iterations = options->default_iterations;
    uint64_t value = 0;
    if (options->iterations != NULL) {
        if (!cli_parse_u64(options->iterations, 1, options->max_iterations, &value)) {
            char expected[48];
            snprintf(expected, sizeof expected, "a count in 1..%u",
                     (unsigned)options->max_iterations);
            return cli_invalid(error, capacity, "--iterations", options->iterations, expected);
        }
        job->iterations = (uint32_t)value;
    }
    if (options->progress != NULL) {
        if (!cli_parse_u64(options->progress, 0, job->iterations, &value))
            return cli_invalid(error, capacity, "--progress", options->progress,
                               "0 (none) or a count up to --iterations");
        job->progress_interval = (uint32_t)value;
    }
    if (options->comm_mode != NULL) {
        job->comm_mode = job_comm_mode_from_name(options->comm_mode);
        if (job_comm_mode_name(job->comm_mode) == NULL)
            return cli_invalid(error, capacity, "--comm-mode", options->comm_mode,
                               JOB_OPTIONS_COMM_MODES);
    }
    if (options->msg_mode != NULL) {
        job->message_mode = job_message_mode_from_name(options->msg_mode);
        if (job_message_mode_name(job->message_mode) == NULL)
            return cli_invalid(error, capacity, "--msg-mode", options->msg_mode,
                               JOB_OPTIONS_MSG_MODES);
    }
    if (options->routing != NULL) {
        job->routing_mode = job_routing_mode_from_name(options->routing);
        if (job_routing_mode_name(job->routing_mode) == NULL)
            return cli_invalid(error, capacity, "--routing", options->routing,
                               JOB_OPTIONS_ROUTING_MODES);
    }
    if (options->checkpoint_every != NULL) {
        if (!cli_parse_u64(options->checkpoint_every, 1, job->iterations, &value))
            return cli_invalid(error, capacity, "--checkpoint-every", options->checkpoint_every,
                               "a count of iterations in 1..--iterations");
        job->checkpoint_interval = (uint32_t)value;
    }
    if (options->recovery != NULL &&
        !job_options_parse_recovery(options->recovery, &job->recovery, error, capacity))
        return false;
    /* A policy that hands a rank to another life or node (restart, migrate,
     * promote) needs the communicators to keep their ranks: rebuild, unless
     * --comm-mode says otherwise. */
    for (unsigned m = 0; options->comm_mode == NULL && m < RECOVERY_POLICY_MODELS; m++) {
        uint8_t action = job->recovery.action[m];
        if (action == RECOVERY_RESTART || action == RECOVERY_MIGRATE ||
            action == RECOVERY_PROMOTE)
            job->comm_mode = JOB_COMM_REBUILD;
    }
    if (options->app_args != NULL && !job_options_parse_args(options->app_args, job, error,
                                                             capacity))
        return false;
    if (options->lossy_link != NULL) {
        const char *slash = strchr(options->lossy_link, '/');
        char count[16] = "";
        uint64_t frames = 0, window_ms = 0;
        size_t count_length = slash != NULL ? (size_t)(slash - options->lossy_link) : 0;
        if (count_length > 0 && count_length < sizeof count)
            memcpy(count, options->lossy_link, count_length);
        if (count[0] == '\0' || !cli_parse_u64(count, 1, UINT16_MAX, &frames) ||
            !cli_parse_u64(slash + 1, 1, UINT16_MAX, &window_ms))
            return cli_invalid(error, capacity, "--lossy-link", options->lossy_link,
                               JOB_OPTIONS_LOSSY_LINK_EXPECTED);
        job->link_lossy_retransmits = (uint16_t)frames;
        job->link_lossy_window_ms = (uint16_t)window_ms;
    }
    if (options->seeds != NULL &&
        !job_options_parse_seeds("--seeds", options->seeds, options->node_count, job, error,
                                 capacity))
        return false;
    struct personality_error invalid;
    if (!job_validate(job, &invalid)) {
        char message[200];
        job_format_error(&invalid, message, sizeof message);
        snprintf(error, capacity, "the options make an invalid job block: %s", message);
        return false;
    }
    return true;
}

_Static_assert(PERSONALITY_TIMEOUT_CEILING_MAX == 64 && PERSONALITY_DEFAULT_TIMEOUT_CEILING == 4,
               "JOB_OPTIONS_TIMEOUT_CEILING_EXPECTED names the bounds");

bool job_options_parse_timeout_ceiling(const char *option, const char *text,
                                       uint8_t *ceiling, char *error, size_t capacity)
{
    uint64_t value = 0;
    if (text == NULL || !cli_parse_u64(text, 1, PERSONALITY_TIMEOUT_CEILING_MAX, &value))
        return cli_invalid(error, capacity, option, text != NULL ? text : "",
                           JOB_OPTIONS_TIMEOUT_CEILING_EXPECTED);
    *ceiling = (uint8_t)value;
    return true;
}
