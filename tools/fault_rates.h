/*
 * Fault rates per group of nodes (ABARIS section 4.3's scenarios, issue
 * 15): 'x<2: process=20, physical=1; default: process=2' gives each node
 * of a group its rates, in faults per node per second of virtual time, by
 * fault model: process (the application dies: appkill), physical (the node
 * dies: kill) and network (one of its links goes down for a while: link
 * off for D).  A group is a coordinate predicate as a partition's cut
 * (x<K, ..., id<K; tools/fault.h); the first group that holds a node gives
 * its rates, `default` the rest (no default: no faults).  One parser and
 * one seeded draw for every tool (tori-sim --fault-rates).
 */
#ifndef TOOLS_FAULT_RATES_H
#define TOOLS_FAULT_RATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/torus/geometry.h"
#include "tools/fault.h"

#define FAULT_RATES_GROUPS 8u
/* Rates as thousandths of a fault per node per second: 0.001..1000000. */
#define FAULT_RATES_MAX_MILLI UINT64_C(1000000000)

enum fault_rate_kind { FAULT_RATE_PROCESS = 0, FAULT_RATE_PHYSICAL, FAULT_RATE_NETWORK,
                       FAULT_RATE_KINDS };

struct fault_rates_group {
    bool is_default;
    int dim;        /* as struct fault's partition: -1 for ids */
    uint32_t below;
    uint64_t milli[FAULT_RATE_KINDS]; /* faults per node per second, x1000 */
};

struct fault_rates {
    struct fault_rates_group groups[FAULT_RATES_GROUPS];
    unsigned count;
};

#define FAULT_RATES_EXPECTED                                                             \
    "groups like 'x<2: process=20, physical=1; default: process=2' (a group x<K..w<K, " \
    "id<K or default; models process, physical, network; rates in faults per node per " \
    "second, like 0.5)"

/* Parses text; false with a one-line error naming --fault-rates. */
bool fault_rates_parse(const char *text, struct fault_rates *rates, char *error,
                       size_t capacity);

/* Checks the groups against a torus (its dimensions and sizes, as a
 * partition's); false with a one-line error. */
bool fault_rates_check_torus(const struct fault_rates *rates,
                             const struct torus_geometry *geometry, char *error,
                             size_t capacity);

/* A node's rates (zeros when no group holds it). */
const struct fault_rates_group *fault_rates_for(const struct fault_rates *rates,
                                                const struct torus_geometry *geometry,
                                                uint32_t node);

/*
 * Draws every node's faults in [0, horizon_ns) for a seed: exponential
 * gaps at each rate (splitmix64), as fault items in time order:
 * process -> appkill N, physical -> kill N, network -> link N M off for
 * link_hold_ns (M a torus neighbour drawn).  A node killed draws nothing
 * after.  Returns the count (at most capacity; the rest dropped, and
 * *dropped says how many).
 */
size_t fault_rates_draw(const struct fault_rates *rates, const struct torus_geometry *geometry,
                        uint64_t seed, uint64_t horizon_ns, uint64_t link_hold_ns,
                        struct fault *items, size_t capacity, size_t *dropped);

#endif /* TOOLS_FAULT_RATES_H */
