/*
 * Node bring-up of the membership service: the pure state machine
 * (membership/) fed with MEMBERSHIP frames, link events and ticks; its
 * outbox turned into frames on the torus and into event lines.
 */
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/main.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/timer.h"
#include "node/node.h"

static timer_id membership_timer = -1;

/*
 * The service starts on the console command `start`, sent by the launcher
 * (the control system) once every node of the job is ready, as a job is
 * launched on Blue Gene: a detector started at each node's own boot would
 * suspect the nodes still booting.  Until then membership frames are
 * dropped; members start in the default view, spares and restarted nodes
 * by joining.
 */
static bool membership_started;
/* A process fault's removal, asked for until the view has us out. */
static struct {
    bool asked;
    uint8_t model;
    uint64_t again_ns;
} removal;
static void emit_event(const struct node *node, const struct membership_event *e,
                       uint64_t entry_ns)
{
    event_begin(membership_event_name(e->type));
    switch (e->type) {
    case MEMBERSHIP_EVENT_VIEW:
        event_add_u64("epoch", e->u.view.epoch);
        event_add_u64("root", e->u.view.root);
        event_add_u64("live", e->u.view.live);
        event_add_hex("digest", e->u.view.digest);
        event_add_u64("ocp_ns", entry_ns);
        break;
    case MEMBERSHIP_EVENT_FAILURE_DETECTED:
        event_add_u64("who", e->u.failure.who);
        event_add_u64("detector", e->u.failure.detector);
        event_add_u64("detect_ns", e->u.failure.detect_ns);
        event_add_str("cause", membership_cause_name(e->u.failure.cause));
        event_add_str("model", fault_model_name(e->u.failure.model));
        break;
    case MEMBERSHIP_EVENT_RECOVERY_DECISION:
        event_add_u64("who", e->u.decision.node); /* node= names the emitter */
        event_add_str("model", fault_model_name(e->u.decision.model));
        event_add_str("action", recovery_action_name(e->u.decision.action));
        event_add_u64("epoch", e->u.decision.epoch);
        if (e->u.decision.quarantined)
            event_add_str("quarantined", "true");
        if (e->u.decision.rejoined)
            event_add_str("rejoined", "true"); /* restarted already: nothing to do */
        break;
    case MEMBERSHIP_EVENT_JOIN_REFUSED:
        event_add_u64("by", e->u.refused.by);
        event_add_str("reason", membership_refused_reason_name(e->u.refused.reason));
        break;
    case MEMBERSHIP_EVENT_STABLE:
        event_add_u64("epoch", e->u.stable.epoch);
        event_add_u64("ts_ns", e->u.stable.ts_ns);
        event_add_u64("confirm_ns", e->u.stable.confirm_ns);
        event_add_u64("messages", e->u.stable.messages);
        event_add_u64("episode_messages", e->u.stable.episode_messages);
        event_add_u64("detector_messages", e->u.stable.detector_messages);
        event_add_u64("rounds", e->u.stable.rounds);
        event_add_u64("live", e->u.stable.live);
        event_add_u64("levels", e->u.stable.levels);
        break;
    case MEMBERSHIP_EVENT_JOINED:
        event_add_u64("epoch", e->u.joined.epoch);
        event_add_u64("root", e->u.joined.root);
        break;
    case MEMBERSHIP_EVENT_EXPELLED:
        event_add_u64("epoch", e->u.expelled.epoch);
        event_add_u64("by", e->u.expelled.by);
        /* This node's own long silences so far (stopped, or starved by its
         * application): an expulsion that follows one is no crash. */
        event_add_u64("pauses", membership_get_counters(&node->membership)->pauses);
        break;
    case MEMBERSHIP_EVENT_LEFT:
        event_add_u64("who", e->u.left.who);
        event_add_u64("epoch", e->u.left.epoch);
        break;
    case MEMBERSHIP_EVENT_REFORMED:
        event_add_u64("epoch", e->u.reformed.epoch);
        event_add_u64("members", e->u.reformed.members);
        event_add_u64("from", e->u.reformed.from);
        break;
    case MEMBERSHIP_EVENT_PARTITIONED:
        event_add_u64("epoch", e->u.partitioned.epoch);
        event_add_u64("side_live", e->u.partitioned.side_live);
        event_add_u64("ref_live", e->u.partitioned.ref_live);
        break;
    default:
        break;
    }
    event_end();
}

/*
 * Tells the network which neighbours the membership shuns (out of the view,
 * or suspected dead), so routes prefer other ways than through a node the
 * membership holds for dead instead of waiting for each link layer to
 * exhaust its retransmissions on it.
 */
static void update_avoided_links(struct node *node)
{
    torus_network_set_absent_links(&node->network,
                                   membership_links_to_avoid(&node->membership));
    uint32_t shunned[TORUS_ROUTE_SHUNNED_MAX];
    uint32_t count =
        membership_shunned_nodes(&node->membership, shunned, TORUS_ROUTE_SHUNNED_MAX);
    torus_network_set_shunned_nodes(&node->network, shunned, count);
}

/*
 * Sends what the state machine wrote and reports its events.  began_ns is
 * when the entry point that wrote them was called: a view line carries the
 * time it took (ocp_ns), the paper's O_cp - the local view and tree update -
 * measured, as the paper says, on the target itself.
 */
/* Nodes that left and came back within one change (see flush_outbox). */
static uint32_t restarted[MEMBERSHIP_MAX_CHANGE_FAILED];
static uint32_t restarted_count;

static void flush_outbox(struct node *node, uint64_t now_ns, uint64_t began_ns)
{
    struct membership_outbox *out = &node->membership_outbox;
    /* The clock is read only when there is a line to put the time on. */
    uint64_t entry_ns = out->event_count != 0 ? board_now_ns() - began_ns : 0;
    uint64_t epoch = membership_epoch(&node->membership);
    /* After every call: a suspect that spoke is forgotten without an event. */
    update_avoided_links(node);
    for (uint32_t i = 0; i < out->message_count; i++) {
        const struct membership_outgoing *m = &out->messages[i];
        /* Losses here are the protocol's to recover (timeouts, retries);
         * heartbeats go as datagrams: no link ack, no resend (issue 20). */
        const uint8_t *payload = membership_outbox_payload(out, i);
        if (m->loss_tolerant)
            torus_network_send_datagram(&node->network, m->destination,
                                        TORUS_FRAME_TYPE_MEMBERSHIP, epoch, payload, m->length,
                                        now_ns);
        else
            torus_network_send(&node->network, m->destination, TORUS_FRAME_TYPE_MEMBERSHIP,
                               epoch, payload, m->length, now_ns);
    }
    bool left = false;
    for (uint32_t i = 0; i < out->event_count; i++) {
        const struct membership_event *e = &out->events[i];
        emit_event(node, e, entry_ns);
        left = left || (e->type == MEMBERSHIP_EVENT_LEFT &&
                        e->u.left.who == node->personality->node_id);
        /* A leave is an orderly exit for the communicators, not a failure:
         * told before the comm core installs the view that removes it. */
        if (e->type == MEMBERSHIP_EVENT_LEFT && e->u.left.who != node->personality->node_id)
            comm_member_left(&node->comm, e->u.left.who);
        /* RESTART: the communicators hold the node's ranks for its next life
         * (a REBUILD gives them back to it rather than to a spare). */
        if (e->type == MEMBERSHIP_EVENT_RECOVERY_DECISION &&
            e->u.decision.action == RECOVERY_RESTART && !e->u.decision.quarantined)
            comm_expect_restart(&node->comm, e->u.decision.node);
        /* Its old life's ranks fail even though the node stays in the view:
         * told to the comm core once this outbox is done with. */
        if (e->type == MEMBERSHIP_EVENT_RECOVERY_DECISION && e->u.decision.rejoined &&
            restarted_count < MEMBERSHIP_MAX_CHANGE_FAILED)
            restarted[restarted_count++] = e->u.decision.node;
    }
    if (out->dropped_messages != 0 || out->dropped_events != 0) {
        event_begin("membership-outbox-overflow");
        event_add_u64("messages", out->dropped_messages);
        event_add_u64("events", out->dropped_events);
        event_end();
    }
    membership_outbox_clear(out);
    /* The comm core's output goes out with its next flush (the failed
     * requests are in the core already); flushing it from here could call
     * back into this outbox (node_membership_suspect). */
    for (uint32_t i = 0; i < restarted_count; i++)
        comm_node_restarted(&node->comm, restarted[i], now_ns, &node->comm_outbox);
    restarted_count = 0;
    /* `leave`: out of the view as asked, the node stops for good (host:
     * exit 0; QEMU: it polls no link again), as `halt` does. */
    if (left)
        console_command_halt();
}

static void on_membership_frame(void *context, const struct torus_frame_header *header,
                                const uint8_t *payload, uint64_t now_ns)
{
    struct node *node = context;
    if (!membership_started)
        return;
    uint64_t began = board_now_ns();
    membership_receive(&node->membership, payload, header->payload_length, now_ns,
                       &node->membership_outbox);
    flush_outbox(node, now_ns, began);
}

void node_membership_link_event(struct node *node, uint32_t neighbour, bool up,
                                uint64_t now_ns)
{
    if (!membership_started)
        return;
    uint64_t began = board_now_ns();
    membership_link_event(&node->membership, neighbour, up, now_ns,
                          &node->membership_outbox);
    flush_outbox(node, now_ns, began);
}

void node_membership_link_lossy(struct node *node, uint32_t neighbour, uint64_t now_ns)
{
    if (!membership_started)
        return;
    uint64_t began = board_now_ns();
    membership_link_lossy(&node->membership, neighbour, now_ns, &node->membership_outbox);
    flush_outbox(node, now_ns, began);
}

static unsigned membership_poll(void *context, uint64_t now_ns)
{
    struct node *node = context;
    unsigned work = 0;
    if (!membership_started)
        return 0;
    if (removal.asked && now_ns >= removal.again_ns &&
        membership_is_member(&node->membership, node->personality->node_id))
        node_membership_request_removal(node, removal.model, now_ns);
    if (membership_next_deadline(&node->membership) <= now_ns) {
        uint64_t began = board_now_ns();
        membership_tick(&node->membership, now_ns, &node->membership_outbox);
        flush_outbox(node, now_ns, began);
        work = 1;
    }
    uint64_t deadline = membership_next_deadline(&node->membership);
    if (deadline == MEMBERSHIP_NEVER)
        timer_disarm(timer_kernel_table(), membership_timer);
    else
        timer_arm(timer_kernel_table(), membership_timer, deadline);
    return work;
}

static void command_view(void *context, const char *arguments, uint64_t now_ns)
{
    (void)arguments;
    (void)now_ns;
    const struct node *node = context;
    if (!membership_started) {
        console_command_reply_error("view: membership not started (send: start)");
        return;
    }
    const struct membership *m = &node->membership;
    event_begin("view-state");
    event_add_u64("epoch", membership_epoch(m));
    event_add_u64("stable_epoch", membership_stable_epoch(m));
    event_add_i64("root", membership_has_view(m) ? (int64_t)membership_root(m) : -1);
    event_add_u64("live", membership_live_count(m));
    event_add_hex("digest", membership_digest(m));
    event_add_u64("member", membership_is_member(m, node->personality->node_id) ? 1 : 0);
    event_add_u64("joining", membership_is_joining(m) ? 1 : 0);
    event_end();
}

bool node_membership_is_started(void)
{
    return membership_started;
}

void node_membership_suspect(struct node *node, uint32_t who, uint64_t now_ns)
{
    if (!membership_started)
        return;
    uint64_t began = board_now_ns();
    membership_suspect(&node->membership, who, now_ns, &node->membership_outbox);
    flush_outbox(node, now_ns, began);
}

bool node_membership_request_removal(struct node *node, uint8_t model, uint64_t now_ns)
{
    if (!membership_started)
        return false;
    uint64_t began = board_now_ns();
    bool sent = membership_request_removal(&node->membership, model, now_ns,
                                           &node->membership_outbox);
    flush_outbox(node, now_ns, began);
    removal.asked = sent;
    removal.model = model;
    removal.again_ns = now_ns + (uint64_t)node->personality->detect_timeout_ms * 1000000u;
    return sent;
}

/* `leave`: a graceful leave (the fault injectors' `leave N`, tools/fault.h). */
static void command_leave(void *context, const char *arguments, uint64_t now_ns)
{
    (void)arguments;
    struct node *node = context;
    if (!membership_started) {
        console_command_reply_error("leave: membership not started (send: start)");
        return;
    }
    if (removal.asked) {
        console_command_reply_error("leave: already leaving");
        return;
    }
    if (!node_membership_request_removal(node, FAULT_MODEL_LEFT, now_ns)) {
        console_command_reply_error("leave: not a member, or the only one");
        return;
    }
    event_begin("leaving");
    event_end();
}

static void command_suspect(void *context, const char *arguments, uint64_t now_ns)
{
    struct node *node = context;
    if (!membership_started) {
        console_command_reply_error("suspect: membership not started (send: start)");
        return;
    }
    char *end = NULL;
    unsigned long who = strtoul(arguments, &end, 10);
    if (end == arguments || *end != '\0' ||
        who >= torus_geometry_node_count(&node->network.geometry)) {
        console_command_reply_error("suspect: expected a node id below the node count");
        return;
    }
    node_membership_suspect(node, (uint32_t)who, now_ns);
}

static void command_start(void *context, const char *arguments, uint64_t now_ns)
{
    (void)arguments;
    struct node *node = context;
    const struct personality *p = node->personality;
    if (membership_started) {
        console_command_reply_error("start: membership already started");
        return;
    }
    membership_started = true;
    uint64_t began = board_now_ns();
    event_begin("started");
    event_add_str("as", personality_is_spare(p) ? "spare"
                        : p->boot_incarnation > 1 ? "rejoining" : "member");
    event_end();
    /* Spares and restarted nodes are not in any view they can know of. */
    if (personality_is_spare(p) || p->boot_incarnation > 1) {
        membership_start_join(&node->membership, now_ns, &node->membership_outbox);
    } else {
        /* The default view needs no messages: every member derives it. */
        struct membership_event initial;
        memset(&initial, 0, sizeof initial);
        initial.type = MEMBERSHIP_EVENT_VIEW;
        initial.u.view.epoch = membership_epoch(&node->membership);
        initial.u.view.root = membership_root(&node->membership);
        initial.u.view.live = membership_live_count(&node->membership);
        initial.u.view.digest = membership_digest(&node->membership);
        emit_event(node, &initial, 0);
        membership_tick(&node->membership, now_ns, &node->membership_outbox);
    }
    flush_outbox(node, now_ns, began);
}

/* The personality's tree_layout is the membership layout kind itself. */
_Static_assert(PERSONALITY_TREE_RADIX == (int)MEMBERSHIP_LAYOUT_RADIX &&
                   PERSONALITY_TREE_TORUS == (int)MEMBERSHIP_LAYOUT_TORUS &&
                   PERSONALITY_TREE_BOX == (int)MEMBERSHIP_LAYOUT_BOX,
               "personality tree_layout values differ from membership layout kinds");
_Static_assert(PERSONALITY_TIMEOUT_CEILING_MAX == MEMBERSHIP_TIMEOUT_CEILING_MAX &&
                   PERSONALITY_DEFAULT_TIMEOUT_CEILING == MEMBERSHIP_TIMEOUT_CEILING_DEFAULT,
               "the personality's timeout ceiling bounds differ from membership's");

void node_membership_init(struct node *node)
{
    const struct personality *p = node->personality;
    struct membership_config config;
    membership_config_defaults(&config);
    config.node_id = p->node_id;
    config.incarnation = p->boot_incarnation;
    config.member_count = p->member_count;
    config.radix = p->tree_radix;
    config.layout = (enum membership_layout_kind)p->tree_layout;
    config.policy = p->partition_policy == PERSONALITY_PARTITION_EVERY_SIDE
                        ? MEMBERSHIP_POLICY_EVERY_SIDE
                        : MEMBERSHIP_POLICY_PRIMARY;
    config.geometry = node->network.geometry;
    config.watch_torus_neighbours = true;
    membership_config_timeouts_ms(&config, p->heartbeat_ms, p->detect_timeout_ms);
    config.timeout_ceiling = p->timeout_ceiling;
    /* The root decides by the job's recovery policy (none without a job). */
    if (kernel_job() != NULL) {
        config.recovery = kernel_job()->recovery;
        /* Seed nodes: a joiner asks them first (issue 16). */
        config.seed_count = kernel_job()->seed_count;
        for (uint32_t i = 0; i < config.seed_count && i < MEMBERSHIP_SEEDS_MAX; i++)
            config.seeds[i] = kernel_job()->seed_node[i];
    }
    enum membership_init_status status = membership_init(&node->membership, &config);
    if (status != MEMBERSHIP_INIT_OK)
        kernel_panic(membership_init_status_text(status));
    membership_outbox_clear(&node->membership_outbox);

    torus_network_set_handler(&node->network, TORUS_FRAME_TYPE_MEMBERSHIP,
                              on_membership_frame, node);
    membership_timer = timer_add_wakeup(timer_kernel_table(), "membership");
    if (membership_timer < 0)
        kernel_panic("membership: timer table full (raise CONFIG_MAX_TIMERS)");
    poll_register("membership", membership_poll, node);
    console_command_register("view", command_view, node, CONSOLE_NO_ARGUMENTS);
    console_command_register("suspect", command_suspect, node, CONSOLE_ARGUMENTS);
    console_command_register("leave", command_leave, node, CONSOLE_NO_ARGUMENTS);
    console_command_register("start", command_start, node, CONSOLE_NO_ARGUMENTS);
}
