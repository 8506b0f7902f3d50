#include "tools/job_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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
    if (options->checkpoint_every != NULL) {
        if (!cli_parse_u64(options->checkpoint_every, 1, job->iterations, &value))
            return cli_invalid(error, capacity, "--checkpoint-every", options->checkpoint_every,
                               "a count of iterations in 1..--iterations");
        job->checkpoint_interval = (uint32_t)value;
    }
    if (options->app_args != NULL && !job_options_parse_args(options->app_args, job, error,
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
