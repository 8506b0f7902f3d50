#include "tools/ts_model.h"

#include <stdlib.h>
#include <string.h>

#include "membership/tree.h"
#include "net/torus/geometry.h"

void ts_model_predict(struct ts_model *model, double hop_ns, double cp_ns)
{
    double h = (double)model->levels;
    model->base_ns = 2.0 * hop_ns * (h > 1.0 ? h - 1.0 : 0.0) + cp_ns * h;
    model->distance_ns = 2.0 * hop_ns * (double)model->hop_sum + cp_ns * h;
}

void ts_model_predict_contention(struct ts_model *model, const struct ts_fan_latency *fans,
                                 double cp_ns)
{
    model->contention_ns = 0.0;
    if (fans->count == 0 || fans->count > TS_MODEL_FANS)
        return;
    double sum = 0.0;
    for (uint32_t d = 1; d < model->levels && d < TS_MODEL_MAX_LEVELS; d++) {
        unsigned i = 0;
        while (i + 1 < fans->count && fans->fanout[i] < model->level_max_fanout[d])
            i++;
        sum += 2.0 * fans->hop_ns[i] * (double)model->level_max_hops[d];
    }
    model->contention_ns = sum + cp_ns * (double)model->levels;
}

void ts_model_compute(const struct membership_view *view, const struct membership_layout *layout,
                      unsigned radix, double hop_ns, double cp_ns, struct ts_model *model)
{
    memset(model, 0, sizeof *model);
    uint32_t live = view->live;
    /* Parents come before their children in rank order (both layouts):
     * path[k] is member k's hops up to the root. */
    uint32_t *path = calloc(live > 0 ? live : 1, sizeof *path);
    for (uint32_t k = 0; k < live; k++) {
        uint32_t pos = membership_view_select(view, k);
        struct membership_tree_links links;
        if (!membership_tree_locate(view, layout, radix, pos, &links)) {
            continue;
        }
        if (links.depth + 1u > model->levels) {
            model->levels = links.depth + 1u;
        }
        if (links.depth + 1u < TS_MODEL_MAX_LEVELS &&
            links.child_count > model->level_max_fanout[links.depth + 1u]) {
            model->level_max_fanout[links.depth + 1u] = links.child_count;
        }
        if (links.parent == MEMBERSHIP_POS_NONE || links.depth >= TS_MODEL_MAX_LEVELS) {
            continue;
        }
        uint32_t hops = torus_geometry_distance(&layout->geometry,
                                                membership_layout_id(layout, pos),
                                                membership_layout_id(layout, links.parent));
        if (hops > model->level_max_hops[links.depth]) {
            model->level_max_hops[links.depth] = hops;
        }
        if (path != NULL) {
            path[k] = path[membership_view_rank(view, links.parent)] + hops;
            double t = 2.0 * hop_ns * path[k] + 2.0 * cp_ns * links.depth;
            if (t > model->path_ns) {
                model->path_ns = t;
                model->path_hops = path[k];
            }
        }
    }
    free(path);
    for (uint32_t d = 1; d < model->levels && d < TS_MODEL_MAX_LEVELS; d++) {
        model->hop_sum += model->level_max_hops[d];
    }
    ts_model_predict(model, hop_ns, cp_ns);
}
