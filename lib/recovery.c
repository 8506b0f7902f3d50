#include "lib/recovery.h"

#include <string.h>

#include "lib/le.h"

static const char *const model_names[FAULT_MODEL_LIMIT] = {
#define FAULT_MODEL_TEXT(name, value, text) [value] = text,
    FAULT_MODELS(FAULT_MODEL_TEXT)
#undef FAULT_MODEL_TEXT
};

static const char *const action_names[RECOVERY_ACTION_LIMIT] = {
#define RECOVERY_ACTION_TEXT(name, value, text) [value] = text,
    RECOVERY_ACTIONS(RECOVERY_ACTION_TEXT)
#undef RECOVERY_ACTION_TEXT
};

/* The index of a name of length `length` in names[0..count), count if none. */
static uint8_t index_of(const char *const *names, uint8_t count, const char *name, size_t length)
{
    for (uint8_t i = 0; i < count; i++)
        if (strlen(names[i]) == length && memcmp(names[i], name, length) == 0)
            return i;
    return count;
}

const char *fault_model_name(uint8_t model)
{
    return model < FAULT_MODEL_LIMIT ? model_names[model] : NULL;
}

uint8_t fault_model_from_name(const char *name, size_t length)
{
    return index_of(model_names, FAULT_MODEL_LIMIT, name, length);
}

const char *recovery_action_name(uint8_t action)
{
    return action < RECOVERY_ACTION_LIMIT ? action_names[action] : NULL;
}

uint8_t recovery_action_from_name(const char *name, size_t length)
{
    return index_of(action_names, RECOVERY_ACTION_LIMIT, name, length);
}

bool recovery_policy_uses(const struct recovery_policy *policy, uint8_t action)
{
    for (unsigned m = 0; policy->version != 0 && m < RECOVERY_POLICY_MODELS; m++)
        if (policy->action[m] == action)
            return true;
    return false;
}

uint32_t recovery_mirror_node(uint32_t rank, uint32_t ranks, uint32_t nodes, uint32_t most,
                              uint32_t *index)
{
    *index = UINT32_MAX;
    if (ranks == 0 || rank >= ranks || nodes <= ranks)
        return UINT32_MAX;
    uint64_t spares = nodes - ranks;
    uint64_t spare = (uint64_t)rank * spares / ranks;
    /* the block's first rank: the least r with r * spares / ranks == spare */
    uint64_t first = (spare * ranks + spares - 1u) / spares;
    if (rank - first >= most)
        return UINT32_MAX;
    *index = (uint32_t)(rank - first);
    return ranks + (uint32_t)spare;
}

uint8_t recovery_policy_action(const struct recovery_policy *policy, uint8_t model)
{
    if (policy->version == 0 || model == FAULT_MODEL_NONE || model > RECOVERY_POLICY_MODELS)
        return RECOVERY_IGNORE;
    return policy->action[model - 1];
}

enum {
    OFFSET_VERSION = 0,
    OFFSET_ACTION = 1,
    OFFSET_REPEAT_COUNT = 1 + RECOVERY_POLICY_MODELS,
    OFFSET_REPEAT_WINDOW = OFFSET_REPEAT_COUNT + 1,
    OFFSET_QUARANTINE = OFFSET_REPEAT_WINDOW + 2,
    OFFSET_RESERVED = OFFSET_QUARANTINE + 1,
};
_Static_assert(OFFSET_RESERVED == 9, "the policy layout of lib/recovery.h");

void recovery_policy_encode(const struct recovery_policy *policy,
                            uint8_t out[RECOVERY_POLICY_BYTES])
{
    memset(out, 0, RECOVERY_POLICY_BYTES);
    out[OFFSET_VERSION] = policy->version;
    memcpy(out + OFFSET_ACTION, policy->action, RECOVERY_POLICY_MODELS);
    out[OFFSET_REPEAT_COUNT] = policy->repeat_count;
    le_put_u16(out + OFFSET_REPEAT_WINDOW, policy->repeat_window_s);
    out[OFFSET_QUARANTINE] = policy->quarantine_limit;
}

void recovery_policy_decode(const uint8_t in[RECOVERY_POLICY_BYTES],
                            struct recovery_policy *policy)
{
    memset(policy, 0, sizeof *policy); /* padding too: decoded policies compare whole */
    policy->version = in[OFFSET_VERSION];
    memcpy(policy->action, in + OFFSET_ACTION, RECOVERY_POLICY_MODELS);
    policy->repeat_count = in[OFFSET_REPEAT_COUNT];
    policy->repeat_window_s = le_get_u16(in + OFFSET_REPEAT_WINDOW);
    policy->quarantine_limit = in[OFFSET_QUARANTINE];
}

static bool refuse(unsigned at, const uint8_t *in, unsigned *offset, uint8_t *value,
                   const char **expected, const char *what)
{
    *offset = at;
    *value = in[at];
    *expected = what;
    return false;
}

bool recovery_policy_check(const uint8_t in[RECOVERY_POLICY_BYTES], unsigned *offset,
                           uint8_t *value, const char **expected)
{
    unsigned first_zero = OFFSET_ACTION;
    if (in[OFFSET_VERSION] == 0) {
        for (unsigned i = first_zero; i < RECOVERY_POLICY_BYTES; i++)
            if (in[i] != 0)
                return refuse(i, in, offset, value, expected, "0 (no policy: every byte 0)");
        return true;
    }
    if (in[OFFSET_VERSION] != RECOVERY_POLICY_VERSION)
        return refuse(OFFSET_VERSION, in, offset, value, expected, "0 (no policy) or 1");
    for (unsigned i = 0; i < RECOVERY_POLICY_MODELS; i++)
        if (in[OFFSET_ACTION + i] >= RECOVERY_ACTION_LIMIT)
            return refuse(OFFSET_ACTION + i, in, offset, value, expected,
                          "an action: 0 (ignore), 1 (restart), 2 (migrate) or 3 (promote)");
    uint8_t count = in[OFFSET_REPEAT_COUNT];
    uint16_t window = le_get_u16(in + OFFSET_REPEAT_WINDOW);
    uint8_t limit = in[OFFSET_QUARANTINE];
    if (count == 0) {
        for (unsigned i = OFFSET_REPEAT_WINDOW; i < OFFSET_RESERVED; i++)
            if (in[i] != 0)
                return refuse(i, in, offset, value, expected,
                              "0 (no repeated count: no window, no quarantine)");
    } else {
        if (window == 0)
            return refuse(OFFSET_REPEAT_WINDOW, in, offset, value, expected,
                          "a window of 1..65535 seconds with a repeated count");
        if (limit != 0 && limit <= count)
            return refuse(OFFSET_QUARANTINE, in, offset, value, expected,
                          "0 (no quarantine) or a limit above the repeated count");
    }
    for (unsigned i = OFFSET_RESERVED; i < RECOVERY_POLICY_BYTES; i++)
        if (in[i] != 0)
            return refuse(i, in, offset, value, expected, "0 (reserved)");
    return true;
}
