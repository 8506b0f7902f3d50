/* Personality codec and validator: round trips, and every way a block can be
 * wrong names the right field. */
#include <string.h>

#include "kernel/personality.h"
#include "lib/crc32.h"
#include "tests/check.h"

static struct personality valid_personality(void)
{
    struct personality p;
    memset(&p, 0, sizeof p);
    personality_set_defaults(&p);
    p.dims = 3;
    p.dim_size[0] = 4;
    p.dim_size[1] = 2;
    p.dim_size[2] = 3;
    p.coord[0] = 1;
    p.coord[1] = 1;
    p.coord[2] = 2;
    p.node_id = 1 + 1 * 4 + 2 * 8; /* rank with dimension 0 fastest */
    p.member_count = 24;
    p.boot_incarnation = 7;
    p.mesh_mask = 0x4;
    return p;
}

static const char *field_of_encoded(const struct personality *p)
{
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(p, block);
    struct personality out;
    struct personality_error error = {0};
    if (personality_decode(block, sizeof block, &out, &error))
        return "(accepted)";
    return error.field;
}

static void test_round_trip(void)
{
    struct personality p = valid_personality();
    struct personality_error error = {0};
    CHECK(personality_validate(&p, &error));
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    struct personality out;
    memset(&out, 0xA5, sizeof out);
    CHECK(personality_decode(block, sizeof block, &out, &error));
    CHECK(out.node_id == p.node_id && out.boot_incarnation == 7);
    CHECK(out.dims == 3 && out.dim_size[2] == 3 && out.coord[2] == 2);
    CHECK(out.member_count == 24 && out.tree_radix == p.tree_radix);
    CHECK(personality_is_mesh(&out, 2) && !personality_is_mesh(&out, 0));
    CHECK(personality_is_torus(&out, 0) && !personality_is_torus(&out, 3));
    CHECK(!personality_is_spare(&out));
    CHECK(personality_node_count(&out) == 24);
    /* Byte-exact layout the launcher and QEMU loader rely on. */
    CHECK(block[0] == 'T' && block[1] == 'O' && block[2] == 'R' && block[3] == 'I');
    CHECK(block[8] == 21 && block[16] == 3 && block[24] == 4 && block[48] == 24);
    CHECK(block[21] == PERSONALITY_DEFAULT_TIMEOUT_CEILING && block[22] == 0 && block[23] == 0);
    CHECK(out.timeout_ceiling == PERSONALITY_DEFAULT_TIMEOUT_CEILING);
}

/* The detector's ceiling (byte 21): every value 1..64 goes through as it
 * was, 0 and 65 are refused with one line naming the field. */
static void test_timeout_ceiling(void)
{
    for (unsigned ceiling = 1; ceiling <= PERSONALITY_TIMEOUT_CEILING_MAX; ceiling++) {
        struct personality p = valid_personality();
        p.timeout_ceiling = (uint8_t)ceiling;
        uint8_t block[PERSONALITY_SIZE];
        personality_encode(&p, block);
        struct personality out;
        struct personality_error error = {0};
        CHECKF(personality_decode(block, sizeof block, &out, &error) &&
                   out.timeout_ceiling == ceiling && block[21] == ceiling,
               "timeout_ceiling %u did not go through", ceiling);
    }
    static const unsigned refused[] = {0, PERSONALITY_TIMEOUT_CEILING_MAX + 1};
    for (unsigned i = 0; i < 2; i++) {
        struct personality p = valid_personality();
        p.timeout_ceiling = (uint8_t)refused[i];
        CHECK(strcmp(field_of_encoded(&p), "timeout_ceiling") == 0);
        uint8_t block[PERSONALITY_SIZE];
        personality_encode(&p, block);
        struct personality out;
        struct personality_error error = {0};
        char line[192];
        char expected[160];
        CHECK(!personality_decode(block, sizeof block, &out, &error));
        personality_format_error(&error, line, sizeof line);
        snprintf(expected, sizeof expected,
                 "personality: timeout_ceiling=%u is invalid, expected 1..64 (the detector's "
                 "timeouts at most this many times the set ones)",
                 refused[i]);
        CHECKF(strcmp(line, expected) == 0, "'%s'", line);
        CHECK(strchr(line, '\n') == NULL);
    }
    /* The bytes after it are still reserved. */
    struct personality p = valid_personality();
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    block[22] = 1;
    uint32_t crc = crc32_update(0, block, 60);
    memcpy(block + 60, &crc, 4);
    struct personality out;
    struct personality_error error = {0};
    CHECK(!personality_decode(block, sizeof block, &out, &error) &&
          strcmp(error.field, "reserved") == 0);
}

static void test_missing_and_truncated(void)
{
    struct personality out;
    struct personality_error error = {0};
    CHECK(!personality_decode(NULL, 0, &out, &error));
    CHECK(error.field == NULL);
    char line[192];
    personality_format_error(&error, line, sizeof line);
    CHECK_CONTAINS(line, "personality: missing, expected a 64-byte block");

    struct personality p = valid_personality();
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    for (size_t length = 1; length < PERSONALITY_SIZE; length++) {
        CHECK(!personality_decode(block, length, &out, &error));
        CHECK(error.field != NULL && strcmp(error.field, "length") == 0);
        CHECK(error.value == length);
    }
    personality_format_error(&error, line, sizeof line);
    CHECK(strcmp(line, "personality: length=63 is invalid, expected 64 bytes") == 0);
}

static void test_corruption(void)
{
    struct personality p = valid_personality();
    uint8_t good[PERSONALITY_SIZE];
    personality_encode(&p, good);
    /* Every single-bit flip anywhere must be rejected. */
    for (unsigned bit = 0; bit < PERSONALITY_SIZE * 8; bit++) {
        uint8_t bad[PERSONALITY_SIZE];
        memcpy(bad, good, sizeof bad);
        bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        struct personality out;
        struct personality_error error = {0};
        CHECK(!personality_decode(bad, sizeof bad, &out, &error));
        CHECK(error.field != NULL);
        if (bit / 8 < 4)
            CHECK(strcmp(error.field, "magic") == 0);
        else if (bit / 8 >= 8)
            CHECK(strcmp(error.field, "crc32") == 0);
    }
    uint8_t bad[PERSONALITY_SIZE];
    memcpy(bad, good, sizeof bad);
    bad[4] = 2; /* version 2, CRC fixed up: the version is what is wrong */
    uint32_t crc = crc32_update(0, bad, 60);
    memcpy(bad + 60, &crc, 4);
    struct personality out;
    struct personality_error error = {0};
    CHECK(!personality_decode(bad, sizeof bad, &out, &error));
    CHECK(strcmp(error.field, "version") == 0 && error.value == 2);

    char line[192];
    memcpy(bad, good, sizeof bad);
    bad[60] ^= 1;
    CHECK(!personality_decode(bad, sizeof bad, &out, &error));
    personality_format_error(&error, line, sizeof line);
    CHECK_CONTAINS(line, "personality: crc32=0x");
    CHECK_CONTAINS(line, "is invalid, expected the CRC-32 of bytes 0..59");
}

static void test_out_of_range_fields(void)
{
    struct personality p;

    p = valid_personality(); p.dims = 0;
    CHECK(strcmp(field_of_encoded(&p), "dims") == 0);
    p = valid_personality(); p.dims = CONFIG_MAX_DIMS + 1;
    CHECK(strcmp(field_of_encoded(&p), "dims") == 0);
    p = valid_personality(); p.dim_size[1] = 0;
    CHECK(strcmp(field_of_encoded(&p), "dim_size") == 0);
    p = valid_personality(); p.dim_size[3] = 2;
    CHECK(strcmp(field_of_encoded(&p), "dim_size") == 0);
    p = valid_personality(); p.mesh_mask = 0x8;
    CHECK(strcmp(field_of_encoded(&p), "mesh_mask") == 0);
    p = valid_personality(); p.coord[0] = 4;
    CHECK(strcmp(field_of_encoded(&p), "coord") == 0);
    p = valid_personality(); p.node_id = 3;
    CHECK(strcmp(field_of_encoded(&p), "node_id") == 0);
    p = valid_personality(); p.tree_radix = 3;
    CHECK(strcmp(field_of_encoded(&p), "tree_radix") == 0);
    p = valid_personality(); p.tree_radix = 32;
    CHECK(strcmp(field_of_encoded(&p), "tree_radix") == 0);
    p = valid_personality(); p.tree_layout = 3;
    CHECK(strcmp(field_of_encoded(&p), "tree_layout") == 0);
    p = valid_personality(); p.tree_layout = PERSONALITY_TREE_BOX;
    struct personality_error layout_error = {0};
    CHECK(personality_validate(&p, &layout_error));
    uint8_t layout = 0;
    CHECK(personality_tree_layout_from_name("box", &layout) && layout == PERSONALITY_TREE_BOX);
    CHECK(!personality_tree_layout_from_name("ring", &layout) && layout == PERSONALITY_TREE_BOX);
    CHECK(strcmp(personality_tree_layout_name(PERSONALITY_TREE_TORUS), "torus") == 0 &&
          strcmp(personality_tree_layout_name(3), "?") == 0);
    p = valid_personality(); p.role = 9;
    CHECK(strcmp(field_of_encoded(&p), "role") == 0);
    p = valid_personality(); p.member_count = 0;
    CHECK(strcmp(field_of_encoded(&p), "member_count") == 0);
    p = valid_personality(); p.member_count = 25;
    CHECK(strcmp(field_of_encoded(&p), "member_count") == 0);
    p = valid_personality(); p.member_count = 20; /* node 21 must be a spare */
    CHECK(strcmp(field_of_encoded(&p), "role") == 0);
    p.role = PERSONALITY_ROLE_SPARE;
    CHECK(strcmp(field_of_encoded(&p), "(accepted)") == 0);
    p = valid_personality(); p.heartbeat_ms = 0;
    CHECK(strcmp(field_of_encoded(&p), "heartbeat_ms") == 0);
    p = valid_personality(); p.detect_timeout_ms = p.heartbeat_ms;
    CHECK(strcmp(field_of_encoded(&p), "detect_timeout_ms") == 0);
    p = valid_personality(); p.link_rto_ms = 0;
    CHECK(strcmp(field_of_encoded(&p), "link_rto_ms") == 0);
    p = valid_personality(); p.link_retries = 0;
    CHECK(strcmp(field_of_encoded(&p), "link_retries") == 0);
    p = valid_personality(); p.partition_policy = 2;
    CHECK(strcmp(field_of_encoded(&p), "partition_policy") == 0);

    p = valid_personality(); p.tree_radix = 3;
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(&p, block);
    struct personality out;
    struct personality_error error = {0};
    char line[192];
    CHECK(!personality_decode(block, sizeof block, &out, &error));
    personality_format_error(&error, line, sizeof line);
    CHECK(strcmp(line, "personality: tree_radix=3 is invalid, expected a power "
                       "of two in 2..16") == 0);
    /* A short buffer truncates the line but always terminates it. */
    personality_format_error(&error, line, 10);
    CHECK(strlen(line) == 9);
}

int main(void)
{
    test_round_trip();
    test_timeout_ceiling();
    test_missing_and_truncated();
    test_corruption();
    test_out_of_range_fields();
    return check_report("test_personality");
}
