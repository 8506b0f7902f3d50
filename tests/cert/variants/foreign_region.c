/* Variant foreign-region: writes into the checkpoint store (RAM outside the
 * image) through its address, not through board_checkpoint_store, the one
 * function cert/regions.conf lets load it.  The sections check must name
 * cert_variant_poke_store. */
#include "board/qemu-virt/memory_map.h"
#include "tests/cert/variants/cert_variant.h"

__attribute__((noinline)) static void cert_variant_poke_store(void)
{
    *(volatile unsigned *)QEMU_VIRT_CHECKPOINT_ADDRESS = 0x5eedu;
}

void cert_variant_run(void)
{
    cert_variant_poke_store();
}
