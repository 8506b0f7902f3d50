/*
 * tori-emu --reach INTERVAL[,PAIRS] (issue 16; tools/reach.h): every
 * INTERVAL of the job, PAIRS ordered pairs of running nodes drawn with the
 * run's seed (every pair when there are fewer) are pinged, each by
 * `ping D` on its source's console, one at a time per source; when every
 * pair has answered or given up, one JSON line goes to <out>/reach.jsonl:
 * the job time the sample began, the pairs tried, the fraction that
 * answered, the route stretch (the hops the ping's frame took over the
 * torus's minimal hops, mean and max), how long the sample took, and how
 * many pairs were still under way when the run ended (left out of the
 * sample written then; 0 otherwise).
 * Samples wait while a `ping all` sweep runs (a node runs one sweep at a
 * time), and a sweep waits for a source's sample ping.
 */
#ifndef QEMU_LAUNCHER_EMU_REACH_H
#define QEMU_LAUNCHER_EMU_REACH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/reach.h"

/* PAIRS when --reach gives none, and the seed of the draw when none is given. */
#define EMU_REACH_DEFAULT_PAIRS 64u
#define EMU_REACH_DEFAULT_SEED 1u
/* A sample ping not answered (ok or not) within this is counted unreachable:
 * a node's ping gives up after 3 attempts of 1 s (node/ping.h). */
#define EMU_REACH_PAIR_TIMEOUT_NS 5000000000ull

struct emu;
struct emu_node;
struct event_line;

struct emu_reach_pair {
    uint32_t source, destination;
    bool sent, done, ok;
    uint32_t hops;
    uint64_t sent_ns;
};

struct emu_reach {
    bool on;
    struct reach_options options;
    uint64_t state;         /* the pairs' generator */
    FILE *out;              /* <out>/reach.jsonl */
    uint64_t next_ns;       /* job time of the next sample */
    bool active;            /* a sample under way */
    uint64_t started_ns;    /* its job time */
    struct emu_reach_pair *pairs; /* options.pairs of them (allocated once) */
    uint32_t pair_count;
    uint32_t *running;      /* scratch: running ranks */
    uint32_t samples;
};

/* Opens <out>/reach.jsonl and allocates (emu->options->reach set); false
 * with a one-line complaint. */
bool emu_reach_open(struct emu *emu);
void emu_reach_close(struct emu *emu);

/* The run ends: a sample under way is written with the pairs done. */
void emu_reach_end(struct emu *emu);

/* One turn of the loop: starts a sample when due, sends what is owed,
 * gives up on late pairs, writes the finished sample. */
void emu_reach_tick(struct emu *emu);

/* The poll timeout of a loop turn (timeout_ms, or less when a sample falls
 * due or a pair may time out sooner). */
int emu_reach_poll_ms(const struct emu *emu, int timeout_ms);

/* A `ping` or `console-error` line of node: true when it was a sample's. */
bool emu_reach_on_event(struct emu *emu, struct emu_node *node, const struct event_line *line);

/* True while node has a sample ping in flight (a `ping all` must wait). */
bool emu_reach_busy(const struct emu *emu, const struct emu_node *node);

#endif /* QEMU_LAUNCHER_EMU_REACH_H */
