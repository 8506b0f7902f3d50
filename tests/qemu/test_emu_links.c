/* The launcher's wiring: which links exist, port needs and limits, MACs,
 * and real sockets: a datagram sent on link L of a node arrives on link
 * L^1 of its neighbour, for every link of a 2x2x2 torus and a 3x2 mesh. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qemu/launcher/emu_links.h"
#include "tests/check.h"

static struct emu_link links[64][CONFIG_MAX_LINKS];

static void make(struct torus_geometry *g, unsigned dims, const uint32_t *sizes,
                 const bool *mesh)
{
    CHECK(torus_geometry_init(g, dims, sizes, mesh, NULL) == TORUS_GEOMETRY_OK);
}

static void test_plan(void)
{
    struct torus_geometry g;
    const uint32_t cube[3] = {2, 2, 2};
    make(&g, 3, cube, NULL);
    CHECK(emu_links_needed(&g) == 48);
    emu_links_plan(&g, 0, links[0]);
    /* A size-2 torus dimension: x+ and x- both reach node 1, as two cables. */
    CHECK(links[0][0].present && links[0][0].peer == 1 && links[0][0].peer_link == 1);
    CHECK(links[0][1].present && links[0][1].peer == 1 && links[0][1].peer_link == 0);
    CHECK(links[0][4].present && links[0][4].peer == 4);
    CHECK(!links[0][6].present && links[0][6].fd == -1);

    const uint32_t line[2] = {3, 1};
    const bool mesh[2] = {true, false};
    make(&g, 2, line, mesh);
    CHECK(emu_links_needed(&g) == 4); /* 0-1, 1-2, both ways; y has size 1 */
    emu_links_plan(&g, 0, links[0]);
    CHECK(links[0][0].present && !links[0][1].present); /* mesh edge: no x- */
    CHECK(!links[0][2].present && !links[0][3].present);
    emu_links_plan(&g, 2, links[2]);
    CHECK(!links[2][0].present && links[2][1].present && links[2][1].peer == 1);

    char mac[18];
    emu_links_plan(&g, 1, links[1]);
    emu_links_format_mac(links[1][1].mac, mac);
    CHECK(strcmp(mac, "02:74:00:00:01:01") == 0);
    const uint32_t large[2] = {256, 256};
    make(&g, 2, large, NULL);
    struct emu_link one[CONFIG_MAX_LINKS];
    emu_links_plan(&g, 0xABCD, one);
    emu_links_format_mac(one[3].mac, mac);
    CHECK(strcmp(mac, "02:74:00:ab:cd:03") == 0);
}

static void test_port_range(void)
{
    struct torus_geometry g;
    const uint32_t cube[3] = {2, 2, 2};
    make(&g, 3, cube, NULL);
    char error[256] = "";
    CHECK(emu_links_check_ports(&g, 0, error, sizeof error));
    CHECK(emu_links_check_ports(&g, 65536 - 48, error, sizeof error));
    CHECK(!emu_links_check_ports(&g, 65536 - 47, error, sizeof error));
    CHECK_CONTAINS(error, "8 nodes need 48 UDP ports");
    CHECK_CONTAINS(error, "at most 65488");
}

/* Opens, connects and checks every link of geometry g. */
static void check_wiring(const struct torus_geometry *g)
{
    uint32_t nodes = torus_geometry_node_count(g);
    char error[256];
    int granted = 0;
    for (uint32_t r = 0; r < nodes; r++) {
        emu_links_plan(g, r, links[r]);
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
            if (links[r][l].present)
                CHECK(emu_links_open_socket(&links[r][l], 0, &granted, error, sizeof error));
    }
    /* Root may force the buffer past the sysctl limit; others may not. */
    CHECK(granted >= EMU_LINKS_RCVBUF_BYTES || geteuid() != 0);
    for (uint32_t r = 0; r < nodes; r++)
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
            struct emu_link *link = &links[r][l];
            if (!link->present)
                continue;
            link->peer_port = links[link->peer][link->peer_link].port;
            CHECK(link->port != 0 && link->peer_port != 0);
            CHECK(emu_links_connect(link, error, sizeof error));
        }
    for (uint32_t r = 0; r < nodes; r++)
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
            struct emu_link *link = &links[r][l];
            if (!link->present)
                continue;
            uint8_t frame[2] = {(uint8_t)r, (uint8_t)l};
            CHECK(send(link->fd, frame, sizeof frame, 0) == 2);
            uint8_t got[4] = {0};
            int fd = links[link->peer][link->peer_link].fd;
            ssize_t n = -1;
            for (int tries = 0; tries < 1000 && n < 0; tries++) {
                n = recv(fd, got, sizeof got, MSG_DONTWAIT);
                if (n < 0)
                    usleep(1000);
            }
            CHECK(n == 2 && got[0] == r && got[1] == l);
        }
    /* Queued datagrams are drained before a restart. */
    struct emu_link *first = &links[0][0];
    uint8_t frame[1] = {7};
    send(links[first->peer][first->peer_link].fd, frame, 1, 0);
    send(links[first->peer][first->peer_link].fd, frame, 1, 0);
    usleep(20000);
    CHECK(emu_links_drain(first->fd) == 2);
    CHECK(emu_links_drain(first->fd) == 0);
    for (uint32_t r = 0; r < nodes; r++)
        for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
            if (links[r][l].fd >= 0)
                close(links[r][l].fd);
}

static void test_sockets(void)
{
    struct torus_geometry g;
    const uint32_t cube[3] = {2, 2, 2};
    make(&g, 3, cube, NULL);
    check_wiring(&g);
    const uint32_t rect[2] = {3, 2};
    const bool mesh[2] = {true, true};
    make(&g, 2, rect, mesh);
    check_wiring(&g);

    /* A port already taken is a clear error. */
    struct emu_link a, b;
    char error[256];
    int granted;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK(emu_links_open_socket(&a, 0, &granted, error, sizeof error));
    CHECK(!emu_links_open_socket(&b, a.port, &granted, error, sizeof error));
    CHECK_CONTAINS(error, "cannot bind UDP port 127.0.0.1:");
    CHECK_CONTAINS(error, "--base-port");
    close(a.fd);
}

int main(void)
{
    test_plan();
    test_port_range();
    test_sockets();
    return check_report("emu.links");
}
