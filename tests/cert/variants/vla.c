/* Variant vla: a variable-length array on the stack.  The stack check must
 * name cert_variant_scratch_sum (dynamic frame), and the code check the
 * -Wvla warning in this file. */
#include <string.h>

#include "tests/cert/variants/cert_variant.h"

static volatile unsigned cert_variant_length = 16;
static volatile unsigned cert_variant_sum;

__attribute__((noinline)) static unsigned cert_variant_scratch_sum(unsigned length)
{
    unsigned char scratch[length];
    memset(scratch, 1, length);
    unsigned sum = 0;
    for (unsigned i = 0; i < length; i++)
        sum += scratch[i];
    return sum;
}

void cert_variant_run(void)
{
    cert_variant_sum = cert_variant_scratch_sum(cert_variant_length);
}
