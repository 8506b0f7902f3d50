/*
 * Start-up of the qemu-virt node: the ELF entry point and the exception
 * vectors.  QEMU enters _start in SVC mode with the MMU off (from node.elf
 * via -kernel, or node.bin via -device loader,...,cpu-num=0).  From here:
 * mask interrupts, install the vectors, paint and take the one stack, copy
 * .data if it was loaded elsewhere, zero .bss, turn the MMU on (mmu.c), and
 * call kernel_main(), which never returns.
 *
 * The vectors are not interrupt handlers: IRQ and FIQ stay masked in the
 * CPSR for the node's whole life (the GIC only wakes WFI), so every entry,
 * IRQ and FIQ included, reports a fault and halts.
 */
#include "board/qemu-virt/fault.h"
#include "board/qemu-virt/stack.h"

#define MODE_SVC 0x13

    .syntax unified
    .arm

    .section .text.tori.start, "ax", %progbits
    .global _start
    .type _start, %function
_start:
    cpsid   aif, #MODE_SVC          @ SVC mode, IRQ, FIQ and async aborts masked

    ldr     r0, =exception_vectors
    mcr     p15, 0, r0, c12, c0, 0  @ VBAR (SCTLR.V is 0 at reset: low vectors)
    isb
    cpsie   a                       @ asynchronous aborts are reported; IRQ, FIQ never

    @ Paint the stack so that board_stack_high_water() can find its depth.
    ldr     r0, =__stack_bottom
    ldr     r1, =__stack_top
    ldr     r2, =BOARD_STACK_PAINT
1:  cmp     r0, r1
    strlo   r2, [r0], #4
    blo     1b
    ldr     sp, =__stack_top

    @ .data: copy only when it was loaded somewhere else than where it runs.
    ldr     r0, =__data_start
    ldr     r1, =__data_end
    ldr     r2, =__data_load_start
    cmp     r0, r2
    beq     3f
2:  cmp     r0, r1
    ldrlo   r3, [r2], #4
    strlo   r3, [r0], #4
    blo     2b
3:
    @ .bss: QEMU zeroes it on an ELF load, but not for node.bin or a reset.
    ldr     r0, =__bss_start
    ldr     r1, =__bss_end
    mov     r2, #0
4:  cmp     r0, r1
    strlo   r2, [r0], #4
    blo     4b

    bl      mmu_enable
    bl      kernel_main
5:  wfi                             @ kernel_main never returns; just in case
    b       5b
    .size _start, . - _start

    .section .text.tori.vectors, "ax", %progbits
    .balign 32
exception_vectors:
    b       _start                  @ reset
    b       vector_undefined
    b       vector_supervisor_call
    b       vector_prefetch_abort
    b       vector_data_abort
    b       vector_reserved         @ hypervisor trap: never taken at PL1
    b       vector_irq
    b       vector_fiq

/*
 * Every entry passes (kind, lr, spsr) to board_fault() on the top of the one
 * stack: the interrupted program never resumes, and the SVC stack pointer
 * may be what went wrong, so nothing on the old stack is kept.
 */
vector_undefined:
    mov     r0, #FAULT_UNDEFINED_INSTRUCTION
    b       fault_entry
vector_supervisor_call:
    mov     r0, #FAULT_SUPERVISOR_CALL
    b       fault_entry
vector_prefetch_abort:
    mov     r0, #FAULT_PREFETCH_ABORT
    b       fault_entry
vector_data_abort:
    mov     r0, #FAULT_DATA_ABORT
    b       fault_entry
vector_reserved:
    mov     r0, #FAULT_RESERVED_VECTOR
    b       fault_entry
vector_irq:
    mov     r0, #FAULT_UNEXPECTED_IRQ
    b       fault_entry
vector_fiq:
    mov     r0, #FAULT_UNEXPECTED_FIQ
    b       fault_entry

fault_entry:
    mov     r1, lr
    mrs     r2, spsr
    cpsid   aif, #MODE_SVC          @ r0-r2 are not banked: they survive
    ldr     sp, =__stack_top
    bl      board_fault             @ never returns
6:  wfi
    b       6b

    .ltorg
