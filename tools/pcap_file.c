#include "tools/pcap_file.h"

#include "config/tori_config.h"
#include "lib/pcap.h"

FILE *pcap_file_create(const char *path)
{
    FILE *file = fopen(path, "wbe");
    if (file == NULL)
        return NULL;
    uint8_t header[PCAP_FILE_HEADER_SIZE];
    pcap_file_header(header, CONFIG_MAX_FRAME);
    if (fwrite(header, sizeof header, 1, file) != 1) {
        fclose(file);
        return NULL;
    }
    return file;
}

bool pcap_file_write(FILE *file, uint64_t time_ns, const uint8_t *frame, size_t length)
{
    uint8_t header[PCAP_RECORD_HEADER_SIZE];
    pcap_record_header(header, time_ns, (uint32_t)length, (uint32_t)length);
    return fwrite(header, sizeof header, 1, file) == 1 &&
           (length == 0 || fwrite(frame, length, 1, file) == 1);
}
