/* tori-emu --reach: the reachability sampler (see emu_reach.h). */
#include "qemu/launcher/emu_reach.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "qemu/launcher/emu_node.h"
#include "qemu/launcher/emu_run.h"
#include "tools/event_line.h"

bool emu_reach_open(struct emu *emu)
{
    struct emu_reach *r = &emu->reach;
    memset(r, 0, sizeof *r);
    if (!emu->options->reach_set)
        return true;
    r->on = true;
    r->options = emu->options->reach;
    uint64_t all = (uint64_t)emu->count * (emu->count - 1u);
    if (r->options.pairs == 0)
        r->options.pairs = EMU_REACH_DEFAULT_PAIRS;
    r->state = EMU_REACH_DEFAULT_SEED;
    r->pairs = calloc(r->options.pairs < all ? r->options.pairs : all, sizeof *r->pairs);
    r->running = calloc(emu->count, sizeof *r->running);
    char path[4096];
    snprintf(path, sizeof path, "%s/reach.jsonl", emu->out_dir);
    r->out = fopen(path, "w");
    if (r->pairs == NULL || r->running == NULL || r->out == NULL) {
        emu_complain(emu, "--reach: cannot open %s or allocate its pairs", path);
        return false;
    }
    return true;
}

static void finish_sample(struct emu *emu, uint64_t now_job_ns);

void emu_reach_end(struct emu *emu)
{
    struct emu_reach *r = &emu->reach;
    if (r->active && r->out != NULL)
        finish_sample(emu, emu_job_ns(emu)); /* cut short: its pairs under way left out */
}

void emu_reach_close(struct emu *emu)
{
    struct emu_reach *r = &emu->reach;
    if (r->out != NULL)
        fclose(r->out);
    free(r->pairs);
    free(r->running);
    memset(r, 0, sizeof *r);
}

static bool node_running(const struct emu_node *node)
{
    return node->state == EMU_NODE_READY && node->job_started && !node->hung &&
           !node->panicked && !node->left;
}

/* A `ping all` sweep is under way (emu_ping_sweep): samples wait. */
static bool sweep_running(const struct emu *emu)
{
    return emu->ping.answered != NULL && emu->ping_active > 0;
}

/* Draws the sample's pairs among the running nodes: every ordered pair
 * when they are no more than PAIRS, else PAIRS drawn (repeats allowed). */
static void begin_sample(struct emu *emu, uint64_t now_job_ns)
{
    struct emu_reach *r = &emu->reach;
    uint32_t running = 0;
    for (uint32_t i = 0; i < emu->count; i++)
        if (node_running(&emu->nodes[i]))
            r->running[running++] = i;
    r->pair_count = 0;
    uint64_t all = (uint64_t)running * (running > 0 ? running - 1u : 0u);
    if (all <= r->options.pairs) {
        for (uint32_t a = 0; a < running; a++)
            for (uint32_t b = 0; b < running; b++)
                if (a != b)
                    r->pairs[r->pair_count++] = (struct emu_reach_pair){
                        .source = r->running[a], .destination = r->running[b]};
    } else {
        for (uint32_t i = 0; i < r->options.pairs; i++) {
            uint32_t a = 0, b = 0;
            reach_draw_pair(&r->state, running, &a, &b);
            r->pairs[r->pair_count++] = (struct emu_reach_pair){
                .source = r->running[a], .destination = r->running[b]};
        }
    }
    r->active = true;
    r->started_ns = now_job_ns;
}

static void finish_sample(struct emu *emu, uint64_t now_job_ns)
{
    struct emu_reach *r = &emu->reach;
    struct reach_sample sample;
    reach_sample_begin(&sample, r->started_ns);
    uint32_t unfinished = 0;
    for (uint32_t i = 0; i < r->pair_count; i++) {
        const struct emu_reach_pair *p = &r->pairs[i];
        if (!p->done) {
            unfinished++;
            continue;
        }
        reach_sample_add(&sample, p->ok, p->hops,
                         torus_geometry_distance(&emu->geometry, p->source, p->destination));
    }
    char extra[96];
    snprintf(extra, sizeof extra, ",\"took_s\":%.3f,\"unfinished\":%" PRIu32,
             (double)(now_job_ns - r->started_ns) / 1e9, unfinished);
    reach_sample_write_json(&sample, extra, r->out);
    fputc('\n', r->out);
    fflush(r->out);
    r->samples++;
    r->active = false;
    r->next_ns = r->started_ns + r->options.interval_ns;
}

/* The pair node's sample ping is for, NULL when none. */
static struct emu_reach_pair *in_flight(struct emu_reach *r, const struct emu_node *node)
{
    for (uint32_t i = 0; r->active && i < r->pair_count; i++) {
        struct emu_reach_pair *p = &r->pairs[i];
        if (p->source == node->rank && p->sent && !p->done)
            return p;
    }
    return NULL;
}

bool emu_reach_busy(const struct emu *emu, const struct emu_node *node)
{
    return in_flight((struct emu_reach *)&emu->reach, node) != NULL;
}

void emu_reach_tick(struct emu *emu)
{
    struct emu_reach *r = &emu->reach;
    if (!r->on || !emu->job_started || emu->stopping)
        return;
    uint64_t now = emu_job_ns(emu);
    if (!r->active) {
        if (now < r->next_ns || sweep_running(emu))
            return;
        begin_sample(emu, now);
    }
    bool done = true;
    for (uint32_t i = 0; i < r->pair_count; i++) {
        struct emu_reach_pair *p = &r->pairs[i];
        if (p->done)
            continue;
        struct emu_node *source = &emu->nodes[p->source];
        if (!node_running(source) ||
            (p->sent && emu_now_ns(emu) - p->sent_ns > EMU_REACH_PAIR_TIMEOUT_NS)) {
            p->done = true; /* its source went, or no answer: unreachable */
            continue;
        }
        done = false;
        if (p->sent || in_flight(r, source) != NULL || (source->ping_asked && !source->ping_done))
            continue;
        char command[32];
        snprintf(command, sizeof command, "ping %" PRIu32, p->destination);
        p->sent = true;
        p->sent_ns = emu_now_ns(emu);
        if (!emu_node_send(source, command))
            p->done = true;
    }
    if (done)
        finish_sample(emu, now);
}

int emu_reach_poll_ms(const struct emu *emu, int timeout_ms)
{
    const struct emu_reach *r = &emu->reach;
    if (!r->on || !emu->job_started || timeout_ms == 0)
        return timeout_ms;
    int wait = 20; /* a sample under way: its timeouts are checked this often */
    if (!r->active) {
        uint64_t now = emu_job_ns(emu);
        wait = now >= r->next_ns ? 0 : (int)((r->next_ns - now + 999999u) / 1000000u);
    }
    return timeout_ms < 0 || wait < timeout_ms ? wait : timeout_ms;
}

bool emu_reach_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line)
{
    struct emu_reach_pair *p = in_flight(&emu->reach, node);
    if (p == NULL)
        return false;
    if (strcmp(line->name, "console-error") == 0) {
        p->done = true; /* refused: counted unreachable */
        return true;
    }
    uint64_t destination = UINT64_MAX, ok = 0, hops = 0;
    if (strcmp(line->name, "ping") != 0 || !event_line_get_u64(line, "dst", &destination) ||
        destination != p->destination)
        return false;
    event_line_get_u64(line, "ok", &ok);
    event_line_get_u64(line, "hops", &hops);
    p->done = true;
    p->ok = ok != 0;
    p->hops = hops > UINT32_MAX ? UINT32_MAX : (uint32_t)hops;
    return true;
}
