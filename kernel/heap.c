#include "kernel/heap.h"

#include "config/tori_config.h"
#include "kernel/panic.h"
#include "kernel/phase.h"
#include "lib/format.h"

/* The only memory newlib can have; static so no heap grows into free RAM. */
static _Alignas(8) unsigned char init_heap[CONFIG_INIT_HEAP_SIZE];
static size_t heap_break;
static bool sealed;

void *heap_grow(ptrdiff_t increment, uintptr_t caller)
{
    if (sealed) {
        /* Keep the message short: it is built without any allocation. */
        static char reason[96] = "heap: allocation after init (phase=";
        unsigned n = 35;
        const char *phase = kernel_phase_name(kernel_phase());
        while (*phase != '\0')
            reason[n++] = *phase++;
        const char *tail = ") is forbidden, caller=";
        while (*tail != '\0')
            reason[n++] = *tail++;
        n += format_hex(&reason[n], caller);
        reason[n] = '\0';
        kernel_panic_at(reason, caller);
    }
    if (increment < 0 ? (size_t)(-increment) > heap_break
                      : (size_t)increment > sizeof init_heap - heap_break)
        kernel_panic_at("heap: init heap exhausted (raise CONFIG_INIT_HEAP_SIZE)",
                        caller);
    void *old_break = &init_heap[heap_break];
    heap_break = (size_t)((ptrdiff_t)heap_break + increment);
    return old_break;
}

void heap_seal(void)
{
    sealed = true;
}

bool heap_is_sealed(void)
{
    return sealed;
}

size_t heap_used(void)
{
    return heap_break;
}
