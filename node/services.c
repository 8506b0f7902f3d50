/*
 * The kernel's services hook (kernel/services.h) in the product images: the
 * node's services.  Test images link a module of their own instead.
 */
#include "kernel/services.h"

#include "node/node.h"

void kernel_services_init(const struct personality *personality)
{
    node_init(personality);
}

void kernel_services_enter_run_phase(void)
{
    /* The node's services need nothing at the seal. */
}
