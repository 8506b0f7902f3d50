/*
 * The state machine through its public API, for what the scripts
 * (the scripts in scripts/) cannot say: config validation, context size, the shape of
 * the decentralised initial tree, and suspicions the machine refuses.
 * Failures, rounds, lost acks and joins over the network: the scripts.
 */
#include <stdint.h>
#include <string.h>

#include "membership/membership.h"
#include "tests/check.h"
#include "tests/membership/harness.h"

#define N 64u

static struct harness h;

static void base_config(struct membership_config *c, uint32_t id, uint32_t members)
{
    membership_config_defaults(c);
    uint32_t sizes[3] = {4, 4, 4};
    CHECK(torus_geometry_init(&c->geometry, 3, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    c->node_id = id;
    c->member_count = members;
    c->heartbeat_ns = 0;
}

static void config_validation(void)
{
    struct membership_config c;
    struct membership m;
    base_config(&c, 0, N);
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_OK);
    c.radix = 3;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_RADIX);
    c.radix = 32;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_RADIX);
    base_config(&c, N, N);
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_NODE);
    base_config(&c, 0, N + 1);
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_COUNT);
    base_config(&c, 0, N);
    c.layout = (enum membership_layout_kind)7;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_LAYOUT);
    base_config(&c, 0, N);
    c.policy = (enum membership_policy)9;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_POLICY);
    base_config(&c, 0, N);
    c.ack_timeout_ns = 0;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_TIMEOUT);
    base_config(&c, 0, N);
    c.heartbeat_ns = 10;
    c.heartbeat_timeout_ns = 10;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_TIMEOUT);
    CHECK(strcmp(membership_init_status_text(MEMBERSHIP_INIT_BAD_RADIX), "?") != 0);
    /* Static state per node at this build's maximum: well under 100 KiB. */
    printf("context: %zu bytes at CONFIG_MAX_NODES=%u\n", membership_context_bytes(),
           (unsigned)CONFIG_MAX_NODES);
    CHECK(CONFIG_MAX_NODES > 65536 || membership_context_bytes() < 100u * 1024u);
}

static void start(uint32_t members)
{
    struct harness_setup setup;
    harness_setup_defaults(&setup);
    uint32_t sizes[3] = {4, 4, 4};
    CHECK(torus_geometry_init(&setup.geometry, 3, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    setup.members = members;
    setup.heartbeat_off = true;
    CHECK(harness_start(&h, &setup));
}

/* Every node places itself in the same tree: each child's parent is us, one level down. */
static void initial_tree(void)
{
    start(N);
    for (uint32_t id = 0; id < N; id++) {
        uint32_t parent;
        uint32_t children[CONFIG_TREE_RADIX_MAX];
        uint32_t count;
        uint32_t depth;
        CHECK(membership_tree_of(&h.nodes[id], &parent, children, &count, &depth));
        for (uint32_t c = 0; c < count; c++) {
            uint32_t back;
            uint32_t grand[CONFIG_TREE_RADIX_MAX];
            uint32_t gc;
            uint32_t d;
            CHECK(membership_tree_of(&h.nodes[children[c]], &back, grand, &gc, &d));
            CHECK(back == id && d == depth + 1);
        }
    }
}

/* A node does not suspect itself, nor a node that is not a member. */
static void suspicions_refused(void)
{
    start(N - 1);
    CHECK(!membership_suspect(&h.nodes[6], 6, 1000, &h.out));
    CHECK(!membership_suspect(&h.nodes[0], N - 1, 1000, &h.out)); /* a spare */
    CHECK(h.out.message_count == 0 && h.out.event_count == 0);
}

int main(void)
{
    config_validation();
    initial_tree();
    suspicions_refused();
    check_failures += (int)h.failures;
    return check_report("membership.machine");
}
