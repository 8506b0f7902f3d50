#include "kernel/poll.h"

#include "board/board.h"
#include "config/tori_config.h"
#include "kernel/console_output.h"
#include "kernel/panic.h"
#include "kernel/timer.h"

/* Bytes of console output written per idle pass (about 40 us on QEMU). */
#define POLL_CONSOLE_SLICE 32

struct poller {
    const char *name;
    poll_fn poll;
    void *context;
};

static struct poller pollers[CONFIG_MAX_POLLERS];
static unsigned poller_count;
static bool stop_requested;

void poll_register(const char *name, poll_fn poller, void *context)
{
    if (poller_count >= CONFIG_MAX_POLLERS)
        kernel_panic("poll: poller table full (raise CONFIG_MAX_POLLERS)");
    pollers[poller_count].name = name;
    pollers[poller_count].poll = poller;
    pollers[poller_count].context = context;
    poller_count++;
}

unsigned poll_once(void)
{
    unsigned work = 0;
    for (unsigned i = 0; i < poller_count; i++)
        /* cert: indirect call, targets are the pollers given to poll_register */
        work += pollers[i].poll(pollers[i].context, board_now_ns());
    work += timer_run_due(timer_kernel_table(), board_now_ns());
    return work;
}

void poll_stop(void)
{
    stop_requested = true;
}

void poll_pass(void)
{
    if (poll_once() != 0)
        return;
    /* Console output is the lowest priority: a slice at a time, so a
     * frame arriving meanwhile waits at most one slice. */
    if (console_output_drain(POLL_CONSOLE_SLICE) == 0)
        board_idle_until(timer_next_deadline(timer_kernel_table()));
}

void poll_run(void)
{
    stop_requested = false;
    while (!stop_requested)
        poll_pass();
    console_output_flush();
}
