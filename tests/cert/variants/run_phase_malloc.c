/* Variant run-phase-malloc: memory asked for after init.  The allocator
 * audit must name cert_variant_grow_cache. */
#include <stdlib.h>

#include "tests/cert/variants/cert_variant.h"

static void *volatile cert_variant_cache;

__attribute__((noinline)) static void cert_variant_grow_cache(void)
{
    cert_variant_cache = malloc(256);
}

void cert_variant_run(void)
{
    cert_variant_grow_cache();
}
