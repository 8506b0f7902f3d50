/*
 * The node's services, where kernel, torus network and membership meet: all
 * of a node's service state in one struct, sized by CONFIG_MAX_*, and the
 * sequence that brings the services up (reached from kernel_main through
 * kernel/services.h).
 */
#ifndef NODE_NODE_H
#define NODE_NODE_H

#include "comm/comm.h"
#include "kernel/job.h"
#include "kernel/personality.h"
#include "membership/membership.h"
#include "net/torus/network.h"
#include "node/ping.h"
#include "node/tori.h"

struct node {
    const struct personality *personality; /* the kernel's, validated */
    struct torus_network network;
    struct torus_ping ping;
    struct membership membership;
    struct membership_outbox membership_outbox;
    struct comm comm;
    struct comm_outbox comm_outbox;
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
/* The link to neighbour resends past its loss limit (a network fault when
 * the neighbour answers).  Ignored before `start`. */
void node_membership_link_lossy(struct node *node, uint32_t neighbour, uint64_t now_ns);
/* True from the console command `start` on (the job is launched). */
bool node_membership_is_started(void);
/* Reports a peer another service suspects (the comm core's silent peers);
 * the membership probes it and decides.  Ignored before `start`. */
void node_membership_suspect(struct node *node, uint32_t who, uint64_t now_ns);
/* This node's application is gone (a process fault, lib/recovery.h): asks
 * the root to remove this node with that model, again every detector
 * timeout while it is still a member (a root asks the next member).
 * False for the only member, or before `start`. */
bool node_membership_request_removal(struct node *node, uint8_t model, uint64_t now_ns);

/* Prepares the communication service (node/node_comm.c): COMM frames, the
 * membership's views, ticks; after node_membership_init. */
void node_comm_init(struct node *node);
/* Sends what the comm core wrote, reports its events, passes its
 * suspicions to the membership, and clears the outbox. */
void node_comm_flush(struct node *node, uint64_t now_ns);

/*
 * The job (node/tori.c): prepared at init when the loader gave one and this
 * node is a compute node of the initial job; started after `start` once the
 * initial view is installed, outside the poll loop: node_job_begin returns
 * the arguments and the application to run (NULL: none now), the caller
 * (node/services.c, which links the applications) runs it and passes its
 * result to node_job_end, or calls node_job_missing for an application the
 * image does not hold.
 */
void node_job_init(struct node *node);
const struct tori_args *node_job_begin(uint8_t *app);
void node_job_end(const struct tori_result *outcome);
void node_job_missing(uint8_t app);
/* The comm core reported a communicator DETECTED (abort false) or an ABORT
 * communicator failed (abort true): reported as a `comm` line; the job
 * ends (`app-abort`) under ABORT, else the application's handler is told
 * in its next call. */
void node_job_comm_failed(uint32_t comm, bool abort);
/*
 * The runtime's own traffic on a job's communicator (node/tori_checkpoint.c):
 * point-to-point with tags above the application's (NODE_JOB_TAG_BASE +
 * kind, kind < 16), the node behind a rank, and the job block.
 */
#define NODE_JOB_TAG_BASE 0x40000000u
int node_job_isend(tori_comm comm, uint32_t dest, uint32_t kind, const void *buffer,
                   uint32_t length, tori_request *request);
int node_job_irecv(tori_comm comm, uint32_t source, uint32_t kind, void *buffer,
                   uint32_t capacity, tori_request *request);
uint32_t node_job_rank_node(tori_comm comm, uint32_t rank);
/* True when node holds a rank of comm. */
bool node_job_has_node(tori_comm comm, uint32_t node);
/*
 * PROMOTE's mirror traffic on NODES (comm_nodes: every node id, spares
 * too), tag NODE_JOB_TAG_BASE + kind: raw comm errors, no app-error and no
 * error handler (a lost mirror copy costs only the promotion's shortcut).
 * node_mirror_wait runs the node until the request is done (or the job
 * aborted); node_mirror_test only looks.
 */
int node_mirror_isend(uint32_t node, uint32_t kind, const void *buffer, uint32_t length,
                      uint32_t *request);
int node_mirror_irecv(uint32_t kind, void *buffer, uint32_t capacity, uint32_t *request);
bool node_mirror_test(uint32_t request, uint32_t *source, uint32_t *count, int *error);
void node_mirror_wait(uint32_t request);
/* This node's id and WORLD's size (the ranks that mirrors pair with). */
void node_mirror_shape(uint32_t *self, uint32_t *ranks);
/* A standby spare's part while it waits to adopt (node/tori_checkpoint.c):
 * takes what arrived for its mirror and asks for more. */
void node_checkpoint_mirror_poll(void);
/* The node itself, for the test applications (tests/node) that drive its
 * comm core beside the blocking API (node.ftprobe_busy holds collective
 * slots with it); no product application has it. */
struct node *node_job_node(void);
const struct job *node_job_block(void);
const struct torus_geometry *node_job_geometry(void);
/* Runs the shipped application `app` (node/shipped_apps.c, which links
 * apps/): false when it is not one of them. */
bool node_run_shipped_app(uint8_t app, const struct tori_args *args,
                          struct tori_result *outcome);

#endif /* NODE_NODE_H */
