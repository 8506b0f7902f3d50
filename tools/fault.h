/*
 * The one fault language of the host tools: tori-sim --inject, tori-emu
 * --inject and --inject-file, and the scripts tori-sim --emit-script writes,
 * so that a simulator run can be replayed on QEMU and host tori.
 *
 *   SCRIPT := ITEM ((';' | newline) ITEM)*      ('#' starts a comment to the
 *                                                 end of its line)
 *   ITEM   := kill N at T                  node N crashes
 *           | hang N at T [for D]          node N stops; with "for D" it
 *                                          resumes at T+D
 *           | resume N at T                a hung node goes on
 *           | link A B off|on at T [for D] the link between torus neighbours
 *                                          A and B fails / returns (every
 *                                          cable between them); "for D" (off
 *                                          only) mends it at T+D
 *           | link N DIR off|on at T [for D]  the one cable at node N's link
 *                                          DIR (x+, x-, y+ ...)
 *           | reboot N at T                node N resets (a QEMU node)
 *           | restart N at T               a killed node boots again
 *           | join N at T                  a spare (not started) boots and
 *                                          joins
 *           | suspect A B at T             node A's application suspects B
 *           | block A B at T for D         nothing gets from A to B or back
 *                                          for D (any two nodes)
 *           | partition x<K at T           nodes with coordinate x < K (or
 *                                          id<K; x y z u v w) are cut off
 *                                          from the others
 *           | heal at T                    the partition ends
 *           | appkill N at T               node N's application stops dead while
 *                                          its runtime serves on (a process
 *                                          fault, lib/recovery.h)
 *           | leave N at T                 node N leaves gracefully: it asks
 *                                          the root to remove it, then halts
 *                                          (no fault: nothing is detected)
 *           | cut D=A|B [except K] at T [for D]
 *                                          every cable across the plane
 *                                          between coordinates A and B = A+1
 *                                          (around the ring) of dimension D
 *                                          (x y z u v w): the links D+ of the
 *                                          nodes at D=A, but the first K of
 *                                          them in node order
 *           | ping all at T                every running node pings every
 *                                          other (a measurement, no fault):
 *                                          the run fails if a pair of running
 *                                          nodes does not answer
 *   N      := a node number, or (kill hang resume reboot restart join
 *             appkill leave) a group: predicates on coordinates joined by
 *             ',' (all must hold), each x|y|z|u|v|w|id then < <= = >= >
 *             then a number: "kill x>=4,y<2 at 30s" is every such node.
 *   T, D   := a time as tools/cli.h reads it: 250us, 1.5ms, 2s, 0
 *   Any "at T" may be "at iteration N" (N >= 1): the fault fires when the
 *   job's application reaches iteration N (tori-emu --app; see
 *   qemu/faults/emu_inject.h for whose progress counts), and its "for D"
 *   counts from the moment it fires.
 *   Or "at recovery [+ D]": the fault fires D (default 0) after the job's
 *   first recovery begins at the node it names, its first rebuild or
 *   shrink (tori-emu: the node's first app-rebuild event; tori-sim: its
 *   model application starts rebuilding); restart, join, resume,
 *   partition, heal and ping, whose node runs nothing then or which name
 *   none, fire at the first rank's.  A crash inside a recovery: "kill 3 at
 *   iteration 100; kill 5 at recovery".  Needs a job whose communicators
 *   recover (--app, --comm-mode other than abort).
 *
 * Parsed once into a list of struct fault, in script order; each injector
 * then refuses, with one line, the kinds it cannot carry out (the simulator
 * has no reboot, no resume and no application to time a fault by, the
 * launcher no suspect, block, partition or heal) and checks the states (a restart needs a killed node...).
 * fault_format prints an item back so that parsing it gives the same item.
 * Groups and cuts name nodes by the torus: fault_script_check_torus checks
 * them against it and fault_script_expand turns them into one item per
 * node (or per cable, `link N D+ off`) before an injector uses the script.
 */
#ifndef TOOLS_FAULT_H
#define TOOLS_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "net/torus/geometry.h"

enum fault_kind {
    FAULT_KILL = 1,
    FAULT_HANG,
    FAULT_RESUME,
    FAULT_LINK_OFF,
    FAULT_LINK_ON,
    FAULT_REBOOT,
    FAULT_RESTART,
    FAULT_JOIN,
    FAULT_SUSPECT,
    FAULT_BLOCK,
    FAULT_PARTITION,
    FAULT_HEAL,
    FAULT_APPKILL,
    FAULT_LEAVE,
    FAULT_CUT,
    FAULT_PING,
    FAULT_KIND_LIMIT
};

/* struct fault's link for a link named by its two ends ("link A B off"). */
#define FAULT_LINK_PAIR 0xffu

/* Most predicates in one group ("x>=4,y<2,z=1" has 3). */
#define FAULT_SELECT_MAX 4

enum fault_compare { FAULT_LT = 1, FAULT_LE, FAULT_EQ, FAULT_GE, FAULT_GT };

/* One predicate of a group: coordinate dim (-1: the node id) op value. */
struct fault_predicate {
    int dim;
    enum fault_compare op;
    uint32_t value;
};

struct fault {
    enum fault_kind kind;
    uint64_t time_ns;     /* "at T" (0 when timed by iteration) */
    uint32_t iteration;   /* "at iteration N": N >= 1; 0: timed by time_ns */
    bool at_recovery;     /* "at recovery [+ D]": time_ns is D, counted from then */
    uint32_t node;        /* the node; SUSPECT: the suspecting one; LINK, BLOCK: A */
    uint32_t other;       /* SUSPECT: the suspected node; BLOCK and a LINK pair: B */
    unsigned link;        /* LINK: the direction at node, or FAULT_LINK_PAIR */
    uint64_t duration_ns; /* "for D": HANG and LINK_OFF (0: none), BLOCK */
    int dim;              /* PARTITION: coordinate dimension, -1 for ids; CUT: its dimension */
    uint32_t below;       /* PARTITION: one side is coordinate (or id) < below */
    unsigned select_count; /* a group (node unused): the nodes that satisfy every one */
    struct fault_predicate select[FAULT_SELECT_MAX];
    uint32_t plane;       /* CUT: between coordinates plane and plane_next */
    uint32_t plane_next;
    uint32_t keep;        /* CUT: how many of its cables stay ("except K") */
};

/* Longest item fault_format writes (and room for a message quoting one). */
#define FAULT_TEXT_MAX 64

/* A group of nodes by coordinate, as a partition's cut: "x<2" (any of
 * x y z u v w) or "id<5"; dim -1 for ids.  The whole text must be the cut;
 * its range is checked against a torus by the caller. */
bool fault_parse_cut(const char *text, int *dim, uint32_t *below);

/* Timed by the job (at iteration N, at recovery), not by the clock: the
 * injectors fire it when the application gets there. */
bool fault_timed_by_job(const struct fault *item);

/* "kill", "hang", ... "heal" ("link" for both link kinds). */
const char *fault_kind_name(enum fault_kind kind);

/* The item as text that parses back to it ("link 6 x+ off at 1s for 2s",
 * "kill 3 at iteration 100", "kill 5 at recovery + 2ms"). */
void fault_format(const struct fault *item, char *out, size_t capacity);

/* The same item (every field that its kind uses). */
bool fault_equal(const struct fault *a, const struct fault *b);

struct fault_script {
    struct fault *items; /* in script order */
    size_t count;
    size_t capacity;
};

/*
 * Parses script text (syntax only: node numbers are checked against a torus
 * by fault_script_check_torus).  On failure returns false with one line,
 * "'ITEM': what is wrong (expected ...)", in error and an empty script.
 * An empty script is no error here (the tools say whether they need items).
 */
bool fault_script_parse(const char *text, struct fault_script *script, char *error,
                        size_t capacity);

/*
 * Reads a script file whole into *text (malloc'd, caller frees); false with
 * "FILE: reason" in error when it cannot be read (or holds a NUL byte).
 */
bool fault_script_read_file(const char *path, char **text, char *error, size_t capacity);

void fault_script_free(struct fault_script *script);

/* Appends one item (false when out of memory). */
bool fault_script_add(struct fault_script *script, const struct fault *item);

/*
 * Checks every item against a torus: nodes that exist, a link's two ends
 * torus neighbours (or its direction one the node has), a partition's
 * dimension within the torus and 0 < K < size, a group's dimensions within
 * the torus and at least one node in it, a cut's two planes neighbours and
 * K below its cable count.  One line naming the item.
 */
bool fault_script_check_torus(const struct fault_script *script,
                              const struct torus_geometry *geometry, char *error,
                              size_t capacity);

/*
 * The script with every group and cut spelled out (checked first with
 * fault_script_check_torus): a group item becomes one item per node of the
 * group, in node order; a cut one `link N D+ off` (with its "for D") per
 * cable it cuts.  Other items are copied.  False with "out of memory".
 */
bool fault_script_expand(const struct fault_script *script, const struct torus_geometry *geometry,
                         struct fault_script *out, char *error, size_t capacity);

/* Writes the script, one item a line (what fault_script_parse reads back). */
bool fault_script_write(FILE *out, const struct fault *items, size_t count);

#endif /* TOOLS_FAULT_H */
