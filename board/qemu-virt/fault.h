/*
 * Faults on the qemu-virt node: every exception vector ends here (start.S),
 * since tori has no interrupt handlers.  The report is a panic event line
 * naming the fault, the faulting instruction and, for aborts, the address
 * and status, written without allocating; then the node halts.
 *
 * The FAULT_* numbers are shared with start.S, hence plain #defines.
 */
#ifndef BOARD_QEMU_VIRT_FAULT_H
#define BOARD_QEMU_VIRT_FAULT_H

#define FAULT_UNDEFINED_INSTRUCTION 1
#define FAULT_SUPERVISOR_CALL 2
#define FAULT_PREFETCH_ABORT 3
#define FAULT_DATA_ABORT 4
#define FAULT_RESERVED_VECTOR 5
#define FAULT_UNEXPECTED_IRQ 6
#define FAULT_UNEXPECTED_FIQ 7

#ifndef __ASSEMBLER__
#include <stdint.h>

/* Called by the vectors in SVC mode on a fresh stack; never returns. */
_Noreturn void board_fault(uint32_t kind, uint32_t exception_lr,
                           uint32_t saved_psr);
#endif

#endif /* BOARD_QEMU_VIRT_FAULT_H */
