/*
 * sim/sim_ft.c, the campaign's invariant checker (issue 14), fed directly:
 * each planted fault (a duplicated rank, a rank the map gives to another
 * node, two maps for one communicator epoch, two results of one allreduce,
 * an agree that is not uniform, a strict collective mixed among survivors,
 * two collectives at one place) must be reported, and the clean cases must
 * not.  A checker that accepted any of them would let the campaign pass
 * with that bug in the core.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/sim_ft.h"
#include "tests/check.h"

#define NODES 8u

static struct sim_app_outcome outcome(uint64_t epoch, uint32_t seq, uint8_t kind, uint8_t error,
                                      uint64_t hash)
{
    struct sim_app_outcome o = {epoch, seq, kind, error, hash};
    return o;
}

static void test_maps(void)
{
    char why[200];
    struct sim_ft *ft = sim_ft_create(NODES);
    CHECK(ft != NULL);
    uint32_t map[4] = {0, 1, 2, 3};
    for (uint32_t r = 0; r < 4; r++) /* every rank reports the same map */
        CHECKF(sim_ft_map(ft, 5, map, 4, map[r], r, why, sizeof why), "%s", why);
    uint32_t gaps[4] = {0, UINT32_MAX, 2, 3}; /* a BLANK gap is no node */
    CHECKF(sim_ft_map(ft, 6, gaps, 4, 2, 2, why, sizeof why), "%s", why);
    /* planted: node 2 holds two ranks */
    uint32_t duplicated[4] = {0, 2, 2, 3};
    CHECK(!sim_ft_map(ft, 7, duplicated, 4, 0, 0, why, sizeof why));
    CHECK(strstr(why, "duplicate rank") != NULL);
    /* planted: node 1 says it has rank 2, the map gives rank 2 to node 2 */
    CHECK(!sim_ft_map(ft, 8, map, 4, 1, 2, why, sizeof why));
    /* planted: epoch 5 again with ranks 2 and 3 swapped (another map) */
    uint32_t swapped[4] = {0, 1, 3, 2};
    CHECK(!sim_ft_map(ft, 5, swapped, 4, 0, 0, why, sizeof why));
    CHECK(strstr(why, "another rank map") != NULL);
    /* planted: epoch 5 again, one rank shorter */
    CHECK(!sim_ft_map(ft, 5, map, 3, 0, 0, why, sizeof why));
    CHECK(sim_ft_get_counts(ft)->epochs == 2);
    sim_ft_destroy(ft);
}

static void test_outcomes(void)
{
    char why[200];
    bool survived[NODES];
    for (uint32_t i = 0; i < NODES; i++)
        survived[i] = true;
    struct sim_ft *ft = sim_ft_create(NODES);
    CHECK(ft != NULL);
    /* clean: one allreduce, the same result at 4 nodes; one that failed
     * everywhere; a bcast mixed (allowed: not strict); an agree uniform */
    for (uint32_t n = 0; n < 4; n++) {
        struct sim_app_outcome a = outcome(0, 0, SIM_APP_COLL_ALLREDUCE, 0, 42);
        struct sim_app_outcome e = outcome(0, 1, SIM_APP_COLL_ALLREDUCE, COMM_ERR_PROC_FAILED, 0);
        struct sim_app_outcome b = outcome(0, 2, SIM_APP_COLL_BCAST, n == 3 ? COMM_ERR_PROC_FAILED : 0, 9);
        struct sim_app_outcome g = outcome(3, 0, SIM_APP_COLL_AGREE, 0, 1);
        CHECKF(sim_ft_outcome(ft, n, &a, why, sizeof why), "%s", why);
        CHECKF(sim_ft_outcome(ft, n, &e, why, sizeof why), "%s", why);
        CHECKF(sim_ft_outcome(ft, n, &b, why, sizeof why), "%s", why);
        CHECKF(sim_ft_outcome(ft, n, &g, why, sizeof why), "%s", why);
    }
    CHECKF(sim_ft_final(ft, survived, why, sizeof why), "%s", why);
    /* planted: another allreduce result at node 4 */
    struct sim_app_outcome other = outcome(0, 0, SIM_APP_COLL_ALLREDUCE, 0, 43);
    CHECK(!sim_ft_outcome(ft, 4, &other, why, sizeof why));
    /* planted: agree not uniform (another flag) */
    struct sim_app_outcome flag0 = outcome(3, 0, SIM_APP_COLL_AGREE, 0, 0);
    CHECK(!sim_ft_outcome(ft, 5, &flag0, why, sizeof why));
    CHECK(strstr(why, "agree not uniform") != NULL);
    /* planted: another collective at the same place */
    struct sim_app_outcome gather = outcome(0, 1, SIM_APP_COLL_GATHER, 0, 0);
    CHECK(!sim_ft_outcome(ft, 6, &gather, why, sizeof why));
    sim_ft_destroy(ft);

    /* planted: a strict allreduce OK at node 0, an error at node 1: a
     * violation when both survived, not when the OK one died */
    ft = sim_ft_create(NODES);
    struct sim_app_outcome ok = outcome(9, 4, SIM_APP_COLL_ALLREDUCE, 0, 7);
    struct sim_app_outcome failed = outcome(9, 4, SIM_APP_COLL_ALLREDUCE, COMM_ERR_PROC_FAILED, 0);
    CHECK(sim_ft_outcome(ft, 0, &ok, why, sizeof why));
    CHECK(sim_ft_outcome(ft, 1, &failed, why, sizeof why));
    CHECK(!sim_ft_final(ft, survived, why, sizeof why));
    CHECK(strstr(why, "strict collective mixed") != NULL);
    survived[0] = false;
    CHECKF(sim_ft_final(ft, survived, why, sizeof why), "%s", why);
    survived[0] = true;
    /* agree: OK at one survivor, an error at another */
    struct sim_app_outcome agreed = outcome(9, 5, SIM_APP_COLL_AGREE, 0, 1);
    struct sim_app_outcome refused = outcome(9, 5, SIM_APP_COLL_AGREE, COMM_ERR_PROC_FAILED, 0);
    CHECK(sim_ft_outcome(ft, 2, &agreed, why, sizeof why));
    CHECK(sim_ft_outcome(ft, 3, &refused, why, sizeof why));
    survived[1] = false; /* the allreduce's mix no longer counts */
    CHECK(!sim_ft_final(ft, survived, why, sizeof why));
    CHECK(strstr(why, "agree not uniform") != NULL);
    sim_ft_destroy(ft);
}

int main(void)
{
    test_maps();
    test_outcomes();
    return check_report(__FILE__);
}
