/*
 * Routing on a torus or mesh: dimension-order, minimal, fault-tolerant.
 *
 * The preferred next hop corrects the lowest dimension whose coordinate
 * differs, the shortest way round (a tie half way round an even torus goes
 * plus).  When that link is down the router takes the first other
 * productive link that is up, in a fixed order: the other way of a tied
 * dimension, then the higher dimensions in order (each its preferred way
 * first).  Like Phoenix it routes around what it knows to be broken, but it
 * only ever takes productive hops, each of which shortens the remaining
 * distance by exactly one: every path is minimal, hence loop-free whatever
 * the link states seen at each node.  torus_route_next_hop never detours;
 * when no productive link is up it answers TORUS_ROUTE_NONE.  The network's
 * router (torus_route_next_hop_around, below) adds detours around cut
 * cables and around the nodes the membership shuns, bounded by a TTL.
 *
 * Pure: no I/O, no globals, no allocation.
 */
#ifndef NET_TORUS_ROUTE_H
#define NET_TORUS_ROUTE_H

#include <stdint.h>

#include "net/torus/geometry.h"

/* Results of torus_route_next_hop other than a link number (>= 0). */
#define TORUS_ROUTE_LOCAL (-1) /* here is the destination */
#define TORUS_ROUTE_NONE (-2)  /* no productive link up, or a bad rank */

/* Every link a node can have, for "all links up". */
#define TORUS_ROUTE_ALL_LINKS_UP UINT32_MAX

/*
 * The link (0..2*dims-1) to forward on from here towards destination, given
 * the links that are up at here (bit L of link_up_mask; links the geometry
 * does not have at here count as down).  TORUS_ROUTE_LOCAL or
 * TORUS_ROUTE_NONE otherwise.  Deterministic.
 */
int torus_route_next_hop(const struct torus_geometry *geometry, uint32_t here,
                         uint32_t destination, uint32_t link_up_mask);

/*
 * The router the network uses for a frame that arrived on in_link (-1: one
 * this node sends), given the nodes this node shuns (shunned: out of its
 * view, or suspected dead; NULL when it does not know them):
 *  - first a way to a node not shunned (nor behind the twin of a down
 *    cable in a size-2 dimension) from which a minimal path leads on to the
 *    destination over no shunned node: productive, in dimension order, else
 *    a detour (higher dimensions first) from which such a path does not
 *    lead back through here.  Once every member shuns the same nodes, every
 *    hop from then on is productive, so a frame arrives within its distance
 *    plus 2 and never loops; a dead node is routed around before its links
 *    go down;
 *  - where no such way exists, or without the list: among productive links
 *    those whose far node is not in avoid_mask (the links to shunned
 *    neighbours) and not behind a down twin, then those not in avoid_mask,
 *    then any; a shunned node may be alive and the only bridge, so it is
 *    crossed rather than detoured around blindly (its link goes down soon
 *    enough if it is dead);
 *  - a frame does not go straight back to the node it came from, on any
 *    cable, unless nothing else is up;
 *  - when no productive link is usable it takes a detour - a link that is
 *    up but not productive, higher dimensions first, shunning the same
 *    links first - so a cut cable or a dead node is routed around, as
 *    Phoenix does.  The frame's TTL bounds any wandering.
 * Links whose far node is the destination are never avoided.  The
 * lookahead walks the nodes on minimal paths from each candidate (a box of
 * at most 1024; a larger one is taken as clear) only when a shunned node
 * lies among them.
 */
int torus_route_next_hop_around(const struct torus_geometry *geometry, uint32_t here,
                                uint32_t destination, uint32_t link_up_mask,
                                uint32_t avoid_mask, int in_link, const uint32_t *shunned,
                                uint32_t shunned_count);

/* The same without the list of shunned nodes (shunned NULL). */
int torus_route_next_hop_detour(const struct torus_geometry *geometry,
                                uint32_t here, uint32_t destination,
                                uint32_t link_up_mask, uint32_t avoid_mask, int in_link);

/* Shunned nodes a router is told of at most; past this a node routes as
 * without the list. */
#define TORUS_ROUTE_SHUNNED_MAX 64u

/*
 * The TTL a frame leaves its source with: the diameter (every minimal
 * route) plus room for a few detours around cut cables and dead nodes; it
 * ends a frame that would wander.  A frame takes at most this many hops.
 */
uint8_t torus_route_ttl(const struct torus_geometry *geometry);

/* The links of here whose far node is node (0: none; two in a size-2
 * dimension). */
uint32_t torus_route_links_towards(const struct torus_geometry *geometry, uint32_t here,
                                   uint32_t node);

/* The dimension-order link with every link up (same as the above with
 * TORUS_ROUTE_ALL_LINKS_UP). */
int torus_route_preferred_hop(const struct torus_geometry *geometry,
                              uint32_t here, uint32_t destination);

/*
 * Hops taken following torus_route_next_hop from source to destination with
 * every link up; UINT32_MAX if the walk fails (bad rank, no route, or more
 * than node_count hops, which would be a bug).  For tests and tools.
 */
uint32_t torus_route_path_length(const struct torus_geometry *geometry,
                                 uint32_t source, uint32_t destination);

#endif /* NET_TORUS_ROUTE_H */
