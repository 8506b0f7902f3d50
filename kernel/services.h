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

#endif /* KERNEL_SERVICES_H */
