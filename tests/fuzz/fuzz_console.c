/*
 * The console command parser (kernel/console_command.h) with every command
 * a product node registers (node/: ping, view, suspect, start, comm, stats,
 * link, flood; kernel: help, halt, stack): a whole node, node 0 of a 2x2x2
 * torus, on the kernel tests' board (tests/kernel/test_board.h) and a link
 * driver whose cables lead nowhere.  Any bytes typed at it are answered
 * with event lines; none may panic the node.  `halt` returns here through
 * the test board; the node is the same from one input to the next (the
 * command table is filled once), so a crash names the input that showed
 * it, not always all of its cause.
 */
#include <setjmp.h>
#include <string.h>

#include "kernel/console_command.h"
#include "kernel/job.h"
#include "kernel/main.h"
#include "kernel/personality.h"
#include "kernel/poll.h"
#include "kernel/stack_report.h"
#include "kernel/timer.h"
#include "net/torus/driver.h"
#include "node/node.h"
#include "tests/fuzz/fuzz.h"
#include "tests/kernel/test_board.h"

#define PANIC_CODE 70 /* kernel_panic's board_halt code (kernel/panic.c) */

static struct personality personality;
static bool started;
static struct torus_driver_counters driver_counters[CONFIG_MAX_LINKS];

/* The link driver: every link has a cable; frames sent vanish, none arrive. */
bool torus_driver_init(const struct torus_geometry *geometry, uint32_t rank,
                       uint32_t *link_mask, const char **error)
{
    *link_mask = torus_geometry_link_mask(geometry, rank);
    *error = NULL;
    return true;
}

bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length)
{
    (void)frame;
    (void)length;
    if (link < CONFIG_MAX_LINKS)
        driver_counters[link].sent++;
    return true;
}

size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity)
{
    (void)link;
    (void)buffer;
    (void)capacity;
    return 0;
}

const struct torus_driver_counters *torus_driver_counters(unsigned link)
{
    return &driver_counters[link < CONFIG_MAX_LINKS ? link : 0];
}

const char *torus_driver_name(void)
{
    return "fuzz";
}

/* No job block: the node runs no application (kernel/main.c's, not linked). */
const struct job *kernel_job(void)
{
    return NULL;
}

static void boot(void)
{
    memset(&personality, 0, sizeof personality);
    personality_set_defaults(&personality);
    personality.dims = 3;
    for (unsigned d = 0; d < 3; d++)
        personality.dim_size[d] = 2;
    personality.member_count = 8;
    struct personality_error error;
    FUZZ_CHECK(personality_validate(&personality, &error), "personality: %s", error.field);
    test_board_reset();
    if (setjmp(test_board_halt_jump) != 0)
        FUZZ_CHECK(false, "the node panicked at boot: %s", test_board_console_text());
    timer_table_init(timer_kernel_table());
    console_command_init();
    node_init(&personality);
    stack_report_init();
    started = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!started)
        boot();
    test_board_reset();
    test_board_clock_ns = 1000000000u;
    static volatile unsigned pass;
    pass = 0;
    if (setjmp(test_board_halt_jump) != 0) {
        FUZZ_CHECK(test_board_halt_code != PANIC_CODE, "a console line panicked the node: %s",
                   test_board_console_text());
        return 0; /* `halt`: the node stopped as asked */
    }
    /* Fed in pieces, as the console poller reads them. */
    for (size_t at = 0; at < size; at += 64) {
        size_t piece = size - at < 64 ? size - at : 64;
        console_command_feed((const char *)data + at, (unsigned)piece, test_board_clock_ns);
    }
    console_command_feed("\n", 1, test_board_clock_ns);
    for (; pass < 4; pass++) { /* what the commands started runs a little */
        test_board_clock_ns += 20000000u;
        (void)poll_once();
    }
    return 0;
}
