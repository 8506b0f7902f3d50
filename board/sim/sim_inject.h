/*
 * Scripted faults for the simulator, parsed from --inject text such as
 *   "kill 5 at 1ms; kill 0 at 3ms; join 5 at 10ms"
 * Kinds (times as everywhere, qemu/cli.h: 1ms, 1.5ms, 250us, 2s, 0):
 *   kill N at T            node N crashes
 *   join N at T            node N (dead or spare) boots and joins
 *   hang N at T for D      node N stops for D, then resumes
 *   suspect D N at T       node D's application suspects node N
 *   link A B off|on at T   the link between neighbours A and B fails/returns
 *   block A B at T for D   nothing gets from A to B or back for D (any two
 *                          nodes: a pair the routing cannot join)
 *   partition x<K at T     nodes with coordinate x < K (or id<K; x y z u v w)
 *                          are cut off from the others
 *   heal at T              the partition ends
 */
#ifndef BOARD_SIM_SIM_INJECT_H
#define BOARD_SIM_SIM_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"

enum sim_inject_kind {
    SIM_INJECT_KILL = 1,
    SIM_INJECT_JOIN,
    SIM_INJECT_HANG,
    SIM_INJECT_SUSPECT,
    SIM_INJECT_LINK_OFF,
    SIM_INJECT_LINK_ON,
    SIM_INJECT_PARTITION,
    SIM_INJECT_HEAL,
    SIM_INJECT_BLOCK,
};

struct sim_injection {
    uint8_t kind;
    uint64_t time_ns;
    uint32_t node;        /* KILL, JOIN, HANG; SUSPECT: the suspecting node; LINK, BLOCK: A */
    uint32_t other;       /* SUSPECT: the suspected node; LINK, BLOCK: B */
    uint64_t duration_ns; /* HANG, BLOCK */
    int dim;              /* PARTITION: coordinate dimension, -1 for ids */
    uint32_t below;       /* PARTITION: side 1 is coordinate (or id) < below */
};

/*
 * Parses a whole --inject text.  On success *items (malloc'd, caller frees)
 * and *count are set; on failure returns false with a one-line reason.
 */
bool sim_inject_parse(const char *text, const struct torus_geometry *geometry,
                      struct sim_injection **items, size_t *count, char *error,
                      size_t error_capacity);

/* One injection as text, the way it parses ("kill 5 at 1ms"). */
void sim_inject_format(const struct sim_injection *item, char *out, size_t capacity);

/*
 * Refuses, before the run, a script item the run would ignore silently.
 * Replays the items in time order (script order for equal times), nodes
 * below members running at first: kill, hang and suspect need their node
 * running (a hang, not already hung); join needs it down (killed earlier,
 * or a spare that has not joined), since a running node ignores a join.
 * On failure writes "'ITEM': node N is ... (expected ...)" to error.
 */
bool sim_inject_check(const struct sim_injection *items, size_t count, uint32_t node_count,
                      uint32_t members, char *error, size_t error_capacity);

#endif /* BOARD_SIM_SIM_INJECT_H */
