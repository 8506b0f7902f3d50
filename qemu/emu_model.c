#define _GNU_SOURCE
#include "qemu/emu_model.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "membership/membership.h"
#include "membership/tree.h"
#include "membership/view.h"

static void layout_of(const struct emu_model_params *params, struct membership_layout *layout)
{
    memset(layout, 0, sizeof *layout);
    layout->kind = params->layout;
    layout->geometry = params->geometry;
}

uint64_t emu_model_digest(const struct emu_model_params *params, const bool *members)
{
    uint32_t count = torus_geometry_node_count(&params->geometry);
    uint64_t digest = membership_initial_digest(params->initial_members);
    for (uint32_t id = 0; id < count; id++)
        if (members[id] != (id < params->initial_members))
            digest ^= membership_id_digest(id);
    return digest;
}

void emu_model_ends(const struct emu_model_params *params, const bool *members, uint32_t *first,
                    uint32_t *last)
{
    struct membership_layout layout;
    layout_of(params, &layout);
    uint32_t count = torus_geometry_node_count(&params->geometry);
    *first = *last = UINT32_MAX;
    for (uint32_t pos = 0; pos < count; pos++) {
        uint32_t id = membership_layout_id(&layout, pos);
        if (!members[id])
            continue;
        if (*first == UINT32_MAX)
            *first = id;
        *last = id;
    }
}

/* A view of the member set, in layout positions (allocated). */
static struct membership_view *view_of(const struct emu_model_params *params,
                                       const struct membership_layout *layout,
                                       const bool *members)
{
    uint32_t count = torus_geometry_node_count(&params->geometry);
    if (count == 0 || count > CONFIG_MAX_NODES)
        return NULL;
    struct membership_view *view = malloc(sizeof *view);
    if (view == NULL)
        return NULL;
    membership_view_reset(view, count);
    for (uint32_t id = 0; id < count; id++)
        if (members[id])
            membership_view_add(view, membership_layout_pos(layout, id));
    return view;
}

bool emu_model_tree(const struct emu_model_params *params, const bool *members,
                    struct emu_model_tree *out)
{
    memset(out, 0, sizeof *out);
    out->root = UINT32_MAX;
    if (!membership_tree_radix_valid(params->radix))
        return false;
    struct membership_layout layout;
    layout_of(params, &layout);
    struct membership_view *view = view_of(params, &layout, members);
    if (view == NULL)
        return false;
    out->digest = emu_model_digest(params, members);
    out->live = view->live;
    uint32_t root = membership_tree_root(view);
    if (root != MEMBERSHIP_POS_NONE)
        out->root = membership_layout_id(&layout, root);
    for (uint32_t pos = membership_view_next_live(view, 0); pos != MEMBERSHIP_POS_NONE;
         pos = pos + 1 < view->positions ? membership_view_next_live(view, pos + 1)
                                         : MEMBERSHIP_POS_NONE) {
        struct membership_tree_links links;
        if (!membership_tree_locate(view, params->layout, params->radix, pos, &links))
            continue;
        if (links.depth + 1 > out->levels)
            out->levels = links.depth + 1;
        if (links.parent == MEMBERSHIP_POS_NONE || links.depth >= EMU_MODEL_MAX_LEVELS)
            continue;
        uint32_t hops = torus_geometry_distance(&params->geometry,
                                                membership_layout_id(&layout, pos),
                                                membership_layout_id(&layout, links.parent));
        if (hops > out->level_max_hops[links.depth])
            out->level_max_hops[links.depth] = hops;
    }
    for (uint32_t d = 1; d < out->levels && d < EMU_MODEL_MAX_LEVELS; d++)
        out->hop_sum += out->level_max_hops[d];
    free(view);
    return true;
}

void emu_model_predict(const struct emu_model_tree *tree, double one_hop_ns, double ocp_ns,
                       struct emu_model_prediction *out)
{
    double h = (double)tree->levels;
    out->base_ns = 2.0 * one_hop_ns * (h > 1.0 ? h - 1.0 : 0.0) + ocp_ns * h;
    out->distance_ns = 2.0 * one_hop_ns * (double)tree->hop_sum + ocp_ns * h;
}

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

double emu_model_measure_ocp_ns(const struct emu_model_params *params)
{
    uint32_t count = torus_geometry_node_count(&params->geometry);
    bool *members = calloc(count > 0 ? count : 1, sizeof *members);
    if (members == NULL || params->initial_members == 0)
        return (free(members), 0.0);
    for (uint32_t id = 0; id < params->initial_members && id < count; id++)
        members[id] = true;
    struct membership_layout layout;
    layout_of(params, &layout);
    struct membership_view *view = view_of(params, &layout, members);
    free(members);
    if (view == NULL || view->live < 2)
        return (free(view), 0.0);
    /* The node recomputing is the last member; the removed one cycles. */
    uint32_t self = membership_view_select(view, view->live - 1u);
    enum { ROUNDS = 20000 };
    volatile uint32_t sink = 0;
    uint64_t begin = monotonic_ns();
    for (unsigned i = 0; i < ROUNDS; i++) {
        uint32_t victim = membership_view_select(view, i % (view->live - 1u));
        membership_view_remove(view, victim);
        struct membership_tree_links links;
        if (membership_tree_locate(view, params->layout, params->radix, self, &links))
            sink += links.child_count + links.depth;
        membership_view_add(view, victim);
    }
    uint64_t elapsed = monotonic_ns() - begin;
    (void)sink;
    free(view);
    return (double)elapsed / ROUNDS;
}
