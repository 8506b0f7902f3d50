/*
 * The comm layer's frames (comm/codec.h), through its public decoder only,
 * so that new frame kinds need nothing here: any payload of a COMM torus
 * frame.  Whatever it accepts encodes back to the very same bytes; every
 * refusal and every kind has a name.
 */
#include <string.h>

#include "comm/codec.h"
#include "net/torus/frame.h"
#include "tests/fuzz/fuzz.h"

static uint8_t encoded[TORUS_FRAME_MAX_PAYLOAD];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct comm_frame frame;
    enum comm_decode_status status = comm_decode(data, size, &frame);
    FUZZ_CHECK(comm_decode_status_text(status) != NULL, "status %d has no text", (int)status);
    if (status != COMM_DECODE_OK) {
        return 0;
    }
    FUZZ_CHECK(comm_kind_name(frame.kind) != NULL, "kind %u has no name", frame.kind);
    FUZZ_CHECK(frame.data_length == 0 ||
                   (frame.data >= data && frame.data + frame.data_length <= data + size),
               "data outside the payload");
    size_t length = comm_encode(&frame, encoded, sizeof encoded);
    FUZZ_CHECK(length == size && memcmp(encoded, data, size) == 0,
               "an accepted frame does not encode back to its bytes (%zu, %zu)", length, size);
    return 0;
}
