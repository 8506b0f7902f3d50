/*
 * The comm wire format: every kind round-trips field for field; every
 * reason to refuse a payload is reached and named; random bytes and random
 * edits of valid frames never crash the decoder, and whatever it accepts
 * encodes back to the same bytes; the encoder refuses what a receiver
 * would refuse.
 */
#include <stdint.h>
#include <string.h>

#include "comm/codec.h"
#include "tests/check.h"

static uint8_t data[COMM_FRAGMENT_BYTES];

static uint32_t nonzero(struct check_rng *rng)
{
    return (uint32_t)check_rng_next(rng) | 1u;
}

/* A random valid frame of kind. */
static void random_frame(struct check_rng *rng, unsigned kind, struct comm_frame *f)
{
    memset(f, 0, sizeof *f);
    f->kind = (uint8_t)kind;
    f->sender_incarnation = nonzero(rng);
    f->receiver_incarnation = kind == COMM_KIND_OPEN && check_rng_percent(rng, 50)
                                  ? 0u
                                  : nonzero(rng);
    f->session = nonzero(rng);
    switch (kind) {
    case COMM_KIND_ACCEPT:
        f->token = nonzero(rng);
        break;
    case COMM_KIND_ACK:
        f->seq = (uint32_t)check_rng_next(rng);
        f->mask = (uint32_t)check_rng_next(rng);
        f->deferred = (uint32_t)check_rng_next(rng);
        break;
    case COMM_KIND_WAIT:
    case COMM_KIND_GRANT:
        f->seq = (uint32_t)check_rng_next(rng);
        break;
    case COMM_KIND_CLOSE:
        f->seq = (uint32_t)check_rng_next(rng);
        f->flags = check_rng_percent(rng, 50) ? COMM_FLAG_UNKNOWN : 0;
        break;
    case COMM_KIND_REVOKE:
        f->session = 0; /* sessionless */
        f->receiver_incarnation = check_rng_percent(rng, 50) ? 0u : f->receiver_incarnation;
        f->context = (uint16_t)check_rng_below(rng, COMM_CONTEXT_IDS);
        f->context_gen = (uint16_t)check_rng_next(rng);
        f->source_rank = (uint32_t)check_rng_next(rng);
        f->seq = (uint32_t)check_rng_next(rng);
        f->flags = check_rng_percent(rng, 50) ? COMM_FLAG_REVOKE_ACK : 0;
        break;
    case COMM_KIND_DATA: {
        static const uint32_t totals[] = {0, 1, COMM_FRAGMENT_BYTES - 1, COMM_FRAGMENT_BYTES,
                                          COMM_FRAGMENT_BYTES + 1, 65536, CONFIG_COMM_MAX_MESSAGE};
        f->total = totals[check_rng_below(rng, sizeof totals / sizeof totals[0])];
        uint32_t frames = COMM_FRAMES_FOR(f->total);
        f->offset = check_rng_below(rng, frames) * COMM_FRAGMENT_BYTES;
        uint32_t left = f->total - f->offset;
        f->data_length = left < COMM_FRAGMENT_BYTES ? left : COMM_FRAGMENT_BYTES;
        f->data = f->data_length > 0 ? data : NULL;
        f->seq = (uint32_t)check_rng_next(rng);
        if (f->offset != 0 && check_rng_percent(rng, 30)) {
            f->flags |= COMM_FLAG_SKIP; /* a deferred message's fragment: no bytes */
            f->data_length = 0;
            f->data = NULL;
        }
        if (f->offset == 0) {
            f->flags |= COMM_FLAG_FIRST;
            if (check_rng_percent(rng, 30)) {
                f->flags |= COMM_FLAG_RESEND;
                f->resend_of = (uint32_t)check_rng_next(rng);
            }
            bool collective = check_rng_percent(rng, 50);
            f->context = (uint16_t)(check_rng_below(rng, COMM_CONTEXT_IDS) |
                                    (collective ? COMM_CONTEXT_COLLECTIVE : 0u));
            f->context_gen = (uint16_t)check_rng_next(rng);
            f->source_rank = (uint32_t)check_rng_next(rng);
            f->tag = collective ? (uint32_t)check_rng_next(rng)
                                : (uint32_t)check_rng_next(rng) & 0x7fffffffu;
        }
        if (check_rng_percent(rng, 30)) {
            f->flags |= COMM_FLAG_ACK_NOW;
        }
        if (check_rng_percent(rng, 50)) {
            f->flags |= COMM_FLAG_ACK;
            f->ack_sid = nonzero(rng);
            f->ack_cum = (uint32_t)check_rng_next(rng);
            f->ack_mask = (uint32_t)check_rng_next(rng);
            f->ack_deferred = (uint32_t)check_rng_next(rng);
        }
        break;
    }
    default:
        break;
    }
}

static bool same_frame(const struct comm_frame *a, const struct comm_frame *b)
{
    return a->kind == b->kind && a->flags == b->flags &&
           a->sender_incarnation == b->sender_incarnation &&
           a->receiver_incarnation == b->receiver_incarnation && a->session == b->session &&
           a->token == b->token && a->seq == b->seq && a->mask == b->mask &&
           a->deferred == b->deferred && a->resend_of == b->resend_of &&
           a->ack_deferred == b->ack_deferred &&
           a->offset == b->offset && a->total == b->total && a->context == b->context &&
           a->context_gen == b->context_gen && a->source_rank == b->source_rank && a->tag == b->tag && a->ack_sid == b->ack_sid &&
           a->ack_cum == b->ack_cum && a->ack_mask == b->ack_mask &&
           a->data_length == b->data_length &&
           (a->data_length == 0 || memcmp(a->data, b->data, a->data_length) == 0);
}

static void test_round_trips(void)
{
    struct check_rng rng;
    check_rng_seed(&rng, 13);
    for (uint32_t i = 0; i < sizeof data; i++) {
        data[i] = (uint8_t)check_rng_next(&rng);
    }
    uint8_t buffer[COMM_MAX_PAYLOAD];
    for (unsigned kind = 1; kind < COMM_KIND_LIMIT; kind++) {
        for (int round = 0; round < 200; round++) {
            struct comm_frame f;
            struct comm_frame g;
            random_frame(&rng, kind, &f);
            size_t length = comm_encode(&f, buffer, sizeof buffer);
            CHECKF(length >= COMM_HEADER_SIZE, "kind %s round %d did not encode",
                   comm_kind_name(kind), round);
            enum comm_decode_status s = comm_decode(buffer, length, &g);
            CHECKF(s == COMM_DECODE_OK, "kind %s: %s", comm_kind_name(kind),
                   comm_decode_status_text(s));
            CHECKF(same_frame(&f, &g), "kind %s round %d differs", comm_kind_name(kind), round);
            if (check_failures > 50) {
                return;
            }
        }
    }
    /* Exact sizes: a full fragment fills the torus payload to the byte. */
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_DATA;
    f.flags = COMM_FLAG_FIRST;
    f.sender_incarnation = 1;
    f.receiver_incarnation = 2;
    f.session = 3;
    f.total = 65536;
    f.data = data;
    f.data_length = COMM_FRAGMENT_BYTES;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), COMM_MAX_PAYLOAD);
    CHECK_EQ(COMM_FRAMES_FOR(0), 1);
    CHECK_EQ(COMM_FRAMES_FOR(COMM_FRAGMENT_BYTES), 1);
    CHECK_EQ(COMM_FRAMES_FOR(COMM_FRAGMENT_BYTES + 1), 2);
    CHECK_EQ(COMM_FRAMES_FOR(65536), (65536 + COMM_FRAGMENT_BYTES - 1) / COMM_FRAGMENT_BYTES);
}

/* Encodes a valid frame of kind, then lets edit() spoil the bytes. */
static enum comm_decode_status decode_edited(unsigned kind, uint32_t total, uint32_t offset,
                                             size_t at, uint8_t value, int length_change)
{
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = (uint8_t)kind;
    f.sender_incarnation = 7;
    f.receiver_incarnation = 9;
    f.session = 0x101;
    f.token = 0x202;
    if (kind == COMM_KIND_DATA) {
        f.total = total;
        f.offset = offset;
        uint32_t left = total - offset;
        f.data_length = left < COMM_FRAGMENT_BYTES ? left : COMM_FRAGMENT_BYTES;
        f.data = f.data_length > 0 ? data : NULL;
        if (offset == 0) {
            f.flags = COMM_FLAG_FIRST;
            f.tag = 5;
        }
    }
    static uint8_t buffer[COMM_MAX_PAYLOAD + 16];
    size_t length = comm_encode(&f, buffer, COMM_MAX_PAYLOAD);
    if (length == 0) {
        return COMM_DECODE_STATUS_COUNT; /* the test itself is wrong */
    }
    if (at < length) {
        buffer[at] = value;
    }
    struct comm_frame g;
    enum comm_decode_status s = comm_decode(buffer, (size_t)((int)length + length_change), &g);
    if (s != COMM_DECODE_OK) {
        struct comm_frame zero;
        memset(&zero, 0, sizeof zero);
        CHECKF(memcmp(&g, &zero, sizeof g) == 0, "a refused frame left fields behind");
    }
    return s;
}

#define NO_EDIT SIZE_MAX

static void test_rejections(void)
{
    struct comm_frame g;
    CHECK_EQ(comm_decode(NULL, 0, &g), COMM_DECODE_SHORT);
    CHECK_EQ(decode_edited(COMM_KIND_ACK, 0, 0, NO_EDIT, 0, -1), COMM_DECODE_SHORT);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, NO_EDIT, 0, -(int)COMM_HEADER_SIZE),
             COMM_DECODE_SHORT);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, NO_EDIT, 0, 1), COMM_DECODE_TOO_LONG);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 100, 0, NO_EDIT, 0, -101), COMM_DECODE_SHORT);
    /* another version than ours, either side (1 had no context generation) */
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 0, COMM_WIRE_VERSION + 1u, 0),
             COMM_DECODE_VERSION);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 0, COMM_WIRE_VERSION - 1u, 0),
             COMM_DECODE_VERSION);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 1, 0, 0), COMM_DECODE_KIND);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 1, COMM_KIND_LIMIT, 0), COMM_DECODE_KIND);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 1, 255, 0), COMM_DECODE_KIND);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 2, 1, 0), COMM_DECODE_FLAGS);
    /* REVOKE: a context beyond the 256 ids, an unknown flag, a short body */
    CHECK_EQ(decode_edited(COMM_KIND_REVOKE, 0, 0, NO_EDIT, 0, 0), COMM_DECODE_OK);
    CHECK_EQ(decode_edited(COMM_KIND_REVOKE, 0, 0, COMM_HEADER_SIZE + 1, 1, 0),
             COMM_DECODE_CONTEXT);
    CHECK_EQ(decode_edited(COMM_KIND_REVOKE, 0, 0, 2, 2, 0), COMM_DECODE_FLAGS);
    CHECK_EQ(decode_edited(COMM_KIND_REVOKE, 0, 0, NO_EDIT, 0, -1), COMM_DECODE_SHORT);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 10, 0, 2, 0x21, 0), COMM_DECODE_FLAGS);
    CHECK_EQ(decode_edited(COMM_KIND_CLOSE, 0, 0, 2, 0x02, 0), COMM_DECODE_FLAGS);
    CHECK_EQ(decode_edited(COMM_KIND_OPEN, 0, 0, 3, 1, 0), COMM_DECODE_RESERVED);
    /* DATA's u16 after the context is the context generation: any value in
     * a first fragment, 0 in the others (envelope fields); REVOKE carries
     * it in its context word's high half. */
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 10, 0, COMM_HEADER_SIZE + 18, 1, 0), COMM_DECODE_OK);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, COMM_HEADER_SIZE + 19, 1, 0),
             COMM_DECODE_ENVELOPE);
    CHECK_EQ(decode_edited(COMM_KIND_REVOKE, 0, 0, COMM_HEADER_SIZE + 3, 0xff, 0),
             COMM_DECODE_OK);
    /* Incarnations: sender never 0; receiver 0 only in OPEN. */
    for (size_t i = 4; i < 8; i++) {
        uint8_t buffer[COMM_HEADER_SIZE + 4] = {COMM_WIRE_VERSION, COMM_KIND_OPEN, 0, 0, 0, 0, 0,
                                                0, 0, 0, 0, 0, 1, 0, 0, 0};
        CHECK_EQ(comm_decode(buffer, sizeof buffer, &g), COMM_DECODE_INCARNATION);
        buffer[i] = 1;
        CHECK_EQ(comm_decode(buffer, sizeof buffer, &g), COMM_DECODE_OK);
        buffer[1] = COMM_KIND_CLOSED;
        CHECK_EQ(comm_decode(buffer, sizeof buffer, &g), COMM_DECODE_INCARNATION);
    }
    /* Session ids and tokens are never 0. */
    uint8_t accept[COMM_HEADER_SIZE + 8] = {COMM_WIRE_VERSION, COMM_KIND_ACCEPT, 0, 0, 1, 0, 0, 0,
                                            1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
    CHECK_EQ(comm_decode(accept, sizeof accept, &g), COMM_DECODE_SESSION);
    accept[12] = 1;
    accept[16] = 0;
    CHECK_EQ(comm_decode(accept, sizeof accept, &g), COMM_DECODE_SESSION);
    accept[16] = 1;
    CHECK_EQ(comm_decode(accept, sizeof accept, &g), COMM_DECODE_OK);
    /* DATA: total, offset, length, envelope, context, tag, ack fields. */
    size_t d = COMM_HEADER_SIZE;
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 10, 0, d + 15, 0x80, 0), COMM_DECODE_TOTAL);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, d + 8, 1, 0),
             COMM_DECODE_OFFSET);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 10, 0, d + 12, 11, 0), COMM_DECODE_LENGTH);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 10, 0, NO_EDIT, 0, -1), COMM_DECODE_LENGTH);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 0, 0, NO_EDIT, 0, 1), COMM_DECODE_LENGTH);
    /* offset == total (no bytes left) is not a fragment */
    uint8_t empty[COMM_DATA_HEADER] = {COMM_WIRE_VERSION, COMM_KIND_DATA, 0, 0, 1, 0, 0, 0, 1, 0,
                                       0, 0, 1, 0, 0, 0};
    empty[d + 8] = 0x6e; /* offset = total = COMM_FRAGMENT_BYTES (0x56e) */
    empty[d + 9] = 0x05;
    empty[d + 12] = 0x6e;
    empty[d + 13] = 0x05;
    _Static_assert(COMM_FRAGMENT_BYTES == 0x56e, "edit the bytes above");
    CHECK_EQ(comm_decode(empty, sizeof empty, &g), COMM_DECODE_OFFSET);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, 2, COMM_FLAG_FIRST, 0),
             COMM_DECODE_ENVELOPE);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, 2, 0, 0), COMM_DECODE_ENVELOPE);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, d + 24, 1, 0),
             COMM_DECODE_ENVELOPE);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, d + 20, 1, 0),
             COMM_DECODE_ENVELOPE);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, d + 17, 0x01, 0), COMM_DECODE_CONTEXT);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, d + 27, 0x80, 0), COMM_DECODE_TAG);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, d + 28, 1, 0), COMM_DECODE_RESEND);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, d + 32, 1, 0), COMM_DECODE_ACK_FIELDS);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, d + 36, 1, 0), COMM_DECODE_ACK_FIELDS);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, d + 44, 1, 0), COMM_DECODE_ACK_FIELDS);
    /* SKIP: never the first fragment, never bytes; RESEND: only the first. */
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, 2, COMM_FLAG_FIRST | COMM_FLAG_SKIP, 0),
             COMM_DECODE_SKIP);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, 2, COMM_FLAG_SKIP, 0),
             COMM_DECODE_SKIP);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, COMM_FRAGMENT_BYTES, 2, COMM_FLAG_RESEND, 0),
             COMM_DECODE_RESEND);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, 2, COMM_FLAG_FIRST | COMM_FLAG_RESEND, 0),
             COMM_DECODE_OK);
    CHECK_EQ(decode_edited(COMM_KIND_DATA, 3000, 0, 2, COMM_FLAG_FIRST | COMM_FLAG_ACK, 0),
             COMM_DECODE_ACK_FIELDS);
    /* Every status has a name; out of range is "?". */
    for (unsigned s = 0; s < COMM_DECODE_STATUS_COUNT; s++) {
        CHECK(strcmp(comm_decode_status_text((enum comm_decode_status)s), "?") != 0);
    }
    CHECK(strcmp(comm_decode_status_text(COMM_DECODE_STATUS_COUNT), "?") == 0);
    CHECK(strcmp(comm_kind_name(COMM_KIND_DATA), "data") == 0);
    CHECK(strcmp(comm_kind_name(0), "?") == 0);
}

static void test_encoder_refuses(void)
{
    uint8_t buffer[COMM_MAX_PAYLOAD];
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_ACK;
    f.sender_incarnation = 1;
    f.receiver_incarnation = 1;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), 0); /* session 0 */
    f.session = 1;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), COMM_HEADER_SIZE + 16);
    CHECK_EQ(comm_encode(&f, buffer, COMM_HEADER_SIZE + 15), 0); /* does not fit */
    f.flags = COMM_FLAG_ACK;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), 0); /* no flags on ACK */
    f.flags = 0;
    f.kind = COMM_KIND_DATA;
    f.total = 10;
    f.data_length = 9;
    f.data = data;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), 0); /* no FIRST, and length wrong */
    f.flags = COMM_FLAG_FIRST;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), 0);
    f.data_length = 10;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), COMM_DATA_HEADER + 10);
    f.data = NULL;
    CHECK_EQ(comm_encode(&f, buffer, sizeof buffer), 0); /* bytes promised, none given */
}

static void test_fuzz(void)
{
    struct check_rng rng;
    check_rng_seed(&rng, 1313);
    uint8_t buffer[COMM_MAX_PAYLOAD + 8];
    uint8_t again[COMM_MAX_PAYLOAD + 8];
    uint32_t accepted = 0;
    for (int round = 0; round < 200000; round++) {
        size_t length;
        if (round % 2 == 0) {
            length = check_rng_below(&rng, 80);
            for (size_t i = 0; i < length; i++) {
                buffer[i] = (uint8_t)check_rng_next(&rng);
            }
            if (length > 1 && check_rng_percent(&rng, 70)) {
                buffer[0] = COMM_WIRE_VERSION;
                buffer[1] = (uint8_t)(1 + check_rng_below(&rng, COMM_KIND_LIMIT));
            }
        } else {
            struct comm_frame f;
            random_frame(&rng, 1 + check_rng_below(&rng, COMM_KIND_LIMIT - 1), &f);
            length = comm_encode(&f, buffer, COMM_MAX_PAYLOAD);
            unsigned edits = 1 + check_rng_below(&rng, 3);
            for (unsigned e = 0; e < edits && length > 0; e++) {
                buffer[check_rng_below(&rng, (uint32_t)length)] = (uint8_t)check_rng_next(&rng);
            }
            if (check_rng_percent(&rng, 10) && length > 0) {
                length -= 1 + check_rng_below(&rng, (uint32_t)length);
            }
        }
        struct comm_frame g;
        if (comm_decode(buffer, length, &g) != COMM_DECODE_OK) {
            continue;
        }
        accepted++;
        size_t encoded = comm_encode(&g, again, sizeof again);
        CHECKF(encoded == length && memcmp(buffer, again, length) == 0,
               "round %d: an accepted payload does not encode back to itself", round);
        if (check_failures > 50) {
            return;
        }
    }
    CHECK(accepted > 1000);
}

int main(void)
{
    test_round_trips();
    test_rejections();
    test_encoder_refuses();
    test_fuzz();
    return check_report("comm.codec");
}
