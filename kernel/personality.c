#include "kernel/personality.h"

#include <string.h>

#include "lib/crc32.h"
#include "lib/format.h"
#include "lib/le.h"

enum personality_offset {
    OFFSET_MAGIC = 0,
    OFFSET_VERSION = 4,
    OFFSET_SIZE = 6,
    OFFSET_NODE_ID = 8,
    OFFSET_INCARNATION = 12,
    OFFSET_DIMS = 16,
    OFFSET_MESH_MASK = 17,
    OFFSET_TREE_RADIX = 18,
    OFFSET_TREE_LAYOUT = 19,
    OFFSET_ROLE = 20,
    OFFSET_TIMEOUT_CEILING = 21,
    OFFSET_RESERVED = 22, /* 2 bytes */
    OFFSET_DIM_SIZE = 24, /* 6 x u16 */
    OFFSET_COORD = 36,    /* 6 x u16 */
    OFFSET_MEMBER_COUNT = 48,
    OFFSET_HEARTBEAT_MS = 52,
    OFFSET_DETECT_TIMEOUT_MS = 54,
    OFFSET_LINK_RTO_MS = 56,
    OFFSET_LINK_RETRIES = 58,
    OFFSET_PARTITION_POLICY = 59,
    OFFSET_CRC = 60,
};

/* The wire layout has room for six dimensions whatever CONFIG_MAX_DIMS is. */
#define PERSONALITY_WIRE_DIMS 6
_Static_assert(CONFIG_MAX_DIMS <= PERSONALITY_WIRE_DIMS,
               "personality layout holds at most 6 dimensions");

void personality_set_defaults(struct personality *p)
{
    p->boot_incarnation = 1;
    p->mesh_mask = 0;
    p->tree_radix = CONFIG_TREE_RADIX_DEFAULT;
    p->tree_layout = PERSONALITY_TREE_RADIX;
    p->role = PERSONALITY_ROLE_COMPUTE;
    p->heartbeat_ms = PERSONALITY_DEFAULT_HEARTBEAT_MS;
    p->detect_timeout_ms = PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS;
    p->link_rto_ms = PERSONALITY_DEFAULT_LINK_RTO_MS;
    p->link_retries = PERSONALITY_DEFAULT_LINK_RETRIES;
    p->partition_policy = PERSONALITY_PARTITION_PRIMARY;
    p->timeout_ceiling = PERSONALITY_DEFAULT_TIMEOUT_CEILING;
}

static const char *const tree_layout_names[] = {"radix", "torus", "box"};
#define TREE_LAYOUT_COUNT (sizeof tree_layout_names / sizeof tree_layout_names[0])

const char *personality_tree_layout_name(uint8_t tree_layout)
{
    return tree_layout < TREE_LAYOUT_COUNT ? tree_layout_names[tree_layout] : "?";
}

bool personality_tree_layout_from_name(const char *text, uint8_t *tree_layout)
{
    for (unsigned v = 0; text != NULL && v < TREE_LAYOUT_COUNT; v++) {
        if (strcmp(text, tree_layout_names[v]) == 0) {
            *tree_layout = (uint8_t)v;
            return true;
        }
    }
    return false;
}

uint32_t personality_node_count(const struct personality *p)
{
    uint32_t count = 1;
    for (unsigned d = 0; d < p->dims && d < CONFIG_MAX_DIMS; d++)
        count *= p->dim_size[d];
    return count;
}

static bool fail(struct personality_error *error, const char *field,
                 uint32_t value, const char *expected)
{
    error->field = field;
    error->value = value;
    error->expected = expected;
    return false;
}

#define STRINGIFY_VALUE(x) #x
#define STRINGIFY(x) STRINGIFY_VALUE(x)

bool personality_validate(const struct personality *p,
                          struct personality_error *error)
{
    if (p->dims < 1 || p->dims > CONFIG_MAX_DIMS)
        return fail(error, "dims", p->dims, "1.." STRINGIFY(CONFIG_MAX_DIMS));
    uint64_t count = 1;
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        if (d < p->dims) {
            if (p->dim_size[d] < 1)
                return fail(error, "dim_size", p->dim_size[d],
                            "every used dimension at least 1");
            count *= p->dim_size[d];
            if (count > CONFIG_MAX_NODES)
                return fail(error, "dim_size", (uint32_t)count,
                            "a node count of at most CONFIG_MAX_NODES ("
                            STRINGIFY(CONFIG_MAX_NODES) ")");
        } else if (p->dim_size[d] != 0 || p->coord[d] != 0) {
            return fail(error, p->dim_size[d] != 0 ? "dim_size" : "coord",
                        p->dim_size[d] != 0 ? p->dim_size[d] : p->coord[d],
                        "0 beyond the used dimensions");
        }
    }
    if ((p->mesh_mask >> p->dims) != 0)
        return fail(error, "mesh_mask", p->mesh_mask,
                    "bits only for used dimensions");
    uint32_t rank = 0;
    uint32_t stride = 1;
    for (unsigned d = 0; d < p->dims; d++) {
        if (p->coord[d] >= p->dim_size[d])
            return fail(error, "coord", p->coord[d],
                        "each coordinate below its dimension's size");
        rank += p->coord[d] * stride;
        stride *= p->dim_size[d];
    }
    if (p->node_id >= count)
        return fail(error, "node_id", p->node_id, "below the node count");
    if (p->node_id != rank)
        return fail(error, "node_id", p->node_id,
                    "the rank of the coordinates (dimension 0 fastest)");
    if (p->tree_radix < 2 || p->tree_radix > CONFIG_TREE_RADIX_MAX ||
        (p->tree_radix & (p->tree_radix - 1)) != 0)
        return fail(error, "tree_radix", p->tree_radix,
                    "a power of two in 2..16");
    if (p->tree_layout > PERSONALITY_TREE_BOX)
        return fail(error, "tree_layout", p->tree_layout, "0 (radix), 1 (torus) or 2 (box)");
    if (p->role > PERSONALITY_ROLE_SPARE)
        return fail(error, "role", p->role, "0 (compute) or 1 (spare)");
    if (p->member_count < 1 || p->member_count > count)
        return fail(error, "member_count", p->member_count,
                    "1..node count (the initial view is ranks below it)");
    if ((p->node_id < p->member_count) != (p->role == PERSONALITY_ROLE_COMPUTE))
        return fail(error, "role", p->role,
                    "compute for ranks below member_count, spare above");
    if (p->heartbeat_ms < 1)
        return fail(error, "heartbeat_ms", p->heartbeat_ms, "at least 1");
    if (p->detect_timeout_ms <= p->heartbeat_ms)
        return fail(error, "detect_timeout_ms", p->detect_timeout_ms,
                    "more than heartbeat_ms");
    if (p->link_rto_ms < 1)
        return fail(error, "link_rto_ms", p->link_rto_ms, "at least 1");
    if (p->link_retries < 1)
        return fail(error, "link_retries", p->link_retries, "at least 1");
    if (p->partition_policy > PERSONALITY_PARTITION_EVERY_SIDE)
        return fail(error, "partition_policy", p->partition_policy,
                    "0 (primary component) or 1 (every side)");
    if (p->timeout_ceiling < 1 || p->timeout_ceiling > PERSONALITY_TIMEOUT_CEILING_MAX)
        return fail(error, "timeout_ceiling", p->timeout_ceiling,
                    "1.." STRINGIFY(PERSONALITY_TIMEOUT_CEILING_MAX)
                    " (the detector's timeouts at most this many times the set ones)");
    return true;
}

bool personality_decode(const uint8_t *block, size_t length,
                        struct personality *out,
                        struct personality_error *error)
{
    if (block == NULL || length == 0)
        return fail(error, NULL, 0,
                    "a 64-byte block with magic 'TORI' written by the loader");
    if (length < PERSONALITY_SIZE)
        return fail(error, "length", (uint32_t)length, "64 bytes");
    uint32_t magic = le_get_u32(block + OFFSET_MAGIC);
    if (magic != PERSONALITY_MAGIC)
        return fail(error, "magic", magic, "0x49524f54 ('TORI')");
    uint16_t version = le_get_u16(block + OFFSET_VERSION);
    if (version != PERSONALITY_VERSION)
        return fail(error, "version", version, "1");
    uint16_t size = le_get_u16(block + OFFSET_SIZE);
    if (size != PERSONALITY_SIZE)
        return fail(error, "size", size, "64");
    uint32_t crc = le_get_u32(block + OFFSET_CRC);
    if (crc != crc32_update(0, block, OFFSET_CRC))
        return fail(error, "crc32", crc, "the CRC-32 of bytes 0..59");
    for (unsigned i = 0; i < 2; i++)
        if (block[OFFSET_RESERVED + i] != 0)
            return fail(error, "reserved", block[OFFSET_RESERVED + i], "0");
    out->node_id = le_get_u32(block + OFFSET_NODE_ID);
    out->boot_incarnation = le_get_u32(block + OFFSET_INCARNATION);
    out->dims = block[OFFSET_DIMS];
    out->mesh_mask = block[OFFSET_MESH_MASK];
    out->tree_radix = block[OFFSET_TREE_RADIX];
    out->tree_layout = block[OFFSET_TREE_LAYOUT];
    out->role = block[OFFSET_ROLE];
    for (unsigned d = 0; d < PERSONALITY_WIRE_DIMS; d++) {
        uint16_t dim_size = le_get_u16(block + OFFSET_DIM_SIZE + 2 * d);
        uint16_t coord = le_get_u16(block + OFFSET_COORD + 2 * d);
        if (d < CONFIG_MAX_DIMS) {
            out->dim_size[d] = dim_size;
            out->coord[d] = coord;
        } else if (dim_size != 0) {
            return fail(error, "dims", d + 1u,
                        "at most CONFIG_MAX_DIMS (" STRINGIFY(CONFIG_MAX_DIMS) ")");
        }
    }
    out->member_count = le_get_u32(block + OFFSET_MEMBER_COUNT);
    out->heartbeat_ms = le_get_u16(block + OFFSET_HEARTBEAT_MS);
    out->detect_timeout_ms = le_get_u16(block + OFFSET_DETECT_TIMEOUT_MS);
    out->link_rto_ms = le_get_u16(block + OFFSET_LINK_RTO_MS);
    out->link_retries = block[OFFSET_LINK_RETRIES];
    out->partition_policy = block[OFFSET_PARTITION_POLICY];
    out->timeout_ceiling = block[OFFSET_TIMEOUT_CEILING];
    return personality_validate(out, error);
}

void personality_encode(const struct personality *p,
                        uint8_t out[PERSONALITY_SIZE])
{
    for (unsigned i = 0; i < PERSONALITY_SIZE; i++)
        out[i] = 0;
    le_put_u32(out + OFFSET_MAGIC, PERSONALITY_MAGIC);
    le_put_u16(out + OFFSET_VERSION, PERSONALITY_VERSION);
    le_put_u16(out + OFFSET_SIZE, PERSONALITY_SIZE);
    le_put_u32(out + OFFSET_NODE_ID, p->node_id);
    le_put_u32(out + OFFSET_INCARNATION, p->boot_incarnation);
    out[OFFSET_DIMS] = p->dims;
    out[OFFSET_MESH_MASK] = p->mesh_mask;
    out[OFFSET_TREE_RADIX] = p->tree_radix;
    out[OFFSET_TREE_LAYOUT] = p->tree_layout;
    out[OFFSET_ROLE] = p->role;
    out[OFFSET_TIMEOUT_CEILING] = p->timeout_ceiling;
    for (unsigned d = 0; d < CONFIG_MAX_DIMS; d++) {
        le_put_u16(out + OFFSET_DIM_SIZE + 2 * d, p->dim_size[d]);
        le_put_u16(out + OFFSET_COORD + 2 * d, p->coord[d]);
    }
    le_put_u32(out + OFFSET_MEMBER_COUNT, p->member_count);
    le_put_u16(out + OFFSET_HEARTBEAT_MS, p->heartbeat_ms);
    le_put_u16(out + OFFSET_DETECT_TIMEOUT_MS, p->detect_timeout_ms);
    le_put_u16(out + OFFSET_LINK_RTO_MS, p->link_rto_ms);
    out[OFFSET_LINK_RETRIES] = p->link_retries;
    out[OFFSET_PARTITION_POLICY] = p->partition_policy;
    le_put_u32(out + OFFSET_CRC, crc32_update(0, out, OFFSET_CRC));
}

static unsigned append(char *out, unsigned n, unsigned capacity, const char *text)
{
    while (*text != '\0' && n + 1 < capacity)
        out[n++] = *text++;
    return n;
}

unsigned personality_format_block_error(const char *block,
                                        const struct personality_error *error,
                                        char *out, unsigned capacity)
{
    if (capacity == 0)
        return 0;
    unsigned n = append(out, 0, capacity, block);
    n = append(out, n, capacity, ": ");
    if (error->field == NULL) {
        n = append(out, n, capacity, "missing, expected ");
    } else {
        char number[20];
        bool is_hex = strcmp(error->field, "magic") == 0 ||
                      strcmp(error->field, "crc32") == 0;
        unsigned digits = is_hex ? format_hex(number, error->value)
                                 : format_u64(number, error->value);
        number[digits] = '\0';
        n = append(out, n, capacity, error->field);
        n = append(out, n, capacity, "=");
        n = append(out, n, capacity, number);
        n = append(out, n, capacity, " is invalid, expected ");
    }
    n = append(out, n, capacity, error->expected);
    out[n] = '\0';
    return n;
}

unsigned personality_format_error(const struct personality_error *error,
                                  char *out, unsigned capacity)
{
    return personality_format_block_error("personality", error, out, capacity);
}
