#include "kernel/phase.h"

#include "kernel/heap.h"

static enum kernel_phase current_phase = KERNEL_PHASE_INIT;

enum kernel_phase kernel_phase(void)
{
    return current_phase;
}

const char *kernel_phase_name(enum kernel_phase phase)
{
    return phase == KERNEL_PHASE_INIT ? "init" : "run";
}

void kernel_enter_run_phase(void)
{
    heap_seal();
    current_phase = KERNEL_PHASE_RUN;
}
