/*
 * Entry points, views, communicators and queries (see comm.h).
 */
#include "comm/internal.h"

#include <string.h>

static const char *const error_texts[] = {
#define COMM_ERROR_TEXT(name, text) text,
    COMM_ERRORS(COMM_ERROR_TEXT)
#undef COMM_ERROR_TEXT
};

const char *comm_error_text(enum comm_error error)
{
    if ((unsigned)error >= COMM_ERROR_COUNT) {
        return "?";
    }
    return error_texts[error];
}

const char *comm_init_status_text(enum comm_init_status status)
{
    switch (status) {
    case COMM_INIT_OK:
        return "ok";
    case COMM_INIT_BAD_NODE:
        return "node id not below the node count";
    case COMM_INIT_BAD_COUNT:
        return "node count 0 or above CONFIG_MAX_NODES";
    case COMM_INIT_BAD_WORLD:
        return "world size 0 or above the node count";
    case COMM_INIT_BAD_INCARNATION:
        return "incarnation 0";
    case COMM_INIT_BAD_TIMEOUT:
        return "a timeout is 0, rto_max below rto, ack delay not below rto, or suspect not "
               "above rto";
    case COMM_INIT_NO_FT:
        return "failure semantics compiled out (CONFIG_COMM_FT=0): comm mode abort, message "
               "mode nop and plain collectives only";
    default:
        return "?";
    }
}

void comm_config_defaults(struct comm_config *config)
{
    memset(config, 0, sizeof *config);
    config->incarnation = 1;
    config->rto_ns = 5000000u;
    config->rto_max_ns = 100000000u;
    config->ack_delay_ns = 200000u;
    config->suspect_ns = 500000000u;
    config->comm_mode = COMM_MODE_ABORT;
    config->msg_mode = COMM_MSG_NOP;
    config->strict_collectives = CONFIG_COMM_FT; /* strict needs the recovery rounds */
}

size_t comm_context_bytes(void)
{
    return sizeof(struct comm);
}

/* ---- communicators ---- */

uint32_t comm_handle_of(const struct comm *ctx, uint16_t slot)
{
    return ((uint32_t)ctx->comms[slot].generation << 8) | slot;
}

/* The slot of a live handle, or -1. */
static int slot_index(const struct comm *ctx, uint32_t handle)
{
    uint32_t slot = handle & 0xffu;
    if (slot >= CONFIG_COMM_MAX_COMMS) {
        return -1;
    }
    const struct comm_communicator *c = &ctx->comms[slot];
    if (!c->in_use || c->released || c->generation != (handle >> 8)) {
        return -1;
    }
    return (int)slot;
}

struct comm_communicator *comm_slot_of(struct comm *ctx, uint32_t handle)
{
    int slot = slot_index(ctx, handle);
    return slot < 0 ? NULL : &ctx->comms[slot];
}

const struct comm_communicator *comm_const_slot(const struct comm *ctx, uint32_t handle)
{
    int slot = slot_index(ctx, handle);
    return slot < 0 ? NULL : &ctx->comms[slot];
}

uint16_t comm_by_context(const struct comm *ctx, uint8_t context)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].in_use && ctx->comms[i].context == context) {
            return i;
        }
    }
    return COMM_NONE16;
}

/* Base ranks removed before rank r's: the j with excluded[j] - j <= r
 * (non-decreasing in j), by binary search. */
uint32_t group_base_of_rank(const struct comm_communicator *c, uint32_t rank)
{
    uint32_t lo = 0;
    uint32_t hi = c->excluded_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2u;
        if (c->excluded[mid] - mid <= rank) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return rank + lo;
}

/* Index of the first entry >= value in a sorted list of count. */
static uint32_t lower_bound(const uint32_t *list, uint32_t count, uint32_t value)
{
    uint32_t lo = 0;
    uint32_t hi = count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2u;
        if (list[mid] < value) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint32_t group_rank_of_base(const struct comm_communicator *c, uint32_t base)
{
    uint32_t j = lower_bound(c->excluded, c->excluded_count, base);
    if (j < c->excluded_count && c->excluded[j] == base) {
        return COMM_RANK_NONE;
    }
    return base - j;
}

uint32_t group_edit_of(const struct comm_communicator *c, uint32_t base)
{
    uint32_t j = lower_bound(c->edit_base, c->edit_count, base);
    return j < c->edit_count && c->edit_base[j] == base ? j : COMM_RANK_NONE;
}

uint32_t group_base_node(const struct comm *ctx, const struct comm_communicator *c,
                         uint32_t base)
{
    return c->group == GROUP_LIST ? ctx->map[c->first + base] : c->first + base;
}

uint32_t group_node(const struct comm *ctx, const struct comm_communicator *c, uint32_t rank)
{
    uint32_t base = c->excluded_count == 0 ? rank : group_base_of_rank(c, rank);
    if (c->edit_count != 0) {
        uint32_t j = group_edit_of(c, base);
        if (j != COMM_RANK_NONE) {
            return c->edit_node[j] == COMM_GAP_NODE ? COMM_NODE_NONE : c->edit_node[j];
        }
    }
    return group_base_node(ctx, c, base);
}

static uint32_t position_of(const struct comm *ctx, uint32_t node)
{
    return ctx->has_layout ? membership_layout_pos(&ctx->layout, node) : node;
}

bool node_is_live(const struct comm *ctx, uint32_t node)
{
    return ctx->has_view && node < ctx->config.node_count &&
           membership_view_is_live(&ctx->live, position_of(ctx, node));
}

uint32_t group_rank(const struct comm *ctx, const struct comm_communicator *c, uint32_t node)
{
    for (uint32_t j = 0; j < c->edit_count; j++) {
        if (c->edit_node[j] == node) {
            return group_rank_of_base(c, c->edit_base[j]); /* an adopting spare */
        }
    }
    uint32_t base = COMM_RANK_NONE;
    if (c->group == GROUP_RANGE) {
        if (node >= c->first && node - c->first < c->extent) {
            base = node - c->first;
        }
    } else {
        for (uint32_t b = 0; b < c->extent; b++) {
            if (ctx->map[c->first + b] == node) {
                base = b;
                break;
            }
        }
    }
    if (base == COMM_RANK_NONE || group_edit_of(c, base) != COMM_RANK_NONE) {
        return COMM_RANK_NONE; /* not in the base, or its place was taken */
    }
    return group_rank_of_base(c, base);
}

/* BLANK gaps: few (at most CONFIG_COMM_FT_MAX_EDITS), so scanned. */
uint32_t group_gap_count(const struct comm_communicator *c)
{
    uint32_t gaps = 0;
    for (uint32_t j = 0; j < c->edit_count; j++) {
        gaps += c->edit_node[j] == COMM_GAP_NODE;
    }
    return gaps;
}

uint32_t group_rank_of_compact(const struct comm_communicator *c, uint32_t compact)
{
    uint32_t rank = compact;
    for (uint32_t j = 0; j < c->edit_count; j++) { /* gaps in rank order */
        if (c->edit_node[j] == COMM_GAP_NODE && group_rank_of_base(c, c->edit_base[j]) <= rank) {
            rank++;
        }
    }
    return rank;
}

uint32_t group_compact_of_rank(const struct comm_communicator *c, uint32_t rank)
{
    uint32_t compact = rank;
    for (uint32_t j = 0; j < c->edit_count; j++) {
        if (c->edit_node[j] == COMM_GAP_NODE && group_rank_of_base(c, c->edit_base[j]) < rank) {
            compact--;
        }
    }
    return compact;
}

bool group_member_out(const struct comm *ctx, const struct comm_communicator *c, uint32_t rank)
{
    if (!node_is_live(ctx, group_node(ctx, c, rank))) {
        return true;
    }
    /* A node that left and came back is a new life, not the member. */
    uint32_t logged = c->failed_log_count < CONFIG_COMM_FT_MAX_EDITS ? c->failed_log_count
                                                                    : CONFIG_COMM_FT_MAX_EDITS;
    for (uint32_t i = 0; i < logged; i++) {
        if (c->failed_log[i] == rank) {
            return true;
        }
    }
    return false;
}

bool comm_sorted_add(uint32_t *list, uint32_t *count, uint32_t cap, uint32_t value)
{
    uint32_t j = lower_bound(list, *count, value);
    if (j < *count && list[j] == value) {
        return true;
    }
    if (*count >= cap) {
        return false;
    }
    memmove(&list[j + 1u], &list[j], (*count - j) * sizeof list[0]);
    list[j] = value;
    (*count)++;
    return true;
}

/*
 * A member is out when its node is not live, its rank is a gap, or it is
 * in the failure log (group_member_out): so the out ranks are found from
 * the view's dead nodes (those of unedited ranks), the edits and the log,
 * never by asking every member.
 */
uint32_t group_out_ranks(const struct comm *ctx, const struct comm_communicator *c,
                         uint32_t *out, uint32_t cap)
{
    if (!ctx->has_view || c->group != GROUP_RANGE || ctx->dead_count == COMM_DEAD_UNKNOWN ||
        (uint64_t)c->first + c->extent > ctx->config.node_count) {
        return COMM_DEAD_UNKNOWN;
    }
    uint32_t count = 0;
    for (uint32_t i = 0; i < ctx->dead_count; i++) {
        uint32_t node = ctx->dead[i];
        if (node < c->first || node - c->first >= c->extent) {
            continue;
        }
        uint32_t base = node - c->first;
        uint32_t rank = group_rank_of_base(c, base);
        if (rank == COMM_RANK_NONE || group_edit_of(c, base) != COMM_RANK_NONE) {
            continue; /* excluded, or another node (or a gap) holds the rank */
        }
        if (!comm_sorted_add(out, &count, cap, rank)) {
            return COMM_DEAD_UNKNOWN;
        }
    }
    for (uint32_t j = 0; j < c->edit_count; j++) {
        uint32_t rank = group_rank_of_base(c, c->edit_base[j]);
        uint32_t node = c->edit_node[j];
        if (rank != COMM_RANK_NONE && (node == COMM_GAP_NODE || !node_is_live(ctx, node)) &&
            !comm_sorted_add(out, &count, cap, rank)) {
            return COMM_DEAD_UNKNOWN;
        }
    }
    uint32_t logged = c->failed_log_count < CONFIG_COMM_FT_MAX_EDITS ? c->failed_log_count
                                                                    : CONFIG_COMM_FT_MAX_EDITS;
    for (uint32_t i = 0; i < logged; i++) {
        if (c->failed_log[i] < c->size && !comm_sorted_add(out, &count, cap, c->failed_log[i])) {
            return COMM_DEAD_UNKNOWN;
        }
    }
    return count;
}

uint32_t group_count_failed(const struct comm *ctx, const struct comm_communicator *c)
{
    uint32_t outs[CONFIG_COMM_FT_MAX_EDITS];
    uint32_t known = group_out_ranks(ctx, c, outs, CONFIG_COMM_FT_MAX_EDITS);
    if (known != COMM_DEAD_UNKNOWN) {
        return known;
    }
    uint32_t failed = 0;
    for (uint32_t r = 0; r < c->size; r++) {
        if (group_member_out(ctx, c, r)) {
            failed++;
        }
    }
    return failed;
}

/* First fit in the map pool for size entries, or UINT32_MAX. */
static uint32_t map_alloc(const struct comm *ctx, uint32_t size)
{
    uint32_t start = 0;
    for (uint32_t pass = 0; pass <= CONFIG_COMM_MAX_COMMS; pass++) {
        bool moved = false;
        for (uint32_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
            const struct comm_communicator *c = &ctx->comms[i];
            if (c->in_use && c->group == GROUP_LIST && c->first < start + size &&
                start < c->first + c->extent) {
                start = c->first + c->extent;
                moved = true;
            }
        }
        if (!moved) {
            break;
        }
    }
    if ((uint64_t)start + size > CONFIG_COMM_MAP_ENTRIES) {
        return UINT32_MAX;
    }
    return start;
}

/* Nothing runs on communicator slot i: no collective, no request. */
static bool comm_idle(const struct comm *ctx, uint16_t slot)
{
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_COLLECTIVES; i++) {
        if (ctx->colls[i].state != COLL_FREE && ctx->colls[i].comm == slot) {
            return false;
        }
    }
    for (uint32_t i = 0; i < COMM_REQUEST_SLOTS; i++) {
        if (ctx->requests[i].state == COMM_REQ_PENDING && ctx->requests[i].comm == slot) {
            return false;
        }
    }
    return true;
}

/* Frees a communicator slot for good: what waits for its context here can
 * match nothing (a later communicator on the id has another generation). */
static void comm_release_slot(struct comm *ctx, uint16_t slot)
{
    struct comm_communicator *c = &ctx->comms[slot];
    match_drop_context(ctx, c->context, true, NULL);
    ctx->contexts_used[c->context / 64u] &= ~(UINT64_C(1) << (c->context % 64u));
    c->in_use = false;
    c->released = false;
    c->decision_held = false;
    c->serve_due = false;
    c->abstain_due = false;
    c->abstain_queued = false;
}

void comm_reap(struct comm *ctx)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        const struct comm_communicator *c = &ctx->comms[i];
        if (c->in_use && c->released && !c->decision_held && !c->serve_due &&
            !c->abstain_due && !c->abstain_queued && comm_idle(ctx, i)) {
            comm_release_slot(ctx, i);
        }
    }
}

uint16_t comm_create(struct comm *ctx, uint8_t context, uint32_t context_gen,
                     const uint8_t *list, uint32_t first, uint32_t size)
{
    uint16_t slot = COMM_NONE16;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (!ctx->comms[i].in_use) {
            slot = i;
            break;
        }
    }
    for (uint16_t i = 0; slot == COMM_NONE16 && i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].in_use && ctx->comms[i].released && comm_idle(ctx, i)) {
            /* its slot is wanted: its decision is no longer served (as when
             * freeing dropped it at once) */
            comm_release_slot(ctx, i);
            slot = i;
        }
    }
    if (slot == COMM_NONE16 || size == 0) {
        return COMM_NONE16;
    }
    struct comm_communicator *c = &ctx->comms[slot];
    uint32_t self = ctx->config.node_id;
    uint32_t rank = COMM_RANK_NONE;
    if (list != NULL) {
        uint32_t offset = map_alloc(ctx, size);
        if (offset == UINT32_MAX) {
            return COMM_NONE16;
        }
        for (uint32_t r = 0; r < size; r++) {
            uint32_t node;
            memcpy(&node, list + 4u * r, sizeof node);
            ctx->map[offset + r] = node;
            if (node == self) {
                rank = r;
            }
        }
        c->group = GROUP_LIST;
        c->first = offset;
    } else {
        c->group = GROUP_RANGE;
        c->first = first;
        if (self >= first && self - first < size) {
            rank = self - first;
        }
    }
    uint16_t generation = (uint16_t)(c->generation + 1u);
    c->generation = generation == 0 ? 1u : generation;
    c->in_use = true;
    c->released = false;
    c->context = context;
    c->context_gen = (uint16_t)context_gen;
    if (context_gen >= ctx->next_context_gen) {
        ctx->next_context_gen = context_gen + 1u;
    }
    match_drop_other_generations(ctx, context, c->context_gen, NULL);
    c->extent = size;
    c->size = size;
    c->rank = rank;
    c->collective_seq = 0;
    c->epoch = ctx->epoch;
    ft_comm_init(ctx, c);
    c->failed = group_count_failed(ctx, c);
    c->state = c->failed > 0 ? COMM_STATE_DETECTED : COMM_STATE_OK;
    return slot;
}

/* ---- set-up ---- */

enum comm_init_status comm_init(struct comm *ctx, const struct comm_config *config)
{
    if (config->node_count == 0 || config->node_count > CONFIG_MAX_NODES) {
        return COMM_INIT_BAD_COUNT;
    }
    if (config->node_id >= config->node_count) {
        return COMM_INIT_BAD_NODE;
    }
    if (config->world_size == 0 || config->world_size > config->node_count) {
        return COMM_INIT_BAD_WORLD;
    }
    if (config->incarnation == 0) {
        return COMM_INIT_BAD_INCARNATION;
    }
    if (config->rto_ns == 0 || config->rto_max_ns < config->rto_ns ||
        config->ack_delay_ns >= config->rto_ns || config->suspect_ns <= config->rto_ns) {
        return COMM_INIT_BAD_TIMEOUT;
    }
    if (!CONFIG_COMM_FT && (config->comm_mode != COMM_MODE_ABORT ||
                            config->msg_mode != COMM_MSG_NOP || config->strict_collectives)) {
        return COMM_INIT_NO_FT;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->config = *config;
    ctx->incarnation = config->incarnation;
    membership_view_reset(&ctx->live, config->node_count);
    ctx->dead_count = COMM_DEAD_UNKNOWN; /* no view yet */
    for (uint32_t i = 0; i < COMM_REQUEST_SLOTS; i++) {
        ctx->requests[i].state = COMM_REQ_FREE;
        ctx->requests[i].next = COMM_NONE16;
    }
    ctx->orphan_head = COMM_NONE16;
    ctx->orphan_tail = COMM_NONE16;
    peer_init_all(ctx);
    match_init(ctx);
    coll_init_all(ctx);
    /* WORLD: slot 0, generation 1 (COMM_WORLD), context 0, rank = node id. */
    struct comm_communicator *world = &ctx->comms[0];
    world->in_use = true;
    world->generation = 1;
    world->group = GROUP_RANGE;
    world->first = 0;
    world->extent = config->world_size;
    world->size = config->world_size;
    ft_comm_init(ctx, world);
    world->rank = config->node_id < config->world_size ? config->node_id : COMM_RANK_NONE;
    world->context = 0;
    world->state = COMM_STATE_OK;
    ctx->contexts_used[0] = 1u;
    ctx->next_context_gen = 1u; /* WORLD and NODES have 0 */
    if (config->mirrors) {
        struct comm_communicator *nodes = &ctx->comms[1];
        nodes->in_use = true;
        nodes->generation = 1;
        nodes->group = GROUP_RANGE;
        nodes->first = 0;
        nodes->extent = config->node_count;
        nodes->size = config->node_count;
        ft_comm_init(ctx, nodes);
        nodes->msg_mode = COMM_MSG_CONT;
        nodes->rank = config->node_id;
        nodes->context = COMM_CONTEXT_NODES;
        nodes->state = COMM_STATE_OK;
        ctx->contexts_used[COMM_CONTEXT_NODES / 64u] |= UINT64_C(1) << (COMM_CONTEXT_NODES % 64u);
    }
    return COMM_INIT_OK;
}

bool comm_node_live(const struct comm *ctx, uint32_t node)
{
    return node_is_live(ctx, node);
}

uint32_t comm_nodes(const struct comm *ctx)
{
    return ctx->config.mirrors ? comm_handle_of(ctx, 1) : COMM_NULL;
}

/* ---- views ---- */

static void hold_deliver(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out);

/* The view's left-out nodes, once per view (O(N/64) here, O(failed) in
 * every round's tree after). */
static void view_find_dead(struct comm *ctx)
{
    uint32_t count = 0;
    for (uint32_t pos = membership_view_next_dead(&ctx->live, 0); pos < ctx->live.positions;
         pos = membership_view_next_dead(&ctx->live, pos + 1u)) {
        if (count == COMM_DEAD_SLOTS) {
            ctx->dead_count = COMM_DEAD_UNKNOWN;
            return;
        }
        ctx->dead[count++] = ctx->has_layout ? membership_layout_id(&ctx->layout, pos) : pos;
    }
    ctx->dead_count = count;
}

static void node_removed(struct comm *ctx, uint32_t node, struct comm_outbox *out)
{
    bool left = ft_take_leave(ctx, node);
    peer_fail_node(ctx, node, COMM_ERR_PROC_FAILED, out);
    match_fail_node(ctx, node, COMM_ERR_PROC_FAILED, true, out);
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *c = &ctx->comms[i];
        uint32_t rank = c->in_use ? group_rank(ctx, c, node) : COMM_RANK_NONE;
        if (rank == COMM_RANK_NONE || group_member_out(ctx, c, rank)) {
            continue; /* not a member, or its new life leaves again */
        }
        c->failed++;
        if (c->state == COMM_STATE_OK || c->state == COMM_STATE_RECOVERED) {
            c->state = COMM_STATE_DETECTED;
            c->only_left = left;
        } else if (!left) {
            c->only_left = false;
        }
        ft_member_failed(ctx, i, rank, left, out);
        coll_fail_comm(ctx, i, COMM_ERR_PROC_FAILED, out);
        /* the cut collective's parts that wait here: nothing takes them now */
        match_drop_context(ctx, c->context, false, out);
    }
}

void comm_node_restarted(struct comm *ctx, uint32_t node, uint64_t now_ns,
                         struct comm_outbox *out)
{
    ctx->last_now_ns = now_ns;
    if (ctx->has_view && node < ctx->config.node_count && node != ctx->config.node_id) {
        node_removed(ctx, node, out);
    }
}

bool comm_install_view(struct comm *ctx, uint64_t epoch, const struct membership_view *view,
                       const struct membership_layout *layout, uint64_t now_ns,
                       struct comm_outbox *out)
{
    ctx->last_now_ns = now_ns;
    if ((ctx->has_view && epoch <= ctx->epoch) || view->positions != ctx->live.positions) {
        ctx->counters.views_refused++;
        return false;
    }
    ctx->counters.views_installed++;
    if (layout != NULL) {
        ctx->layout = *layout;
        ctx->has_layout = true;
    }
    uint32_t failed_before[CONFIG_COMM_MAX_COMMS];
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        failed_before[i] = ctx->comms[i].failed;
    }
    bool first = !ctx->has_view;
    if (!first) {
        /* Members that left: old live bits the new view clears (O(N/64)). */
        bool removed = false;
        for (uint32_t w = 0; w < ctx->live.word_count; w++) {
            uint64_t gone = ctx->live.words[w] & ~view->words[w];
            removed |= gone != 0;
            while (gone != 0) {
                uint32_t pos = w * 64u + (uint32_t)__builtin_ctzll(gone);
                gone &= gone - 1u;
                uint32_t node =
                    ctx->has_layout ? membership_layout_id(&ctx->layout, pos) : pos;
                node_removed(ctx, node, out);
            }
        }
        if (removed) {
            peer_view_removed(ctx, now_ns); /* resent by comm_finish_call, below */
        }
    }
    uint64_t left = ctx->epoch;
    membership_view_copy(&ctx->live, view);
    view_find_dead(ctx);
    ctx->epoch = epoch;
    ctx->has_view = true;
    ft_forget_leaves(ctx); /* a leaver still (or again) in the view left no view we saw */
    match_drop_stale_rounds(ctx, out);
    if (!first && CONFIG_COMM_FT) { /* recovery rounds */
        coll_restart_rounds(ctx, out);
        ft_view_changed(ctx, left);
    }
    if (first) {
        for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
            struct comm_communicator *c = &ctx->comms[i];
            if (c->in_use) {
                c->epoch = epoch;
                c->failed = group_count_failed(ctx, c);
                if (c->failed > 0 && c->state == COMM_STATE_OK) {
                    c->state = COMM_STATE_DETECTED;
                }
            }
        }
    }
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        struct comm_communicator *c = &ctx->comms[i];
        if (c->in_use && c->failed > failed_before[i]) {
            /* a freed one is told to nobody (the application has no handle) */
            struct comm_event *e =
                c->released ? NULL : comm_outbox_event(out, COMM_EVENT_DETECTED, now_ns);
            if (e != NULL) {
                e->comm = comm_handle_of(ctx, i);
                e->count = c->failed;
                e->epoch = epoch;
            }
            ft_detected(ctx, i, epoch, now_ns, out);
        }
    }
    if (CONFIG_COMM_FT) {
        ft_view_installed(ctx, now_ns, out); /* revokes */
    }
    /* A node whose frame of this view waits in the hold installed it
     * before us: what we sent it in the old view (in flight here now) it
     * dropped as stale, or will.  Sent again by comm_finish_call, below,
     * in this view, rather than after the timeout.  (The held frames are
     * delivered after it: what they answer is sent in this view.) */
    for (uint32_t i = 0; CONFIG_COMM_HOLD_FRAMES > 0 && i < ctx->held_count; i++) {
        if (ctx->held[i].epoch == epoch) {
            peer_view_ahead(ctx, ctx->held[i].source, now_ns);
        }
    }
    comm_finish_call(ctx, now_ns, out);
    if (CONFIG_COMM_HOLD_FRAMES > 0) {
        hold_deliver(ctx, now_ns, out);
    }
    return true;
}

void comm_drop_view(struct comm *ctx, uint32_t incarnation, uint64_t now_ns,
                    struct comm_outbox *out)
{
    ctx->last_now_ns = now_ns;
    peer_reset_all(ctx, COMM_ERR_NO_VIEW, out);
    match_reset_all(ctx, COMM_ERR_NO_VIEW, out);
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COMMS; i++) {
        if (ctx->comms[i].in_use) {
            coll_fail_comm(ctx, i, COMM_ERR_NO_VIEW, out);
            ctx->comms[i].state = COMM_STATE_FAILED;
        }
    }
    coll_run(ctx, now_ns, out);
    ctx->has_view = false;
    /* Held frames were addressed to this life, in views it will not hold. */
    ctx->counters.held_dropped += ctx->held_count;
    ctx->held_count = 0;
    if (incarnation != 0) {
        ctx->incarnation = incarnation;
    }
}

/* ---- frames and time ---- */

void comm_count_lost_frame(struct comm *ctx)
{
    ctx->counters.control_frames_lost++;
}

void comm_finish_call(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    coll_run(ctx, now_ns, out);
    comm_reap(ctx);
    peer_pump(ctx, now_ns, out);
}

/*
 * A frame of a view newer than ours: the sender installed it first.  Kept
 * whole (in arrival order, while there is room) and delivered through every
 * check of a fresh frame once we install that view (hold_deliver): else it
 * waits for the sender's retransmission timeout, and the first frames of
 * every new view (a round's offers, a session's OPEN) pay it at every node
 * still installing the view.  What could never be delivered is not kept:
 * malformed frames, and frames from ourselves or from beyond the node count.
 */
static void hold_frame(struct comm *ctx, uint32_t source, uint64_t epoch,
                       const uint8_t *payload, size_t length)
{
    for (uint32_t i = 0; i < ctx->held_count; i++) {
        const struct comm_held_frame *h = &ctx->held[i];
        if (h->source == source && h->epoch == epoch && h->length == length &&
            memcmp(h->bytes, payload, length) == 0) {
            ctx->counters.drops_duplicate++; /* a resend of one held: no second slot */
            return;
        }
    }
    if (ctx->held_count + 1u > CONFIG_COMM_HOLD_FRAMES || length > COMM_MAX_PAYLOAD) {
        ctx->counters.drops_ahead_epoch++;
        return;
    }
    struct comm_frame frame;
    enum comm_decode_status status = comm_decode(payload, length, &frame);
    if (status != COMM_DECODE_OK) {
        ctx->counters.decode_drops[status]++;
        return;
    }
    if (source == ctx->config.node_id || source >= ctx->config.node_count) {
        ctx->counters.drops_not_member++;
        return;
    }
    struct comm_held_frame *h = &ctx->held[ctx->held_count++];
    h->epoch = epoch;
    h->source = source;
    h->length = (uint16_t)length;
    memcpy(h->bytes, payload, length);
    ctx->counters.frames_held++;
}

/* A frame of our view: decoded and checked, then to its session. */
static void deliver_frame(struct comm *ctx, uint32_t source, const uint8_t *payload,
                          size_t length, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_frame frame;
    enum comm_decode_status status = comm_decode(payload, length, &frame);
    if (status != COMM_DECODE_OK) {
        ctx->counters.decode_drops[status]++;
        return;
    }
    if (frame.receiver_incarnation != 0 && frame.receiver_incarnation != ctx->incarnation) {
        ctx->counters.drops_stale_incarnation++;
        return;
    }
    if (source == ctx->config.node_id || !node_is_live(ctx, source)) {
        ctx->counters.drops_not_member++;
        return;
    }
    if (frame.kind == COMM_KIND_REVOKE) {
        if (CONFIG_COMM_FT) {
            ft_on_revoke(ctx, source, &frame, now_ns, out); /* sessionless */
        } else {
            ctx->counters.revokes_refused++;
        }
    } else {
        peer_on_frame(ctx, source, &frame, now_ns, out);
    }
    comm_finish_call(ctx, now_ns, out);
}

/*
 * The view of epoch ctx->epoch is installed: held frames of it are
 * delivered in arrival order, as if they arrived now (the incarnation,
 * membership and session checks are those of the view just installed);
 * frames of an older epoch are dropped: their view was superseded here
 * before we installed it, and the senders resend in the view they hold.
 * Frames of a still newer view stay.
 */
static void hold_deliver(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < ctx->held_count; i++) {
        struct comm_held_frame *h = &ctx->held[i];
        if (h->epoch == ctx->epoch) {
            ctx->counters.held_delivered++;
            deliver_frame(ctx, h->source, h->bytes, h->length, now_ns, out);
        } else if (h->epoch < ctx->epoch) {
            ctx->counters.held_dropped++;
        } else {
            if (kept != i) {
                ctx->held[kept] = *h; /* delivery never holds: epoch is ours */
            }
            kept++;
        }
    }
    ctx->held_count = kept;
}

void comm_receive(struct comm *ctx, uint32_t source, uint64_t epoch, const uint8_t *payload,
                  size_t length, uint64_t now_ns, struct comm_outbox *out)
{
    ctx->last_now_ns = now_ns;
    ctx->counters.frames_received++;
    if (!ctx->has_view) {
        ctx->counters.drops_no_view++;
        return;
    }
    /* Fencing: only frames of our own view are ever looked at. */
    if (epoch < ctx->epoch) {
        ctx->counters.drops_stale_epoch++;
        return;
    }
    if (epoch > ctx->epoch) {
        if (CONFIG_COMM_HOLD_FRAMES > 0) {
            hold_frame(ctx, source, epoch, payload, length);
        } else {
            ctx->counters.drops_ahead_epoch++; /* resent after the sender's timeout */
        }
        return;
    }
    deliver_frame(ctx, source, payload, length, now_ns, out);
}

void comm_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    ctx->last_now_ns = now_ns;
    if (!ctx->has_view) {
        return;
    }
    coll_run(ctx, now_ns, out);
    match_tick(ctx, now_ns, out);
    peer_tick(ctx, now_ns, out);
    if (CONFIG_COMM_FT && ctx->ft_revoking) {
        ft_tick(ctx, now_ns, out); /* revokes */
    }
}

uint64_t comm_next_deadline(const struct comm *ctx)
{
    if (!ctx->has_view) {
        return COMM_NEVER;
    }
    if (ctx->coll_work != 0) {
        return ctx->last_now_ns;
    }
    uint64_t peers = peer_deadline(ctx);
    uint64_t grants = match_deadline(ctx);
    uint64_t revokes = CONFIG_COMM_FT && ctx->ft_revoking ? ft_deadline(ctx) : COMM_NEVER;
    uint64_t first = peers < grants ? peers : grants;
    return revokes < first ? revokes : first;
}

/* ---- communicator operations ---- */

/* Checks common to every operation on a communicator, the recovery ones
 * included (they work on DETECTED and revoked communicators: what else an
 * operation refuses, it checks after). */
enum comm_error comm_usable(struct comm *ctx, uint32_t handle, struct comm_communicator **out)
{
    struct comm_communicator *c = comm_slot_of(ctx, handle);
    *out = c;
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    if (!ctx->has_view || c->state == COMM_STATE_FAILED) {
        return COMM_ERR_NO_VIEW;
    }
    if (c->rank == COMM_RANK_NONE) {
        return COMM_ERR_NOT_MEMBER;
    }
    return COMM_ERR_OK;
}

static enum comm_error start_collective(struct comm *ctx, uint32_t handle,
                                        struct coll_args *args, uint64_t now_ns,
                                        struct comm_outbox *out, uint32_t *request)
{
    *request = COMM_REQUEST_NULL;
    ctx->last_now_ns = now_ns;
    struct comm_communicator *c;
    enum comm_error e = comm_usable(ctx, handle, &c);
    if (e != COMM_ERR_OK) {
        return e;
    }
    e = ft_collective_check(c);
    bool strict = args->kind != COLL_BCAST && args->kind != COLL_DUP && args->kind != COLL_SPLIT;
    if (e == COMM_ERR_PROC_FAILED && c->strict && strict) {
        args->failed = true; /* the others may still finish it: take part in its agree */
    } else if (e != COMM_ERR_OK) {
        return e;
    }
    args->comm = (uint16_t)(c - ctx->comms);
    e = coll_start(ctx, args, now_ns, out, request);
    if (e == COMM_ERR_OK) {
        comm_finish_call(ctx, now_ns, out);
    }
    return e;
}

enum comm_error comm_idup(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                          struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_DUP;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_isplit(struct comm *ctx, uint32_t comm, int32_t color, int32_t key,
                            uint64_t now_ns, struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_SPLIT;
    a.color = color;
    a.key = key;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_free(struct comm *ctx, uint32_t comm)
{
    struct comm_communicator *c = comm_slot_of(ctx, comm);
    if (c == NULL) {
        return COMM_ERR_COMM;
    }
    uint16_t slot = (uint16_t)(c - ctx->comms);
    if (slot == 0 || (slot == 1 && ctx->config.mirrors)) {
        return COMM_ERR_ARG; /* WORLD stays, and NODES */
    }
    for (uint32_t i = 0; i < COMM_REQUEST_SLOTS; i++) {
        const struct comm_request *r = &ctx->requests[i];
        if (r->state == COMM_REQ_PENDING && r->owner == 0 && r->comm == slot) {
            return COMM_ERR_BUSY; /* the application's own: MPI forbids it too */
        }
    }
    /* The handle goes now; the slot (its context id, a decision members
     * still in a round need, background rounds and a cut collective still
     * draining) stays until nothing needs it (comm_reap), or its slot is
     * wanted.  New frames for it are not taken but by its recovery rounds. */
    c->released = true;
    match_drop_context(ctx, c->context, false, NULL); /* its collectives' parts */
    comm_reap(ctx);
    return COMM_ERR_OK;
}

/* ---- point-to-point ---- */

enum comm_error comm_isend(struct comm *ctx, uint32_t comm, uint32_t dest, int32_t tag,
                           const void *buffer, uint32_t length, uint64_t now_ns,
                           struct comm_outbox *out, uint32_t *request)
{
    *request = COMM_REQUEST_NULL;
    ctx->last_now_ns = now_ns;
    struct comm_communicator *c;
    enum comm_error e = comm_usable(ctx, comm, &c);
    if (e != COMM_ERR_OK) {
        return e;
    }
    if (dest >= c->size) {
        return COMM_ERR_RANK;
    }
    if (tag < 0) {
        return COMM_ERR_TAG;
    }
    if (length > CONFIG_COMM_MAX_MESSAGE) {
        return COMM_ERR_COUNT;
    }
    if (length > 0 && buffer == NULL) {
        return COMM_ERR_ARG;
    }
    e = ft_p2p_check(ctx, c, dest, true);
    if (e != COMM_ERR_OK) {
        return e;
    }
    uint32_t node = group_node(ctx, c, dest);
    if (group_member_out(ctx, c, dest)) {
        return COMM_ERR_PROC_FAILED;
    }
    uint16_t index = request_alloc_app(ctx, COMM_REQ_SEND);
    if (index == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    struct comm_request *r = &ctx->requests[index];
    r->comm = (uint16_t)(c - ctx->comms);
    r->context = c->context;
    r->node = node;
    r->rank = dest;
    r->tag = (uint32_t)tag;
    r->source = buffer;
    r->length = length;
    r->frames_total = COMM_FRAMES_FOR(length);
    if (node == ctx->config.node_id) {
        if (!match_self_send(ctx, index, out)) {
            request_release(ctx, index);
            return COMM_ERR_BUSY;
        }
    } else {
        peer_send(ctx, index, now_ns, out);
    }
    *request = request_handle(ctx, index);
    comm_finish_call(ctx, now_ns, out);
    return COMM_ERR_OK;
}

enum comm_error comm_irecv(struct comm *ctx, uint32_t comm, uint32_t source, int32_t tag,
                           void *buffer, uint32_t capacity, uint64_t now_ns,
                           struct comm_outbox *out, uint32_t *request)
{
    *request = COMM_REQUEST_NULL;
    ctx->last_now_ns = now_ns;
    struct comm_communicator *c;
    enum comm_error e = comm_usable(ctx, comm, &c);
    if (e != COMM_ERR_OK) {
        return e;
    }
    if (source != COMM_ANY_SOURCE && source >= c->size) {
        return COMM_ERR_RANK;
    }
    if (tag < 0 && tag != COMM_ANY_TAG) {
        return COMM_ERR_TAG;
    }
    if (capacity > 0 && buffer == NULL) {
        return COMM_ERR_ARG;
    }
    e = ft_p2p_check(ctx, c, source, false);
    if (e != COMM_ERR_OK) {
        return e;
    }
    if (source != COMM_ANY_SOURCE && group_member_out(ctx, c, source)) {
        return COMM_ERR_PROC_FAILED;
    }
    uint16_t index = request_alloc_app(ctx, COMM_REQ_RECV);
    if (index == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    struct comm_request *r = &ctx->requests[index];
    r->comm = (uint16_t)(c - ctx->comms);
    r->context = c->context;
    r->rank = source;
    r->any_tag = tag == COMM_ANY_TAG;
    r->tag = r->any_tag ? 0u : (uint32_t)tag;
    r->target = buffer;
    r->length = capacity;
    *request = request_handle(ctx, index);
    match_post(ctx, index, now_ns, out);
    comm_finish_call(ctx, now_ns, out);
    return COMM_ERR_OK;
}

bool comm_test(struct comm *ctx, uint32_t request, struct comm_status *status)
{
    uint16_t index = request_index(ctx, request);
    if (index == COMM_NONE16) {
        if (status != NULL) {
            memset(status, 0, sizeof *status);
            status->error = COMM_ERR_REQUEST;
        }
        return true;
    }
    struct comm_request *r = &ctx->requests[index];
    if (r->state != COMM_REQ_DONE) {
        return false;
    }
    if (status != NULL) {
        *status = r->status;
    }
    request_release(ctx, index);
    return true;
}

/* ---- collectives ---- */

enum comm_error comm_ibarrier(struct comm *ctx, uint32_t comm, uint64_t now_ns,
                              struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_BARRIER;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_ibcast(struct comm *ctx, uint32_t comm, uint32_t root, void *buffer,
                            uint32_t length, uint64_t now_ns, struct comm_outbox *out,
                            uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_BCAST;
    a.root = root;
    a.recv = buffer;
    a.count = length;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_ireduce(struct comm *ctx, uint32_t comm, uint32_t root, const void *send,
                             void *recv, uint32_t count, enum comm_type type, enum comm_op op,
                             uint64_t now_ns, struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_REDUCE;
    a.root = root;
    a.send = send;
    a.recv = recv;
    a.count = count;
    a.type = (uint8_t)type;
    a.op = (uint8_t)op;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_iallreduce(struct comm *ctx, uint32_t comm, const void *send, void *recv,
                                uint32_t count, enum comm_type type, enum comm_op op,
                                uint64_t now_ns, struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_ALLREDUCE;
    a.send = send;
    a.recv = recv;
    a.count = count;
    a.type = (uint8_t)type;
    a.op = (uint8_t)op;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_igather(struct comm *ctx, uint32_t comm, uint32_t root, const void *send,
                             uint32_t block, void *recv, uint64_t now_ns,
                             struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_GATHER;
    a.root = root;
    a.send = send;
    a.recv = recv;
    a.count = block;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

enum comm_error comm_iallgather(struct comm *ctx, uint32_t comm, const void *send,
                                uint32_t block, void *recv, uint64_t now_ns,
                                struct comm_outbox *out, uint32_t *request)
{
    struct coll_args a;
    memset(&a, 0, sizeof a);
    a.kind = COLL_ALLGATHER;
    a.send = send;
    a.recv = recv;
    a.count = block;
    return start_collective(ctx, comm, &a, now_ns, out, request);
}

/* ---- queries ---- */

uint32_t comm_size(const struct comm *ctx, uint32_t comm)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    return c == NULL ? 0 : c->size;
}

uint32_t comm_rank(const struct comm *ctx, uint32_t comm)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    return c == NULL ? COMM_RANK_NONE : c->rank;
}

enum comm_state comm_state_of(const struct comm *ctx, uint32_t comm)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    return c == NULL ? COMM_STATE_FAILED : (enum comm_state)c->state;
}

uint64_t comm_epoch_of(const struct comm *ctx, uint32_t comm)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    return c == NULL ? 0 : c->epoch;
}

uint32_t comm_node_of(const struct comm *ctx, uint32_t comm, uint32_t rank)
{
    const struct comm_communicator *c = comm_const_slot(ctx, comm);
    if (c == NULL || rank >= c->size) {
        return COMM_NODE_NONE;
    }
    return group_node(ctx, c, rank);
}

enum comm_rank_state comm_rank_state_of(const struct comm *ctx, uint32_t comm, uint32_t rank)
{
    uint32_t node = comm_node_of(ctx, comm, rank);
    if (node == COMM_NODE_NONE || group_member_out(ctx, comm_const_slot(ctx, comm), rank)) {
        return COMM_RANK_FAILED;
    }
    uint16_t slot = peer_find(ctx, node);
    if (slot != COMM_NONE16 && ctx->peers[slot].suspected) {
        return COMM_RANK_UNAVAILABLE;
    }
    return COMM_RANK_OK;
}

bool comm_busy_clears(const struct comm *ctx)
{
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_REQUESTS; i++) {
        if (ctx->requests[i].state == COMM_REQ_FREE) {
            return true;
        }
    }
    return false;
}

bool comm_has_view(const struct comm *ctx)
{
    return ctx->has_view;
}

uint64_t comm_view_epoch(const struct comm *ctx)
{
    return ctx->epoch;
}

const struct comm_counters *comm_get_counters(const struct comm *ctx)
{
    return &ctx->counters;
}
