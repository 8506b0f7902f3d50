/* Variant pthread-symbol: a thread-library entry point linked into the
 * node.  The threads check must name pthread_mutex_lock. */
#include "tests/cert/variants/cert_variant.h"

int pthread_mutex_lock(void *mutex);

int pthread_mutex_lock(void *mutex)
{
    return mutex == 0 ? -1 : 0;
}

void cert_variant_run(void)
{
    static int lock;
    (void)pthread_mutex_lock(&lock);
}
