#define _GNU_SOURCE
#include "qemu/launcher/emu_links.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/torus/frame.h"

uint32_t emu_links_needed(const struct torus_geometry *geometry)
{
    uint32_t count = 0;
    uint32_t nodes = torus_geometry_node_count(geometry);
    for (uint32_t rank = 0; rank < nodes; rank++)
        count += (uint32_t)__builtin_popcount(torus_geometry_link_mask(geometry, rank));
    return count;
}

void emu_links_plan(const struct torus_geometry *geometry, uint32_t rank,
                    struct emu_link links[CONFIG_MAX_LINKS])
{
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        struct emu_link *l = &links[link];
        memset(l, 0, sizeof *l);
        l->fd = -1;
        l->peer = TORUS_RANK_NONE;
        if (link >= torus_geometry_link_count(geometry))
            continue;
        uint32_t peer = torus_geometry_neighbour(geometry, rank, link);
        if (peer == TORUS_RANK_NONE)
            continue;
        l->present = true;
        l->peer = peer;
        l->peer_link = torus_geometry_opposite_link(link);
        torus_frame_mac_for_link(rank, link, l->mac);
    }
}

bool emu_links_check_ports(const struct torus_geometry *geometry,
                           uint32_t base_port, char *error, size_t capacity)
{
    if (base_port == 0)
        return true;
    uint32_t needed = emu_links_needed(geometry);
    uint32_t available = base_port <= 65535 ? 65536 - base_port : 0;
    if (needed <= available)
        return true;
    snprintf(error, capacity,
             "%u nodes need %u UDP ports but --base-port %u leaves only %u "
             "(%u..65535); expected a base port of at most %u, or no --base-port "
             "to let the system pick",
             (unsigned)torus_geometry_node_count(geometry), (unsigned)needed,
             (unsigned)base_port, (unsigned)available, (unsigned)base_port,
             needed <= 65535 ? (unsigned)(65536 - needed) : 0u);
    return false;
}

bool emu_links_open_socket(struct emu_link *link, uint16_t port, int *rcvbuf,
                           char *error, size_t capacity)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(error, capacity, "cannot open a UDP socket: %s%s", strerror(errno),
                 errno == EMFILE ? " (too many open files: ulimit -n)" : "");
        return false;
    }
    int wanted = EMU_LINKS_RCVBUF_BYTES;
    int granted = 0;
    socklen_t size = sizeof granted;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &wanted, sizeof wanted);
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &size);
    if (granted < wanted) {
        /* Over net.core.rmem_max: only CAP_NET_ADMIN may force it. */
        setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &wanted, sizeof wanted);
        size = sizeof granted;
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &size);
    }
    *rcvbuf = granted;
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int bind_error = errno;
        close(fd);
        if (port != 0)
            snprintf(error, capacity, "cannot bind UDP port 127.0.0.1:%u: %s%s",
                     (unsigned)port, strerror(bind_error),
                     bind_error == EADDRINUSE
                         ? " (expected a free port: choose another --base-port, or "
                           "none to let the system pick)"
                         : "");
        else
            snprintf(error, capacity, "cannot bind a UDP port on 127.0.0.1: %s",
                     strerror(bind_error));
        return false;
    }
    size = sizeof address;
    getsockname(fd, (struct sockaddr *)&address, &size);
    link->fd = fd;
    link->port = ntohs(address.sin_port);
    return true;
}

bool emu_links_connect(struct emu_link *link, char *error, size_t capacity)
{
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(link->peer_port);
    if (connect(link->fd, (struct sockaddr *)&address, sizeof address) != 0) {
        snprintf(error, capacity, "cannot connect to UDP port 127.0.0.1:%u: %s",
                 (unsigned)link->peer_port, strerror(errno));
        return false;
    }
    return true;
}

void emu_links_format_mac(const uint8_t mac[6], char text[18])
{
    snprintf(text, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
             mac[3], mac[4], mac[5]);
}

unsigned emu_links_drain(int fd)
{
    unsigned dropped = 0;
    char frame[2048];
    while (fd >= 0 && recv(fd, frame, sizeof frame, MSG_DONTWAIT) >= 0)
        dropped++;
    return dropped;
}
