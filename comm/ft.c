/*
 * The failure semantics of issue 14 (comm/DESIGN.md, "Failure semantics"):
 * modes, the detail call, failure acknowledgment, rebuild and shrink,
 * revoke, agree, adoption of spares.
 */
#include "comm/internal.h"

#include <string.h>

/* ---- modes and state ---- */

void ft_comm_init(const struct comm *ctx, struct comm_communicator *c)
{
    c->mode = ctx->config.comm_mode;
    c->msg_mode = ctx->config.msg_mode;
    c->strict = ctx->config.strict_collectives;
    c->revoked = false;
    c->abort_told = false;
    c->recovery_seq = 0;
    c->failure_epoch = 0;
    c->acked = 0;
    c->failed_log_count = 0;
    c->excluded_count = 0;
    c->edit_count = 0;
}

void ft_member_failed(struct comm *ctx, uint16_t slot, uint32_t rank, struct comm_outbox *out)
{
    struct comm_communicator *c = &ctx->comms[slot];
    if (c->failed_log_count < CONFIG_COMM_FT_MAX_EDITS) {
        c->failed_log[c->failed_log_count] = rank;
    }
    c->failed_log_count++;
    /* ULFM: a receive from anyone could have been meant to match the failed
     * rank's message: it fails until the failure is acknowledged. */
    match_fail_posted(ctx, slot, true, COMM_ERR_PROC_FAILED, out);
}

void ft_detected(struct comm *ctx, uint16_t slot, uint64_t epoch, uint64_t now_ns,
                 struct comm_outbox *out)
{
    struct comm_communicator *c = &ctx->comms[slot];
    c->failure_epoch = epoch;
    if (c->mode == COMM_MODE_ABORT && !c->abort_told && c->rank != COMM_RANK_NONE) {
        struct comm_event *e = comm_outbox_event(out, COMM_EVENT_ABORT, now_ns);
        if (e != NULL) {
            e->comm = comm_handle_of(ctx, slot);
            e->count = c->failed;
            e->epoch = epoch;
            c->abort_told = true; /* once per communicator (a lost event is told again) */
        }
    }
}

enum comm_error ft_p2p_check(const struct comm *ctx, const struct comm_communicator *c,
                             uint32_t rank, bool send)
{
    (void)send;
    if (c->revoked) {
        return COMM_ERR_REVOKED;
    }
    if (rank != COMM_ANY_SOURCE && group_node(ctx, c, rank) == COMM_NODE_NONE) {
        return COMM_ERR_INVALID_RANK; /* a BLANK gap */
    }
    if (c->state == COMM_STATE_DETECTED && c->msg_mode == COMM_MSG_NOP) {
        return COMM_ERR_PROC_FAILED; /* NOP: nothing until rebuilt */
    }
    if (rank == COMM_ANY_SOURCE && c->failed_log_count > c->acked) {
        return COMM_ERR_PROC_FAILED; /* ULFM: until failure_ack */
    }
    return COMM_ERR_OK;
}

enum comm_error ft_collective_check(const struct comm_communicator *c)
{
    if (c->revoked) {
        return COMM_ERR_REVOKED;
    }
    if (c->state == COMM_STATE_DETECTED) {
        return COMM_ERR_PROC_FAILED; /* until rebuilt */
    }
    return COMM_ERR_OK;
}

/* ---- the application's calls ---- */

enum comm_error comm_set_mode(struct comm *ctx, uint32_t comm, enum comm_mode mode,
                              enum comm_msg_mode msg_mode)
{
    struct comm_communicator *c = comm_slot_of(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if ((unsigned)mode > COMM_MODE_REBUILD || (unsigned)msg_mode > COMM_MSG_CONT) {
        return COMM_ERR_ARG;
    }
    c->mode = (uint8_t)mode;
    c->msg_mode = (uint8_t)msg_mode;
    return COMM_ERR_OK;
}

/* Insertion sort of a short list (at most CONFIG_COMM_FT_MAX_EDITS). */
static void sort_short(uint32_t *list, uint32_t count)
{
    for (uint32_t i = 1; i < count; i++) {
        uint32_t v = list[i];
        uint32_t j = i;
        for (; j > 0 && list[j - 1u] > v; j--) {
            list[j] = list[j - 1u];
        }
        list[j] = v;
    }
}

enum comm_error comm_failed_ranks(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                  uint32_t max, uint32_t *count, uint64_t *epoch)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if ((max > 0 && ranks == NULL) || count == NULL) {
        return COMM_ERR_ARG;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < c->size; r++) {
        if (!node_is_live(ctx, group_node(ctx, c, r))) {
            if (n < max) {
                ranks[n] = r;
            }
            n++;
        }
    }
    *count = n;
    if (epoch != NULL) {
        *epoch = c->failure_epoch;
    }
    return COMM_ERR_OK;
}

enum comm_error comm_failure_ack(struct comm *ctx, uint32_t comm)
{
    struct comm_communicator *c = comm_slot_of(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    c->acked = c->failed_log_count;
    return COMM_ERR_OK;
}

enum comm_error comm_failure_get_acked(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                       uint32_t max, uint32_t *count)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if ((max > 0 && ranks == NULL) || count == NULL) {
        return COMM_ERR_ARG;
    }
    uint32_t logged = c->acked < CONFIG_COMM_FT_MAX_EDITS ? c->acked : CONFIG_COMM_FT_MAX_EDITS;
    uint32_t sorted[CONFIG_COMM_FT_MAX_EDITS];
    memcpy(sorted, c->failed_log, logged * sizeof sorted[0]);
    sort_short(sorted, logged);
    for (uint32_t i = 0; i < logged && i < max; i++) {
        ranks[i] = sorted[i];
    }
    *count = c->acked; /* beyond the log's room: counted, not listed */
    return COMM_ERR_OK;
}

enum comm_error comm_irebuild(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                              struct comm_outbox *out, uint32_t *new_comm, uint32_t *request)
{
    (void)ctx, (void)comm, (void)now_ns, (void)out, (void)new_comm, (void)request;
    return COMM_ERR_ARG;
}

enum comm_error comm_ishrink(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                             struct comm_outbox *out, uint32_t *new_comm, uint32_t *request)
{
    (void)ctx, (void)comm, (void)now_ns, (void)out, (void)new_comm, (void)request;
    return COMM_ERR_ARG;
}

enum comm_error comm_revoke(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                            struct comm_outbox *out)
{
    (void)ctx, (void)comm, (void)now_ns, (void)out;
    return COMM_ERR_ARG;
}

enum comm_error comm_iagree(struct comm *ctx, uint32_t comm, uint32_t *flag, uint64_t now_ns,
                            struct comm_outbox *out, uint32_t *request)
{
    (void)ctx, (void)comm, (void)flag, (void)now_ns, (void)out, (void)request;
    return COMM_ERR_ARG;
}

enum comm_error comm_iadopt(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out,
                            uint32_t *new_comm, uint32_t *request)
{
    (void)ctx, (void)now_ns, (void)out, (void)new_comm, (void)request;
    return COMM_ERR_ARG;
}
