/* The greedy test application (tests/node/greedy.c). */
#ifndef TESTS_NODE_GREEDY_H
#define TESTS_NODE_GREEDY_H

#include "node/tori.h"

struct tori_result tori_test_app_greedy(const struct tori_args *args);

#endif /* TESTS_NODE_GREEDY_H */
