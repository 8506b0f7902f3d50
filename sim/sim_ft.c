/* The failure semantics' invariants (see sim_ft.h). */
#include "sim/sim_ft.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ft_map {
    uint64_t epoch;
    uint32_t size;
    uint64_t digest;
};

struct ft_collective {
    uint64_t epoch;
    uint32_t seq;
    uint8_t kind;
    bool has_ok;
    bool has_error;
    uint64_t ok_hash;
    uint8_t *ok_nodes;    /* bit per node: returned OK */
    uint8_t *error_nodes; /* bit per node: returned an error */
};

struct sim_ft {
    uint32_t node_count;
    uint32_t *seen;   /* per node: the stamp of the map that last held it */
    uint32_t stamp;
    struct ft_map *maps;
    size_t map_count, map_capacity;
    struct ft_collective *colls;
    size_t coll_count, coll_capacity;
    struct sim_ft_counts counts;
};

struct sim_ft *sim_ft_create(uint32_t node_count)
{
    struct sim_ft *ft = calloc(1, sizeof *ft);
    if (ft == NULL)
        return NULL;
    ft->node_count = node_count;
    ft->seen = calloc(node_count, sizeof *ft->seen);
    if (ft->seen == NULL) {
        free(ft);
        return NULL;
    }
    return ft;
}

void sim_ft_destroy(struct sim_ft *ft)
{
    if (ft == NULL)
        return;
    for (size_t i = 0; i < ft->coll_count; i++) {
        free(ft->colls[i].ok_nodes);
        free(ft->colls[i].error_nodes);
    }
    free(ft->colls);
    free(ft->maps);
    free(ft->seen);
    free(ft);
}

static const char *kind_name(uint8_t kind)
{
    switch (kind) {
    case SIM_APP_COLL_ALLREDUCE:
        return "allreduce";
    case SIM_APP_COLL_GATHER:
        return "gather";
    case SIM_APP_COLL_BCAST:
        return "bcast";
    case SIM_APP_COLL_AGREE:
        return "agree";
    default:
        return "none";
    }
}

static bool grow(void **items, size_t *capacity, size_t count, size_t item)
{
    if (count < *capacity)
        return true;
    size_t want = *capacity != 0 ? 2 * *capacity : 16;
    void *grown = realloc(*items, want * item);
    if (grown == NULL)
        return false;
    *items = grown;
    *capacity = want;
    return true;
}

bool sim_ft_map(struct sim_ft *ft, uint64_t epoch, const uint32_t *nodes, uint32_t size,
                uint32_t node, uint32_t rank, char *why, size_t capacity)
{
    ft->counts.maps++;
    if (++ft->stamp == 0) { /* wrapped: forget every stamp */
        memset(ft->seen, 0, ft->node_count * sizeof *ft->seen);
        ft->stamp = 1;
    }
    uint64_t digest = UINT64_C(0xcbf29ce484222325);
    for (uint32_t r = 0; r < size; r++) {
        uint32_t id = nodes[r];
        digest = (digest ^ id) * UINT64_C(0x100000001b3);
        if (id == UINT32_MAX)
            continue; /* a gap */
        if (id >= ft->node_count || ft->seen[id] == ft->stamp) {
            snprintf(why, capacity,
                     "communicator epoch %" PRIx64 " at node %" PRIu32 ": node %" PRIu32
                     " holds two ranks (a duplicate rank, the second %" PRIu32 ")",
                     epoch, node, id, r);
            return false;
        }
        ft->seen[id] = ft->stamp;
    }
    if (rank >= size || nodes[rank] != node) {
        snprintf(why, capacity,
                 "communicator epoch %" PRIx64 ": node %" PRIu32 " has rank %" PRIu32
                 " but the map gives that rank to node %" PRIu32,
                 epoch, node, rank, rank < size ? nodes[rank] : UINT32_MAX);
        return false;
    }
    for (size_t i = 0; i < ft->map_count; i++) {
        const struct ft_map *m = &ft->maps[i];
        if (m->epoch != epoch)
            continue;
        if (m->size != size || m->digest != digest) {
            snprintf(why, capacity,
                     "communicator epoch %" PRIx64 ": node %" PRIu32 " holds another rank map "
                     "(size %" PRIu32 ", digest %016" PRIx64 ") than another node (size %" PRIu32
                     ", digest %016" PRIx64 ")",
                     epoch, node, size, digest, m->size, m->digest);
            return false;
        }
        return true;
    }
    if (!grow((void **)&ft->maps, &ft->map_capacity, ft->map_count, sizeof *ft->maps)) {
        snprintf(why, capacity, "out of memory for the communicator checks");
        return false;
    }
    ft->maps[ft->map_count++] = (struct ft_map){epoch, size, digest};
    ft->counts.epochs++;
    return true;
}

static struct ft_collective *find_collective(struct sim_ft *ft, uint64_t epoch, uint32_t seq,
                                             uint8_t kind)
{
    for (size_t i = ft->coll_count; i-- > 0;) /* the latest first */
        if (ft->colls[i].epoch == epoch && ft->colls[i].seq == seq)
            return &ft->colls[i];
    if (!grow((void **)&ft->colls, &ft->coll_capacity, ft->coll_count, sizeof *ft->colls))
        return NULL;
    struct ft_collective *c = &ft->colls[ft->coll_count];
    memset(c, 0, sizeof *c);
    c->epoch = epoch;
    c->seq = seq;
    c->kind = kind;
    size_t bytes = (ft->node_count + 7u) / 8u;
    c->ok_nodes = calloc(bytes, 1);
    c->error_nodes = calloc(bytes, 1);
    if (c->ok_nodes == NULL || c->error_nodes == NULL) {
        free(c->ok_nodes);
        free(c->error_nodes);
        return NULL;
    }
    ft->coll_count++;
    ft->counts.collectives++;
    return c;
}

bool sim_ft_outcome(struct sim_ft *ft, uint32_t node, const struct sim_app_outcome *o, char *why,
                    size_t capacity)
{
    ft->counts.outcomes++;
    ft->counts.agrees += o->kind == SIM_APP_COLL_AGREE ? 1u : 0u;
    struct ft_collective *c = find_collective(ft, o->epoch, o->seq, o->kind);
    if (c == NULL || node >= ft->node_count) {
        snprintf(why, capacity, "out of memory for the collective checks");
        return false;
    }
    if (c->kind != o->kind) {
        snprintf(why, capacity,
                 "communicator epoch %" PRIx64 " collective %" PRIu32 ": node %" PRIu32
                 " ran %s where another ran %s",
                 o->epoch, o->seq, node, kind_name(o->kind), kind_name(c->kind));
        return false;
    }
    if (o->error != 0) {
        c->has_error = true;
        c->error_nodes[node / 8] |= (uint8_t)(1u << (node % 8));
        return true;
    }
    c->ok_nodes[node / 8] |= (uint8_t)(1u << (node % 8));
    if (c->has_ok && o->hash != c->ok_hash && o->kind != SIM_APP_COLL_GATHER) {
        snprintf(why, capacity,
                 "communicator epoch %" PRIx64 " %s %" PRIu32 ": node %" PRIu32
                 " returned another result than an earlier rank%s",
                 o->epoch, kind_name(o->kind), o->seq, node,
                 o->kind == SIM_APP_COLL_AGREE ? " (agree not uniform)" : "");
        return false;
    }
    c->has_ok = true;
    c->ok_hash = o->hash;
    return true;
}

/* The first survivor in a node bitmap (UINT32_MAX: none). */
static uint32_t first_survivor(const uint8_t *bits, const bool *survived, uint32_t node_count)
{
    for (uint32_t id = 0; id < node_count; id++)
        if ((bits[id / 8] & (1u << (id % 8))) != 0 && survived[id])
            return id;
    return UINT32_MAX;
}

bool sim_ft_final(const struct sim_ft *ft, const bool *survived, char *why, size_t capacity)
{
    for (size_t i = 0; i < ft->coll_count; i++) {
        const struct ft_collective *c = &ft->colls[i];
        if (!c->has_ok || !c->has_error || c->kind == SIM_APP_COLL_BCAST)
            continue; /* bcast is not strict */
        uint32_t ok = first_survivor(c->ok_nodes, survived, ft->node_count);
        uint32_t failed = first_survivor(c->error_nodes, survived, ft->node_count);
        if (ok != UINT32_MAX && failed != UINT32_MAX) {
            snprintf(why, capacity,
                     "communicator epoch %" PRIx64 " %s %" PRIu32 ": OK at node %" PRIu32
                     " but an error at node %" PRIu32 ", both survivors (a strict collective "
                     "mixed%s)",
                     c->epoch, kind_name(c->kind), c->seq, ok, failed,
                     c->kind == SIM_APP_COLL_AGREE ? ", agree not uniform" : "");
            return false;
        }
    }
    return true;
}

const struct sim_ft_counts *sim_ft_get_counts(const struct sim_ft *ft)
{
    return &ft->counts;
}
