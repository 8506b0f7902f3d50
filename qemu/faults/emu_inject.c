#include "qemu/faults/emu_inject.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/fault.h"

static const char *const action_names[] = {
    [EMU_ACTION_KILL] = "kill",       [EMU_ACTION_HANG] = "hang",
    [EMU_ACTION_RESUME] = "resume",   [EMU_ACTION_LINK_OFF] = "link",
    [EMU_ACTION_LINK_ON] = "link",    [EMU_ACTION_REBOOT] = "reboot",
    [EMU_ACTION_RESTART] = "restart", [EMU_ACTION_JOIN] = "join",
    [EMU_ACTION_APPKILL] = "appkill", [EMU_ACTION_LEAVE] = "leave",
    [EMU_ACTION_PING_ALL] = "ping",
};

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
    if (action->kind == EMU_ACTION_PING_ALL)
        snprintf(text, capacity, "ping all");
    else if (action->kind == EMU_ACTION_LINK_OFF || action->kind == EMU_ACTION_LINK_ON)
        snprintf(text, capacity, "link %u %s %s", (unsigned)action->node,
                 torus_geometry_link_name(action->link),
                 action->kind == EMU_ACTION_LINK_OFF ? "off" : "on");
    else
        snprintf(text, capacity, "%s %u", emu_action_name(action->kind),
                 (unsigned)action->node);
}

static bool add_action(struct emu_script *script, const struct emu_action *action)
{
    struct emu_action **list = &script->actions;
    unsigned *count = &script->count, *room = &script->capacity;
    if (action->iteration != 0) {
        list = &script->on_progress;
        count = &script->on_progress_count;
        room = &script->on_progress_capacity;
    } else if (action->at_recovery) {
        list = &script->on_recovery;
        count = &script->on_recovery_count;
        room = &script->on_recovery_capacity;
    }
    unsigned total = script->count + script->on_progress_count + script->on_recovery_count;
    if (total >= EMU_INJECT_MAX_ACTIONS)
        return false;
    if (*count == *room) {
        unsigned capacity = *room == 0 ? 16 : *room * 2;
        struct emu_action *grown = realloc(*list, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        *list = grown;
        *room = capacity;
    }
    (*list)[*count] = *action;
    (*list)[*count].order = total;
    (*count)++;
    return true;
}

void emu_script_free(struct emu_script *script)
{
    free(script->actions);
    free(script->on_progress);
    free(script->on_recovery);
    memset(script, 0, sizeof *script);
}

static int compare_actions(const void *a, const void *b)
{
    const struct emu_action *x = a, *y = b;
    if (x->at_ns != y->at_ns)
        return x->at_ns < y->at_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The launcher's action for a fault kind it can carry out; false for the others. */
static bool action_kind_of(enum fault_kind kind, enum emu_action_kind *out)
{
    switch (kind) {
    case FAULT_KILL:
        *out = EMU_ACTION_KILL;
        return true;
    case FAULT_HANG:
        *out = EMU_ACTION_HANG;
        return true;
    case FAULT_RESUME:
        *out = EMU_ACTION_RESUME;
        return true;
    case FAULT_LINK_OFF:
        *out = EMU_ACTION_LINK_OFF;
        return true;
    case FAULT_LINK_ON:
        *out = EMU_ACTION_LINK_ON;
        return true;
    case FAULT_REBOOT:
        *out = EMU_ACTION_REBOOT;
        return true;
    case FAULT_RESTART:
        *out = EMU_ACTION_RESTART;
        return true;
    case FAULT_JOIN:
        *out = EMU_ACTION_JOIN;
        return true;
    case FAULT_APPKILL:
        *out = EMU_ACTION_APPKILL;
        return true;
    case FAULT_LEAVE:
        *out = EMU_ACTION_LEAVE;
        return true;
    case FAULT_PING:
        *out = EMU_ACTION_PING_ALL;
        return true;
    default:
        return false;
    }
}

void emu_action_undo(const struct emu_action *action, uint64_t hold_ns, uint64_t at_ns,
                     struct emu_action *undo)
{
    *undo = *action;
    undo->kind = action->kind == EMU_ACTION_HANG ? EMU_ACTION_RESUME : EMU_ACTION_LINK_ON;
    undo->at_ns = at_ns;
    undo->iteration = 0;
    undo->at_recovery = false;
    undo->hold_ns = 0;
    char described[EMU_ACTION_TEXT_MAX], hold[CLI_TIME_TEXT_MAX];
    emu_action_describe(undo, described, sizeof described);
    char label[EMU_ACTION_TEXT_MAX + 56];
    snprintf(label, sizeof label, "%s (after %s)", described, cli_format_time(hold_ns, hold));
    emu_action_set_text(undo, label);
}

/*
 * Adds action, and its undo "for D" later when hold_ns is not 0; an action
 * timed by iteration or recovery keeps its hold, undone once it has fired.
 */
static bool add_with_undo(struct emu_script *script, const struct emu_action *action,
                          uint64_t hold_ns)
{
    if (action->iteration != 0 || action->at_recovery) {
        struct emu_action held = *action;
        held.hold_ns = hold_ns;
        return add_action(script, &held);
    }
    if (!add_action(script, action))
        return false;
    if (hold_ns == 0)
        return true;
    struct emu_action undo;
    emu_action_undo(action, hold_ns, action->at_ns + hold_ns, &undo);
    return add_action(script, &undo);
}

/* Whose progress (or recovery) an action timed by the job waits for (see
 * emu_inject.h). */
static uint32_t watched(const struct emu_action *action)
{
    bool brings_back = action->kind == EMU_ACTION_RESUME ||
                       action->kind == EMU_ACTION_RESTART || action->kind == EMU_ACTION_JOIN;
    bool nobody = action->at_recovery && action->kind == EMU_ACTION_PING_ALL;
    return brings_back || nobody ? EMU_WATCH_JOB : action->node;
}

unsigned emu_inject_actions(const struct fault *item, const struct torus_geometry *geometry,
                            struct emu_action out[EMU_INJECT_ACTIONS_MAX])
{
    struct emu_action action;
    memset(&action, 0, sizeof action);
    if (!action_kind_of(item->kind, &action.kind))
        return 0;
    action.at_ns = item->time_ns;
    action.iteration = item->iteration;
    action.at_recovery = item->at_recovery;
    action.node = item->node;
    action.watch = watched(&action);
    bool link = item->kind == FAULT_LINK_OFF || item->kind == FAULT_LINK_ON;
    if (!link || item->link != FAULT_LINK_PAIR) {
        action.link = link ? item->link : 0;
        out[0] = action;
        return 1;
    }
    /* Every cable between the two (two on a ring of two nodes). */
    unsigned count = 0;
    for (unsigned l = 0; l < torus_geometry_link_count(geometry); l++) {
        if (torus_geometry_neighbour(geometry, item->node, l) == item->other &&
            count < EMU_INJECT_ACTIONS_MAX) {
            action.link = l;
            out[count++] = action;
        }
    }
    return count;
}

/* The schedule of a script whose groups and cuts are spelled out. */
static bool schedule_expanded(const struct fault_script *faults,
                              const struct torus_geometry *geometry, struct emu_script *script,
                              char *error, size_t capacity);

bool emu_inject_schedule(const struct fault_script *faults, const struct torus_geometry *geometry,
                         struct emu_script *script, char *error, size_t capacity)
{
    memset(script, 0, sizeof *script);
    if (faults->count == 0) {
        snprintf(error, capacity, "%s", EMU_INJECT_EMPTY);
        return false;
    }
    struct fault_script expanded;
    if (!fault_script_check_torus(faults, geometry, error, capacity) ||
        !fault_script_expand(faults, geometry, &expanded, error, capacity))
        return false;
    bool ok = schedule_expanded(&expanded, geometry, script, error, capacity);
    fault_script_free(&expanded);
    return ok;
}

static bool schedule_expanded(const struct fault_script *faults,
                              const struct torus_geometry *geometry, struct emu_script *script,
                              char *error, size_t capacity)
{
    for (size_t i = 0; i < faults->count; i++) {
        const struct fault *f = &faults->items[i];
        char text[FAULT_TEXT_MAX];
        fault_format(f, text, sizeof text);
        struct emu_action actions[EMU_INJECT_ACTIONS_MAX];
        unsigned count = emu_inject_actions(f, geometry, actions);
        if (count == 0) {
            snprintf(error, capacity, "'%s': the launcher cannot inject %s (expected kill, hang, "
                                      "resume, link, reboot, restart, join, appkill, leave, "
                                      "cut or ping)",
                     text, fault_kind_name(f->kind));
            emu_script_free(script);
            return false;
        }
        bool ok = true;
        for (unsigned a = 0; a < count && ok; a++) {
            emu_action_set_text(&actions[a], text);
            ok = add_with_undo(script, &actions[a], f->duration_ns);
        }
        if (!ok) {
            snprintf(error, capacity, "'%s': too many items (expected at most %u)", text,
                     (unsigned)EMU_INJECT_MAX_ACTIONS);
            emu_script_free(script);
            return false;
        }
    }
    qsort(script->actions, script->count, sizeof *script->actions, compare_actions);
    return true;
}

bool emu_inject_parse(const char *text, const struct torus_geometry *geometry,
                      struct emu_script *script, char *error, size_t capacity)
{
    struct fault_script faults;
    memset(script, 0, sizeof *script);
    if (!fault_script_parse(text, &faults, error, capacity))
        return false;
    bool ok = emu_inject_schedule(&faults, geometry, script, error, capacity);
    fault_script_free(&faults);
    return ok;
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
    case EMU_INJECT_LEFT:
        return "gone (it left)";
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
        if (state != EMU_INJECT_KILLED && state != EMU_INJECT_LEFT)
            return refuse(error, capacity, "node %u is %s (expected a killed node)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_RUNNING;
        return true;
    case EMU_ACTION_APPKILL:
        /* The runtime goes on: the node stays running (out of the view). */
        if (state != EMU_INJECT_RUNNING)
            return refuse(error, capacity, "node %u is %s (expected a running node)",
                          (unsigned)n, state_text(state));
        return true;
    case EMU_ACTION_PING_ALL:
        return true; /* a measurement: every node as it is */
    case EMU_ACTION_LEAVE:
        if (state != EMU_INJECT_RUNNING)
            return refuse(error, capacity, "node %u is %s (expected a running node)",
                          (unsigned)n, state_text(state));
        world->state[n] = EMU_INJECT_LEFT;
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
