/*
 * The kernel's services hook (kernel/services.h) in the product images: the
 * node's services.  Test images link a module of their own instead.
 */
#include "kernel/services.h"

#include "node/node.h"
#include "node/tori.h"

void kernel_services_init(const struct personality *personality)
{
    node_init(personality);
}

/* The job's application, once the poll loop stopped for it. */
void kernel_services_run(void)
{
    uint8_t app = 0;
    const struct tori_args *args = node_job_begin(&app);
    if (args == NULL)
        return;
    struct tori_result outcome;
    if (!node_run_shipped_app(app, args, &outcome)) {
        node_job_missing(app);
        return;
    }
    node_job_end(&outcome);
}

void kernel_services_enter_run_phase(void)
{
    /* The node's services need nothing at the seal. */
}
