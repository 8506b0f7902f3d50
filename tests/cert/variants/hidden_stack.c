/* Variant hidden-stack: stack use no static analysis can see (inline
 * assembly storing 32 KiB below sp without moving sp).  The runtime check
 * must find a measured high-water mark above the static bound. */
#include "tests/cert/variants/cert_variant.h"

__attribute__((noinline)) static void cert_variant_hidden_stack(void)
{
#if defined(__arm__)
    __asm__ volatile("mov r0, #0\n\t"
                     "sub r1, sp, #32768\n\t"
                     "str r0, [r1]"
                     :
                     :
                     : "r0", "r1", "memory");
#endif
}

void cert_variant_run(void)
{
    cert_variant_hidden_stack();
}
