#include "qemu/emu_inject.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu/cli.h"

/* Words in one item: "link 6 x+ off at 6s for 2s" has 8. */
#define ITEM_WORDS_MAX 10

static const char *const action_names[] = {
    [EMU_ACTION_KILL] = "kill",       [EMU_ACTION_HANG] = "hang",
    [EMU_ACTION_RESUME] = "resume",   [EMU_ACTION_LINK_OFF] = "link",
    [EMU_ACTION_LINK_ON] = "link",    [EMU_ACTION_REBOOT] = "reboot",
    [EMU_ACTION_RESTART] = "restart", [EMU_ACTION_JOIN] = "join",
};

#define EXPECTED_ACTIONS "kill, hang, resume, link, reboot, restart, join"

const char *emu_action_name(enum emu_action_kind kind)
{
    return (unsigned)kind < sizeof action_names / sizeof action_names[0] ? action_names[kind]
                                                                         : "?";
}

void emu_action_set_text(struct emu_action *action, const char *text)
{
    size_t length = strlen(text);
    if (length >= sizeof action->text)
        length = sizeof action->text - 1;
    memcpy(action->text, text, length);
    action->text[length] = '\0';
}

void emu_action_describe(const struct emu_action *action, char *text, size_t capacity)
{
    if (action->kind == EMU_ACTION_LINK_OFF || action->kind == EMU_ACTION_LINK_ON)
        snprintf(text, capacity, "link %u %s %s", (unsigned)action->node,
                 torus_geometry_link_name(action->link),
                 action->kind == EMU_ACTION_LINK_OFF ? "off" : "on");
    else
        snprintf(text, capacity, "%s %u", emu_action_name(action->kind),
                 (unsigned)action->node);
}

static bool add_action(struct emu_script *script, const struct emu_action *action)
{
    if (script->count >= EMU_INJECT_MAX_ACTIONS)
        return false;
    if (script->count == script->capacity) {
        unsigned capacity = script->capacity == 0 ? 16 : script->capacity * 2;
        struct emu_action *grown = realloc(script->actions, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        script->actions = grown;
        script->capacity = capacity;
    }
    script->actions[script->count] = *action;
    script->actions[script->count].order = script->count;
    script->count++;
    return true;
}

void emu_script_free(struct emu_script *script)
{
    free(script->actions);
    script->actions = NULL;
    script->count = script->capacity = 0;
}

/* Trims spaces at both ends of [*begin, *end). */
static void trim(const char **begin, const char **end)
{
    while (*begin < *end && (**begin == ' ' || **begin == '\t' || **begin == '\n'))
        (*begin)++;
    while (*end > *begin && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\n'))
        (*end)--;
}

struct item {
    char text[EMU_ACTION_TEXT_MAX]; /* as written, cut for messages */
    char buffer[256];               /* words, NUL-separated */
    char *word[ITEM_WORDS_MAX];
    unsigned words;
};

__attribute__((format(printf, 4, 5))) static bool item_error(const struct item *item,
                                                             char *error, size_t capacity,
                                                             const char *format, ...);
static bool item_error(const struct item *item, char *error, size_t capacity,
                       const char *format, ...)
{
    char reason[200];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(reason, sizeof reason, format, arguments);
    va_end(arguments);
    snprintf(error, capacity, "'%s': %s", item->text, reason);
    return false;
}

static bool split_item(const char *begin, const char *end, struct item *item, char *error,
                       size_t capacity)
{
    size_t length = (size_t)(end - begin);
    memset(item, 0, sizeof *item);
    if (length < sizeof item->text) {
        memcpy(item->text, begin, length);
    } else {
        memcpy(item->text, begin, sizeof item->text - 4);
        memcpy(item->text + sizeof item->text - 4, "...", 4);
    }
    for (char *c = item->text; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            *c = '?'; /* messages stay one printable line */
    if (length >= sizeof item->buffer)
        return item_error(item, error, capacity, "item too long (expected e.g. 'kill 3 at 2s')");
    memcpy(item->buffer, begin, length);
    item->buffer[length] = '\0';
    for (char *c = item->buffer; *c != '\0';) {
        while (*c == ' ' || *c == '\t' || *c == '\n')
            *c++ = '\0';
        if (*c == '\0')
            break;
        if (item->words == ITEM_WORDS_MAX)
            return item_error(item, error, capacity, "too many words (expected e.g. "
                                                     "'link 6 x+ off at 6s for 2s')");
        item->word[item->words++] = c;
        while (*c != '\0' && *c != ' ' && *c != '\t' && *c != '\n')
            c++;
    }
    for (size_t i = 0; i < length; i++) {
        unsigned char ch = (unsigned char)item->buffer[i];
        if (ch != '\0' && (ch < 0x20 || ch > 0x7e))
            return item_error(item, error, capacity,
                              "holds a character that is not printable ASCII");
    }
    return true;
}

static const char *word_or_end(const struct item *item, unsigned i)
{
    return i < item->words ? item->word[i] : "(end)";
}

/* Parses one item into one or two actions (a "for D" adds the undo). */
static bool parse_item(const struct item *item, struct emu_script *script, char *error,
                       size_t capacity)
{
    static const struct {
        const char *name;
        enum emu_action_kind kind;
    } kinds[] = {
        {"kill", EMU_ACTION_KILL},       {"hang", EMU_ACTION_HANG},
        {"resume", EMU_ACTION_RESUME},   {"link", EMU_ACTION_LINK_OFF},
        {"reboot", EMU_ACTION_REBOOT},   {"restart", EMU_ACTION_RESTART},
        {"join", EMU_ACTION_JOIN},
    };
    struct emu_action action;
    memset(&action, 0, sizeof action);
    char echo[CLI_ECHO_MAX + 4];
    bool known = false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && !known; k++) {
        if (strcmp(item->word[0], kinds[k].name) == 0) {
            action.kind = kinds[k].kind;
            known = true;
        }
    }
    if (!known)
        return item_error(item, error, capacity, "unknown action '%s' (expected %s)",
                          cli_echo(item->word[0], echo), EXPECTED_ACTIONS);
    unsigned w = 1;
    uint64_t node = 0;
    if (w >= item->words)
        return item_error(item, error, capacity, "%s needs a node number (expected e.g. "
                                                 "'%s 3 at 2s')",
                          item->word[0], item->word[0]);
    if (!cli_parse_u64(item->word[w], 0, UINT32_MAX - 1u, &node))
        return item_error(item, error, capacity, "'%s' is not a node number (expected a "
                                                 "rank like 3)",
                          cli_echo(item->word[w], echo));
    action.node = (uint32_t)node;
    w++;
    if (action.kind == EMU_ACTION_LINK_OFF) {
        const char *direction = word_or_end(item, w);
        if (strlen(direction) != 2 || !torus_geometry_link_from_name(direction, &action.link))
            return item_error(item, error, capacity, "'%s' is not a link direction "
                                                     "(expected x+, x-, y+, y-, z+, z- ...)",
                              cli_echo(direction, echo));
        w++;
        const char *state = word_or_end(item, w);
        if (strcmp(state, "on") == 0)
            action.kind = EMU_ACTION_LINK_ON;
        else if (strcmp(state, "off") != 0)
            return item_error(item, error, capacity, "'%s' after the link: expected off or on",
                              cli_echo(state, echo));
        w++;
    }
    if (strcmp(word_or_end(item, w), "at") != 0)
        return item_error(item, error, capacity, "expected 'at TIME' where '%s' is",
                          cli_echo(word_or_end(item, w), echo));
    w++;
    if (w >= item->words || !cli_parse_time_ns(item->word[w], true, &action.at_ns))
        return item_error(item, error, capacity, "'%s' is not a time (expected "
                                                 CLI_TIME_EXPECTED ", or 0)",
                          cli_echo(word_or_end(item, w), echo));
    w++;
    uint64_t hold = 0;
    bool has_hold = false;
    if (w < item->words && strcmp(item->word[w], "for") == 0) {
        if (action.kind != EMU_ACTION_HANG && action.kind != EMU_ACTION_LINK_OFF)
            return item_error(item, error, capacity,
                              "'for' applies to hang and link ... off only");
        w++;
        if (w >= item->words || !cli_parse_time_ns(item->word[w], false, &hold))
            return item_error(item, error, capacity, "'%s' is not a duration (expected "
                                                     CLI_TIME_EXPECTED ")",
                              cli_echo(word_or_end(item, w), echo));
        w++;
        has_hold = true;
    }
    if (w < item->words)
        return item_error(item, error, capacity, "unexpected '%s' at the end",
                          cli_echo(item->word[w], echo));
    snprintf(action.text, sizeof action.text, "%s", item->text);
    if (!add_action(script, &action))
        return item_error(item, error, capacity, "too many items (expected at most %u)",
                          (unsigned)EMU_INJECT_MAX_ACTIONS);
    if (has_hold) {
        struct emu_action undo = action;
        undo.kind = action.kind == EMU_ACTION_HANG ? EMU_ACTION_RESUME : EMU_ACTION_LINK_ON;
        undo.at_ns = action.at_ns + hold;
        char described[EMU_ACTION_TEXT_MAX];
        emu_action_describe(&undo, described, sizeof described);
        char label[EMU_ACTION_TEXT_MAX + 56];
        snprintf(label, sizeof label, "%s (after %.40s)", described, item->word[w - 1]);
        emu_action_set_text(&undo, label);
        if (!add_action(script, &undo))
            return item_error(item, error, capacity, "too many items (expected at most %u)",
                              (unsigned)EMU_INJECT_MAX_ACTIONS);
    }
    return true;
}

static int compare_actions(const void *a, const void *b)
{
    const struct emu_action *x = a, *y = b;
    if (x->at_ns != y->at_ns)
        return x->at_ns < y->at_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

bool emu_inject_parse(const char *text, struct emu_script *script, char *error,
                      size_t capacity)
{
    memset(script, 0, sizeof *script);
    const char *c = text;
    for (;;) {
        const char *end = strchr(c, ';');
        if (end == NULL)
            end = c + strlen(c);
        const char *begin = c;
        const char *stop = end;
        trim(&begin, &stop);
        if (begin < stop) {
            static struct item item;
            if (!split_item(begin, stop, &item, error, capacity) ||
                !parse_item(&item, script, error, capacity)) {
                emu_script_free(script);
                return false;
            }
        }
        if (*end == '\0')
            break;
        c = end + 1;
    }
    if (script->count == 0) {
        snprintf(error, capacity, "the script is empty (expected items like 'kill 3 at 2s', "
                                  "separated by ';')");
        return false;
    }
    qsort(script->actions, script->count, sizeof *script->actions, compare_actions);
    return true;
}

/* ---- the world ---- */

bool emu_inject_world_init(struct emu_inject_world *world,
                           const struct torus_geometry *geometry, uint32_t spares,
                           const bool *qemu)
{
    memset(world, 0, sizeof *world);
    world->geometry = geometry;
    world->count = torus_geometry_node_count(geometry);
    world->spares = spares;
    uint32_t n = world->count > 0 ? world->count : 1;
    world->qemu = calloc(n, sizeof *world->qemu);
    world->state = calloc(n, sizeof *world->state);
    world->cut = calloc(n, sizeof *world->cut);
    if (world->qemu == NULL || world->state == NULL || world->cut == NULL) {
        emu_inject_world_free(world);
        return false;
    }
    for (uint32_t r = 0; r < world->count; r++) {
        world->qemu[r] = qemu != NULL && qemu[r];
        world->state[r] = r >= world->count - spares ? EMU_INJECT_NOT_STARTED
                                                     : EMU_INJECT_RUNNING;
    }
    return true;
}

void emu_inject_world_free(struct emu_inject_world *world)
{
    free(world->qemu);
    free(world->state);
    free(world->cut);
    world->qemu = NULL;
    world->state = NULL;
    world->cut = NULL;
}

static const char *state_text(enum emu_inject_state state)
{
    switch (state) {
    case EMU_INJECT_NOT_STARTED:
        return "a spare not started yet";
    case EMU_INJECT_RUNNING:
        return "running";
    case EMU_INJECT_HUNG:
        return "hung";
    case EMU_INJECT_KILLED:
        return "killed";
    }
    return "?";
}

__attribute__((format(printf, 3, 4))) static bool refuse(char *error, size_t capacity,
                                                         const char *format, ...);
static bool refuse(char *error, size_t capacity, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, capacity, format, arguments);
    va_end(arguments);
    return false;
}

bool emu_inject_apply(struct emu_inject_world *world, const struct emu_action *action,
                      char *error, size_t capacity)
{
    uint32_t n = action->node;
    if (n >= world->count)
        return refuse(error, capacity, "node %u does not exist (expected 0..%u)", (unsigned)n,
                      (unsigned)(world->count - 1u));
    enum emu_inject_state state = world->state[n];
    switch (action->kind) {
    case EMU_ACTION_KILL:
        if (state != EMU_INJECT_RUNNING && state != EMU_INJECT_HUNG)
            return refuse(error, capacity, "node %u is %s (expected a running node)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_KILLED;
        return true;
    case EMU_ACTION_HANG:
        if (state != EMU_INJECT_RUNNING)
            return refuse(error, capacity, "node %u is %s (expected a running node)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_HUNG;
        return true;
    case EMU_ACTION_RESUME:
        if (state != EMU_INJECT_HUNG)
            return refuse(error, capacity, "node %u is %s (expected a hung node)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_RUNNING;
        return true;
    case EMU_ACTION_REBOOT:
        if (!world->qemu[n])
            return refuse(error, capacity, "node %u is a host process (expected a QEMU node: "
                                           "reboot is QMP system_reset; use kill and restart)",
                          (unsigned)n);
        if (state != EMU_INJECT_RUNNING)
            return refuse(error, capacity, "node %u is %s (expected a running node)",
                          (unsigned)n, state_text(state));
        return true;
    case EMU_ACTION_RESTART:
        if (state != EMU_INJECT_KILLED)
            return refuse(error, capacity, "node %u is %s (expected a killed node)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_RUNNING;
        return true;
    case EMU_ACTION_JOIN:
        if (world->spares == 0)
            return refuse(error, capacity, "node %u is not a spare (there are no spares: see "
                                           "--spares)",
                          (unsigned)n);
        if (n < world->count - world->spares)
            return refuse(error, capacity, "node %u is not a spare (expected one of the last "
                                           "%u ranks: see --spares)",
                          (unsigned)n, (unsigned)world->spares);
        if (state != EMU_INJECT_NOT_STARTED)
            return refuse(error, capacity, "spare %u is %s (expected a spare not started "
                                           "yet; a killed one restarts)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_RUNNING;
        return true;
    case EMU_ACTION_LINK_OFF:
    case EMU_ACTION_LINK_ON: {
        uint32_t peer = torus_geometry_neighbour(world->geometry, n, action->link);
        if (peer == TORUS_RANK_NONE || action->link >= 16)
            return refuse(error, capacity, "node %u has no link %s (expected one of the "
                                           "torus's directions)",
                          (unsigned)n, torus_geometry_link_name(action->link));
        unsigned back = torus_geometry_opposite_link(action->link);
        bool off = action->kind == EMU_ACTION_LINK_OFF;
        bool cut = ((world->cut[n] >> action->link) & 1u) != 0;
        if (off == cut)
            return refuse(error, capacity, "link %s of node %u is already %s",
                          torus_geometry_link_name(action->link), (unsigned)n,
                          cut ? "cut" : "up");
        if (off) {
            world->cut[n] = (uint16_t)(world->cut[n] | (1u << action->link));
            world->cut[peer] = (uint16_t)(world->cut[peer] | (1u << back));
        } else {
            world->cut[n] = (uint16_t)(world->cut[n] & ~(1u << action->link));
            world->cut[peer] = (uint16_t)(world->cut[peer] & ~(1u << back));
        }
        return true;
    }
    }
    return refuse(error, capacity, "unknown action");
}

bool emu_inject_check(const struct emu_script *script, const struct torus_geometry *geometry,
                      uint32_t spares, const bool *qemu, char *error, size_t capacity)
{
    struct emu_inject_world world;
    if (!emu_inject_world_init(&world, geometry, spares, qemu)) {
        snprintf(error, capacity, "out of memory");
        return false;
    }
    bool ok = true;
    for (unsigned i = 0; i < script->count && ok; i++) {
        char reason[200];
        if (!emu_inject_apply(&world, &script->actions[i], reason, sizeof reason)) {
            snprintf(error, capacity, "'%s': %s", script->actions[i].text, reason);
            ok = false;
        }
    }
    emu_inject_world_free(&world);
    return ok;
}
