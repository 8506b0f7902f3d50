#include "kernel/job.h"

#include <string.h>

#include "lib/crc32.h"
#include "lib/le.h"

enum job_offset {
    OFFSET_MAGIC = 0,
    OFFSET_VERSION = 4,
    OFFSET_SIZE = 6,
    OFFSET_APP = 8,
    OFFSET_COMM_MODE = 9,
    OFFSET_MESSAGE_MODE = 10,
    OFFSET_ROUTING_MODE = 11,
    OFFSET_ITERATIONS = 12,
    OFFSET_PROGRESS_INTERVAL = 16,
    OFFSET_CHECKPOINT_INTERVAL = 20,
    OFFSET_SEED_COUNT = 24,
    OFFSET_SEED_NODE = 28, /* 4 x u32 */
    OFFSET_LINK_LOSSY_RETRANSMITS = 44,
    OFFSET_LINK_LOSSY_WINDOW_MS = 46,
    OFFSET_APP_ARG = 48,   /* 4 x i64 */
    OFFSET_JOB_KEY = 80,   /* 16 bytes */
    OFFSET_RECOVERY_POLICY = 96, /* 24 bytes */
    OFFSET_RESERVED_TAIL = 120,  /* 4 bytes */
    OFFSET_CRC = 124,
};
_Static_assert(OFFSET_CRC + 4 == JOB_SIZE, "the CRC ends the job block");

static const char *const app_names[JOB_APP_LAST + 1] = {
    NULL, "allreduce", "stencil", "pingpong", "greedy", "stale", "ftprobe",
};
static const char *const comm_mode_names[] = {"abort", "blank", "shrink", "rebuild"};
static const char *const message_mode_names[] = {"nop", "cont"};
static const char *const routing_mode_names[] = {"detour", "table"};

const char *job_app_name(uint8_t app)
{
    return app <= JOB_APP_LAST ? app_names[app] : NULL;
}

uint8_t job_app_from_name(const char *name)
{
    for (uint8_t app = 1; app <= JOB_APP_LAST; app++)
        if (strcmp(name, app_names[app]) == 0)
            return app;
    return 0;
}

const char *job_comm_mode_name(uint8_t mode)
{
    return mode <= JOB_COMM_REBUILD ? comm_mode_names[mode] : NULL;
}

const char *job_message_mode_name(uint8_t mode)
{
    return mode <= JOB_MESSAGE_CONT ? message_mode_names[mode] : NULL;
}

const char *job_routing_mode_name(uint8_t mode)
{
    return mode <= JOB_ROUTING_TABLE ? routing_mode_names[mode] : NULL;
}

uint8_t job_routing_mode_from_name(const char *name)
{
    uint8_t mode = 0;
    while (mode <= JOB_ROUTING_TABLE && strcmp(name, routing_mode_names[mode]) != 0)
        mode++;
    return mode;
}

uint8_t job_comm_mode_from_name(const char *name)
{
    uint8_t mode = 0;
    while (mode <= JOB_COMM_REBUILD && strcmp(name, comm_mode_names[mode]) != 0)
        mode++;
    return mode;
}

uint8_t job_message_mode_from_name(const char *name)
{
    uint8_t mode = 0;
    while (mode <= JOB_MESSAGE_CONT && strcmp(name, message_mode_names[mode]) != 0)
        mode++;
    return mode;
}

bool job_has_key(const struct job *job)
{
    uint8_t any = 0;
    for (unsigned i = 0; i < JOB_KEY_BYTES; i++)
        any |= job->job_key[i];
    return any != 0;
}

/* Distinct byte values in the key: 16 random bytes have fewer than
 * JOB_KEY_MIN_DISTINCT with a probability under 10^-24, a key typed by hand
 * or filled by a bug ("0000...", "abababab...") has. */
#define JOB_KEY_MIN_DISTINCT 4u

static unsigned key_distinct_bytes(const struct job *job)
{
    unsigned distinct = 0;
    for (unsigned i = 0; i < JOB_KEY_BYTES; i++) {
        unsigned j = 0;
        while (j < i && job->job_key[j] != job->job_key[i])
            j++;
        distinct += j == i;
    }
    return distinct;
}

void job_set_defaults(struct job *job)
{
    memset(job, 0, sizeof *job);
    job->iterations = 1;
}

/* The recovery policy's bytes, named as fields for errors (lib/recovery.h). */
static const char *const policy_field_names[JOB_POLICY_BYTES] = {
    "recovery_policy.version", "recovery_policy.process", "recovery_policy.physical",
    "recovery_policy.network", "recovery_policy.repeated", "recovery_policy.repeat_count",
    "recovery_policy.repeat_window", "recovery_policy.repeat_window",
    "recovery_policy.quarantine", "recovery_policy.reserved", "recovery_policy.reserved",
    "recovery_policy.reserved", "recovery_policy.reserved", "recovery_policy.reserved",
    "recovery_policy.reserved", "recovery_policy.reserved", "recovery_policy.reserved",
    "recovery_policy.reserved", "recovery_policy.reserved", "recovery_policy.reserved",
    "recovery_policy.reserved", "recovery_policy.reserved", "recovery_policy.reserved",
    "recovery_policy.reserved",
};

static bool fail(struct personality_error *error, const char *field, uint32_t value,
                 const char *expected)
{
    error->field = field;
    error->value = value;
    error->expected = expected;
    return false;
}

bool job_validate(const struct job *job, struct personality_error *error)
{
    if (job->app < 1 || job->app > JOB_APP_LAST)
        return fail(error, "app", job->app,
                    "1 (allreduce), 2 (stencil), 3 (pingpong), 4 (greedy), 5 (stale) or "
                    "6 (ftprobe); 4-6: tests");
    if (job->iterations < 1)
        return fail(error, "iterations", job->iterations, "at least 1");
    if (job->progress_interval > job->iterations)
        return fail(error, "progress_interval", job->progress_interval,
                    "0 (no app-progress) or at most the iterations");
    if (job->comm_mode > JOB_COMM_REBUILD)
        return fail(error, "comm_mode", job->comm_mode,
                    "0 (abort), 1 (blank), 2 (shrink) or 3 (rebuild)");
    if (job->message_mode > JOB_MESSAGE_CONT)
        return fail(error, "message_mode", job->message_mode, "0 (nop) or 1 (cont)");
    /* An image without the failure semantics ends the job on a failure. */
    if (!CONFIG_COMM_FT && job->comm_mode != JOB_COMM_ABORT)
        return fail(error, "comm_mode", job->comm_mode,
                    "0 (abort): this build has the failure semantics compiled out "
                    "(CONFIG_COMM_FT=0)");
    if (!CONFIG_COMM_FT && job->message_mode != JOB_MESSAGE_NOP)
        return fail(error, "message_mode", job->message_mode,
                    "0 (nop): this build has the failure semantics compiled out "
                    "(CONFIG_COMM_FT=0)");
    if (job->routing_mode > JOB_ROUTING_TABLE)
        return fail(error, "routing_mode", job->routing_mode, "0 (detour) or 1 (table)");
    if (job->checkpoint_interval > job->iterations)
        return fail(error, "checkpoint_interval", job->checkpoint_interval,
                    "0 (no checkpoints) or at most the iterations");
    if (job->seed_count > JOB_SEED_NODES)
        return fail(error, "seed_count", job->seed_count, "0 (no seed nodes) to 4");
    for (unsigned i = job->seed_count; i < JOB_SEED_NODES; i++)
        if (job->seed_node[i] != 0)
            return fail(error, "seed_node", job->seed_node[i], "0 beyond seed_count");
    uint8_t policy[JOB_POLICY_BYTES];
    recovery_policy_encode(&job->recovery, policy);
    unsigned offset = 0;
    uint8_t value = 0;
    const char *expected = NULL;
    if (!recovery_policy_check(policy, &offset, &value, &expected))
        return fail(error, policy_field_names[offset], value, expected);
    /* The key's value is never shown, not even in an error. */
    if (job_has_key(job) && key_distinct_bytes(job) < JOB_KEY_MIN_DISTINCT)
        return fail(error, "job_key", 0,
                    "all zero (no key) or 128 random bits from /dev/urandom, not a "
                    "pattern of a few byte values (value not shown)");
    return true;
}

bool job_decode(const uint8_t *block, size_t length, struct job *out,
                struct personality_error *error)
{
    if (block == NULL || length == 0)
        return fail(error, NULL, 0, "a 128-byte block with magic 'JOB1' written by the loader");
    if (length < JOB_SIZE)
        return fail(error, "length", (uint32_t)length, "128 bytes");
    uint32_t magic = le_get_u32(block + OFFSET_MAGIC);
    if (magic != JOB_MAGIC)
        return fail(error, "magic", magic, "0x31424f4a ('JOB1')");
    uint16_t version = le_get_u16(block + OFFSET_VERSION);
    if (version != JOB_VERSION)
        return fail(error, "version", version, "1");
    uint16_t size = le_get_u16(block + OFFSET_SIZE);
    if (size != JOB_SIZE)
        return fail(error, "size", size, "128");
    uint32_t crc = le_get_u32(block + OFFSET_CRC);
    if (crc != crc32_update(0, block, OFFSET_CRC))
        return fail(error, "crc32", crc, "the CRC-32 of bytes 0..123");
    for (unsigned i = 0; i < 4; i++)
        if (block[OFFSET_RESERVED_TAIL + i] != 0)
            return fail(error, "reserved", block[OFFSET_RESERVED_TAIL + i], "0");
    out->app = block[OFFSET_APP];
    out->comm_mode = block[OFFSET_COMM_MODE];
    out->message_mode = block[OFFSET_MESSAGE_MODE];
    out->routing_mode = block[OFFSET_ROUTING_MODE];
    out->iterations = le_get_u32(block + OFFSET_ITERATIONS);
    out->progress_interval = le_get_u32(block + OFFSET_PROGRESS_INTERVAL);
    out->checkpoint_interval = le_get_u32(block + OFFSET_CHECKPOINT_INTERVAL);
    out->seed_count = le_get_u32(block + OFFSET_SEED_COUNT);
    out->link_lossy_retransmits = le_get_u16(block + OFFSET_LINK_LOSSY_RETRANSMITS);
    out->link_lossy_window_ms = le_get_u16(block + OFFSET_LINK_LOSSY_WINDOW_MS);
    for (unsigned i = 0; i < JOB_SEED_NODES; i++)
        out->seed_node[i] = le_get_u32(block + OFFSET_SEED_NODE + 4 * i);
    for (unsigned i = 0; i < JOB_APP_ARGS; i++)
        out->app_arg[i] = (int64_t)le_get_u64(block + OFFSET_APP_ARG + 8 * i);
    memcpy(out->job_key, block + OFFSET_JOB_KEY, JOB_KEY_BYTES);
    /* The raw bytes first: the decoded policy has no room for reserved ones. */
    unsigned offset = 0;
    uint8_t value = 0;
    const char *expected = NULL;
    if (!recovery_policy_check(block + OFFSET_RECOVERY_POLICY, &offset, &value, &expected))
        return fail(error, policy_field_names[offset], value, expected);
    recovery_policy_decode(block + OFFSET_RECOVERY_POLICY, &out->recovery);
    return job_validate(out, error);
}

void job_encode(const struct job *job, uint8_t out[JOB_SIZE])
{
    memset(out, 0, JOB_SIZE);
    le_put_u32(out + OFFSET_MAGIC, JOB_MAGIC);
    le_put_u16(out + OFFSET_VERSION, JOB_VERSION);
    le_put_u16(out + OFFSET_SIZE, JOB_SIZE);
    out[OFFSET_APP] = job->app;
    out[OFFSET_COMM_MODE] = job->comm_mode;
    out[OFFSET_MESSAGE_MODE] = job->message_mode;
    out[OFFSET_ROUTING_MODE] = job->routing_mode;
    le_put_u32(out + OFFSET_ITERATIONS, job->iterations);
    le_put_u32(out + OFFSET_PROGRESS_INTERVAL, job->progress_interval);
    le_put_u32(out + OFFSET_CHECKPOINT_INTERVAL, job->checkpoint_interval);
    le_put_u32(out + OFFSET_SEED_COUNT, job->seed_count);
    le_put_u16(out + OFFSET_LINK_LOSSY_RETRANSMITS, job->link_lossy_retransmits);
    le_put_u16(out + OFFSET_LINK_LOSSY_WINDOW_MS, job->link_lossy_window_ms);
    for (unsigned i = 0; i < JOB_SEED_NODES; i++)
        le_put_u32(out + OFFSET_SEED_NODE + 4 * i, job->seed_node[i]);
    for (unsigned i = 0; i < JOB_APP_ARGS; i++)
        le_put_u64(out + OFFSET_APP_ARG + 8 * i, (uint64_t)job->app_arg[i]);
    memcpy(out + OFFSET_JOB_KEY, job->job_key, JOB_KEY_BYTES);
    recovery_policy_encode(&job->recovery, out + OFFSET_RECOVERY_POLICY);
    le_put_u32(out + OFFSET_CRC, crc32_update(0, out, OFFSET_CRC));
}

unsigned job_format_error(const struct personality_error *error, char *out,
                          unsigned capacity)
{
    return personality_format_block_error("job", error, out, capacity);
}
