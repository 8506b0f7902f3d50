/*
 * tori-bench-net-core: per-frame cost of the pure network core on this
 * machine, reported as ratios to a memcpy of the same frame measured in the
 * same run (absolute nanoseconds are printed too, but only the ratios mean
 * anything across machines).  Not a test: run it on demand.
 *
 *   tori-bench-net-core [iterations-scale]
 */
#define _POSIX_C_SOURCE 199309L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/torus/dma.h"
#include "net/torus/frame.h"
#include "net/torus/link.h"
#include "net/torus/route.h"

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Best of several runs, in ns per operation. */
#define RUNS 7
#define MEASURE(result, iterations, body)                                     \
    do {                                                                      \
        double best_ = 1e30;                                                  \
        for (int run_ = 0; run_ < RUNS; run_++) {                             \
            uint64_t start_ = now_ns();                                       \
            for (unsigned long i_ = 0; i_ < (iterations); i_++) {             \
                body;                                                         \
            }                                                                 \
            double per_ = (double)(now_ns() - start_) / (double)(iterations); \
            if (per_ < best_)                                                 \
                best_ = per_;                                                 \
        }                                                                     \
        (result) = best_;                                                     \
    } while (0)

static uint8_t frame[CONFIG_MAX_FRAME];
static uint8_t copy[CONFIG_MAX_FRAME];
static uint8_t payload[TORUS_FRAME_MAX_PAYLOAD];
static struct torus_dma_ring ring;
static struct torus_link link_a, link_b;

static void handler(void *context, const struct torus_frame_header *header,
                    const uint8_t *body, uint8_t *bytes, size_t length)
{
    (void)body;
    (void)bytes;
    *(uint64_t *)context += header->source + length;
}

static void bench_frame_size(size_t payload_length, unsigned long scale)
{
    struct torus_frame_header h;
    memset(&h, 0, sizeof(h));
    h.type = TORUS_FRAME_TYPE_MEMBERSHIP;
    h.ttl = 8;
    h.source = 3;
    h.destination = 60;
    for (size_t i = 0; i < payload_length; i++)
        payload[i] = (uint8_t)i;
    size_t length = torus_frame_encode(&h, payload, payload_length, NULL, frame, sizeof(frame));
    unsigned long n = scale * (payload_length > 200 ? 2000ul : 20000ul);

    double copy_ns, encode_ns, decode_ns, dma_ns, link_ns;
    MEASURE(copy_ns, n * 10, {
        memcpy(copy, frame, length);
        __asm__ volatile("" : : "r"(copy) : "memory");
    });
    MEASURE(encode_ns, n, {
        h.epoch = i_;
        sink += torus_frame_encode(&h, payload, payload_length, NULL, copy, sizeof(copy));
    });
    struct torus_frame_header out;
    MEASURE(decode_ns, n, {
        sink += (uint64_t)torus_frame_decode(frame, length, 64, NULL, &out, NULL) + out.epoch;
    });
    /* Inject into a reception ring and poll it back (decode included). */
    static const struct torus_dma_dispatch table = {
        .handler = {[TORUS_FRAME_TYPE_MEMBERSHIP] = handler},
    };
    uint64_t seen = 0;
    torus_dma_ring_init(&ring, 64, NULL);
    MEASURE(dma_ns, n, {
        torus_dma_inject(&ring, frame, length, NULL);
        torus_dma_poll(&ring, 1, &table, &seen);
    });
    sink += seen;
    /* Link send (stamp, reseal, keep a copy) + receive + the ack back. */
    struct torus_link_config c;
    torus_link_config_defaults(&c);
    c.local_rank = 3;
    c.peer_rank = 60;
    c.local_link = 0;
    c.incarnation = 1;
    torus_link_init(&link_a, &c);
    c.local_rank = 60;
    c.peer_rank = 3;
    c.local_link = 1;
    c.incarnation = 2;
    torus_link_init(&link_b, &c);
    static struct torus_link_outbox out_box;
    for (int step = 0; step < 3; step++) {
        struct torus_link *from = step % 2 == 0 ? &link_a : &link_b;
        struct torus_link *to = step % 2 == 0 ? &link_b : &link_a;
        torus_link_tick(from, 0, &out_box);
        for (unsigned k = 0; k < out_box.count; k++) {
            torus_frame_decode(out_box.frame[k], out_box.length[k], 64, NULL, &out, NULL);
            torus_link_receive(to, &out, 0);
        }
    }
    if (!torus_link_is_up(&link_a) || !torus_link_is_up(&link_b)) {
        fprintf(stderr, "tori-bench-net-core: link handshake failed (expected both up)\n");
        exit(1);
    }
    MEASURE(link_ns, n, {
        memcpy(copy, frame, length);
        torus_link_send(&link_a, copy, length, i_);
        torus_frame_decode(copy, length, 64, NULL, &out, NULL);
        torus_link_receive(&link_b, &out, i_);
        if (torus_link_tick(&link_b, i_ + 2000000, &out_box) > 0) { /* the ack */
            torus_frame_decode(out_box.frame[0], out_box.length[0], 64, NULL, &out, NULL);
            torus_link_receive(&link_a, &out, i_);
        }
    });
    if (torus_link_counter(&link_b, TORUS_LINK_COUNT_DELIVERED) == 0) {
        fprintf(stderr, "tori-bench-net-core: nothing delivered over the link (expected all)\n");
        exit(1);
    }

    printf("frame of %zu bytes (payload %zu):\n", length, payload_length);
    printf("  memcpy            %9.1f ns  (1.00)\n", copy_ns);
    printf("  encode            %9.1f ns  (%.2f x memcpy)\n", encode_ns, encode_ns / copy_ns);
    printf("  decode            %9.1f ns  (%.2f x memcpy)\n", decode_ns, decode_ns / copy_ns);
    printf("  dma inject+poll   %9.1f ns  (%.2f x memcpy, %.2f x decode)\n", dma_ns,
           dma_ns / copy_ns, dma_ns / decode_ns);
    printf("  link round        %9.1f ns  (%.2f x memcpy, %.2f x decode)"
           "  send+receive+ack\n",
           link_ns, link_ns / copy_ns, link_ns / decode_ns);
}

static void bench_route(unsigned long scale)
{
    struct torus_geometry g;
    const uint32_t sizes[] = {16, 8, 8};
    if (torus_geometry_init(&g, 3, sizes, NULL, NULL) != TORUS_GEOMETRY_OK) {
        fprintf(stderr, "tori-bench-net-core: geometry 16x8x8 refused\n");
        exit(1);
    }
    const uint32_t nodes = torus_geometry_node_count(&g);
    enum { PAIRS = 4096 };
    static uint32_t from[PAIRS], to[PAIRS];
    uint64_t x = 88172645463325252ull;
    for (unsigned i = 0; i < PAIRS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        from[i] = (uint32_t)(x % nodes);
        to[i] = (uint32_t)((x >> 32) % nodes);
    }
    unsigned long n = scale * 200000ul;
    double copy_ns, hop_ns, hop_fault_ns, distance_ns, path_ns;
    struct torus_frame_header h;
    memset(&h, 0, sizeof(h));
    h.type = TORUS_FRAME_TYPE_PING;
    h.ttl = 1;
    size_t length = torus_frame_encode(&h, payload, 64, NULL, frame, sizeof(frame));
    MEASURE(copy_ns, n, {
        memcpy(copy, frame, length);
        __asm__ volatile("" : : "r"(copy) : "memory");
    });
    MEASURE(hop_ns, n, {
        sink += (uint64_t)torus_route_next_hop(&g, from[i_ % PAIRS], to[i_ % PAIRS],
                                               TORUS_ROUTE_ALL_LINKS_UP);
    });
    MEASURE(hop_fault_ns, n, {
        sink += (uint64_t)torus_route_next_hop(&g, from[i_ % PAIRS], to[i_ % PAIRS],
                                               0xFFFu & ~0x15u); /* x+ y+ z+ down */
    });
    MEASURE(distance_ns, n, {
        sink += torus_geometry_distance(&g, from[i_ % PAIRS], to[i_ % PAIRS]);
    });
    uint64_t hops = 0;
    for (unsigned i = 0; i < PAIRS; i++)
        hops += torus_route_path_length(&g, from[i], to[i]);
    MEASURE(path_ns, n / 16, {
        sink += torus_route_path_length(&g, from[i_ % PAIRS], to[i_ % PAIRS]);
    });
    double mean_hops = (double)hops / PAIRS;
    printf("routing on a 16x8x8 torus (random pairs, mean %.2f hops):\n", mean_hops);
    printf("  memcpy 124-byte frame %7.1f ns  (1.00)\n", copy_ns);
    printf("  next hop, all up      %7.1f ns  (%.2f x memcpy)\n", hop_ns, hop_ns / copy_ns);
    printf("  next hop, 3 links down%7.1f ns  (%.2f x memcpy)\n", hop_fault_ns,
           hop_fault_ns / copy_ns);
    printf("  hop distance          %7.1f ns  (%.2f x memcpy)\n", distance_ns,
           distance_ns / copy_ns);
    printf("  whole path walk       %7.1f ns  (%.2f x next hop per hop)\n", path_ns,
           path_ns / (mean_hops * hop_ns));
}

int main(int argc, char **argv)
{
    unsigned long scale = 1;
    if (argc > 1) {
        char *end = NULL;
        scale = strtoul(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || scale < 1 || scale > 1000) {
            fprintf(stderr, "tori-bench-net-core: iterations-scale '%s' is invalid "
                            "(expected a whole number 1..1000)\n", argv[1]);
            return 2;
        }
    }
    if (argc > 2) {
        fprintf(stderr, "tori-bench-net-core: too many arguments (expected at most "
                        "an iterations-scale)\n");
        return 2;
    }
    printf("tori-bench-net-core: best of %d runs; ratios are to a memcpy of the same "
           "frame in this run\n", RUNS);
    bench_frame_size(64, scale);
    bench_frame_size(TORUS_FRAME_MAX_PAYLOAD, scale);
    bench_route(scale);
    return sink == 42 ? 3 : 0; /* keeps sink alive */
}
