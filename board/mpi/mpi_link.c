/*
 * Link driver for the MPI board: link L of rank R is the pair of MPI
 * message streams to and from the neighbour across L, on MPI_COMM_WORLD.
 * A frame goes out as one MPI_BYTE message tagged with the sender's link
 * number, so the two links between the ends of a ring of two (x+ and x-
 * reach the same rank) stay apart: link M receives from its neighbour with
 * the tag of the opposite link.  Every frame is the same bytes as on the
 * other boards (the link layer's tag included).
 *
 * Nothing blocks: MPI_LINK_RECEIVES receives stay posted per link and are
 * completed by MPI_Test (MPI matches them in posting order, so the oldest
 * is tested first); a send copies the frame into one of MPI_LINK_SENDS
 * buffers and MPI_Isend's it, and is busy (the caller keeps the frame)
 * while all of them are in flight, as a full device ring is.  A dead
 * neighbour's sends may never complete: they hold their buffers, the link
 * reports busy, and the link layer declares the link down as it would for
 * a silent cable.
 */
#include "net/torus/driver.h"

#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "board/mpi/mpi_board.h"

#define MPI_LINK_RECEIVES 16
#define MPI_LINK_SENDS 16

struct mpi_link {
    bool present;
    int peer;
    int send_tag, receive_tag;
    MPI_Request receive[MPI_LINK_RECEIVES];
    unsigned receive_oldest;
    MPI_Request send[MPI_LINK_SENDS];
    unsigned send_next;
    uint8_t receive_buffer[MPI_LINK_RECEIVES][CONFIG_MAX_FRAME];
    uint8_t send_buffer[MPI_LINK_SENDS][CONFIG_MAX_FRAME];
    struct torus_driver_counters counters;
};

static struct mpi_link links[CONFIG_MAX_LINKS];
static char error_line[200];

const char *torus_driver_name(void)
{
    return "mpi";
}

static bool post_receive(struct mpi_link *l, unsigned slot)
{
    return MPI_Irecv(l->receive_buffer[slot], CONFIG_MAX_FRAME, MPI_BYTE, l->peer,
                     l->receive_tag, MPI_COMM_WORLD, &l->receive[slot]) == MPI_SUCCESS;
}

static bool fail(const char **error, const char *format, long a, long b)
{
    snprintf(error_line, sizeof error_line, format, a, b);
    *error = error_line;
    return false;
}

bool torus_driver_init(const struct torus_geometry *geometry, uint32_t rank,
                       uint32_t *link_mask, const char **error)
{
    *link_mask = 0;
    if (mpi_board_argument_count() > 0) {
        snprintf(error_line, sizeof error_line,
                 "mpi: unknown option '%s' (the MPI board's links need no options)",
                 mpi_board_argument(0));
        *error = error_line;
        return false;
    }
    int world_rank = 0, world_size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if ((long)rank != world_rank)
        return fail(error, "mpi: the personality is node %ld's but this is MPI rank %ld "
                           "(expected the rank's own personality: use %%r in the file name)",
                    (long)rank, world_rank);
    if (torus_geometry_node_count(geometry) > (uint32_t)world_size)
        return fail(error, "mpi: the torus has %ld nodes but the MPI world only %ld ranks "
                           "(expected mpiexec -n at least the torus's node count)",
                    (long)torus_geometry_node_count(geometry), world_size);
    uint32_t mask = torus_geometry_link_mask(geometry, rank);
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        struct mpi_link *l = &links[link];
        l->present = (mask & (1u << link)) != 0;
        for (unsigned s = 0; s < MPI_LINK_SENDS; s++)
            l->send[s] = MPI_REQUEST_NULL;
        for (unsigned s = 0; s < MPI_LINK_RECEIVES; s++)
            l->receive[s] = MPI_REQUEST_NULL;
        if (!l->present)
            continue;
        l->peer = (int)torus_geometry_neighbour(geometry, rank, link);
        l->send_tag = (int)link;
        l->receive_tag = (int)torus_geometry_opposite_link(link);
        for (unsigned s = 0; s < MPI_LINK_RECEIVES; s++)
            if (!post_receive(l, s))
                return fail(error, "mpi: cannot post a receive on link %ld to rank %ld",
                            (long)link, l->peer);
    }
    *link_mask = mask;
    return true;
}

bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length)
{
    if (link >= CONFIG_MAX_LINKS || !links[link].present)
        return true; /* no cable: the frame is lost, as on hardware */
    struct mpi_link *l = &links[link];
    if (length > CONFIG_MAX_FRAME) {
        l->counters.send_errors++;
        return true;
    }
    for (unsigned tried = 0; tried < MPI_LINK_SENDS; tried++) {
        unsigned slot = (l->send_next + tried) % MPI_LINK_SENDS;
        if (l->send[slot] != MPI_REQUEST_NULL) {
            int done = 0;
            if (MPI_Test(&l->send[slot], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                l->counters.send_errors++;
                l->send[slot] = MPI_REQUEST_NULL;
            } else if (!done) {
                continue;
            }
        }
        memcpy(l->send_buffer[slot], frame, length);
        if (MPI_Isend(l->send_buffer[slot], (int)length, MPI_BYTE, l->peer, l->send_tag,
                      MPI_COMM_WORLD, &l->send[slot]) != MPI_SUCCESS) {
            l->send[slot] = MPI_REQUEST_NULL;
            l->counters.send_errors++; /* the link layer notices the loss */
            return true;
        }
        l->send_next = (slot + 1) % MPI_LINK_SENDS;
        l->counters.sent++;
        return true;
    }
    l->counters.send_busy++;
    return false;
}

size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity)
{
    if (link >= CONFIG_MAX_LINKS || !links[link].present)
        return 0;
    struct mpi_link *l = &links[link];
    for (;;) {
        unsigned slot = l->receive_oldest;
        if (l->receive[slot] == MPI_REQUEST_NULL && !post_receive(l, slot))
            return 0;
        int done = 0, count = 0;
        MPI_Status status;
        if (MPI_Test(&l->receive[slot], &done, &status) != MPI_SUCCESS) {
            l->counters.receive_drops++;
            l->receive[slot] = MPI_REQUEST_NULL; /* posted again next time */
            return 0;
        }
        if (!done)
            return 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        l->receive_oldest = (slot + 1) % MPI_LINK_RECEIVES;
        size_t length = count > 0 ? (size_t)count : 0;
        bool fits = length > 0 && length <= capacity;
        if (fits)
            memcpy(buffer, l->receive_buffer[slot], length);
        if (!post_receive(l, slot))
            l->receive[slot] = MPI_REQUEST_NULL;
        if (!fits) {
            l->counters.receive_drops++;
            continue;
        }
        l->counters.received++;
        return length;
    }
}

const struct torus_driver_counters *torus_driver_counters(unsigned link)
{
    static const struct torus_driver_counters none;
    return link < CONFIG_MAX_LINKS ? &links[link].counters : &none;
}
