/* A job run: the application's events, the wait and the verdict (see emu_app.h). */
#include "qemu/launcher/emu_app.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/job.h"
#include "qemu/launcher/emu_run.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

uint64_t emu_app_timeout_ns(const struct emu *emu)
{
    const struct emu_options *o = emu->options;
    if (o->app_timeout_ns != 0)
        return o->app_timeout_ns;
    /* Every node shares this machine's cores: an iteration's collectives
     * take longer the more nodes there are. */
    uint64_t per_iteration = (20 + 2 * (uint64_t)emu->count) * NS_PER_MS;
    return 30 * NS_PER_S + (uint64_t)o->app_job.iterations * per_iteration;
}

bool emu_app_write_job(struct emu *emu, char *path, size_t capacity)
{
    uint8_t block[JOB_SIZE];
    job_encode(&emu->options->app_job, block);
    snprintf(path, capacity, "%s/job.bin", emu->out_dir);
    FILE *file = fopen(path, "wbe");
    bool written = file != NULL && fwrite(block, 1, sizeof block, file) == sizeof block;
    if (file == NULL || fclose(file) != 0 || !written) {
        emu_complain(emu, "cannot write the job block '%s': %s", path, strerror(errno));
        return false;
    }
    return true;
}

/* The initial view's compute nodes: every node but the spares. */
static uint32_t compute_nodes(const struct emu *emu)
{
    return emu->count - emu->options->spares;
}

void emu_app_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    (void)emu;
    const char *name = line->name;
    uint64_t value = 0;
    if (strcmp(name, "app-start") == 0) {
        node->app_started = true;
    } else if (strcmp(name, "app-progress") == 0) {
        if (event_line_get_u64(line, "iteration", &value) && value <= UINT32_MAX)
            node->app_iteration = (uint32_t)value;
    } else if (strcmp(name, "app-result") == 0) {
        const char *ok = event_line_get(line, "ok");
        const char *digest = event_line_get(line, "digest");
        node->app_reported = true;
        node->app_ok = ok != NULL && strcmp(ok, "true") == 0;
        snprintf(node->app_digest, sizeof node->app_digest, "%s",
                 digest != NULL ? digest : "-");
        event_line_get_u64(line, "iterations", &node->app_iterations);
        event_line_get_u64(line, "elapsed_ns", &node->app_elapsed_ns);
    } else if (strcmp(name, "app-error") == 0) {
        if (node->app_error[0] == '\0') {
            const char *call = event_line_get(line, "call");
            const char *error = event_line_get(line, "error");
            snprintf(node->app_error, sizeof node->app_error, "%s: %s",
                     call != NULL ? call : "?", error != NULL ? error : "?");
        }
    } else if (strcmp(name, "starved") == 0) {
        node->app_starved++;
    }
}

/* Why node can no longer report its app-result (NULL: it still can). */
static const char *cannot_report(const struct emu_node *node)
{
    if (node->app_reported)
        return NULL;
    if (node->panicked)
        return "panicked";
    if (node->pid <= 0)
        return "is down (killed or exited)";
    return NULL;
}

/* "3, 5, 6" (the first few ranks lacking a result) into out. */
static unsigned missing_ranks(const struct emu *emu, char *out, size_t capacity)
{
    unsigned missing = 0;
    size_t used = 0;
    out[0] = '\0';
    for (uint32_t r = 0; r < compute_nodes(emu); r++) {
        if (emu->nodes[r].app_reported)
            continue;
        if (missing < 8 && used < capacity)
            used += (size_t)snprintf(out + used, capacity - used, "%s%u",
                                     missing > 0 ? ", " : "", (unsigned)r);
        missing++;
    }
    if (missing > 8 && used < capacity)
        snprintf(out + used, capacity - used, ", ...");
    return missing;
}

bool emu_app_job_over(const struct emu *emu)
{
    if (!emu->job_started)
        return false;
    uint32_t reported = 0;
    for (uint32_t r = 0; r < compute_nodes(emu); r++) {
        if (cannot_report(&emu->nodes[r]) != NULL)
            return true;
        reported += emu->nodes[r].app_reported;
    }
    return reported == compute_nodes(emu) || emu_job_ns(emu) >= emu_app_timeout_ns(emu);
}

bool emu_app_over(struct emu *emu)
{
    if (!emu_app_job_over(emu))
        return false;
    uint32_t reported = 0;
    for (uint32_t r = 0; r < compute_nodes(emu); r++) {
        struct emu_node *node = &emu->nodes[r];
        reported += node->app_reported;
        const char *why = cannot_report(node);
        if (why != NULL) {
            if (!emu->app_judged)
                emu_complain(emu, "node %u %s before its app-result: the job cannot "
                                  "complete (%s)", (unsigned)r, why, node->log_path);
            emu->app_judged = true;
            emu->failed = true;
            return true;
        }
    }
    if (reported == compute_nodes(emu))
        return true;
    if (emu_job_ns(emu) >= emu_app_timeout_ns(emu)) {
        char ranks[96];
        unsigned missing = missing_ranks(emu, ranks, sizeof ranks);
        if (!emu->app_judged)
            emu_complain(emu, "no app-result from %u node%s (%s) within the app timeout of "
                              "%.1f s (see --app-timeout and the logs in %s)",
                         missing, missing == 1 ? "" : "s", ranks,
                         (double)emu_app_timeout_ns(emu) / 1e9, emu->out_dir);
        emu->app_judged = true;
        emu->failed = true;
        return true;
    }
    return false;
}

void emu_app_wait(struct emu *emu)
{
    while (emu_keep_going(emu) && !emu_app_over(emu))
        emu_step(emu, 200);
}

bool emu_app_judge(struct emu *emu)
{
    FILE *out = emu->human;
    const char *app = job_app_name(emu->options->app_job.app);
    emu_progress_end(emu);
    fprintf(out, "tori-emu: %s: %u iterations on %u compute nodes\n", app,
            (unsigned)emu->options->app_job.iterations, (unsigned)compute_nodes(emu));
    fprintf(out, "  node  board  result  digest      iterations  time (s)  note\n");
    const char *digest = NULL;
    uint32_t ok = 0, reported = 0;
    bool same = true;
    for (uint32_t r = 0; r < compute_nodes(emu); r++) {
        const struct emu_node *node = &emu->nodes[r];
        const char *result = !node->app_reported ? "none" : node->app_ok ? "ok" : "FAILED";
        char note[128] = "";
        if (node->app_error[0] != '\0')
            snprintf(note, sizeof note, "app-error %s", node->app_error);
        else if (node->app_starved > 0)
            snprintf(note, sizeof note, "starved %u time%s", node->app_starved,
                     node->app_starved == 1 ? "" : "s");
        else if (!node->app_reported)
            snprintf(note, sizeof note, "last progress: iteration %u",
                     (unsigned)node->app_iteration);
        if (node->app_reported)
            fprintf(out, "  %4u  %-5s  %-6s  %-10s  %10llu  %8.3f  %s\n", (unsigned)r,
                    emu_node_board_name(node->board), result, node->app_digest,
                    (unsigned long long)node->app_iterations,
                    (double)node->app_elapsed_ns / 1e9, note);
        else
            fprintf(out, "  %4u  %-5s  %-6s  %-10s  %10s  %8s  %s\n", (unsigned)r,
                    emu_node_board_name(node->board), result, "-", "-", "-", note);
        if (!node->app_reported)
            continue;
        reported++;
        ok += node->app_ok;
        if (digest == NULL)
            digest = node->app_digest;
        else if (strcmp(digest, node->app_digest) != 0)
            same = false;
    }
    bool passed = reported == compute_nodes(emu) && ok == reported && same;
    if (passed)
        fprintf(out, "tori-emu: %s: every node ok=true, digest %s\n", app, digest);
    fflush(out);
    if (passed)
        return true;
    if (reported < compute_nodes(emu))
        emu_complain(emu, "%s failed: %u of %u compute nodes reported an app-result", app,
                     (unsigned)reported, (unsigned)compute_nodes(emu));
    else if (ok < reported)
        emu_complain(emu, "%s failed: %u of %u nodes reported ok=false", app,
                     (unsigned)(reported - ok), (unsigned)reported);
    else
        emu_complain(emu, "%s failed: the nodes reported different digests", app);
    return false;
}
