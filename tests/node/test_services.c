/*
 * The services module (kernel/services.h) of the host node's test build
 * (tori-node-test): the node's own services and shipped applications, plus
 * the test applications (greedy, stale, ftprobe).  Linked in place of node/services.c; the
 * product images never hold it.
 */
#include "kernel/job.h"
#include "kernel/services.h"
#include "node/node.h"
#include "tests/node/ftprobe.h"
#include "tests/node/greedy.h"
#include "tests/node/stale.h"

void kernel_services_init(const struct personality *personality)
{
    node_init(personality);
}

void kernel_services_run(void)
{
    uint8_t app = 0;
    const struct tori_args *args = node_job_begin(&app);
    if (args == NULL)
        return;
    struct tori_result outcome;
    if (app == JOB_APP_GREEDY) {
        outcome = tori_test_app_greedy(args);
    } else if (app == JOB_APP_STALE) {
        outcome = tori_test_app_stale(args);
    } else if (app == JOB_APP_FTPROBE) {
        outcome = tori_test_app_ftprobe(args);
    } else if (!node_run_shipped_app(app, args, &outcome)) {
        node_job_missing(app);
        return;
    }
    node_job_end(&outcome);
}

void kernel_services_enter_run_phase(void)
{
    /* The node's services need nothing at the seal. */
}
