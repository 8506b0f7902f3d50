/* The ftprobe test application (tests/node/ftprobe.c). */
#ifndef TESTS_NODE_FTPROBE_H
#define TESTS_NODE_FTPROBE_H

#include "node/tori.h"

struct tori_result tori_test_app_ftprobe(const struct tori_args *args);

#endif /* TESTS_NODE_FTPROBE_H */
