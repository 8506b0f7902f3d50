/*
 * The hook through which the kernel brings up what runs on it.  The kernel
 * declares these functions and kernel_main calls them; exactly one linked
 * module defines them: node/services.c (the node's services: torus network,
 * ping, flood, membership) in every product image, a module of its own in a
 * test image (tests/).  A direct call resolved at link time, not a function
 * pointer, so the certification's call graph stays exact.
 */
#ifndef KERNEL_SERVICES_H
#define KERNEL_SERVICES_H

#include "kernel/personality.h"

/*
 * Init phase (the heap is open): brings up the services for the node the
 * personality describes, registering their pollers, timers and console
 * commands; panics with a one-line reason when they cannot run.  The
 * personality is the kernel's and lives as long as the node.
 */
void kernel_services_init(const struct personality *personality);

/* Called once, right after the heap is sealed and before the node reports
 * ready: the services' first step of the run phase. */
void kernel_services_enter_run_phase(void);

/*
 * The services' foreground work (the node's: the job's application), called
 * by kernel_main each time the poll loop returns because a service called
 * poll_stop(); the loop resumes after it.  Work here keeps the node running
 * through poll_pass().  Outside the loop, so that nothing a poller calls
 * ever leads back into the loop (the call graph stays free of cycles).
 */
void kernel_services_run(void);

#endif /* KERNEL_SERVICES_H */
