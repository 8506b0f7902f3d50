#include "node/flood.h"

#include <string.h>

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/timer.h"
#include "lib/le.h"
#include "net/torus/driver.h"
#include "net/torus/route.h"

_Static_assert(TORUS_FLOOD_MAX_SIZE == 1450, "the flood usage text says 1450");

static void on_flood(void *context, const struct torus_frame_header *header,
                     const uint8_t *payload, uint64_t now_ns)
{
    struct torus_flood_receiver *r = &((struct torus_flood *)context)->receiver;
    if (header->payload_length < TORUS_FLOOD_HEADER_SIZE) {
        r->malformed++;
        return;
    }
    uint32_t id = le_get_u32(payload);
    uint32_t sequence = le_get_u32(payload + 4);
    if (!r->following || r->source != header->source || r->id != id) {
        /* A new flood: follow it from here on. */
        r->following = true;
        r->source = header->source;
        r->id = id;
        r->expected = 0;
        r->frames = r->bytes = r->missing = r->old = 0;
        r->first_ns = now_ns;
    }
    r->frames++;
    r->bytes += header->payload_length;
    r->total_frames++;
    r->total_bytes += header->payload_length;
    r->last_ns = now_ns;
    if (sequence >= r->expected) {
        r->missing += sequence - r->expected;
        r->expected = sequence + 1u;
    } else {
        r->old++;
    }
}

void torus_flood_init(struct torus_flood *flood, struct torus_network *network)
{
    memset(flood, 0, sizeof *flood);
    flood->network = network;
    torus_network_set_handler(network, TORUS_FRAME_TYPE_FLOOD, on_flood, flood);
}

bool torus_flood_start(struct torus_flood *flood, uint32_t destination,
                       uint32_t count, uint32_t size, uint64_t now_ns)
{
    struct torus_flood_sender *s = &flood->sender;
    uint32_t nodes = torus_geometry_node_count(&flood->network->geometry);
    if (s->active || destination >= nodes || destination == flood->network->rank ||
        count == 0 || count > TORUS_FLOOD_MAX_COUNT || size < TORUS_FLOOD_MIN_SIZE ||
        size > TORUS_FLOOD_MAX_SIZE)
        return false;
    uint32_t id = s->id + 1u;
    memset(s, 0, sizeof *s);
    s->active = true;
    s->id = id;
    s->destination = destination;
    s->count = count;
    s->size = size;
    s->progress_ns = now_ns;
    /* The filler is the same for every frame: written once. */
    for (uint32_t i = TORUS_FLOOD_HEADER_SIZE; i < size; i++)
        flood->payload[i] = (uint8_t)(i * 7u + 1u);
    le_put_u32(flood->payload, id);
    le_put_u32(flood->payload + 8, count);
    return true;
}

static void finish(struct torus_flood *flood, bool stalled)
{
    struct torus_flood_sender *s = &flood->sender;
    s->active = false;
    event_begin("flood-done");
    event_add_u64("dst", s->destination);
    event_add_u64("count", s->count);
    event_add_u64("size", s->size);
    event_add_u64("sent", s->next);
    event_add_u64("waits", s->waits);
    event_add_u64("stalled", stalled ? 1 : 0);
    event_add_u64("elapsed_ns", s->started_ns != 0 ? s->progress_ns - s->started_ns : 0);
    event_end();
}

unsigned torus_flood_poll(struct torus_flood *flood, uint64_t now_ns)
{
    struct torus_flood_sender *s = &flood->sender;
    struct torus_network *network = flood->network;
    if (!s->active)
        return 0;
    unsigned injected = 0;
    while (injected < TORUS_FLOOD_BATCH && s->next < s->count) {
        /* Look before sending: a full ring is a wait, not a drop. */
        int link = torus_route_next_hop(&network->geometry, network->rank,
                                        s->destination, network->up_mask);
        if (link < 0 || torus_dma_is_full(&network->injection[link]))
            break;
        le_put_u32(flood->payload + 4, s->next);
        enum torus_network_status status =
            torus_network_send(network, s->destination, TORUS_FRAME_TYPE_FLOOD, 0,
                               flood->payload, s->size, now_ns);
        if (status != TORUS_NETWORK_OK)
            break;
        if (s->started_ns == 0)
            s->started_ns = now_ns;
        s->progress_ns = now_ns;
        s->next++;
        injected++;
    }
    if (s->next >= s->count) {
        finish(flood, false);
    } else if (injected == 0) {
        s->waits++;
        if (now_ns - s->progress_ns > TORUS_FLOOD_STALL_NS)
            finish(flood, true);
    }
    return injected;
}

/* ---- the node service ---- */

static struct torus_flood flood_service;

/* Decimal digits only, at most max. */
static bool parse_u32(const char **cursor, uint32_t max, uint32_t *out)
{
    const char *p = *cursor;
    while (*p == ' ')
        p++;
    uint64_t value = 0;
    const char *start = p;
    while (*p >= '0' && *p <= '9') {
        value = value * 10u + (uint64_t)(*p - '0');
        if (value > max)
            return false;
        p++;
    }
    if (p == start || (*p != ' ' && *p != '\0'))
        return false;
    *cursor = p;
    *out = (uint32_t)value;
    return true;
}

static void report_stats(const struct torus_flood *flood)
{
    const struct torus_flood_receiver *r = &flood->receiver;
    event_begin("flood-rx");
    event_add_u64("src", r->following ? r->source : 0);
    event_add_u64("id", r->following ? r->id : 0);
    event_add_u64("frames", r->frames);
    event_add_u64("bytes", r->bytes);
    event_add_u64("missing", r->missing);
    event_add_u64("old", r->old);
    event_add_u64("span_ns", r->frames > 1 ? r->last_ns - r->first_ns : 0);
    event_add_u64("total_frames", r->total_frames);
    event_add_u64("total_bytes", r->total_bytes);
    event_add_u64("malformed", r->malformed);
    event_end();

    /* Counters of every link and its driver, summed: what the load cost. */
    static const enum torus_link_counter link_counters[] = {
        TORUS_LINK_COUNT_RETRANSMITTED, TORUS_LINK_COUNT_TIMEOUTS,
        TORUS_LINK_COUNT_FAST_RETRANSMITS, TORUS_LINK_COUNT_DUPLICATES,
        TORUS_LINK_COUNT_OUT_OF_ORDER, TORUS_LINK_COUNT_STALE,
        TORUS_LINK_COUNT_WINDOW_FULL, TORUS_LINK_COUNT_NOT_UP,
        TORUS_LINK_COUNT_DISCARDED, TORUS_LINK_COUNT_DOWN_EVENTS,
    };
    const struct torus_network *network = flood->network;
    event_begin("flood-links");
    for (unsigned c = 0; c < sizeof link_counters / sizeof link_counters[0]; c++) {
        uint64_t sum = 0;
        for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++)
            sum += torus_link_counter(&network->links[link], link_counters[c]);
        event_add_u64(torus_link_counter_name(link_counters[c]), sum);
    }
    struct torus_driver_counters driver = {0};
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        if (((network->link_mask >> link) & 1u) == 0)
            continue;
        const struct torus_driver_counters *d = torus_driver_counters(link);
        if (d == NULL)
            continue;
        driver.sent += d->sent;
        driver.send_busy += d->send_busy;
        driver.send_errors += d->send_errors;
        driver.received += d->received;
        driver.receive_drops += d->receive_drops;
    }
    event_add_u64("drv_sent", driver.sent);
    event_add_u64("drv_send_busy", driver.send_busy);
    event_add_u64("drv_send_errors", driver.send_errors);
    event_add_u64("drv_received", driver.received);
    event_add_u64("drv_receive_drops", driver.receive_drops);
    uint64_t bad_frames = 0;
    for (unsigned status = 1; status < TORUS_FRAME_STATUS_COUNT; status++)
        bad_frames += network->reception.counters.frames.count[status];
    event_add_u64("bad_frames", bad_frames);
    event_end();
}

/* Frames sealed and verified per `flood check`: a few ms even on QEMU. */
#define FLOOD_CHECK_FRAMES 1000u

/*
 * `flood check SIZE`: what the check of one frame of SIZE payload bytes
 * costs on this node's CPU, per hop (the sending link seals it, the
 * receiving ring verifies it): keyless (CRC-32) and tagged (SipHash-2-4),
 * timed back to back in this one call.  The key is a fixed one, not the
 * job's: the cost does not depend on it.
 */
static void check_cost(const struct torus_flood *flood, uint32_t size)
{
    static uint8_t frame[CONFIG_MAX_FRAME];
    static const uint8_t filler[TORUS_FRAME_MAX_PAYLOAD];
    static const struct torus_frame_key key = {{0x74, 0x6f, 0x72, 0x69, 0x20, 0x63, 0x68,
                                                0x65, 0x63, 0x6b, 0x20, 0x63, 0x6f, 0x73,
                                                0x74, 0x21}};
    struct torus_frame_header header;
    memset(&header, 0, sizeof header);
    header.type = TORUS_FRAME_TYPE_FLOOD;
    header.ttl = 1;
    header.source = flood->network->rank;
    header.destination = flood->network->rank;
    size_t length = torus_frame_encode(&header, filler, size, NULL, frame, sizeof frame);
    uint32_t nodes = torus_geometry_node_count(&flood->network->geometry);
    const struct torus_frame_key *keys[2] = {NULL, &key};
    uint64_t elapsed[2];
    unsigned accepted = 0;
    for (unsigned k = 0; k < 2; k++) {
        uint64_t start = board_now_ns();
        for (unsigned i = 0; i < FLOOD_CHECK_FRAMES; i++) {
            torus_frame_seal(frame, length, keys[k]);
            accepted += torus_frame_decode(frame, length, nodes, keys[k], &header, NULL) ==
                        TORUS_FRAME_OK;
        }
        elapsed[k] = board_now_ns() - start;
    }
    event_begin("flood-check");
    event_add_u64("size", size);
    event_add_u64("frames", FLOOD_CHECK_FRAMES);
    event_add_u64("ok", accepted == 2 * FLOOD_CHECK_FRAMES);
    event_add_u64("crc_ns", elapsed[0]);
    event_add_u64("tag_ns", elapsed[1]);
    event_end();
}

static void command_flood(void *context, const char *arguments, uint64_t now_ns)
{
    struct torus_flood *flood = context;
    if (strcmp(arguments, "stats") == 0) {
        report_stats(flood);
        return;
    }
    if (strncmp(arguments, "check ", 6) == 0) {
        const char *rest = arguments + 6;
        uint32_t size = 0;
        if (!parse_u32(&rest, TORUS_FRAME_MAX_PAYLOAD, &size) || *rest != '\0') {
            console_command_reply_error("flood: expected 'flood check SIZE' (SIZE 0..1450)");
            return;
        }
        check_cost(flood, size);
        return;
    }
    const char *cursor = arguments;
    uint32_t destination = 0, count = 0, size = 0;
    if (!parse_u32(&cursor, UINT32_MAX, &destination) ||
        !parse_u32(&cursor, TORUS_FLOOD_MAX_COUNT, &count) ||
        !parse_u32(&cursor, TORUS_FLOOD_MAX_SIZE, &size) || *cursor != '\0' ||
        count == 0 || size < TORUS_FLOOD_MIN_SIZE) {
        console_command_reply_error("flood: expected 'flood DST COUNT SIZE' (COUNT 1..10000000, "
                     "SIZE 12..1450), 'flood stats' or 'flood check SIZE'");
        return;
    }
    if (destination >= torus_geometry_node_count(&flood->network->geometry) ||
        destination == flood->network->rank) {
        console_command_reply_error("flood: expected DST to be another node's id, below the node count");
        return;
    }
    if (flood->sender.active) {
        console_command_reply_error("flood: a flood is already running");
        return;
    }
    torus_flood_start(flood, destination, count, size, now_ns);
}

static timer_id flood_timer = -1;

static unsigned flood_poll(void *context, uint64_t now_ns)
{
    struct torus_flood *flood = context;
    unsigned injected = torus_flood_poll(flood, now_ns);
    /* Waiting with no route and nothing in flight, the node would idle with
     * no deadline: wake it when the flood is due to be declared stalled. */
    if (!flood->sender.active)
        timer_disarm(timer_kernel_table(), flood_timer);
    else if (injected == 0)
        timer_arm(timer_kernel_table(), flood_timer,
                  flood->sender.progress_ns + TORUS_FLOOD_STALL_NS + 1u);
    return injected;
}

void torus_flood_service_init(struct torus_network *network)
{
    torus_flood_init(&flood_service, network);
    flood_timer = timer_add_wakeup(timer_kernel_table(), "flood");
    if (flood_timer < 0)
        kernel_panic("flood: timer table full (raise CONFIG_MAX_TIMERS)");
    console_command_register("flood", command_flood, &flood_service, CONSOLE_ARGUMENTS);
    poll_register("flood", flood_poll, &flood_service);
}
