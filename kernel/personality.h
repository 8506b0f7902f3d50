/*
 * The personality: a node's identity and job parameters, written by the
 * loader (QEMU: -device loader at the board's personality address; host: a
 * file) as on
 * Blue Gene.  Fixed layout, little-endian, PERSONALITY_SIZE bytes, guarded by
 * a magic number, a version and a CRC-32 over everything before the CRC.
 *
 *   off size field                 off size field
 *   0   4    magic "TORI"          24  12   dim_size[6]   (u16, unused: 0)
 *   4   2    version (1)           36  12   coord[6]      (u16, unused: 0)
 *   6   2    size (64)             48  4    member_count  (initial view)
 *   8   4    node_id               52  2    heartbeat_ms
 *   12  4    boot_incarnation      54  2    detect_timeout_ms
 *   16  1    dims                  56  2    link_rto_ms
 *   17  1    mesh_mask             58  1    link_retries
 *   18  1    tree_radix            59  1    partition_policy
 *   19  1    tree_layout           60  4    crc32 of bytes 0..59
 *   20  1    role
 *   21  1    timeout_ceiling
 *   22  2    reserved (0)
 *
 * Read fields only through the predicates below, never raw masks.
 */
#ifndef KERNEL_PERSONALITY_H
#define KERNEL_PERSONALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"

#define PERSONALITY_MAGIC 0x49524F54u /* "TORI" read little-endian */
#define PERSONALITY_VERSION 1
#define PERSONALITY_SIZE 64

enum personality_role { PERSONALITY_ROLE_COMPUTE = 0, PERSONALITY_ROLE_SPARE = 1 };
/* The values of membership_layout_kind (membership/layout.h). */
enum personality_tree_layout {
    PERSONALITY_TREE_RADIX = 0,
    PERSONALITY_TREE_TORUS = 1,
    PERSONALITY_TREE_BOX = 2,
};
enum personality_partition_policy {
    PERSONALITY_PARTITION_PRIMARY = 0, /* only a majority side goes on */
    PERSONALITY_PARTITION_EVERY_SIDE = 1,
};

struct personality {
    uint32_t node_id;
    uint32_t boot_incarnation;
    uint8_t dims;
    uint8_t mesh_mask;
    uint8_t tree_radix;
    uint8_t tree_layout;
    uint8_t role;
    uint16_t dim_size[CONFIG_MAX_DIMS];
    uint16_t coord[CONFIG_MAX_DIMS];
    uint32_t member_count;
    uint16_t heartbeat_ms;
    uint16_t detect_timeout_ms;
    uint16_t link_rto_ms;
    uint8_t link_retries;
    uint8_t partition_policy;
    /* The adaptive detector's bound: no timeout grows past this many times
     * the configured one (membership_config.timeout_ceiling; 1: fixed). */
    uint8_t timeout_ceiling;
};

/* What is wrong with a block: the field, its value, what was expected. */
struct personality_error {
    const char *field;    /* NULL: the whole block is missing */
    uint32_t value;       /* what was found */
    const char *expected; /* what was expected, in words */
};

/* Fills defaults for everything but identity and shape. */
void personality_set_defaults(struct personality *p);

/* Checks every field; returns false and fills *error on the first bad one. */
bool personality_validate(const struct personality *p,
                          struct personality_error *error);

/* Decodes and validates a raw block (NULL or short: "missing"/"size"). */
bool personality_decode(const uint8_t *block, size_t length,
                        struct personality *out,
                        struct personality_error *error);

/* Encodes a validated personality, CRC included. */
void personality_encode(const struct personality *p,
                        uint8_t out[PERSONALITY_SIZE]);

/*
 * Default detector and link timings, shared with the host tools.  Chosen for
 * emulated tori of up to 16 nodes sharing a small host, where a node may not
 * run for tens of milliseconds: a silent torus neighbour is suspected after
 * 60 ms (6 heartbeats), a member watched from further away after twice that
 * (its heartbeats may be crossing the dead node until routes avoid it), a
 * link declared down after (retries + 1) x rto = 90 ms.  The launcher slows
 * them for larger tori; hardware would use far less.
 */
#define PERSONALITY_DEFAULT_HEARTBEAT_MS 10
#define PERSONALITY_DEFAULT_DETECT_TIMEOUT_MS 60
#define PERSONALITY_DEFAULT_LINK_RTO_MS 10
#define PERSONALITY_DEFAULT_LINK_RETRIES 8
/* The detector's ceiling (membership.h's MEMBERSHIP_TIMEOUT_CEILING_*; the
 * node checks they agree): default and largest. */
#define PERSONALITY_DEFAULT_TIMEOUT_CEILING 4
#define PERSONALITY_TIMEOUT_CEILING_MAX 64

/* One line, NUL-terminated, cut to fit: "personality: tree_radix=3 is
 * invalid, expected a power of two in 2..16".  Returns its length. */
unsigned personality_format_error(const struct personality_error *error,
                                  char *out, unsigned capacity);

/* The same line for another loader block, named by block ("job: ..."). */
unsigned personality_format_block_error(const char *block,
                                        const struct personality_error *error,
                                        char *out, unsigned capacity);

static inline bool personality_is_mesh(const struct personality *p, unsigned dim)
{
    return dim < p->dims && ((p->mesh_mask >> dim) & 1u) != 0;
}
static inline bool personality_is_torus(const struct personality *p, unsigned dim)
{
    return dim < p->dims && !personality_is_mesh(p, dim);
}
static inline bool personality_is_spare(const struct personality *p)
{
    return p->role == PERSONALITY_ROLE_SPARE;
}
/* "radix", "torus", "box" (tree_layout's values); "?" for others. */
const char *personality_tree_layout_name(uint8_t tree_layout);

/* The tree_layout value named text; false (value untouched) for none. */
bool personality_tree_layout_from_name(const char *text, uint8_t *tree_layout);
uint32_t personality_node_count(const struct personality *p);

#endif /* KERNEL_PERSONALITY_H */
