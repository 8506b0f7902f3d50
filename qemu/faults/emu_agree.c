#include "qemu/faults/emu_agree.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool emu_agree_parse_hex(const char *text, uint64_t *out)
{
    if (text == NULL || strncmp(text, "0x", 2) != 0 || text[2] == '\0')
        return false;
    uint64_t value = 0;
    unsigned digits = 0;
    for (const char *c = text + 2; *c != '\0'; c++, digits++) {
        unsigned digit;
        if (*c >= '0' && *c <= '9')
            digit = (unsigned)(*c - '0');
        else if (*c >= 'a' && *c <= 'f')
            digit = (unsigned)(*c - 'a' + 10);
        else if (*c >= 'A' && *c <= 'F')
            digit = (unsigned)(*c - 'A' + 10);
        else
            return false;
        if (digits >= 16)
            return false;
        value = value << 4 | digit;
    }
    *out = value;
    return true;
}

bool emu_agree_parse_answer(const struct event_line *line, struct emu_view_answer *answer)
{
    uint64_t live = 0, member = 0, joining = 0;
    const char *root = event_line_get(line, "root");
    if (!event_line_get_u64(line, "epoch", &answer->epoch) ||
        !event_line_get_u64(line, "stable_epoch", &answer->stable_epoch) ||
        !event_line_get_u64(line, "live", &live) || live > UINT32_MAX ||
        !event_line_get_u64(line, "member", &member) || member > 1 ||
        !event_line_get_u64(line, "joining", &joining) || joining > 1 ||
        !emu_agree_parse_hex(event_line_get(line, "digest"), &answer->digest) || root == NULL)
        return false;
    if (strcmp(root, "-1") == 0) {
        answer->root = -1;
    } else {
        uint64_t value = 0;
        if (!event_line_get_u64(line, "root", &value) || value > UINT32_MAX)
            return false;
        answer->root = (int64_t)value;
    }
    answer->live = (uint32_t)live;
    answer->member = member != 0;
    answer->joining = joining != 0;
    answer->answered = true;
    return true;
}

const char *emu_agree_expect_name(enum emu_agree_expect expect)
{
    switch (expect) {
    case EMU_AGREE_ONE_VIEW:
        return "one-view";
    case EMU_AGREE_NO_VIEW:
        return "no-view";
    case EMU_AGREE_EACH_SIDE:
        return "each-side";
    }
    return "?";
}

__attribute__((format(printf, 2, 3))) static void fail(struct emu_agreement *out,
                                                       const char *format, ...);
static void fail(struct emu_agreement *out, const char *format, ...)
{
    if (!out->passed)
        return; /* keep the first problem */
    out->passed = false;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(out->reason, sizeof out->reason, format, arguments);
    va_end(arguments);
}

void emu_agree_evaluate(const struct emu_view_answer *answers, uint32_t count,
                        const bool *expected, const struct emu_model_tree *expected_view,
                        struct emu_agreement *out)
{
    memset(out, 0, sizeof *out);
    out->passed = true;
    out->expect = expected_view->live > 0 ? EMU_AGREE_ONE_VIEW : EMU_AGREE_NO_VIEW;
    out->sides = 1;
    out->root = -1;
    out->expected_digest = expected_view->digest;
    out->expected_live = expected_view->live;
    out->expected_root = expected_view->root;
    const struct emu_view_answer *first = NULL;
    uint32_t first_id = 0;
    for (uint32_t id = 0; id < count; id++) {
        const struct emu_view_answer *a = &answers[id];
        out->asked += a->asked;
        out->answered += a->answered;
        if (expected[id] && !a->asked)
            fail(out, "node %u is expected in the view but could not be asked (not running, "
                      "not ready or hung)",
                 (unsigned)id);
        else if (expected[id] && !a->answered)
            fail(out, "node %u is expected in the view but did not answer `view`",
                 (unsigned)id);
        if (!a->answered)
            continue;
        if (expected[id] && (!a->member || a->joining))
            fail(out, "node %u is expected in the view but says member=%d joining=%d",
                 (unsigned)id, a->member, a->joining);
        if (!a->member)
            continue;
        if (!expected[id] && expected_view->live == 0)
            fail(out, "node %u says it is a member (epoch %" PRIu64 ") but no view was "
                      "expected",
                 (unsigned)id, a->epoch);
        else if (!expected[id])
            fail(out, "node %u says it is a member (epoch %" PRIu64 ") but was expected out",
                 (unsigned)id, a->epoch);
        out->members++;
        if (first == NULL) {
            first = a;
            first_id = id;
            out->epoch = a->epoch;
            out->digest = a->digest;
            out->live = a->live;
            out->root = a->root;
        } else if (a->epoch != first->epoch || a->digest != first->digest ||
                   a->root != first->root || a->live != first->live) {
            fail(out,
                 "nodes %u and %u disagree: epoch %" PRIu64 " digest 0x%016" PRIx64
                 " root %" PRId64 " live %u against epoch %" PRIu64 " digest 0x%016" PRIx64
                 " root %" PRId64 " live %u",
                 (unsigned)first_id, (unsigned)id, first->epoch, first->digest, first->root,
                 (unsigned)first->live, a->epoch, a->digest, a->root, (unsigned)a->live);
        }
    }
    if (first == NULL) {
        if (expected_view->live > 0)
            fail(out, "no node holds a view (expected %u members)",
                 (unsigned)expected_view->live);
        return;
    }
    if (out->digest != expected_view->digest || out->live != expected_view->live)
        fail(out,
             "the view (epoch %" PRIu64 ", %u live, digest 0x%016" PRIx64
             ") is not the expected member set (%u live, digest 0x%016" PRIx64 ")",
             out->epoch, (unsigned)out->live, out->digest, (unsigned)expected_view->live,
             expected_view->digest);
    else if (out->root != (int64_t)expected_view->root)
        fail(out, "the view's root is %" PRId64 " (expected %u, first in layout order)",
             out->root, (unsigned)expected_view->root);
}
