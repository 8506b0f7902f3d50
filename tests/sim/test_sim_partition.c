/*
 * A partitioned event says how many members of the last view are on the
 * node's side (side_live), not the size of the whole view it keeps as a
 * contact list: cut the minority off and every node of it must report the
 * minority's size, beside the reference view's (ref_live).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/sim/sim_case.h"

static void check_side(const char *dims, unsigned radix, const char *cut, uint32_t side,
                       uint32_t nodes)
{
    char inject[64];
    snprintf(inject, sizeof inject, "partition %s at {U*10}", cut);
    struct sim_case c = {
        .dims = dims,
        .radix = radix,
        .layout = MEMBERSHIP_LAYOUT_RADIX,
        .policy = MEMBERSHIP_POLICY_PRIMARY,
        .heartbeats = true,
        .link_detect_ns = UINT64_MAX,
        .inject = inject,
        .events = true,
    };
    FILE *out = tmpfile();
    CHECK(out != NULL);
    if (out == NULL)
        return;
    struct sim_result r;
    sim_case_run(&c, &r, out);
    CHECKF(r.ran && r.ok, "%s %s: %s", dims, cut, r.stats.violation_text);
    rewind(out);
    char line[512];
    uint32_t events = 0;
    while (fgets(line, sizeof line, out) != NULL) {
        if (strstr(line, " event=partitioned ") == NULL)
            continue;
        events++;
        const char *side_text = strstr(line, " side_live=");
        const char *ref_text = strstr(line, " ref_live=");
        CHECKF(side_text != NULL && ref_text != NULL, "%s", line);
        if (side_text == NULL || ref_text == NULL)
            continue;
        unsigned long side_live = strtoul(side_text + 11, NULL, 10);
        unsigned long ref_live = strtoul(ref_text + 10, NULL, 10);
        CHECKF(side_live == side && ref_live == nodes,
               "%s %s: side_live=%lu ref_live=%lu, expected %" PRIu32 " and %" PRIu32 ": %s",
               dims, cut, side_live, ref_live, side, nodes, line);
    }
    /* Every node of the minority drops its view, each with one event. */
    CHECKF(events == side && r.stats.partitioned == side,
           "%s %s: %" PRIu32 " partitioned lines, %" PRIu32 " events, expected %" PRIu32, dims,
           cut, events, r.stats.partitioned, side);
    fclose(out);
    sim_case_free(&r);
}

int main(void)
{
    check_side("4x4", 4, "id<4", 4, 16);
    check_side("8x8", 4, "x<3", 24, 64);
    check_side("4x4x4", 8, "z<1", 16, 64);
    return check_report("sim.partition_side");
}
