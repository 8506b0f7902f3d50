/*
 * Fault models and recovery policies (ABARIS, issue 15): what kind of fault
 * a detection was, and what the job does about each kind.  One list of
 * each, with their names, used by the job block, the membership root's
 * decision, the node's events and every tool.
 *
 * The policy's binary form fills the job block's 24-byte recovery_policy
 * field (kernel/job.h):
 *   0     version (0: no policy, every other byte 0; 1: this layout)
 *   1..4  action per model: process, physical, network, repeated
 *   5     repeated count K (0: no escalation)
 *   6..7  repeated window in seconds (u16 LE; 1..65535 when K is set)
 *   8     quarantine limit Q: removals within the window at which a node's
 *         rejoin is refused (0: never; else K < Q <= 255)
 *   9..23 reserved (0)
 * Escalation (the cascade): the root counts the removals of each node id
 * in a window that opens at the first of them; the K-th and later ones are
 * REPEATED faults, and at the Q-th the node is quarantined.
 */
#ifndef LIB_RECOVERY_H
#define LIB_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAULT_MODELS(X)                                                            \
    X(NONE, 0, "none")                                                             \
    X(PROCESS, 1, "process")   /* the runtime answers, the application is gone */ \
    X(PHYSICAL, 2, "physical") /* silent to probes and on every link */          \
    X(NETWORK, 3, "network")   /* a link down, its far node reachable */          \
    X(REPEATED, 4, "repeated") /* removed K times within the window */        \
    X(LEFT, 5, "left")         /* it asked to leave (`leave N`): no fault */

enum fault_model {
#define FAULT_MODEL_ENUM(name, value, text) FAULT_MODEL_##name = value,
    FAULT_MODELS(FAULT_MODEL_ENUM)
#undef FAULT_MODEL_ENUM
    FAULT_MODEL_LIMIT
};

#define RECOVERY_ACTIONS(X)                                                        \
    X(IGNORE, 0, "ignore")   /* the view change only */                          \
    X(RESTART, 1, "restart") /* the launcher restarts the same node */           \
    X(MIGRATE, 2, "migrate") /* a spare adopts the rank */                       \
    X(PROMOTE, 3, "promote") /* a mirroring standby takes over */

enum recovery_action {
#define RECOVERY_ACTION_ENUM(name, value, text) RECOVERY_##name = value,
    RECOVERY_ACTIONS(RECOVERY_ACTION_ENUM)
#undef RECOVERY_ACTION_ENUM
    RECOVERY_ACTION_LIMIT
};

/* The models a policy gives an action for (every model but NONE and LEFT:
 * a leave is an orderly exit, nothing to recover). */
#define RECOVERY_POLICY_MODELS (FAULT_MODEL_LEFT - 1)
#define RECOVERY_POLICY_BYTES 24
#define RECOVERY_POLICY_VERSION 1

struct recovery_policy {
    uint8_t version;                        /* 0: none */
    uint8_t action[RECOVERY_POLICY_MODELS]; /* enum recovery_action, by model - 1 */
    uint8_t repeat_count;                   /* K; 0: no escalation */
    uint16_t repeat_window_s;               /* the window, seconds */
    uint8_t quarantine_limit;               /* Q; 0: never */
};

/* Names ("process", "restart"; NULL for a value that is none) and back
 * (FAULT_MODEL_LIMIT / RECOVERY_ACTION_LIMIT for a name that is none). */
const char *fault_model_name(uint8_t model);
uint8_t fault_model_from_name(const char *name, size_t length);
const char *recovery_action_name(uint8_t action);
uint8_t recovery_action_from_name(const char *name, size_t length);

/* The action for a model (IGNORE without a policy, or for NONE and LEFT). */
uint8_t recovery_policy_action(const struct recovery_policy *policy, uint8_t model);

/* The binary form (see above); decode does not validate. */
void recovery_policy_encode(const struct recovery_policy *policy,
                            uint8_t out[RECOVERY_POLICY_BYTES]);
void recovery_policy_decode(const uint8_t in[RECOVERY_POLICY_BYTES],
                            struct recovery_policy *policy);
/* Checks a decoded policy's bytes; false with the offending byte's offset
 * and value and what was expected. */
bool recovery_policy_check(const uint8_t in[RECOVERY_POLICY_BYTES], unsigned *offset,
                           uint8_t *value, const char **expected);

/*
 * PROMOTE's pairing: the standby spare that mirrors a rank's checkpoints.
 * The spares are the node ids ranks..nodes-1; they share the ranks in
 * blocks of consecutive ranks, in order (spare i the ranks r with
 * r * spares / ranks == i), each the first `most` of its block.  The spare's
 * node id, *index the rank's place in its block; UINT32_MAX when the rank
 * has no mirror (no spare, or past its block's first `most`).  The same
 * everywhere: the checkpoints' sender and receiver, and the REBUILD that
 * pairs a failed rank with its mirror.
 */
/* The policy has `action` for some model. */
bool recovery_policy_uses(const struct recovery_policy *policy, uint8_t action);

uint32_t recovery_mirror_node(uint32_t rank, uint32_t ranks, uint32_t nodes, uint32_t most,
                              uint32_t *index);

#endif /* LIB_RECOVERY_H */
