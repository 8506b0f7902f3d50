/* The reachability sampler's shared parts (see reach.h). */
#include "tools/reach.h"

#include <inttypes.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/splitmix.h"

bool reach_options_parse(const char *text, struct reach_options *out, char *error,
                         size_t capacity)
{
    char interval[64];
    const char *comma = strchr(text, ',');
    size_t length = comma != NULL ? (size_t)(comma - text) : strlen(text);
    memset(out, 0, sizeof *out);
    if (length == 0 || length >= sizeof interval) {
        snprintf(error, capacity, "expected INTERVAL[,PAIRS], e.g. 100ms or 1s,64");
        return false;
    }
    memcpy(interval, text, length);
    interval[length] = '\0';
    if (!cli_parse_time_ns(interval, false, &out->interval_ns) ||
        out->interval_ns < REACH_INTERVAL_MIN_NS || out->interval_ns > REACH_INTERVAL_MAX_NS) {
        snprintf(error, capacity, "interval '%.40s' is invalid (expected %s, from 1us to 1h)",
                 interval, CLI_TIME_EXPECTED);
        return false;
    }
    if (comma != NULL) {
        uint64_t pairs = 0;
        if (!cli_parse_u64(comma + 1, 1, REACH_PAIRS_MAX, &pairs)) {
            snprintf(error, capacity, "pairs '%.40s' is invalid (expected 1..%u)", comma + 1,
                     REACH_PAIRS_MAX);
            return false;
        }
        out->pairs = (uint32_t)pairs;
    }
    return true;
}

void reach_sample_begin(struct reach_sample *sample, uint64_t t_ns)
{
    memset(sample, 0, sizeof *sample);
    sample->t_ns = t_ns;
}

void reach_sample_add(struct reach_sample *sample, bool reached, uint64_t hops,
                      uint64_t minimal)
{
    sample->tried++;
    if (!reached)
        return;
    sample->reached++;
    double stretch = (double)hops / (double)(minimal > 0 ? minimal : 1);
    sample->stretch_sum += stretch;
    if (stretch > sample->stretch_max)
        sample->stretch_max = stretch;
}

double reach_sample_fraction(const struct reach_sample *sample)
{
    return sample->tried == 0 ? 1.0 : (double)sample->reached / (double)sample->tried;
}

double reach_sample_stretch_mean(const struct reach_sample *sample)
{
    return sample->reached == 0 ? 0.0 : sample->stretch_sum / (double)sample->reached;
}

void reach_sample_write_json(const struct reach_sample *sample, const char *extra, FILE *out)
{
    fprintf(out,
            "{\"t_s\":%.6f,\"pairs\":%" PRIu64 ",\"reached\":%" PRIu64
            ",\"fraction\":%.6f,\"stretch_mean\":%.4f,\"stretch_max\":%.4f%s}",
            (double)sample->t_ns / 1e9, sample->tried, sample->reached,
            reach_sample_fraction(sample), reach_sample_stretch_mean(sample),
            sample->stretch_max, extra != NULL ? extra : "");
}

void reach_draw_pair(uint64_t *state, uint32_t count, uint32_t *source, uint32_t *destination)
{
    *source = (uint32_t)splitmix64_below(state, count);
    /* One of the other count - 1, uniformly. */
    uint32_t other = (uint32_t)splitmix64_below(state, count - 1u);
    *destination = other >= *source ? other + 1u : other;
}
