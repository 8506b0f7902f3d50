/*
 * A job run of tori-emu (--app NAME): the launcher writes the job block
 * (<out>/job.bin, job_encode of the options' job), every node loads it, and
 * the application starts on `start`.  This part follows the application's
 * events on every compute node (app-start, app-progress, app-result,
 * app-error, starved, app-abort, app-adopted, comm), waits until every
 * rank (compute node, or spare that adopted a failed rank) reported its
 * app-result or app-abort, or is down (killed) or out (expelled while its
 * application ran: the others went on without it), owing none, and judges
 * the run: it passes only when every live rank reported ok=true with one
 * digest; it is aborted (exit EMU_EXIT_ABORTED) when every live rank
 * reported app-abort.  Each `comm` line is checked against the others'
 * for the same communicator and epoch (one rank map, ranks distinct).
 *
 * The wait ends early, with a one-line reason, when a rank panicked; and
 * at the app timeout (--app-timeout, else 30 s + (20 ms + 2 ms per node)
 * per iteration), naming the ranks that did not report.
 */
#ifndef QEMU_LAUNCHER_EMU_APP_H
#define QEMU_LAUNCHER_EMU_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qemu/launcher/emu_node.h"
#include "tools/event_line.h"

struct emu;

/* How long the job may take from its start. */
uint64_t emu_app_timeout_ns(const struct emu *emu);

/* Writes <out>/job.bin; false after a one-line error. */
bool emu_app_write_job(struct emu *emu, char *path, size_t capacity);

/* An application event of node (any event line: others are ignored). */
void emu_app_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line);

/*
 * True when the job is over: every compute node reported, or one can no
 * longer report, or the app timeout passed.  Only asks: a fault run goes on
 * to check the torus after a job that cannot finish.
 */
bool emu_app_job_over(const struct emu *emu);

/*
 * emu_app_job_over, and when the job cannot finish, the run fails with a
 * one-line reason (said once).
 */
bool emu_app_over(struct emu *emu);

/*
 * The communicators' part of the agreement check after a fault (live: the
 * expected member set, one entry per node).  Once a WORLD rank is out of
 * it, every live rank whose application still runs must hold a `comm` line
 * for WORLD (each reports one when a view change removes a member); and for
 * each communicator, the live ranks' lines of its newest epoch carry one
 * size and one rank map, no rank twice and no more ranks than its size.
 * False with a one-line reason.
 */
bool emu_app_check_comms(const struct emu *emu, const bool *live, char *reason,
                         size_t capacity);

/* Turns the loop until emu_app_over (or the run stops). */
void emu_app_wait(struct emu *emu);

/*
 * The per-node table (result, digest, iterations, time) and the verdict;
 * false (with a one-line reason on stderr) unless every compute node
 * reported ok=true with the same digest.
 */
bool emu_app_judge(struct emu *emu);

#endif /* QEMU_LAUNCHER_EMU_APP_H */
