/*
 * The launcher's torus wiring: which (node, link) pairs exist, which UDP
 * port each one has on 127.0.0.1, who is at the far end, and the MAC address
 * of each link's NIC.
 *
 * Every link end is a UDP socket the launcher opens itself, bound to its
 * port, with a 4 MiB receive buffer (QEMU's own buffers lose frames under a
 * flood), and hands to the instance: QEMU takes it with
 * -netdev dgram,local.type=fd; a host node with --link DIR:fd=N:peer=...
 * Each socket is also connect()ed to its peer's port: QEMU 7.2 refuses a
 * remote address beside local.type=fd and sends with plain send(), and the
 * kernel then delivers only the peer's datagrams.  The launcher keeps its
 * copy open, so a port stays the node's across a restart (fault injection),
 * no sender ever sees "port unreachable", and datagrams that arrive while
 * the node is down can be drained before it comes back.
 *
 * Link L of node R is wired to link L^1 of its neighbour (x+ to x-): see
 * net/torus/geometry.h.  Ports: with a base port B, the existing links get
 * B, B+1, ... in (rank, link) order; with base 0 the system picks each one.
 */
#ifndef QEMU_LAUNCHER_EMU_LINKS_H
#define QEMU_LAUNCHER_EMU_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/geometry.h"

/* Receive buffer asked for on every link socket. */
#define EMU_LINKS_RCVBUF_BYTES (4 * 1024 * 1024)

struct emu_link {
    bool present;       /* false at a mesh edge or in a size-1 dimension */
    uint32_t peer;      /* rank at the far end */
    unsigned peer_link; /* the far end's link index (link ^ 1) */
    uint16_t port;      /* our end on 127.0.0.1 */
    uint16_t peer_port; /* theirs */
    int fd;             /* our pre-opened socket, -1 when none */
    uint8_t mac[6];     /* the NIC's MAC: rank and link, see frame.h */
};

/* (node, link) pairs that exist in geometry: the UDP ports it needs. */
uint32_t emu_links_needed(const struct torus_geometry *geometry);

/*
 * Fills links[0..CONFIG_MAX_LINKS) of rank: presence, peer, peer link and
 * MAC.  Ports and sockets are left unset (0 and -1).
 */
void emu_links_plan(const struct torus_geometry *geometry, uint32_t rank,
                    struct emu_link links[CONFIG_MAX_LINKS]);

/*
 * Checks that base_port..65535 holds every port geometry needs (base 0: the
 * system picks, nothing to check).  On failure writes a one-line reason.
 */
bool emu_links_check_ports(const struct torus_geometry *geometry,
                           uint32_t base_port, char *error, size_t capacity);

/*
 * Opens one socket: UDP, non-blocking, close-on-exec, receive buffer of
 * EMU_LINKS_RCVBUF_BYTES (forced as root when the sysctl limit is lower),
 * bound to 127.0.0.1:port (0: any free port).  Sets link->fd and
 * link->port; *rcvbuf gets the buffer the kernel granted.
 */
bool emu_links_open_socket(struct emu_link *link, uint16_t port, int *rcvbuf,
                           char *error, size_t capacity);

/* Connects link->fd to 127.0.0.1:link->peer_port (both ends opened first). */
bool emu_links_connect(struct emu_link *link, char *error, size_t capacity);

/*
 * The MAC of link on rank: 02:74:RR:RR:RR:LL (net/torus/frame.h,
 * torus_frame_mac_for_link).  Written as "02:74:00:00:05:03".
 */
void emu_links_format_mac(const uint8_t mac[6], char text[18]);

/* Drains datagrams waiting on a socket; returns how many were dropped. */
unsigned emu_links_drain(int fd);

#endif /* QEMU_LAUNCHER_EMU_LINKS_H */
