/*
 * The state machine through its public API, for what the scripts
 * (the scripts in scripts/) cannot say: config validation, context size, the shape of
 * the decentralised initial tree, suspicions the machine refuses, and the
 * detector's timeouts adapting to observed heartbeat gaps.
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
    base_config(&c, 0, N);
    c.timeout_ceiling = 0;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_TIMEOUT);
    c.timeout_ceiling = MEMBERSHIP_TIMEOUT_CEILING_MAX + 1u;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_BAD_TIMEOUT);
    c.timeout_ceiling = 1;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_OK);
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

/* A HEARTBEAT from `from` in m's view, received at now_ns. */
static void heartbeat(struct membership *m, uint32_t from, uint64_t now_ns)
{
    static struct membership_outbox out;
    uint8_t payload[64];
    struct membership_writer w;
    membership_writer_init(&w, payload, sizeof payload);
    struct membership_header header = {
        .type = MEMBERSHIP_MSG_HEARTBEAT,
        .flags = MEMBERSHIP_FLAG_HAS_VIEW,
        .sender = from,
        .epoch = membership_epoch(m),
        .stable_epoch = membership_stable_epoch(m),
    };
    membership_put_header(&w, &header);
    membership_outbox_clear(&out);
    membership_receive(m, payload, w.length, now_ns, &out);
}

/*
 * Issue 20: a watched member's heartbeat gaps set its silence timeout.
 * Node 1 of a 4x4x4 torus watches its torus neighbour 0 (heartbeat 10 ms,
 * timeout 30 ms, ceiling 4x).  Steady 10 ms gaps keep the configured
 * timeout; gaps alternating 2 and 28 ms (a noisy member, a little late on
 * average) raise it, up to the ceiling and never past it; steady gaps
 * again bring it back down, never below the configured timeout.
 */
static void heartbeat_gaps_adapt(void)
{
    static struct membership m;
    struct membership_config c;
    base_config(&c, 1, N);
    membership_config_timeouts_ms(&c, 10, 30);
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_OK);
    const uint64_t ms = 1000000u;
    const uint64_t floor_ns = 30u * ms;
    CHECK(membership_watch_timeout(&m, 0) == floor_ns);
    CHECK(membership_watch_timeout(&m, 1) == 0); /* not watched: ourselves */
    uint64_t now = 0;
    uint64_t lowest = UINT64_MAX;
    for (int i = 0; i < 50; i++) {
        now += 10u * ms;
        heartbeat(&m, 0, now);
        uint64_t t = membership_watch_timeout(&m, 0);
        lowest = t < lowest ? t : lowest;
    }
    CHECK(lowest == floor_ns);
    CHECK(membership_watch_timeout(&m, 0) == floor_ns);
    uint64_t highest = 0;
    for (int i = 0; i < 50; i++) {
        now += (i % 2 == 0 ? 2u : 28u) * ms;
        heartbeat(&m, 0, now);
        uint64_t t = membership_watch_timeout(&m, 0);
        highest = t > highest ? t : highest;
        lowest = t < lowest ? t : lowest;
    }
    uint64_t noisy = membership_watch_timeout(&m, 0);
    printf("heartbeat gaps: steady %llu ms, noisy %llu ms (highest %llu ms, ceiling %llu ms)\n",
           (unsigned long long)(floor_ns / ms), (unsigned long long)(noisy / ms),
           (unsigned long long)(highest / ms), (unsigned long long)(4u * floor_ns / ms));
    CHECK(noisy > 2u * floor_ns);         /* raised well above the floor */
    CHECK(highest <= 4u * floor_ns);      /* never past the ceiling */
    CHECK(lowest >= floor_ns);            /* never below the floor */
    for (int i = 0; i < 100; i++) {
        now += 10u * ms;
        heartbeat(&m, 0, now);
        CHECK(membership_watch_timeout(&m, 0) >= floor_ns);
    }
    CHECK(membership_watch_timeout(&m, 0) < floor_ns + 5u * ms); /* steady again: back down */
    /* Ceiling 1: no adaptation at all. */
    c.timeout_ceiling = 1;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_OK);
    for (int i = 0; i < 50; i++) {
        now += (i % 2 == 0 ? 2u : 28u) * ms;
        heartbeat(&m, 0, now);
        CHECK(membership_watch_timeout(&m, 0) == floor_ns);
    }
    CHECK(membership_local_health_x16(&m) == 16u);
}

/*
 * A node late itself probes a silent watched member before accusing it
 * (issue 20).  When the probe table was full it asked nothing, yet marked
 * the member suspected, which only the member speaking clears: a dead one
 * was never reported.  Node 1 of a 4x4x4 torus, its timer always 15 ms
 * late (ticks 25 ms apart, heartbeat 10 ms), fills its probe table with
 * the application's suspicions of 16 members it does not watch (answered
 * by nobody, a 1 s probe timeout), while its watched members (tree and
 * torus neighbours) stay silent: once the table empties each of them must
 * be probed and reported.
 */
static void silence_with_probes_full(void)
{
    static struct membership m;
    static struct membership_outbox out;
    struct membership_config c;
    base_config(&c, 1, N);
    membership_config_timeouts_ms(&c, 10, 30);
    const uint64_t ms = 1000000u;
    c.probe_timeout_ns = 1000u * ms;
    CHECK(membership_init(&m, &c) == MEMBERSHIP_INIT_OK);
    bool watched[N] = {false};
    for (uint32_t id = 0; id < N; id++)
        watched[id] = membership_watch_timeout(&m, id) != 0;
    uint32_t suspected = 0;
    for (uint32_t id = 2; id < N && suspected < 16; id++) {
        if (watched[id])
            continue;
        membership_outbox_clear(&out);
        CHECK(membership_suspect(&m, id, 1, &out));
        suspected++;
    }
    CHECK(suspected == 16);
    bool reported[N] = {false};
    for (uint64_t now = 25u * ms; now < 4000u * ms; now += 25u * ms) {
        membership_outbox_clear(&out);
        membership_tick(&m, now, &out);
        for (uint32_t i = 0; i < out.event_count; i++) {
            const struct membership_event *e = &out.events[i];
            if (e->type == MEMBERSHIP_EVENT_FAILURE_DETECTED && e->u.failure.who < N)
                reported[e->u.failure.who] = true;
        }
    }
    CHECK(membership_local_health_x16(&m) > 16u); /* late all along */
    uint32_t watched_count = 0, watched_reported = 0;
    for (uint32_t id = 0; id < N; id++) {
        watched_count += watched[id] ? 1u : 0u;
        watched_reported += watched[id] && reported[id] ? 1u : 0u;
    }
    printf("silence with the probe table full: %u of %u watched members reported\n",
           watched_reported, watched_count);
    CHECK(watched_count > 0 && watched_reported == watched_count);
}

int main(void)
{
    config_validation();
    initial_tree();
    suspicions_refused();
    heartbeat_gaps_adapt();
    silence_with_probes_full();
    check_failures += (int)h.failures;
    return check_report("membership.machine");
}
