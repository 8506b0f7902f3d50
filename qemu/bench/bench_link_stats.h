/*
 * Statistics of tori-bench-link, pure and tested on their own: the spread
 * of a set of round-trip times, and the least-squares line through
 * (hops, RTT) points whose slope is the cost of one more hop.
 */
#ifndef QEMU_BENCH_BENCH_LINK_STATS_H
#define QEMU_BENCH_BENCH_LINK_STATS_H

#include <stdbool.h>
#include <stdint.h>

/* Order statistics by the nearest-rank method (emu_ping_quantile). */
struct bench_link_spread {
    uint64_t count;
    uint64_t median, p10, p90, min, max;
};

/* Sorts values in place and fills spread (all zero when count is 0). */
void bench_link_spread_of(uint64_t *values, uint64_t count,
                          struct bench_link_spread *spread);

/* y = intercept + slope * x, fitted by least squares. */
struct bench_link_line {
    bool valid; /* at least two points with distinct x */
    unsigned points;
    double slope, intercept;
};

/* Fits the line through n points; invalid when it is not determined. */
void bench_link_fit_line(const double *x, const double *y, unsigned n,
                         struct bench_link_line *line);

/* numerator / denominator, or 0 when the denominator is 0. */
double bench_link_ratio(double numerator, double denominator);

#endif /* QEMU_BENCH_BENCH_LINK_STATS_H */
