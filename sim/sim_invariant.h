/*
 * The simulator's per-step invariants over the membership state machine,
 * pure (no struct sim): the simulator checks them after every step, and the
 * exhaustive explorer (tests/explore) in every state it reaches, so both
 * prove the same properties.
 *   - a node holding a view is in it;
 *   - within one life (incarnation) a node's epoch never goes back;
 *   - one membership per epoch, whoever installs it;
 *   - a message from an older epoch changes no view (stale messages are
 *     answered, never applied), but for the exempt kinds.
 */
#ifndef SIM_SIM_INVARIANT_H
#define SIM_SIM_INVARIANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "membership/codec.h"
#include "membership/membership.h"

/* What the checker remembers of one node's current life. */
struct sim_life {
    bool started;
    uint32_t incarnation;
    uint64_t epoch; /* the newest epoch it held in this life */
};

/* The first membership installed under one epoch (the registry's entry). */
struct sim_epoch_view {
    uint64_t digest;
    uint32_t live;
};

/*
 * Checks node id after a step.  first: the epoch's first installation
 * anywhere (NULL when none was recorded).  Returns false with the reason
 * (one line) in why.
 */
bool sim_invariant_node(const struct membership *ctx, uint32_t id, struct sim_life *life,
                        const struct sim_epoch_view *first, char *why, size_t why_size);

/* Messages whose purpose is joining, probing or state transfer: exempt. */
bool sim_exempt_from_epoch_check(uint8_t type);

/* True when msg, about to be handled by ctx, must not change its view. */
bool sim_message_is_stale(const struct membership *ctx, const struct membership_msg *msg);

/* After handling a stale message: did ctx's view change since (epoch, digest)? */
bool sim_view_changed(const struct membership *ctx, uint64_t epoch_before,
                      uint64_t digest_before);

#endif /* SIM_SIM_INVARIANT_H */
