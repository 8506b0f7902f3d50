/* The static timer table: order, re-arming, capacity, next deadline. */
#include "kernel/timer.h"
#include "tests/check.h"

static int fire_log[16];
static int fire_count;
static struct timer_table table;
static timer_id rearming;

static void record(void *context, uint64_t now_ns)
{
    (void)now_ns;
    if (fire_count < 16)
        fire_log[fire_count] = *(int *)context;
    fire_count++;
}

static void rearm_in_past(void *context, uint64_t now_ns)
{
    record(context, now_ns);
    timer_arm(&table, rearming, now_ns - 1); /* already due again */
}

int main(void)
{
    static int labels[CONFIG_MAX_TIMERS + 1];
    for (int i = 0; i <= CONFIG_MAX_TIMERS; i++)
        labels[i] = i;

    timer_table_init(&table);
    CHECK(timer_next_deadline(&table) == TIMER_NEVER);
    timer_id a = timer_add(&table, "a", record, &labels[0]);
    timer_id b = timer_add(&table, "b", record, &labels[1]);
    timer_id c = timer_add(&table, "c", record, &labels[2]);
    CHECK(a == 0 && b == 1 && c == 2);
    CHECK(!timer_is_armed(&table, a));
    CHECK(timer_run_due(&table, 1000) == 0);

    timer_arm(&table, a, 300);
    timer_arm(&table, b, 100);
    timer_arm(&table, c, 200);
    CHECK(timer_next_deadline(&table) == 100);
    CHECK(timer_run_due(&table, 99) == 0);
    CHECK(timer_run_due(&table, 250) == 2);
    CHECK(fire_count == 2 && fire_log[0] == 1 && fire_log[1] == 2);
    CHECK(!timer_is_armed(&table, b) && timer_is_armed(&table, a));
    CHECK(timer_next_deadline(&table) == 300);

    timer_disarm(&table, a);
    CHECK(timer_next_deadline(&table) == TIMER_NEVER);
    timer_arm(&table, 99, 5);  /* unknown ids are ignored, never written */
    timer_arm(&table, -1, 5);
    CHECK(!timer_is_armed(&table, 99));

    /* A timer that re-arms into the past runs once per call, not forever. */
    fire_count = 0;
    rearming = timer_add(&table, "rearm", rearm_in_past, &labels[3]);
    timer_arm(&table, rearming, 10);
    CHECK(timer_run_due(&table, 500) == 1);
    CHECK(timer_run_due(&table, 501) == 1);
    CHECK(fire_count == 2);
    timer_disarm(&table, rearming);

    /* A wake-up-only timer fires (ending an idle wait) and does nothing else. */
    timer_id wakeup = timer_add_wakeup(&table, "wakeup");
    CHECK(wakeup >= 0);
    timer_arm(&table, wakeup, 600);
    CHECK(timer_next_deadline(&table) == 600);
    CHECK(timer_run_due(&table, 600) == 1);
    CHECK(fire_count == 2 && !timer_is_armed(&table, wakeup));

    /* Capacity is CONFIG_MAX_TIMERS; the next add fails cleanly. */
    while (table.count < CONFIG_MAX_TIMERS)
        CHECK(timer_add(&table, "fill", record, &labels[0]) >= 0);
    CHECK(timer_add(&table, "overflow", record, &labels[0]) == -1);
    CHECK(timer_add(&table, "null", NULL, NULL) == -1);
    return check_report("test_timer");
}
