/*
 * The link driver's self-test image (node-linktest.elf on qemu-virt; never
 * part of node.elf).  It drives net/torus/driver.h directly, with nothing
 * of the network stack above it, so a QEMU test can see exactly what the
 * driver does on a torus wired by the launcher.
 *
 * It is the image's services module (kernel/services.h) in place of the
 * node's (node/services.c): the kernel boots as on every node (boot line,
 * personality, timers, console, run phase, ready line), so that the same
 * harness reads both; the difference is that the driver is started here
 * and a bad NIC halts the node with the driver's one-line error.
 *
 * Console commands (replies are event lines):
 *   linktest [COUNT [PAYLOAD]]   sends COUNT (1) ping frames of PAYLOAD
 *                                bytes (5..TORUS_FRAME_MAX_PAYLOAD) on every
 *                                present link; with COUNT 1 the receiver
 *                                writes one linktest-rx line per frame
 *   linkstats                    one line per link: driver counters and
 *                                what the receiver checked
 *   linkrtt [COUNT]              COUNT (20, at most RTT_SAMPLES_MAX) echo
 *                                round trips, one at a time, over the
 *                                lowest present link: the peer's selftest
 *                                answers each with a pong; one linkrtt line
 *                                with min, median, p90 and max (a
 *                                measurement, not a test of time)
 * Every received frame is checked: a valid tori ping, from the neighbour
 * the geometry puts behind that link, sent on the opposite link (its source
 * MAC), addressed to this NIC, in sequence.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/panic.h"
#include "kernel/personality.h"
#include "kernel/poll.h"
#include "kernel/services.h"
#include "kernel/timer.h"
#include "net/torus/driver.h"
#include "net/torus/frame.h"
#include "net/torus/geometry.h"

/* Payload: sequence (4 bytes, little-endian), flags, then padding. */
#define PAYLOAD_MIN 5u
#define PAYLOAD_OFFSET_FLAGS 4u
#define PAYLOAD_FLAG_REPORT 1u /* the receiver writes a linktest-rx line */
#define PAYLOAD_FLAG_ECHO 2u   /* the receiver answers with a pong */
#define RECEIVE_BUDGET 16u /* frames per link per poll pass */
#define RTT_SAMPLES_MAX 256u
#define RTT_COUNT_DEFAULT 20u
#define RTT_LOST_AFTER_NS 1000000000u /* an echo not back in 1 s is lost */

struct selftest_link {
    uint32_t peer;
    uint32_t to_send;
    uint32_t next_sequence;  /* of the next frame sent */
    uint32_t expected;       /* sequence expected next */
    uint32_t payload_length; /* of frames still to send */
    bool report;
    uint64_t good;
    uint64_t bad;
    uint64_t out_of_order;
    uint64_t echoed;
};

/* The round-trip measurement of linkrtt (one echo outstanding at a time). */
struct selftest_rtt {
    unsigned link;
    uint32_t remaining;
    uint32_t sequence;
    bool outstanding;
    uint64_t sent_ns;
    uint32_t lost;
    uint32_t count;
    uint32_t samples_ns[RTT_SAMPLES_MAX];
    timer_id timer;
};

static struct torus_geometry geometry;
static uint32_t rank;
static uint32_t link_mask;
static struct selftest_link test_links[CONFIG_MAX_LINKS];
static uint8_t frame[CONFIG_MAX_FRAME];
static uint8_t payload[TORUS_FRAME_MAX_PAYLOAD];
static struct selftest_rtt rtt;

static void read_geometry(const struct personality *personality)
{
    rank = personality->node_id;
    uint32_t sizes[CONFIG_MAX_DIMS];
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        sizes[d] = personality->dim_size[d];
        mesh[d] = personality_is_mesh(personality, d);
    }
    if (torus_geometry_init(&geometry, personality->dims, sizes, mesh, NULL) !=
        TORUS_GEOMETRY_OK)
        kernel_panic("linktest: the personality's dimensions make no geometry");
}

/* Decimal number at *text (advanced past it and spaces); false if none. */
static bool parse_u32(const char **text, uint32_t *value)
{
    const char *c = *text;
    uint64_t v = 0;
    if (*c < '0' || *c > '9')
        return false;
    while (*c >= '0' && *c <= '9') {
        v = v * 10u + (uint64_t)(*c - '0');
        if (v > UINT32_MAX)
            return false;
        c++;
    }
    while (*c == ' ')
        c++;
    *value = (uint32_t)v;
    *text = c;
    return true;
}

static void command_linktest(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)now_ns;
    uint32_t count = 1;
    uint32_t length = PAYLOAD_MIN;
    if (*arguments != '\0' && !parse_u32(&arguments, &count)) {
        console_command_reply_error("linktest: expected linktest [COUNT [PAYLOAD]]");
        return;
    }
    if (*arguments != '\0' && !parse_u32(&arguments, &length)) {
        console_command_reply_error("linktest: expected linktest [COUNT [PAYLOAD]]");
        return;
    }
    if (*arguments != '\0' || count == 0 || length < PAYLOAD_MIN ||
        length > TORUS_FRAME_MAX_PAYLOAD) {
        console_command_reply_error("linktest: expected COUNT >= 1 and PAYLOAD 5..1450 bytes");
        return;
    }
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if ((link_mask & (1u << link)) == 0)
            continue;
        test_links[link].to_send += count;
        test_links[link].payload_length = length;
        test_links[link].report = count == 1;
    }
    event_begin("linktest-start");
    event_add_u64("count", count);
    event_add_u64("frame_bytes", TORUS_FRAME_HEADER_SIZE + length);
    event_end();
}

static void command_linkstats(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)arguments;
    (void)now_ns;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if ((link_mask & (1u << link)) == 0)
            continue;
        const struct torus_driver_counters *c = torus_driver_counters(link);
        const struct selftest_link *t = &test_links[link];
        event_begin("linkstats");
        event_add_str("link", torus_geometry_link_name(link));
        event_add_u64("sent", c->sent);
        event_add_u64("send_busy", c->send_busy);
        event_add_u64("send_errors", c->send_errors);
        event_add_u64("received", c->received);
        event_add_u64("receive_drops", c->receive_drops);
        event_add_u64("good", t->good);
        event_add_u64("bad", t->bad);
        event_add_u64("out_of_order", t->out_of_order);
        event_add_u64("unsent", t->to_send);
        event_add_u64("echoed", t->echoed);
        event_end();
    }
}

/* Sends one selftest frame of type on link; false when the device is full. */
static bool send_frame(unsigned link, uint32_t peer, uint8_t type, uint32_t sequence,
                       uint8_t flags, uint32_t payload_length)
{
    struct torus_frame_header header;
    memset(&header, 0, sizeof header);
    torus_frame_mac_for_link(peer, torus_geometry_opposite_link(link),
                             header.destination_mac);
    torus_frame_mac_for_link(rank, link, header.source_mac);
    header.type = type;
    header.ttl = 1;
    header.source = rank;
    header.destination = peer;
    memset(payload, 0, payload_length);
    payload[0] = (uint8_t)sequence;
    payload[1] = (uint8_t)(sequence >> 8);
    payload[2] = (uint8_t)(sequence >> 16);
    payload[3] = (uint8_t)(sequence >> 24);
    payload[PAYLOAD_OFFSET_FLAGS] = flags;
    size_t length = torus_frame_encode(&header, payload, payload_length, NULL, frame,
                                       sizeof frame);
    if (length == 0)
        kernel_panic("linktest: a test frame did not encode");
    return torus_driver_send(link, frame, length);
}

static bool send_one(unsigned link, struct selftest_link *t)
{
    return send_frame(link, t->peer, TORUS_FRAME_TYPE_PING, t->next_sequence,
                      t->report ? PAYLOAD_FLAG_REPORT : 0u, t->payload_length);
}

/* Sends the next echo request of linkrtt, or reports when all are done. */
static void rtt_next(uint64_t now_ns)
{
    if (rtt.remaining == 0) {
        rtt.outstanding = false;
        timer_disarm(timer_kernel_table(), rtt.timer);
        uint32_t *s = rtt.samples_ns;
        for (uint32_t i = 1; i < rtt.count; i++) { /* insertion sort: <= 256 */
            uint32_t value = s[i];
            uint32_t j = i;
            for (; j > 0 && s[j - 1] > value; j--)
                s[j] = s[j - 1];
            s[j] = value;
        }
        event_begin("linkrtt");
        event_add_str("link", torus_geometry_link_name(rtt.link));
        event_add_u64("count", rtt.count);
        event_add_u64("lost", rtt.lost);
        if (rtt.count > 0) {
            event_add_u64("min_ns", s[0]);
            event_add_u64("median_ns", s[rtt.count / 2]);
            event_add_u64("p90_ns", s[(rtt.count * 9) / 10]);
            event_add_u64("max_ns", s[rtt.count - 1]);
        }
        event_end();
        return;
    }
    rtt.remaining--;
    rtt.sequence++;
    rtt.outstanding = true;
    rtt.sent_ns = now_ns;
    timer_arm(timer_kernel_table(), rtt.timer, now_ns + RTT_LOST_AFTER_NS);
    /* A full device counts as a lost echo: the timer moves on. */
    (void)send_frame(rtt.link, test_links[rtt.link].peer, TORUS_FRAME_TYPE_PING,
                     rtt.sequence, PAYLOAD_FLAG_ECHO, PAYLOAD_MIN);
}

static void rtt_timeout(void *context, uint64_t now_ns)
{
    (void)context;
    if (!rtt.outstanding)
        return;
    rtt.lost++;
    rtt_next(now_ns);
}

static void rtt_answer(uint32_t sequence, uint64_t now_ns)
{
    if (!rtt.outstanding || sequence != rtt.sequence)
        return; /* late answer to an echo already counted lost */
    uint64_t elapsed = now_ns - rtt.sent_ns;
    if (rtt.count < RTT_SAMPLES_MAX)
        rtt.samples_ns[rtt.count++] = elapsed > UINT32_MAX ? UINT32_MAX : (uint32_t)elapsed;
    rtt_next(now_ns);
}

static void command_linkrtt(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    uint32_t count = RTT_COUNT_DEFAULT;
    if ((*arguments != '\0' && !parse_u32(&arguments, &count)) || *arguments != '\0' ||
        count == 0 || count > RTT_SAMPLES_MAX) {
        console_command_reply_error("linkrtt: expected linkrtt [COUNT], COUNT 1..256");
        return;
    }
    if (link_mask == 0) {
        console_command_reply_error("linkrtt: no link is cabled");
        return;
    }
    if (rtt.outstanding) {
        console_command_reply_error("linkrtt: a measurement is running");
        return;
    }
    rtt.link = (unsigned)__builtin_ctz(link_mask);
    rtt.remaining = count;
    rtt.count = 0;
    rtt.lost = 0;
    rtt_next(now_ns);
}

static void report_bad(unsigned link, const char *reason)
{
    event_begin("linktest-bad");
    event_add_str("link", torus_geometry_link_name(link));
    event_add_str("reason", reason);
    event_end();
}

/* Checks one received frame; see the top of this file. */
static void check_received(unsigned link, struct selftest_link *t, size_t length,
                           uint64_t now_ns)
{
    struct torus_frame_header header;
    const uint8_t *body = NULL;
    enum torus_frame_status status =
        torus_frame_decode(frame, length, torus_geometry_node_count(&geometry), NULL,
                           &header, &body);
    if (status != TORUS_FRAME_OK) {
        t->bad++;
        report_bad(link, torus_frame_status_name(status));
        return;
    }
    uint32_t mac_rank = 0;
    unsigned mac_link = 0;
    uint8_t own_mac[TORUS_FRAME_MAC_SIZE];
    torus_frame_mac_for_link(rank, link, own_mac);
    const char *wrong = NULL;
    if ((header.type != TORUS_FRAME_TYPE_PING && header.type != TORUS_FRAME_TYPE_PONG) ||
        header.payload_length < PAYLOAD_MIN)
        wrong = "not_a_linktest_ping";
    else if (header.source != t->peer || header.destination != rank)
        wrong = "wrong_ranks";
    else if (!torus_frame_mac_parse(header.source_mac, &mac_rank, &mac_link) ||
             mac_rank != t->peer || mac_link != torus_geometry_opposite_link(link))
        wrong = "wrong_source_mac";
    else if (memcmp(header.destination_mac, own_mac, sizeof own_mac) != 0)
        wrong = "wrong_destination_mac";
    if (wrong != NULL) {
        t->bad++;
        report_bad(link, wrong);
        return;
    }
    uint32_t sequence = (uint32_t)body[0] | (uint32_t)body[1] << 8 |
                        (uint32_t)body[2] << 16 | (uint32_t)body[3] << 24;
    uint8_t flags = body[PAYLOAD_OFFSET_FLAGS];
    if (header.type == TORUS_FRAME_TYPE_PONG) {
        rtt_answer(sequence, now_ns);
        return;
    }
    if ((flags & PAYLOAD_FLAG_ECHO) != 0) {
        t->echoed++;
        (void)send_frame(link, t->peer, TORUS_FRAME_TYPE_PONG, sequence, 0, PAYLOAD_MIN);
        return;
    }
    t->good++;
    if (sequence != t->expected)
        t->out_of_order++;
    t->expected = sequence + 1;
    if ((flags & PAYLOAD_FLAG_REPORT) != 0) {
        event_begin("linktest-rx");
        event_add_str("link", torus_geometry_link_name(link));
        event_add_u64("source", header.source);
        event_add_str("source_link", torus_geometry_link_name(mac_link));
        event_add_u64("sequence", sequence);
        event_add_u64("bytes", length);
        event_end();
    }
}

static unsigned selftest_poll(void *context, uint64_t now_ns)
{
    (void)context;
    unsigned work = 0;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if ((link_mask & (1u << link)) == 0)
            continue;
        struct selftest_link *t = &test_links[link];
        while (t->to_send > 0 && send_one(link, t)) {
            t->to_send--;
            t->next_sequence++;
            work++;
        }
        for (unsigned i = 0; i < RECEIVE_BUDGET; i++) {
            size_t length = torus_driver_receive(link, frame, sizeof frame);
            if (length == 0)
                break;
            check_received(link, t, length, now_ns);
            work++;
        }
    }
    return work;
}

static void start_links(void)
{
    const char *error = NULL;
    if (!torus_driver_init(&geometry, rank, &link_mask, &error))
        kernel_panic(error != NULL ? error : "linktest: the driver failed without a reason");
    event_begin("linktest-links");
    event_add_str("driver", torus_driver_name());
    event_add_hex("mask", link_mask);
    event_add_hex("expected", torus_geometry_link_mask(&geometry, rank));
    event_end();
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if ((link_mask & (1u << link)) == 0)
            continue;
        test_links[link].peer = torus_geometry_neighbour(&geometry, rank, link);
        event_begin("linktest-link");
        event_add_str("link", torus_geometry_link_name(link));
        event_add_u64("peer", test_links[link].peer);
        event_add_str("peer_link",
                      torus_geometry_link_name(torus_geometry_opposite_link(link)));
        event_end();
    }
}

void kernel_services_init(const struct personality *personality)
{
    read_geometry(personality);
    console_command_register("linktest", command_linktest, NULL, CONSOLE_ARGUMENTS);
    console_command_register("linkstats", command_linkstats, NULL, CONSOLE_NO_ARGUMENTS);
    console_command_register("linkrtt", command_linkrtt, NULL, CONSOLE_ARGUMENTS);
    rtt.timer = timer_add(timer_kernel_table(), "linkrtt", rtt_timeout, NULL);
    if (rtt.timer < 0)
        kernel_panic("linktest: timer table full");
    start_links();
    poll_register("linktest", selftest_poll, NULL);
}

void kernel_services_run(void)
{
    /* The self-test never stops the poll loop. */
}

void kernel_services_enter_run_phase(void)
{
    /* Nothing to do at the seal: the links were started during init. */
}
