/*
 * Static timers.  A timer table holds CONFIG_MAX_TIMERS slots registered at
 * init; arming and disarming never allocate.  The table is a plain struct so
 * that tests and the simulator can own one; the kernel owns the node's.
 */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "config/tori_config.h"

#define TIMER_NEVER UINT64_MAX

typedef void (*timer_fn)(void *context, uint64_t now_ns);

struct timer_slot {
    uint64_t deadline_ns; /* TIMER_NEVER when disarmed */
    timer_fn callback;
    void *context;
    const char *name;
};

struct timer_table {
    struct timer_slot slots[CONFIG_MAX_TIMERS];
    unsigned count;
};

typedef int timer_id; /* index into slots; negative: none */

void timer_table_init(struct timer_table *table);

/* Adds a disarmed timer; returns its id, or -1 when the table is full. */
timer_id timer_add(struct timer_table *table, const char *name,
                   timer_fn callback, void *context);

/*
 * Adds a timer whose only job is to end the poll loop's idling at its
 * deadline, for a poller that does the work itself; -1 when full.
 */
timer_id timer_add_wakeup(struct timer_table *table, const char *name);

/* Sets (or moves) the deadline of a timer. */
void timer_arm(struct timer_table *table, timer_id id, uint64_t deadline_ns);
void timer_disarm(struct timer_table *table, timer_id id);
bool timer_is_armed(const struct timer_table *table, timer_id id);

/* Earliest armed deadline, TIMER_NEVER when none is armed. */
uint64_t timer_next_deadline(const struct timer_table *table);

/*
 * Fires every timer whose deadline is <= now_ns, each at most once per call,
 * in deadline order; a timer is disarmed before its callback runs so that
 * the callback may re-arm it.  Returns how many fired.
 */
unsigned timer_run_due(struct timer_table *table, uint64_t now_ns);

/* The node's own table, used by the poll loop. */
struct timer_table *timer_kernel_table(void);

#endif /* KERNEL_TIMER_H */
