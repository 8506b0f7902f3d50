#include "kernel/main.h"

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/heap.h"
#include "kernel/panic.h"
#include "kernel/personality.h"
#include "kernel/phase.h"
#include "kernel/poll.h"
#include "kernel/services.h"
#include "kernel/stack_report.h"
#include "kernel/timer.h"

static struct personality personality;
static struct job job;
static bool has_job;

static void read_personality(void)
{
    size_t length = 0;
    const uint8_t *block = board_personality_block(&length);
    struct personality_error error;
    if (!personality_decode(block, length, &personality, &error)) {
        static char reason[192];
        personality_format_error(&error, reason, sizeof reason);
        kernel_panic(reason);
    }
    event_set_node(personality.node_id);
    /* A reset node is a new life: nothing of its old one may be accepted. */
    personality.boot_incarnation += board_reset_count();
}

static void read_job(void)
{
    size_t length = 0;
    const uint8_t *block = board_job_block(&length);
    if (block == NULL)
        return;
    struct personality_error error;
    if (!job_decode(block, length, &job, &error)) {
        static char reason[192];
        job_format_error(&error, reason, sizeof reason);
        kernel_panic(reason);
    }
    has_job = true;
}

const struct job *kernel_job(void)
{
    return has_job ? &job : NULL;
}

_Noreturn void kernel_main(void)
{
    board_init();
    event_begin("boot");
    event_add_str("board", board_name());
    event_end();

    read_personality();
    read_job();
    timer_table_init(timer_kernel_table());
    console_command_init();
    kernel_services_init(&personality);
    stack_report_init();

    kernel_enter_run_phase();
    kernel_services_enter_run_phase();
    event_begin("ready");
    event_add_u64("incarnation", personality.boot_incarnation);
    event_add_u64("nodes", personality_node_count(&personality));
    event_add_u64("heap_used", heap_used());
    event_add_u64("resets", board_reset_count());
    event_add_str("app", has_job ? job_app_name(job.app) : "none");
    event_end();

    for (;;) {
        poll_run();
        kernel_services_run();
    }
}
