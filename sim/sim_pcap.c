#include "sim/sim_pcap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tools/pcap_file.h"

struct sim_pcap {
    uint32_t node_count;
    bool failed; /* a write failed */
    FILE *files[];
};

/* Files the process keeps besides the captures (stdio, an --emit-script). */
#define SIM_PCAP_SPARE_FILES 16u

struct sim_pcap *sim_pcap_open(const char *dir, uint32_t node_count, char *error,
                               size_t capacity)
{
    struct stat info;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(error, capacity, "--pcap: cannot create '%s': %s (expected a writable directory)",
                 dir, strerror(errno));
        return NULL;
    }
    if (stat(dir, &info) != 0 || !S_ISDIR(info.st_mode)) {
        snprintf(error, capacity, "--pcap: '%s' is not a directory", dir);
        return NULL;
    }
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
        getrlimit(RLIMIT_NOFILE, &limit);
    }
    if (limit.rlim_cur != RLIM_INFINITY &&
        (uint64_t)node_count + SIM_PCAP_SPARE_FILES > (uint64_t)limit.rlim_cur) {
        snprintf(error, capacity,
                 "--pcap writes a file per node: %" PRIu32 " nodes need %" PRIu32
                 " open files, this process may hold %" PRIu64 " (expected a smaller torus)",
                 node_count, node_count + SIM_PCAP_SPARE_FILES, (uint64_t)limit.rlim_cur);
        return NULL;
    }
    struct sim_pcap *pcap = calloc(1, sizeof *pcap + node_count * sizeof pcap->files[0]);
    if (pcap == NULL) {
        snprintf(error, capacity, "--pcap: out of memory");
        return NULL;
    }
    pcap->node_count = node_count;
    for (uint32_t id = 0; id < node_count; id++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/node%" PRIu32 ".pcap", dir, id);
        pcap->files[id] = pcap_file_create(path);
        if (pcap->files[id] == NULL) {
            snprintf(error, capacity, "--pcap: cannot create '%s': %s", path, strerror(errno));
            sim_pcap_close(pcap);
            return NULL;
        }
    }
    return pcap;
}

/* 02:74:RR:RR:RR:ff, the rank big-endian; ff: no link (see sim_pcap.h). */
static void rank_mac(uint8_t mac[TORUS_FRAME_MAC_SIZE], uint32_t rank)
{
    mac[0] = 0x02;
    mac[1] = 0x74;
    mac[2] = (uint8_t)(rank >> 16);
    mac[3] = (uint8_t)(rank >> 8);
    mac[4] = (uint8_t)rank;
    mac[5] = 0xff;
}

void sim_pcap_frame(struct sim_pcap *pcap, uint32_t node, uint64_t time_ns,
                    struct torus_frame_header *header, const uint8_t *payload, size_t length)
{
    if (node >= pcap->node_count)
        return;
    rank_mac(header->destination_mac, header->destination);
    rank_mac(header->source_mac, header->source);
    uint8_t frame[TORUS_FRAME_MAX_SIZE];
    size_t size = torus_frame_encode(header, payload, length, NULL, frame, sizeof frame);
    if (size == 0 || !pcap_file_write(pcap->files[node], time_ns, frame, size))
        pcap->failed = true;
}

bool sim_pcap_close(struct sim_pcap *pcap)
{
    if (pcap == NULL)
        return true;
    bool ok = !pcap->failed;
    for (uint32_t id = 0; id < pcap->node_count; id++)
        if (pcap->files[id] != NULL && fclose(pcap->files[id]) != 0)
            ok = false;
    free(pcap);
    return ok;
}
