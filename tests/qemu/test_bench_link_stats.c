/* tori-bench-link's statistics: spread by nearest rank, the least-squares
 * line over hop counts, and ratios that never divide by zero. */
#include <math.h>
#include <stdint.h>

#include "qemu/bench/bench_link_stats.h"
#include "tests/check.h"

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1.0);
}

static void test_spread(void)
{
    struct bench_link_spread s;
    bench_link_spread_of(NULL, 0, &s);
    CHECK(s.count == 0 && s.median == 0 && s.max == 0);

    uint64_t one[] = {42};
    bench_link_spread_of(one, 1, &s);
    CHECK(s.count == 1 && s.median == 42 && s.p10 == 42 && s.p90 == 42 && s.min == 42 &&
          s.max == 42);

    /* 1..10 shuffled: nearest rank gives p10 1, median 5, p90 9. */
    uint64_t ten[] = {7, 3, 10, 1, 9, 2, 8, 5, 4, 6};
    bench_link_spread_of(ten, 10, &s);
    CHECK(s.count == 10 && s.min == 1 && s.max == 10);
    CHECK(s.p10 == 1 && s.median == 5 && s.p90 == 9);
    CHECK(ten[0] == 1 && ten[9] == 10); /* sorted in place */

    /* One huge outlier moves max, not the median. */
    uint64_t spiky[] = {100, 101, 99, 100, 5000000};
    bench_link_spread_of(spiky, 5, &s);
    CHECK(s.median == 100 && s.max == 5000000 && s.min == 99);
}

static void test_fit(void)
{
    struct bench_link_line line;
    /* Exact line: RTT = 50 + 30 * hops. */
    double x[] = {1, 2, 3, 4}, y[] = {80, 110, 140, 170};
    bench_link_fit_line(x, y, 4, &line);
    CHECK(line.valid && line.points == 4);
    CHECK(near(line.slope, 30) && near(line.intercept, 50));

    /* Noisy points: by hand sxy 48, sxx 5, slope 9.6, intercept 25 - 9.6 * 2.5. */
    double nx[] = {1, 2, 3, 4}, ny[] = {10, 22, 28, 40};
    bench_link_fit_line(nx, ny, 4, &line);
    CHECK(line.valid && near(line.slope, 9.6) && near(line.intercept, 1));

    /* Two points determine it; one point or equal x do not. */
    double tx[] = {1, 2}, ty[] = {38600, 72000};
    bench_link_fit_line(tx, ty, 2, &line);
    CHECK(line.valid && near(line.slope, 33400) && near(line.intercept, 5200));
    bench_link_fit_line(tx, ty, 1, &line);
    CHECK(!line.valid && line.points == 1);
    double same[] = {2, 2, 2};
    bench_link_fit_line(same, y, 3, &line);
    CHECK(!line.valid);
    bench_link_fit_line(x, y, 0, &line);
    CHECK(!line.valid);

    /* Large values (nanoseconds) keep their precision. */
    double bx[] = {1, 2, 3}, by[] = {1e12 + 10, 1e12 + 20, 1e12 + 30};
    bench_link_fit_line(bx, by, 3, &line);
    CHECK(line.valid && fabs(line.slope - 10) < 1e-3);
}

static void test_ratio(void)
{
    CHECK(near(bench_link_ratio(3, 2), 1.5));
    CHECK(bench_link_ratio(3, 0) == 0);
    CHECK(bench_link_ratio(0, 5) == 0);
}

int main(void)
{
    test_spread();
    test_fit();
    test_ratio();
    return check_report("emu.bench_link_stats");
}
