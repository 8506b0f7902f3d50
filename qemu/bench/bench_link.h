/*
 * tori-bench-link's measurements on one board: a 1-D torus of --ring
 * nodes started by the launcher (qemu/launcher/emu_run.h), driven over the nodes'
 * consoles:
 *
 *   RTT     node 0 runs `ping H` for H = 1..ring/2 in turn, --rounds times
 *           (after a few warm-up rounds that are not counted); per hop
 *           count: median, p10, p90, min, max.  The added RTT of each
 *           further hop is the least-squares slope over the per-hop
 *           medians, quoted as a ratio to the one-hop median.
 *   flood   node 0 floods node 1 (one hop), then node 2 (two hops) with
 *           `flood DST COUNT SIZE` (node/flood.h); `stats` and
 *           `flood stats` on every node of the path before and after give
 *           the counters' deltas; the receiver's count gives delivered/sent.
 *   check   node 0 times `flood check SIZE` for an empty and a flood-sized
 *           frame: sealing and verifying a frame keyless (CRC-32) and with
 *           the job key's tag (SipHash-2-4), back to back on its own CPU;
 *           per frame and per hop, with the ratio tag / CRC and the tag's
 *           share of the one-hop RTT (a round trip is two hops).
 */
#ifndef QEMU_BENCH_BENCH_LINK_H
#define QEMU_BENCH_BENCH_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "qemu/bench/bench_link_options.h"
#include "qemu/bench/bench_link_stats.h"
#include "qemu/launcher/emu_run.h"

#define BENCH_LINK_MAX_HOPS (BENCH_LINK_RING_MAX / 2u)
#define BENCH_LINK_FLOODS 2u /* one hop, two hops */
/* Rounds of pings before the counted ones (first routes, caches). */
#define BENCH_LINK_WARMUP_ROUNDS 3u

/*
 * Node counters reported for a flood, as deltas summed over the nodes of
 * its path; where each comes from (`flood stats`'s flood-links line, or
 * `stats`).  One list makes the enum and the names.
 */
#define BENCH_LINK_COUNTERS(X)                                    \
    X(RETRANSMITTED, "retransmitted", LINKS)                      \
    X(TIMEOUTS, "timeouts", LINKS)                                \
    X(FAST_RETRANSMITS, "fast_retransmits", LINKS)                \
    X(DUPLICATES, "duplicates", LINKS)                            \
    X(OUT_OF_ORDER, "out_of_order", LINKS)                        \
    X(STALE, "stale", LINKS)                                      \
    X(WINDOW_FULL, "window_full", LINKS)                          \
    X(DISCARDED, "discarded", LINKS)                              \
    X(DOWN_EVENTS, "down_events", LINKS)                          \
    X(DRV_SEND_BUSY, "drv_send_busy", LINKS)                      \
    X(DRV_SEND_ERRORS, "drv_send_errors", LINKS)                  \
    X(DRV_RECEIVE_DROPS, "drv_receive_drops", LINKS)              \
    X(BAD_FRAMES, "bad_frames", LINKS)                            \
    X(RING_FULL, "ring_full", STATS)                              \
    X(DRIVER_BUSY, "driver_busy", STATS)                          \
    X(LINK_NOT_UP, "link_not_up", STATS)                          \
    X(NO_ROUTE, "no_route", STATS)                                \
    X(LINK_DROPS, "link_drops", STATS)                            \
    X(TTL_EXPIRED, "ttl_expired", STATS)                          \
    X(FORWARDED, "forwarded", STATS)

enum bench_link_counter {
#define BENCH_LINK_COUNTER_ENUM(name, key, source) BENCH_LINK_COUNT_##name,
    BENCH_LINK_COUNTERS(BENCH_LINK_COUNTER_ENUM)
#undef BENCH_LINK_COUNTER_ENUM
    BENCH_LINK_COUNTER_COUNT
};

const char *bench_link_counter_name(enum bench_link_counter counter);

struct bench_link_hop {
    uint32_t hops;
    uint64_t *rtt_ns;      /* counted answers (allocated: rounds) */
    uint64_t samples;
    uint64_t failed;       /* no answer, or ok=0 */
    uint64_t wrong_hops;   /* answered over a path of another length */
    struct bench_link_spread spread;
};

struct bench_link_flood {
    bool done;
    uint32_t destination, hops;
    uint64_t count, size;
    uint64_t sent;         /* injected by the sender */
    uint64_t delivered;    /* counted by the receiver */
    uint64_t missing, old; /* sequence gaps / repeats seen by the receiver */
    uint64_t span_ns;      /* receiver: first to last frame */
    uint64_t sender_ns;    /* sender: first to last frame injected */
    uint64_t waits;        /* sender passes that found the ring full */
    bool stalled;
    uint64_t counter[BENCH_LINK_COUNTER_COUNT];
};

/* Per frame and hop: seal at the sender, verify at the receiver. */
#define BENCH_LINK_CHECK_SIZES 2u /* an empty frame, a flood frame */
struct bench_link_check_cost {
    unsigned size;  /* payload bytes */
    double crc_ns;  /* keyless */
    double tag_ns;  /* with the job key */
};

struct bench_link_board {
    const char *name;      /* "qemu", "host" */
    bool attempted;
    bool rtt_done;         /* every round ran */
    int status;            /* the board's exit status: 0 measured */
    char error[320];       /* why it failed, when it did */
    char out_dir[512];
    unsigned nodes, max_hops;
    struct bench_link_hop hop[BENCH_LINK_MAX_HOPS];
    struct bench_link_line per_hop;  /* RTT (ns) against hops, per-hop medians */
    unsigned floods;
    struct bench_link_flood flood[BENCH_LINK_FLOODS];
    unsigned checks;
    struct bench_link_check_cost check[BENCH_LINK_CHECK_SIZES];
    /* Membership runs beside the measurements (the launcher starts the
     * job): its churn is background load, reported with the results. */
    uint64_t failure_detections, views;
};

/*
 * Runs one board (BENCH_LINK_BOARD_QEMU or _HOST) with logs under out_dir,
 * filling result; returns its exit status (0 measured; 1 failed, with
 * result->error; 128+N stopped by signal N).
 */
int bench_link_run_board(const struct bench_link_options *options, unsigned board,
                         const char *out_dir, struct bench_link_board *result);

void bench_link_board_free(struct bench_link_board *result);

/*
 * The same measurements on a torus another benchmark drives (tori-bench-comm
 * measures the raw link beside its application): attach to a started torus
 * (progress lines on stderr say tool; every event line still reaches next,
 * which may be NULL), then round trips over hop counts 1..result->max_hops,
 * rounds each (into result->hop, result->per_hop), and floods over hops
 * (node `hops` of a ring); false, with result->error, when one fails.
 * Attach returns NULL when out of memory; detach restores next.
 */
struct bench_link_probe;
struct bench_link_probe *bench_link_probe_attach(const char *tool, struct emu *emu,
                                                 struct bench_link_board *result,
                                                 emu_event_observer next, void *next_context);
bool bench_link_probe_rtt(struct bench_link_probe *probe, unsigned rounds);
bool bench_link_probe_flood(struct bench_link_probe *probe, uint32_t hops, unsigned count,
                            unsigned size, struct bench_link_flood *flood);
/* Node 0's `flood check size`: the check's cost per frame, both ways. */
bool bench_link_probe_check_cost(struct bench_link_probe *probe, unsigned size,
                                 struct bench_link_check_cost *cost);
void bench_link_probe_detach(struct bench_link_probe *probe);

/* The one-hop median RTT (ns), the run's own baseline; 0 when none. */
uint64_t bench_link_one_hop_ns(const struct bench_link_board *result);

/* The compact human table of every board attempted. */
void bench_link_print_table(FILE *out, const struct bench_link_options *options,
                            const struct bench_link_board *boards, unsigned count);

/* A JSON string (escaped), and a number (null when not finite). */
void bench_link_json_string(FILE *out, const char *text);
void bench_link_json_number(FILE *out, double value);

/* Every result as one JSON object (and a newline). */
void bench_link_print_json(FILE *out, const struct bench_link_options *options,
                           const struct bench_link_board *boards, unsigned count);

#endif /* QEMU_BENCH_BENCH_LINK_H */
