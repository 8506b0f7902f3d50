/*
 * The failure semantics of issue 14 (comm/DESIGN.md, "Failure semantics"):
 * modes, the detail call, failure acknowledgment, rebuild and shrink,
 * revoke, agree, adoption of spares.
 */
#include "comm/internal.h"

enum comm_error comm_set_mode(struct comm *ctx, uint32_t comm, enum comm_mode mode,
                              enum comm_msg_mode msg_mode)
{
    (void)ctx, (void)comm, (void)mode, (void)msg_mode;
    return COMM_ERR_ARG;
}

enum comm_error comm_failed_ranks(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                  uint32_t max, uint32_t *count, uint64_t *epoch)
{
    (void)ctx, (void)comm, (void)ranks, (void)max, (void)count, (void)epoch;
    return COMM_ERR_ARG;
}

enum comm_error comm_failure_ack(struct comm *ctx, uint32_t comm)
{
    (void)ctx, (void)comm;
    return COMM_ERR_ARG;
}

enum comm_error comm_failure_get_acked(const struct comm *ctx, uint32_t comm, uint32_t *ranks,
                                       uint32_t max, uint32_t *count)
{
    (void)ctx, (void)comm, (void)ranks, (void)max, (void)count;
    return COMM_ERR_ARG;
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
