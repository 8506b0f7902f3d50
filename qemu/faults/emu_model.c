#define _GNU_SOURCE
#include "qemu/faults/emu_model.h"

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
    ts_model_compute(view, &layout, params->radix, 0.0, 0.0, &out->model);
    free(view);
    return true;
}

bool emu_model_depths(const struct emu_model_params *params, const bool *members,
                      uint8_t *depth_by_id)
{
    uint32_t count = torus_geometry_node_count(&params->geometry);
    memset(depth_by_id, UINT8_MAX, count);
    if (!membership_tree_radix_valid(params->radix))
        return false;
    struct membership_layout layout;
    layout_of(params, &layout);
    struct membership_view *view = view_of(params, &layout, members);
    if (view == NULL)
        return false;
    for (uint32_t id = 0; id < count; id++) {
        struct membership_tree_links links;
        if (members[id] &&
            membership_tree_locate(view, &layout, params->radix,
                                   membership_layout_pos(&layout, id), &links) &&
            links.depth < UINT8_MAX)
            depth_by_id[id] = (uint8_t)links.depth;
    }
    free(view);
    return true;
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
        if (membership_tree_locate(view, &layout, params->radix, self, &links))
            sink += links.child_count + links.depth;
        membership_view_add(view, victim);
    }
    uint64_t elapsed = monotonic_ns() - begin;
    (void)sink;
    free(view);
    return (double)elapsed / ROUNDS;
}
