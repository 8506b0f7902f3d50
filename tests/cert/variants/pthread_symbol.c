/* Variant pthread-symbol: a thread-library entry point linked into the
 * node.  The threads check must name pthread_mutex_lock. */
#include "tests/cert/variants/cert_variant.h"

int pthread_mutex_lock(void *mutex);

static volatile int cert_variant_locked;

__attribute__((noinline)) int pthread_mutex_lock(void *mutex)
{
    cert_variant_locked = mutex != 0;
    return 0;
}

void cert_variant_run(void)
{
    static int lock;
    (void)pthread_mutex_lock(&lock);
}
