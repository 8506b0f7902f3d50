/*
 * The simulator's chaos schedule (see sim_chaos.h): the times, drawn up
 * front in virtual time; what happens at each is tools/chaos.h's.
 */
#include "sim/sim_chaos.h"

#include <stdlib.h>

#include "tools/chaos.h"

/* What the simulator's campaign draws (it carries out no reboot; its joins are scripted). */
#define SIM_CHAOS_KINDS                                                                       \
    (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_RESTART) | CHAOS_KIND(FAULT_HANG) |            \
     CHAOS_KIND(FAULT_SUSPECT) | CHAOS_KIND(FAULT_PARTITION) | CHAOS_KIND(FAULT_LINK_OFF))

/* Under a recovering mode (--comm-mode blank, shrink, rebuild): faults after
 * which a rank is gone for good.  A rank back in the view in a new life (a
 * restart, an expulsion after a hang, a false suspicion or a partition,
 * then a rejoin) does not rejoin a running job (node_job_init), and the
 * communicators' rounds would wait on it. */
#define SIM_CHAOS_RECOVERY_KINDS (CHAOS_KIND(FAULT_KILL) | CHAOS_KIND(FAULT_LINK_OFF))

static int compare_times(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t sim_chaos_generate(const struct sim_params *params, uint64_t seed, unsigned events,
                          uint64_t window_ns, struct fault *out, size_t capacity)
{
    uint64_t unit = sim_unit_ns(params);
    /* The constant keeps every seed's scenario what it was before the generator moved to tools/. */
    struct chaos_config config = {
        .geometry = &params->geometry,
        .members = params->members,
        .seed = seed ^ UINT64_C(0x5851f42d4c957f2d),
        .kinds = params->app.comm_mode != COMM_MODE_ABORT ? SIM_CHAOS_RECOVERY_KINDS
                                                          : SIM_CHAOS_KINDS,
        .hold_ns = 0, /* drawn holds; the dead stay dead until a drawn restart */
        .unit_ns = unit,
        .rebootable = NULL,
    };
    struct chaos chaos;
    char error[160];
    if (capacity < 2 || !chaos_init(&chaos, &config, error, sizeof error))
        return 0;
    uint64_t *times = calloc(events > 0 ? events : 1, sizeof(uint64_t));
    if (times == NULL) {
        chaos_free(&chaos);
        return 0;
    }
    for (unsigned i = 0; i < events; i++)
        times[i] = unit + chaos_below(&chaos, window_ns > unit ? window_ns - unit : 1);
    qsort(times, events, sizeof times[0], compare_times);
    size_t count = 0;
    for (unsigned i = 0; i < events && count + 2 < capacity; i++) {
        struct fault undo;
        /* The undos are in the schedule already (below); here they only move the model on. */
        while (chaos_take_undo(&chaos, times[i], &undo)) {
        }
        if (!chaos_draw(&chaos, times[i], &out[count], &undo))
            continue;
        if (undo.kind == FAULT_RESUME) {
            out[count].duration_ns = undo.time_ns - times[i]; /* "hang N at T for D" */
        } else if (undo.kind != 0) {
            out[++count] = undo; /* link on, heal: right after what they undo */
        }
        count++;
    }
    free(times);
    chaos_free(&chaos);
    return count;
}
