/*
 * The torus frame decoder (net/torus/frame.h): any bytes, as they come off
 * a link.  Whatever it accepts is well formed and encodes back to the very
 * same bytes; a forwarded, resealed copy decodes again (or has run out of
 * hops); every refusal has a name.  Under a job key a wrong check is a
 * bad tag, and an accepted frame once tagged passes only under the key.
 */
#include <string.h>

#include "net/torus/frame.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_FRAME_NODES 64u /* a 4x4x4 torus */

static uint8_t copy[TORUS_FRAME_MAX_SIZE];
static uint8_t encoded[TORUS_FRAME_MAX_SIZE];

/* A job key (issue 20): the same bytes are also checked under it. */
static const struct torus_frame_key fuzz_key = {{0x5f, 0x1e, 0x93, 0x07, 0xc2, 0x4a, 0xb8, 0x61,
                                                 0x2d, 0xf0, 0x7c, 0x35, 0x9e, 0x08, 0xd4, 0x6b}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct torus_frame_header header;
    const uint8_t *payload = NULL;
    /* Under the key: refusals by name, a wrong check as a bad tag (the
     * fuzzer may learn the tag from the comparison, so it may pass). */
    enum torus_frame_status keyed =
        torus_frame_decode(data, size, FUZZ_FRAME_NODES, &fuzz_key, &header, &payload);
    FUZZ_CHECK(strcmp(torus_frame_status_name(keyed), "?") != 0 &&
                   keyed != TORUS_FRAME_DROP_BAD_CHECKSUM,
               "keyed decode: %s", torus_frame_status_name(keyed));
    enum torus_frame_status status =
        torus_frame_decode(data, size, FUZZ_FRAME_NODES, NULL, &header, &payload);
    FUZZ_CHECK(strcmp(torus_frame_status_name(status), "?") != 0, "status %d has no name",
               (int)status);
    if (status != TORUS_FRAME_OK) {
        FUZZ_CHECK(payload == NULL, "a refused frame left a payload pointer");
        return 0;
    }
    FUZZ_CHECK(torus_frame_is_well_formed(data, size), "accepted but not well formed");
    FUZZ_CHECK((size_t)header.payload_length + TORUS_FRAME_HEADER_SIZE == size,
               "payload length %u for a frame of %zu bytes", header.payload_length, size);
    FUZZ_CHECK(header.source < FUZZ_FRAME_NODES && header.destination < FUZZ_FRAME_NODES,
               "ranks %u, %u accepted", header.source, header.destination);
    FUZZ_CHECK(header.payload_length == 0 || payload == data + TORUS_FRAME_HEADER_SIZE,
               "payload outside the frame");
    size_t length = torus_frame_encode(&header, payload, header.payload_length, NULL, encoded,
                                       sizeof encoded);
    FUZZ_CHECK(length == size && memcmp(encoded, data, size) == 0,
               "an accepted frame does not encode back to its bytes (%zu, %zu)", length, size);

    /* Tagged under the key, it passes the keyed check and no longer the
     * keyless one. */
    memcpy(copy, data, size);
    torus_frame_seal(copy, size, &fuzz_key);
    struct torus_frame_header tagged;
    FUZZ_CHECK(torus_frame_decode(copy, size, FUZZ_FRAME_NODES, &fuzz_key, &tagged, NULL) ==
                   TORUS_FRAME_OK,
               "a frame sealed under the key is refused under it");
    FUZZ_CHECK(torus_frame_decode(copy, size, FUZZ_FRAME_NODES, NULL, &tagged, NULL) ==
                   TORUS_FRAME_DROP_BAD_CHECKSUM,
               "a tagged frame passes the keyless check");

    /* The next hop: one hop fewer, resealed, still a frame. */
    memcpy(copy, data, size);
    enum torus_frame_status forwarded = torus_frame_forward(copy, size);
    FUZZ_CHECK(forwarded == TORUS_FRAME_OK || forwarded == TORUS_FRAME_DROP_TTL_EXPIRED,
               "forward: %s", torus_frame_status_name(forwarded));
    if (forwarded == TORUS_FRAME_OK) {
        torus_frame_seal(copy, size, NULL);
        enum torus_frame_status again =
            torus_frame_decode(copy, size, FUZZ_FRAME_NODES, NULL, &header, &payload);
        FUZZ_CHECK(again == TORUS_FRAME_OK || again == TORUS_FRAME_DROP_TTL_EXPIRED,
                   "a forwarded frame: %s", torus_frame_status_name(again));
    }
    uint32_t rank = 0;
    unsigned link = 0;
    if (torus_frame_mac_parse(data + TORUS_FRAME_MAC_SIZE, &rank, &link)) {
        uint8_t mac[TORUS_FRAME_MAC_SIZE];
        torus_frame_mac_for_link(rank, link, mac);
        FUZZ_CHECK(memcmp(mac, data + TORUS_FRAME_MAC_SIZE, sizeof mac) == 0,
                   "a parsed MAC does not print back");
    }
    return 0;
}
