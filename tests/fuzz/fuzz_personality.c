/*
 * The personality block (kernel/personality.h): any bytes where the loader
 * puts it.  An accepted block validates, encodes back to its own 64 bytes
 * and names a node inside its torus; a refused one gets one line, cut to
 * fit and terminated, that names a field.
 */
#include <string.h>

#include "kernel/personality.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct personality p;
    struct personality_error error;
    memset(&error, 0, sizeof error);
    if (!personality_decode(data, size, &p, &error)) {
        char line[192];
        for (unsigned capacity = 1; capacity <= sizeof line; capacity += 47) {
            memset(line, 'x', sizeof line);
            unsigned length = personality_format_error(&error, line, capacity);
            FUZZ_CHECK(length < capacity && line[length] == '\0' && strlen(line) == length,
                       "error line of %u bytes in %u", length, capacity);
        }
        FUZZ_CHECK(strncmp(line, "personality: ", 13) == 0, "error line '%s'", line);
        return 0;
    }
    FUZZ_CHECK(size >= PERSONALITY_SIZE, "accepted %zu bytes", size);
    FUZZ_CHECK(personality_validate(&p, &error), "decoded but invalid: %s",
               error.field != NULL ? error.field : "(block)");
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    FUZZ_CHECK(memcmp(block, data, PERSONALITY_SIZE) == 0,
               "an accepted block does not encode back to its bytes");
    FUZZ_CHECK(p.node_id < personality_node_count(&p), "node %u of %u", p.node_id,
               personality_node_count(&p));
    return 0;
}
