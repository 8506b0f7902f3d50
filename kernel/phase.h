/*
 * The node's two phases.  During init, tables are set up and newlib may take
 * memory from the small init heap; kernel_enter_run_phase() seals the heap,
 * after which any request for memory panics (kernel/heap.h).
 */
#ifndef KERNEL_PHASE_H
#define KERNEL_PHASE_H

enum kernel_phase { KERNEL_PHASE_INIT, KERNEL_PHASE_RUN };

enum kernel_phase kernel_phase(void);
const char *kernel_phase_name(enum kernel_phase phase);
void kernel_enter_run_phase(void);

#endif /* KERNEL_PHASE_H */
