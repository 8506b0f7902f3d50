/* tori-bench-comm's tree model: the torus hops of the longest path from the
 * root down WORLD's radix-4 runs tree, which the model 2 L x hops charges
 * (a tree edge spans several hops; the depth alone undercounts them). */
#include <stdbool.h>
#include <stdint.h>

#include "net/torus/geometry.h"
#include "qemu/bench/bench_comm.h"
#include "tests/check.h"

static uint32_t path_hops(const char *dims)
{
    unsigned count = 0;
    uint32_t sizes[CONFIG_MAX_DIMS];
    bool mesh[CONFIG_MAX_DIMS] = {false};
    struct torus_geometry_error error;
    struct torus_geometry geometry;
    CHECK_EQ(torus_geometry_parse_dims(dims, &count, sizes, &error), TORUS_GEOMETRY_OK);
    CHECK_EQ(torus_geometry_init(&geometry, count, sizes, mesh, &error), TORUS_GEOMETRY_OK);
    return bench_comm_tree_path_hops(&geometry);
}

int main(void)
{
    _Static_assert(CONFIG_COMM_TREE_RADIX == 4, "the figures below are for radix 4");
    /* Two nodes: one edge of one hop. */
    CHECK_EQ(path_hops("2"), 1);
    /* A ring of 4: rank 0's children are 1, 2, 3; node 2 is 2 hops away. */
    CHECK_EQ(path_hops("4"), 2);
    /* 2x2x2 (node x + 2y + 4z): 0's children 1, 3, 5, 7; then 1-2, 3-4,
     * 5-6.  0-3 is 2 hops and 3-4 three: 5 hops, where the depth is 2. */
    CHECK_EQ(path_hops("2x2x2"), 5);
    /* 4x4x4: 9 hops over a depth of 3 (the simulator's collective-time
     * bound, tests/sim/app_collective_time.cmake, rests on the same 9). */
    CHECK_EQ(path_hops("4x4x4"), 9);
    return check_report("emu.bench_comm_model");
}
