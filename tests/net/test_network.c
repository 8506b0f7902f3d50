/*
 * The network over a fake link driver (this file implements driver.h): node
 * 0 of a ring of 4, its x+ link cabled to a link end of node 1 driven by
 * hand.  A burst of a full link window arrives at once, and the handler
 * answers its second frame (as the comm core acks part of a window): the
 * answer must reach the driver while the burst is still being handled, so
 * that the sender refills its window while this node works, not after.
 * Then the cable loses a third of node 0's data frames: the link resends
 * past the loss limit and the link handler hears LOSSY once, for x+ and
 * node 1, while the link stays up; a clean cable raises nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "net/torus/driver.h"
#include "net/torus/link.h"
#include "net/torus/network.h"
#include "tests/check.h"

#define MS 1000000ull
#define QUEUE 64u
#define X_PLUS 0u

/* ---- the fake driver: a queue of frames per link, both ways ---- */

struct fake_frame {
    size_t length;
    uint8_t bytes[CONFIG_MAX_FRAME];
};

static struct {
    struct fake_frame in[QUEUE]; /* to node 0 on x+ */
    unsigned in_head, in_count;
    struct fake_frame out[QUEUE]; /* from node 0 on x+ */
    unsigned out_count;
    unsigned out_handled[QUEUE]; /* burst frames handled when each left */
} fake;

static unsigned handled; /* burst frames the handler saw */

bool torus_driver_init(const struct torus_geometry *geometry, uint32_t rank,
                       uint32_t *link_mask, const char **error)
{
    (void)geometry;
    (void)rank;
    (void)error;
    *link_mask = 1u << X_PLUS;
    return true;
}

bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length)
{
    if (link == X_PLUS && fake.out_count < QUEUE) {
        fake.out[fake.out_count].length = length;
        memcpy(fake.out[fake.out_count].bytes, frame, length);
        fake.out_handled[fake.out_count++] = handled;
    }
    return true;
}

size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity)
{
    if (link != X_PLUS || fake.in_count == 0)
        return 0;
    struct fake_frame *f = &fake.in[fake.in_head];
    fake.in_head = (fake.in_head + 1u) % QUEUE;
    fake.in_count--;
    if (f->length > capacity)
        return 0;
    memcpy(buffer, f->bytes, f->length);
    return f->length;
}

const struct torus_driver_counters *torus_driver_counters(unsigned link)
{
    (void)link;
    static const struct torus_driver_counters none;
    return &none;
}

const char *torus_driver_name(void)
{
    return "fake";
}

static void push_in(const uint8_t *frame, size_t length)
{
    CHECK(fake.in_count < QUEUE);
    struct fake_frame *f = &fake.in[(fake.in_head + fake.in_count) % QUEUE];
    f->length = length;
    memcpy(f->bytes, frame, length);
    fake.in_count++;
}

/* ---- node 1's end of the cable ---- */

static struct torus_link peer;

/* What node 0 sent since `from` goes to node 1's link end. */
static void peer_takes(unsigned from, uint64_t now_ns)
{
    for (unsigned i = from; i < fake.out_count; i++) {
        struct torus_frame_header h;
        const uint8_t *payload;
        if (torus_frame_decode(fake.out[i].bytes, fake.out[i].length, 4, NULL, &h, &payload) ==
            TORUS_FRAME_OK)
            torus_link_receive(&peer, &h, now_ns);
    }
}

static void peer_ticks(uint64_t now_ns)
{
    struct torus_link_outbox out;
    torus_link_tick(&peer, now_ns, &out);
    for (unsigned i = 0; i < out.count; i++)
        push_in(out.frame[i], out.length[i]);
}

/* ---- node 0 ---- */

static struct torus_network network;

/* What the link handler heard, by event. */
static unsigned link_events[3];
static uint32_t lossy_neighbour = UINT32_MAX;
static unsigned lossy_link = UINT32_MAX;

static void on_link(void *context, unsigned link, uint32_t neighbour,
                    enum torus_network_link_event event, uint64_t now_ns)
{
    (void)context;
    (void)now_ns;
    CHECK((unsigned)event < 3);
    if ((unsigned)event >= 3)
        return;
    link_events[event]++;
    if (event == TORUS_NETWORK_LINK_LOSSY) {
        lossy_neighbour = neighbour;
        lossy_link = link;
    }
}

/* Node 0 sends one frame to 1 per millisecond for duration; the cable drops
 * every lose_every-th data frame (0: none) on its way to node 1. */
static void stream(uint64_t *now, uint64_t duration, unsigned lose_every)
{
    static const uint8_t payload[32];
    unsigned data_frames = 0;
    for (uint64_t end = *now + duration; *now < end; *now += 1 * MS) {
        torus_network_send(&network, 1, TORUS_FRAME_TYPE_COMM, 0, payload, sizeof payload,
                           *now);
        fake.out_count = 0;
        torus_network_poll(&network, CONFIG_RING_SIZE, *now);
        for (unsigned i = 0; i < fake.out_count; i++) {
            struct torus_frame_header h;
            if (torus_frame_decode(fake.out[i].bytes, fake.out[i].length, 4, NULL, &h, NULL) !=
                TORUS_FRAME_OK)
                continue;
            if (h.type != TORUS_FRAME_TYPE_LINK_ACK && lose_every != 0 &&
                ++data_frames % lose_every == 0)
                continue;
            torus_link_receive(&peer, &h, *now);
        }
        fake.out_count = 0;
        peer_ticks(*now);
    }
}

static void on_frame(void *context, const struct torus_frame_header *header,
                     const uint8_t *payload, uint64_t now_ns)
{
    (void)context;
    (void)payload;
    if (header->source != 1)
        return;
    if (++handled == 2) {
        static const uint8_t answer[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        CHECK_EQ(torus_network_send(&network, 1, TORUS_FRAME_TYPE_COMM, 0, answer,
                                    sizeof answer, now_ns),
                 TORUS_NETWORK_OK);
    }
}

int main(void)
{
    struct torus_network_config config;
    memset(&config, 0, sizeof config);
    uint32_t sizes[1] = {4};
    bool mesh[1] = {false};
    CHECK_EQ(torus_geometry_init(&config.geometry, 1, sizes, mesh, NULL), TORUS_GEOMETRY_OK);
    config.rank = 0;
    config.incarnation = 1;
    config.link_rto_ns = 20 * MS;
    config.link_retries = 5;
    config.link_lossy_retransmits = 20;
    config.link_lossy_window_ns = 1000 * MS;
    CHECK(torus_driver_init(&config.geometry, 0, &config.link_mask, NULL));
    torus_network_init(&network, &config);
    torus_network_set_handler(&network, TORUS_FRAME_TYPE_COMM, on_frame, NULL);
    torus_network_set_link_handler(&network, on_link, NULL);

    struct torus_link_config pc;
    torus_link_config_defaults(&pc);
    pc.local_rank = 1;
    pc.peer_rank = 0;
    pc.local_link = X_PLUS ^ 1u; /* 1's x- */
    pc.incarnation = 7;
    pc.rto_ns = 20 * MS;
    CHECK(torus_link_init(&peer, &pc));

    /* The handshake, both ends polled in turn. */
    uint64_t now = 1 * MS;
    for (unsigned round = 0; round < 8 && !(torus_link_is_up(&peer) &&
                                             (network.up_mask & (1u << X_PLUS)) != 0);
         round++, now += 1000) {
        unsigned from = fake.out_count;
        torus_network_poll(&network, CONFIG_RING_SIZE, now);
        peer_takes(from, now);
        peer_ticks(now);
    }
    CHECK(torus_link_is_up(&peer));
    CHECK((network.up_mask & (1u << X_PLUS)) != 0);

    /* A full window of frames from node 1, all waiting at once. */
    for (unsigned i = 0; i < CONFIG_LINK_WINDOW; i++) {
        struct torus_frame_header h;
        memset(&h, 0, sizeof h);
        h.type = TORUS_FRAME_TYPE_COMM;
        h.ttl = 4;
        h.source = 1;
        h.destination = 0;
        uint8_t payload[64];
        memset(payload, (int)i, sizeof payload);
        uint8_t frame[CONFIG_MAX_FRAME];
        size_t length = torus_frame_encode(&h, payload, sizeof payload, NULL, frame, sizeof frame);
        CHECK(length > 0);
        CHECK_EQ(torus_link_send(&peer, frame, length, now), TORUS_LINK_SEND_OK);
        push_in(frame, length);
    }
    unsigned from = fake.out_count;
    torus_network_poll(&network, CONFIG_RING_SIZE, now);
    CHECK_EQ(handled, CONFIG_LINK_WINDOW);
    unsigned answer_at = UINT32_MAX;
    for (unsigned i = from; i < fake.out_count; i++) {
        struct torus_frame_header h;
        const uint8_t *payload;
        if (torus_frame_decode(fake.out[i].bytes, fake.out[i].length, 4, NULL, &h, &payload) ==
                TORUS_FRAME_OK &&
            h.type == TORUS_FRAME_TYPE_COMM)
            answer_at = fake.out_handled[i];
    }
    CHECKF(answer_at < CONFIG_LINK_WINDOW / 2,
           "the answer to frame 2 left after %u of the %u frames were handled", answer_at,
           (unsigned)CONFIG_LINK_WINDOW);
    CHECK_EQ(link_events[TORUS_NETWORK_LINK_UP], 1);

    /* A clean cable: nothing resent (once the answer above, which node 1
     * never got, is through), nothing said. */
    now += 1 * MS;
    stream(&now, 100 * MS, 0);
    uint64_t before = torus_link_counter(&network.links[X_PLUS], TORUS_LINK_COUNT_RETRANSMITTED);
    stream(&now, 300 * MS, 0);
    CHECK_EQ(link_events[TORUS_NETWORK_LINK_LOSSY], 0);
    CHECK_EQ(torus_link_counter(&network.links[X_PLUS], TORUS_LINK_COUNT_RETRANSMITTED), before);
    /* A third of the data lost: resends past 20 within the second. */
    stream(&now, 300 * MS, 3);
    uint64_t resent = torus_link_counter(&network.links[X_PLUS], TORUS_LINK_COUNT_RETRANSMITTED);
    printf("lossy cable: %" PRIu64 " frames resent in 300 ms, %u lossy event(s)\n", resent - before,
           link_events[TORUS_NETWORK_LINK_LOSSY]);
    CHECK(resent > 20);
    CHECK_EQ(link_events[TORUS_NETWORK_LINK_LOSSY], 1);
    CHECK_EQ(lossy_link, X_PLUS);
    CHECK_EQ(lossy_neighbour, 1);
    CHECK_EQ(link_events[TORUS_NETWORK_LINK_DOWN], 0);
    CHECK(torus_network_link_is_up(&network, X_PLUS));
    return check_report("net.network");
}
