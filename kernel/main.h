/*
 * The kernel's entry: kernel_main() is the portable start every board calls
 * once its start-up code has a stack and a C environment.
 */
#ifndef KERNEL_MAIN_H
#define KERNEL_MAIN_H

#include "kernel/job.h"

/* Boot, init phase, seal, ready, poll loop; never returns. */
_Noreturn void kernel_main(void);

/* The job the loader gave this node, validated at boot (a bad block halts
 * the node naming the field); NULL when there is none. */
const struct job *kernel_job(void);

#endif /* KERNEL_MAIN_H */
