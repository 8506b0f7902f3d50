/*
 * forge_relay: an attacker on one cable of a running host torus (issue 20).
 * tori-emu starts it as the node program (--node-binary); for every node
 * but one it simply runs tori-node.  For the node it sits in, it takes that
 * node's link socket to a neighbour, hands the node a socket of its own
 * instead, and relays the cable's datagrams both ways, so the torus runs as
 * usual.  It reads what it relays as anyone on the wire can (the header
 * fields are plain; with a key only the tag is out of reach), and once
 * FORGE_AT_MS have passed it sends the neighbour ONE forged frame from the
 * cable's real address: a membership NODE_FAILURE report naming a live
 * node, spoofed as coming from the node it sits in, with the link fields
 * (incarnations, next sequence number, ack) copied from the real traffic.
 * Without a job key that frame is a valid frame of the session; with one it
 * fails its tag.
 *
 *   FORGE_NODE=path/to/tori-node forge_relay TORI_NODE_ARGS...
 *
 * Environment: FORGE_NODE (the node program, required), FORGE_RANK (the node it sits in, 1), FORGE_LINK (that
 * node's link, x-), FORGE_VICTIM (the live node reported, 2), FORGE_AT_MS
 * (2000, from its start), FORGE_ROOT (the report's destination, 0).  It says what it did on stderr, which the
 * launcher keeps in the node's log:
 *   forge_relay: forged node_failure(2) from 1 to 0 seq=S
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/le.h"
#include "membership/codec.h"
#include "net/torus/frame.h"

static pid_t child;

static unsigned env_number(const char *name, unsigned fallback)
{
    const char *text = getenv(name);
    return text != NULL && *text != '\0' ? (unsigned)strtoul(text, NULL, 10) : fallback;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* "/out/node3.personality" -> 3; -1 when the name is not of that shape. */
static long rank_of(int argc, char **argv)
{
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], "--personality") == 0) {
            const char *base = strrchr(argv[i + 1], '/');
            base = base != NULL ? base + 1 : argv[i + 1];
            if (strncmp(base, "node", 4) == 0)
                return strtol(base + 4, NULL, 10);
        }
    return -1;
}

/* inherited: the node's end, which tori-node gets by number. */
static int bound_socket(struct sockaddr_in *address, bool inherited)
{
    int fd = socket(AF_INET, SOCK_DGRAM | (inherited ? 0 : SOCK_CLOEXEC), 0);
    memset(address, 0, sizeof *address);
    address->sin_family = AF_INET;
    address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof *address;
    if (fd < 0 || bind(fd, (struct sockaddr *)address, sizeof *address) != 0 ||
        getsockname(fd, (struct sockaddr *)address, &size) != 0) {
        perror("forge_relay: socket");
        exit(2);
    }
    return fd;
}

static void stop(int signal_number)
{
    if (child > 0)
        kill(child, signal_number);
    _exit(128 + signal_number);
}

/* What the relay learnt from the node's last data frame to the neighbour. */
struct observed {
    bool seen;
    uint8_t frame[CONFIG_MAX_FRAME];
    size_t length;
};

/* The forged frame: the last real membership frame's MACs, epoch and link
 * fields, the next sequence number, a NODE_FAILURE report as payload. */
static size_t forge(const struct observed *last, uint32_t victim, uint32_t root,
                    uint8_t *out, uint32_t *sequence)
{
    const uint8_t *f = last->frame;
    struct torus_frame_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.destination_mac, f, TORUS_FRAME_MAC_SIZE);
    memcpy(h.source_mac, f + 6, TORUS_FRAME_MAC_SIZE);
    h.type = TORUS_FRAME_TYPE_MEMBERSHIP;
    h.ttl = f[TORUS_FRAME_OFFSET_TTL];
    h.source = le_get_u32(f + 24);
    h.destination = root;
    h.epoch = le_get_u64(f + 32);
    h.link_sequence = le_get_u32(f + 40) + 1;
    h.link_ack = le_get_u32(f + 44);
    h.link_sender_incarnation = le_get_u32(f + 48);
    h.link_receiver_incarnation = le_get_u32(f + 52);
    *sequence = h.link_sequence;

    /* The sender's own membership header, copied; a report as its body. */
    const uint8_t *real = f + TORUS_FRAME_HEADER_SIZE;
    struct membership_header mh;
    mh.type = MEMBERSHIP_MSG_NODE_FAILURE;
    mh.flags = real[2];
    mh.sender = le_get_u32(real + 4);
    mh.incarnation = le_get_u32(real + 8);
    mh.epoch = le_get_u64(real + 12);
    mh.stable_epoch = le_get_u64(real + 20);
    uint8_t payload[MEMBERSHIP_HEADER_SIZE + MEMBERSHIP_REPORT_FIXED + 4];
    struct membership_writer w;
    membership_writer_init(&w, payload, sizeof payload);
    membership_put_header(&w, &mh);
    membership_put_u32(&w, mh.sender); /* detector */
    membership_put_u32(&w, 0);         /* sequence */
    membership_put_u32(&w, UINT32_MAX); /* no failed root */
    membership_put_u16(&w, 1);
    membership_put_u16(&w, 0);
    membership_put_u32(&w, victim);
    /* Keyless, as a forger without the key can only make it. */
    return torus_frame_encode(&h, payload, w.length, NULL, out, CONFIG_MAX_FRAME);
}

int main(int argc, char **argv)
{
    const char *node_binary = getenv("FORGE_NODE");
    if (node_binary == NULL || *node_binary == '\0') {
        fprintf(stderr, "usage: FORGE_NODE=path/to/tori-node forge_relay TORI_NODE_ARGS...\n");
        return 2;
    }
    unsigned forge_rank = env_number("FORGE_RANK", 1);
    unsigned victim = env_number("FORGE_VICTIM", 2);
    unsigned root = env_number("FORGE_ROOT", 0);
    uint64_t forge_at = now_ms() + env_number("FORGE_AT_MS", 2000);
    const char *link_name = getenv("FORGE_LINK") != NULL ? getenv("FORGE_LINK") : "x-";
    char **child_argv = argv;
    argv[0] = (char *)node_binary;
    if (rank_of(argc, argv) != (long)forge_rank) {
        execv(node_binary, child_argv);
        perror("forge_relay: exec");
        return 127;
    }

    /* The cable: "DIR:fd=N:peer=IP:PORT" of link_name. */
    int wire = -1;
    struct sockaddr_in neighbour;
    memset(&neighbour, 0, sizeof neighbour);
    struct sockaddr_in node_end, relay_end;
    int node_fd = bound_socket(&node_end, true);
    int relay_fd = bound_socket(&relay_end, false);
    static char replaced[128];
    for (int i = 1; i + 1 < argc; i++) {
        size_t n = strlen(link_name);
        if (strcmp(argv[i], "--link") != 0 || strncmp(argv[i + 1], link_name, n) != 0 ||
            argv[i + 1][n] != ':')
            continue;
        unsigned port = 0;
        char ip[32];
        if (sscanf(argv[i + 1] + n, ":fd=%d:peer=%31[0-9.]:%u", &wire, ip, &port) != 3) {
            fprintf(stderr, "forge_relay: cannot read --link %s\n", argv[i + 1]);
            return 2;
        }
        neighbour.sin_family = AF_INET;
        neighbour.sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, ip, &neighbour.sin_addr);
        snprintf(replaced, sizeof replaced, "%s:fd=%d:peer=127.0.0.1:%u", link_name, node_fd,
                 (unsigned)ntohs(relay_end.sin_port));
        argv[i + 1] = replaced;
    }
    if (wire < 0) {
        fprintf(stderr, "forge_relay: node %u has no link %s\n", forge_rank, link_name);
        return 2;
    }

    child = fork();
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(wire);
        close(relay_fd);
        execv(node_binary, child_argv);
        perror("forge_relay: exec");
        _exit(127);
    }
    close(node_fd);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);

    static struct observed last;
    static uint8_t buffer[CONFIG_MAX_FRAME + 1];
    bool forged = false;
    struct pollfd fds[2] = {{wire, POLLIN, 0}, {relay_fd, POLLIN, 0}};
    for (;;) {
        int status;
        if (waitpid(child, &status, WNOHANG) == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        poll(fds, 2, 50);
        if ((fds[0].revents & POLLIN) != 0) { /* neighbour -> node */
            ssize_t got = recv(wire, buffer, sizeof buffer, 0);
            if (got > 0)
                sendto(relay_fd, buffer, (size_t)got, 0, (struct sockaddr *)&node_end,
                       sizeof node_end);
        }
        if ((fds[1].revents & POLLIN) != 0) { /* node -> neighbour */
            ssize_t got = recv(relay_fd, buffer, sizeof buffer, 0);
            if (got <= 0)
                continue;
            /* The node's own membership frames, read as plain fields (no
             * key is needed to read them). */
            bool membership = (size_t)got >= TORUS_FRAME_HEADER_SIZE + MEMBERSHIP_HEADER_SIZE &&
                              (size_t)got <= CONFIG_MAX_FRAME &&
                              buffer[TORUS_FRAME_OFFSET_TYPE] == TORUS_FRAME_TYPE_MEMBERSHIP &&
                              (buffer[TORUS_FRAME_OFFSET_FLAGS] & TORUS_FRAME_FLAG_SYN) == 0 &&
                              le_get_u32(buffer + 24) == forge_rank;
            if (membership) {
                memcpy(last.frame, buffer, (size_t)got);
                last.length = (size_t)got;
                last.seen = true;
            }
            sendto(wire, buffer, (size_t)got, 0, (struct sockaddr *)&neighbour, sizeof neighbour);
            /* Forge right behind a real one, so that its sequence number is
             * the one the neighbour expects next. */
            if (!forged && membership && now_ms() >= forge_at) {
                static uint8_t forgery[CONFIG_MAX_FRAME];
                uint32_t sequence;
                size_t length = forge(&last, victim, root, forgery, &sequence);
                sendto(wire, forgery, length, 0, (struct sockaddr *)&neighbour,
                       sizeof neighbour);
                forged = true;
                fprintf(stderr, "forge_relay: forged node_failure(%u) from %u to %u seq=%u\n",
                        victim, forge_rank, root, sequence);
            }
        }
    }
}
