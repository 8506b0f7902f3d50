/* The one chaos generator (tools/chaos.h), driven as the tools drive it
 * (undos taken when due, a new fault drawn between): the same seed gives
 * the same faults; the budgets (max(1, members/8) down, two cables, one
 * partition) always hold, checked on a model of the test's own; only
 * possible faults come out; with a fixed hold every fault is undone, with
 * drawn holds every hang, cut and partition; the kinds mask is respected;
 * every item prints to a line that the one parser reads back to the same
 * item and that passes the torus checks. */
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tools/chaos.h"

#define US 1000ull
#define STEPS 3000

static char error[320];

/* What the test sees of the torus, from the faults alone. */
struct world {
    uint8_t state[64]; /* enum chaos_node */
    uint32_t members, down, cables;
    bool partitioned;
};

static unsigned cables_between(const struct torus_geometry *g, uint32_t a, uint32_t b)
{
    unsigned n = 0;
    for (unsigned l = 0; l < torus_geometry_link_count(g); l++)
        n += torus_geometry_neighbour(g, a, l) == b;
    return n;
}

/* Applies item, checking that it is possible; kinds_seen gets its bit. */
static void apply(struct world *w, const struct torus_geometry *g, const struct fault *item)
{
    uint8_t *s = &w->state[item->node];
    switch (item->kind) {
    case FAULT_KILL:
    case FAULT_HANG:
        CHECK(*s == CHAOS_UP);
        *s = item->kind == FAULT_KILL ? CHAOS_DEAD : CHAOS_HUNG;
        w->down++;
        break;
    case FAULT_RESTART:
        CHECK(*s == CHAOS_DEAD);
        *s = CHAOS_UP;
        w->down--;
        break;
    case FAULT_RESUME:
        CHECK(*s == CHAOS_HUNG);
        *s = CHAOS_UP;
        w->down--;
        break;
    case FAULT_REBOOT:
        CHECK(*s == CHAOS_UP && item->node < 4); /* the "QEMU" nodes */
        break;
    case FAULT_JOIN:
        CHECK(*s == CHAOS_SPARE);
        *s = CHAOS_UP;
        w->members++;
        break;
    case FAULT_LINK_OFF:
        CHECK(item->link == FAULT_LINK_PAIR && cables_between(g, item->node, item->other) > 0);
        w->cables += cables_between(g, item->node, item->other);
        break;
    case FAULT_LINK_ON:
        w->cables -= cables_between(g, item->node, item->other);
        break;
    case FAULT_PARTITION:
        CHECK(!w->partitioned);
        w->partitioned = true;
        break;
    case FAULT_HEAL:
        CHECK(w->partitioned);
        w->partitioned = false;
        break;
    case FAULT_SUSPECT:
        CHECK(item->node != item->other && *s == CHAOS_UP);
        break;
    default:
        CHECK(false);
    }
    uint32_t budget = w->members < 4 ? 0 : (w->members / 8u > 0 ? w->members / 8u : 1u);
    CHECK(w->down <= budget);
    CHECK(w->cables <= CHAOS_MAX_CUT_CABLES);
}

/* The item as a line parses back to itself and passes the torus checks. */
static void check_line(const struct fault *item, const struct torus_geometry *g)
{
    char text[FAULT_TEXT_MAX];
    fault_format(item, text, sizeof text);
    struct fault_script script = {0};
    CHECK(fault_script_parse(text, &script, error, sizeof error));
    CHECK(script.count == 1 && fault_equal(&script.items[0], item));
    CHECK(fault_script_check_torus(&script, g, error, sizeof error));
    fault_script_free(&script);
}

/*
 * Runs a campaign of STEPS draws 40 us apart; returns the faults and undos
 * as text (trace), the kinds seen (bit per fault kind) and the end state.
 */
static unsigned campaign(const struct torus_geometry *g, uint32_t members, uint64_t seed,
                         unsigned kinds, uint64_t hold_ns, char *trace, size_t capacity,
                         struct world *w)
{
    static const bool qemu[64] = {true, true, true, true};
    struct chaos_config config = {.geometry = g, .members = members, .seed = seed,
                                  .kinds = kinds, .hold_ns = hold_ns, .unit_ns = 10 * US,
                                  .rebootable = qemu};
    struct chaos chaos;
    CHECK(chaos_init(&chaos, &config, error, sizeof error));
    memset(w, 0, sizeof *w);
    for (uint32_t id = 0; id < g->node_count; id++)
        w->state[id] = id < members ? CHAOS_UP : CHAOS_SPARE;
    w->members = members;
    unsigned seen = 0;
    size_t used = 0;
    trace[0] = '\0';
    for (unsigned step = 0; step <= STEPS; step++) {
        uint64_t now = step < STEPS ? (step + 1) * 40 * US : UINT64_MAX;
        struct fault item, undo;
        while (chaos_take_undo(&chaos, now, &item)) {
            CHECK(item.time_ns <= now);
            apply(w, g, &item);
            check_line(&item, g);
        }
        if (step == STEPS || !chaos_draw(&chaos, now, &item, &undo))
            continue;
        CHECK((kinds & CHAOS_KIND(item.kind)) != 0 && item.time_ns == now);
        CHECK(undo.kind == 0 || undo.time_ns > now);
        CHECK(hold_ns == 0 || undo.kind == 0 || undo.time_ns == now + hold_ns);
        seen |= CHAOS_KIND(item.kind);
        apply(w, g, &item);
        check_line(&item, g);
        char text[FAULT_TEXT_MAX];
        fault_format(&item, text, sizeof text);
        if (used + FAULT_TEXT_MAX + 2 < capacity)
            used += (size_t)snprintf(trace + used, capacity - used, "%s\n", text);
    }
    CHECK(chaos_next_undo_ns(&chaos) == UINT64_MAX);
    chaos_free(&chaos);
    return seen;
}

static struct torus_geometry torus(uint32_t x, uint32_t y, uint32_t z)
{
    uint32_t size[3] = {x, y, z};
    bool mesh[3] = {false, false, false};
    struct torus_geometry g;
    CHECK(torus_geometry_init(&g, 3, size, mesh, NULL) == TORUS_GEOMETRY_OK);
    return g;
}

#define LAUNCHER_KINDS                                                                       \
    (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_HANG) | CHAOS_KIND(FAULT_LINK_OFF) |          \
     CHAOS_KIND(FAULT_REBOOT) | CHAOS_KIND(FAULT_JOIN))
#define SIM_KINDS                                                                            \
    (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_RESTART) | CHAOS_KIND(FAULT_HANG) |           \
     CHAOS_KIND(FAULT_SUSPECT) | CHAOS_KIND(FAULT_PARTITION) | CHAOS_KIND(FAULT_LINK_OFF))

static char first[1 << 17], second[1 << 17];

static void test_fixed_hold(void)
{
    struct torus_geometry g = torus(4, 4, 4);
    struct world w;
    /* 60 members, 4 spares: 7 down at most. */
    unsigned seen = campaign(&g, 60, 5, LAUNCHER_KINDS, 200 * US, first, sizeof first, &w);
    CHECK(seen == LAUNCHER_KINDS);
    campaign(&g, 60, 5, LAUNCHER_KINDS, 200 * US, second, sizeof second, &w);
    CHECK(strcmp(first, second) == 0);
    campaign(&g, 60, 6, LAUNCHER_KINDS, 200 * US, second, sizeof second, &w);
    CHECK(strcmp(first, second) != 0);
    /* Every fault undone: the torus ends whole (the spares joined for good). */
    CHECK(w.down == 0 && w.cables == 0 && !w.partitioned && w.members == 64);
    for (uint32_t id = 0; id < 64; id++)
        CHECK(w.state[id] == CHAOS_UP);
    /* One kind at a time: only that kind (and its undo) comes out. */
    const enum fault_kind single[] = {FAULT_KILL, FAULT_HANG, FAULT_LINK_OFF, FAULT_REBOOT,
                                      FAULT_SUSPECT, FAULT_PARTITION};
    for (size_t k = 0; k < sizeof single / sizeof single[0]; k++) {
        CHECK(campaign(&g, 64, 9, CHAOS_KIND(single[k]), 300 * US, first, sizeof first, &w) ==
              CHAOS_KIND(single[k]));
        CHECK(w.down == 0 && w.cables == 0 && !w.partitioned);
    }
    /* A ring of two: neighbours share two cables, so one cut pair fills the budget. */
    struct torus_geometry small = torus(2, 2, 2);
    campaign(&small, 7, 11, LAUNCHER_KINDS, 100 * US, first, sizeof first, &w);
    CHECK(w.down == 0 && w.cables == 0 && w.members == 8);
}

static void test_drawn_holds(void)
{
    struct torus_geometry g = torus(4, 4, 4);
    struct world w;
    CHECK(campaign(&g, 64, 1, SIM_KINDS, 0, first, sizeof first, &w) == SIM_KINDS);
    campaign(&g, 64, 1, SIM_KINDS, 0, second, sizeof second, &w);
    CHECK(strcmp(first, second) == 0);
    CHECK_CONTAINS(first, "partition ");
    /* Hangs, cuts and partitions undone; the dead may stay dead (none hung). */
    CHECK(w.cables == 0 && !w.partitioned);
    for (uint32_t id = 0; id < 64; id++)
        CHECK(w.state[id] != CHAOS_HUNG);
}

static void test_refused(void)
{
    struct torus_geometry g = torus(2, 2, 2);
    struct chaos chaos;
    struct chaos_config config = {.geometry = &g, .members = 8, .seed = 1,
                                  .kinds = CHAOS_KIND(FAULT_RESTART), .hold_ns = 1000};
    CHECK(!chaos_init(&chaos, &config, error, sizeof error));
    CHECK_CONTAINS(error, "restart");
    config.kinds = 0;
    CHECK(!chaos_init(&chaos, &config, error, sizeof error));
    config.kinds = CHAOS_KIND(FAULT_HEAL);
    CHECK(!chaos_init(&chaos, &config, error, sizeof error));
    struct torus_geometry one = torus(1, 1, 1);
    config.geometry = &one;
    config.kinds = CHAOS_KIND(FAULT_KILL);
    CHECK(!chaos_init(&chaos, &config, error, sizeof error));
    CHECK_CONTAINS(error, "two nodes");
}

int main(void)
{
    test_fixed_hold();
    test_drawn_holds();
    test_refused();
    return check_report("tools.chaos");
}
