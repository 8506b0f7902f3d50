/* Variant malloc-after-init (the QEMU test qemu.malloc_after_init, not a
 * cert test): a late allocation, which the sealed heap must catch with a
 * panic before the node reports ready. */
#include <stdlib.h>

#include "tests/cert/variants/cert_variant.h"

void cert_variant_run(void)
{
    /* The pointer itself is volatile: gcc deletes a malloc whose result is
     * never used, and the store keeps it. */
    void *volatile late = malloc(64);
    (void)late;
}
