/*
 * The node's services, where kernel, torus network and membership meet: all
 * of a node's service state in one struct, sized by CONFIG_MAX_*, and the
 * sequence that brings the services up (reached from kernel_main through
 * kernel/services.h).
 */
#ifndef NODE_NODE_H
#define NODE_NODE_H

#include "kernel/personality.h"
#include "membership/membership.h"
#include "net/torus/network.h"
#include "node/ping.h"

struct node {
    const struct personality *personality; /* the kernel's, validated */
    struct torus_network network;
    struct torus_ping ping;
    struct membership membership;
    struct membership_outbox membership_outbox;
};

/* Brings up the network and its services, then membership, for the node
 * the personality describes (node/node.c). */
void node_init(const struct personality *personality);

/* Brings up geometry, link driver, network and ping (node/node_network.c);
 * panics with the driver's one-line reason when the links are unusable. */
void node_network_init(struct node *node);

/* Prepares the membership service (node/node_membership.c); it runs from
 * the console command `start` on, spares and restarted nodes by joining. */
void node_membership_init(struct node *node);
void node_membership_link_event(struct node *node, uint32_t neighbour, bool up,
                                uint64_t now_ns);

#endif /* NODE_NODE_H */
