#include "kernel/timer.h"

#include <stddef.h>

void timer_table_init(struct timer_table *table)
{
    for (unsigned i = 0; i < CONFIG_MAX_TIMERS; i++) {
        table->slots[i].deadline_ns = TIMER_NEVER;
        table->slots[i].callback = NULL;
        table->slots[i].context = NULL;
        table->slots[i].name = NULL;
    }
    table->count = 0;
}

timer_id timer_add(struct timer_table *table, const char *name,
                   timer_fn callback, void *context)
{
    if (table->count >= CONFIG_MAX_TIMERS || callback == NULL)
        return -1;
    struct timer_slot *slot = &table->slots[table->count];
    slot->deadline_ns = TIMER_NEVER;
    slot->callback = callback;
    slot->context = context;
    slot->name = name;
    return (timer_id)table->count++;
}

static void timer_wakeup_only(void *context, uint64_t now_ns)
{
    (void)context;
    (void)now_ns;
}

timer_id timer_add_wakeup(struct timer_table *table, const char *name)
{
    return timer_add(table, name, timer_wakeup_only, NULL);
}

static struct timer_slot *timer_slot_of(struct timer_table *table, timer_id id)
{
    if (id < 0 || (unsigned)id >= table->count)
        return NULL;
    return &table->slots[id];
}

void timer_arm(struct timer_table *table, timer_id id, uint64_t deadline_ns)
{
    struct timer_slot *slot = timer_slot_of(table, id);
    if (slot != NULL)
        slot->deadline_ns = deadline_ns;
}

void timer_disarm(struct timer_table *table, timer_id id)
{
    timer_arm(table, id, TIMER_NEVER);
}

bool timer_is_armed(const struct timer_table *table, timer_id id)
{
    return id >= 0 && (unsigned)id < table->count &&
           table->slots[id].deadline_ns != TIMER_NEVER;
}

uint64_t timer_next_deadline(const struct timer_table *table)
{
    uint64_t next = TIMER_NEVER;
    for (unsigned i = 0; i < table->count; i++)
        if (table->slots[i].deadline_ns < next)
            next = table->slots[i].deadline_ns;
    return next;
}

/*
 * Each pass picks the earliest due timer, so callbacks run in deadline order;
 * "fired" bits keep a timer that re-arms itself into the past from running
 * twice in one call (which would starve the poll loop).
 */
unsigned timer_run_due(struct timer_table *table, uint64_t now_ns)
{
    uint8_t fired[CONFIG_MAX_TIMERS] = {0};
    unsigned count = 0;
    for (;;) {
        struct timer_slot *due = NULL;
        unsigned due_index = 0;
        for (unsigned i = 0; i < table->count; i++) {
            struct timer_slot *slot = &table->slots[i];
            if (!fired[i] && slot->deadline_ns <= now_ns &&
                (due == NULL || slot->deadline_ns < due->deadline_ns)) {
                due = slot;
                due_index = i;
            }
        }
        if (due == NULL)
            return count;
        fired[due_index] = 1;
        due->deadline_ns = TIMER_NEVER;
        /* cert: indirect call, targets are the callbacks given to timer_add */
        due->callback(due->context, now_ns);
        count++;
    }
}

static struct timer_table kernel_timers;

struct timer_table *timer_kernel_table(void)
{
    return &kernel_timers;
}
