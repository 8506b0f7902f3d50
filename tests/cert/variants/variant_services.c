/*
 * The services module (kernel/services.h) of a test variant image: the
 * node's own services, and the variant's deliberate fault right after the
 * heap is sealed (cert_variant.h).  Linked in place of node/services.c.
 */
#include "kernel/services.h"

#include "node/node.h"
#include "tests/cert/variants/cert_variant.h"

void kernel_services_init(const struct personality *personality)
{
    node_init(personality);
}

void kernel_services_run(void)
{
    /* A variant image polls and never stops the loop. */
}

void kernel_services_enter_run_phase(void)
{
    cert_variant_run();
}
