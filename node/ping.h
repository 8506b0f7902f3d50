/*
 * Ping: reachability and round-trip time between nodes over the torus, the
 * launcher's proof that every pair can talk (`tori-emu --ping`).
 *
 *   console "ping all"  every other node in turn, PING_WINDOW at a time
 *   console "ping N"    one node
 *   console "ping fan A,B,..."  up to TORUS_PING_FAN_MAX nodes at once: the
 *                       paper's contention measurement (a parent exchanging
 *                       with k children together)
 *   event=ping dst=N hops=H rtt_ns=T ok=1    per answer (ok=0 on timeout)
 *   event=ping-done ok=A failed=B            when the sweep is over
 *   event=ping-fan n=K answered=A max_hops=H rtt_ns=T ok=1
 *                       T from the first send to the last answer (ok=0
 *                       when one did not answer within the timeout)
 *
 * A PING carries a sequence number and the sender's clock; the PONG echoes
 * both and the path length the PING took.  RTT is measured on one clock.
 */
#ifndef NODE_PING_H
#define NODE_PING_H

#include <stdbool.h>
#include <stdint.h>

#include "net/torus/network.h"

#define TORUS_PING_WINDOW 1 /* one at a time: an RTT never includes queueing behind another */
#define TORUS_PING_ATTEMPTS 3
#define TORUS_PING_TIMEOUT_NS 1000000000ull
/* A send the network refuses (no route yet: links still handshaking) is
 * tried again this soon, up to TORUS_PING_REFUSALS times. */
#define TORUS_PING_REFUSED_RETRY_NS 10000000ull
#define TORUS_PING_REFUSALS 300

struct torus_ping_slot {
    bool active;
    uint32_t destination;
    uint32_t sequence;
    uint32_t attempts;
    uint32_t refusals;
    uint64_t sent_ns;
    uint64_t deadline_ns;
};

#define TORUS_PING_FAN_MAX 8

struct torus_ping_fan {
    bool active;
    uint32_t count, answered, max_hops;
    uint32_t destination[TORUS_PING_FAN_MAX];
    uint32_t sequence[TORUS_PING_FAN_MAX];
    bool done[TORUS_PING_FAN_MAX];
    uint64_t sent_ns, last_answer_ns, deadline_ns;
};

struct torus_ping {
    struct torus_network *network;
    bool sweeping;
    bool skip_self; /* "ping all" does not ping the node itself */
    uint32_t next_destination; /* of the sweep */
    uint32_t last_destination; /* inclusive */
    uint32_t sequence;
    uint32_t answered;
    uint32_t failed;
    struct torus_ping_slot slots[TORUS_PING_WINDOW];
    struct torus_ping_fan fan;
};

/* Takes PING and PONG frames from the network and adds the console command. */
void torus_ping_init(struct torus_ping *ping, struct torus_network *network);

/* Sends what the window allows and expires late answers; returns work. */
unsigned torus_ping_poll(struct torus_ping *ping, uint64_t now_ns);

/* When a ping in flight times out; UINT64_MAX when none is. */
uint64_t torus_ping_next_deadline(const struct torus_ping *ping);

#endif /* NODE_PING_H */
