/*
 * The link layer (net/torus/link.h) between two ends of one cable, driven
 * by the input: sends, ticks, time, deliveries, losses, duplicates, and
 * frames edited on the wire (any header field, resealed so that they pass
 * the decoder and reach the link: what a stale or forging peer can send).
 * Every frame either end puts on the wire decodes; a window never holds
 * more than CONFIG_LINK_WINDOW frames; an end that is UP knows its peer.
 */
#include <string.h>

#include "net/torus/link.h"
#include "tests/fuzz/fuzz.h"

#define WIRE_FRAMES 32u /* frames in flight per direction */

struct wire {
    unsigned head;
    unsigned count;
    uint16_t length[WIRE_FRAMES];
    uint8_t frame[WIRE_FRAMES][TORUS_FRAME_MAX_SIZE];
};

static struct torus_link ends[2];
static struct wire wires[2]; /* wires[i]: frames towards end i */
static struct torus_link_outbox outbox;
static uint8_t scratch[TORUS_FRAME_MAX_SIZE];

static void check_frame(const uint8_t *frame, size_t length, const char *what)
{
    struct torus_frame_header header;
    const uint8_t *payload = NULL;
    enum torus_frame_status status = torus_frame_decode(frame, length, 2, NULL, &header, &payload);
    FUZZ_CHECK(status == TORUS_FRAME_OK, "%s: a frame that does not decode: %s", what,
               torus_frame_status_name(status));
}

static void put_on_wire(unsigned to, const uint8_t *frame, size_t length)
{
    struct wire *w = &wires[to];
    if (w->count == WIRE_FRAMES) {
        return; /* the cable is full: lost */
    }
    unsigned slot = (w->head + w->count++) % WIRE_FRAMES;
    memcpy(w->frame[slot], frame, length);
    w->length[slot] = (uint16_t)length;
}

static void check_end(const struct torus_link *link)
{
    FUZZ_CHECK(torus_link_in_flight(link) <= CONFIG_LINK_WINDOW, "%u frames in flight",
               torus_link_in_flight(link));
    FUZZ_CHECK(!torus_link_is_up(link) || link->peer_incarnation != 0, "UP with no peer");
    FUZZ_CHECK(link->local_incarnation != 0, "incarnation 0");
}

static void tick(unsigned i, uint64_t now)
{
    unsigned count = torus_link_tick(&ends[i], now, &outbox);
    FUZZ_CHECK(count == outbox.count && count <= TORUS_LINK_OUTBOX_SIZE, "outbox of %u", count);
    for (unsigned k = 0; k < count; k++) {
        check_frame(outbox.frame[k], outbox.length[k], "tick");
        put_on_wire(i ^ 1u, outbox.frame[k], outbox.length[k]);
    }
    (void)torus_link_take_events(&ends[i]);
}

static void send_data(unsigned i, uint32_t number, uint64_t now)
{
    struct torus_frame_header header;
    memset(&header, 0, sizeof header);
    header.type = TORUS_FRAME_TYPE_PING;
    header.ttl = 1;
    header.source = i;
    header.destination = i ^ 1u;
    uint8_t payload[4] = {(uint8_t)number, (uint8_t)(number >> 8), (uint8_t)(number >> 16),
                          (uint8_t)(number >> 24)};
    size_t length = torus_frame_encode(&header, payload, sizeof payload, NULL, scratch, sizeof scratch);
    FUZZ_CHECK(length != 0, "encode");
    if (torus_link_send(&ends[i], scratch, length, now) == TORUS_LINK_SEND_OK) {
        check_frame(scratch, length, "send");
        put_on_wire(i ^ 1u, scratch, length);
    }
}

/* The next frame towards end i, maybe edited on the way (then resealed). */
static void deliver(unsigned i, struct fuzz_input *in, bool edit, uint64_t now)
{
    struct wire *w = &wires[i];
    if (w->count == 0) {
        return;
    }
    unsigned slot = w->head;
    size_t length = w->length[slot];
    memcpy(scratch, w->frame[slot], length);
    if (edit) {
        unsigned edits = 1u + fuzz_u8(in) % 4u;
        for (unsigned k = 0; k < edits; k++) {
            unsigned at = TORUS_FRAME_ETHERNET_SIZE + fuzz_u8(in) % 42u; /* header fields */
            scratch[at] = fuzz_u8(in);
        }
        torus_frame_seal(scratch, length, NULL);
    } else {
        w->head = (w->head + 1u) % WIRE_FRAMES;
        w->count--;
    }
    struct torus_frame_header header;
    const uint8_t *payload = NULL;
    if (torus_frame_decode(scratch, length, 2, NULL, &header, &payload) != TORUS_FRAME_OK) {
        return; /* the network drops it before any link sees it */
    }
    enum torus_link_verdict verdict = torus_link_receive(&ends[i], &header, now);
    FUZZ_CHECK(verdict < TORUS_LINK_VERDICT_COUNT, "verdict %d", (int)verdict);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_input in;
    fuzz_input_init(&in, data, size);
    memset(wires, 0, sizeof wires);
    for (unsigned i = 0; i < 2; i++) {
        struct torus_link_config config;
        torus_link_config_defaults(&config);
        config.local_rank = i;
        config.peer_rank = i ^ 1u;
        config.local_link = i; /* x+ on 0, x- on 1: one cable */
        config.incarnation = 1u + fuzz_u8(&in) % 4u;
        FUZZ_CHECK(torus_link_init(&ends[i], &config), "init");
    }
    uint64_t now = 0;
    uint32_t numbers[2] = {0, 0};
    for (unsigned step = 0; step < 4096 && !fuzz_input_done(&in); step++) {
        uint8_t op = fuzz_u8(&in);
        unsigned i = op & 1u;
        switch ((op >> 1) % 8u) {
        case 0: send_data(i, numbers[i]++, now); break;
        case 1: tick(i, now); break;
        case 2: now += (uint64_t)fuzz_u16(&in) * 10000u; break; /* up to 655 ms */
        case 3: deliver(i, &in, false, now); break;
        case 4: deliver(i, &in, true, now); break;
        case 5: /* lost on the wire */
            if (wires[i].count > 0) {
                wires[i].head = (wires[i].head + 1u) % WIRE_FRAMES;
                wires[i].count--;
            }
            break;
        case 6: /* duplicated on the wire */
            if (wires[i].count > 0) {
                put_on_wire(i, wires[i].frame[wires[i].head], wires[i].length[wires[i].head]);
            }
            break;
        default: { /* the peer restarts: a new session on its side */
            struct torus_link_config config = ends[i].config;
            config.incarnation = ends[i].local_incarnation + 1u + fuzz_u8(&in) % 2u;
            FUZZ_CHECK(torus_link_init(&ends[i], &config), "restart");
            break;
        }
        }
        check_end(&ends[0]);
        check_end(&ends[1]);
    }
    return 0;
}
