/*
 * The node: all of a node's state in one struct, sized by CONFIG_MAX_*, and
 * the sequence that brings it up.  kernel_main() is the portable entry every
 * board calls once its start-up code has a stack and a C environment.
 */
#ifndef KERNEL_NODE_H
#define KERNEL_NODE_H

#include "kernel/personality.h"
#include "membership/membership.h"
#include "net/torus/network.h"
#include "net/torus/ping.h"

struct node {
    struct personality personality;
    struct torus_network network;
    struct torus_ping ping;
    struct membership membership;
    struct membership_outbox membership_outbox;
};

/* Boot, init phase, seal, ready, poll loop; never returns. */
_Noreturn void kernel_main(void);

/* The node's state, for the board and diagnostics. */
const struct node *node_state(void);

/* Brings up geometry, link driver, network and ping (kernel/node_network.c);
 * panics with the driver's one-line reason when the links are unusable. */
void node_network_init(struct node *node);

/* Prepares the membership service (kernel/node_membership.c); it runs from
 * the console command `start` on, spares and restarted nodes by joining. */
void node_membership_init(struct node *node);
void node_membership_link_event(struct node *node, uint32_t neighbour, bool up,
                                uint64_t now_ns);

#endif /* KERNEL_NODE_H */
