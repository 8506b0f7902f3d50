#include "qemu/bench/bench_link_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qemu/launcher/emu_ping.h"

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void bench_link_spread_of(uint64_t *values, uint64_t count,
                          struct bench_link_spread *spread)
{
    memset(spread, 0, sizeof *spread);
    if (count == 0)
        return;
    qsort(values, count, sizeof *values, compare_u64);
    spread->count = count;
    spread->median = emu_ping_quantile(values, count, 0.5);
    spread->p10 = emu_ping_quantile(values, count, 0.1);
    spread->p90 = emu_ping_quantile(values, count, 0.9);
    spread->min = values[0];
    spread->max = values[count - 1];
}

void bench_link_fit_line(const double *x, const double *y, unsigned n,
                         struct bench_link_line *line)
{
    memset(line, 0, sizeof *line);
    line->points = n;
    if (n < 2)
        return;
    double mean_x = 0, mean_y = 0;
    for (unsigned i = 0; i < n; i++) {
        mean_x += x[i];
        mean_y += y[i];
    }
    mean_x /= n;
    mean_y /= n;
    /* Centred sums: no cancellation between large totals. */
    double sxx = 0, sxy = 0;
    for (unsigned i = 0; i < n; i++) {
        sxx += (x[i] - mean_x) * (x[i] - mean_x);
        sxy += (x[i] - mean_x) * (y[i] - mean_y);
    }
    if (!(sxx > 0) || !isfinite(sxx) || !isfinite(sxy))
        return;
    line->slope = sxy / sxx;
    line->intercept = mean_y - line->slope * mean_x;
    line->valid = true;
}

double bench_link_ratio(double numerator, double denominator)
{
    return denominator != 0 ? numerator / denominator : 0;
}
