/* lib/pcap.h: the classic libpcap headers, byte for byte as tcpdump and
 * tshark read them (little-endian, microseconds, link type Ethernet). */
#include <stdint.h>
#include <string.h>

#include "lib/pcap.h"
#include "tests/check.h"

int main(void)
{
    uint8_t file[PCAP_FILE_HEADER_SIZE];
    pcap_file_header(file, 1518);
    static const uint8_t expected_file[PCAP_FILE_HEADER_SIZE] = {
        0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0xee, 0x05, 0, 0, 1, 0, 0, 0};
    CHECK(memcmp(file, expected_file, sizeof file) == 0);

    /* 1.5 s and 999 ns: the nanoseconds below a microsecond are cut, not
     * rounded into the next second. */
    uint8_t record[PCAP_RECORD_HEADER_SIZE];
    pcap_record_header(record, 1500000999ull, 60, 64);
    static const uint8_t expected_record[PCAP_RECORD_HEADER_SIZE] = {
        1, 0, 0, 0, 0x20, 0xa1, 0x07, 0, 60, 0, 0, 0, 64, 0, 0, 0};
    CHECK(memcmp(record, expected_record, sizeof record) == 0);

    /* A wall-clock time past 2038 still fits the unsigned seconds. */
    pcap_record_header(record, 3000000000ull * 1000000000u + 999999000u, 1, 1);
    CHECK_EQ((uint32_t)(record[0] | record[1] << 8 | record[2] << 16) | (uint32_t)record[3] << 24,
             3000000000u);
    CHECK_EQ(record[4] | record[5] << 8 | record[6] << 16, 999999);
    return check_report(__FILE__);
}
