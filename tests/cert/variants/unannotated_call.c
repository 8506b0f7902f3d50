/* Variant unannotated-call: a call through a function pointer that
 * cert/indirect_calls.conf does not list.  The stack check must name
 * cert_variant_call_hook. */
#include "tests/cert/variants/cert_variant.h"

static volatile unsigned cert_variant_calls;

static void cert_variant_target(void)
{
    cert_variant_calls++;
}

static void (*volatile cert_variant_hook)(void) = cert_variant_target;

__attribute__((noinline)) static void cert_variant_call_hook(void)
{
    cert_variant_hook();
}

void cert_variant_run(void)
{
    cert_variant_call_hook();
}
