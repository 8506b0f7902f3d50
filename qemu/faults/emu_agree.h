/*
 * The agreement check after a fault settles: every live node answers the
 * console command `view` (event=view-state epoch= stable_epoch= root= live=
 * digest= member= joining=), and the answers must show one view:
 *   - every node expected in the view answered, is a member, not joining;
 *   - every member answered the same epoch, digest, root and live count;
 *   - no node expected out claims to be a member;
 *   - that view is the expected one: its digest, live count and root are
 *     those membership computes for the expected member set (emu_model.h).
 * Pure: the launcher collects the answers, this judges them.
 */
#ifndef QEMU_FAULTS_EMU_AGREE_H
#define QEMU_FAULTS_EMU_AGREE_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu/faults/emu_model.h"
#include "tools/event_line.h"

struct emu_view_answer {
    bool asked;    /* the node was running and was sent `view` */
    bool answered;
    uint64_t epoch;
    uint64_t stable_epoch;
    uint64_t digest;
    int64_t root;  /* -1: no view */
    uint32_t live;
    bool member;
    bool joining;
};

/* "0x" and 1..16 hex digits, as nodes print digests. */
bool emu_agree_parse_hex(const char *text, uint64_t *out);

/* Fills answer from a view-state event line; false when a field is bad. */
bool emu_agree_parse_answer(const struct event_line *line, struct emu_view_answer *answer);

/* What a check looks for (emu_sides.h says when each applies). */
enum emu_agree_expect {
    EMU_AGREE_ONE_VIEW,  /* the expected nodes in one view, the rest out */
    EMU_AGREE_NO_VIEW,   /* no side keeps a majority: nobody holds a view */
    EMU_AGREE_EACH_SIDE, /* every side its own view (every-side policy) */
};

/* "one-view", "no-view", "each-side" (faults.jsonl's "expect"). */
const char *emu_agree_expect_name(enum emu_agree_expect expect);

struct emu_agreement {
    bool passed;
    enum emu_agree_expect expect;
    uint32_t sides; /* sides of running nodes holding a candidate (emu_sides.h) */
    char reason[256]; /* the first problem found, "" when passed */
    uint32_t asked, answered, members;
    uint64_t epoch, digest; /* of the members' view (of the first member) */
    uint32_t live;
    int64_t root;
    uint64_t expected_digest;
    uint32_t expected_live;
    uint32_t expected_root;
};

/*
 * Judges answers[0..count) against the expected member set (expected[id])
 * and its view (from emu_model_tree).
 */
void emu_agree_evaluate(const struct emu_view_answer *answers, uint32_t count,
                        const bool *expected, const struct emu_model_tree *expected_view,
                        struct emu_agreement *out);

#endif /* QEMU_FAULTS_EMU_AGREE_H */
