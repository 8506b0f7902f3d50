/* The init heap grows during init and panics, naming phase and caller, once
 * the run phase has sealed it. */
#include "config/tori_config.h"
#include "kernel/heap.h"
#include "kernel/phase.h"
#include "tests/check.h"
#include "tests/kernel/test_board.h"

int main(void)
{
    test_board_reset();
    CHECK(kernel_phase() == KERNEL_PHASE_INIT);
    CHECK(!heap_is_sealed());
    char *first = heap_grow(128, 0x1000);
    char *second = heap_grow(64, 0x1000);
    CHECK(second == first + 128);
    CHECK(heap_used() == 192);
    CHECK(heap_grow(-64, 0x1000) == second + 64);
    CHECK(heap_used() == 128);

    /* Asking for more than the region panics instead of running off it. */
    if (setjmp(test_board_halt_jump) == 0) {
        heap_grow(CONFIG_INIT_HEAP_SIZE, 0x2000);
        CHECK(!"heap_grow beyond the region returned");
    }
    CHECK(test_board_halt_code == 70);
    CHECK_CONTAINS(test_board_console_text(), "init heap exhausted");

    test_board_reset();
    kernel_enter_run_phase();
    CHECK(heap_is_sealed());
    CHECK(kernel_phase() == KERNEL_PHASE_RUN);
    if (setjmp(test_board_halt_jump) == 0) {
        heap_grow(16, 0xdeadbeef);
        CHECK(!"heap_grow after sealing returned");
    }
    CHECK(test_board_halt_code == 70);
    CHECK_CONTAINS(test_board_console_text(), "event=panic");
    CHECK_CONTAINS(test_board_console_text(), "caller=0xdeadbeef");
    CHECK_CONTAINS(test_board_console_text(),
                   "reason=\"heap: allocation after init (phase=run) is "
                   "forbidden, caller=0xdeadbeef\"");
    CHECK(heap_used() == 128); /* nothing was handed out */
    return check_report("test_heap_seal");
}
