/* Chaos in the launcher: the spec parser, and a campaign driven in virtual
 * time (the one generator, tools/chaos.h, paced as the launcher paces it)
 * is reproducible from its seed, only ever asks for possible actions,
 * undoes every fault, keeps its limits and ends on a whole torus. */
#include <string.h>

#include "qemu/faults/emu_chaos.h"
#include "tests/check.h"

#define NS_PER_MS 1000000ull

static char error[320];

static void test_spec(void)
{
    struct emu_chaos_spec spec;
    CHECK(emu_chaos_parse("seed=9,rate=0.5,kinds=kill,hang,link,reboot,join,count=30,"
                          "duration=2m,hold=750ms",
                          &spec, error, sizeof error));
    CHECK(spec.seed == 9 && spec.rate == 0.5 && spec.count == 30);
    CHECK(spec.kinds == (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG) |
                         CHAOS_KIND(FAULT_LINK_OFF) | CHAOS_KIND(FAULT_REBOOT) |
                         CHAOS_KIND(FAULT_JOIN)) &&
          spec.duration_ns == 120000 * NS_PER_MS &&
          spec.hold_ns == 750 * NS_PER_MS);
    CHECK(emu_chaos_parse("", &spec, error, sizeof error));
    CHECK(spec.seed == 1 && spec.rate == 1.0 && spec.count == 0);
    CHECK(spec.kinds == (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG) |
                         CHAOS_KIND(FAULT_LINK_OFF) | CHAOS_KIND(FAULT_REBOOT)));
    CHECK(emu_chaos_parse("kinds=link", &spec, error, sizeof error) &&
          spec.kinds == CHAOS_KIND(FAULT_LINK_OFF));
    struct {
        const char *text, *part;
    } bad[] = {
        {"seed=1,rat=2", "unknown key 'rat' (expected seed, rate, kinds, count, duration, hold)"},
        {"seed=x", "seed='x' is invalid (expected a whole number)"},
        {"rate=0", "rate='0' is invalid"},
        {"rate=1e3", "rate='1e3' is invalid"},
        {"kinds=kill,frob", "'frob' is not KEY=VALUE nor a fault kind"},
        {"kinds=melt", "kinds='melt' is invalid (expected kill, hang, link, reboot or join)"},
        {"seed=1,kill", "'kill' is not KEY=VALUE (expected"},
        {"count=0", "count='0' is invalid"},
        {"hold=1", "hold='1' is invalid"},
        {"seed=1,seed=2", "'seed' is given twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error[0] = '\0';
        CHECK(!emu_chaos_parse(bad[i].text, &spec, error, sizeof error));
        CHECK_CONTAINS(error, bad[i].part);
    }
}

/* Runs a campaign on an 8-node torus (1 spare), the torus settling at once. */
static unsigned campaign(uint64_t seed, unsigned kinds, char *trace, size_t capacity)
{
    uint32_t size[3] = {2, 2, 2};
    bool mesh[3] = {false, false, false};
    struct torus_geometry geometry;
    CHECK(torus_geometry_init(&geometry, 3, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    bool qemu[8] = {true, true, true, true, false, false, false, false};
    struct emu_inject_world world;
    CHECK(emu_inject_world_init(&world, &geometry, 1, qemu));
    struct emu_chaos_spec spec;
    CHECK(emu_chaos_parse("rate=2,count=40", &spec, error, sizeof error));
    spec.seed = seed;
    spec.kinds = kinds;
    static struct emu_chaos chaos;
    CHECK(emu_chaos_init(&chaos, &spec, &geometry, 1, qemu, 0, 1000 * NS_PER_MS, error,
                         sizeof error));
    unsigned actions = 0;
    size_t used = 0;
    trace[0] = '\0';
    uint64_t now = 0;
    for (unsigned step = 0; step < 100000 && !emu_chaos_done(&chaos, now); step++) {
        struct emu_action action;
        if (emu_chaos_next(&chaos, now, &action)) {
            actions++;
            /* Every action is possible in the world as it was. */
            char why[200];
            CHECK(emu_inject_apply(&world, &action, why, sizeof why));
            uint32_t down = 0, cut = 0;
            for (uint32_t r = 0; r < 8; r++) {
                down += world.state[r] == EMU_INJECT_KILLED || world.state[r] == EMU_INJECT_HUNG;
                cut += (uint32_t)__builtin_popcount(world.cut[r]);
            }
            CHECK(down <= 1 && cut / 2 <= 2);
            CHECK(action.kind != EMU_ACTION_REBOOT || qemu[action.node]);
            if (used + 40 < capacity)
                used += (size_t)snprintf(trace + used, capacity - used, "%s|", action.text);
            continue;
        }
        uint64_t due = emu_chaos_next_due(&chaos, now);
        CHECK(due > now);
        now = due == UINT64_MAX ? now + 1000 * NS_PER_MS : due;
    }
    CHECK(emu_chaos_done(&chaos, now));
    /* Ends whole: nothing killed or hung, no cable cut. */
    for (uint32_t r = 0; r < 7; r++)
        CHECK(world.state[r] == EMU_INJECT_RUNNING && world.cut[r] == 0);
    emu_chaos_free(&chaos);
    emu_inject_world_free(&world);
    return actions;
}

static void test_campaign(void)
{
    static char first[8192], second[8192], other[8192];
    unsigned all = CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG) | CHAOS_KIND(FAULT_LINK_OFF) |
                   CHAOS_KIND(FAULT_REBOOT) | CHAOS_KIND(FAULT_JOIN);
    unsigned n = campaign(5, all, first, sizeof first);
    CHECK(n >= 40); /* 40 new faults and their undos */
    CHECK(campaign(5, all, second, sizeof second) == n);
    CHECK(strcmp(first, second) == 0);
    campaign(6, all, other, sizeof other);
    CHECK(strcmp(first, other) != 0);
    CHECK_CONTAINS(first, "(chaos undo)");
    CHECK(strstr(first, "kill") != NULL && strstr(first, "restart") != NULL);
    CHECK(strstr(first, "hang") != NULL && strstr(first, "resume") != NULL);
    CHECK(strstr(first, "link") != NULL && strstr(first, "reboot") != NULL);
    /* Links only: every cut is mended (neighbours on a 2x2x2 torus share two
     * cables: two actions to cut, two to mend). */
    unsigned links = campaign(7, CHAOS_KIND(FAULT_LINK_OFF), other, sizeof other);
    CHECK(links == 160);
}

int main(void)
{
    test_spec();
    test_campaign();
    return check_report("emu.chaos");
}
