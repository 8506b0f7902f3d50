#include "board/qemu-virt/fault.h"

#include <stdbool.h>

#include "board/board.h"
#include "kernel/panic.h"
#include "lib/format.h"

#define PSR_THUMB (1u << 5)

/* The reason text lives here: building it must not allocate. */
static char reason[160];
static unsigned reason_length;
static bool faulted;

static void append_text(const char *text)
{
    while (*text != '\0' && reason_length + 1 < sizeof reason)
        reason[reason_length++] = *text++;
}

static void append_hex(const char *key, uint32_t value)
{
    char digits[18];
    unsigned n = format_hex(digits, value);
    append_text(key);
    for (unsigned i = 0; i < n && reason_length + 1 < sizeof reason; i++)
        reason[reason_length++] = digits[i];
}

static uint32_t read_dfar(void)
{
    uint32_t value;
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(value));
    return value;
}

static uint32_t read_dfsr(void)
{
    uint32_t value;
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(value));
    return value;
}

static uint32_t read_ifar(void)
{
    uint32_t value;
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(value));
    return value;
}

static uint32_t read_ifsr(void)
{
    uint32_t value;
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(value));
    return value;
}

/* Where the exception happened, from the link register the vector saw. */
static uint32_t faulting_address(uint32_t kind, uint32_t lr, uint32_t psr)
{
    bool thumb = (psr & PSR_THUMB) != 0;
    switch (kind) {
    case FAULT_DATA_ABORT:
        return lr - 8;
    case FAULT_UNDEFINED_INSTRUCTION:
    case FAULT_SUPERVISOR_CALL:
        return lr - (thumb ? 2u : 4u);
    default: /* prefetch abort; IRQ/FIQ: the instruction not yet run */
        return lr - 4;
    }
}

static const char *fault_name(uint32_t kind)
{
    switch (kind) {
    case FAULT_UNDEFINED_INSTRUCTION: return "undefined instruction";
    case FAULT_SUPERVISOR_CALL: return "supervisor call";
    case FAULT_PREFETCH_ABORT: return "prefetch abort";
    case FAULT_DATA_ABORT: return "data abort";
    case FAULT_RESERVED_VECTOR: return "reserved vector";
    case FAULT_UNEXPECTED_IRQ: return "IRQ taken (IRQs must stay masked)";
    case FAULT_UNEXPECTED_FIQ: return "FIQ taken (FIQs must stay masked)";
    default: return "unknown exception";
    }
}

_Noreturn void board_fault(uint32_t kind, uint32_t exception_lr,
                           uint32_t saved_psr)
{
    if (faulted) {
        /* A fault while reporting one: say so with no formatting at all. */
        static const char again[] = "tori fault: second fault while reporting a fault\n";
        board_console_write(again, sizeof again - 1);
        board_halt(70);
    }
    faulted = true;

    uint32_t pc = faulting_address(kind, exception_lr, saved_psr);
    reason_length = 0;
    append_text("fault: ");
    append_text(fault_name(kind));
    if (kind == FAULT_DATA_ABORT) {
        append_hex(" far=", read_dfar());
        append_hex(" fsr=", read_dfsr());
    } else if (kind == FAULT_PREFETCH_ABORT) {
        append_hex(" far=", read_ifar());
        append_hex(" fsr=", read_ifsr());
    }
    append_hex(" psr=", saved_psr);
    reason[reason_length] = '\0';
    kernel_panic_at(reason, pc);
}
