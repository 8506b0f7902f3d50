/*
 * Copy-on-write reference view (see reference.h).
 */
#include "membership/reference.h"

#include <string.h>

static void next_generation(struct membership_reference *ref)
{
    ref->generation++;
    if (ref->generation == 0) {
        /* Once in 2^32 snapshots: forget every stamp rather than alias one. */
        memset(ref->stamp, 0, sizeof ref->stamp);
        ref->generation = 1;
    }
}

void membership_reference_take(struct membership_reference *ref, const struct membership_view *view,
                               uint32_t root_pos)
{
    next_generation(ref);
    ref->count = view->live;
    ref->lost = 0;
    ref->root_pos = root_pos;
}

void membership_reference_adopt(struct membership_reference *ref, const struct membership_view *view,
                                uint32_t count, uint32_t lost, uint32_t root_pos)
{
    next_generation(ref);
    ref->count = count;
    ref->lost = lost <= count ? lost : count;
    ref->root_pos = root_pos;
    (void)view;
}

bool membership_reference_contains(const struct membership_reference *ref,
                                   const struct membership_view *view, uint32_t pos)
{
    if (pos >= view->positions) {
        return false;
    }
    uint32_t w = pos / 64u;
    uint64_t word = ref->stamp[w] == ref->generation ? ref->saved[w] : view->words[w];
    return ((word >> (pos % 64u)) & 1u) != 0;
}

static void save_word(struct membership_reference *ref, const struct membership_view *view,
                      uint32_t pos)
{
    uint32_t w = pos / 64u;
    if (ref->stamp[w] != ref->generation) {
        ref->saved[w] = view->words[w];
        ref->stamp[w] = ref->generation;
    }
}

bool membership_reference_remove(struct membership_reference *ref, struct membership_view *view,
                                 uint32_t pos)
{
    if (!membership_view_is_live(view, pos)) {
        return false;
    }
    save_word(ref, view, pos);
    membership_view_remove(view, pos);
    if (membership_reference_contains(ref, view, pos) && ref->lost < ref->count) {
        ref->lost++;
    }
    return true;
}

bool membership_reference_add(struct membership_reference *ref, struct membership_view *view,
                              uint32_t pos)
{
    if (pos >= view->positions || membership_view_is_live(view, pos)) {
        return false;
    }
    save_word(ref, view, pos);
    membership_view_add(view, pos);
    if (membership_reference_contains(ref, view, pos) && ref->lost > 0) {
        ref->lost--;
    }
    return true;
}

uint32_t membership_reference_kept(const struct membership_reference *ref)
{
    return ref->count - ref->lost;
}
