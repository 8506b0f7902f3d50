#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/heap.h"
#include "kernel/node.h"
#include "kernel/panic.h"
#include "kernel/phase.h"
#include "kernel/poll.h"
#include "kernel/stack_report.h"
#include "kernel/timer.h"

#ifdef TORI_TEST_VARIANT_MALLOC_AFTER_INIT
#include <stdlib.h>
#endif
#ifdef TORI_TEST_VARIANT_CERT
#include "tests/cert/variants/cert_variant.h"
#endif

static struct node node;

const struct node *node_state(void)
{
    return &node;
}

static void node_read_personality(void)
{
    size_t length = 0;
    const uint8_t *block = board_personality_block(&length);
    struct personality_error error;
    if (!personality_decode(block, length, &node.personality, &error)) {
        static char reason[192];
        personality_format_error(&error, reason, sizeof reason);
        kernel_panic(reason);
    }
    event_set_node(node.personality.node_id);
    /* A reset node is a new life: nothing of its old one may be accepted. */
    node.personality.boot_incarnation += board_reset_count();
}

_Noreturn void kernel_main(void)
{
    board_init();
    event_begin("boot");
    event_add_str("board", board_name());
    event_end();

    node_read_personality();
    timer_table_init(timer_kernel_table());
    console_command_init();
    node_network_init(&node);
    node_membership_init(&node);
    stack_report_init();

    kernel_enter_run_phase();
#ifdef TORI_TEST_VARIANT_CERT
    /* Test-only image: one deliberate certification violation (tests/cert). */
    cert_variant_run();
#endif
#ifdef TORI_TEST_VARIANT_MALLOC_AFTER_INIT
    /* Test-only image: proves the sealed heap catches a late allocation.
     * The pointer itself is volatile: gcc deletes a malloc whose result is
     * never used, and the store keeps it. */
    void *volatile late = malloc(64);
    (void)late;
#endif
    event_begin("ready");
    event_add_u64("incarnation", node.personality.boot_incarnation);
    event_add_u64("nodes", personality_node_count(&node.personality));
    event_add_u64("heap_used", heap_used());
    event_add_u64("resets", board_reset_count());
    event_end();

    poll_run();
    board_halt(0);
}
