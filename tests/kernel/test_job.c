/* Job block codec and validator: a round trip, and every way a block can be
 * wrong names the right field (the future features' fields accept only
 * their "off" value). */
#include <string.h>

#include "kernel/job.h"
#include "lib/crc32.h"
#include "tests/check.h"

static struct job valid_job(void)
{
    struct job job;
    job_set_defaults(&job);
    job.app = JOB_APP_STENCIL;
    job.iterations = 500;
    job.progress_interval = 100;
    job.app_arg[0] = 8;
    job.app_arg[1] = -3;
    job.app_arg[2] = INT64_MIN;
    job.app_arg[3] = INT64_MAX;
    return job;
}

/* The field a decoder names for an encoded job, "(accepted)" when none. */
static const char *field_of_encoded(const struct job *job)
{
    uint8_t block[JOB_SIZE];
    job_encode(job, block);
    struct job out;
    struct personality_error error = {0};
    if (job_decode(block, sizeof block, &out, &error))
        return "(accepted)";
    return error.field;
}

static void line_of_encoded(const struct job *job, char *line, unsigned capacity)
{
    uint8_t block[JOB_SIZE];
    job_encode(job, block);
    struct job out;
    struct personality_error error = {0};
    CHECK(!job_decode(block, sizeof block, &out, &error));
    job_format_error(&error, line, capacity);
}

static void test_round_trip(void)
{
    struct job job = valid_job();
    struct personality_error error = {0};
    CHECK(job_validate(&job, &error));
    uint8_t block[JOB_SIZE];
    job_encode(&job, block);
    struct job out;
    memset(&out, 0xA5, sizeof out);
    CHECK(job_decode(block, sizeof block, &out, &error));
    CHECK(out.app == job.app && out.comm_mode == 0 && out.message_mode == 0);
    CHECK(out.routing_mode == 0 && out.iterations == 500 && out.progress_interval == 100);
    CHECK(out.checkpoint_interval == 0 && out.seed_count == 0 && out.seed_node[3] == 0);
    CHECK(memcmp(out.app_arg, job.app_arg, sizeof job.app_arg) == 0);
    CHECK(!job_has_key(&out) && out.recovery.version == 0);
    CHECK_EQ(out.app_arg[1], (uint64_t)-3);
    CHECK(out.app_arg[2] == INT64_MIN && out.app_arg[3] == INT64_MAX);
    /* Byte-exact layout the loader and the host tools rely on. */
    CHECK(block[0] == 'J' && block[1] == 'O' && block[2] == 'B' && block[3] == '1');
    CHECK(block[4] == 1 && block[6] == JOB_SIZE && block[8] == JOB_APP_STENCIL);
    CHECK(block[12] == (500 & 0xFF) && block[13] == (500 >> 8) && block[16] == 100);
    CHECK(block[48] == 8 && block[56] == 0xFD && block[63] == 0xFF);
    uint32_t crc = crc32_update(0, block, 124);
    CHECK(block[124] == (uint8_t)crc && block[127] == (uint8_t)(crc >> 24));
    /* Every application name maps back to its id. */
    for (uint8_t app = 1; app <= JOB_APP_LAST; app++)
        CHECK_EQ(job_app_from_name(job_app_name(app)), app);
    CHECK(job_app_from_name("nosuch") == 0 && job_app_name(0) == NULL);
    CHECK(job_app_name(JOB_APP_LAST + 1) == NULL);

    /* The link loss limit: 0 (the defaults) in a block that has none, and
     * any value through, little-endian at 44 and 46. */
    CHECK(out.link_lossy_retransmits == 0 && out.link_lossy_window_ms == 0);
    job.link_lossy_retransmits = 300;
    job.link_lossy_window_ms = 2500;
    job_encode(&job, block);
    CHECK(block[44] == (300 & 0xFF) && block[45] == (300 >> 8));
    CHECK(block[46] == (2500 & 0xFF) && block[47] == (2500 >> 8));
    CHECK(job_decode(block, sizeof block, &out, &error));
    CHECK_EQ(out.link_lossy_retransmits, 300);
    CHECK_EQ(out.link_lossy_window_ms, 2500);
}

/* The field a decoder names for a block whose policy byte `at` is `value`. */
static const char *field_of_policy_byte(unsigned at, uint8_t value)
{
    struct job job = valid_job();
    uint8_t block[JOB_SIZE];
    job_encode(&job, block);
    block[96] = RECOVERY_POLICY_VERSION;
    block[96 + at] = value;
    uint32_t crc = crc32_update(0, block, 124);
    for (unsigned i = 0; i < 4; i++)
        block[124 + i] = (uint8_t)(crc >> (8 * i));
    struct job out;
    struct personality_error error = {0};
    if (job_decode(block, sizeof block, &out, &error))
        return "(accepted)";
    return error.field;
}

/* Issue 15: the policy in its binary form, byte for byte, and every bad
 * byte refused with the field it is. */
static void test_recovery_policy(void)
{
    struct job job = valid_job();
    job.recovery.version = RECOVERY_POLICY_VERSION;
    job.recovery.action[FAULT_MODEL_PROCESS - 1] = RECOVERY_RESTART;
    job.recovery.action[FAULT_MODEL_PHYSICAL - 1] = RECOVERY_MIGRATE;
    job.recovery.action[FAULT_MODEL_REPEATED - 1] = RECOVERY_PROMOTE;
    job.recovery.repeat_count = 3;
    job.recovery.repeat_window_s = 300;
    job.recovery.quarantine_limit = 6;
    uint8_t block[JOB_SIZE];
    job_encode(&job, block);
    static const uint8_t expected[12] = {1, 1, 2, 0, 3, 3, 300 & 0xFF, 300 >> 8, 6, 0, 0, 0};
    CHECK(memcmp(block + 96, expected, sizeof expected) == 0);
    struct job out;
    struct personality_error error = {0};
    CHECK(job_decode(block, sizeof block, &out, &error));
    CHECK(out.recovery.version == 1 && out.recovery.repeat_count == 3 &&
          out.recovery.repeat_window_s == 300 && out.recovery.quarantine_limit == 6);
    CHECK(memcmp(out.recovery.action, job.recovery.action, sizeof job.recovery.action) == 0);
    CHECK_EQ(recovery_policy_action(&out.recovery, FAULT_MODEL_PHYSICAL), RECOVERY_MIGRATE);
    CHECK_EQ(recovery_policy_action(&out.recovery, FAULT_MODEL_NETWORK), RECOVERY_IGNORE);
    CHECK_EQ(recovery_policy_action(&out.recovery, FAULT_MODEL_NONE), RECOVERY_IGNORE);

    /* No policy: every byte 0, and nothing after a zero version. */
    job = valid_job(); job.recovery.action[0] = RECOVERY_RESTART;
    CHECK(strcmp(field_of_encoded(&job), "recovery_policy.process") == 0);
    CHECK(strcmp(field_of_policy_byte(0, 2), "recovery_policy.version") == 0);
    CHECK(strcmp(field_of_policy_byte(2, 4), "recovery_policy.physical") == 0);
    CHECK(strcmp(field_of_policy_byte(3, RECOVERY_PROMOTE), "(accepted)") == 0);
    CHECK(strcmp(field_of_policy_byte(6, 10), "recovery_policy.repeat_window") == 0);
    CHECK(strcmp(field_of_policy_byte(15, 1), "recovery_policy.reserved") == 0);
    CHECK(strcmp(field_of_policy_byte(23, 1), "recovery_policy.reserved") == 0);
    /* A count needs a window; the quarantine limit lies above the count. */
    job = valid_job(); job.recovery.version = 1; job.recovery.repeat_count = 3;
    CHECK(strcmp(field_of_encoded(&job), "recovery_policy.repeat_window") == 0);
    job.recovery.repeat_window_s = 60; job.recovery.quarantine_limit = 3;
    CHECK(strcmp(field_of_encoded(&job), "recovery_policy.quarantine") == 0);
    char line[200];
    line_of_encoded(&job, line, sizeof line);
    CHECK(strcmp(line, "job: recovery_policy.quarantine=3 is invalid, expected 0 (no "
                       "quarantine) or a limit above the repeated count") == 0);
    job.recovery.quarantine_limit = 4;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
}

static void test_missing_and_truncated(void)
{
    struct job out;
    struct personality_error error = {0};
    char line[192];
    CHECK(!job_decode(NULL, 0, &out, &error));
    CHECK(error.field == NULL);
    job_format_error(&error, line, sizeof line);
    CHECK_CONTAINS(line, "job: missing, expected a 128-byte block");

    struct job job = valid_job();
    uint8_t block[JOB_SIZE];
    job_encode(&job, block);
    for (size_t length = 1; length < JOB_SIZE; length++) {
        CHECK(!job_decode(block, length, &out, &error));
        CHECK(error.field != NULL && strcmp(error.field, "length") == 0);
        CHECK_EQ(error.value, length);
    }
    job_format_error(&error, line, sizeof line);
    CHECK(strcmp(line, "job: length=127 is invalid, expected 128 bytes") == 0);
    /* A longer region (the QEMU page) holds the block at its start. */
    uint8_t page[1024] = {0};
    memcpy(page, block, sizeof block);
    CHECK(job_decode(page, sizeof page, &out, &error));
}

/* Rewrites the CRC after a change, so the field itself is what is wrong. */
static void fix_crc(uint8_t block[JOB_SIZE])
{
    uint32_t crc = crc32_update(0, block, 124);
    for (unsigned i = 0; i < 4; i++)
        block[124 + i] = (uint8_t)(crc >> (8 * i));
}

static void test_corruption(void)
{
    struct job job = valid_job();
    uint8_t good[JOB_SIZE];
    job_encode(&job, good);
    /* Every single-bit flip anywhere is rejected. */
    for (unsigned bit = 0; bit < JOB_SIZE * 8; bit++) {
        uint8_t bad[JOB_SIZE];
        memcpy(bad, good, sizeof bad);
        bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        struct job out;
        struct personality_error error = {0};
        CHECK(!job_decode(bad, sizeof bad, &out, &error));
        CHECK(error.field != NULL);
        if (error.field == NULL)
            continue;
        if (bit / 8 < 4)
            CHECK(strcmp(error.field, "magic") == 0);
        else if (bit / 8 >= 8)
            CHECK(strcmp(error.field, "crc32") == 0);
    }
    struct {
        unsigned offset;
        uint8_t value;
        const char *field;
    } const cases[] = {
        {4, 2, "version"}, {6, 64, "size"}, {120, 1, "reserved"}, {123, 1, "reserved"},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t bad[JOB_SIZE];
        memcpy(bad, good, sizeof bad);
        bad[cases[i].offset] = cases[i].value;
        fix_crc(bad);
        struct job out;
        struct personality_error error = {0};
        CHECK(!job_decode(bad, sizeof bad, &out, &error));
        CHECKF(error.field != NULL && strcmp(error.field, cases[i].field) == 0,
               "offset %u: %s", cases[i].offset, error.field ? error.field : "(none)");
    }
    char line[192];
    uint8_t bad[JOB_SIZE];
    memcpy(bad, good, sizeof bad);
    bad[124] ^= 1;
    struct job out;
    struct personality_error error = {0};
    CHECK(!job_decode(bad, sizeof bad, &out, &error));
    job_format_error(&error, line, sizeof line);
    CHECK_CONTAINS(line, "job: crc32=0x");
    CHECK_CONTAINS(line, "is invalid, expected the CRC-32 of bytes 0..123");
}

static void test_out_of_range_fields(void)
{
    struct job job;
    char line[256];

    job = valid_job(); job.app = 0;
    CHECK(strcmp(field_of_encoded(&job), "app") == 0);
    job = valid_job(); job.app = JOB_APP_LAST + 1;
    CHECK(strcmp(field_of_encoded(&job), "app") == 0);
    job = valid_job(); job.iterations = 0;
    CHECK(strcmp(field_of_encoded(&job), "iterations") == 0);
    job = valid_job(); job.progress_interval = job.iterations + 1;
    CHECK(strcmp(field_of_encoded(&job), "progress_interval") == 0);
    job = valid_job(); job.progress_interval = 0;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    job = valid_job(); job.progress_interval = job.iterations;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);

    /* The modes of issue 14: every defined value passes, the next does not. */
    for (uint8_t mode = JOB_COMM_ABORT; mode <= JOB_COMM_REBUILD; mode++) {
        job = valid_job(); job.comm_mode = mode;
        CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    }
    job = valid_job(); job.comm_mode = JOB_COMM_REBUILD + 1;
    CHECK(strcmp(field_of_encoded(&job), "comm_mode") == 0);
    line_of_encoded(&job, line, sizeof line);
    CHECK(strcmp(line, "job: comm_mode=4 is invalid, expected 0 (abort), 1 (blank), "
                       "2 (shrink) or 3 (rebuild)") == 0);
    job = valid_job(); job.message_mode = JOB_MESSAGE_CONT;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    job = valid_job(); job.message_mode = 7;
    CHECK(strcmp(field_of_encoded(&job), "message_mode") == 0);
    line_of_encoded(&job, line, sizeof line);
    CHECK_CONTAINS(line, "expected 0 (nop) or 1 (cont)");
    for (uint8_t mode = 0; mode <= JOB_COMM_REBUILD; mode++)
        CHECK(job_comm_mode_from_name(job_comm_mode_name(mode)) == mode);
    CHECK(job_comm_mode_name(job_comm_mode_from_name("respawn")) == NULL);
    CHECK(job_message_mode_from_name("cont") == JOB_MESSAGE_CONT);
    CHECK(job_message_mode_name(job_message_mode_from_name("Nop")) == NULL);
    /* Routing (issue 16): detour or table, nothing else. */
    job = valid_job(); job.routing_mode = JOB_ROUTING_TABLE;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    job = valid_job(); job.routing_mode = 2;
    CHECK(strcmp(field_of_encoded(&job), "routing_mode") == 0);
    line_of_encoded(&job, line, sizeof line);
    CHECK_CONTAINS(line, "expected 0 (detour) or 1 (table)");
    CHECK(job_routing_mode_from_name("table") == JOB_ROUTING_TABLE);
    CHECK(job_routing_mode_from_name("detour") == JOB_ROUTING_DETOUR);
    CHECK(job_routing_mode_name(job_routing_mode_from_name("tables")) == NULL);
    /* Checkpoints (issue 15): every K iterations, K at most the iterations. */
    job = valid_job(); job.checkpoint_interval = job.iterations;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    job.checkpoint_interval = job.iterations + 1;
    CHECK(strcmp(field_of_encoded(&job), "checkpoint_interval") == 0);
    line_of_encoded(&job, line, sizeof line);
    CHECK_CONTAINS(line, "at most the iterations");
    job = valid_job(); job.seed_count = 5;
    CHECK(strcmp(field_of_encoded(&job), "seed_count") == 0);
    job = valid_job(); job.seed_node[3] = 5;
    CHECK(strcmp(field_of_encoded(&job), "seed_node") == 0);
    job = valid_job(); job.seed_count = 3; job.seed_node[3] = 5; /* beyond the count */
    CHECK(strcmp(field_of_encoded(&job), "seed_node") == 0);
    /* Seed nodes (issue 16): up to 4, and they come back whole. */
    job = valid_job(); job.seed_count = 2; job.seed_node[0] = 0; job.seed_node[1] = 31;
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    /* A key (issue 20): random bytes pass, and come back whole. */
    job = valid_job();
    static const uint8_t random_key[JOB_KEY_BYTES] = {0x3f, 0xa1, 0x07, 0xc4, 0x5e, 0x92,
                                                      0x18, 0xdb, 0x66, 0x0a, 0xf3, 0x2c,
                                                      0x81, 0x4d, 0xb7, 0x19};
    memcpy(job.job_key, random_key, JOB_KEY_BYTES);
    CHECK(job_has_key(&job));
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);
    {
        uint8_t block[JOB_SIZE];
        job_encode(&job, block);
        struct job out;
        struct personality_error error = {0};
        CHECK(job_decode(block, sizeof block, &out, &error));
        CHECK(memcmp(out.job_key, random_key, JOB_KEY_BYTES) == 0);
    }
    /* A pattern is no key (a bug's fill, a hand-typed one), and the error
     * never shows its value. */
    static const uint8_t patterns[][4] = {{0xff, 0xff, 0xff, 0xff}, {0xc0, 0xc1, 0xc0, 0xc1},
                                          {0x00, 0x00, 0x00, 0x01}, {0x41, 0x42, 0x43, 0x41}};
    for (unsigned p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        job = valid_job();
        for (unsigned i = 0; i < JOB_KEY_BYTES; i++)
            job.job_key[i] = patterns[p][i % 4];
        CHECK(strcmp(field_of_encoded(&job), "job_key") == 0);
        line_of_encoded(&job, line, sizeof line);
        CHECK(strcmp(line, "job: job_key=0 is invalid, expected all zero (no key) or 128 "
                           "random bits from /dev/urandom, not a pattern of a few byte "
                           "values (value not shown)") == 0);
        CHECK(strstr(line, "ff") == NULL && strstr(line, "c0") == NULL &&
              strstr(line, "192") == NULL && strstr(line, "255") == NULL);
    }
    /* Four distinct values are enough not to be taken for a pattern. */
    job = valid_job();
    for (unsigned i = 0; i < JOB_KEY_BYTES; i++)
        job.job_key[i] = (uint8_t)(0x10 * (i % 4) + 1);
    CHECK(strcmp(field_of_encoded(&job), "(accepted)") == 0);

    job = valid_job(); job.iterations = 0;
    line_of_encoded(&job, line, sizeof line);
    CHECK(strcmp(line, "job: iterations=0 is invalid, expected at least 1") == 0);
    /* A short buffer truncates the line but always terminates it. */
    struct personality_error error = {"iterations", 0, "at least 1"};
    job_format_error(&error, line, 10);
    CHECK(strlen(line) == 9);
}

int main(void)
{
    test_round_trip();
    test_missing_and_truncated();
    test_corruption();
    test_out_of_range_fields();
    test_recovery_policy();
    return check_report("test_job");
}
