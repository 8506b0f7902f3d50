/* The T_s models (tools/ts_model.h) on a 2x2x2 torus, radix 4, members
 * 0..6: the tree 0 -> 1..4, 1 -> 5, 6 has H = 3 levels, largest hops 2
 * (0 to 3) and 3 (1 to 6), S = 5, and its critical path is 0 -> 1 -> 6
 * (4 hops, depth 2). */
#include <string.h>

#include "membership/layout.h"
#include "membership/view.h"
#include "tests/check.h"
#include "tools/ts_model.h"

int main(void)
{
    uint32_t size[3] = {2, 2, 2};
    bool mesh[3] = {false, false, false};
    struct membership_layout layout;
    memset(&layout, 0, sizeof layout);
    layout.kind = MEMBERSHIP_LAYOUT_RADIX;
    CHECK(torus_geometry_init(&layout.geometry, 3, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    static struct membership_view view;
    membership_view_reset(&view, 8);
    for (uint32_t id = 0; id < 7; id++)
        membership_view_add(&view, membership_layout_pos(&layout, id));

    struct ts_model model;
    ts_model_compute(&view, &layout, 4, 100000.0, 1000.0, &model);
    CHECK(model.levels == 3 && model.hop_sum == 5);
    CHECK(model.level_max_hops[1] == 2 && model.level_max_hops[2] == 3);
    CHECK(model.base_ns == 2.0 * 100000.0 * 2 + 1000.0 * 3);     /* 2 L (H-1) + O_cp H */
    CHECK(model.distance_ns == 2.0 * 100000.0 * 5 + 1000.0 * 3); /* 2 L S + O_cp H */
    CHECK(model.path_hops == 4 && model.path_ns == 2.0 * 100000.0 * 4 + 2.0 * 1000.0 * 2);

    /* The shape alone, then the times for other L and O_cp. */
    ts_model_compute(&view, &layout, 4, 0.0, 0.0, &model);
    CHECK(model.levels == 3 && model.hop_sum == 5 && model.distance_ns == 0.0);
    ts_model_predict(&model, 10.0, 1.0);
    CHECK(model.base_ns == 43.0 && model.distance_ns == 103.0);

    /* Contention: fan-out 4 at level 1 (0 -> 1..4), 2 at level 2 (1 -> 5, 6). */
    CHECK(model.level_max_fanout[1] == 4 && model.level_max_fanout[2] == 2);
    struct ts_fan_latency fans = {3, {1, 2, 4}, {10.0, 20.0, 40.0}};
    ts_model_predict_contention(&model, &fans, 1.0);
    CHECK(model.contention_ns == 2.0 * 40.0 * 2 + 2.0 * 20.0 * 3 + 1.0 * 3);
    /* A fan-out beyond the largest measured uses the largest. */
    struct ts_fan_latency small = {2, {1, 2}, {10.0, 20.0}};
    ts_model_predict_contention(&model, &small, 1.0);
    CHECK(model.contention_ns == 2.0 * 20.0 * 2 + 2.0 * 20.0 * 3 + 1.0 * 3);
    /* One not measured uses the next larger that was. */
    struct ts_fan_latency gap = {2, {1, 4}, {10.0, 40.0}};
    ts_model_predict_contention(&model, &gap, 1.0);
    CHECK(model.contention_ns == 2.0 * 40.0 * 2 + 2.0 * 40.0 * 3 + 1.0 * 3);
    struct ts_fan_latency none = {0, {0}, {0}};
    ts_model_predict_contention(&model, &none, 1.0);
    CHECK(model.contention_ns == 0.0);

    /* One member: one level, nothing to cross. */
    membership_view_reset(&view, 8);
    membership_view_add(&view, 0);
    ts_model_compute(&view, &layout, 4, 10.0, 1.0, &model);
    CHECK(model.levels == 1 && model.hop_sum == 0 && model.base_ns == 1.0);
    return check_report("tools.ts_model");
}
