/*
 * Fault-injection scripts (tori-emu --inject): parsing, and the checks that
 * a script makes sense on a given torus, all before anything starts.
 *
 *   SCRIPT := ITEM (';' ITEM)*
 *   ITEM   := kill N at T          SIGKILL the node's process (QEMU or host)
 *           | hang N at T [for D]  QMP stop (QEMU) / SIGSTOP (host); with
 *                                  "for D" a resume follows at T+D
 *           | resume N at T        QMP cont / SIGCONT
 *           | link N DIR off at T [for D]   cut the cable at node N's link DIR
 *           | link N DIR on at T   mend it
 *           | reboot N at T        QMP system_reset (QEMU nodes only)
 *           | restart N at T       start a killed node again, same id, new
 *                                  incarnation
 *           | join N at T          start spare N (not started at first)
 *   T, D   := 2s, 1.5s, 250ms, 0 (T counts from the moment the job starts)
 *
 * A cable is cut at both ends: the node's link DIR and the neighbour's
 * opposite link, so no frame crosses it either way (emu_fault.h).  A cut
 * belongs to the cable: a node that (re)starts while one of its cables is
 * cut gets that end cut again as soon as it is ready.
 *
 * Every error is one line naming the item: "'kil 3 at 2s': unknown action
 * 'kil' (expected ...)".
 */
#ifndef QEMU_EMU_INJECT_H
#define QEMU_EMU_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"

enum emu_action_kind {
    EMU_ACTION_KILL,
    EMU_ACTION_HANG,
    EMU_ACTION_RESUME,
    EMU_ACTION_LINK_OFF,
    EMU_ACTION_LINK_ON,
    EMU_ACTION_REBOOT,
    EMU_ACTION_RESTART,
    EMU_ACTION_JOIN,
};

/* Longest script item kept for messages and records. */
#define EMU_ACTION_TEXT_MAX 64
/* Most items in one script (after "for D" expansion). */
#define EMU_INJECT_MAX_ACTIONS 4096

struct emu_action {
    uint64_t at_ns;       /* after the job started */
    enum emu_action_kind kind;
    uint32_t node;
    unsigned link;        /* LINK_OFF / LINK_ON: the direction at node */
    unsigned order;       /* position in the script: equal times keep it */
    char text[EMU_ACTION_TEXT_MAX]; /* "kill 3 at 2s", as written or generated */
};

struct emu_script {
    struct emu_action *actions; /* sorted by (at_ns, order) once parsed */
    unsigned count;
    unsigned capacity;
};

/* "kill", "hang", "resume", "link", "reboot", "restart", "join". */
const char *emu_action_name(enum emu_action_kind kind);

/*
 * Describes an action in the script's own words ("link 6 x+ off"), without
 * its time, into text (EMU_ACTION_TEXT_MAX bytes).
 */
void emu_action_describe(const struct emu_action *action, char *text, size_t capacity);

/* Sets the action's label (cut to fit). */
void emu_action_set_text(struct emu_action *action, const char *text);

/*
 * Parses script text into script (allocated; emu_script_free releases it),
 * sorted by time.  Syntax only: node numbers are not checked against a torus
 * here (emu_inject_check does).  False with a one-line reason in error.
 */
bool emu_inject_parse(const char *text, struct emu_script *script, char *error,
                      size_t capacity);

void emu_script_free(struct emu_script *script);

/* What a node is, as far as faults go, at one moment of a run. */
enum emu_inject_state {
    EMU_INJECT_NOT_STARTED, /* a spare nobody has joined yet */
    EMU_INJECT_RUNNING,
    EMU_INJECT_HUNG,
    EMU_INJECT_KILLED,
};

/*
 * The torus as faults see it: shape, which ranks are spares and QEMU
 * nodes, and each node's state and cut links.  Used to check a script
 * before the run, and by the chaos generator and the run itself to keep
 * track.  Allocated by emu_inject_world_init.
 */
struct emu_inject_world {
    const struct torus_geometry *geometry;
    uint32_t count;
    uint32_t spares;            /* ranks >= count - spares */
    bool *qemu;                 /* [count]: a QEMU node (reboot possible) */
    enum emu_inject_state *state; /* [count] */
    uint16_t *cut;              /* [count]: bit L: link L's cable is cut */
};

/* qemu may be NULL (no QEMU node).  False when out of memory. */
bool emu_inject_world_init(struct emu_inject_world *world,
                           const struct torus_geometry *geometry, uint32_t spares,
                           const bool *qemu);
void emu_inject_world_free(struct emu_inject_world *world);

/*
 * Checks that action can happen in world now and, if so, applies it to
 * world.  False with a one-line reason (without the item text) otherwise:
 * node out of range, restart of a node that was not killed, join of a
 * non-spare, a link the node does not have, reboot of a host node...
 */
bool emu_inject_apply(struct emu_inject_world *world, const struct emu_action *action,
                      char *error, size_t capacity);

/*
 * Runs the whole script through a fresh copy of world's initial state;
 * the first action that cannot happen makes it fail with
 * "'ITEM': reason".
 */
bool emu_inject_check(const struct emu_script *script, const struct torus_geometry *geometry,
                      uint32_t spares, const bool *qemu, char *error, size_t capacity);

#endif /* QEMU_EMU_INJECT_H */
