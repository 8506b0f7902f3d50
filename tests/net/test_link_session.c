/*
 * Link sessions that no stale or forged handshake can wedge (issue 20): the
 * rule and the bound of net/torus/link.h, checked exhaustively.
 *
 * Two nodes of a size-2 dimension are joined by twin cables: cable 0 carries
 * traffic (each end sends a data frame every DATA_EVERY while UP), cable 1
 * is idle, as the twin a route never takes.  For every pair of link states
 * (syncing, up, down at each end, both cables in turn), reached by honest
 * runs (a staggered start, timeouts on a cut cable, a restart), the test
 * injects into either end each kind of stale or forged handshake a keyless
 * wire lets through - forged SYNs with plausible newer or older incarnations,
 * duplicates, the peer's whole SYN history replayed newest first (a stopped
 * peer resuming), the twin cable's handshakes, non-SYN frames of other
 * sessions - then heals the cable and checks that both ends are UP in one
 * session within the bound, stay so, and carry data.  With the cable cut for
 * good instead, both ends must be down (not UP) within the bound.
 */
#include "net/torus/link.h"
#include "tests/check.h"

#define US ((uint64_t)1000)
#define MS (1000 * US)
#define STEP_NS (50 * US)
#define DELAY_NS (100 * US)
#define RTO_NS (1 * MS)
#define RETRIES 3u
#define DATA_EVERY (2 * MS)
#define QUEUE 256
#define HISTORY 64
#define CABLES 2
#define BUSY_CABLE 0

/* link.h's bound, from the configuration below, plus a step of lateness. */
#define KEEPALIVE_NS ((uint64_t)TORUS_LINK_KEEPALIVE_RTOS * RTO_NS)
#define BOUND_NS ((RETRIES + 1u) * KEEPALIVE_NS + RTO_NS + 3u * DELAY_NS + 2u * STEP_NS)

struct wire {
    uint64_t due;
    uint16_t length;
    uint8_t bytes[TORUS_FRAME_HEADER_SIZE + 16];
};

struct direction {
    bool cut;
    unsigned count;
    struct wire queue[QUEUE];
};

struct end {
    struct torus_link link;
    bool off; /* not started yet: hears nothing, does nothing */
    uint32_t sent, delivered;
    unsigned ups, downs;
    /* Every SYN this end put on the wire, oldest first (for replays). */
    unsigned syn_count;
    struct wire syn[HISTORY];
};

struct cable {
    struct end end[2];       /* end[i] is on rank i */
    struct direction to[2];  /* to[i]: frames travelling to end[i] */
};

struct world {
    uint64_t now;
    bool quiet; /* the busy cable's traffic paused (to reach one-sided states) */
    struct cable cable[CABLES];
};

static struct world world;

/* Cable c joins rank 0's link c to rank 1's link c ^ 1 (x+ to x-, x- to x+). */
static unsigned end_link(unsigned cable, unsigned rank)
{
    return rank == 0 ? cable : cable ^ 1u;
}

static void end_start(unsigned cable, unsigned rank, uint32_t incarnation)
{
    struct torus_link_config c;
    torus_link_config_defaults(&c);
    c.local_rank = rank;
    c.peer_rank = 1 - rank;
    c.local_link = end_link(cable, rank);
    c.incarnation = incarnation;
    c.rto_ns = RTO_NS;
    c.retry_limit = RETRIES;
    c.ack_delay_ns = 200 * US;
    struct end *e = &world.cable[cable].end[rank];
    unsigned syn_count = e->syn_count;
    static struct wire syn[HISTORY];
    memcpy(syn, e->syn, sizeof syn);
    memset(e, 0, sizeof *e);
    e->syn_count = syn_count; /* a restart does not unsend its SYNs */
    memcpy(e->syn, syn, sizeof syn);
    CHECK(torus_link_init(&e->link, &c));
}

static void world_start(bool rank1_off)
{
    memset(&world, 0, sizeof world);
    for (unsigned c = 0; c < CABLES; c++) {
        end_start(c, 0, 100u + c);
        end_start(c, 1, 200u + c);
        world.cable[c].end[1].off = rank1_off;
    }
}

static void put(unsigned cable, unsigned to, const uint8_t *frame, size_t length)
{
    struct direction *d = &world.cable[cable].to[to];
    if (d->cut || world.cable[cable].end[to].off)
        return;
    CHECK(d->count < QUEUE && length <= sizeof d->queue[0].bytes);
    if (d->count >= QUEUE || length > sizeof d->queue[0].bytes)
        return;
    struct wire *w = &d->queue[d->count++];
    w->due = world.now + DELAY_NS;
    w->length = (uint16_t)length;
    memcpy(w->bytes, frame, length);
}

/* Hands a frame to an end, as its NIC would; false when it does not decode. */
static bool receive(unsigned cable, unsigned rank, const uint8_t *frame, size_t length)
{
    struct end *e = &world.cable[cable].end[rank];
    struct torus_frame_header h;
    if (torus_frame_decode(frame, length, 2, NULL, &h, NULL) != TORUS_FRAME_OK)
        return false;
    if (torus_link_receive(&e->link, &h, world.now) == TORUS_LINK_DELIVER)
        e->delivered++;
    return true;
}

static void take_events(struct end *e)
{
    unsigned events = torus_link_take_events(&e->link);
    if (events & TORUS_LINK_EVENT_DOWN)
        e->downs++;
    if (events & TORUS_LINK_EVENT_UP)
        e->ups++;
}

static void step(void)
{
    for (unsigned c = 0; c < CABLES; c++) {
        struct cable *cable = &world.cable[c];
        for (unsigned r = 0; r < 2; r++) {
            struct direction *d = &cable->to[r];
            unsigned kept = 0;
            for (unsigned i = 0; i < d->count; i++) {
                if (d->queue[i].due > world.now) {
                    d->queue[kept++] = d->queue[i];
                    continue;
                }
                if (!cable->end[r].off)
                    CHECK(receive(c, r, d->queue[i].bytes, d->queue[i].length));
            }
            d->count = kept;
            take_events(&cable->end[r]);
        }
        for (unsigned r = 0; r < 2; r++) {
            struct end *e = &cable->end[r];
            if (e->off)
                continue;
            if (c == BUSY_CABLE && !world.quiet && torus_link_is_up(&e->link) &&
                world.now % DATA_EVERY == 0) {
                uint8_t frame[TORUS_FRAME_HEADER_SIZE + 4];
                struct torus_frame_header h;
                memset(&h, 0, sizeof h);
                h.type = TORUS_FRAME_TYPE_PING;
                h.ttl = 1;
                h.source = r;
                h.destination = 1 - r;
                size_t length = torus_frame_encode(&h, &e->sent, 4, NULL, frame, sizeof frame);
                if (torus_link_send(&e->link, frame, length, world.now) == TORUS_LINK_SEND_OK) {
                    e->sent++;
                    put(c, 1 - r, frame, length);
                }
            }
            static struct torus_link_outbox out;
            torus_link_tick(&e->link, world.now, &out);
            for (unsigned k = 0; k < out.count; k++) {
                put(c, 1 - r, out.frame[k], out.length[k]);
                if ((out.frame[k][TORUS_FRAME_OFFSET_FLAGS] & TORUS_FRAME_FLAG_SYN) != 0 &&
                    e->syn_count < HISTORY && out.length[k] <= sizeof e->syn[0].bytes) {
                    struct wire *w = &e->syn[e->syn_count++];
                    w->length = out.length[k];
                    memcpy(w->bytes, out.frame[k], out.length[k]);
                }
            }
            take_events(e);
        }
    }
    world.now += STEP_NS;
}

static void run_for(uint64_t duration)
{
    uint64_t end = world.now + duration;
    while (world.now < end)
        step();
}

/* One session: both UP, each holding the other's incarnation. */
static bool converged(unsigned cable)
{
    const struct torus_link *a = &world.cable[cable].end[0].link;
    const struct torus_link *b = &world.cable[cable].end[1].link;
    return torus_link_is_up(a) && torus_link_is_up(b) &&
           a->local_incarnation == b->peer_incarnation &&
           b->local_incarnation == a->peer_incarnation;
}

/* ------------------------------------------------------------------ */
/* Every pair of states, from honest runs                              */
/* ------------------------------------------------------------------ */

#define STATES 3 /* syncing, up, down */
static struct world snapshot[CABLES][STATES][STATES];
static bool have[CABLES][STATES][STATES];

static void collect(void)
{
    for (unsigned c = 0; c < CABLES; c++) {
        enum torus_link_state a = torus_link_state(&world.cable[c].end[0].link);
        enum torus_link_state b = torus_link_state(&world.cable[c].end[1].link);
        if (world.cable[c].end[0].off || world.cable[c].end[1].off || have[c][a][b])
            continue;
        have[c][a][b] = true;
        snapshot[c][a][b] = world;
    }
}

static void collect_for(uint64_t duration)
{
    uint64_t end = world.now + duration;
    while (world.now < end) {
        step();
        collect();
    }
}

/* Sends one frame from an end straight away, whatever the cadence. */
static void send_data(unsigned cable, unsigned rank)
{
    struct end *e = &world.cable[cable].end[rank];
    uint8_t frame[TORUS_FRAME_HEADER_SIZE + 4];
    struct torus_frame_header h;
    memset(&h, 0, sizeof h);
    h.type = TORUS_FRAME_TYPE_PONG;
    h.ttl = 1;
    h.source = rank;
    h.destination = 1 - rank;
    size_t length = torus_frame_encode(&h, NULL, 0, NULL, frame, sizeof frame);
    if (torus_link_send(&e->link, frame, length, world.now) == TORUS_LINK_SEND_OK)
        put(cable, 1 - rank, frame, length);
}

static void collect_states(void)
{
    for (unsigned first = 0; first < 2; first++) {
        unsigned second = 1 - first;
        /* A staggered start: syncing/syncing, one up and one syncing, up/up. */
        world_start(false);
        for (unsigned c = 0; c < CABLES; c++)
            world.cable[c].end[second].off = true;
        collect();
        /* Off the first's probe cadence, so that the second is up first. */
        collect_for(3 * RTO_NS + 5 * STEP_NS);
        for (unsigned c = 0; c < CABLES; c++)
            world.cable[c].end[second].off = false;
        collect_for(5 * RTO_NS);
        CHECK(converged(0) && converged(1));
        /* Both cables cut; first sends, times out and is down while second
         * is up; then second too: down/down. */
        world.quiet = true;
        collect_for(RTO_NS); /* the last data frames are acknowledged */
        for (unsigned c = 0; c < CABLES; c++) {
            world.cable[c].to[0].cut = world.cable[c].to[1].cut = true;
            send_data(c, first);
        }
        collect_for(2 * RTO_NS);
        for (unsigned c = 0; c < CABLES; c++)
            send_data(c, second);
        collect_for((RETRIES + 3u) * RTO_NS);
        /* Second restarts (a new boot: a much newer incarnation): down at
         * first, syncing at second. */
        for (unsigned c = 0; c < CABLES; c++)
            end_start(c, second, (7u << 16) | (c + 1u));
        collect_for(3 * RTO_NS);
    }
    for (unsigned c = 0; c < CABLES; c++)
        for (unsigned a = 0; a < STATES; a++)
            for (unsigned b = 0; b < STATES; b++)
                CHECKF(have[c][a][b], "cable %u: no run reached %s/%s", c,
                       torus_link_state_name((enum torus_link_state)a),
                       torus_link_state_name((enum torus_link_state)b));
}

/* ------------------------------------------------------------------ */
/* Injections                                                          */
/* ------------------------------------------------------------------ */

enum injection {
    FORGED_NEWER_RESTART, /* SYN(P+1, 0): "I restarted" */
    FORGED_NEWER_TO_US,   /* SYN(P+1, L) */
    FORGED_NEWER_TO_OLD,  /* SYN(P+1, L-1) */
    FORGED_FAR,           /* SYN(P+1000, 7) */
    STALE_RESTART,        /* SYN(P-1, 0): an earlier boot's first SYN */
    STALE_TO_US,          /* SYN(P-1, L) */
    DUPLICATE_TO_OLD,     /* SYN(P, L-1) */
    DUPLICATE_CURRENT,    /* the peer's current SYN(Lq, Pq) */
    REPLAY_HISTORY,       /* every SYN the peer sent, newest first */
    REPLAY_TWIN,          /* the twin cable's SYNs (other MACs) */
    DATA_OF_OTHER,        /* ACK(P+1, L) and ACK(P, L+1), no SYN */
    INJECTIONS
};

static const char *const injection_name[INJECTIONS] = {
    "forged SYN(P+1,0)", "forged SYN(P+1,L)", "forged SYN(P+1,L-1)", "forged SYN(P+1000,7)",
    "stale SYN(P-1,0)", "stale SYN(P-1,L)", "duplicate SYN(P,L-1)", "duplicate SYN(Lq,Pq)",
    "replayed SYN history", "twin cable's SYNs", "ACKs of other sessions",
};

/* A frame from the peer of end (cable, rank), as a keyless forger makes it. */
static void inject_forged(unsigned cable, unsigned rank, bool syn, uint32_t sender,
                          uint32_t receiver)
{
    const struct torus_link *l = &world.cable[cable].end[rank].link;
    uint8_t frame[TORUS_FRAME_HEADER_SIZE];
    struct torus_frame_header h;
    memset(&h, 0, sizeof h);
    h.type = TORUS_FRAME_TYPE_LINK_ACK;
    h.ttl = 1;
    h.source = 1 - rank;
    h.destination = rank;
    size_t length = torus_frame_encode(&h, NULL, 0, NULL, frame, sizeof frame);
    struct torus_frame_link_fields f;
    memcpy(f.destination_mac, l->local_mac, TORUS_FRAME_MAC_SIZE);
    memcpy(f.source_mac, l->peer_mac, TORUS_FRAME_MAC_SIZE);
    f.flags = syn ? TORUS_FRAME_FLAG_SYN : 0;
    f.sequence = 0;
    f.ack = l->next_sequence;
    f.sender_incarnation = sender;
    f.receiver_incarnation = receiver;
    torus_frame_stamp_link(frame, length, &f, NULL);
    CHECK(receive(cable, rank, frame, length));
}

static void inject(unsigned cable, unsigned rank, enum injection kind)
{
    struct end *e = &world.cable[cable].end[rank];
    const struct end *peer = &world.cable[cable].end[1 - rank];
    uint32_t local = e->link.local_incarnation, remote = e->link.peer_incarnation;
    switch (kind) {
    case FORGED_NEWER_RESTART: inject_forged(cable, rank, true, remote + 1, 0); break;
    case FORGED_NEWER_TO_US: inject_forged(cable, rank, true, remote + 1, local); break;
    case FORGED_NEWER_TO_OLD: inject_forged(cable, rank, true, remote + 1, local - 1); break;
    case FORGED_FAR: inject_forged(cable, rank, true, remote + 1000, 7); break;
    case STALE_RESTART: inject_forged(cable, rank, true, remote - 1, 0); break;
    case STALE_TO_US: inject_forged(cable, rank, true, remote - 1, local); break;
    case DUPLICATE_TO_OLD: inject_forged(cable, rank, true, remote, local - 1); break;
    case DUPLICATE_CURRENT:
        inject_forged(cable, rank, true, peer->link.local_incarnation,
                      peer->link.peer_incarnation);
        break;
    case REPLAY_HISTORY:
        for (unsigned i = peer->syn_count; i-- > 0;)
            CHECK(receive(cable, rank, peer->syn[i].bytes, peer->syn[i].length));
        break;
    case REPLAY_TWIN: {
        const struct end *twin = &world.cable[cable ^ 1u].end[1 - rank];
        for (unsigned i = 0; i < twin->syn_count; i++)
            CHECK(receive(cable, rank, twin->syn[i].bytes, twin->syn[i].length));
        break;
    }
    case DATA_OF_OTHER:
        inject_forged(cable, rank, false, remote + 1, local);
        inject_forged(cable, rank, false, remote, local + 1);
        break;
    case INJECTIONS: break;
    }
    take_events(e);
}

static unsigned scenarios, worst_step;
static uint64_t worst_ns;

/* From state (a, b) of cable, inject kind into end rank, heal, converge. */
static void check_converges(unsigned cable, unsigned a, unsigned b, unsigned rank,
                            enum injection kind)
{
    world = snapshot[cable][a][b];
    world.quiet = false;
    for (unsigned c = 0; c < CABLES; c++)
        world.cable[c].to[0].cut = world.cable[c].to[1].cut = false;
    inject(cable, rank, kind);
    const uint64_t t0 = world.now;
    uint64_t reached = UINT64_MAX;
    while (world.now <= t0 + BOUND_NS) {
        step();
        if (converged(cable)) {
            reached = world.now;
            break;
        }
    }
    scenarios++;
    CHECKF(reached != UINT64_MAX,
           "cable %u from %s/%s, %s into rank %u: %s/%s %s after the bound (%" PRIu64 " us)",
           cable, torus_link_state_name((enum torus_link_state)a),
           torus_link_state_name((enum torus_link_state)b), injection_name[kind], rank,
           torus_link_state_name(torus_link_state(&world.cable[cable].end[0].link)),
           torus_link_state_name(torus_link_state(&world.cable[cable].end[1].link)),
           "and no shared session", BOUND_NS / US);
    if (reached == UINT64_MAX)
        return;
    if (reached - t0 > worst_ns) {
        worst_ns = reached - t0;
        worst_step = (unsigned)kind;
    }
    /* Nothing disturbs it after: no DOWN, the same session, data flows. */
    struct end *ends = world.cable[cable].end;
    unsigned downs[2] = {ends[0].downs, ends[1].downs};
    uint32_t session[2] = {ends[0].link.local_incarnation, ends[1].link.local_incarnation};
    uint32_t delivered[2] = {ends[0].delivered, ends[1].delivered};
    run_for((RETRIES + 3u) * KEEPALIVE_NS);
    for (unsigned r = 0; r < 2; r++) {
        CHECK_EQ(ends[r].downs, downs[r]);
        CHECK_EQ(ends[r].link.local_incarnation, session[r]);
        if (cable == BUSY_CABLE)
            CHECK(ends[r].delivered > delivered[r]);
    }
    CHECK(converged(cable));
}

/* From state (a, b), the same injection, and the cable stays cut: both ends
 * must be down (not UP) within the bound. */
static void check_both_down(unsigned cable, unsigned a, unsigned b, unsigned rank,
                            enum injection kind)
{
    world = snapshot[cable][a][b];
    world.quiet = false;
    world.cable[cable].to[0].cut = world.cable[cable].to[1].cut = true;
    world.cable[cable].to[0].count = world.cable[cable].to[1].count = 0;
    inject(cable, rank, kind);
    run_for(BOUND_NS);
    for (unsigned r = 0; r < 2; r++)
        CHECKF(!torus_link_is_up(&world.cable[cable].end[r].link),
               "cable %u from %s/%s, %s into rank %u, cable cut: rank %u still up after "
               "the bound",
               cable, torus_link_state_name((enum torus_link_state)a),
               torus_link_state_name((enum torus_link_state)b), injection_name[kind], rank,
               r);
}

int main(void)
{
    collect_states();
    /* The finding of issue 20 first: on the idle twin cable, a forged
     * "I restarted" SYN left one end up and the other down for good. */
    if (have[1][TORUS_LINK_UP][TORUS_LINK_UP])
        check_converges(1, TORUS_LINK_UP, TORUS_LINK_UP, 1, FORGED_NEWER_RESTART);
    for (unsigned c = 0; c < CABLES; c++)
        for (unsigned a = 0; a < STATES; a++)
            for (unsigned b = 0; b < STATES; b++)
                for (unsigned rank = 0; rank < 2; rank++)
                    for (unsigned k = 0; k < INJECTIONS; k++) {
                        if (!have[c][a][b])
                            continue;
                        check_converges(c, a, b, rank, (enum injection)k);
                        check_both_down(c, a, b, rank, (enum injection)k);
                        CHECK_BAIL_IF_MANY();
                    }
    printf("%u scenarios (%u cables x %u state pairs x 2 ends x %u injections): "
           "the slowest converged in %" PRIu64 " us (%s), bound %" PRIu64 " us\n",
           scenarios, CABLES, STATES * STATES, INJECTIONS, worst_ns / US,
           injection_name[worst_step], BOUND_NS / US);
    return check_report("net.link_session");
}
