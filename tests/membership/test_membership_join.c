/*
 * Joining under load and detector hygiene, one node driven by hand on a
 * ring of eight (radix 4), through the public API and the test network
 * (harness.h; the test plays the other nodes, nothing is delivered):
 *  - a joiner that hears view holders' heartbeats many times per join
 *    timeout asks no faster than one contact per join timeout (hints used
 *    to trigger a request on every heartbeat: a rejoin storm at the root);
 *  - a joiner whose request reached the root and was not let in backs off:
 *    the wait doubles (seeded jitter of at most half), up to 8 timeouts
 *    (a whole pass of contacts without success adds a pause);
 *  - a suspect that talks to us again is forgotten, not reported again at
 *    its recheck (which removed a live member that had come back);
 *  - the search for the next root skips members that answer without a view
 *    (they would drop the report, one timeout each);
 *  - a joiner keeps the view holders it hears from (a few, the newest
 *    first) and asks them after the seeds, before its last view.
 */
#include <stdint.h>
#include <string.h>

#include "membership/membership.h"
#include "tests/check.h"
#include "tests/membership/harness.h"

#define N 8u
#define MS 1000000ull
#define DETECT (60 * MS)
#define JOIN_TIMEOUT (4 * DETECT) /* membership_config_timeouts_ms */

/* One node of the ring is driven; the test plays the others. */
static struct harness h;
static uint32_t self;

static void start_seeded(uint32_t id, uint32_t members, uint32_t heartbeat_ms,
                         const uint32_t *seeds, uint32_t seed_count)
{
    struct harness_setup setup;
    harness_setup_defaults(&setup);
    for (uint32_t i = 0; i < seed_count; i++) {
        setup.seeds[i] = seeds[i];
    }
    setup.seed_count = seed_count;
    uint32_t ring[1] = {N};
    CHECK(torus_geometry_init(&setup.geometry, 1, ring, NULL, NULL) == TORUS_GEOMETRY_OK);
    setup.members = members;
    setup.radix = 4;
    setup.heartbeat_ms = heartbeat_ms;
    setup.detect_ms = 60;
    CHECK(harness_start(&h, &setup));
    self = id;
}

static void start(uint32_t id, uint32_t members, uint32_t heartbeat_ms)
{
    start_seeded(id, members, heartbeat_ms, NULL, 0);
}

/* A message from `sender`, in the node's epoch, with or without a view. */
static void deliver(uint8_t type, uint32_t sender, bool has_view, const uint32_t *words,
                    unsigned word_count, uint64_t now)
{
    uint8_t buf[MEMBERSHIP_MAX_PAYLOAD];
    struct membership_writer w;
    harness_message_begin(&h, self, type, sender, has_view, &w, buf, sizeof buf);
    for (unsigned i = 0; i < word_count; i++) {
        membership_put_u32(&w, words[i]);
    }
    CHECK(!w.overflow);
    harness_advance(&h, now);
    harness_receive(&h, self, buf, w.length);
}

/* Messages of `type` the node sent (the first destination in *to), then forgets them. */
static unsigned take(uint8_t type, uint32_t *to)
{
    const struct harness_sent *first = harness_find_sent(&h, self, type, MEMBERSHIP_NONE);
    unsigned count = harness_count_sent(&h, self, type, MEMBERSHIP_NONE);
    if (first != NULL && to != NULL) {
        *to = first->to;
    }
    harness_window(&h);
    harness_drop_queue(&h);
    return count;
}

static void tick_until(uint64_t now)
{
    if (membership_next_deadline(&h.nodes[self]) <= now) {
        harness_tick(&h, self, now);
    }
}

/* Heartbeats from every member, every 10 ms: one request per join timeout. */
static void hints_are_paced(void)
{
    start(7, 7, 10);
    membership_start_join(&h.nodes[self], 0, &h.out);
    harness_collect(&h, self);
    uint32_t to = MEMBERSHIP_NONE;
    CHECK_EQ(take(MEMBERSHIP_MSG_NEW_NODE, &to), 1u);
    unsigned requests = 1;
    unsigned in_first_timeout = 1;
    for (uint64_t now = MS; now < 5 * JOIN_TIMEOUT; now += MS) {
        if (now % (10 * MS) == 0) {
            uint32_t sender = (uint32_t)((now / (10 * MS)) % 7u);
            deliver(MEMBERSHIP_MSG_HEARTBEAT, sender, true, NULL, 0, now);
        }
        tick_until(now);
        unsigned sent = take(MEMBERSHIP_MSG_NEW_NODE, NULL);
        requests += sent;
        if (now < JOIN_TIMEOUT) {
            in_first_timeout += sent;
        }
    }
    CHECKF(in_first_timeout == 1, "requests in the first join timeout: %u", in_first_timeout);
    CHECKF(requests <= 6, "requests in five join timeouts: %u", requests);
    CHECK(membership_is_joining(&h.nodes[self]));
}

/* Every contact redirects to root 0, which never answers: the waits double. */
static void backoff_after_the_root(void)
{
    start(7, 7, 0);
    uint64_t asked_root[8];
    unsigned asked = 0;
    membership_start_join(&h.nodes[self], 0, &h.out);
    harness_collect(&h, self);
    for (uint64_t now = 0; now < 80 * JOIN_TIMEOUT && asked < 8; now += MS) {
        tick_until(now);
        for (int rounds = 0; rounds < 8; rounds++) {
            uint32_t to = MEMBERSHIP_NONE;
            if (take(MEMBERSHIP_MSG_NEW_NODE, &to) == 0) {
                break;
            }
            if (to == 0) {
                asked_root[asked++] = now;
                break; /* the root keeps quiet */
            }
            uint32_t root = 0;
            deliver(MEMBERSHIP_MSG_JOIN_REDIRECT, to, true, &root, 1, now);
        }
    }
    CHECK_EQ(asked, 8u);
    /* At least doubling to the cap; at most a wait and a pass pause at the cap (1.5 x 8 each). */
    for (unsigned k = 1; k < asked; k++) {
        uint64_t gap = asked_root[k] - asked_root[k - 1];
        unsigned shift = k - 1 < 3 ? k - 1 : 3;
        uint64_t least = (uint64_t)JOIN_TIMEOUT << shift;
        CHECKF(gap >= least && gap <= 24 * JOIN_TIMEOUT, "gap %u: %llu ms, expected %llu..%llu ms",
               k, (unsigned long long)(gap / MS), (unsigned long long)(least / MS),
               (unsigned long long)(24 * JOIN_TIMEOUT / MS));
    }
}

/*
 * Seeds 1 and 2 are dead and the last view (0-6) is stale: only 0 (the
 * root) and 5 are up.  While the joiner waits on seed 1 it hears two view
 * holders, 4 then 5 (a heartbeat each: to a non-member they come at a
 * quarter of the rate); 4 dies before it is asked.  Both are kept, so
 * after the seeds it asks 5, a live member: three requests.  (One hint
 * slot kept 4 alone, and the joiner went on through the stale view.)
 */
static void heard_holders_are_kept(void)
{
    static const uint32_t seeds[] = {1, 2};
    start_seeded(7, 7, 0, seeds, 2);
    membership_start_join(&h.nodes[self], 0, &h.out);
    harness_collect(&h, self);
    uint32_t to = MEMBERSHIP_NONE;
    CHECK_EQ(take(MEMBERSHIP_MSG_NEW_NODE, &to), 1u);
    CHECK_EQ(to, 1u);
    deliver(MEMBERSHIP_MSG_HEARTBEAT, 4, true, NULL, 0, MS);
    deliver(MEMBERSHIP_MSG_HEARTBEAT, 5, true, NULL, 0, 2 * MS);
    take(MEMBERSHIP_MSG_NEW_NODE, NULL);
    unsigned requests = 1;
    uint32_t asked[16] = {1};
    for (uint64_t now = 3 * MS; now < 40 * JOIN_TIMEOUT && requests < 16; now += MS) {
        tick_until(now);
        if (take(MEMBERSHIP_MSG_NEW_NODE, &to) == 0) {
            continue; /* nobody answers: dead */
        }
        asked[requests++] = to;
        if (to == 0 || to == 5) {
            break;
        }
    }
    CHECKF(requests == 3 && asked[1] == 2 && asked[2] == 5,
           "%u requests to reach a live member: %u %u %u %u ...", requests, asked[0], asked[1],
           asked[2], asked[3]);
}

/* Node 3 suspects its ring neighbour 4, the root acks; 4 talks again. */
static void suspect_that_talks_is_forgotten(void)
{
    start(3, N, 10);
    uint64_t now = 0;
    harness_tick(&h, self, now);
    take(MEMBERSHIP_MSG_HEARTBEAT, NULL);
    uint32_t sequence = 0;
    uint64_t reported_at = 0;
    for (now = MS; now < 10 * DETECT && reported_at == 0; now += MS) {
        if (now % (10 * MS) == 0) {
            for (uint32_t id = 0; id < N; id++) {
                if (id != 3 && id != 4) {
                    deliver(MEMBERSHIP_MSG_HEARTBEAT, id, true, NULL, 0, now);
                }
            }
        }
        tick_until(now);
        for (uint32_t i = 0; i < h.sent_count; i++) {
            const struct harness_sent *sent = &h.sent[i];
            if (sent->type == MEMBERSHIP_MSG_NODE_FAILURE && sent->to == 0) {
                const struct harness_packet *p = harness_payload(&h, sent);
                struct membership_msg msg;
                CHECK(membership_decode(p->bytes, p->length, N, &msg) == MEMBERSHIP_DECODE_OK);
                CHECK(msg.body.report.count == 1 && membership_msg_report_id(&msg, 0) == 4);
                sequence = msg.body.report.sequence;
                reported_at = now;
            }
        }
        take(MEMBERSHIP_MSG_NODE_FAILURE, NULL);
    }
    CHECK(reported_at != 0);
    deliver(MEMBERSHIP_MSG_FAILURE_DET_ACK, 0, true, &sequence, 1, now);
    take(MEMBERSHIP_MSG_NODE_FAILURE, NULL);
    /* 4 is back (a hang that ended); the root never removed it. */
    unsigned again = 0;
    for (; now < reported_at + 40 * DETECT; now += MS) {
        if (now % (10 * MS) == 0) {
            for (uint32_t id = 0; id < N; id++) {
                if (id != 3) {
                    deliver(MEMBERSHIP_MSG_HEARTBEAT, id, true, NULL, 0, now);
                }
            }
        }
        tick_until(now);
        again += take(MEMBERSHIP_MSG_NODE_FAILURE, NULL);
    }
    CHECKF(again == 0, "node 4 reported %u more times after it talked again", again);
    CHECK(membership_is_member(&h.nodes[self], 4));
}

/* Node 3 finds root 0 dead; candidate 1 answers without a view, 2 with one. */
static void root_search_skips_viewless(void)
{
    start(3, N, 0);
    uint64_t now = 1000;
    harness_advance(&h, now);
    CHECK(membership_suspect(&h.nodes[self], 0, now, &h.out));
    harness_collect(&h, self);
    take(MEMBERSHIP_MSG_HOW_ARE_YOU, NULL);
    now = membership_next_deadline(&h.nodes[self]);
    harness_tick(&h, self, now); /* the probe expires: root suspected, search */
    CHECK(take(MEMBERSHIP_MSG_HOW_ARE_YOU, NULL) >= 2);
    deliver(MEMBERSHIP_MSG_I_AM_ALIVE, 1, false, NULL, 0, now + MS);
    deliver(MEMBERSHIP_MSG_I_AM_ALIVE, 2, true, NULL, 0, now + 2 * MS);
    uint32_t to = MEMBERSHIP_NONE;
    unsigned reports = take(MEMBERSHIP_MSG_ROOT_FAILURE, &to);
    for (uint64_t t = now + 3 * MS; reports == 0 && t < now + 4 * DETECT; t += MS) {
        tick_until(t);
        reports = take(MEMBERSHIP_MSG_ROOT_FAILURE, &to);
    }
    CHECK_EQ(reports, 1u);
    CHECKF(to == 2, "root failure reported to %u, expected 2 (1 holds no view)", to);
}

int main(void)
{
    heard_holders_are_kept();
    hints_are_paced();
    backoff_after_the_root();
    suspect_that_talks_is_forgotten();
    root_search_skips_viewless();
    check_failures += (int)h.failures;
    return check_report("membership.join");
}
