/*
 * Link driver for the host board: one UDP socket per link, each datagram
 * exactly one frame, the same datagrams QEMU's -netdev dgram carries, so a
 * host node can be cabled to a QEMU node.  The launcher passes each link as
 *
 *   --link DIR:fd=N:peer=IPV4:PORT         (a socket it opened and bound)
 *   --link DIR:bind=IPV4:PORT:peer=IPV4:PORT   (the node opens it)
 *
 * DIR is a link name ("x+", "y-").  Datagrams from any other address than
 * the peer are dropped: a stray sender must not speak for a neighbour.
 *
 *   --pcap DIR:FILE                        (capture the link's frames)
 *
 * writes every frame the link sent and every frame it accepted to FILE in
 * pcap format (lib/pcap.h), stamped with the wall clock.
 */
#define _GNU_SOURCE
#include "net/torus/driver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/pcap.h"

#include "board/host/host.h"

struct udp_link {
    int fd;
    int pcap_fd; /* -1: no capture */
    struct sockaddr_in peer;
    struct torus_driver_counters counters;
};

static struct udp_link links[CONFIG_MAX_LINKS];
static char error_line[160];

const char *torus_driver_name(void)
{
    return "udp";
}

static bool parse_ipv4_port(const char *text, struct sockaddr_in *address)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof host)
        return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || end == colon + 1 || port < 1 || port > 65535)
        return false;
    memset(address, 0, sizeof *address);
    address->sin_family = AF_INET;
    address->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &address->sin_addr) == 1;
}

static bool fail(const char **error, const char *option, const char *why)
{
    snprintf(error_line, sizeof error_line, "udp: --link %s: %s", option, why);
    *error = error_line;
    return false;
}

static bool fail_pcap(const char **error, const char *value, const char *why)
{
    snprintf(error_line, sizeof error_line, "udp: --pcap %s: %s", value, why);
    *error = error_line;
    return false;
}

/* One --pcap value: "x+:node0-x+.pcap".  The file starts with its header. */
static bool parse_pcap(const char *value, uint32_t *pcap_mask, const char **error)
{
    char name[3] = {0};
    unsigned link;
    if (strlen(value) < 4 || value[2] != ':')
        return fail_pcap(error, value, "expected --pcap DIR:FILE");
    memcpy(name, value, 2);
    if (!torus_geometry_link_from_name(name, &link))
        return fail_pcap(error, value, "unknown direction (expected x+, x-, y+ ...)");
    if ((*pcap_mask & (1u << link)) != 0)
        return fail_pcap(error, value, "direction captured twice");
    int fd = open(value + 3, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail_pcap(error, value, strerror(errno));
    uint8_t header[PCAP_FILE_HEADER_SIZE];
    pcap_file_header(header, CONFIG_MAX_FRAME);
    if (write(fd, header, sizeof header) != (ssize_t)sizeof header) {
        close(fd);
        return fail_pcap(error, value, "cannot write the capture's header");
    }
    links[link].pcap_fd = fd;
    *pcap_mask |= 1u << link;
    return true;
}

/* Appends one frame to the link's capture, if it has one.  A failed write
 * loses the record, never the frame. */
static void capture(const struct udp_link *l, const uint8_t *frame, size_t length)
{
    if (l->pcap_fd < 0)
        return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint8_t header[PCAP_RECORD_HEADER_SIZE];
    pcap_record_header(header, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
                       (uint32_t)length, (uint32_t)length);
    struct iovec parts[2] = {{header, sizeof header}, {(void *)frame, length}};
    (void)!writev(l->pcap_fd, parts, 2);
}

/* One --link value: "x+:fd=5:peer=127.0.0.1:4001" or "x+:bind=...:peer=...". */
static bool parse_link(const char *value, const struct torus_geometry *geometry,
                       uint32_t rank, uint32_t *link_mask, const char **error)
{
    char name[3] = {0};
    unsigned link;
    if (strlen(value) < 3 || value[2] != ':')
        return fail(error, value, "expected DIR:fd=N:peer=IP:PORT or DIR:bind=IP:PORT:peer=IP:PORT");
    memcpy(name, value, 2);
    if (!torus_geometry_link_from_name(name, &link))
        return fail(error, value, "unknown direction (expected x+, x-, y+ ...)");
    if ((torus_geometry_link_mask(geometry, rank) & (1u << link)) == 0)
        return fail(error, value, "this node has no such link in its torus");
    if ((*link_mask & (1u << link)) != 0)
        return fail(error, value, "direction given twice");
    const char *rest = value + 3;
    const char *peer = strstr(rest, ":peer=");
    struct udp_link *l = &links[link];
    if (peer == NULL || !parse_ipv4_port(peer + 6, &l->peer))
        return fail(error, value, "expected :peer=IPV4:PORT");
    if (strncmp(rest, "fd=", 3) == 0) {
        char *end = NULL;
        long fd = strtol(rest + 3, &end, 10);
        if (end != peer || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0)
            return fail(error, value, "fd= is not an open descriptor");
        l->fd = (int)fd;
    } else if (strncmp(rest, "bind=", 5) == 0) {
        char local_text[64];
        size_t length = (size_t)(peer - (rest + 5));
        struct sockaddr_in local;
        if (length >= sizeof local_text)
            return fail(error, value, "bind= address too long");
        memcpy(local_text, rest + 5, length);
        local_text[length] = '\0';
        if (!parse_ipv4_port(local_text, &local))
            return fail(error, value, "expected bind=IPV4:PORT");
        l->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int size = 4 << 20; /* absorbs bursts: QEMU-measured loss otherwise */
        if (l->fd < 0 ||
            setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) != 0 ||
            bind(l->fd, (struct sockaddr *)&local, sizeof local) != 0)
            return fail(error, value, strerror(errno));
    } else {
        return fail(error, value, "expected fd=N or bind=IPV4:PORT after the direction");
    }
    int flags = fcntl(l->fd, F_GETFL);
    if (flags < 0 || fcntl(l->fd, F_SETFL, flags | O_NONBLOCK) != 0)
        return fail(error, value, "cannot make the socket non-blocking");
    if (!host_watch_fd(l->fd))
        return fail(error, value, "too many descriptors to watch");
    *link_mask |= 1u << link;
    return true;
}

bool torus_driver_init(const struct torus_geometry *geometry, uint32_t rank,
                       uint32_t *link_mask, const char **error)
{
    *link_mask = 0;
    for (unsigned i = 0; i < CONFIG_MAX_LINKS; i++) {
        links[i].fd = -1;
        links[i].pcap_fd = -1;
    }
    uint32_t pcap_mask = 0;
    int count = host_argument_count();
    for (int i = 0; i < count; i++) {
        const char *argument = host_argument(i);
        if (strcmp(argument, "--link") == 0 && i + 1 < count) {
            if (!parse_link(host_argument(++i), geometry, rank, link_mask, error))
                return false;
        } else if (strcmp(argument, "--pcap") == 0 && i + 1 < count) {
            if (!parse_pcap(host_argument(++i), &pcap_mask, error))
                return false;
        } else {
            snprintf(error_line, sizeof error_line,
                     "udp: unknown option '%s' (expected --link DIR:fd=N:peer=IP:PORT "
                     "or --pcap DIR:FILE)",
                     argument);
            *error = error_line;
            return false;
        }
    }
    if ((pcap_mask & ~*link_mask) != 0) {
        snprintf(error_line, sizeof error_line,
                 "udp: --pcap names a direction with no --link (expected a --link for "
                 "every captured direction)");
        *error = error_line;
        return false;
    }
    return true;
}

bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length)
{
    if (link >= CONFIG_MAX_LINKS || links[link].fd < 0)
        return true; /* no cable: the frame is lost, as on hardware */
    struct udp_link *l = &links[link];
    ssize_t sent = sendto(l->fd, frame, length, 0, (struct sockaddr *)&l->peer,
                          sizeof l->peer);
    if (sent == (ssize_t)length) {
        l->counters.sent++;
        capture(l, frame, length);
        return true;
    }
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
        l->counters.send_busy++;
        return false;
    }
    /* ECONNREFUSED and friends: the peer is not there; the link layer
     * notices through missing acknowledgments. */
    l->counters.send_errors++;
    return true;
}

size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity)
{
    if (link >= CONFIG_MAX_LINKS || links[link].fd < 0)
        return 0;
    struct udp_link *l = &links[link];
    for (;;) {
        struct sockaddr_in from;
        socklen_t from_length = sizeof from;
        ssize_t got = recvfrom(l->fd, buffer, capacity, MSG_TRUNC,
                               (struct sockaddr *)&from, &from_length);
        if (got < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                l->counters.receive_drops++; /* e.g. a queued ICMP error */
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            continue;
        }
        if ((size_t)got > capacity || from.sin_port != l->peer.sin_port ||
            from.sin_addr.s_addr != l->peer.sin_addr.s_addr) {
            l->counters.receive_drops++;
            continue;
        }
        l->counters.received++;
        capture(l, buffer, (size_t)got);
        return (size_t)got;
    }
}

const struct torus_driver_counters *torus_driver_counters(unsigned link)
{
    static const struct torus_driver_counters none;
    return link < CONFIG_MAX_LINKS ? &links[link].counters : &none;
}
