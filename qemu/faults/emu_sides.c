#include "qemu/faults/emu_sides.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t emu_sides_find(const struct torus_geometry *geometry, const bool *running,
                        const uint16_t *cut, uint32_t *side_of)
{
    uint32_t count = torus_geometry_node_count(geometry);
    unsigned links = torus_geometry_link_count(geometry);
    uint32_t *queue = malloc((count > 0 ? count : 1u) * sizeof *queue);
    if (queue == NULL)
        return UINT32_MAX;
    for (uint32_t id = 0; id < count; id++)
        side_of[id] = EMU_SIDE_NONE;
    uint32_t sides = 0;
    /* Flood from each running node not yet in a side, lowest id first. */
    for (uint32_t start = 0; start < count; start++) {
        if (!running[start] || side_of[start] != EMU_SIDE_NONE)
            continue;
        uint32_t head = 0, tail = 0;
        side_of[start] = sides;
        queue[tail++] = start;
        while (head < tail) {
            uint32_t id = queue[head++];
            for (unsigned l = 0; l < links; l++) {
                /* Every cable counts on its own: a size-2 dimension's twin
                 * cables both lead to the same neighbour. */
                uint32_t peer = torus_geometry_neighbour(geometry, id, l);
                if (peer == TORUS_RANK_NONE || !running[peer] ||
                    side_of[peer] != EMU_SIDE_NONE || ((cut[id] >> l) & 1u) != 0)
                    continue;
                side_of[peer] = sides;
                queue[tail++] = peer;
            }
        }
        sides++;
    }
    free(queue);
    return sides;
}

void emu_sides_expect(enum emu_sides_policy policy, uint32_t count, const uint32_t *side_of,
                      uint32_t side_count, const bool *candidates,
                      const struct emu_sides_reference *reference, bool *expected,
                      struct emu_sides_expectation *out)
{
    memset(out, 0, sizeof *out);
    out->primary = EMU_SIDE_NONE;
    /* Each side's reference members, and whether it holds a candidate. */
    uint32_t kept_max = 0, kept_side = EMU_SIDE_NONE;
    bool root_side_has_half = false;
    uint32_t root_side = EMU_SIDE_NONE;
    for (uint32_t id = 0; id < count; id++)
        out->reference += reference->members[id];
    if (reference->root < count)
        root_side = side_of[reference->root];
    for (uint32_t side = 0; side < side_count; side++) {
        uint32_t kept = 0;
        bool candidate = false;
        for (uint32_t id = 0; id < count; id++) {
            if (side_of[id] != side)
                continue;
            kept += reference->members[id];
            candidate |= candidates[id];
        }
        out->sides += candidate;
        if (kept > kept_max) {
            kept_max = kept;
            kept_side = side;
        }
        if (side == root_side && 2u * (uint64_t)kept == out->reference)
            root_side_has_half = true;
    }
    for (uint32_t id = 0; id < count; id++)
        expected[id] = candidates[id] && side_of[id] != EMU_SIDE_NONE;
    if (policy == EMU_SIDES_EVERY_SIDE && out->sides > 1) {
        out->expect = EMU_AGREE_EACH_SIDE;
        return;
    }
    if (policy == EMU_SIDES_EVERY_SIDE) { /* one side: its view, majority or not */
        out->expect = EMU_AGREE_ONE_VIEW;
        for (uint32_t id = 0; id < count && out->primary == EMU_SIDE_NONE; id++)
            if (expected[id])
                out->primary = side_of[id];
        for (uint32_t id = 0; id < count; id++)
            out->kept += side_of[id] == out->primary && reference->members[id];
        return;
    }
    /* membership's primary rule (keeps_majority, census_finish): a strict
     * majority of the reference, or exactly half with its root. */
    if (kept_side != EMU_SIDE_NONE && 2u * (uint64_t)kept_max > out->reference)
        out->primary = kept_side;
    else if (root_side_has_half && !reference->viewless)
        out->primary = root_side;
    if (out->primary != EMU_SIDE_NONE) {
        out->expect = EMU_AGREE_ONE_VIEW;
        for (uint32_t id = 0; id < count; id++) {
            if (side_of[id] == out->primary)
                out->kept += reference->members[id];
            else
                expected[id] = false;
        }
    } else {
        out->expect = EMU_AGREE_NO_VIEW;
        memset(expected, 0, count * sizeof *expected);
    }
}

/* Each side's own view of its expected nodes (every-side policy). */
static bool evaluate_each_side(const struct emu_model_params *params, const uint32_t *side_of,
                               uint32_t side_count, const struct emu_view_answer *answers,
                               uint32_t count, const bool *expected,
                               struct emu_model_tree *tree, struct emu_agreement *out)
{
    struct emu_view_answer *mine = malloc(count * sizeof *mine);
    bool *in_side = malloc(count * sizeof *in_side);
    bool ok = mine != NULL && in_side != NULL;
    struct emu_agreement total;
    memset(&total, 0, sizeof total);
    total.passed = true;
    total.root = -1;
    uint32_t largest = 0;
    bool chosen = false;
    for (uint32_t side = 0; ok && side < side_count; side++) {
        uint32_t size = 0, lowest = UINT32_MAX;
        for (uint32_t id = 0; id < count; id++) {
            bool here = side_of[id] == side;
            in_side[id] = here && expected[id];
            size += in_side[id];
            if (here && lowest == UINT32_MAX)
                lowest = id;
            mine[id] = answers[id];
            if (!here) /* another side's answer is judged there */
                memset(&mine[id], 0, sizeof mine[id]);
        }
        struct emu_model_tree side_tree;
        struct emu_agreement verdict;
        if (!emu_model_tree(params, in_side, &side_tree)) {
            ok = false;
            break;
        }
        emu_agree_evaluate(mine, count, in_side, &side_tree, &verdict);
        total.asked += verdict.asked;
        total.answered += verdict.answered;
        total.members += verdict.members;
        if (!chosen || size > largest) { /* ties: the lower ids' side */
            chosen = true;
            largest = size;
            *tree = side_tree;
            total.epoch = verdict.epoch;
            total.digest = verdict.digest;
            total.live = verdict.live;
            total.root = verdict.root;
            total.expected_digest = verdict.expected_digest;
            total.expected_live = verdict.expected_live;
            total.expected_root = verdict.expected_root;
        }
        if (!verdict.passed && total.passed) {
            total.passed = false;
            char line[sizeof total.reason + 64];
            snprintf(line, sizeof line, "the side of node %u (%u expected): %s",
                     (unsigned)lowest, (unsigned)size, verdict.reason);
            memcpy(total.reason, line, sizeof total.reason - 1u); /* cut to fit */
            total.reason[sizeof total.reason - 1u] = '\0';
        }
    }
    free(mine);
    free(in_side);
    if (ok)
        *out = total;
    return ok;
}

bool emu_sides_evaluate(const struct emu_model_params *params,
                        const struct emu_sides_expectation *expectation,
                        const uint32_t *side_of, uint32_t side_count,
                        const struct emu_view_answer *answers, uint32_t count,
                        const bool *expected, struct emu_model_tree *tree,
                        struct emu_agreement *out)
{
    memset(out, 0, sizeof *out);
    if (expectation->expect == EMU_AGREE_EACH_SIDE) {
        if (!evaluate_each_side(params, side_of, side_count, answers, count, expected, tree,
                                out))
            return false;
    } else {
        if (!emu_model_tree(params, expected, tree))
            return false;
        emu_agree_evaluate(answers, count, expected, tree, out);
    }
    out->expect = expectation->expect;
    out->sides = expectation->sides;
    return true;
}
