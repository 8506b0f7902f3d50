#include "board/qemu-virt/generic_timer.h"

#define NS_PER_SECOND 1000000000u

#define CNTV_CTL_ENABLE (1u << 0)

static uint32_t frequency_hz;
/* Nanoseconds per tick when a tick is a whole number of them (QEMU: 16). */
static uint32_t exact_ns_per_tick;

static uint32_t read_cntfrq(void)
{
    uint32_t value;
    __asm__ volatile("mrc p15, 0, %0, c14, c0, 0" : "=r"(value));
    return value;
}

static uint64_t read_cntvct(void)
{
    uint32_t low, high;
    /* isb: the counter is read after the instructions before it. */
    __asm__ volatile("isb\n\tmrrc p15, 1, %0, %1, c14" : "=r"(low), "=r"(high)
                     :
                     : "memory");
    return ((uint64_t)high << 32) | low;
}

static void write_cntv_cval(uint64_t ticks)
{
    __asm__ volatile("mcrr p15, 3, %0, %1, c14"
                     :
                     : "r"((uint32_t)ticks), "r"((uint32_t)(ticks >> 32)));
}

static void write_cntv_ctl(uint32_t value)
{
    __asm__ volatile("mcr p15, 0, %0, c14, c3, 1\n\tisb" : : "r"(value) : "memory");
}

bool generic_timer_init(void)
{
    write_cntv_ctl(0);
    frequency_hz = read_cntfrq();
    if (frequency_hz == 0)
        return false;
    exact_ns_per_tick = NS_PER_SECOND % frequency_hz == 0
                            ? NS_PER_SECOND / frequency_hz
                            : 0;
    return true;
}

uint64_t generic_timer_ticks_to_ns(uint64_t ticks)
{
    if (exact_ns_per_tick != 0)
        return ticks * exact_ns_per_tick;
    if (frequency_hz == 0) /* CNTFRQ unset: board_init is panicking about it */
        return 0;
    /* Whole seconds, then the remainder: remainder * 1e9 < 2^32 * 2^30. */
    uint64_t seconds = ticks / frequency_hz;
    uint64_t remainder = ticks % frequency_hz;
    return seconds * NS_PER_SECOND + remainder * NS_PER_SECOND / frequency_hz;
}

uint64_t generic_timer_ns_to_ticks(uint64_t ns)
{
    if (exact_ns_per_tick != 0)
        return ns / exact_ns_per_tick + (ns % exact_ns_per_tick != 0);
    if (frequency_hz == 0)
        return UINT64_MAX;
    uint64_t seconds = ns / NS_PER_SECOND;
    uint64_t remainder = ns % NS_PER_SECOND;
    /* seconds * frequency overflows only for deadlines centuries away. */
    if (seconds > UINT64_MAX / 2 / frequency_hz)
        return UINT64_MAX;
    uint64_t scaled = remainder * frequency_hz;
    return seconds * frequency_hz + scaled / NS_PER_SECOND +
           (scaled % NS_PER_SECOND != 0);
}

uint64_t generic_timer_now_ns(void)
{
    return generic_timer_ticks_to_ns(read_cntvct());
}

/* What the timer was last set to: every write to it costs QEMU a timer
 * update that wakes its main loop, so a sleep to the same deadline as the
 * last writes nothing (issue 20: an idle node wakes for every frame). */
static bool armed;
static uint64_t armed_ticks;

void generic_timer_arm_at(uint64_t deadline_ns)
{
    uint64_t ticks = generic_timer_ns_to_ticks(deadline_ns);
    if (armed && ticks == armed_ticks)
        return;
    write_cntv_cval(ticks);
    if (!armed)
        write_cntv_ctl(CNTV_CTL_ENABLE); /* IMASK clear: the line follows ISTATUS */
    armed = true;
    armed_ticks = ticks;
}

void generic_timer_disarm(void)
{
    if (armed) /* generic_timer_init wrote 0: armed mirrors CNTV_CTL */
        write_cntv_ctl(0);
    armed = false;
}

bool generic_timer_expired(void)
{
    return armed && read_cntvct() >= armed_ticks;
}
