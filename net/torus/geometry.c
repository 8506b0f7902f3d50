#include "net/torus/geometry.h"

#include "lib/format.h"

#include <string.h>

static const char dim_names[CONFIG_MAX_DIMS + 1] = "xyzuvw";

static const char *const link_names[] = {
    "x+", "x-", "y+", "y-", "z+", "z-", "u+", "u-", "v+", "v-", "w+", "w-",
};
_Static_assert(sizeof(link_names) / sizeof(link_names[0]) >= CONFIG_MAX_LINKS,
               "every link needs a name");

static const char *const status_texts[] = {
#define TORUS_GEOMETRY_STATUS_TEXT(name, text) text,
    TORUS_GEOMETRY_STATUSES(TORUS_GEOMETRY_STATUS_TEXT)
#undef TORUS_GEOMETRY_STATUS_TEXT
};

static void set_error(struct torus_geometry_error *error,
                      enum torus_geometry_status status, unsigned dim,
                      unsigned position, uint64_t value)
{
    if (error == NULL)
        return;
    error->status = status;
    error->dim = dim;
    error->position = position;
    error->value = value;
}

static void make_single_node(struct torus_geometry *g)
{
    memset(g, 0, sizeof(*g));
    g->dims = 1;
    g->node_count = 1;
    g->size[0] = 1;
    g->stride[0] = 1;
    g->wraps[0] = true;
}

enum torus_geometry_status torus_geometry_init(struct torus_geometry *geometry,
                                               unsigned dims,
                                               const uint32_t sizes[],
                                               const bool mesh[],
                                               struct torus_geometry_error *error)
{
    make_single_node(geometry);
    set_error(error, TORUS_GEOMETRY_OK, 0, 0, 0);
    if (dims < 1 || dims > CONFIG_MAX_DIMS || sizes == NULL) {
        set_error(error, TORUS_GEOMETRY_BAD_DIM_COUNT, 0, 0, dims);
        return TORUS_GEOMETRY_BAD_DIM_COUNT;
    }
    for (unsigned d = 0; d < dims; d++) {
        if (sizes[d] == 0) {
            set_error(error, TORUS_GEOMETRY_ZERO_SIZE, d, 0, 0);
            return TORUS_GEOMETRY_ZERO_SIZE;
        }
    }
    /* Saturating product: each factor < 2^32, the running value <= 2^40. */
    const uint64_t saturate = (uint64_t)1 << 40;
    uint64_t nodes = 1;
    for (unsigned d = 0; d < dims; d++) {
        nodes *= sizes[d];
        if (nodes > saturate)
            nodes = saturate;
    }
    if (nodes > CONFIG_MAX_NODES) {
        set_error(error, TORUS_GEOMETRY_TOO_MANY_NODES, 0, 0, nodes);
        return TORUS_GEOMETRY_TOO_MANY_NODES;
    }
    geometry->dims = dims;
    geometry->node_count = (uint32_t)nodes;
    uint32_t stride = 1;
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        bool used = d < dims;
        geometry->size[d] = used ? sizes[d] : 1u;
        geometry->stride[d] = stride;
        geometry->wraps[d] = used && (mesh == NULL || !mesh[d]);
        stride *= geometry->size[d];
    }
    return TORUS_GEOMETRY_OK;
}

enum torus_geometry_status torus_geometry_parse_dims(const char *text,
                                                     unsigned *dims,
                                                     uint32_t sizes[CONFIG_MAX_DIMS],
                                                     struct torus_geometry_error *error)
{
    /* Saturate far above any valid value so that huge inputs stay exact
     * enough for the message and never overflow. */
    const uint64_t saturate = (uint64_t)1 << 40;
    unsigned count = 0;
    unsigned position = 0;
    uint64_t nodes = 1;

    *dims = 0;
    set_error(error, TORUS_GEOMETRY_OK, 0, 0, 0);
    if (text == NULL) {
        set_error(error, TORUS_GEOMETRY_SYNTAX, 0, 0, 0);
        return TORUS_GEOMETRY_SYNTAX;
    }
    for (;;) {
        /* A size: one or more decimal digits. */
        if (text[position] < '0' || text[position] > '9') {
            set_error(error, TORUS_GEOMETRY_SYNTAX, count, position,
                      (unsigned char)text[position]);
            return TORUS_GEOMETRY_SYNTAX;
        }
        if (count == CONFIG_MAX_DIMS) {
            unsigned total = count;
            for (unsigned i = position; text[i] != '\0'; i++)
                total += (text[i] == 'x' || text[i] == 'X');
            set_error(error, TORUS_GEOMETRY_BAD_DIM_COUNT, count, position,
                      total + 1);
            return TORUS_GEOMETRY_BAD_DIM_COUNT;
        }
        uint64_t size = 0;
        while (text[position] >= '0' && text[position] <= '9') {
            size = size * 10 + (uint64_t)(text[position] - '0');
            if (size > saturate)
                size = saturate;
            position++;
        }
        if (size == 0) {
            set_error(error, TORUS_GEOMETRY_ZERO_SIZE, count, position, 0);
            return TORUS_GEOMETRY_ZERO_SIZE;
        }
        nodes *= size;
        if (nodes > saturate)
            nodes = saturate;
        sizes[count++] = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
        if (text[position] == '\0')
            break;
        if (text[position] != 'x' && text[position] != 'X') {
            set_error(error, TORUS_GEOMETRY_SYNTAX, count, position,
                      (unsigned char)text[position]);
            return TORUS_GEOMETRY_SYNTAX;
        }
        position++;
    }
    if (nodes > CONFIG_MAX_NODES) {
        set_error(error, TORUS_GEOMETRY_TOO_MANY_NODES, 0, 0, nodes);
        return TORUS_GEOMETRY_TOO_MANY_NODES;
    }
    *dims = count;
    return TORUS_GEOMETRY_OK;
}

/* A tiny bounded string builder: the message code never overflows out. */
struct text_out {
    char *out;
    size_t capacity;
    size_t length;
};

static void put_char(struct text_out *t, char c)
{
    if (t->length + 1 < t->capacity)
        t->out[t->length++] = c;
}

static void put_text(struct text_out *t, const char *s)
{
    while (*s != '\0')
        put_char(t, *s++);
}

static void put_u64(struct text_out *t, uint64_t value)
{
    char digits[20];
    unsigned n = format_u64(digits, value);
    for (unsigned i = 0; i < n; i++)
        put_char(t, digits[i]);
}

size_t torus_geometry_format_error(const struct torus_geometry_error *error,
                                   char *out, size_t capacity)
{
    struct text_out t = {out, capacity, 0};
    if (capacity == 0)
        return 0;
    switch (error->status) {
    case TORUS_GEOMETRY_OK:
        put_text(&t, "ok");
        break;
    case TORUS_GEOMETRY_BAD_DIM_COUNT:
        put_u64(&t, error->value);
        put_text(&t, " dimensions (expected 1 to ");
        put_u64(&t, CONFIG_MAX_DIMS);
        put_text(&t, ", like 2x2x2)");
        break;
    case TORUS_GEOMETRY_ZERO_SIZE:
        put_text(&t, "dimension ");
        put_char(&t, error->dim < CONFIG_MAX_DIMS ? dim_names[error->dim] : '?');
        put_text(&t, " has size 0 (expected sizes >= 1, like 2x2x2)");
        break;
    case TORUS_GEOMETRY_TOO_MANY_NODES:
        if (error->value >= ((uint64_t)1 << 40))
            put_text(&t, "2^40 or more");
        else
            put_u64(&t, error->value);
        put_text(&t, " nodes (expected at most ");
        put_u64(&t, CONFIG_MAX_NODES);
        put_text(&t, ")");
        break;
    case TORUS_GEOMETRY_SYNTAX:
        put_text(&t, "unexpected ");
        if (error->value == 0) {
            put_text(&t, "end");
        } else if (error->value >= 0x20 && error->value < 0x7f) {
            put_char(&t, '\'');
            put_char(&t, (char)error->value);
            put_char(&t, '\'');
        } else {
            put_text(&t, "character code ");
            put_u64(&t, error->value);
        }
        put_text(&t, " at position ");
        put_u64(&t, error->position);
        put_text(&t, " (expected sizes separated by 'x', like 2x2x2)");
        break;
    default:
        put_text(&t, "unknown geometry error");
        break;
    }
    out[t.length] = '\0';
    return t.length;
}

const char *torus_geometry_status_text(enum torus_geometry_status status)
{
    if ((unsigned)status >= TORUS_GEOMETRY_STATUS_COUNT)
        return "?";
    return status_texts[status];
}

bool torus_geometry_coords(const struct torus_geometry *g, uint32_t rank,
                           uint32_t coords[CONFIG_MAX_DIMS])
{
    if (rank >= g->node_count) {
        memset(coords, 0, sizeof(uint32_t) * CONFIG_MAX_DIMS);
        return false;
    }
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        coords[d] = rank % g->size[d];
        rank /= g->size[d];
    }
    return true;
}

uint32_t torus_geometry_rank(const struct torus_geometry *g,
                             const uint32_t coords[CONFIG_MAX_DIMS])
{
    uint32_t rank = 0;
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        if (coords[d] >= g->size[d])
            return TORUS_RANK_NONE;
        rank += coords[d] * g->stride[d];
    }
    return rank;
}

uint32_t torus_geometry_neighbour(const struct torus_geometry *g,
                                  uint32_t rank, unsigned link)
{
    if (rank >= g->node_count || link >= 2u * g->dims)
        return TORUS_RANK_NONE;
    unsigned dim = torus_geometry_link_dim(link);
    uint32_t size = g->size[dim];
    uint32_t coord = torus_geometry_coord(g, rank, dim);
    uint32_t stride = g->stride[dim];
    if (size == 1)
        return TORUS_RANK_NONE;
    if (torus_geometry_link_is_plus(link)) {
        if (coord + 1 < size)
            return rank + stride;
        return g->wraps[dim] ? rank - coord * stride : TORUS_RANK_NONE;
    }
    if (coord > 0)
        return rank - stride;
    return g->wraps[dim] ? rank + (size - 1) * stride : TORUS_RANK_NONE;
}

uint32_t torus_geometry_link_mask(const struct torus_geometry *g, uint32_t rank)
{
    uint32_t mask = 0;
    for (unsigned link = 0; link < 2u * g->dims; link++)
        if (torus_geometry_neighbour(g, rank, link) != TORUS_RANK_NONE)
            mask |= 1u << link;
    return mask;
}

int32_t torus_geometry_offset(const struct torus_geometry *g, unsigned dim,
                              uint32_t from, uint32_t to)
{
    if (dim >= g->dims)
        return 0;
    if (!g->wraps[dim])
        return (int32_t)to - (int32_t)from;
    uint32_t size = g->size[dim];
    /* Steps going the plus way round, then pick the shorter way. */
    uint32_t plus = to >= from ? to - from : to + size - from;
    uint32_t minus = plus == 0 ? 0 : size - plus;
    if (plus <= minus)
        return (int32_t)plus;
    return -(int32_t)minus;
}

bool torus_geometry_offset_is_tie(const struct torus_geometry *g, unsigned dim,
                                  uint32_t from, uint32_t to)
{
    if (!torus_geometry_is_torus(g, dim) || g->size[dim] % 2 != 0)
        return false;
    int32_t offset = torus_geometry_offset(g, dim, from, to);
    return offset != 0 && (uint32_t)offset * 2u == g->size[dim];
}

uint32_t torus_geometry_distance(const struct torus_geometry *g, uint32_t a,
                                 uint32_t b)
{
    if (a >= g->node_count || b >= g->node_count)
        return UINT32_MAX;
    uint32_t hops = 0;
    for (unsigned d = 0; d < g->dims; d++) {
        int32_t offset = torus_geometry_offset(g, d, torus_geometry_coord(g, a, d),
                                               torus_geometry_coord(g, b, d));
        hops += (uint32_t)(offset < 0 ? -offset : offset);
    }
    return hops;
}

uint32_t torus_geometry_diameter(const struct torus_geometry *g)
{
    uint32_t hops = 0;
    for (unsigned d = 0; d < g->dims; d++)
        hops += g->wraps[d] ? g->size[d] / 2u : g->size[d] - 1u;
    return hops;
}

const char *torus_geometry_link_name(unsigned link)
{
    if (link >= CONFIG_MAX_LINKS)
        return "?";
    return link_names[link];
}

bool torus_geometry_link_from_name(const char *name, unsigned *link)
{
    if (name == NULL || name[0] == '\0' || name[1] == '\0' || name[2] != '\0')
        return false;
    for (unsigned dim = 0; dim < CONFIG_MAX_DIMS; dim++) {
        if (name[0] != dim_names[dim])
            continue;
        if (name[1] == '+' || name[1] == '-') {
            *link = torus_geometry_link(dim, name[1] == '+' ? TORUS_DIRECTION_PLUS
                                                             : TORUS_DIRECTION_MINUS);
            return true;
        }
        return false;
    }
    return false;
}
