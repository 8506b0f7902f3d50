/* Variant recursion: two functions calling each other (a cycle, not just
 * self-recursion).  The stack check must name the cycle. */
#include "tests/cert/variants/cert_variant.h"

static volatile unsigned cert_variant_steps;

__attribute__((noinline, noipa)) static void cert_variant_walk_odd(unsigned depth);

__attribute__((noinline, noipa)) static void cert_variant_walk_even(unsigned depth)
{
    cert_variant_steps++;
    if (depth > 0)
        cert_variant_walk_odd(depth - 1);
    cert_variant_steps++;
}

__attribute__((noinline, noipa)) static void cert_variant_walk_odd(unsigned depth)
{
    cert_variant_steps++;
    if (depth > 0)
        cert_variant_walk_even(depth - 1);
    cert_variant_steps++;
}

void cert_variant_run(void)
{
    cert_variant_walk_even(cert_variant_steps & 7u);
}
