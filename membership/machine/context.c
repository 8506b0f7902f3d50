/*
 * Setting up a membership context and reading it (see membership.h):
 * configuration defaults and checks, the initial view, queries.
 */
#include "membership/membership.h"

#include <string.h>

#include "membership/machine/machine.h"

size_t membership_context_bytes(void)
{
    return sizeof(struct membership);
}

static uint32_t fnv_add(uint32_t h, uint32_t value)
{
    for (unsigned i = 0; i < 4; i++) {
        h ^= (value >> (8u * i)) & 0xffu;
        h *= 16777619u;
    }
    return h;
}

void membership_config_defaults(struct membership_config *config)
{
    memset(config, 0, sizeof *config);
    config->radix = CONFIG_TREE_RADIX_DEFAULT;
    config->layout = MEMBERSHIP_LAYOUT_RADIX;
    config->policy = MEMBERSHIP_POLICY_PRIMARY;
    config->watch_torus_neighbours = true;
    config->timeout_ceiling = MEMBERSHIP_TIMEOUT_CEILING_DEFAULT;
    membership_config_timeouts_ms(config, 100, 500);
}

void membership_config_timeouts_ms(struct membership_config *config, uint32_t heartbeat_ms,
                                   uint32_t detect_timeout_ms)
{
    uint64_t detect = (uint64_t)detect_timeout_ms * 1000000u;
    config->heartbeat_ns = (uint64_t)heartbeat_ms * 1000000u;
    config->heartbeat_timeout_ns = detect;
    config->probe_timeout_ns = detect;
    config->ack_timeout_ns = detect;
    config->report_timeout_ns = 2u * detect;
    config->join_timeout_ns = 4u * detect;
    config->sync_timeout_ns = detect;
}

const char *membership_init_status_text(enum membership_init_status status)
{
    switch (status) {
    case MEMBERSHIP_INIT_OK:
        return "ok";
    case MEMBERSHIP_INIT_BAD_NODE:
        return "node id is not below the node count";
    case MEMBERSHIP_INIT_BAD_COUNT:
        return "member count above the node count (or node count above CONFIG_MAX_NODES)";
    case MEMBERSHIP_INIT_BAD_RADIX:
        return "radix is not a power of two in 2..16";
    case MEMBERSHIP_INIT_BAD_LAYOUT:
        return "unknown tree layout";
    case MEMBERSHIP_INIT_BAD_POLICY:
        return "unknown partition policy";
    case MEMBERSHIP_INIT_BAD_RECOVERY:
        return "an invalid recovery policy";
    case MEMBERSHIP_INIT_BAD_SEEDS:
        return "more than 4 seed nodes, or a seed that is not a node";
    case MEMBERSHIP_INIT_BAD_TIMEOUT:
        return "a timeout is zero, the heartbeat timeout is not above the period, or the timeout "
               "ceiling is not in 1..64";
    default:
        return "?";
    }
}

static enum membership_init_status check_config(const struct membership_config *cfg)
{
    uint32_t n = cfg->geometry.node_count;
    if (n == 0 || n > CONFIG_MAX_NODES || n > (UINT32_C(1) << MEMBERSHIP_EPOCH_POS_BITS) ||
        cfg->member_count > n) {
        return MEMBERSHIP_INIT_BAD_COUNT;
    }
    if (cfg->node_id >= n) {
        return MEMBERSHIP_INIT_BAD_NODE;
    }
    if (!membership_tree_radix_valid(cfg->radix)) {
        return MEMBERSHIP_INIT_BAD_RADIX;
    }
    if ((unsigned)cfg->layout >= MEMBERSHIP_LAYOUT_KINDS) {
        return MEMBERSHIP_INIT_BAD_LAYOUT;
    }
    if (cfg->policy != MEMBERSHIP_POLICY_PRIMARY && cfg->policy != MEMBERSHIP_POLICY_EVERY_SIDE) {
        return MEMBERSHIP_INIT_BAD_POLICY;
    }
    if (cfg->probe_timeout_ns == 0 || cfg->ack_timeout_ns == 0 || cfg->report_timeout_ns == 0 ||
        cfg->join_timeout_ns == 0 || cfg->sync_timeout_ns == 0 ||
        (cfg->heartbeat_ns != 0 && cfg->heartbeat_timeout_ns <= cfg->heartbeat_ns) ||
        cfg->timeout_ceiling == 0 || cfg->timeout_ceiling > MEMBERSHIP_TIMEOUT_CEILING_MAX) {
        return MEMBERSHIP_INIT_BAD_TIMEOUT;
    }
    uint8_t policy[RECOVERY_POLICY_BYTES];
    recovery_policy_encode(&cfg->recovery, policy);
    unsigned offset;
    uint8_t value;
    const char *expected;
    if (!recovery_policy_check(policy, &offset, &value, &expected)) {
        return MEMBERSHIP_INIT_BAD_RECOVERY;
    }
    if (cfg->seed_count > MEMBERSHIP_SEEDS_MAX) {
        return MEMBERSHIP_INIT_BAD_SEEDS;
    }
    for (uint32_t i = 0; i < cfg->seed_count; i++) {
        if (cfg->seeds[i] >= n) {
            return MEMBERSHIP_INIT_BAD_SEEDS;
        }
    }
    return MEMBERSHIP_INIT_OK;
}

enum membership_init_status membership_init(struct membership *ctx,
                                            const struct membership_config *config)
{
    enum membership_init_status status = check_config(config);
    if (status != MEMBERSHIP_INIT_OK) {
        return status;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->config = *config;
    ctx->layout.kind = config->layout;
    ctx->layout.geometry = config->geometry;
    ctx->node_count = config->geometry.node_count;
    ctx->self = config->node_id;
    ctx->self_pos = machine_pos_of(ctx, ctx->self);
    ctx->incarnation = config->incarnation;
    uint32_t h = 2166136261u;
    h = fnv_add(h, ctx->node_count);
    h = fnv_add(h, config->radix);
    h = fnv_add(h, (uint32_t)config->layout);
    h = fnv_add(h, config->geometry.dims);
    for (unsigned d = 0; d < config->geometry.dims; d++) {
        h = fnv_add(h, config->geometry.size[d] | (config->geometry.wraps[d] ? 0x80000000u : 0));
    }
    ctx->config_digest = h;

    membership_view_reset(&ctx->view, ctx->node_count);
    if (config->member_count == ctx->node_count || ctx->layout.kind == MEMBERSHIP_LAYOUT_RADIX) {
        /* A prefix of positions: whole words at a time. */
        uint32_t full = config->member_count / 64u;
        memset(ctx->view.words, 0xff, sizeof(uint64_t) * full);
        if ((config->member_count % 64u) != 0) {
            ctx->view.words[full] = (UINT64_C(1) << (config->member_count % 64u)) - 1u;
        }
    } else {
        for (uint32_t id = 0; id < config->member_count; id++) {
            uint32_t pos = machine_pos_of(ctx, id);
            ctx->view.words[pos / 64u] |= UINT64_C(1) << (pos % 64u);
        }
    }
    membership_view_rebuild(&ctx->view);
    ctx->digest = membership_initial_digest(config->member_count);
    ctx->root_pos = membership_tree_root(&ctx->view);
    ctx->epoch = MEMBERSHIP_EPOCH(0, ctx->root_pos == MEMBERSHIP_POS_NONE ? 0 : ctx->root_pos, 0);
    ctx->stable_epoch = ctx->epoch;
    ctx->has_view = machine_in_view(ctx, ctx->self);
    machine_ref_to_current(ctx);
    machine_history_add(ctx, ctx->epoch);
    ctx->neighbour_count = membership_layout_neighbours(&ctx->layout, ctx->self, ctx->neighbours);
    ctx->report_deadline_ns = MEMBERSHIP_NEVER;
    ctx->report_target = MEMBERSHIP_NONE;
    ctx->round.done_epoch = MEMBERSHIP_NEVER;
    for (uint32_t i = 0; i < MEMBERSHIP_NOTICE_CACHE; i++) {
        ctx->notice_sender[i] = MEMBERSHIP_NONE;
    }
    for (uint32_t i = 0; i < MEMBERSHIP_RECENT_JOINS; i++) {
        ctx->coord.recent[i].id = MEMBERSHIP_NONE;
    }
    ctx->last_now_ns = MEMBERSHIP_NEVER;
    ctx->lag_deadline_ns = MEMBERSHIP_NEVER;
    ctx->coord.evidence_deadline_ns = MEMBERSHIP_NEVER;
    ctx->health_x16 = 16u;
    ctx->root_check = MEMBERSHIP_NONE;
    ctx->join.hint = MEMBERSHIP_NONE;
    ctx->join.in_since_ns = MEMBERSHIP_NEVER;
    install_refresh_tree(ctx, 0);
    return MEMBERSHIP_INIT_OK;
}

bool membership_has_view(const struct membership *ctx)
{
    return ctx->has_view;
}

bool membership_is_member(const struct membership *ctx, uint32_t id)
{
    return machine_is_member(ctx, id);
}

uint64_t membership_epoch(const struct membership *ctx)
{
    return ctx->epoch;
}

uint64_t membership_stable_epoch(const struct membership *ctx)
{
    return ctx->stable_epoch;
}

uint64_t membership_digest(const struct membership *ctx)
{
    return ctx->digest;
}

uint32_t membership_live_count(const struct membership *ctx)
{
    return ctx->has_view ? ctx->view.live : 0;
}

uint32_t membership_root(const struct membership *ctx)
{
    return ctx->has_view ? machine_root_id(ctx) : MEMBERSHIP_NONE;
}

uint32_t membership_incarnation(const struct membership *ctx)
{
    return ctx->incarnation;
}

bool membership_is_joining(const struct membership *ctx)
{
    return ctx->join.active && !ctx->has_view;
}

bool membership_join_refused(const struct membership *ctx)
{
    return ctx->join.refused;
}

uint32_t membership_links_to_avoid(const struct membership *ctx)
{
    uint32_t links = 0;
    const struct torus_geometry *g = &ctx->config.geometry;
    for (unsigned link = 0; ctx->has_view && link < torus_geometry_link_count(g) &&
                            link < CONFIG_MAX_LINKS;
         link++) {
        uint32_t n = torus_geometry_neighbour(g, ctx->self, link);
        if (n == TORUS_RANK_NONE || n == ctx->self) {
            continue;
        }
        if (!machine_in_view(ctx, n) || detector_suspects(ctx, n)) {
            links |= 1u << link;
        }
    }
    return links;
}

uint32_t membership_shunned_nodes(const struct membership *ctx, uint32_t *ids, uint32_t max)
{
    if (!ctx->has_view) {
        return 0;
    }
    const struct membership_view *view = &ctx->view;
    uint32_t count = view->positions - view->live;
    if (count > max) {
        return count; /* too many to list: the caller routes without */
    }
    uint32_t out_of_view = count;
    count = 0;
    /* Called after every membership call: nothing to scan for when the
     * view holds every position, and no more once all are found. */
    for (uint32_t word = 0; word < view->word_count && count < out_of_view; word++) {
        uint64_t out = ~view->words[word];
        while (out != 0) {
            uint32_t pos = word * 64u + (uint32_t)__builtin_ctzll(out);
            out &= out - 1u;
            if (pos >= view->positions) {
                break;
            }
            ids[count++] = machine_id_at(ctx, pos);
        }
    }
    /* Suspected neighbours: the only suspects routes could cross next. */
    const struct torus_geometry *g = &ctx->config.geometry;
    for (unsigned link = 0; link < torus_geometry_link_count(g) && link < CONFIG_MAX_LINKS;
         link++) {
        uint32_t n = torus_geometry_neighbour(g, ctx->self, link);
        if (n == TORUS_RANK_NONE || n == ctx->self || !machine_in_view(ctx, n) ||
            !detector_suspects(ctx, n)) {
            continue;
        }
        bool listed = false;
        for (uint32_t i = 0; i < count && i < max && !listed; i++) {
            listed = ids[i] == n;
        }
        if (!listed) {
            if (count < max) {
                ids[count] = n;
            }
            count++;
        }
    }
    return count;
}

bool membership_tree_of(const struct membership *ctx, uint32_t *parent, uint32_t *children,
                        uint32_t *child_count, uint32_t *depth)
{
    if (!ctx->has_view) {
        return false;
    }
    *parent = ctx->links.parent == MEMBERSHIP_POS_NONE ? MEMBERSHIP_NONE
                                                       : machine_id_at(ctx, ctx->links.parent);
    for (uint32_t i = 0; i < ctx->links.child_count; i++) {
        children[i] = machine_id_at(ctx, ctx->links.children[i]);
    }
    *child_count = ctx->links.child_count;
    *depth = ctx->links.depth;
    return true;
}

uint64_t membership_watch_timeout(const struct membership *ctx, uint32_t id)
{
    for (uint32_t i = 0; i < ctx->watch_count; i++) {
        if (ctx->watch[i].id == id) {
            return detector_watch_timeout(ctx, &ctx->watch[i]);
        }
    }
    return 0;
}

uint32_t membership_local_health_x16(const struct membership *ctx)
{
    return ctx->health_x16;
}

const struct membership_counters *membership_get_counters(const struct membership *ctx)
{
    return &ctx->counters;
}
