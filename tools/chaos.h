/*
 * The one chaos generator of the host tools: seeded random faults in the
 * one fault language (tools/fault.h), for tori-sim --chaos and tori-emu
 * --chaos.  It decides WHAT happens; each tool decides WHEN it asks (the
 * simulator at times drawn up front in virtual time, the launcher once the
 * torus has settled from the previous fault).
 *
 * One model of what is down: each node up, dead, hung or a spare not
 * started yet, the cut cables, whether a partition is on.  One set of
 * rules:
 *   - a new fault's kind is drawn by weight among the kinds of the mask
 *     (kill 25, restart 20, hang 15, suspect 15, partition 12, link 13,
 *     reboot 12, join 12); when the drawn kind cannot happen now there is
 *     no fault this time;
 *   - a node to kill, hang or reboot is a running one, a third of the time
 *     the lowest-numbered (roots and their successors die, chained);
 *   - at most max(1, members/8) nodes dead or hung at once (none below
 *     four members), at most two cables cut, one partition, a minority side
 *     of at most a quarter;
 *   - every fault is undone after a hold: a hang resumes, a cut link is
 *     mended, a partition heals, a killed node restarts.  With hold_ns set
 *     every hold is that long (the launcher); with hold_ns 0 holds are drawn
 *     in units of unit_ns (hangs 1-3 or 40-80 units, cuts 5-25, partitions
 *     10-70) and killed nodes stay dead until a drawn restart (the
 *     simulator, whose campaign also checks that the dead are expelled);
 *   - kinds outside the mask are never produced: the mask holds what the
 *     injector carries out (chaos_init refuses a mask with a kind whose
 *     undo the tool does not have).
 * Deterministic for a seed (tools/splitmix.h).
 */
#ifndef TOOLS_CHAOS_H
#define TOOLS_CHAOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"
#include "tools/fault.h"

/* The mask bit of a fault kind in struct chaos_config.kinds. */
#define CHAOS_KIND(kind) (1u << (unsigned)(kind))

/* Every kind a new fault can be (the undos are resume, link on, heal, restart). */
#define CHAOS_KINDS_ALL                                                                    \
    (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_RESTART) | CHAOS_KIND(FAULT_HANG) |         \
     CHAOS_KIND(FAULT_SUSPECT) | CHAOS_KIND(FAULT_PARTITION) | CHAOS_KIND(FAULT_LINK_OFF) | \
     CHAOS_KIND(FAULT_REBOOT) | CHAOS_KIND(FAULT_JOIN))

/* Most cables cut at once. */
#define CHAOS_MAX_CUT_CABLES 2u

struct chaos_config {
    const struct torus_geometry *geometry;
    uint32_t members;        /* ids 0..members-1 start as members, the rest as spares */
    uint64_t seed;           /* the generator's first state, as the tool seeds it */
    unsigned kinds;          /* CHAOS_KIND bits: what a new fault may be */
    uint64_t hold_ns;        /* every fault undone after this; 0: drawn holds */
    uint64_t unit_ns;        /* drawn holds: their unit (the simulator's sim_unit_ns) */
    const bool *rebootable;  /* [node_count]: reboot possible (QEMU); NULL: none */
};

enum chaos_node { CHAOS_UP, CHAOS_DEAD, CHAOS_HUNG, CHAOS_SPARE };

struct chaos {
    struct chaos_config config;
    uint64_t random;
    uint32_t count;          /* nodes of the torus */
    uint32_t members;        /* not spares */
    uint32_t down;           /* dead or hung */
    uint32_t cut_cables;
    bool partitioned;
    uint8_t *state;          /* [count]: enum chaos_node */
    uint16_t *cut;           /* [count]: bit L: the cable at link L is cut */
    struct fault *undo;      /* pending undos (time_ns: when due), unordered */
    size_t undo_count;
    size_t undo_capacity;
};

/*
 * Sets the generator up (allocates; chaos_free releases).  False with a
 * one-line reason: a torus of one node, a kind outside CHAOS_KINDS_ALL,
 * restart with a fixed hold (kills are undone by their own restart then),
 * out of memory.
 */
bool chaos_init(struct chaos *chaos, const struct chaos_config *config, char *error,
                size_t capacity);
void chaos_free(struct chaos *chaos);

/*
 * Draws a new fault at now_ns into *fault and applies it to the model;
 * its undo, if it has one, is pending from then on and also copied to
 * *undo (kind 0 when none).  False when the drawn kind cannot happen now.
 */
bool chaos_draw(struct chaos *chaos, uint64_t now_ns, struct fault *fault, struct fault *undo);

/* Takes the earliest pending undo due by now_ns (applied to the model); false when none is. */
bool chaos_take_undo(struct chaos *chaos, uint64_t now_ns, struct fault *undo);

/* When the earliest pending undo is due; UINT64_MAX when none is pending. */
uint64_t chaos_next_undo_ns(const struct chaos *chaos);

/* Some kind of the mask could happen now (a draw may still pick another). */
bool chaos_possible(const struct chaos *chaos);

/* The generator's own random numbers, for the tools' pacing: uniform in [0, bound). */
uint64_t chaos_below(struct chaos *chaos, uint64_t bound);

/* An exponential gap for rate_per_s faults a second on average (at most an hour). */
uint64_t chaos_gap_ns(struct chaos *chaos, double rate_per_s);

#endif /* TOOLS_CHAOS_H */
