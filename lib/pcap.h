/*
 * The classic libpcap capture format (not pcapng), link type Ethernet,
 * microsecond timestamps, every field little-endian: the one encoder of
 * the captures tori writes (`tori-emu --pcap` on the host board,
 * `tori-sim --pcap`), readable by tcpdump, Wireshark and tshark.
 *
 *   file header (24 bytes): magic a1b2c3d4, version 2.4, zone 0,
 *                           sigfigs 0, snapshot length, link type 1
 *   record header (16 bytes): seconds, microseconds, captured length,
 *                           original length; then the captured bytes
 *
 * Pure: it fills byte buffers; the caller writes them where it wants.
 */
#ifndef LIB_PCAP_H
#define LIB_PCAP_H

#include <stdint.h>

#define PCAP_FILE_HEADER_SIZE 24u
#define PCAP_RECORD_HEADER_SIZE 16u
#define PCAP_MAGIC_MICROSECONDS 0xa1b2c3d4u
#define PCAP_LINKTYPE_ETHERNET 1u

void pcap_file_header(uint8_t out[PCAP_FILE_HEADER_SIZE], uint32_t snapshot_length);

/* A record of a frame of original_length bytes, captured_length of them
 * kept, seen at time_ns (nanoseconds since the Unix epoch, or since the
 * start of a simulation). */
void pcap_record_header(uint8_t out[PCAP_RECORD_HEADER_SIZE], uint64_t time_ns,
                        uint32_t captured_length, uint32_t original_length);

#endif /* LIB_PCAP_H */
