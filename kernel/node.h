/*
 * The node: all of a node's state in one struct, sized by CONFIG_MAX_*, and
 * the sequence that brings it up.  kernel_main() is the portable entry every
 * board calls once its start-up code has a stack and a C environment.
 */
#ifndef KERNEL_NODE_H
#define KERNEL_NODE_H

#include "kernel/personality.h"

struct node {
    struct personality personality;
};

/* Boot, init phase, seal, ready, poll loop; never returns. */
_Noreturn void kernel_main(void);

/* The node's state, for the board and diagnostics. */
const struct node *node_state(void);

#endif /* KERNEL_NODE_H */
