/*
 * Torus and mesh geometry: 1..CONFIG_MAX_DIMS dimensions, each of any size
 * >= 1, each either a torus (wraps around) or a mesh (ends at its edges).
 *
 * Ranks number the nodes 0..node_count-1 with dimension 0 varying fastest:
 * rank = c0 + s0 * (c1 + s1 * (c2 + ...)).
 *
 * Links are numbered link = 2 * dim + direction, direction 0 for plus and 1
 * for minus, and named "x+", "x-", "y+", ... (dimensions x y z u v w).  The
 * cable on link L of node R arrives on link L ^ 1 of its neighbour.  There is
 * no link at a mesh edge nor in a dimension of size 1; a torus dimension of
 * size 2 has two distinct links, plus and minus, that reach the same
 * neighbour (as real machines wire it).
 *
 * Pure: no I/O, no globals, no allocation.
 */
#ifndef NET_TORUS_GEOMETRY_H
#define NET_TORUS_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"

/* "No such node": a missing neighbour, bad coordinates. */
#define TORUS_RANK_NONE UINT32_MAX

/* Link directions within a dimension. */
#define TORUS_DIRECTION_PLUS 0u
#define TORUS_DIRECTION_MINUS 1u

/*
 * Why a geometry (or a dims string) was refused.  One list generates the
 * enum and the messages.
 */
#define TORUS_GEOMETRY_STATUSES(X)                                           \
    X(OK, "ok")                                                              \
    X(BAD_DIM_COUNT, "wrong number of dimensions")                           \
    X(ZERO_SIZE, "dimension of size 0")                                      \
    X(TOO_MANY_NODES, "too many nodes")                                      \
    X(SYNTAX, "malformed dimensions")

enum torus_geometry_status {
#define TORUS_GEOMETRY_STATUS_ENUM(name, text) TORUS_GEOMETRY_##name,
    TORUS_GEOMETRY_STATUSES(TORUS_GEOMETRY_STATUS_ENUM)
#undef TORUS_GEOMETRY_STATUS_ENUM
    TORUS_GEOMETRY_STATUS_COUNT
};

/*
 * A validated geometry.  Read it only through the functions below (the mesh
 * flags in particular through torus_geometry_is_mesh/is_torus).
 */
struct torus_geometry {
    unsigned dims;
    uint32_t node_count;
    uint32_t size[CONFIG_MAX_DIMS];
    uint32_t stride[CONFIG_MAX_DIMS]; /* rank step of +1 in each dimension */
    bool wraps[CONFIG_MAX_DIMS];
};

/* Details of a refusal, for a one-line message. */
struct torus_geometry_error {
    enum torus_geometry_status status;
    unsigned dim;      /* the dimension at fault (ZERO_SIZE) */
    unsigned position; /* character offset in a dims string (SYNTAX) */
    uint64_t value;    /* the bad count or size */
};

/*
 * Validates and builds a geometry.  sizes[0..dims-1] are the dimension sizes;
 * mesh[d] true makes dimension d a mesh, mesh NULL makes every dimension a
 * torus.  On failure returns the reason (and fills *error when not NULL);
 * *geometry is then left as a valid 1-node geometry.
 */
enum torus_geometry_status torus_geometry_init(struct torus_geometry *geometry,
                                               unsigned dims,
                                               const uint32_t sizes[],
                                               const bool mesh[],
                                               struct torus_geometry_error *error);

/*
 * Parses a dims string such as "2x2x2" or "16x8x8" (decimal sizes separated
 * by 'x', 1..CONFIG_MAX_DIMS of them, each >= 1, product <= CONFIG_MAX_NODES).
 * Fills *dims and sizes[0..*dims-1]; on failure fills *error (position is
 * the offending character).
 */
enum torus_geometry_status torus_geometry_parse_dims(const char *text,
                                                     unsigned *dims,
                                                     uint32_t sizes[CONFIG_MAX_DIMS],
                                                     struct torus_geometry_error *error);

/*
 * Writes a one-line explanation without a trailing newline, e.g.
 * "dimension 2 has size 0 (expected sizes >= 1, like 2x2x2)".  Always
 * NUL-terminates when capacity > 0; returns the length written.
 */
size_t torus_geometry_format_error(const struct torus_geometry_error *error,
                                   char *out, size_t capacity);

/* Short text of a status ("too many nodes"); "?" when out of range. */
const char *torus_geometry_status_text(enum torus_geometry_status status);

static inline unsigned torus_geometry_dims(const struct torus_geometry *g)
{
    return g->dims;
}
static inline uint32_t torus_geometry_node_count(const struct torus_geometry *g)
{
    return g->node_count;
}
/* Size of a dimension; 1 for dimensions beyond dims. */
static inline uint32_t torus_geometry_size(const struct torus_geometry *g,
                                           unsigned dim)
{
    return dim < g->dims ? g->size[dim] : 1u;
}
static inline bool torus_geometry_is_torus(const struct torus_geometry *g,
                                           unsigned dim)
{
    return dim < g->dims && g->wraps[dim];
}
static inline bool torus_geometry_is_mesh(const struct torus_geometry *g,
                                          unsigned dim)
{
    return dim < g->dims && !g->wraps[dim];
}

/* Links of a geometry: 2 * dims (some may be absent at a given node). */
static inline unsigned torus_geometry_link_count(const struct torus_geometry *g)
{
    return 2u * g->dims;
}
static inline unsigned torus_geometry_link(unsigned dim, unsigned direction)
{
    return 2u * dim + (direction & 1u);
}
static inline unsigned torus_geometry_link_dim(unsigned link)
{
    return link / 2u;
}
static inline bool torus_geometry_link_is_plus(unsigned link)
{
    return (link & 1u) == TORUS_DIRECTION_PLUS;
}
/* The link on which a neighbour receives what this node sends on link. */
static inline unsigned torus_geometry_opposite_link(unsigned link)
{
    return link ^ 1u;
}

/* Rank <-> coordinates.  Coordinates beyond dims are 0. */
bool torus_geometry_coords(const struct torus_geometry *g, uint32_t rank,
                           uint32_t coords[CONFIG_MAX_DIMS]);
/* TORUS_RANK_NONE when a coordinate is outside its dimension. */
uint32_t torus_geometry_rank(const struct torus_geometry *g,
                             const uint32_t coords[CONFIG_MAX_DIMS]);

/* Coordinate of rank in one dimension (no bounds check on rank). */
static inline uint32_t torus_geometry_coord(const struct torus_geometry *g,
                                            uint32_t rank, unsigned dim)
{
    return dim < g->dims ? (rank / g->stride[dim]) % g->size[dim] : 0u;
}

/*
 * The node at the far end of link at rank, or TORUS_RANK_NONE: bad rank,
 * link >= 2 * dims, a mesh edge, a dimension of size 1.
 */
uint32_t torus_geometry_neighbour(const struct torus_geometry *g,
                                  uint32_t rank, unsigned link);

/* Bit L set when link L exists at rank (0 for a bad rank). */
uint32_t torus_geometry_link_mask(const struct torus_geometry *g, uint32_t rank);

/*
 * Shortest signed step count from coordinate from to coordinate to in one
 * dimension: wrap-aware on a torus; a tie (exactly half way round an even
 * torus) is reported as the plus way (positive).
 */
int32_t torus_geometry_offset(const struct torus_geometry *g, unsigned dim,
                              uint32_t from, uint32_t to);

/* True when, in a tie on an even torus, the minus way is just as short. */
bool torus_geometry_offset_is_tie(const struct torus_geometry *g, unsigned dim,
                                  uint32_t from, uint32_t to);

/* Shortest hop count between two ranks (UINT32_MAX for a bad rank). */
uint32_t torus_geometry_distance(const struct torus_geometry *g, uint32_t a,
                                 uint32_t b);

/* Largest shortest hop count between any two nodes. */
uint32_t torus_geometry_diameter(const struct torus_geometry *g);

/* "x+", "x-", "y+", ... "w-"; "?" for a link >= CONFIG_MAX_LINKS. */
const char *torus_geometry_link_name(unsigned link);

/*
 * Parses a link name ("x+", "z-": exactly two characters) into *link;
 * false for anything else.  Does not check a geometry's dims.
 */
bool torus_geometry_link_from_name(const char *name, unsigned *link);

#endif /* NET_TORUS_GEOMETRY_H */
