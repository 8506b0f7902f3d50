/*
 * tori-sim --pcap DIR: the simulated traffic as captures, one per node
 * (DIR/nodeN.pcap: the frames it sent, stamped when they left, and the
 * frames it received, stamped when they arrived), each message wrapped in
 * the torus frame a node would put on the wire, timestamps in virtual time
 * (the run starts at the Unix epoch).  The simulator delivers end to end,
 * so the frames name no link: their MACs end in ff (net/torus/frame.h).
 */
#ifndef SIM_SIM_PCAP_H
#define SIM_SIM_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/frame.h"

struct sim_pcap;

/*
 * Creates DIR (its parent must exist) and a capture per node; NULL with a
 * one-line reason in error when it cannot, or when this process may not
 * hold a file per node open.
 */
struct sim_pcap *sim_pcap_open(const char *dir, uint32_t node_count, char *error,
                               size_t capacity);

/* Appends to node's capture the frame of header (MACs and checksum filled
 * here) and payload, at time_ns. */
void sim_pcap_frame(struct sim_pcap *pcap, uint32_t node, uint64_t time_ns,
                    struct torus_frame_header *header, const uint8_t *payload, size_t length);

/* Closes every capture; false if a write failed along the way. */
bool sim_pcap_close(struct sim_pcap *pcap);

#endif /* SIM_SIM_PCAP_H */
