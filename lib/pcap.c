#include "lib/pcap.h"

#include "lib/le.h"

void pcap_file_header(uint8_t out[PCAP_FILE_HEADER_SIZE], uint32_t snapshot_length)
{
    le_put_u32(out, PCAP_MAGIC_MICROSECONDS);
    le_put_u16(out + 4, 2);  /* version 2.4 */
    le_put_u16(out + 6, 4);
    le_put_u32(out + 8, 0);  /* this zone: UTC */
    le_put_u32(out + 12, 0); /* timestamp accuracy, always 0 */
    le_put_u32(out + 16, snapshot_length);
    le_put_u32(out + 20, PCAP_LINKTYPE_ETHERNET);
}

void pcap_record_header(uint8_t out[PCAP_RECORD_HEADER_SIZE], uint64_t time_ns,
                        uint32_t captured_length, uint32_t original_length)
{
    le_put_u32(out, (uint32_t)(time_ns / 1000000000u));
    le_put_u32(out + 4, (uint32_t)(time_ns % 1000000000u / 1000u));
    le_put_u32(out + 8, captured_length);
    le_put_u32(out + 12, original_length);
}
