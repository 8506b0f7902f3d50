/*
 * The live bitmap's rank/select index and the copy-on-write reference view,
 * against a naive model (a byte per position) over long random change
 * sequences, at small sizes and at CONFIG_MAX_NODES.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "membership/reference.h"
#include "membership/view.h"
#include "tests/check.h"

static struct membership_view view;
static struct membership_reference reference;
static uint8_t model[CONFIG_MAX_NODES];
static uint8_t ref_model[CONFIG_MAX_NODES];

static uint32_t naive_rank(uint32_t n, uint32_t pos)
{
    uint32_t r = 0;
    for (uint32_t p = 0; p < pos && p < n; p++) {
        r += model[p];
    }
    return r;
}

static void check_against_model(uint32_t n, unsigned long long *rng)
{
    uint32_t live = naive_rank(n, n);
    CHECK(view.live == live);
    /* select(k) for every k, rank at every live position (small n) or a sample. */
    uint32_t k = 0;
    for (uint32_t p = 0; p < n; p++) {
        CHECK(membership_view_is_live(&view, p) == (model[p] != 0));
        if (model[p]) {
            if (n <= 4096 || (test_random(rng) % 64) == 0) {
                CHECKF(membership_view_select(&view, k) == p, "select(%u) at n=%u", k, n);
                CHECKF(membership_view_rank(&view, p) == k, "rank(%u) at n=%u", p, n);
            }
            k++;
        }
    }
    CHECK(membership_view_select(&view, live) == MEMBERSHIP_POS_NONE);
    CHECK(membership_view_rank(&view, n) == live);
    for (int i = 0; i < 64; i++) {
        uint32_t p = (uint32_t)(test_random(rng) % n);
        uint32_t next = MEMBERSHIP_POS_NONE;
        for (uint32_t q = p; q < n; q++) {
            if (model[q]) {
                next = q;
                break;
            }
        }
        CHECK(membership_view_next_live(&view, p) == next);
        uint32_t to = p + 1u + (uint32_t)(test_random(rng) % (n - p));
        CHECK(membership_view_first_live_in(&view, p, to) == (next < to ? next : MEMBERSHIP_POS_NONE));
        uint32_t dead = n;
        for (uint32_t q = p; q < n; q++) {
            if (!model[q]) {
                dead = q;
                break;
            }
        }
        CHECK(membership_view_next_dead(&view, p) == dead);
    }
}

static void check_reference(uint32_t n)
{
    uint32_t count = 0;
    uint32_t lost = 0;
    for (uint32_t p = 0; p < n; p++) {
        CHECKF(membership_reference_contains(&reference, &view, p) == (ref_model[p] != 0),
               "reference bit %u", p);
        count += ref_model[p];
        lost += ref_model[p] && !model[p];
    }
    CHECK(reference.count == count);
    CHECK(reference.lost == lost);
    CHECK(membership_reference_kept(&reference) == count - lost);
}

static void run(uint32_t n, uint32_t steps, unsigned long long seed)
{
    unsigned long long rng = seed;
    membership_view_reset(&view, n);
    memset(model, 0, sizeof model);
    /* Start from a random fill written straight into words[] plus rebuild. */
    for (uint32_t p = 0; p < n; p++) {
        if (test_random(&rng) % 4 != 0) {
            model[p] = 1;
            view.words[p / 64] |= UINT64_C(1) << (p % 64);
        }
    }
    membership_view_rebuild(&view);
    check_against_model(n, &rng);
    memset(&reference, 0, sizeof reference);
    membership_reference_take(&reference, &view, 0);
    memcpy(ref_model, model, n);
    for (uint32_t step = 0; step < steps; step++) {
        uint32_t p = (uint32_t)(test_random(&rng) % n);
        bool was = model[p] != 0;
        unsigned long long what = test_random(&rng) % 100;
        if (what < 2) {
            membership_reference_take(&reference, &view, 0);
            memcpy(ref_model, model, n);
        } else if (what < 51) {
            CHECK(membership_reference_add(&reference, &view, p) == !was);
            model[p] = 1;
        } else {
            CHECK(membership_reference_remove(&reference, &view, p) == was);
            model[p] = 0;
        }
        if ((step % (steps / 8 + 1)) == 0) {
            check_against_model(n, &rng);
            check_reference(n);
        }
    }
    check_against_model(n, &rng);
    check_reference(n);
    /* Plain add/remove report whether anything changed. */
    membership_view_reset(&view, n);
    CHECK(membership_view_add(&view, n - 1));
    CHECK(!membership_view_add(&view, n - 1));
    CHECK(!membership_view_add(&view, n)); /* out of range */
    CHECK(membership_view_select(&view, 0) == n - 1);
    CHECK(membership_view_remove(&view, n - 1));
    CHECK(!membership_view_remove(&view, n - 1));
    CHECK(membership_view_select(&view, 0) == MEMBERSHIP_POS_NONE);
}

int main(void)
{
    static const uint32_t sizes[] = {1, 7, 64, 65, 1000, 4096, CONFIG_MAX_NODES};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i] <= CONFIG_MAX_NODES) {
            run(sizes[i], sizes[i] < 4096 ? 20000 : 40000, 1000 + i);
        }
    }
    return check_report("membership.view");
}
