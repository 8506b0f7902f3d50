/*
 * Node bring-up of the communication service: the pure comm core (comm/)
 * fed with COMM frames (and the epoch of their torus header), the views the
 * membership installs, and ticks; its outbox turned into frames stamped
 * with the sender's view epoch, membership suspicions and event lines.
 */
#include <string.h>

#include "lib/recovery.h"
#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/main.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/timer.h"
#include "node/node.h"

static timer_id comm_timer = -1;

/* Frames to the torus, suspicions to the membership, events to the console. */
void node_comm_flush(struct node *node, uint64_t now_ns)
{
    struct comm_outbox *out = &node->comm_outbox;
    for (uint32_t i = 0; i < out->frame_count; i++) {
        const struct comm_outgoing *f = &out->frames[i];
        /* A frame the rings refuse is the core's to resend (end to end). */
        torus_network_send(&node->network, f->destination, TORUS_FRAME_TYPE_COMM, f->epoch,
                           comm_outbox_payload(out, i), f->length, now_ns);
    }
    for (uint32_t i = 0; i < out->event_count; i++) {
        const struct comm_event *e = &out->events[i];
        event_begin(comm_event_name(e->type));
        event_add_u64("epoch", e->epoch);
        if (e->type == COMM_EVENT_DETECTED) {
            event_add_hex("comm", e->comm);
            event_add_u64("failed", e->count);
        } else if (e->type == COMM_EVENT_ABORT) {
            event_add_hex("comm", e->comm);
        } else if (e->type == COMM_EVENT_REVOKED) {
            event_add_hex("comm", e->comm);
            event_add_u64("by", e->node);
        } else {
            event_add_u64("peer", e->node);
        }
        event_end();
        if (e->type == COMM_EVENT_DETECTED || e->type == COMM_EVENT_ABORT)
            node_job_comm_failed(e->comm, e->type == COMM_EVENT_ABORT);
    }
    bool overflow = out->dropped_frames != 0 || out->dropped_events != 0;
    if (overflow) {
        event_begin("comm-outbox-overflow");
        event_add_u64("frames", out->dropped_frames);
        event_add_u64("events", out->dropped_events);
        event_end();
    }
    /* Suspicions last: the membership call may install a view, which
     * writes into this outbox again. */
    uint32_t suspects[COMM_OUTBOX_EVENTS];
    uint32_t suspect_count = 0;
    for (uint32_t i = 0; i < out->event_count; i++)
        if (out->events[i].type == COMM_EVENT_SUSPECT)
            suspects[suspect_count++] = out->events[i].node;
    comm_outbox_clear(out);
    for (uint32_t i = 0; i < suspect_count; i++)
        node_membership_suspect(node, suspects[i], now_ns);
}

/*
 * Keeps the core on the membership's view: every view this node installs
 * as a member, and none while it is out (expelled, partitioned away,
 * joining).  Called from the comm poller, not from the membership's flush,
 * so that a suspicion the core reports (which calls the membership) never
 * leads back here: the call graph stays free of cycles.
 */
static void follow_view(struct node *node, uint64_t now_ns)
{
    const struct membership *m = &node->membership;
    struct comm *comm = &node->comm;
    bool member = node_membership_is_started() && membership_has_view(m) &&
                  !membership_is_joining(m) &&
                  membership_is_member(m, node->personality->node_id);
    if (member && (!comm_has_view(comm) || membership_epoch(m) > comm_view_epoch(comm))) {
        /* The membership's own view and layout: its bits are positions. */
        comm_install_view(comm, membership_epoch(m), &m->view, &m->layout, now_ns,
                          &node->comm_outbox);
        node_comm_flush(node, now_ns);
    } else if (!member && comm_has_view(comm)) {
        comm_drop_view(comm, membership_incarnation(m), now_ns, &node->comm_outbox);
        node_comm_flush(node, now_ns);
    }
}

/*
 * A frame of an older view was dropped: named in a `comm-stale` line (who
 * sent it, its epoch, ours, the core's total), so that a resumed node's
 * traffic from its old life shows where it was fenced.  Rate-limited: a
 * line for the first frame of each (source, epoch), else one a second.
 */
#define STALE_LINE_INTERVAL_NS 1000000000u
static struct {
    bool reported;
    uint32_t source;
    uint64_t epoch;
    uint64_t at_ns;
} stale_line;

static void report_stale(const struct node *node, uint32_t source, uint64_t epoch,
                         uint64_t now_ns)
{
    bool same = stale_line.reported && stale_line.source == source &&
                stale_line.epoch == epoch;
    if (same && now_ns - stale_line.at_ns < STALE_LINE_INTERVAL_NS)
        return;
    stale_line.reported = true;
    stale_line.source = source;
    stale_line.epoch = epoch;
    stale_line.at_ns = now_ns;
    event_begin("comm-stale");
    event_add_u64("source", source);
    event_add_u64("epoch", epoch);
    event_add_u64("view", comm_view_epoch(&node->comm));
    event_add_u64("dropped", comm_get_counters(&node->comm)->drops_stale_epoch);
    event_end();
}

static void on_comm_frame(void *context, const struct torus_frame_header *header,
                          const uint8_t *payload, uint64_t now_ns)
{
    struct node *node = context;
    uint32_t stale_before = comm_get_counters(&node->comm)->drops_stale_epoch;
    comm_receive(&node->comm, header->source, header->epoch, payload, header->payload_length,
                 now_ns, &node->comm_outbox);
    if (comm_get_counters(&node->comm)->drops_stale_epoch != stale_before)
        report_stale(node, header->source, header->epoch, now_ns);
    node_comm_flush(node, now_ns);
}

static unsigned comm_poll(void *context, uint64_t now_ns)
{
    struct node *node = context;
    unsigned work = 0;
    follow_view(node, now_ns);
    if (comm_next_deadline(&node->comm) <= now_ns) {
        comm_tick(&node->comm, now_ns, &node->comm_outbox);
        node_comm_flush(node, now_ns);
        work = 1;
    }

    uint64_t deadline = comm_next_deadline(&node->comm);
    if (deadline == COMM_NEVER)
        timer_disarm(timer_kernel_table(), comm_timer);
    else
        timer_arm(timer_kernel_table(), comm_timer, deadline);
    return work;
}

/* "comm": the core's view and WORLD as this node sees them, and what it
 * did by epoch (a frame of an older view is counted, never delivered; one
 * of a newer view is held until this node installs it, or dropped). */
static void command_comm(void *context, const char *arguments, uint64_t now_ns)
{
    (void)arguments;
    (void)now_ns;
    const struct node *node = context;
    const struct comm *comm = &node->comm;
    const struct comm_counters *c = comm_get_counters(comm);
    event_begin("comm-state");
    event_add_u64("has_view", comm_has_view(comm) ? 1 : 0);
    event_add_u64("epoch", comm_view_epoch(comm));
    uint32_t rank = comm_rank(comm, COMM_WORLD);
    event_add_i64("rank", rank == COMM_RANK_NONE ? -1 : (int64_t)rank);
    event_add_u64("size", comm_size(comm, COMM_WORLD));
    event_add_u64("views", c->views_installed);
    event_add_u64("frames_received", c->frames_received);
    event_add_u64("frames_sent", c->frames_sent);
    event_add_u64("drops_stale_epoch", c->drops_stale_epoch);
    event_add_u64("drops_no_view", c->drops_no_view);
    event_add_u64("drops_ahead_epoch", c->drops_ahead_epoch);
    event_add_u64("frames_held", c->frames_held);
    event_add_u64("held_delivered", c->held_delivered);
    event_add_u64("held_dropped", c->held_dropped);
    /* what recovery costs on the wire: resends after the timeout, answers
     * to sessions lost, frames beyond the window or already had */
    event_add_u64("data_frames_sent", c->data_frames_sent);
    event_add_u64("retransmissions", c->retransmissions);
    event_add_u64("resets", c->resets);
    event_add_u64("drops_out_of_order", c->drops_out_of_order);
    event_add_u64("drops_duplicate", c->drops_duplicate);
    event_add_u64("waits_sent", c->waits_sent);
    event_add_u64("busy_sent", c->busy_sent);
    event_add_u64("rto_ns", comm->config.rto_ns);
    event_end();
}

void node_comm_init(struct node *node)
{
    const struct personality *p = node->personality;
    struct comm_config config;
    comm_config_defaults(&config);
    config.node_id = p->node_id;
    config.incarnation = p->boot_incarnation;
    config.node_count = personality_node_count(p);
    config.world_size = p->member_count; /* WORLD: the initial view's compute nodes */
    config.restarted = p->boot_incarnation > 1 && p->node_id < p->member_count;
    /* A frame lost on a hop is the link layer's to resend, after its own
     * timeout; the frames queued behind it wait as long.  An end-to-end
     * resend before twice that only duplicates them, into rings they fill. */
    uint64_t link_rto_ns = (uint64_t)p->link_rto_ms * 1000000u;
    if (2u * link_rto_ns > config.rto_ns)
        config.rto_ns = 2u * link_rto_ns < config.rto_max_ns ? 2u * link_rto_ns : config.rto_max_ns;
    const struct job *job = kernel_job();
    if (job != NULL) { /* every communicator's modes: the job's */
        config.comm_mode = job->comm_mode;
        config.msg_mode = job->message_mode;
        /* PROMOTE: the ranks mirror their checkpoints to standby spares. */
        config.mirrors = recovery_policy_uses(&job->recovery, RECOVERY_PROMOTE);
    }
    enum comm_init_status status = comm_init(&node->comm, &config);
    if (status != COMM_INIT_OK)
        kernel_panic(comm_init_status_text(status));
    comm_outbox_clear(&node->comm_outbox);
    torus_network_set_handler(&node->network, TORUS_FRAME_TYPE_COMM, on_comm_frame, node);
    comm_timer = timer_add_wakeup(timer_kernel_table(), "comm");
    if (comm_timer < 0)
        kernel_panic("comm: timer table full (raise CONFIG_MAX_TIMERS)");
    poll_register("comm", comm_poll, node);
    console_command_register("comm", command_comm, node, CONSOLE_NO_ARGUMENTS);
}
