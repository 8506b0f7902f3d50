/* Variant unconfigured-table: a per-node table sized by a literal node
 * count instead of CONFIG_MAX_NODES, so its size no longer follows the
 * configuration.  The sizing check must name cert_variant_incarnations. */
#include <stdint.h>

#include "tests/cert/variants/cert_variant.h"

static volatile uint32_t cert_variant_node = 5;
static uint32_t cert_variant_incarnations[65536];

void cert_variant_run(void)
{
    cert_variant_incarnations[cert_variant_node & 0xFFFFu]++;
}
