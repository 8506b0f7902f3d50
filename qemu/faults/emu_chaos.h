/*
 * Random faults (tori-emu --chaos), reproducible from a seed.
 *
 *   --chaos seed=S,rate=R,kinds=kill,hang,link,reboot[,count=N][,duration=D][,hold=D]
 *
 * What happens is the one chaos generator's (tools/chaos.h, shared with
 * tori-sim --chaos): its node picks and budgets (at most max(1, members/8)
 * nodes down at once, at most two cables cut).  When is the launcher's:
 * new faults arrive at R per second on average (exponential gaps), but
 * only once the torus has settled after the previous one, so that every
 * fault gets its own agreement check.  Each fault is undone after `hold`:
 * a killed node restarts, a hung node resumes, a cut link is mended (a
 * reboot and a join undo themselves).  The undo is a fault of its own in
 * the results.  The campaign stops starting new faults after `count` of
 * them or after `duration`, whichever comes first, then runs the pending
 * undos, so that it ends on a whole torus.
 */
#ifndef QEMU_FAULTS_EMU_CHAOS_H
#define QEMU_FAULTS_EMU_CHAOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qemu/faults/emu_inject.h"
#include "tools/chaos.h"

struct emu_chaos_spec {
    uint64_t seed;
    double rate;          /* new faults per second */
    unsigned kinds;       /* CHAOS_KIND bits of kill, hang, link off, reboot, join */
    uint32_t count;       /* new faults to start; 0: no limit */
    uint64_t duration_ns; /* stop starting new ones after this; 0: no limit */
    uint64_t hold_ns;     /* how long a fault lasts before its undo; 0: default */
    unsigned given;       /* EMU_CHAOS_GIVEN bits: the keys the text gave */
};

/* The keys of the spec, as bits of emu_chaos_spec.given. */
#define EMU_CHAOS_GIVEN_SEED (1u << 0)
#define EMU_CHAOS_GIVEN_RATE (1u << 1)
#define EMU_CHAOS_GIVEN_KINDS (1u << 2)
#define EMU_CHAOS_GIVEN_COUNT (1u << 3)
#define EMU_CHAOS_GIVEN_DURATION (1u << 4)
#define EMU_CHAOS_GIVEN_HOLD (1u << 5)

/* Parses the spec (without the option name); false with a one-line reason. */
bool emu_chaos_parse(const char *text, struct emu_chaos_spec *spec, char *error,
                     size_t capacity);

struct emu_chaos {
    struct emu_chaos_spec spec;
    struct chaos generator;
    uint64_t begin_ns;
    uint64_t next_ns;     /* earliest start of the next new fault */
    uint32_t started;     /* new faults so far */
    bool stuck;           /* no kind can happen and nothing is left to undo */
    unsigned order;
    struct emu_action queue[EMU_INJECT_ACTIONS_MAX]; /* the rest of the last fault's actions */
    unsigned queued;
};

/*
 * Starts the campaign at now_ns on a torus whose last `spares` ranks are
 * spares (qemu[rank]: a QEMU node, which can reboot; NULL: none);
 * default_hold_ns when the spec has none.  False with a one-line reason.
 */
bool emu_chaos_init(struct emu_chaos *chaos, const struct emu_chaos_spec *spec,
                    const struct torus_geometry *geometry, uint32_t spares, const bool *qemu,
                    uint64_t now_ns, uint64_t default_hold_ns, char *error, size_t capacity);
void emu_chaos_free(struct emu_chaos *chaos);

/*
 * The action to inject now (the torus being settled); false when nothing is
 * due yet (or can be done).  The caller applies it to its world.
 */
bool emu_chaos_next(struct emu_chaos *chaos, uint64_t now_ns, struct emu_action *out);

/* When emu_chaos_next may next have something; UINT64_MAX when never. */
uint64_t emu_chaos_next_due(const struct emu_chaos *chaos, uint64_t now_ns);

/* No new fault will start (or can) and no undo is pending. */
bool emu_chaos_done(const struct emu_chaos *chaos, uint64_t now_ns);

#endif /* QEMU_FAULTS_EMU_CHAOS_H */
