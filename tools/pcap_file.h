/*
 * The host tools' pcap writer: a capture file in the classic libpcap format
 * (lib/pcap.h encodes it), one frame per record.  Used by tori-sim --pcap;
 * host nodes write theirs with the same encoder (board/host/udp_link.c),
 * QEMU nodes through QEMU's filter-dump.
 */
#ifndef TOOLS_PCAP_FILE_H
#define TOOLS_PCAP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Creates (truncates) path and writes the file header; NULL with errno set
 * when it cannot. */
FILE *pcap_file_create(const char *path);

/* Appends a frame seen at time_ns; false when the write failed. */
bool pcap_file_write(FILE *file, uint64_t time_ns, const uint8_t *frame, size_t length);

#endif /* TOOLS_PCAP_FILE_H */
