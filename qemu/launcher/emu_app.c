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

/* Whose app-result the job waits for: every compute node, and every spare
 * that adopted a failed rank. */
static bool is_rank(const struct emu *emu, const struct emu_node *node)
{
    return node->rank < compute_nodes(emu) || node->app_adopted;
}

/* A node killed (or exited) before its result: under issue 14's modes the
 * others go on without it (or abort), so it owes no result. */
static bool is_down(const struct emu_node *node)
{
    if (node->app_ended)
        return node->app_was_down;
    return !node->app_reported && !node->app_aborted && node->pid <= 0 && !node->panicked;
}

/* The job is over: which nodes were down at that moment is kept, so that
 * the launcher stopping the rest afterwards (an app timeout) does not make
 * them look killed to the verdict. */
static bool job_over(struct emu *emu)
{
    if (emu->app_over)
        return true;
    for (uint32_t r = 0; r < emu->count; r++) {
        emu->nodes[r].app_was_down = is_down(&emu->nodes[r]);
        emu->nodes[r].app_ended = true;
    }
    emu->app_over = true;
    return true;
}

/* Restarted or rebooted: a later life runs nothing (node_job_init), its
 * ranks went on without it. */
static bool later_life(const struct emu_node *node)
{
    return node->incarnation > 1 || node->reported_incarnation > 1;
}

/* Down, or expelled while its application ran (a hang, a false suspicion):
 * the others took its rank for failed and went on without it, so what its
 * application reports afterwards is not the job's. */
static bool is_out(const struct emu_node *node)
{
    /* A later life owes a result only when it took its rank back (RESTART
     * under REBUILD: app-adopted). */
    return is_down(node) || node->app_expelled || node->app_killed || node->left ||
           (later_life(node) && !node->app_adopted);
}

/* One communicator epoch has one rank map: a `comm` line is checked
 * against every other node's latest for the same communicator and epoch
 * (same size and digest, another rank).  NULL when it agrees. */
static const char *comm_disagrees(const struct emu *emu, const struct emu_node *node,
                                  const struct emu_comm_report *mine, uint32_t *other)
{
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_node *peer = &emu->nodes[r];
        if (peer == node)
            continue;
        for (unsigned i = 0; i < EMU_NODE_COMM_REPORTS; i++) {
            const struct emu_comm_report *theirs = &peer->comm[i];
            if (!theirs->valid || strcmp(theirs->comm, mine->comm) != 0 ||
                theirs->epoch != mine->epoch)
                continue;
            *other = r;
            if (theirs->size != mine->size)
                return "another size";
            if (strcmp(theirs->digest, mine->digest) != 0)
                return "another rank map";
            if (theirs->rank == mine->rank)
                return "the same rank";
        }
    }
    return NULL;
}

/* node's line for the communicator named handle, NULL when none. */
static const struct emu_comm_report *comm_report(const struct emu_node *node, const char *handle)
{
    for (unsigned i = 0; i < EMU_NODE_COMM_REPORTS; i++)
        if (node->comm[i].valid && strcmp(node->comm[i].comm, handle) == 0)
            return &node->comm[i];
    return NULL;
}

#define WORLD_HANDLE "0x100" /* node/tori.h TORI_COMM_WORLD, as comm lines write it */

/* One communicator (handle) over the live ranks: see emu_app_check_comms. */
static bool comm_consistent(const struct emu *emu, const bool *live, const char *handle,
                            char *reason, size_t capacity)
{
    const struct emu_comm_report *first = NULL;
    uint64_t newest = 0;
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_comm_report *c = live[r] ? comm_report(&emu->nodes[r], handle) : NULL;
        if (c != NULL && (first == NULL || c->epoch > newest))
            newest = c->epoch, first = c;
    }
    if (first == NULL)
        return true;
    uint32_t holders = 0, first_node = 0;
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_comm_report *c = live[r] ? comm_report(&emu->nodes[r], handle) : NULL;
        if (c == NULL || c->epoch != newest)
            continue;
        if (c->size != first->size || strcmp(c->digest, first->digest) != 0) {
            snprintf(reason, capacity, "communicator %s epoch %llu: node %u holds size %u, "
                     "map %s; node %u size %u, map %s", handle, (unsigned long long)newest,
                     (unsigned)r, (unsigned)c->size, c->digest, (unsigned)first_node,
                     (unsigned)first->size, first->digest);
            return false;
        }
        for (uint32_t q = 0; q < r; q++) {
            const struct emu_comm_report *o = live[q] ? comm_report(&emu->nodes[q], handle) : NULL;
            if (o != NULL && o->epoch == newest && o->rank == c->rank) {
                snprintf(reason, capacity, "communicator %s epoch %llu: nodes %u and %u are "
                         "both rank %u", handle, (unsigned long long)newest, (unsigned)q,
                         (unsigned)r, (unsigned)c->rank);
                return false;
            }
        }
        if (holders++ == 0)
            first_node = r;
    }
    if (holders > first->size) {
        snprintf(reason, capacity, "communicator %s epoch %llu: %u live ranks hold it, its "
                 "size is %u", handle, (unsigned long long)newest, (unsigned)holders,
                 (unsigned)first->size);
        return false;
    }
    return true;
}

bool emu_app_check_comms(const struct emu *emu, const bool *live, char *reason,
                         size_t capacity)
{
    bool world_lost = false;
    for (uint32_t r = 0; r < compute_nodes(emu); r++)
        world_lost |= !live[r];
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_node *node = &emu->nodes[r];
        if (!live[r] || !node->app_started || !is_rank(emu, node))
            continue;
        bool running = !node->app_reported && !is_out(node);
        if (world_lost && running && r < compute_nodes(emu) &&
            comm_report(node, WORLD_HANDLE) == NULL) {
            snprintf(reason, capacity, "rank %u reported no comm line for WORLD after it lost "
                     "a member", (unsigned)r);
            return false;
        }
        for (unsigned i = 0; i < EMU_NODE_COMM_REPORTS; i++)
            if (node->comm[i].valid &&
                !comm_consistent(emu, live, node->comm[i].comm, reason, capacity))
                return false;
    }
    return true;
}

static void on_comm_line(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    struct emu_comm_report report = {.valid = true};
    uint64_t size = 0, rank = 0;
    const char *digest = event_line_get(line, "digest");
    const char *handle = event_line_get(line, "comm");
    if (handle == NULL || digest == NULL || strlen(handle) >= sizeof report.comm ||
        strlen(digest) >= sizeof report.digest ||
        !event_line_get_u64(line, "epoch", &report.epoch) ||
        !event_line_get_u64(line, "size", &size) || !event_line_get_u64(line, "rank", &rank) ||
        size > UINT32_MAX || rank >= size)
        return; /* a line this launcher cannot read */
    snprintf(report.comm, sizeof report.comm, "%s", handle);
    snprintf(report.digest, sizeof report.digest, "%s", digest);
    report.size = (uint32_t)size;
    report.rank = (uint32_t)rank;
    /* Its communicator's slot, else a free one, else the oldest epoch's but
     * WORLD's (the check after a fault asks every rank for it). */
    unsigned slot = EMU_NODE_COMM_REPORTS;
    for (unsigned i = 0; i < EMU_NODE_COMM_REPORTS && slot == EMU_NODE_COMM_REPORTS; i++)
        if (node->comm[i].valid && strcmp(node->comm[i].comm, report.comm) == 0)
            slot = i;
    for (unsigned i = 0; i < EMU_NODE_COMM_REPORTS && slot == EMU_NODE_COMM_REPORTS; i++)
        if (!node->comm[i].valid)
            slot = i;
    bool full = slot == EMU_NODE_COMM_REPORTS;
    for (unsigned i = 0; i < EMU_NODE_COMM_REPORTS && full; i++)
        if (strcmp(node->comm[i].comm, WORLD_HANDLE) != 0 &&
            (slot == EMU_NODE_COMM_REPORTS || node->comm[i].epoch < node->comm[slot].epoch))
            slot = i;
    node->comm[slot] = report;
    uint32_t other = 0;
    const char *why = comm_disagrees(emu, node, &report, &other);
    if (why != NULL && !emu->comm_failed) {
        emu_complain(emu, "communicator check failed: node %u holds communicator %s epoch "
                          "%llu with %s as node %u (size %u, rank %u, digest %s)",
                     (unsigned)node->rank, report.comm, (unsigned long long)report.epoch, why,
                     (unsigned)other, (unsigned)report.size, (unsigned)report.rank,
                     report.digest);
        emu->comm_failed = true;
        emu->failed = true;
    }
}

static void on_checkpoint_line(struct emu_checkpoint_figures *f, const struct event_line *line)
{
    uint64_t generation = 0, iteration = 0, bytes = 0, ns = 0, hops = 0;
    event_line_get_u64(line, "generation", &generation);
    event_line_get_u64(line, "iteration", &iteration);
    event_line_get_u64(line, "bytes", &bytes);
    if (strcmp(line->name, "checkpoint") == 0) {
        f->commits++;
        f->generations = generation > f->generations ? (uint32_t)generation : f->generations;
        f->bytes = bytes > f->bytes ? (uint32_t)bytes : f->bytes;
        if (event_line_get_u64(line, "round_ns", &ns)) {
            f->round_ns_sum += ns;
            f->round_ns_max = ns > f->round_ns_max ? ns : f->round_ns_max;
        }
        if (event_line_get_u64(line, "buddy_hops", &hops) && hops > f->buddy_hops_max)
            f->buddy_hops_max = (uint32_t)hops;
        return;
    }
    const char *source = event_line_get(line, "source");
    uint64_t moved = 0;
    event_line_get_u64(line, "bytes_transferred", &moved);
    f->restores++;
    f->generation = (uint32_t)generation;
    f->iteration = (uint32_t)iteration;
    f->moved_bytes += moved;
    if (source != NULL && strcmp(source, "own") == 0)
        f->from_own++;
    else if (source != NULL && strcmp(source, "mirror") == 0)
        f->from_mirror++;
    else
        f->from_buddy++;
    if (event_line_get_u64(line, "load_ns", &ns) && ns > f->load_ns_max)
        f->load_ns_max = ns;
}

/* The checkpoints' and restores' summary lines (none without either). */
static void print_checkpoints(FILE *out, const struct emu_checkpoint_figures *f)
{
    if (f->commits > 0)
        fprintf(out,
                "tori-emu: checkpoints: %u committed by the ranks over %u generation(s), up to "
                "%u B a rank; round %.1f ms mean, %.1f ms max; buddies up to %u hop(s) away\n",
                (unsigned)f->commits, (unsigned)f->generations, (unsigned)f->bytes,
                (double)f->round_ns_sum / f->commits / 1e6, (double)f->round_ns_max / 1e6,
                (unsigned)f->buddy_hops_max);
    if (f->restores > 0)
        fprintf(out,
                "tori-emu: restores: %u rank(s), last at generation %u (iteration %u): %u from "
                "their own store, %u from a buddy, %u from a mirror; %llu B moved; load %.1f "
                "ms max\n",
                (unsigned)f->restores, (unsigned)f->generation, (unsigned)f->iteration,
                (unsigned)f->from_own, (unsigned)f->from_buddy, (unsigned)f->from_mirror,
                (unsigned long long)f->moved_bytes, (double)f->load_ns_max / 1e6);
}

void emu_app_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
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
    } else if (strcmp(name, "app-abort") == 0) {
        const char *comm = event_line_get(line, "comm");
        const char *epoch = event_line_get(line, "epoch");
        const char *failed = event_line_get(line, "failed");
        node->app_aborted = true;
        snprintf(node->app_abort, sizeof node->app_abort, "comm %s, epoch %s, failed %s",
                 comm != NULL ? comm : "?", epoch != NULL ? epoch : "?",
                 failed != NULL ? failed : "?");
    } else if (strcmp(name, "expelled") == 0) {
        /* A spare still waiting for its adoption is no rank yet. */
        if (node->app_started && !node->app_reported && !node->app_aborted &&
            is_rank(emu, node))
            node->app_expelled = true;
    } else if (strcmp(name, "app-killed") == 0) {
        node->app_killed = true; /* a process fault: the others go on without it */
    } else if (strcmp(name, "app-adopted") == 0) {
        node->app_adopted = true;
    } else if (strcmp(name, "comm") == 0) {
        on_comm_line(emu, node, line);
    } else if (strcmp(name, "checkpoint") == 0 || strcmp(name, "restore") == 0) {
        on_checkpoint_line(&emu->checkpoints, line);
    }
}

/* Why node can no longer report its app-result (NULL: it still can, or
 * it owes none: it aborted, or it was killed and the others go on). */
static const char *cannot_report(const struct emu_node *node)
{
    if (node->app_reported || node->app_aborted)
        return NULL;
    if (node->panicked)
        return "panicked";
    return NULL;
}

/* Reported its result or its abort, or owes none. */
static bool is_settled(const struct emu_node *node)
{
    return node->app_reported || node->app_aborted || is_out(node);
}

/* "3, 5, 6" (the first few ranks lacking a result) into out. */
static unsigned missing_ranks(const struct emu *emu, char *out, size_t capacity)
{
    unsigned missing = 0;
    size_t used = 0;
    out[0] = '\0';
    for (uint32_t r = 0; r < emu->count; r++) {
        if (!is_rank(emu, &emu->nodes[r]) || is_settled(&emu->nodes[r]))
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
    bool settled = true;
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_node *node = &emu->nodes[r];
        if (!is_rank(emu, node))
            continue;
        if (cannot_report(node) != NULL)
            return true;
        settled = settled && is_settled(node);
    }
    return settled || emu_job_ns(emu) >= emu_app_timeout_ns(emu);
}

bool emu_app_over(struct emu *emu)
{
    if (!emu_app_job_over(emu))
        return false;
    bool settled = true;
    for (uint32_t r = 0; r < emu->count; r++) {
        struct emu_node *node = &emu->nodes[r];
        if (!is_rank(emu, node))
            continue;
        settled = settled && is_settled(node);
        const char *why = cannot_report(node);
        if (why != NULL) {
            if (!emu->app_judged)
                emu_complain(emu, "node %u %s before its app-result: the job cannot "
                                  "complete (%s)", (unsigned)r, why, node->log_path);
            emu->app_judged = true;
            emu->failed = true;
            return job_over(emu);
        }
    }
    if (settled)
        return job_over(emu);
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
        return job_over(emu);
    }
    return false;
}

void emu_app_wait(struct emu *emu)
{
    while (emu_keep_going(emu) && !emu_app_over(emu))
        emu_step(emu, 200);
}

/* The aborted job's verdict: every live rank reported app-abort. */
static bool judge_abort(struct emu *emu, const char *app, uint32_t aborted, uint32_t live)
{
    const char *detail = "";
    for (uint32_t r = 0; r < emu->count && detail[0] == '\0'; r++)
        if (emu->nodes[r].app_aborted)
            detail = emu->nodes[r].app_abort;
    if (aborted == live) {
        fprintf(emu->human, "tori-emu: %s: aborted: every live rank (%u) reported app-abort "
                            "(%s)\n", app, (unsigned)live, detail);
        fflush(emu->human);
        emu->app_aborted = true;
        return true;
    }
    emu_complain(emu, "%s failed: %u of %u live ranks reported app-abort (%s), the others "
                      "did not", app, (unsigned)aborted, (unsigned)live, detail);
    return false;
}

bool emu_app_judge(struct emu *emu)
{
    FILE *out = emu->human;
    const char *app = job_app_name(emu->options->app_job.app);
    emu_progress_end(emu);
    fprintf(out, "tori-emu: %s: %u iterations on %u compute nodes (%s, %s)\n", app,
            (unsigned)emu->options->app_job.iterations, (unsigned)compute_nodes(emu),
            job_comm_mode_name(emu->options->app_job.comm_mode),
            job_message_mode_name(emu->options->app_job.message_mode));
    fprintf(out, "  node  board  result  digest      iterations  time (s)  note\n");
    const char *digest = NULL;
    uint32_t ok = 0, reported = 0, live = 0, aborted = 0;
    bool same = true;
    for (uint32_t r = 0; r < emu->count; r++) {
        const struct emu_node *node = &emu->nodes[r];
        if (!is_rank(emu, node))
            continue;
        const char *result = node->app_aborted    ? "abort"
                             : node->left         ? "left"
                             : is_down(node)      ? "down"
                             : node->app_expelled || node->app_killed ||
                                       (later_life(node) && !node->app_reported)
                                   ? "out"
                             : !node->app_reported ? "none"
                             : node->app_ok        ? "ok"
                                                   : "FAILED";
        char note[128] = "";
        if (node->left)
            snprintf(note, sizeof note, "left the job (leave): owes no result");
        else if (node->app_killed)
            snprintf(note, sizeof note, "application killed (appkill): owes no result");
        else if (later_life(node) && !node->app_reported)
            snprintf(note, sizeof note, "restarted, its rank not taken back: owes no result");
        else if (node->app_expelled)
            snprintf(note, sizeof note, "expelled while its application ran: owes no result");
        else if (node->app_aborted)
            snprintf(note, sizeof note, "app-abort %s", node->app_abort);
        else if (node->app_error[0] != '\0')
            snprintf(note, sizeof note, "app-error %s", node->app_error);
        else if (node->app_starved > 0)
            snprintf(note, sizeof note, "starved %u time%s", node->app_starved,
                     node->app_starved == 1 ? "" : "s");
        else if (!node->app_reported)
            snprintf(note, sizeof note, "last progress: iteration %u",
                     (unsigned)node->app_iteration);
        if (node->app_adopted) {
            size_t used = strlen(note);
            snprintf(note + used, sizeof note - used, "%s%s", used > 0 ? "; " : "",
                     later_life(node) ? "restarted, took its rank back"
                                      : "a spare that adopted a rank");
        }
        if (node->app_reported)
            fprintf(out, "  %4u  %-5s  %-6s  %-10s  %10llu  %8.3f  %s\n", (unsigned)r,
                    emu_node_board_name(node->board), result, node->app_digest,
                    (unsigned long long)node->app_iterations,
                    (double)node->app_elapsed_ns / 1e9, note);
        else
            fprintf(out, "  %4u  %-5s  %-6s  %-10s  %10s  %8s  %s\n", (unsigned)r,
                    emu_node_board_name(node->board), result, "-", "-", "-", note);
        if (is_out(node))
            continue;
        live++;
        aborted += node->app_aborted;
        if (!node->app_reported)
            continue;
        reported++;
        ok += node->app_ok;
        if (digest == NULL)
            digest = node->app_digest;
        else if (strcmp(digest, node->app_digest) != 0)
            same = false;
    }
    print_checkpoints(out, &emu->checkpoints);
    if (aborted > 0)
        return judge_abort(emu, app, aborted, live);
    bool passed = live > 0 && reported == live && ok == reported && same;
    if (passed)
        fprintf(out, "tori-emu: %s: every %s ok=true, digest %s\n", app,
                live < compute_nodes(emu) || emu->options->spares > 0
                    ? "surviving or adopting rank"
                    : "node",
                digest);
    fflush(out);
    if (passed)
        return true;
    if (reported < live)
        emu_complain(emu, "%s failed: %u of %u live ranks reported an app-result", app,
                     (unsigned)reported, (unsigned)live);
    else if (ok < reported)
        emu_complain(emu, "%s failed: %u of %u nodes reported ok=false", app,
                     (unsigned)(reported - ok), (unsigned)reported);
    else
        emu_complain(emu, "%s failed: the nodes reported different digests", app);
    return false;
}
