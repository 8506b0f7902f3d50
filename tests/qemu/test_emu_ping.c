/* Ping results: completeness of the ordered pairs, and the statistics. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "qemu/launcher/emu_ping.h"
#include "tests/check.h"

static void test_quantiles(void)
{
    uint64_t values[10];
    for (unsigned i = 0; i < 10; i++)
        values[i] = i + 1;
    CHECK(emu_ping_quantile(values, 10, 0.5) == 5);
    CHECK(emu_ping_quantile(values, 10, 0.9) == 9);
    CHECK(emu_ping_quantile(values, 10, 1.0) == 10);
    CHECK(emu_ping_quantile(values, 10, 0.0) == 1);
    CHECK(emu_ping_quantile(values, 1, 0.9) == 1);
    CHECK(emu_ping_quantile(values, 0, 0.5) == 0);
}

static void test_pairs(void)
{
    uint32_t sizes[1] = {4};
    struct torus_geometry ring;
    CHECK(torus_geometry_init(&ring, 1, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    struct emu_ping ping;
    CHECK(emu_ping_init(&ping, 4));
    CHECK(emu_ping_missing(&ping, NULL, NULL, 0) == 12);
    for (uint32_t s = 0; s < 4; s++)
        for (uint32_t d = 0; d < 4; d++)
            if (s != d && !(s == 2 && d == 3) && !(s == 1 && d == 0) &&
                !(s == 3 && d == 1))
                emu_ping_record(&ping, &ring, s, d, torus_geometry_distance(&ring, s, d),
                                1000u * (s + d), true);
    emu_ping_record(&ping, &ring, 1, 0, 1, 0, false);
    emu_ping_record(&ping, &ring, 0, 1, 1, 5, true);   /* duplicate */
    emu_ping_record(&ping, &ring, 0, 0, 0, 5, true);   /* to itself */
    emu_ping_record(&ping, &ring, 9, 1, 1, 5, true);   /* out of range */
    emu_ping_record(&ping, &ring, 3, 1, 7, 5, true);   /* wrong hop count */
    CHECK(ping.duplicates == 1 && ping.bad_records == 2 && ping.failed == 1);
    CHECK(ping.hop_mismatch == 1);

    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    CHECK(emu_ping_missing(&ping, NULL, out, 8) == 2);
    fclose(out);
    CHECK_CONTAINS(text, "1->0 (failed)");
    CHECK_CONTAINS(text, "2->3 (no answer)");
    free(text);

    bool running[4] = {true, true, false, false}; /* only 0 and 1 count */
    CHECK(emu_ping_missing(&ping, running, NULL, 0) == 1);

    out = open_memstream(&text, &size);
    emu_ping_report(&ping, out);
    fclose(out);
    CHECK_CONTAINS(text, "hops");
    /* 4-ring: distance 1 for 8 pairs, 2 for 4; 2->3 missing, 1->0 failed,
     * 3->1 counted at its reported 7 hops. */
    CHECK_CONTAINS(text, "     1       6");
    CHECK_CONTAINS(text, "     2       3");
    CHECK_CONTAINS(text, "     7       1");
    free(text);
    emu_ping_free(&ping);
}

int main(void)
{
    test_quantiles();
    test_pairs();
    return check_report("emu.ping_stats");
}
