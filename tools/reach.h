/*
 * The reachability sampler (`--reach INTERVAL[,PAIRS]` of tori-sim and
 * tori-emu; Phoenix's Figs. 5 and 6): every interval, ordered pairs of
 * running nodes are tried (all of them, or PAIRS drawn with a seed), and
 * one sample says how many were tried, the fraction that got through, and
 * the route stretch of those that did: hops taken over the torus's
 * minimal hops, mean and max.  What both tools share: the option's
 * syntax, the drawing of pairs, the sums and the sample's JSON line.
 */
#ifndef TOOLS_REACH_H
#define TOOLS_REACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct reach_options {
    uint64_t interval_ns;
    uint32_t pairs; /* 0: every ordered pair */
};

/* Longest and shortest interval the sampler takes. */
#define REACH_INTERVAL_MIN_NS 1000ull            /* 1us */
#define REACH_INTERVAL_MAX_NS 3600000000000ull   /* 1 hour */
#define REACH_PAIRS_MAX 1000000u

/*
 * "INTERVAL[,PAIRS]": a time in the one syntax (tools/cli.h) from 1us to
 * 1h, and 1..1000000 pairs.  False with the reason (one line, no option
 * name) in error.
 */
bool reach_options_parse(const char *text, struct reach_options *out, char *error,
                         size_t capacity);

/* One sample's sums. */
struct reach_sample {
    uint64_t t_ns;
    uint64_t tried;
    uint64_t reached;
    double stretch_sum; /* over reached pairs */
    double stretch_max;
};

void reach_sample_begin(struct reach_sample *sample, uint64_t t_ns);

/* One pair tried: reached over hops taken, minimal the torus distance (>= 1). */
void reach_sample_add(struct reach_sample *sample, bool reached, uint64_t hops,
                      uint64_t minimal);

double reach_sample_fraction(const struct reach_sample *sample); /* 1 when none tried */
double reach_sample_stretch_mean(const struct reach_sample *sample); /* 0 when none reached */

/*
 * The sample as one JSON object (no newline): {"t_s":..,"pairs":..,
 * "reached":..,"fraction":..,"stretch_mean":..,"stretch_max":..}, with
 * extra (may be NULL or "") spliced in before the closing brace, as
 * ",\"key\":value" pairs.
 */
void reach_sample_write_json(const struct reach_sample *sample, const char *extra, FILE *out);

/*
 * Draws an ordered pair of distinct entries of running[0..count) (count >=
 * 2) with the generator state: *source and *destination are indices.
 */
void reach_draw_pair(uint64_t *state, uint32_t count, uint32_t *source, uint32_t *destination);

#endif /* TOOLS_REACH_H */
