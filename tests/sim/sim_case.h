/*
 * Helpers for simulator tests: run one scripted case and keep the result.
 */
#ifndef TESTS_SIM_SIM_CASE_H
#define TESTS_SIM_SIM_CASE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/sim.h"

struct sim_case {
    const char *dims;
    unsigned radix;
    enum membership_layout_kind layout;
    enum membership_policy policy;
    uint32_t members;      /* 0: all */
    bool heartbeats;       /* heartbeat period 4 units */
    uint64_t link_detect_ns; /* UINT64_MAX: simulator default */
    bool routes;           /* messages follow the routers' hops (sim_params.routes) */
    const char *inject;    /* with {U} standing for the timeout unit in ns */
    bool events;           /* write every node event to out, not only stable views */
    bool views;            /* ... and every view installed (tori-sim --events) */
    struct recovery_policy recovery; /* the roots' decisions (zero: none) */
    uint32_t seeds[MEMBERSHIP_SEEDS_MAX]; /* joiners ask these first (issue 16) */
    uint32_t seed_count;
};

struct sim_result {
    bool ran;     /* parameters valid */
    bool ok;      /* no invariant violation, agreement at the end */
    struct sim_stats stats;
    uint64_t unit_ns;
    uint32_t nodes;
    struct sim *sim; /* kept for inspection; sim_case_free() */
};

/* Builds and runs a case; on a violation the trace goes to stdout. */
void sim_case_run(const struct sim_case *c, struct sim_result *r, FILE *out);
void sim_case_free(struct sim_result *r);

/* Geometry from "AxBxC"; false when malformed. */
bool sim_case_geometry(const char *dims, struct torus_geometry *g);

#endif /* TESTS_SIM_SIM_CASE_H */
