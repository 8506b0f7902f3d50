/* The stale test application (tests/node/stale.c). */
#ifndef TESTS_NODE_STALE_H
#define TESTS_NODE_STALE_H

#include "node/tori.h"

struct tori_result tori_test_app_stale(const struct tori_args *args);

#endif /* TESTS_NODE_STALE_H */
