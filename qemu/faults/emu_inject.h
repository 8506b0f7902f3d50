/*
 * Fault injection (tori-emu --inject, --inject-file): the script, in the one
 * fault language of the host tools (tools/fault.h), turned into the
 * launcher's schedule of actions, and the checks that it makes sense on a
 * given torus, all before anything starts.
 *
 * The launcher carries out kill (SIGKILL of the node's process, QEMU or
 * host), hang [for D] (QMP stop / SIGSTOP; "for D" adds the resume), resume
 * (QMP cont / SIGCONT), link ... off|on [for D], reboot (QMP system_reset,
 * QEMU nodes only), restart (a killed node, or one that left, same id, new
 * incarnation), join (a spare, not started at first), appkill and leave
 * (console commands); it refuses suspect, block,
 * partition and heal in one line.  T counts from the moment the job starts.
 *
 * "at iteration N" (tori-emu --app) fires when the named node reports
 * app-progress at iteration N or later: "kill 3 at iteration 100" kills 3
 * when 3 reaches 100.  A fault that brings a stopped node back (resume,
 * restart, join) cannot wait for that node: it fires when any compute node
 * reports N.  Its "for D" undo is scheduled D after it fires.  Such faults
 * stay out of the time-ordered schedule (script->on_progress, in script
 * order); whether their node is in the right state is checked when they
 * fire (a fault that cannot happen then is recorded as not done).
 *
 * "at recovery [+ D]" fires D after the named node begins its first
 * recovery, as its first app-rebuild event says (node/tori.c: it called
 * tori_comm_rebuild or tori_comm_shrink); resume, restart and join at the
 * first node's, and ping all too.  "kill 3 at iteration 100; kill 5 at
 * recovery" kills 5 inside the recovery from 3's crash.  These wait in
 * script->on_recovery (script order) and are checked as they fire, as
 * those timed by iteration are.
 *
 * A cable is cut at both ends: the node's link DIR and the neighbour's
 * opposite link, so no frame crosses it either way (emu_fault.h); a link
 * named by its two ends ("link 0 1 off") is every cable between them.  A
 * cut belongs to the cable: a node that (re)starts while one of its cables
 * is cut gets that end cut again as soon as it is ready.
 *
 * Every error is one line naming the item: "'kil 3 at 2s': unknown action
 * 'kil' (expected ...)".
 */
#ifndef QEMU_FAULTS_EMU_INJECT_H
#define QEMU_FAULTS_EMU_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"
#include "tools/fault.h"

enum emu_action_kind {
    EMU_ACTION_KILL,
    EMU_ACTION_HANG,
    EMU_ACTION_RESUME,
    EMU_ACTION_LINK_OFF,
    EMU_ACTION_LINK_ON,
    EMU_ACTION_REBOOT,
    EMU_ACTION_RESTART,
    EMU_ACTION_JOIN,
    EMU_ACTION_APPKILL, /* `appkill` on the node's console: its application stops dead */
    EMU_ACTION_LEAVE,   /* `leave` on the node's console: out of the view, then it halts */
    EMU_ACTION_PING_ALL, /* `ping all` on every running node (a measurement; node unused) */
};

/* Why a script without items is refused. */
#define EMU_INJECT_EMPTY \
    "the script is empty (expected items like 'kill 3 at 2s', separated by ';')"

/* Longest script item kept for messages and records. */
#define EMU_ACTION_TEXT_MAX 64
/* Most items in one script (after "for D" expansion). */
#define EMU_INJECT_MAX_ACTIONS 4096

/* emu_action.watch of a fault timed by the job's progress (any compute node). */
#define EMU_WATCH_JOB UINT32_MAX

struct emu_action {
    uint64_t at_ns;       /* after the job started (0 when timed by iteration;
                             at_recovery: after the recovery began) */
    uint32_t iteration;   /* "at iteration N": fires at N; 0: at at_ns */
    uint32_t watch;       /* by iteration: whose progress, a node or EMU_WATCH_JOB */
    bool at_recovery;     /* "at recovery [+ at_ns]": fires when watch's recovery begins */
    uint64_t hold_ns;     /* by iteration or recovery: its "for D", undone D after it fires */
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
    struct emu_action *on_progress; /* timed by iteration, in script order */
    unsigned on_progress_count;
    unsigned on_progress_capacity;
    struct emu_action *on_recovery; /* at recovery, in script order */
    unsigned on_recovery_count;
    unsigned on_recovery_capacity;
};

/* The undo of action ("for D": a resume, a link on) due at at_ns, labelled
 * "resume 3 (after 100ms)". */
void emu_action_undo(const struct emu_action *action, uint64_t hold_ns, uint64_t at_ns,
                     struct emu_action *undo);

/* "kill", "hang", "resume", "link", "reboot", "restart", "join". */
const char *emu_action_name(enum emu_action_kind kind);

/*
 * Describes an action in the script's own words ("link 6 x+ off"), without
 * its time, into text (EMU_ACTION_TEXT_MAX bytes).
 */
void emu_action_describe(const struct emu_action *action, char *text, size_t capacity);

/* Sets the action's label (cut to fit). */
void emu_action_set_text(struct emu_action *action, const char *text);

/* Most actions one item becomes (a link pair on a ring of two: its two cables). */
#define EMU_INJECT_ACTIONS_MAX 2

/*
 * The launcher's actions for one item, without the undo of its "for D"
 * (a link pair: one per cable between the two); 0 when the launcher cannot
 * carry out its kind.  Labels are left empty.
 */
unsigned emu_inject_actions(const struct fault *item, const struct torus_geometry *geometry,
                            struct emu_action out[EMU_INJECT_ACTIONS_MAX]);

/*
 * The schedule of a parsed fault script on a torus (allocated;
 * emu_script_free releases it), sorted by time: nodes and links checked
 * against the torus, kinds the launcher cannot carry out refused, "for D"
 * undos added, a link pair split into its cables.  An empty script is
 * refused.  False with a one-line reason in error.
 */
bool emu_inject_schedule(const struct fault_script *faults, const struct torus_geometry *geometry,
                         struct emu_script *script, char *error, size_t capacity);

/* fault_script_parse, then emu_inject_schedule. */
bool emu_inject_parse(const char *text, const struct torus_geometry *geometry,
                      struct emu_script *script, char *error, size_t capacity);

void emu_script_free(struct emu_script *script);

/* What a node is, as far as faults go, at one moment of a run. */
enum emu_inject_state {
    EMU_INJECT_NOT_STARTED, /* a spare nobody has joined yet */
    EMU_INJECT_RUNNING,
    EMU_INJECT_HUNG,
    EMU_INJECT_KILLED,
    EMU_INJECT_LEFT, /* it left (`leave`) and halted: a restart boots it again */
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
 * Runs the whole time-ordered script through a fresh copy of world's
 * initial state; the first action that cannot happen makes it fail with
 * "'ITEM': reason".  Faults timed by iteration are checked as they fire.
 */
bool emu_inject_check(const struct emu_script *script, const struct torus_geometry *geometry,
                      uint32_t spares, const bool *qemu, char *error, size_t capacity);

#endif /* QEMU_FAULTS_EMU_INJECT_H */
