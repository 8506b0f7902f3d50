/*
 * The link driver interface: moves whole frames between the node and the
 * cable behind each torus link.  Each board implements it: qemu-virt with
 * board/qemu-virt/virtio_net.c (one virtio-net device per link), host with
 * board/host/udp_link.c (one UDP socket per link), mpi with
 * board/mpi/mpi_link.c (MPI point-to-point messages).  Frames are the same
 * bytes on every backend, so QEMU and host nodes can be neighbours.
 *
 * Nothing here blocks or allocates; reliability is the link layer's
 * (net/torus/link.h), routing the network's (net/torus/network.h).
 */
#ifndef NET_TORUS_DRIVER_H
#define NET_TORUS_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"

struct torus_driver_counters {
    uint64_t sent;
    uint64_t send_busy;     /* device queue full: the caller keeps the frame */
    uint64_t send_errors;   /* lost on the way out (peer gone and the like) */
    uint64_t received;
    uint64_t receive_drops; /* oversize, foreign sender, device errors */
};

/*
 * Finds and starts this node's links.  On success *link_mask has bit L set
 * for every link L that has a cable.  On a configuration the node cannot
 * run with (a NIC whose address names another node, a bad --link option),
 * returns false with a one-line *error.
 */
bool torus_driver_init(const struct torus_geometry *geometry, uint32_t rank,
                       uint32_t *link_mask, const char **error);

/* Queues one frame on a link; false when the device is full right now. */
bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length);

/* Copies the next received frame of a link into buffer; 0 when none. */
size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity);

const struct torus_driver_counters *torus_driver_counters(unsigned link);

/* "udp", "virtio-net", "mpi". */
const char *torus_driver_name(void);

#endif /* NET_TORUS_DRIVER_H */
