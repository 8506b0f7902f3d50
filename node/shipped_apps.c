/*
 * The applications shipped with tori (apps/), by job id: one direct call
 * per application, resolved at link time.  Shared by the product services
 * (node/services.c) and the test images' services, which add test
 * applications of their own (tests/node/).
 */
#include "kernel/job.h"
#include "node/node.h"
#include "node/tori.h"

bool node_run_shipped_app(uint8_t app, const struct tori_args *args,
                          struct tori_result *outcome)
{
    switch (app) {
    case JOB_APP_ALLREDUCE:
        *outcome = tori_app_allreduce(args);
        return true;
    case JOB_APP_STENCIL:
        *outcome = tori_app_stencil(args);
        return true;
    case JOB_APP_PINGPONG:
        *outcome = tori_app_pingpong(args);
        return true;
    default:
        return false;
    }
}
