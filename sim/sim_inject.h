/*
 * Scripted faults for the simulator, in the one fault language of the host
 * tools (tools/fault.h): "kill 5 at 1ms; kill 0 at 3ms; restart 5 at 10ms".
 * The simulator carries out kill, hang ... for D, link (a link is a pair of
 * neighbours here: "link N DIR" names the pair at N's link DIR), restart,
 * join (a spare, or a killed node), suspect, block, partition and heal; it
 * refuses reboot, resume and a hang without "for D", in one line.  With
 * --app, "at iteration N" fires when the named node's model application
 * has completed iteration N (restart, join, partition and heal: any rank's),
 * as tori-emu fires it on app-progress; its "for D" counts from then.
 * "at recovery [+ D]" fires D after the named node's model application
 * starts its first rebuild (restart, join, partition, heal and ping: the
 * first rank's), as tori-emu fires it on app-rebuild.
 * Without --app, or past the job's iterations, such an item is refused
 * (and one timed by recovery under --comm-mode abort, by tori-sim).
 */
#ifndef SIM_SIM_INJECT_H
#define SIM_SIM_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"
#include "tools/fault.h"

/*
 * Parses a whole --inject text into script (fault_script_free releases it),
 * checked against the torus: links named by direction become pairs, and a
 * "link ... off at T for D" becomes its off and an on at T+D (timed by
 * iteration, it keeps its "for D").  app_iterations: the job's iterations,
 * 0 without --app.  On failure returns false with a one-line reason.
 */
bool sim_inject_parse(const char *text, const struct torus_geometry *geometry,
                      uint32_t app_iterations, struct fault_script *script, char *error,
                      size_t error_capacity);

/*
 * Refuses, before the run, a script item the run would ignore silently.
 * Replays the items in time order (script order for equal times), nodes
 * below members running at first: kill, hang and suspect need their node
 * running (a hang, not already hung); join needs it down (killed earlier,
 * or a spare that has not joined), since a running node ignores a join.
 * On failure writes "'ITEM': node N is ... (expected ...)" to error.
 * Items timed by iteration, and every item of their nodes, are left to the
 * run, which checks them as they come (one that cannot happen then is
 * reported as not done).
 */
bool sim_inject_check(const struct fault *items, size_t count, uint32_t node_count,
                      uint32_t members, char *error, size_t error_capacity);

#endif /* SIM_SIM_INJECT_H */
