/*
 * The poll loop: the node's only thread of control.  Each pass calls every
 * registered poller, runs the timers that are due, and, when nothing did any
 * work, idles in the board until the next timer deadline or device input.
 */
#ifndef KERNEL_POLL_H
#define KERNEL_POLL_H

#include <stdbool.h>
#include <stdint.h>

/* A poller returns how many units of work it did (0: nothing to do). */
typedef unsigned (*poll_fn)(void *context, uint64_t now_ns);

/* Registers a poller during init; panics when the table is full. */
void poll_register(const char *name, poll_fn poller, void *context);

/* Runs passes until poll_stop() is called (or forever). */
void poll_run(void);

/* One pass; returns the work done.  Exposed for tests and the host board. */
unsigned poll_once(void);

/*
 * One step of poll_run(): a pass, or when it did nothing, a slice of console
 * output, or when there is none, idling until the next timer deadline or
 * device input.  For code that waits outside the loop (an application's
 * blocking call) and must keep the node running meanwhile.
 */
void poll_pass(void);

/* Makes poll_run() return after the current pass. */
void poll_stop(void);

#endif /* KERNEL_POLL_H */
