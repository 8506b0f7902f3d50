/*
 * Board "qemu-virt": board/board.h on QEMU's virt machine (Cortex-A15,
 * GICv2).  Console: PL011, polled both ways.  Clock: the generic timer's
 * virtual counter.  Idle: WFI with IRQs masked, woken through the GIC by the
 * virtual timer, console input or an enabled virtio interrupt.  Personality: the block the
 * loader wrote at QEMU_VIRT_PERSONALITY_ADDRESS.
 */
#include "board/board.h"

#include <stdbool.h>

#include "board/qemu-virt/board_irq.h"
#include "board/qemu-virt/generic_timer.h"
#include "board/qemu-virt/memory_map.h"
#include "config/tori_config.h"
#include "board/qemu-virt/pl011.h"
#include "kernel/panic.h"
#include "kernel/personality.h"

void board_init(void)
{
    pl011_init();
    board_irq_init();
    if (!generic_timer_init())
        kernel_panic("qemu-virt: CNTFRQ reads 0, expected the generic timer's "
                     "frequency (62500000 on QEMU)");
    if (!board_irq_enable(GENERIC_TIMER_VIRTUAL_IRQ) ||
        !board_irq_enable(QEMU_VIRT_UART_IRQ))
        kernel_panic("qemu-virt: GIC lacks the virtual timer (27) or UART (33) "
                     "interrupt, expected QEMU's virt machine with GICv2");
}

const char *board_name(void)
{
    return "qemu-virt";
}

uint64_t board_now_ns(void)
{
    return generic_timer_now_ns();
}

void board_console_write(const char *bytes, size_t length)
{
    pl011_write(bytes, length);
}

size_t board_console_read(char *buffer, size_t capacity)
{
    return pl011_read(buffer, capacity);
}

const uint8_t *board_personality_block(size_t *length)
{
    const volatile uint8_t *block =
        (const volatile uint8_t *)QEMU_VIRT_PERSONALITY_ADDRESS;
    /* No magic: the loader wrote nothing (RAM starts zeroed), "missing". */
    uint32_t magic = (uint32_t)block[0] | (uint32_t)block[1] << 8 |
                     (uint32_t)block[2] << 16 | (uint32_t)block[3] << 24;
    if (magic != PERSONALITY_MAGIC) {
        *length = 0;
        return NULL;
    }
    /* The whole page is the block's; the decoder checks its size field. */
    *length = QEMU_VIRT_PERSONALITY_REGION_SIZE;
    return (const uint8_t *)QEMU_VIRT_PERSONALITY_ADDRESS;
}

/* A job region that is all zero holds no job (RAM starts zeroed); anything
 * else is the decoder's to judge, so a damaged block halts the node. */
const uint8_t *board_job_block(size_t *length)
{
    const volatile uint8_t *block = (const volatile uint8_t *)QEMU_VIRT_JOB_ADDRESS;
    uint8_t any = 0;
    for (unsigned i = 0; i < QEMU_VIRT_JOB_REGION_SIZE; i++)
        any |= block[i];
    if (any == 0) {
        *length = 0;
        return NULL;
    }
    *length = QEMU_VIRT_JOB_REGION_SIZE;
    return (const uint8_t *)QEMU_VIRT_JOB_ADDRESS;
}

_Static_assert(QEMU_VIRT_KEY_REGION_SIZE == BOARD_KEY_BYTES, "one key block size");

/* The key the loader wrote at QEMU_VIRT_KEY_ADDRESS (tori-emu does for
 * every keyed run, job block or not), as host nodes take --key-file.  Read
 * once and cleared, so that it lies in one place only (the network's). */
bool board_link_key(uint8_t key[BOARD_KEY_BYTES])
{
    volatile uint8_t *block = (volatile uint8_t *)QEMU_VIRT_KEY_ADDRESS;
    uint8_t any = 0;
    for (unsigned i = 0; i < BOARD_KEY_BYTES; i++) {
        key[i] = block[i];
        any |= key[i];
        block[i] = 0;
    }
    return any != 0;
}

/* A QEMU node with no key (`tori-emu --auth off`, to measure the tag's
 * cost, or a QEMU started by hand without the key blob) runs keyless.  Its
 * links are the launcher's UDP sockets, each connected to its peer's
 * address. */
bool board_keyless_allowed(void)
{
    return true;
}

/* "BOOT", the count, and the personality CRC it belongs to: a different
 * personality (a new job) starts counting again. */
#define BOOT_RECORD_MAGIC 0x544F4F42u

struct boot_record {
    uint32_t magic;
    uint32_t resets;
    uint32_t personality_crc;
};

uint32_t board_reset_count(void)
{
    static bool counted;
    static uint32_t resets;
    if (counted)
        return resets;
    counted = true;
    volatile struct boot_record *record =
        (volatile struct boot_record *)QEMU_VIRT_BOOT_RECORD_ADDRESS;
    const volatile uint8_t *block =
        (const volatile uint8_t *)QEMU_VIRT_PERSONALITY_ADDRESS;
    uint32_t crc = (uint32_t)block[60] | (uint32_t)block[61] << 8 |
                   (uint32_t)block[62] << 16 | (uint32_t)block[63] << 24;
    if (record->magic == BOOT_RECORD_MAGIC && record->personality_crc == crc)
        resets = record->resets + 1;
    record->magic = BOOT_RECORD_MAGIC;
    record->resets = resets;
    record->personality_crc = crc;
    return resets;
}

_Static_assert(CONFIG_CHECKPOINT_STORE_BYTES <= QEMU_VIRT_CHECKPOINT_REGION_SIZE,
               "the checkpoint store must fit its window in the memory map");

uint8_t *board_checkpoint_store(size_t *bytes, bool *survives_reset)
{
    *bytes = CONFIG_CHECKPOINT_STORE_BYTES;
    *survives_reset = true;
    return (uint8_t *)QEMU_VIRT_CHECKPOINT_ADDRESS;
}

_Static_assert(CONFIG_CHECKPOINT_MIRROR_BYTES <= QEMU_VIRT_MIRROR_REGION_SIZE,
               "the checkpoint mirror must fit its window in the memory map");

uint8_t *board_checkpoint_mirror(size_t *bytes)
{
    *bytes = CONFIG_CHECKPOINT_MIRROR_BYTES;
    return (uint8_t *)QEMU_VIRT_MIRROR_ADDRESS;
}

void board_idle_until(uint64_t deadline_ns)
{
    if (deadline_ns != UINT64_MAX) {
        if (deadline_ns <= generic_timer_now_ns())
            return;
        generic_timer_arm_at(deadline_ns); /* nothing written when unchanged */
    } else {
        generic_timer_disarm();
    }
    /* IRQs stay masked in the CPSR: a pending enabled interrupt at the GIC
     * ends the WFI without being taken, and one already pending ends it at
     * once, so nothing raised since the last poll is slept through. */
    __asm__ volatile("dsb\n\twfi" : : : "memory");
    /* Drop an expired timer's line before ending its interrupt, or it
     * re-pends; one still ahead (a frame woke us) stays armed, so that the
     * next sleep to the same deadline costs QEMU no timer update. */
    if (generic_timer_expired())
        generic_timer_disarm();
    board_irq_acknowledge_pending();
}

/*
 * A halted node prints nothing more and wakes for nothing: the kernel's last
 * console line before this is its event=panic (or event=halt) line, which
 * is how the launcher and tests know; QEMU keeps running, at about 0% of a
 * host core, until it is stopped or reset.
 */
_Noreturn void board_halt(int code)
{
    (void)code; /* the panic event line before this says why */
    generic_timer_disarm();
    board_irq_shutdown(); /* nothing may wake the WFI below: 0% host CPU */
    for (;;)
        __asm__ volatile("wfi" : : : "memory");
}
