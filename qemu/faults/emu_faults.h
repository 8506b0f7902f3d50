/*
 * A fault run of tori-emu (--inject, --chaos, --demo): the part of a run
 * between "every node is ready" and shutdown.
 *
 *  1. L, the one-hop latency, is measured with pings (qemu/faults/emu_latency.h)
 *     and O_cp on the launcher's CPU (qemu/faults/emu_model.h); then every node is
 *     told `start`: times in the script count from here.
 *  2. Script actions are done at their times; chaos faults once the torus
 *     has settled after the previous one.  Faults done before the torus
 *     settled form one group.
 *  3. A group has settled when no membership event (view, failure-detected,
 *     stable, joined, expelled, partitioned, reformed, started) came for the
 *     quiet period, no node is booting, every member that crashed has been
 *     detected (or 8 detect timeouts passed) and, when the last check found
 *     no view anywhere and a side has a majority again, a view was
 *     re-formed; or, failing that, at the settle timeout (longer by the
 *     re-forming silence while a re-formed view is awaited).  Then the
 *     agreement check (qemu/faults/emu_agree.h) asks every live node `view`
 *     and compares the answers with the expected member set: every started
 *     node minus the killed and the hung, plus the restarted, rebooted,
 *     resumed and joined ones (who must have rejoined by then), narrowed to
 *     the torus's sides (qemu/faults/emu_sides.h): the majority side under
 *     the primary policy (none: no view anywhere), each side its own view
 *     under every-side.  A cut the torus routes around changes nothing.
 *  4. Each group's records go to <out>/faults.jsonl (and stdout under
 *     --json); the closing table and a summary record end the run.
 */
#ifndef QEMU_FAULTS_EMU_FAULTS_H
#define QEMU_FAULTS_EMU_FAULTS_H

#include <stdbool.h>

#include "qemu/launcher/emu_node.h"
#include "qemu/launcher/emu_options.h"
#include "tools/event_line.h"

#include "qemu/faults/emu_chaos.h"
#include "qemu/launcher/emu_run.h"

/*
 * The fault run as the launcher's hooks (emu_run.h): tori-emu passes them
 * to emu_run when emu_faults_wanted.  The launcher never calls into this
 * room; these hooks are how a fault run takes part in a run.
 */
extern const struct emu_hooks emu_faults_hooks;

/* True when the options ask for a fault run. */
bool emu_faults_wanted(const struct emu_options *options);

/*
 * The fault options' syntax, before anything starts: the script (not yet
 * against the torus) and the chaos spec (into *spec).  False with a
 * one-line reason ("--inject: 'kil 3 at 2s': ...") in error.
 */
bool emu_faults_check_options(const struct emu_options *options, struct emu_chaos_spec *spec,
                              char *error, size_t capacity);

/*
 * Reads the script or chaos spec, checks it against this torus (nodes,
 * spares, boards, links) and prepares the run.  Called before anything
 * starts; false (with the one-line error printed) on a bad script.
 */
bool emu_faults_prepare(struct emu *emu);

/* Runs steps 1-4; false when it could not run (a node failed, interrupted). */
bool emu_faults_run(struct emu *emu);

/* Every node event, from emu_run. */
void emu_faults_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line);

/* A node became ready after the job started (before it is told `start`). */
void emu_faults_on_ready(struct emu *emu, struct emu_node *node);

/* Number of failed agreement checks so far. */
unsigned emu_faults_failed_checks(const struct emu *emu);

void emu_faults_release(struct emu *emu);

#endif /* QEMU_FAULTS_EMU_FAULTS_H */
