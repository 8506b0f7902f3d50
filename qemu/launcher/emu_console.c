/* The launcher's side of node consoles: lines in, events out (see emu_console.h). */
#include "qemu/launcher/emu_console.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "qemu/launcher/emu_app.h"
#include "qemu/launcher/emu_process.h"
#include "tools/event_json.h"
#include "tools/event_line.h"

static void count_event(struct emu *emu, const char *name)
{
    for (unsigned i = 0; i < EMU_EVENT_KINDS; i++) {
        struct emu_event_count *kind = &emu->event_counts[i];
        if (kind->name[0] == '\0')
            snprintf(kind->name, sizeof kind->name, "%s", name);
        if (strcmp(kind->name, name) == 0) {
            kind->count++;
            return;
        }
    }
}

/*
 * Events a person need not see one by one (they are counted in the
 * summary): start-up chatter and ping answers.  --demo and --verbose show
 * them all; a link going down is always shown.
 */
static bool is_routine(const struct emu *emu, const struct event_line *line)
{
    const char *name = line->name;
    /* Progress of a job on a big torus: one line per node per interval. */
    if (strcmp(name, "app-progress") == 0)
        return emu->count > 16;
    if (strcmp(name, "link") == 0) {
        const char *state = event_line_get(line, "state");
        return state != NULL && strcmp(state, "up") == 0;
    }
    /* A fault run on a big torus: one line per node per view is too many
     * (the agreement checks summarize them). */
    if (emu->hooks != NULL && emu->hooks->summarizes_views && emu->count > 16 &&
        (strcmp(name, "view") == 0 || strcmp(name, "started") == 0 ||
         strcmp(name, "link-cut") == 0))
        return true;
    return strcmp(name, "boot") == 0 || strcmp(name, "ready") == 0 ||
           strcmp(name, "network") == 0 || strcmp(name, "ping") == 0 ||
           strcmp(name, "ping-done") == 0 || strcmp(name, "ping-fan") == 0 ||
           strcmp(name, "view-state") == 0 ||
           strcmp(name, "stats") == 0 || strcmp(name, "comm-state") == 0;
}

static void show_event(struct emu *emu, const struct emu_node *node,
                       const struct event_line *line)
{
    emu_progress_end(emu);
    /* Times from the job start once it started (fault scripts count from it). */
    double seconds = emu->job_started
                         ? ((double)emu_now_ns(emu) - (double)emu->job_start_ns) / 1e9
                         : (double)emu_now_ns(emu) / 1e9;
    fprintf(emu->human, "  %+9.3fs  node %-4u %-14s", seconds, (unsigned)node->rank,
            line->name);
    for (unsigned i = 0; i < line->field_count; i++) {
        const struct event_field *field = &line->fields[i];
        fprintf(emu->human, field->quoted ? " %s=\"%s\"" : " %s=%s", field->key,
                field->value);
    }
    fputc('\n', emu->human);
    fflush(emu->human);
}

static void on_ping(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    uint64_t destination = 0, hops = UINT32_MAX, rtt = 0, ok = 0;
    if (emu->ping.answered == NULL)
        return; /* a ping nobody asked for through --ping */
    if (!event_line_get_u64(line, "dst", &destination) ||
        !event_line_get_u64(line, "ok", &ok) || destination > UINT32_MAX) {
        emu->ping.bad_records++;
        return;
    }
    event_line_get_u64(line, "hops", &hops);
    if (ok != 0 && !event_line_get_u64(line, "rtt_ns", &rtt)) {
        emu->ping.bad_records++;
        return;
    }
    emu_ping_record(&emu->ping, &emu->geometry, node->rank, (uint32_t)destination,
                    hops > UINT32_MAX ? UINT32_MAX : (uint32_t)hops, rtt, ok != 0);
}

void emu_console_finish_ping(struct emu *emu, struct emu_node *node)
{
    if (node->ping_asked && !node->ping_done) {
        node->ping_done = true;
        if (emu->ping_active > 0)
            emu->ping_active--;
    }
}

static void on_event(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    const char *name = line->name;
    count_event(emu, name);
    if (emu->observer != NULL)
        emu->observer(emu->observer_context, node, line);
    bool sampled = (strcmp(name, "ping") == 0 || strcmp(name, "console-error") == 0) &&
                   emu_reach_on_event(emu, node, line); /* a --reach sample's answer */
    if (sampled) {
        /* not a `ping all` answer */
    } else if (strcmp(name, "ready") == 0) {
        uint64_t incarnation = 0;
        if (event_line_get_u64(line, "incarnation", &incarnation) && incarnation <= UINT32_MAX)
            node->reported_incarnation = (uint32_t)incarnation;
        if (node->state == EMU_NODE_STARTED) {
            node->state = EMU_NODE_READY;
            node->ready_ns = emu_line_ns(emu);
            emu->ready++;
            if (emu->ready == emu->running)
                emu->all_ready_ns = node->ready_ns;
            if (emu->job_started && !node->job_started) {
                /* Back (or new) after the job started: it joins the job. */
                if (emu->hooks != NULL && emu->hooks->on_ready != NULL)
                    emu->hooks->on_ready(emu, node);
                if (emu_node_send(node, "start"))
                    node->job_started = true;
                else
                    emu_complain(emu, "node %u: cannot send `start` to its console",
                                 (unsigned)node->rank);
            }
        }
    } else if (strcmp(name, "panic") == 0) {
        const char *reason = event_line_get(line, "reason");
        node->panicked = true;
        snprintf(node->panic_reason, sizeof node->panic_reason, "%s",
                 reason != NULL ? reason : "(no reason given)");
        emu_complain(emu, "node %u (%s) panicked: %s", (unsigned)node->rank,
                     emu_node_board_name(node->board), node->panic_reason);
        emu->failed = true;
    } else if (strcmp(name, "left") == 0) {
        uint64_t who = UINT64_MAX;
        if (event_line_get_u64(line, "who", &who) && who == node->rank)
            node->left = true; /* it halts next: no crash */
    } else if (strcmp(name, "halt") == 0 && node->left && node->board == EMU_BOARD_QEMU) {
        /* A halted QEMU node runs no more code: its emulator goes, quietly. */
        node->expect_exit = true;
        emu_process_kill(emu, node);
    } else if (strcmp(name, "stats") == 0) {
        node->stats_answered = true;
    } else if (strcmp(name, "ping") == 0) {
        on_ping(emu, node, line);
    } else if (strcmp(name, "ping-done") == 0) {
        uint64_t ok = 0, failed = 0;
        event_line_get_u64(line, "ok", &ok);
        event_line_get_u64(line, "failed", &failed);
        node->ping_ok = (unsigned)ok;
        node->ping_failed = (unsigned)failed;
        emu_console_finish_ping(emu, node);
    } else if (strcmp(name, "console-error") == 0 && node->ping_asked &&
               !node->ping_done) {
        const char *reason = event_line_get(line, "reason");
        emu_complain(emu, "node %u refused `ping all`: %s (expected a node image with "
                          "the ping command)",
                     (unsigned)node->rank, reason != NULL ? reason : "console error");
        emu_console_finish_ping(emu, node);
        emu->failed = true;
    }
    if (emu->options->app_set)
        emu_app_on_event(emu, node, line);
    if (emu->hooks != NULL && emu->hooks->on_event != NULL)
        emu->hooks->on_event(emu, node, line);
    if (!is_routine(emu, line) || emu->options->verbose)
        show_event(emu, node, line);
}

static void on_line(struct emu *emu, struct emu_node *node, const char *text,
                    size_t length)
{
    static struct event_line line;
    const char *reason = NULL;
    enum event_line_status status = event_line_parse(text, length, &line, &reason);
    if (status == EVENT_LINE_PLAIN) {
        emu->plain_lines++;
        return;
    }
    if (status == EVENT_LINE_MALFORMED) {
        emu->malformed_lines++;
        node->malformed++;
        return;
    }
    emu->event_lines++;
    node->events++;
    static char json[EVENT_JSON_MAX];
    size_t json_length = event_json_format(&line, node->rank, emu_line_ns(emu), json,
                                           sizeof json);
    if (json_length > 0) {
        if (emu->events != NULL)
            fprintf(emu->events, "%s\n", json);
        if (emu->options->json) {
            emu_progress_end(emu);
            fprintf(stdout, "%s\n", json);
        }
    }
    on_event(emu, node, &line);
}

void emu_console_pump(struct emu *emu, struct emu_node *node, bool exited)
{
    for (unsigned turn = 0; (exited || turn < 64) && node->console_out >= 0; turn++) {
        ssize_t got = emu_node_read_console(node);
        bool at_end = got == 0 || (exited && got < 0);
        size_t length = 0;
        const char *text;
        while ((text = emu_node_next_line(node, at_end, &length)) != NULL)
            on_line(emu, node, text, length);
        if (got <= 0)
            break;
    }
}
