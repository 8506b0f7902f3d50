/*
 * The torus and mesh shapes the geometry and routing tests walk: 1-D, 2-D,
 * 3-D, 5-D and 6-D, odd and even sizes, sizes 1 and 2 included.  Each shape
 * is tried under every mesh pattern below.
 */
#ifndef TESTS_NET_SHAPES_H
#define TESTS_NET_SHAPES_H

#include <stdbool.h>
#include <stdint.h>

#include "config/tori_config.h"

struct test_shape {
    unsigned dims;
    uint32_t size[CONFIG_MAX_DIMS];
};

static const struct test_shape test_shapes[] = {
    {1, {1}},          {1, {2}},          {1, {3}},          {1, {4}},
    {1, {7}},          {1, {8}},          {1, {16}},         {2, {1, 1}},
    {2, {2, 2}},       {2, {3, 4}},       {2, {5, 2}},       {2, {1, 6}},
    {2, {4, 4}},       {2, {7, 5}},       {3, {2, 2, 2}},    {3, {3, 3, 3}},
    {3, {4, 3, 2}},    {3, {1, 2, 5}},    {3, {2, 1, 2}},    {3, {4, 4, 4}},
    {5, {2, 3, 2, 1, 3}}, {5, {3, 3, 3, 3, 3}}, {5, {2, 2, 2, 2, 2}},
    {5, {4, 1, 3, 2, 2}}, {6, {2, 2, 2, 2, 2, 2}}, {6, {1, 3, 1, 2, 1, 4}},
};
#define TEST_SHAPE_COUNT (sizeof(test_shapes) / sizeof(test_shapes[0]))

/* Mesh patterns: all torus, all mesh, even dimensions mesh, odd ones mesh. */
#define TEST_MESH_PATTERNS 4
static inline bool test_mesh(unsigned pattern, unsigned dim)
{
    switch (pattern) {
    case 0: return false;
    case 1: return true;
    case 2: return dim % 2 == 0;
    default: return dim % 2 == 1;
    }
}

#endif /* TESTS_NET_SHAPES_H */
