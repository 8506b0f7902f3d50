/* Variant big-frame: one function with an 8 KiB local buffer, over the
 * frame_max of cert/budgets.conf.  The stack check must name
 * cert_variant_big_frame. */
#include "tests/cert/variants/cert_variant.h"

static volatile unsigned cert_variant_seed = 3;
static volatile unsigned cert_variant_result;

__attribute__((noinline)) static unsigned cert_variant_big_frame(unsigned seed)
{
    volatile unsigned char buffer[8192];
    for (unsigned i = 0; i < sizeof buffer; i++)
        buffer[i] = (unsigned char)(seed + i);
    return buffer[seed % sizeof buffer];
}

void cert_variant_run(void)
{
    cert_variant_result = cert_variant_big_frame(cert_variant_seed);
}
