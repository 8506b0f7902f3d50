#define _GNU_SOURCE
#include "qemu/bench/bench_link.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "net/torus/geometry.h"
#include "net/torus/route.h"
#include "qemu/launcher/emu_run.h"
#include "tools/event_line.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* One `ping H` tries 3 times, 1 s each (node/ping.h): room beyond. */
#define PING_TIMEOUT_NS (10 * NS_PER_S)
#define QUERY_TIMEOUT_NS (5 * NS_PER_S)
/* The receiver's count has stopped moving: what is missing is lost. */
#define FLOOD_QUIET_NS (3 * NS_PER_S)
#define FLOOD_DRAIN_TIMEOUT_NS (60 * NS_PER_S)

enum counter_source { LINKS, STATS };

static const struct {
    const char *key;
    enum counter_source source;
} counter_table[] = {
#define BENCH_LINK_COUNTER_ROW(name, key, source) {key, source},
    BENCH_LINK_COUNTERS(BENCH_LINK_COUNTER_ROW)
#undef BENCH_LINK_COUNTER_ROW
};

const char *bench_link_counter_name(enum bench_link_counter counter)
{
    return (unsigned)counter < BENCH_LINK_COUNTER_COUNT ? counter_table[counter].key : "?";
}

/* ---- answers from the nodes ---- */

/* The answers awaited, by event name. */
enum reply_kind {
    REPLY_STATS,       /* stats */
    REPLY_FLOOD_RX,    /* flood-rx */
    REPLY_FLOOD_LINKS, /* flood-links */
    REPLY_FLOOD_DONE,  /* flood-done */
    REPLY_PING_DONE,   /* ping-done */
    REPLY_FLOOD_CHECK, /* flood-check */
    REPLY_KINDS
};
static const char *const reply_names[REPLY_KINDS] = {"stats",      "flood-rx",  "flood-links",
                                                     "flood-done", "ping-done", "flood-check"};

#define REPLY_MAX_VALUES EVENT_LINE_MAX_FIELDS

/* The latest answer of one kind from one node: its decimal fields. */
struct reply {
    unsigned serial; /* answers of this kind so far */
    unsigned count;
    char key[REPLY_MAX_VALUES][32];
    uint64_t value[REPLY_MAX_VALUES];
};

struct bench_link_probe {
    struct emu *emu;
    struct bench_link_board *result;
    const char *tool;        /* prefix of the progress lines */
    emu_event_observer next; /* every line passes on to it (NULL: none) */
    void *next_context;
    uint32_t nodes;
    struct reply *replies;     /* [rank * REPLY_KINDS + kind] */
    unsigned *error_serial;    /* console-error lines per node */
    char error_reason[200];    /* of the latest */
    bool measuring; /* every node ready and started */
    /* The `ping` answer of the ping in flight. */
    bool ping_seen;
    uint64_t ping_hops, ping_rtt_ns, ping_ok;
};

static struct reply *reply_of(struct bench_link_probe *s, uint32_t rank, enum reply_kind kind)
{
    return &s->replies[(size_t)rank * REPLY_KINDS + kind];
}

static bool reply_get(const struct reply *reply, const char *key, uint64_t *value)
{
    for (unsigned i = 0; i < reply->count; i++)
        if (strcmp(reply->key[i], key) == 0) {
            *value = reply->value[i];
            return true;
        }
    return false;
}

static void observe(void *context, struct emu_node *node, const struct event_line *line)
{
    struct bench_link_probe *s = context;
    if (s->next != NULL)
        s->next(s->next_context, node, line);
    if (node->rank >= s->nodes)
        return;
    if (strcmp(line->name, "console-error") == 0) {
        const char *reason = event_line_get(line, "reason");
        snprintf(s->error_reason, sizeof s->error_reason, "%s",
                 reason != NULL ? reason : "(no reason given)");
        s->error_serial[node->rank]++;
        return;
    }
    if (s->measuring && strcmp(line->name, "failure-detected") == 0)
        s->result->failure_detections++;
    if (s->measuring && strcmp(line->name, "view") == 0)
        s->result->views++;
    if (strcmp(line->name, "ping") == 0) {
        s->ping_seen = event_line_get_u64(line, "ok", &s->ping_ok) &&
                       event_line_get_u64(line, "rtt_ns", &s->ping_rtt_ns);
        if (!event_line_get_u64(line, "hops", &s->ping_hops))
            s->ping_hops = 0;
        return;
    }
    for (unsigned kind = 0; kind < REPLY_KINDS; kind++) {
        if (strcmp(line->name, reply_names[kind]) != 0)
            continue;
        struct reply *reply = reply_of(s, node->rank, kind);
        reply->count = 0;
        for (unsigned i = 0; i < line->field_count && reply->count < REPLY_MAX_VALUES;
             i++) {
            uint64_t value;
            const char *key = line->fields[i].key;
            if (strlen(key) >= sizeof reply->key[0] ||
                !event_line_get_u64(line, key, &value))
                continue;
            snprintf(reply->key[reply->count], sizeof reply->key[0], "%s", key);
            reply->value[reply->count++] = value;
        }
        reply->serial++;
        return;
    }
}

/* ---- asking ---- */

static bool keep_going(const struct bench_link_probe *s)
{
    return !s->emu->failed && s->emu->interrupted == 0;
}

__attribute__((format(printf, 2, 3))) static void fail(struct bench_link_probe *s,
                                                       const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    if (s->result->error[0] == '\0')
        vsnprintf(s->result->error, sizeof s->result->error, format, arguments);
    va_end(arguments);
    s->emu->failed = true;
}

/*
 * Sends command to rank and turns the launcher's loop until every reply
 * kind in wanted (bits) has come from it.  False, with the reason in the
 * result, on a console error, a timeout, or a failing torus.
 */
static bool ask(struct bench_link_probe *s, uint32_t rank, const char *command, unsigned wanted,
                uint64_t timeout_ns)
{
    unsigned before[REPLY_KINDS];
    for (unsigned kind = 0; kind < REPLY_KINDS; kind++)
        before[kind] = reply_of(s, rank, kind)->serial;
    unsigned errors = s->error_serial[rank];
    if (!emu_node_send(&s->emu->nodes[rank], command)) {
        fail(s, "node %u: cannot send `%s` to its console", (unsigned)rank, command);
        return false;
    }
    uint64_t deadline = emu_now_ns(s->emu) + timeout_ns;
    while (keep_going(s)) {
        if (s->error_serial[rank] != errors) {
            fail(s, "node %u refused `%s`: %s (expected a node image with the flood "
                    "and ping commands: rebuild it)",
                 (unsigned)rank, command, s->error_reason);
            return false;
        }
        bool all = true;
        for (unsigned kind = 0; kind < REPLY_KINDS; kind++)
            if ((wanted >> kind) & 1u)
                all = all && reply_of(s, rank, kind)->serial != before[kind];
        if (all)
            return true;
        if (emu_now_ns(s->emu) >= deadline) {
            fail(s, "node %u: no answer to `%s` after %.1f s (see %s)", (unsigned)rank,
                 command, (double)timeout_ns / 1e9, s->emu->nodes[rank].log_path);
            return false;
        }
        emu_step(s->emu, 20);
    }
    if (s->result->error[0] == '\0')
        fail(s, "%s",
             s->emu->interrupted != 0 ? "interrupted" : "the torus failed (see above)");
    return false;
}

/* ---- round trips ---- */

bool bench_link_probe_rtt(struct bench_link_probe *s, unsigned rounds)
{
    struct bench_link_board *r = s->result;
    for (unsigned h = 0; h < r->max_hops; h++) {
        r->hop[h].hops = h + 1;
        r->hop[h].rtt_ns = calloc(rounds, sizeof *r->hop[h].rtt_ns);
        if (r->hop[h].rtt_ns == NULL) {
            fail(s, "out of memory for %u rounds", rounds);
            return false;
        }
    }
    fprintf(stderr, "%s: %s: round trips: node 0 pings nodes 1..%u, "
                    "%u rounds (+%u warm-up)\n",
            s->tool, r->name, r->max_hops, rounds, BENCH_LINK_WARMUP_ROUNDS);
    /* Hop counts interleaved, so a slow spell of the host hits them all. */
    for (unsigned round = 0; round < BENCH_LINK_WARMUP_ROUNDS + rounds; round++) {
        for (unsigned h = 0; h < r->max_hops; h++) {
            char command[32];
            snprintf(command, sizeof command, "ping %u", h + 1);
            s->ping_seen = false;
            if (!ask(s, 0, command, 1u << REPLY_PING_DONE, PING_TIMEOUT_NS))
                return false;
            if (round < BENCH_LINK_WARMUP_ROUNDS)
                continue;
            struct bench_link_hop *hop = &r->hop[h];
            if (!s->ping_seen || s->ping_ok == 0) {
                hop->failed++;
                continue;
            }
            hop->rtt_ns[hop->samples++] = s->ping_rtt_ns;
            if (s->ping_hops != h + 1u)
                hop->wrong_hops++;
        }
    }
    double x[BENCH_LINK_MAX_HOPS], y[BENCH_LINK_MAX_HOPS];
    unsigned points = 0;
    for (unsigned h = 0; h < r->max_hops; h++) {
        struct bench_link_hop *hop = &r->hop[h];
        uint64_t *sorted = malloc((hop->samples > 0 ? hop->samples : 1) * sizeof *sorted);
        if (sorted == NULL) {
            fail(s, "out of memory");
            return false;
        }
        memcpy(sorted, hop->rtt_ns, hop->samples * sizeof *sorted);
        bench_link_spread_of(sorted, hop->samples, &hop->spread);
        free(sorted);
        if (hop->samples > 0) {
            x[points] = hop->hops;
            y[points++] = (double)hop->spread.median;
        }
    }
    bench_link_fit_line(x, y, points, &r->per_hop);
    r->rtt_done = true;
    return true;
}

/* ---- floods ---- */

struct snapshot {
    uint64_t counter[BENCH_LINK_COUNTER_COUNT];
};

/* The nodes a frame from 0 to destination passes, as the nodes route it. */
struct path {
    unsigned length;
    uint32_t rank[BENCH_LINK_MAX_HOPS + 1];
};

static bool path_of(const struct torus_geometry *geometry, uint32_t destination,
                    struct path *path)
{
    uint32_t here = 0;
    path->length = 0;
    while (path->length <= BENCH_LINK_MAX_HOPS) {
        path->rank[path->length++] = here;
        int link = torus_route_preferred_hop(geometry, here, destination);
        if (link == TORUS_ROUTE_LOCAL)
            return true;
        if (link < 0)
            return false;
        here = torus_geometry_neighbour(geometry, here, (unsigned)link);
    }
    return false;
}

/* `stats` and `flood stats` on every node of the path, summed into snap. */
static bool take_snapshot(struct bench_link_probe *s, const struct path *path, struct snapshot *snap)
{
    memset(snap, 0, sizeof *snap);
    for (unsigned i = 0; i < path->length; i++) {
        uint32_t rank = path->rank[i];
        if (!ask(s, rank, "stats", 1u << REPLY_STATS, QUERY_TIMEOUT_NS) ||
            !ask(s, rank, "flood stats", (1u << REPLY_FLOOD_RX) | (1u << REPLY_FLOOD_LINKS),
                 QUERY_TIMEOUT_NS))
            return false;
        for (unsigned c = 0; c < BENCH_LINK_COUNTER_COUNT; c++) {
            const struct reply *reply = reply_of(
                s, rank, counter_table[c].source == LINKS ? REPLY_FLOOD_LINKS : REPLY_STATS);
            uint64_t value = 0;
            if (!reply_get(reply, counter_table[c].key, &value)) {
                fail(s, "node %u: no %s in its `%s` answer (expected a node image "
                        "built from this tree)",
                     (unsigned)rank, counter_table[c].key,
                     counter_table[c].source == LINKS ? "flood stats" : "stats");
                return false;
            }
            snap->counter[c] += value;
        }
    }
    return true;
}

static uint64_t received_total(struct bench_link_probe *s, uint32_t rank)
{
    uint64_t total = 0;
    reply_get(reply_of(s, rank, REPLY_FLOOD_RX), "total_frames", &total);
    return total;
}

bool bench_link_probe_flood(struct bench_link_probe *s, uint32_t hops, unsigned count,
                            unsigned size, struct bench_link_flood *f)
{
    uint32_t destination = hops; /* on the ring, node h is h hops from node 0 */
    /* Counters are summed over the nodes the frames pass (the route's). */
    memset(f, 0, sizeof *f);
    f->destination = destination;
    f->hops = hops;
    f->count = count;
    f->size = size;
    fprintf(stderr, "%s: %s: flood: %u frames of %u bytes, node 0 to node "
                    "%u (%u hop%s)\n",
            s->tool, s->result->name, count, size, (unsigned)destination,
            (unsigned)hops, hops == 1 ? "" : "s");
    struct path path;
    if (!path_of(&s->emu->geometry, destination, &path) || path.length != hops + 1u) {
        fail(s, "no %u-hop route from node 0 to node %u", (unsigned)hops,
             (unsigned)destination);
        return false;
    }
    struct snapshot before, after;
    if (!take_snapshot(s, &path, &before))
        return false;
    uint64_t received_before = received_total(s, destination);

    char command[64];
    snprintf(command, sizeof command, "flood %u %u %u", (unsigned)destination, count,
             size);
    /* The sender's pace is bounded by the ring: give it generous time. */
    uint64_t timeout = 60 * NS_PER_S + (uint64_t)count * 5 * NS_PER_MS;
    if (!ask(s, 0, command, 1u << REPLY_FLOOD_DONE, timeout))
        return false;
    const struct reply *done = reply_of(s, 0, REPLY_FLOOD_DONE);
    uint64_t stalled = 0;
    reply_get(done, "sent", &f->sent);
    reply_get(done, "waits", &f->waits);
    reply_get(done, "elapsed_ns", &f->sender_ns);
    reply_get(done, "stalled", &stalled);
    f->stalled = stalled != 0;

    /* The last frames are still in flight: wait until the receiver has them
     * all, or its count has not moved for FLOOD_QUIET_NS. */
    uint64_t start = emu_now_ns(s->emu), last_change = start, seen = UINT64_MAX;
    for (;;) {
        if (!ask(s, destination, "flood stats",
                 (1u << REPLY_FLOOD_RX) | (1u << REPLY_FLOOD_LINKS), QUERY_TIMEOUT_NS))
            return false;
        uint64_t now = emu_now_ns(s->emu);
        uint64_t delivered = received_total(s, destination) - received_before;
        if (delivered != seen) {
            seen = delivered;
            last_change = now;
        }
        if (delivered >= f->sent || now - last_change > FLOOD_QUIET_NS ||
            now - start > FLOOD_DRAIN_TIMEOUT_NS)
            break;
        emu_step(s->emu, 20);
    }
    const struct reply *rx = reply_of(s, destination, REPLY_FLOOD_RX);
    uint64_t source = UINT64_MAX;
    f->delivered = received_total(s, destination) - received_before;
    reply_get(rx, "src", &source);
    if (source == 0) {
        reply_get(rx, "missing", &f->missing);
        reply_get(rx, "old", &f->old);
        reply_get(rx, "span_ns", &f->span_ns);
    }
    if (!take_snapshot(s, &path, &after))
        return false;
    for (unsigned c = 0; c < BENCH_LINK_COUNTER_COUNT; c++)
        f->counter[c] = after.counter[c] - before.counter[c];
    f->done = true;
    return true;
}

/* ---- one board ---- */

bool bench_link_probe_check_cost(struct bench_link_probe *s, unsigned size,
                                 struct bench_link_check_cost *cost)
{
    char command[32];
    snprintf(command, sizeof command, "flood check %u", size);
    if (!ask(s, 0, command, 1u << REPLY_FLOOD_CHECK, 30 * NS_PER_S))
        return false;
    const struct reply *reply = reply_of(s, 0, REPLY_FLOOD_CHECK);
    uint64_t frames = 0, ok = 0, crc_ns = 0, tag_ns = 0;
    if (!reply_get(reply, "frames", &frames) || frames == 0 || !reply_get(reply, "ok", &ok) ||
        ok != 1 || !reply_get(reply, "crc_ns", &crc_ns) || !reply_get(reply, "tag_ns", &tag_ns)) {
        fail(s, "node 0: `%s` answered without frames, ok=1, crc_ns and tag_ns", command);
        return false;
    }
    cost->size = size;
    cost->crc_ns = (double)crc_ns / (double)frames;
    cost->tag_ns = (double)tag_ns / (double)frames;
    return true;
}

struct bench_link_probe *bench_link_probe_attach(const char *tool, struct emu *emu,
                                                 struct bench_link_board *result,
                                                 emu_event_observer next, void *next_context)
{
    struct bench_link_probe *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->tool = tool;
    s->emu = emu;
    s->result = result;
    s->next = next;
    s->next_context = next_context;
    s->nodes = emu->count;
    s->replies = calloc((size_t)s->nodes * REPLY_KINDS, sizeof *s->replies);
    s->error_serial = calloc(s->nodes, sizeof *s->error_serial);
    if (s->replies == NULL || s->error_serial == NULL) {
        bench_link_probe_detach(s);
        return NULL;
    }
    s->measuring = true;
    emu->observer = observe;
    emu->observer_context = s;
    return s;
}

void bench_link_probe_detach(struct bench_link_probe *s)
{
    if (s == NULL)
        return;
    if (s->emu->observer_context == s) {
        s->emu->observer = s->next;
        s->emu->observer_context = s->next_context;
    }
    free(s->replies);
    free(s->error_serial);
    free(s);
}

static struct emu board_emu;

int bench_link_run_board(const struct bench_link_options *o, unsigned board,
                         const char *out_dir, struct bench_link_board *result)
{
    memset(result, 0, sizeof *result);
    result->name = board == BENCH_LINK_BOARD_QEMU ? "qemu" : "host";
    result->attempted = true;
    result->nodes = o->ring;
    result->max_hops = o->ring / 2u;
    snprintf(result->out_dir, sizeof result->out_dir, "%s", out_dir);

    /* The launcher's own options, as if from its command line. */
    char ring_text[16];
    snprintf(ring_text, sizeof ring_text, "%u", o->ring);
    char *argv[24];
    int argc = 0;
    argv[argc++] = "tori-bench-link";
    argv[argc++] = "--dims";
    argv[argc++] = ring_text;
    argv[argc++] = "--board";
    argv[argc++] = (char *)result->name;
    argv[argc++] = "--out";
    argv[argc++] = (char *)out_dir;
    argv[argc++] = "--image";
    argv[argc++] = (char *)o->image;
    argv[argc++] = "--node-binary";
    argv[argc++] = (char *)o->node_binary;
    argv[argc++] = "--qemu";
    argv[argc++] = (char *)o->qemu;
    if (o->verbose)
        argv[argc++] = "--verbose";
    argv[argc] = NULL;
    static struct emu_options emu_options;
    char error[320];
    if (emu_options_parse(argc, argv, o->image, o->node_binary, &emu_options, error,
                          sizeof error) != EMU_OPTIONS_OK) {
        snprintf(result->error, sizeof result->error, "%s", error);
        result->status = 1;
        return 1;
    }

    FILE *quiet = o->verbose ? NULL : fopen("/dev/null", "we");
    fprintf(stderr, "tori-bench-link: %s: starting a 1-D torus of %u nodes (logs in %s)\n",
            result->name, o->ring, out_dir);
    struct emu *emu = &board_emu;
    bool opened = emu_open(emu, &emu_options, NULL);
    /* The launcher's chatter (ready, summary, membership events) stays out of
     * the benchmark's output unless --verbose; its errors still reach stderr. */
    emu->human = quiet != NULL ? quiet : stderr;
    bool measured = false;
    if (opened && emu_start_all(emu)) {
        fprintf(stderr, "tori-bench-link: %s: %u nodes ready\n", result->name, o->ring);
        struct bench_link_probe *probe = bench_link_probe_attach("tori-bench-link", emu, result, NULL, NULL);
        if (probe == NULL)
            snprintf(result->error, sizeof result->error, "out of memory");
        measured = probe != NULL && bench_link_probe_rtt(probe, o->rounds);
        for (uint32_t h = 1; measured && h <= BENCH_LINK_FLOODS && h <= result->max_hops;
             h++) {
            measured = bench_link_probe_flood(probe, h, o->flood_count, o->flood_size,
                                              &result->flood[h - 1]);
            if (measured)
                result->floods = h;
        }
        /* The frame check's cost, keyless and tagged, on node 0's CPU: a
         * minimum frame and a flood frame. */
        const unsigned check_sizes[BENCH_LINK_CHECK_SIZES] = {0, o->flood_size};
        for (unsigned c = 0; measured && c < BENCH_LINK_CHECK_SIZES; c++) {
            measured = bench_link_probe_check_cost(probe, check_sizes[c],
                                                   &result->check[c]);
            if (measured)
                result->checks = c + 1;
        }
        bench_link_probe_detach(probe);
    } else if (result->error[0] == '\0') {
        snprintf(result->error, sizeof result->error,
                 opened ? "the torus did not start (see above)"
                        : "the torus could not be set up (see above)");
    }
    int status = emu_close(emu);
    if (quiet != NULL)
        fclose(quiet);
    if (!opened && status == 0)
        status = 1;
    if (!measured && status == 0)
        status = 1;
    result->status = status;
    return status;
}

void bench_link_board_free(struct bench_link_board *result)
{
    for (unsigned h = 0; h < BENCH_LINK_MAX_HOPS; h++) {
        free(result->hop[h].rtt_ns);
        result->hop[h].rtt_ns = NULL;
    }
}

uint64_t bench_link_one_hop_ns(const struct bench_link_board *result)
{
    return result->max_hops > 0 ? result->hop[0].spread.median : 0;
}
