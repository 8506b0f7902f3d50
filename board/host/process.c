/*
 * What every board whose node is an operating-system process answers alike
 * (board/host: tori-node, board/mpi: tori-node-mpi): the clock, resets,
 * the checkpoint store and the stack.
 */
/* clock_gettime, CLOCK_MONOTONIC: POSIX, beyond C11. */
#define _POSIX_C_SOURCE 200809L

#include "board/board.h"

#include <time.h>

#include "config/tori_config.h"

uint64_t board_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A process node restarts as a new process with a new personality (a
 * host node), or not at all (an MPI rank cannot re-enter its world). */
uint32_t board_reset_count(void)
{
    return 0;
}

/* A restart is a new process: the store starts zeroed, and a rank restored
 * on it takes its checkpoint from the buddy's copy. */
uint8_t *board_checkpoint_store(size_t *bytes, bool *survives_reset)
{
    static uint8_t store[CONFIG_CHECKPOINT_STORE_BYTES] __attribute__((aligned(8)));
    *bytes = sizeof store;
    *survives_reset = false;
    return store;
}

uint8_t *board_checkpoint_mirror(size_t *bytes)
{
    static uint8_t mirror[CONFIG_CHECKPOINT_MIRROR_BYTES] __attribute__((aligned(8)));
    *bytes = sizeof mirror;
    return mirror;
}

/* The process stack is the operating system's: its size is a ulimit, its
 * use nothing the node can read without guessing. */
bool board_stack_usage(size_t *high_water, size_t *size, const char **why)
{
    *high_water = 0;
    *size = 0;
    *why = "the process stack belongs to the OS";
    return false;
}
