/*
 * Live bitmap with a Fenwick index of word counts (see view.h).
 */
#include "membership/view.h"

#include <string.h>

static uint32_t low_bit(uint32_t i)
{
    return i & (~i + 1u);
}

static void fenwick_add(struct membership_view *view, uint32_t word, int32_t delta)
{
    for (uint32_t i = word + 1u; i <= view->word_count; i += low_bit(i)) {
        view->fenwick[i - 1u] = (uint32_t)((int32_t)view->fenwick[i - 1u] + delta);
    }
}

/* Live positions in words [0, word). */
static uint32_t fenwick_prefix(const struct membership_view *view, uint32_t word)
{
    uint32_t sum = 0;
    for (uint32_t i = word; i > 0; i -= low_bit(i)) {
        sum += view->fenwick[i - 1u];
    }
    return sum;
}

/* Index of the r-th set bit (r from 0) of a word that has more than r. */
static uint32_t select_in_word(uint64_t word, uint32_t r)
{
    uint32_t pos = 0;
    for (uint32_t width = 32; width > 0; width >>= 1) {
        uint64_t low = word & ((UINT64_C(1) << width) - 1u);
        uint32_t count = (uint32_t)__builtin_popcountll(low);
        if (r >= count) {
            r -= count;
            word >>= width;
            pos += width;
        } else {
            word = low;
        }
    }
    return pos;
}

void membership_view_reset(struct membership_view *view, uint32_t positions)
{
    if (positions > CONFIG_MAX_NODES) {
        positions = CONFIG_MAX_NODES;
    }
    view->positions = positions;
    view->word_count = (positions + 63u) / 64u;
    memset(view->words, 0, sizeof view->words);
    memset(view->fenwick, 0, sizeof view->fenwick);
    view->live = 0;
}

void membership_view_rebuild(struct membership_view *view)
{
    uint32_t n = view->word_count;
    /* Bits past the last position never count. */
    if ((view->positions % 64u) != 0 && n > 0) {
        view->words[n - 1u] &= (UINT64_C(1) << (view->positions % 64u)) - 1u;
    }
    for (uint32_t w = n; w < MEMBERSHIP_VIEW_WORDS; w++) {
        view->words[w] = 0;
    }
    uint32_t live = 0;
    for (uint32_t i = 1; i <= n; i++) {
        uint32_t c = (uint32_t)__builtin_popcountll(view->words[i - 1u]);
        view->fenwick[i - 1u] = c;
        live += c;
    }
    for (uint32_t i = 1; i <= n; i++) {
        uint32_t j = i + low_bit(i);
        if (j <= n) {
            view->fenwick[j - 1u] += view->fenwick[i - 1u];
        }
    }
    view->live = live;
}

bool membership_view_is_live(const struct membership_view *view, uint32_t pos)
{
    if (pos >= view->positions) {
        return false;
    }
    return ((view->words[pos / 64u] >> (pos % 64u)) & 1u) != 0;
}

bool membership_view_add(struct membership_view *view, uint32_t pos)
{
    if (pos >= view->positions || membership_view_is_live(view, pos)) {
        return false;
    }
    view->words[pos / 64u] |= UINT64_C(1) << (pos % 64u);
    fenwick_add(view, pos / 64u, 1);
    view->live++;
    return true;
}

bool membership_view_remove(struct membership_view *view, uint32_t pos)
{
    if (!membership_view_is_live(view, pos)) {
        return false;
    }
    view->words[pos / 64u] &= ~(UINT64_C(1) << (pos % 64u));
    fenwick_add(view, pos / 64u, -1);
    view->live--;
    return true;
}

uint32_t membership_view_rank(const struct membership_view *view, uint32_t pos)
{
    if (pos >= view->positions) {
        return view->live;
    }
    uint32_t word = pos / 64u;
    uint64_t below = view->words[word] & ((UINT64_C(1) << (pos % 64u)) - 1u);
    return fenwick_prefix(view, word) + (uint32_t)__builtin_popcountll(below);
}

uint32_t membership_view_select(const struct membership_view *view, uint32_t k)
{
    if (k >= view->live) {
        return MEMBERSHIP_POS_NONE;
    }
    uint32_t step = 1;
    while ((step << 1) <= view->word_count) {
        step <<= 1;
    }
    uint32_t index = 0; /* Fenwick index: words [0, index) hold <= k */
    uint32_t remaining = k;
    for (; step > 0; step >>= 1) {
        uint32_t next = index + step;
        if (next <= view->word_count && view->fenwick[next - 1u] <= remaining) {
            index = next;
            remaining -= view->fenwick[next - 1u];
        }
    }
    return index * 64u + select_in_word(view->words[index], remaining);
}

uint32_t membership_view_next_live(const struct membership_view *view, uint32_t pos)
{
    if (pos >= view->positions) {
        return MEMBERSHIP_POS_NONE;
    }
    uint32_t word = pos / 64u;
    uint64_t bits = view->words[word] & ~((UINT64_C(1) << (pos % 64u)) - 1u);
    while (bits == 0) {
        word++;
        if (word >= view->word_count) {
            return MEMBERSHIP_POS_NONE;
        }
        bits = view->words[word];
    }
    return word * 64u + (uint32_t)__builtin_ctzll(bits);
}

uint32_t membership_view_first_live_in(const struct membership_view *view, uint32_t from,
                                       uint32_t to)
{
    uint64_t bits = view->words[from / 64u] & ~((UINT64_C(1) << (from % 64u)) - 1u);
    uint32_t found = bits != 0 ? (from / 64u) * 64u + (uint32_t)__builtin_ctzll(bits)
                               : membership_view_select(view, membership_view_rank(view, from));
    return found < to ? found : MEMBERSHIP_POS_NONE;
}

uint32_t membership_view_next_dead(const struct membership_view *view, uint32_t pos)
{
    if (pos >= view->positions) {
        return view->positions;
    }
    uint32_t word = pos / 64u;
    uint64_t bits = ~view->words[word] & ~((UINT64_C(1) << (pos % 64u)) - 1u);
    while (bits == 0) {
        word++;
        if (word >= view->word_count) {
            return view->positions;
        }
        bits = ~view->words[word];
    }
    uint32_t found = word * 64u + (uint32_t)__builtin_ctzll(bits);
    return found < view->positions ? found : view->positions;
}

void membership_view_copy(struct membership_view *to, const struct membership_view *from)
{
    to->positions = from->positions;
    to->word_count = from->word_count;
    to->live = from->live;
    memcpy(to->words, from->words, sizeof(uint64_t) * from->word_count);
    memcpy(to->fenwick, from->fenwick, sizeof(uint32_t) * from->word_count);
    for (uint32_t w = from->word_count; w < MEMBERSHIP_VIEW_WORDS; w++) {
        to->words[w] = 0;
        to->fenwick[w] = 0;
    }
}
