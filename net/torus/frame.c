#include "net/torus/frame.h"

#include <string.h>

#include "lib/crc32.h"
#include "lib/le.h"
#include "lib/siphash.h"

_Static_assert(TORUS_FRAME_MAX_PAYLOAD <= UINT16_MAX,
               "payload length must fit its 16-bit field");
_Static_assert(TORUS_FRAME_TYPE_COUNT <= 256, "type must fit one byte");
_Static_assert(CONFIG_MAX_NODES <= (1u << 24), "a rank must fit the 24 bits of a MAC");
_Static_assert(CONFIG_MAX_LINKS <= 256, "a link must fit one MAC byte");

/* Field offsets from the start of the frame (see the table in frame.h). */
enum {
    OFFSET_DESTINATION_MAC = 0,
    OFFSET_SOURCE_MAC = 6,
    OFFSET_ETHERTYPE = 12,
    OFFSET_MAGIC = 14,
    OFFSET_VERSION = 16,
    OFFSET_TYPE = TORUS_FRAME_OFFSET_TYPE,
    OFFSET_FLAGS = TORUS_FRAME_OFFSET_FLAGS,
    OFFSET_TTL = TORUS_FRAME_OFFSET_TTL,
    OFFSET_HOPS = 20,
    OFFSET_RESERVED = 21,
    OFFSET_PAYLOAD_LENGTH = 22,
    OFFSET_SOURCE = 24,
    OFFSET_DESTINATION = 28,
    OFFSET_EPOCH = 32,
    OFFSET_SEQUENCE = 40,
    OFFSET_ACK = 44,
    OFFSET_SENDER_INCARNATION = 48,
    OFFSET_RECEIVER_INCARNATION = 52,
    OFFSET_CHECKSUM = TORUS_FRAME_OFFSET_CHECKSUM,
    OFFSET_PAYLOAD = TORUS_FRAME_HEADER_SIZE,
};
_Static_assert(OFFSET_CHECKSUM + TORUS_FRAME_CHECK_SIZE == OFFSET_PAYLOAD,
               "layout is contiguous");
_Static_assert(TORUS_FRAME_KEY_BYTES == SIPHASH_KEY_BYTES, "the key is SipHash's");

static const char *const status_names[] = {
    "ok",
#define TORUS_FRAME_DROP_NAME(name, text) text,
    TORUS_FRAME_DROPS(TORUS_FRAME_DROP_NAME)
#undef TORUS_FRAME_DROP_NAME
};

static const char *const type_names[] = {
#define TORUS_FRAME_TYPE_NAME(name, text) text,
    TORUS_FRAME_TYPES(TORUS_FRAME_TYPE_NAME)
#undef TORUS_FRAME_TYPE_NAME
};

static const uint8_t mac_prefix[2] = {0x02, 0x74};

/* The check of a frame as if its check field were zero: the SipHash-2-4
 * tag under key, or (key NULL) the CRC-32 in the low 32 bits. */
static uint64_t frame_check(const uint8_t *frame, size_t length,
                            const struct torus_frame_key *key)
{
    static const uint8_t zero[TORUS_FRAME_CHECK_SIZE] = {0};
    if (key == NULL) {
        uint32_t crc = crc32_update(0, frame, OFFSET_CHECKSUM);
        crc = crc32_update(crc, zero, sizeof(zero));
        return crc32_update(crc, frame + OFFSET_PAYLOAD, length - OFFSET_PAYLOAD);
    }
    struct siphash_state state;
    siphash_init(&state, key->bytes);
    siphash_update(&state, frame, OFFSET_CHECKSUM);
    siphash_update(&state, zero, sizeof(zero));
    siphash_update(&state, frame + OFFSET_PAYLOAD, length - OFFSET_PAYLOAD);
    return siphash_final(&state);
}

static void put_check(uint8_t *frame, size_t length, const struct torus_frame_key *key)
{
    le_put_u64(frame + OFFSET_CHECKSUM, frame_check(frame, length, key));
}

size_t torus_frame_encode(const struct torus_frame_header *header,
                          const void *payload, size_t payload_length,
                          const struct torus_frame_key *key, uint8_t *out,
                          size_t capacity)
{
    if (header->type >= TORUS_FRAME_TYPE_COUNT ||
        (header->flags & ~TORUS_FRAME_FLAGS_KNOWN) != 0 || header->ttl == 0 ||
        payload_length > TORUS_FRAME_MAX_PAYLOAD ||
        (payload_length > 0 && payload == NULL) || out == NULL)
        return 0;
    size_t length = TORUS_FRAME_HEADER_SIZE + payload_length;
    if (capacity < length)
        return 0;
    memcpy(out + OFFSET_DESTINATION_MAC, header->destination_mac, TORUS_FRAME_MAC_SIZE);
    memcpy(out + OFFSET_SOURCE_MAC, header->source_mac, TORUS_FRAME_MAC_SIZE);
    out[OFFSET_ETHERTYPE] = (uint8_t)(TORUS_FRAME_ETHERTYPE >> 8);
    out[OFFSET_ETHERTYPE + 1] = (uint8_t)TORUS_FRAME_ETHERTYPE;
    le_put_u16(out + OFFSET_MAGIC, TORUS_FRAME_MAGIC);
    out[OFFSET_VERSION] = TORUS_FRAME_VERSION;
    out[OFFSET_TYPE] = header->type;
    out[OFFSET_FLAGS] = header->flags;
    out[OFFSET_TTL] = header->ttl;
    out[OFFSET_HOPS] = header->hops;
    out[OFFSET_RESERVED] = 0;
    le_put_u16(out + OFFSET_PAYLOAD_LENGTH, (uint16_t)payload_length);
    le_put_u32(out + OFFSET_SOURCE, header->source);
    le_put_u32(out + OFFSET_DESTINATION, header->destination);
    le_put_u64(out + OFFSET_EPOCH, header->epoch);
    le_put_u32(out + OFFSET_SEQUENCE, header->link_sequence);
    le_put_u32(out + OFFSET_ACK, header->link_ack);
    le_put_u32(out + OFFSET_SENDER_INCARNATION, header->link_sender_incarnation);
    le_put_u32(out + OFFSET_RECEIVER_INCARNATION, header->link_receiver_incarnation);
    if (payload_length > 0)
        memmove(out + OFFSET_PAYLOAD, payload, payload_length);
    put_check(out, length, key);
    return length;
}

enum torus_frame_status torus_frame_decode(const uint8_t *frame, size_t length,
                                           uint32_t node_count,
                                           const struct torus_frame_key *key,
                                           struct torus_frame_header *header,
                                           const uint8_t **payload)
{
    memset(header, 0, sizeof(*header));
    if (payload != NULL)
        *payload = NULL;
    /* Length checks first: nothing below reads past frame[length - 1]. */
    if (frame == NULL || length < TORUS_FRAME_MIN_SIZE)
        return TORUS_FRAME_DROP_SHORT;
    if (length > TORUS_FRAME_MAX_SIZE)
        return TORUS_FRAME_DROP_OVERSIZE;
    if (frame[OFFSET_ETHERTYPE] != (uint8_t)(TORUS_FRAME_ETHERTYPE >> 8) ||
        frame[OFFSET_ETHERTYPE + 1] != (uint8_t)TORUS_FRAME_ETHERTYPE)
        return TORUS_FRAME_DROP_BAD_ETHERTYPE;
    if (le_get_u16(frame + OFFSET_MAGIC) != TORUS_FRAME_MAGIC)
        return TORUS_FRAME_DROP_BAD_MAGIC;
    if (frame[OFFSET_VERSION] != TORUS_FRAME_VERSION)
        return TORUS_FRAME_DROP_BAD_VERSION;
    uint16_t payload_length = le_get_u16(frame + OFFSET_PAYLOAD_LENGTH);
    if ((size_t)payload_length != length - TORUS_FRAME_HEADER_SIZE)
        return TORUS_FRAME_DROP_LENGTH_MISMATCH;
    /* The check before any meaning: damage is reported as damage, and with
     * a key nothing from outside the job reaches the fields below. */
    if (le_get_u64(frame + OFFSET_CHECKSUM) != frame_check(frame, length, key))
        return key != NULL ? TORUS_FRAME_DROP_BAD_TAG : TORUS_FRAME_DROP_BAD_CHECKSUM;
    if (frame[OFFSET_TYPE] >= TORUS_FRAME_TYPE_COUNT)
        return TORUS_FRAME_DROP_BAD_TYPE;
    if ((frame[OFFSET_FLAGS] & ~TORUS_FRAME_FLAGS_KNOWN) != 0)
        return TORUS_FRAME_DROP_BAD_FLAGS;
    if (frame[OFFSET_RESERVED] != 0)
        return TORUS_FRAME_DROP_BAD_RESERVED;
    uint32_t source = le_get_u32(frame + OFFSET_SOURCE);
    uint32_t destination = le_get_u32(frame + OFFSET_DESTINATION);
    if (source >= node_count || destination >= node_count)
        return TORUS_FRAME_DROP_RANK_OUT_OF_RANGE;
    if (frame[OFFSET_TTL] == 0)
        return TORUS_FRAME_DROP_TTL_EXPIRED;

    memcpy(header->destination_mac, frame + OFFSET_DESTINATION_MAC, TORUS_FRAME_MAC_SIZE);
    memcpy(header->source_mac, frame + OFFSET_SOURCE_MAC, TORUS_FRAME_MAC_SIZE);
    header->type = frame[OFFSET_TYPE];
    header->flags = frame[OFFSET_FLAGS];
    header->ttl = frame[OFFSET_TTL];
    header->hops = frame[OFFSET_HOPS];
    header->payload_length = payload_length;
    header->source = source;
    header->destination = destination;
    header->epoch = le_get_u64(frame + OFFSET_EPOCH);
    header->link_sequence = le_get_u32(frame + OFFSET_SEQUENCE);
    header->link_ack = le_get_u32(frame + OFFSET_ACK);
    header->link_sender_incarnation = le_get_u32(frame + OFFSET_SENDER_INCARNATION);
    header->link_receiver_incarnation = le_get_u32(frame + OFFSET_RECEIVER_INCARNATION);
    if (payload != NULL)
        *payload = frame + OFFSET_PAYLOAD;
    return TORUS_FRAME_OK;
}

void torus_frame_count(struct torus_frame_counters *counters,
                       enum torus_frame_status status)
{
    if ((unsigned)status < TORUS_FRAME_STATUS_COUNT)
        counters->count[status]++;
}

const char *torus_frame_status_name(enum torus_frame_status status)
{
    if ((unsigned)status >= TORUS_FRAME_STATUS_COUNT)
        return "?";
    return status_names[status];
}

const char *torus_frame_type_name(unsigned type)
{
    if (type >= TORUS_FRAME_TYPE_COUNT)
        return "?";
    return type_names[type];
}

bool torus_frame_is_well_formed(const uint8_t *frame, size_t length)
{
    return frame != NULL && length >= TORUS_FRAME_MIN_SIZE &&
           length <= TORUS_FRAME_MAX_SIZE &&
           (size_t)le_get_u16(frame + OFFSET_PAYLOAD_LENGTH) ==
               length - TORUS_FRAME_HEADER_SIZE;
}

void torus_frame_seal(uint8_t *frame, size_t length, const struct torus_frame_key *key)
{
    if (!torus_frame_is_well_formed(frame, length))
        return;
    put_check(frame, length, key);
}

void torus_frame_stamp_link(uint8_t *frame, size_t length,
                            const struct torus_frame_link_fields *fields,
                            const struct torus_frame_key *key)
{
    if (!torus_frame_is_well_formed(frame, length))
        return;
    memcpy(frame + OFFSET_DESTINATION_MAC, fields->destination_mac, TORUS_FRAME_MAC_SIZE);
    memcpy(frame + OFFSET_SOURCE_MAC, fields->source_mac, TORUS_FRAME_MAC_SIZE);
    frame[OFFSET_FLAGS] = (uint8_t)((frame[OFFSET_FLAGS] & ~TORUS_FRAME_FLAGS_LINK) |
                                    (fields->flags & TORUS_FRAME_FLAGS_LINK));
    le_put_u32(frame + OFFSET_SEQUENCE, fields->sequence);
    le_put_u32(frame + OFFSET_ACK, fields->ack);
    le_put_u32(frame + OFFSET_SENDER_INCARNATION, fields->sender_incarnation);
    le_put_u32(frame + OFFSET_RECEIVER_INCARNATION, fields->receiver_incarnation);
    put_check(frame, length, key);
}

enum torus_frame_status torus_frame_forward(uint8_t *frame, size_t length)
{
    if (!torus_frame_is_well_formed(frame, length))
        return TORUS_FRAME_DROP_LENGTH_MISMATCH;
    if (frame[OFFSET_TTL] <= 1)
        return TORUS_FRAME_DROP_TTL_EXPIRED;
    frame[OFFSET_TTL]--;
    if (frame[OFFSET_HOPS] < UINT8_MAX)
        frame[OFFSET_HOPS]++;
    return TORUS_FRAME_OK;
}

void torus_frame_mac_for_link(uint32_t rank, unsigned link,
                              uint8_t mac[TORUS_FRAME_MAC_SIZE])
{
    mac[0] = mac_prefix[0];
    mac[1] = mac_prefix[1];
    mac[2] = (uint8_t)(rank >> 16);
    mac[3] = (uint8_t)(rank >> 8);
    mac[4] = (uint8_t)rank;
    mac[5] = (uint8_t)link;
}

bool torus_frame_mac_parse(const uint8_t mac[TORUS_FRAME_MAC_SIZE],
                           uint32_t *rank, unsigned *link)
{
    if (mac[0] != mac_prefix[0] || mac[1] != mac_prefix[1] ||
        mac[5] >= CONFIG_MAX_LINKS)
        return false;
    *rank = ((uint32_t)mac[2] << 16) | ((uint32_t)mac[3] << 8) | mac[4];
    *link = mac[5];
    return true;
}
