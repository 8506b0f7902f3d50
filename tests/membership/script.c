/*
 * The membership tests' script driver: each file in scripts/ sets up nodes
 * on a torus, acts on them through the one test network (harness.h), and
 * states what must have come out.  A script is read whole and checked
 * before it runs (a bad line: one line naming it, exit 2); then each
 * failed expectation prints FILE:LINE and what was found, and the exit
 * status is 1.
 *
 * Lines ('#' starts a comment; options are key=value):
 *   set-up, before `start`:
 *     torus 4x4x4 | members N | radix N | tree radix|torus|box
 *     timeouts HEARTBEAT DETECT   membership_config_timeouts_ms (e.g. 10ms 60ms)
 *     heartbeat off               no heartbeats (the script detects)
 *     timeout-ceiling N           the detector's bound (tori-emu --timeout-ceiling)
 *     recovery POLICY             every node's recovery policy (tori-emu --recovery)
 *     watch-torus-neighbours on|off
 *     hop T                       time from one delivery to the next (deliver)
 *     start                       every node initialised, time 0
 *   actions (each opens the window the expectations look at):
 *     at T                        time moves on to T
 *     FAULT                       a line of the fault language (tools/fault.h),
 *                                 e.g. `kill 5 at 1ms`, `suspect 6 5 at 1ms`,
 *                                 `join 63 at 100ns`, `link 1 2 off at 0`,
 *                                 `appkill 5 at 1ms`, `leave 5 at 1ms`
 *                                 (carried out when time reaches T; not hang,
 *                                 resume, reboot)
 *     send TYPE from S to D [noview] [u8|u16|u32|u64 V]...
 *                                 a hand-built message in D's epochs
 *                                 (`u64 epoch`: D's current epoch)
 *     resend                      the last one again, byte for byte
 *     lossy N M                   N's link to M resends past its loss limit
 *                                 (the torus layer's LOSSY event)
 *     tick N next | tick N at T   node N's timers (at its next deadline)
 *     deliver                     the FIFO in order until empty
 *     slow LIST every T           in `run`, the nodes' timers run at most
 *                                 every T (a late poll loop, a loaded host)
 *     run to T step S [stop=W by=D]   steps of S: due nodes tick, the FIFO
 *                                 empties; stops once D reported W
 *   loss rules (not faults of the language: the network's own):
 *     lose next TYPE from N       the next such message is lost
 *     lose A B                    everything from A to B is lost (one way)
 *   expectations (counts are exact; count=1 unless given):
 *     expect N|any sends TYPE [to D] [count=K]
 *     expect delivered K | expect lost K
 *     expect event N|any view|failure|stable|joined|expelled|partitioned|
 *            decision|refused|left|reformed
 *            [who=W] [count=K] [after=T] [until=T] [live=L] [messages=M]
 *            [detector-messages=D] [model=M] [action=A] [quarantined=yes|no]
 *                                       (after < time <= until; who: a
 *                                        failure's or a decision's node;
 *                                        model, action, quarantined: of
 *                                        the last matching event)
 *     expect events K                   all events of the window
 *     expect view NODES [none] [epoch=K] [root=R] [live=L] [members=LIST]
 *            [joining=yes|no]           NODES: an id, a LIST (0-2,4) or
 *                                       `up` (every node not killed);
 *                                       epoch: its counter
 *     expect agree                      every node up holds the same view
 *     expect deadline NODES never | expect deadline NODES within=T
 *     expect counter N drops_stale|drops_malformed|drops_bad_ack|reports_refuted|
 *                      false_suspicions|timeouts_widened|suspicions_refuted|
 *                      rounds_superseded|probes_indirect|relays_forwarded|
 *                      acks_asked=V
 *     expect tree N parent=P children=K
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/membership/harness.h"
#include "tools/cli.h"
#include "tools/fault.h"
#include "tools/job_options.h"

#define MAX_TOKENS 32
#define LINE_MAX 512

static struct harness h;

struct script {
    const char *file;
    unsigned line;
    bool run; /* false: the syntax pass */
    struct harness_setup setup;
    bool started;
    unsigned failures;
    uint8_t last_message[MEMBERSHIP_MAX_PAYLOAD];
    size_t last_length;
    uint32_t last_to;
    bool has_last;
};

static char error_text[2 * LINE_MAX];

/* A bad line: false with the reason in error_text. */
static bool bad(const char *format, const char *what)
{
    snprintf(error_text, sizeof error_text, format, what);
    return false;
}

/* One line of the fault language (tools/fault.h) as a harness fault. */
static bool parse_fault(const char *text, const struct torus_geometry *g,
                        struct harness_fault *fault)
{
    struct fault_script script = {0};
    char error[160];
    if (!fault_script_parse(text, &script, error, sizeof error) ||
        !fault_script_check_torus(&script, g, error, sizeof error)) {
        fault_script_free(&script);
        return bad("%s", error);
    }
    bool ok = script.count == 1;
    if (ok && (script.items[0].select_count != 0 || script.items[0].kind == FAULT_CUT)) {
        fault_script_free(&script);
        return bad("'%s': the test network takes one node or link a line (no groups, no cuts)",
                   text);
    }
    if (ok) {
        const struct fault *f = &script.items[0];
        memset(fault, 0, sizeof *fault);
        fault->time_ns = f->time_ns;
        fault->node = f->node;
        fault->other = f->other;
        if ((f->kind == FAULT_LINK_OFF || f->kind == FAULT_LINK_ON) &&
            f->link != FAULT_LINK_PAIR) {
            fault->other = torus_geometry_neighbour(g, f->node, f->link);
        }
        fault->duration_ns = f->duration_ns;
        fault->dim = f->dim;
        fault->below = f->below;
        switch (f->kind) {
        case FAULT_KILL: fault->kind = HARNESS_FAULT_KILL; break;
        case FAULT_JOIN: /* a spare boots and joins */
        case FAULT_RESTART: fault->kind = HARNESS_FAULT_JOIN; break; /* a killed node */
        case FAULT_SUSPECT: fault->kind = HARNESS_FAULT_SUSPECT; break;
        case FAULT_LINK_OFF: fault->kind = HARNESS_FAULT_LINK_OFF; break;
        case FAULT_LINK_ON: fault->kind = HARNESS_FAULT_LINK_ON; break;
        case FAULT_BLOCK: fault->kind = HARNESS_FAULT_BLOCK; break;
        case FAULT_PARTITION: fault->kind = HARNESS_FAULT_PARTITION; break;
        case FAULT_HEAL: fault->kind = HARNESS_FAULT_HEAL; break;
        case FAULT_APPKILL: fault->kind = HARNESS_FAULT_APPKILL; break;
        case FAULT_LEAVE: fault->kind = HARNESS_FAULT_LEAVE; break;
        default: ok = bad("'%s': the test network does not carry out this fault", text);
        }
        /* A link that comes back "for D" later: not carried out here either. */
        if (ok && f->kind == FAULT_LINK_OFF && f->duration_ns != 0) {
            ok = bad("'%s': the test network does not mend links (write link ... on)", text);
        }
    } else {
        bad("'%s': one fault per line", text);
    }
    fault_script_free(&script);
    return ok;
}

static bool is_fault_word(const char *word)
{
    static const char *const words[] = {"kill",  "hang",   "resume",  "link",
                                        "reboot", "restart", "join",   "suspect",
                                        "block", "partition", "heal", "appkill",
                                        "leave"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcmp(word, words[i]) == 0) {
            return true;
        }
    }
    return false;
}

static bool parse_u64(const char *text, uint64_t *value)
{
    char *end = NULL;
    if (text == NULL || text[0] == '\0' || text[0] == '-') {
        return false;
    }
    *value = strtoull(text, &end, 0);
    return *end == '\0';
}

static bool parse_node(const struct script *s, const char *text, uint32_t *id)
{
    uint64_t v;
    if (!parse_u64(text, &v) || v >= s->setup.geometry.node_count) {
        return bad("'%s' is not a node of the torus", text == NULL ? "" : text);
    }
    *id = (uint32_t)v;
    return true;
}

static bool parse_time(const char *text, uint64_t *ns)
{
    if (text == NULL || !cli_parse_time_ns(text, true, ns)) {
        return bad("'%s' is not " CLI_TIME_EXPECTED, text == NULL ? "" : text);
    }
    return true;
}

static bool parse_type(const char *text, int *type)
{
    *type = text == NULL ? -1 : harness_msg_type(text);
    return *type >= 0 || bad("'%s' is not a message type (failed_node, heartbeat, ...)",
                             text == NULL ? "" : text);
}

/* A list of ids, "0-2,4", into a bitmap of the torus's nodes. */
static bool parse_list(const struct script *s, const char *text, bool *in)
{
    memset(in, 0, sizeof(bool) * HARNESS_MAX_NODES);
    char copy[LINE_MAX];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *part = copy; part != NULL && *part != '\0';) {
        char *comma = strchr(part, ',');
        if (comma != NULL) {
            *comma = '\0';
        }
        char *dash = strchr(part, '-');
        uint32_t first;
        uint32_t last;
        if (dash != NULL) {
            *dash = '\0';
            if (!parse_node(s, part, &first) || !parse_node(s, dash + 1, &last) || last < first) {
                return bad("'%s' is not a list of ids like 0-2,4", text);
            }
        } else if (!parse_node(s, part, &first)) {
            return false;
        } else {
            last = first;
        }
        for (uint32_t id = first; id <= last; id++) {
            in[id] = true;
        }
        part = comma == NULL ? NULL : comma + 1;
    }
    return true;
}

/* "key=value" options after the fixed words of an expectation. */
static bool find_option(char **tok, int n, int from, const char *key, const char **value)
{
    size_t length = strlen(key);
    for (int i = from; i < n; i++) {
        if (strncmp(tok[i], key, length) == 0 && tok[i][length] == '=') {
            *value = tok[i] + length + 1;
            return true;
        }
    }
    return false;
}

/* Every option is one of keys (a misspelt one would assert nothing). */
static bool known_options(char **tok, int n, int from, const char *const *keys)
{
    for (int i = from; i < n; i++) {
        const char *eq = strchr(tok[i], '=');
        bool known = false;
        for (size_t k = 0; eq != NULL && keys[k] != NULL; k++) {
            known = known || (strlen(keys[k]) == (size_t)(eq - tok[i]) &&
                              strncmp(tok[i], keys[k], (size_t)(eq - tok[i])) == 0);
        }
        if (!known) {
            return bad("'%s' is not an option here", tok[i]);
        }
    }
    return true;
}

static bool option_u64(char **tok, int n, int from, const char *key, uint64_t *value, bool *given)
{
    const char *text;
    *given = find_option(tok, n, from, key, &text);
    if (*given && !parse_u64(text, value)) {
        return bad("'%s' is not a number", text);
    }
    return true;
}

static bool option_time(char **tok, int n, int from, const char *key, uint64_t *value,
                        bool *given)
{
    const char *text;
    *given = find_option(tok, n, from, key, &text);
    return !*given || parse_time(text, value);
}

/* An expectation that did not hold: FILE:LINE and what was found. */
static void unmet(struct script *s, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void unmet(struct script *s, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s:%u: ", s->file, s->line);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    s->failures++;
}

static bool expect_sends(struct script *s, char **tok, int n)
{
    /* expect N|any sends TYPE [to D] [count=K] */
    uint32_t from = MEMBERSHIP_NONE;
    uint32_t to = MEMBERSHIP_NONE;
    int type;
    int next = 4;
    if (strcmp(tok[1], "any") != 0 && !parse_node(s, tok[1], &from)) {
        return false;
    }
    if (!parse_type(n > 3 ? tok[3] : NULL, &type)) {
        return false;
    }
    if (n > 4 && strcmp(tok[4], "to") == 0) {
        if (!parse_node(s, n > 5 ? tok[5] : NULL, &to)) {
            return false;
        }
        next = 6;
    }
    static const char *const keys[] = {"count", NULL};
    uint64_t count = 1;
    bool given;
    if (!known_options(tok, n, next, keys) || !option_u64(tok, n, next, "count", &count, &given)) {
        return false;
    }
    if (s->run) {
        uint32_t got = harness_count_sent(&h, from, type, to);
        if (got != count) {
            unmet(s, "%u messages %s, expected %" PRIu64, got, membership_msg_type_name(
                      (unsigned)type), count);
        }
    }
    return true;
}

static int event_type(const char *name)
{
    /* Indexed by enum membership_event_type. */
    static const char *const names[] = {NULL,     "view",     "failure",     "stable",
                                        "joined", "expelled", "partitioned", "decision",
                                        "refused", "left", "reformed"};
    for (int t = 1; t < (int)(sizeof names / sizeof names[0]); t++) {
        if (name != NULL && strcmp(name, names[t]) == 0) {
            return t;
        }
    }
    return -1;
}

static bool expect_event(struct script *s, char **tok, int n)
{
    /* expect event N|any TYPE [who=W] [count=K] [after=T] [until=T] [live= messages= detector-messages=] */
    uint32_t node = MEMBERSHIP_NONE;
    if (n < 4) {
        return bad("%s", "expect event N|any TYPE [options]");
    }
    if (strcmp(tok[2], "any") != 0 && !parse_node(s, tok[2], &node)) {
        return false;
    }
    int type = event_type(tok[3]);
    if (type < 0) {
        return bad("'%s' is not an event (view, failure, stable, joined, expelled, partitioned, "
                   "decision, refused, left, reformed)",
                   tok[3]);
    }
    static const char *const keys[] = {"who",   "count",    "after",             "until",
                                       "live",  "messages", "detector-messages", "model",
                                       "action", "quarantined", NULL};
    const char *model_text = NULL;
    const char *action_text = NULL;
    const char *quarantined_text = NULL;
    find_option(tok, n, 4, "model", &model_text);
    find_option(tok, n, 4, "action", &action_text);
    find_option(tok, n, 4, "quarantined", &quarantined_text);
    uint8_t model = model_text != NULL ? fault_model_from_name(model_text, strlen(model_text))
                                       : FAULT_MODEL_LIMIT;
    uint8_t action = action_text != NULL
                         ? recovery_action_from_name(action_text, strlen(action_text))
                         : RECOVERY_ACTION_LIMIT;
    if ((model_text != NULL && model >= FAULT_MODEL_LIMIT) ||
        (action_text != NULL && action >= RECOVERY_ACTION_LIMIT) ||
        (quarantined_text != NULL && strcmp(quarantined_text, "yes") != 0 &&
         strcmp(quarantined_text, "no") != 0)) {
        return bad("%s", "model=process|physical|network|repeated|left, action=ignore|restart|"
                         "migrate|promote, quarantined=yes|no");
    }
    uint64_t count = 1, who = 0, after = 0, until = 0, live = 0, messages = 0, det = 0;
    bool has_who, has_count, has_after, has_until, has_live, has_messages, has_det;
    if (!known_options(tok, n, 4, keys) || !option_u64(tok, n, 4, "who", &who, &has_who) ||
        !option_u64(tok, n, 4, "count", &count, &has_count) ||
        !option_time(tok, n, 4, "after", &after, &has_after) ||
        !option_time(tok, n, 4, "until", &until, &has_until) ||
        !option_u64(tok, n, 4, "live", &live, &has_live) ||
        !option_u64(tok, n, 4, "messages", &messages, &has_messages) ||
        !option_u64(tok, n, 4, "detector-messages", &det, &has_det)) {
        return false;
    }
    if (!s->run) {
        return true;
    }
    uint32_t got = 0;
    const struct harness_event *last = NULL;
    for (uint32_t i = 0; i < h.event_count; i++) {
        const struct harness_event *e = &h.events[i];
        bool match = e->event.type == type && (node == MEMBERSHIP_NONE || e->node == node) &&
                     (!has_who || (type == MEMBERSHIP_EVENT_FAILURE_DETECTED &&
                                   e->event.u.failure.who == who) ||
                      (type == MEMBERSHIP_EVENT_RECOVERY_DECISION &&
                       e->event.u.decision.node == who) ||
                      (type == MEMBERSHIP_EVENT_LEFT && e->event.u.left.who == who)) &&
                     (!has_after || e->time_ns > after) && (!has_until || e->time_ns <= until);
        if (match) {
            got++;
            last = e;
        }
    }
    if (got != count) {
        unmet(s, "%u %s events, expected %" PRIu64, got, tok[3], count);
        return true;
    }
    if (last == NULL) {
        return true;
    }
    const struct membership_event *e = &last->event;
    if (has_live && type == MEMBERSHIP_EVENT_STABLE && e->u.stable.live != live) {
        unmet(s, "stable live=%u, expected %" PRIu64, e->u.stable.live, live);
    }
    if (has_live && type == MEMBERSHIP_EVENT_VIEW && e->u.view.live != live) {
        unmet(s, "view live=%u, expected %" PRIu64, e->u.view.live, live);
    }
    if (has_messages && e->u.stable.messages != messages) {
        unmet(s, "stable messages=%u, expected %" PRIu64, e->u.stable.messages, messages);
    }
    uint8_t got_model = type == MEMBERSHIP_EVENT_FAILURE_DETECTED ? e->u.failure.model
                        : type == MEMBERSHIP_EVENT_RECOVERY_DECISION ? e->u.decision.model
                                                                      : FAULT_MODEL_NONE;
    if (model_text != NULL && got_model != model) {
        unmet(s, "%s model=%s, expected %s", tok[3], fault_model_name(got_model), model_text);
    }
    if (action_text != NULL && e->u.decision.action != action) {
        unmet(s, "decision action=%s, expected %s", recovery_action_name(e->u.decision.action),
              action_text);
    }
    if (quarantined_text != NULL &&
        e->u.decision.quarantined != (strcmp(quarantined_text, "yes") == 0)) {
        unmet(s, "decision quarantined=%s, expected %s", e->u.decision.quarantined ? "yes" : "no",
              quarantined_text);
    }
    if (has_det && e->u.stable.detector_messages != det) {
        unmet(s, "stable detector-messages=%u, expected %" PRIu64,
              e->u.stable.detector_messages, det);
    }
    return true;
}

static bool expect_view(struct script *s, char **tok, int n)
{
    /* expect view NODES [none] [epoch=K] [root=R] [live=L] [members=LIST] [joining=yes|no] */
    bool nodes[HARNESS_MAX_NODES];
    if (n < 3) {
        return bad("%s", "expect view NODES [options]");
    }
    bool up = strcmp(tok[2], "up") == 0;
    if (!up && !parse_list(s, tok[2], nodes)) {
        return false;
    }
    int from = 3;
    bool none = n > 3 && strcmp(tok[3], "none") == 0;
    from += none ? 1 : 0;
    static const char *const keys[] = {"epoch", "root", "live", "members", "joining", NULL};
    uint64_t epoch = 0, root = 0, live = 0;
    bool has_epoch, has_root, has_live;
    const char *members_text = NULL;
    const char *joining_text = NULL;
    bool members[HARNESS_MAX_NODES];
    bool has_members = find_option(tok, n, from, "members", &members_text);
    bool has_joining = find_option(tok, n, from, "joining", &joining_text);
    if (!known_options(tok, n, from, keys) ||
        !option_u64(tok, n, from, "epoch", &epoch, &has_epoch) ||
        !option_u64(tok, n, from, "root", &root, &has_root) ||
        !option_u64(tok, n, from, "live", &live, &has_live) ||
        (has_members && !parse_list(s, members_text, members))) {
        return false;
    }
    if (has_joining && strcmp(joining_text, "yes") != 0 && strcmp(joining_text, "no") != 0) {
        return bad("joining='%s': yes or no", joining_text);
    }
    if (!s->run) {
        return true;
    }
    uint32_t count = s->setup.geometry.node_count;
    for (uint32_t id = 0; id < count; id++) {
        if (up ? h.down[id] : !nodes[id]) {
            continue;
        }
        const struct membership *m = &h.nodes[id];
        if (none != !membership_has_view(m)) {
            unmet(s, "node %u %s", id, none ? "holds a view" : "holds no view");
            continue;
        }
        if (has_joining && membership_is_joining(m) != (strcmp(joining_text, "yes") == 0)) {
            unmet(s, "node %u is%s joining", id, membership_is_joining(m) ? "" : " not");
        }
        if (none) {
            continue;
        }
        uint64_t counter = MEMBERSHIP_EPOCH_COUNTER(membership_epoch(m));
        if (has_epoch && counter != epoch) {
            unmet(s, "node %u: epoch %" PRIu64 ", expected %" PRIu64, id, counter, epoch);
        }
        if (has_root && membership_root(m) != root) {
            unmet(s, "node %u: root %u, expected %" PRIu64, id, membership_root(m), root);
        }
        if (has_live && membership_live_count(m) != live) {
            unmet(s, "node %u: %u live, expected %" PRIu64, id, membership_live_count(m), live);
        }
        for (uint32_t other = 0; has_members && other < count; other++) {
            if (membership_is_member(m, other) != members[other]) {
                unmet(s, "node %u: %u is%s a member", id, other,
                      members[other] ? " not" : "");
            }
        }
    }
    return true;
}

static void expect_agree(struct script *s)
{
    const struct membership *first = NULL;
    for (uint32_t id = 0; id < s->setup.geometry.node_count; id++) {
        if (h.down[id]) {
            continue;
        }
        const struct membership *m = &h.nodes[id];
        if (!membership_has_view(m)) {
            unmet(s, "node %u holds no view", id);
        } else if (first == NULL) {
            first = m;
        } else if (membership_epoch(m) != membership_epoch(first) ||
                   membership_digest(m) != membership_digest(first)) {
            unmet(s, "node %u: epoch %#" PRIx64 " digest %#" PRIx64 ", node %u: %#" PRIx64
                     " %#" PRIx64, id, membership_epoch(m), membership_digest(m),
                  first->self, membership_epoch(first), membership_digest(first));
        }
    }
}

/* The counter an `expect counter` line names (name[0..length)). */
static bool counter_named(const char *name, size_t length, const struct membership *node,
                          const uint32_t **counter)
{
    const struct membership_counters *c = membership_get_counters(node);
    static const struct {
        const char *name;
        size_t offset;
    } known[] = {
        {"drops_stale", offsetof(struct membership_counters, drops_stale)},
        {"drops_malformed", offsetof(struct membership_counters, drops_malformed)},
        {"drops_bad_ack", offsetof(struct membership_counters, drops_bad_ack)},
        {"reports_refuted", offsetof(struct membership_counters, reports_refuted)},
        {"false_suspicions", offsetof(struct membership_counters, false_suspicions)},
        {"timeouts_widened", offsetof(struct membership_counters, timeouts_widened)},
        {"suspicions_refuted", offsetof(struct membership_counters, suspicions_refuted)},
        {"rounds_superseded", offsetof(struct membership_counters, rounds_superseded)},
        {"probes_indirect", offsetof(struct membership_counters, probes_indirect)},
        {"relays_forwarded", offsetof(struct membership_counters, relays_forwarded)},
        {"acks_asked", offsetof(struct membership_counters, acks_asked)},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strlen(known[i].name) == length && strncmp(known[i].name, name, length) == 0) {
            *counter = (const uint32_t *)(const void *)((const char *)c + known[i].offset);
            return true;
        }
    }
    return false;
}

static bool expect_line(struct script *s, char **tok, int n)
{
    if (n >= 3 && strcmp(tok[2], "sends") == 0) {
        return expect_sends(s, tok, n);
    }
    const char *what = n > 1 ? tok[1] : "";
    uint64_t value;
    uint32_t id;
    if ((strcmp(what, "delivered") == 0 || strcmp(what, "lost") == 0) && n == 3) {
        if (!parse_u64(tok[2], &value)) {
            return bad("'%s' is not a number", tok[2]);
        }
        uint32_t got = what[0] == 'd' ? h.delivered : h.lost;
        if (s->run && got != value) {
            unmet(s, "%u %s, expected %" PRIu64, got, what, value);
        }
        return true;
    }
    if (strcmp(what, "event") == 0) {
        return expect_event(s, tok, n);
    }
    if (strcmp(what, "events") == 0 && n == 3) {
        if (!parse_u64(tok[2], &value)) {
            return bad("'%s' is not a number", tok[2]);
        }
        if (s->run && h.event_count != value) {
            unmet(s, "%u events, expected %" PRIu64, h.event_count, value);
        }
        return true;
    }
    if (strcmp(what, "view") == 0) {
        return expect_view(s, tok, n);
    }
    if (strcmp(what, "agree") == 0 && n == 2) {
        if (s->run) {
            expect_agree(s);
        }
        return true;
    }
    if (strcmp(what, "deadline") == 0 && n == 4) {
        bool nodes[HARNESS_MAX_NODES];
        bool up = strcmp(tok[2], "up") == 0;
        uint64_t within = 0;
        bool never = strcmp(tok[3], "never") == 0;
        if (!up && !parse_list(s, tok[2], nodes)) {
            return false;
        }
        if (!never && strncmp(tok[3], "within=", 7) != 0) {
            return bad("'%s': never or within=T", tok[3]);
        }
        if (!never && !parse_time(tok[3] + 7, &within)) {
            return false;
        }
        for (id = 0; s->run && id < s->setup.geometry.node_count; id++) {
            if (up ? h.down[id] : !nodes[id]) {
                continue;
            }
            uint64_t at = membership_next_deadline(&h.nodes[id]);
            if (never ? at != MEMBERSHIP_NEVER : (at == MEMBERSHIP_NEVER || at - h.now > within)) {
                unmet(s, "node %u: next deadline %" PRIu64 " ns (now %" PRIu64 ")", id, at, h.now);
            }
        }
        return true;
    }
    if (strcmp(what, "counter") == 0 && n == 4) {
        const char *equals = strchr(tok[3], '=');
        const uint32_t *counter = NULL;
        if (!parse_node(s, tok[2], &id)) {
            return false;
        }
        if (equals == NULL || !parse_u64(equals + 1, &value) ||
            !counter_named(tok[3], (size_t)(equals - tok[3]), &h.nodes[id], &counter)) {
            return bad("%s", "expect counter N NAME=V (drops_stale, drops_malformed, drops_bad_ack, "
                             "reports_refuted, false_suspicions, timeouts_widened, "
                             "suspicions_refuted, rounds_superseded, probes_indirect, "
                             "relays_forwarded)");
        }
        if (s->run && *counter != value) {
            unmet(s, "node %u: %.*s %u, expected %" PRIu64, id, (int)(equals - tok[3]), tok[3],
                  *counter, value);
        }
        return true;
    }
    if (strcmp(what, "tree") == 0 && n >= 3) {
        static const char *const keys[] = {"parent", "children", NULL};
        uint64_t parent = 0, children = 0;
        bool has_parent, has_children;
        if (!parse_node(s, tok[2], &id) || !known_options(tok, n, 3, keys) ||
            !option_u64(tok, n, 3, "parent", &parent, &has_parent) ||
            !option_u64(tok, n, 3, "children", &children, &has_children)) {
            return false;
        }
        if (s->run) {
            uint32_t p;
            uint32_t c[CONFIG_TREE_RADIX_MAX];
            uint32_t count;
            uint32_t depth;
            if (!membership_tree_of(&h.nodes[id], &p, c, &count, &depth)) {
                unmet(s, "node %u holds no view", id);
            } else if ((has_parent && p != parent) || (has_children && count != children)) {
                unmet(s, "node %u: parent %u, %u children", id, p, count);
            }
        }
        return true;
    }
    return bad("'%s': expect what? (sends, delivered, lost, event, events, view, agree, "
               "deadline, counter, tree)", what);
}

static bool setup_line(struct script *s, char **tok, int n)
{
    struct harness_setup *u = &s->setup;
    uint64_t v;
    if (strcmp(tok[0], "torus") == 0 && n == 2) {
        uint32_t sizes[CONFIG_MAX_DIMS];
        unsigned dims = 0;
        const char *p = tok[1];
        while (*p != '\0' && dims < CONFIG_MAX_DIMS) {
            char *end = NULL;
            unsigned long size = strtoul(p, &end, 10);
            if (end == p || (*end != 'x' && *end != '\0')) {
                break;
            }
            sizes[dims++] = (uint32_t)size;
            p = *end == 'x' ? end + 1 : end;
        }
        if (*p != '\0' || dims == 0 ||
            torus_geometry_init(&u->geometry, dims, sizes, NULL, NULL) != TORUS_GEOMETRY_OK ||
            u->geometry.node_count > HARNESS_MAX_NODES) {
            return bad("torus '%s': sizes like 4x4x4, at most 64 nodes", tok[1]);
        }
        u->members = u->geometry.node_count;
        return true;
    }
    if ((strcmp(tok[0], "members") == 0 || strcmp(tok[0], "radix") == 0) && n == 2) {
        if (!parse_u64(tok[1], &v) || v > HARNESS_MAX_NODES) {
            return bad("'%s' is not a number", tok[1]);
        }
        *(tok[0][0] == 'm' ? &u->members : &u->radix) = (uint32_t)v;
        return true;
    }
    if (strcmp(tok[0], "tree") == 0 && n == 2) {
        return membership_layout_from_name(tok[1], &u->layout) ||
               bad("tree '%s': radix, torus or box", tok[1]);
    }
    if (strcmp(tok[0], "timeouts") == 0 && n == 3) {
        uint64_t beat;
        uint64_t detect;
        if (!parse_time(tok[1], &beat) || !parse_time(tok[2], &detect) || beat % 1000000u != 0 ||
            detect % 1000000u != 0 || detect == 0) {
            return bad("%s", "timeouts HEARTBEAT DETECT: whole milliseconds, DETECT not 0");
        }
        u->heartbeat_ms = (uint32_t)(beat / 1000000u);
        u->detect_ms = (uint32_t)(detect / 1000000u);
        return true;
    }
    if (strcmp(tok[0], "recovery") == 0 && n >= 2) {
        char text[LINE_MAX] = "";
        for (int i = 1; i < n; i++) {
            strncat(text, tok[i], sizeof text - strlen(text) - 2);
            strncat(text, " ", sizeof text - strlen(text) - 1);
        }
        char error[400];
        if (!job_options_parse_recovery(text, &u->recovery, error, sizeof error)) {
            return bad("%s", error);
        }
        return true;
    }
    if (strcmp(tok[0], "timeout-ceiling") == 0 && n == 2) {
        uint8_t ceiling = 0;
        char error[240];
        if (!job_options_parse_timeout_ceiling("timeout-ceiling", tok[1], &ceiling, error,
                                               sizeof error)) {
            return bad("%s", error);
        }
        u->timeout_ceiling = ceiling;
        return true;
    }
    if (strcmp(tok[0], "heartbeat") == 0 && n == 2 && strcmp(tok[1], "off") == 0) {
        u->heartbeat_off = true;
        return true;
    }
    if (strcmp(tok[0], "watch-torus-neighbours") == 0 && n == 2) {
        u->watch_torus_neighbours = strcmp(tok[1], "on") == 0;
        return u->watch_torus_neighbours || strcmp(tok[1], "off") == 0 ||
               bad("watch-torus-neighbours '%s': on or off", tok[1]);
    }
    return bad("'%s': not a set-up line (torus, members, radix, tree, timeouts, heartbeat, "
               "timeout-ceiling, watch-torus-neighbours, recovery)", tok[0]);
}

static bool send_line(struct script *s, char **tok, int n)
{
    /* send TYPE from S to D [noview] [u8|u16|u32|u64 V]... */
    int type;
    uint32_t from;
    uint32_t to;
    if (n < 6 || strcmp(tok[2], "from") != 0 || strcmp(tok[4], "to") != 0) {
        return bad("%s", "send TYPE from S to D [noview] [u8|u16|u32|u64 V]...");
    }
    if (!parse_type(tok[1], &type) || !parse_node(s, tok[3], &from) ||
        !parse_node(s, tok[5], &to)) {
        return false;
    }
    int i = 6;
    bool has_view = !(n > 6 && strcmp(tok[6], "noview") == 0);
    i += has_view ? 0 : 1;
    struct membership_writer w;
    if (s->run) {
        harness_message_begin(&h, to, (uint8_t)type, from, has_view, &w, s->last_message,
                              sizeof s->last_message);
    }
    for (; i < n; i += 2) {
        uint64_t v = 0;
        bool receiver_epoch = i + 1 < n && strcmp(tok[i], "u64") == 0 &&
                              strcmp(tok[i + 1], "epoch") == 0;
        if (receiver_epoch) {
            v = s->run ? membership_epoch(&h.nodes[to]) : 0;
        } else if (i + 1 >= n || !parse_u64(tok[i + 1], &v)) {
            return bad("'%s': fields go as u8|u16|u32|u64 VALUE", tok[i]);
        }
        bool ok = true;
        if (strcmp(tok[i], "u8") == 0 && v <= UINT8_MAX) {
            if (s->run) membership_put_u8(&w, (uint8_t)v);
        } else if (strcmp(tok[i], "u16") == 0 && v <= UINT16_MAX) {
            if (s->run) membership_put_u16(&w, (uint16_t)v);
        } else if (strcmp(tok[i], "u32") == 0 && v <= UINT32_MAX) {
            if (s->run) membership_put_u32(&w, (uint32_t)v);
        } else if (strcmp(tok[i], "u64") == 0) {
            if (s->run) membership_put_u64(&w, v);
        } else {
            ok = false;
        }
        if (!ok) {
            return bad("'%s': fields go as u8|u16|u32|u64 VALUE (in range)", tok[i]);
        }
    }
    s->has_last = true;
    if (s->run) {
        s->last_length = w.length;
        s->last_to = to;
        harness_receive(&h, to, s->last_message, w.length);
    }
    return true;
}

/* One line; in the syntax pass (s->run false) nothing happens to the nodes. */
static bool script_line(struct script *s, char **tok, int n)
{
    const char *word = tok[0];
    if (strcmp(word, "expect") == 0) {
        if (!s->started) {
            return bad("%s", "expect before start");
        }
        return expect_line(s, tok, n);
    }
    if (strcmp(word, "start") == 0 && n == 1) {
        if (s->setup.geometry.node_count == 0 || s->started) {
            return bad("%s", "start: once, after a torus line");
        }
        s->started = true;
        if (s->run && !harness_start(&h, &s->setup)) {
            return bad("%s", "start: the nodes refused the set-up (see above)");
        }
        return true;
    }
    if (strcmp(word, "hop") == 0 && n == 2) {
        uint64_t hop;
        if (!parse_time(tok[1], &hop)) {
            return false;
        }
        if (s->run) {
            h.hop_ns = hop;
        }
        return true;
    }
    if (!s->started) {
        return setup_line(s, tok, n);
    }
    if (strcmp(word, "slow") == 0) {
        bool nodes[HARNESS_MAX_NODES];
        uint64_t every;
        if (n != 4 || strcmp(tok[2], "every") != 0) {
            return bad("%s", "slow LIST every T");
        }
        if (!parse_list(s, tok[1], nodes) || !parse_time(tok[3], &every)) {
            return false;
        }
        for (uint32_t i = 0; s->run && i < HARNESS_MAX_NODES; i++) {
            if (nodes[i]) {
                h.tick_every_ns[i] = every;
            }
        }
        return true;
    }
    if (strcmp(word, "lose") == 0) {
        int type;
        uint32_t a;
        uint32_t b;
        if (n == 5 && strcmp(tok[1], "next") == 0 && strcmp(tok[3], "from") == 0) {
            if (!parse_type(tok[2], &type) || !parse_node(s, tok[4], &a)) {
                return false;
            }
            if (s->run) {
                h.lose_next_from = a;
                h.lose_next_type = (uint8_t)type;
            }
            return true;
        }
        if (n == 3 && parse_node(s, tok[1], &a) && parse_node(s, tok[2], &b)) {
            if (s->run && h.cut_count < HARNESS_RULES) {
                h.cut[h.cut_count++] = (struct harness_pair){
                    .from = a, .to = b, .both_ways = false, .until_ns = MEMBERSHIP_NEVER};
            }
            return true;
        }
        return bad("%s", "lose next TYPE from N, or lose A B");
    }
    /* The rest are actions: each opens a window. */
    if (s->run) {
        harness_window(&h);
    }
    if (is_fault_word(word)) {
        char text[LINE_MAX] = "";
        for (int i = 0; i < n; i++) {
            strncat(text, i > 0 ? " " : "", sizeof text - strlen(text) - 1);
            strncat(text, tok[i], sizeof text - strlen(text) - 1);
        }
        struct harness_fault fault;
        if (!parse_fault(text, &s->setup.geometry, &fault)) {
            return false;
        }
        if (s->run) {
            harness_fault(&h, &fault);
        }
        return true;
    }
    uint64_t t;
    uint32_t id;
    if (strcmp(word, "at") == 0 && n == 2) {
        if (!parse_time(tok[1], &t)) {
            return false;
        }
        if (s->run) {
            harness_advance(&h, t);
        }
        return true;
    }
    if (strcmp(word, "send") == 0) {
        return send_line(s, tok, n);
    }
    if (strcmp(word, "resend") == 0 && n == 1) {
        if (!s->has_last) {
            return bad("%s", "resend before any send");
        }
        if (s->run) {
            harness_receive(&h, s->last_to, s->last_message, s->last_length);
        }
        return true;
    }
    if (strcmp(word, "tick") == 0 && (n == 3 || n == 4)) {
        bool next = n == 3 && strcmp(tok[2], "next") == 0;
        if (!parse_node(s, tok[1], &id)) {
            return false;
        }
        if (!next && (n != 4 || strcmp(tok[2], "at") != 0)) {
            return bad("%s", "tick N next, or tick N at T");
        }
        if (!next && !parse_time(tok[3], &t)) {
            return false;
        }
        if (s->run) {
            if (next) {
                t = membership_next_deadline(&h.nodes[id]);
                if (t == MEMBERSHIP_NEVER) {
                    unmet(s, "node %u has no deadline", id);
                    return true;
                }
            }
            harness_tick(&h, id, t);
        }
        return true;
    }
    if (strcmp(word, "lossy") == 0 && n == 3) {
        uint32_t far;
        if (!parse_node(s, tok[1], &id) || !parse_node(s, tok[2], &far)) {
            return false;
        }
        if (s->run && !h.down[id]) {
            membership_link_lossy(&h.nodes[id], far, h.now, &h.out);
            harness_collect(&h, id);
        }
        return true;
    }
    if (strcmp(word, "deliver") == 0 && n == 1) {
        if (s->run) {
            harness_deliver(&h);
        }
        return true;
    }
    if (strcmp(word, "run") == 0 && (n == 5 || n == 7)) {
        uint64_t until;
        uint64_t step;
        uint32_t who = MEMBERSHIP_NONE;
        uint32_t by = MEMBERSHIP_NONE;
        if (strcmp(tok[1], "to") != 0 || strcmp(tok[3], "step") != 0 ||
            !parse_time(tok[2], &until) || !parse_time(tok[4], &step) || step == 0) {
            return bad("%s", "run to T step S [stop=W by=D]");
        }
        if (n == 7 && (strncmp(tok[5], "stop=", 5) != 0 || strncmp(tok[6], "by=", 3) != 0 ||
                       !parse_node(s, tok[5] + 5, &who) || !parse_node(s, tok[6] + 3, &by))) {
            return bad("%s", "run to T step S [stop=W by=D]");
        }
        if (s->run) {
            harness_run(&h, until, step, who, by);
        }
        return true;
    }
    return bad("'%s': unknown line (see tests/membership/script.c)", word);
}

/* Splits a line into words, '#' to the end dropped; returns the count. */
static int split(char *line, char **tok)
{
    char *hash = strchr(line, '#');
    if (hash != NULL) {
        *hash = '\0';
    }
    int n = 0;
    for (char *p = strtok(line, " \t\r\n"); p != NULL && n < MAX_TOKENS;
         p = strtok(NULL, " \t\r\n")) {
        tok[n++] = p;
    }
    return n;
}

/* One pass over the file; false at a bad line (reported). */
static bool pass(struct script *s, FILE *f)
{
    char line[LINE_MAX];
    rewind(f);
    s->line = 0;
    s->started = false;
    s->has_last = false;
    harness_setup_defaults(&s->setup);
    while (fgets(line, sizeof line, f) != NULL) {
        s->line++;
        char *tok[MAX_TOKENS];
        int n = split(line, tok);
        if (n == MAX_TOKENS) {
            fprintf(stderr, "%s:%u: more than %d words\n", s->file, s->line, MAX_TOKENS - 1);
            return false;
        }
        if (n > 0 && !script_line(s, tok, n)) {
            fprintf(stderr, "%s:%u: %s\n", s->file, s->line, error_text);
            return false;
        }
    }
    if (!s->started) {
        fprintf(stderr, "%s: no start line\n", s->file);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_membership_script SCRIPT...\n");
        return 2;
    }
    unsigned failures = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        if (f == NULL) {
            fprintf(stderr, "%s: cannot be read\n", argv[i]);
            return 2;
        }
        struct script s = {.file = argv[i]};
        if (!pass(&s, f)) {
            fclose(f);
            return 2;
        }
        s.run = true;
        bool ok = pass(&s, f);
        fclose(f);
        if (!ok) {
            return 2;
        }
        failures += s.failures + h.failures;
        printf("%s: %s\n", argv[i], s.failures + h.failures == 0 ? "all expectations met"
                                                                 : "expectations failed");
    }
    return failures == 0 ? 0 : 1;
}
