/*
 * The checkpoint store's format (node/checkpoint.h): slots carved apart,
 * a written slot read back whole, and every way a slot or the commit
 * record can be wrong (torn, another job's, another rank's, another
 * generation's, a short copy, a flipped byte) refused.
 */
#include <stdint.h>
#include <string.h>

#include "node/checkpoint.h"
#include "tests/check.h"

static uint8_t memory[16384] __attribute__((aligned(8)));

int main(void)
{
    struct checkpoint_store store;
    checkpoint_store_init(&store, memory, sizeof memory);
    CHECK(store.slot_bytes % 8 == 0);
    CHECK(CHECKPOINT_COMMIT_BYTES + 4 * store.slot_bytes <= sizeof memory);
    CHECK(checkpoint_capacity(&store) == store.slot_bytes - CHECKPOINT_HEADER_BYTES);
    /* Four distinct slots, by kind and generation parity. */
    uint8_t *slots[4] = {checkpoint_slot(&store, CHECKPOINT_OWN, 2),
                         checkpoint_slot(&store, CHECKPOINT_OWN, 3),
                         checkpoint_slot(&store, CHECKPOINT_WARD, 4),
                         checkpoint_slot(&store, CHECKPOINT_WARD, 5)};
    for (int i = 0; i < 4; i++) {
        CHECK(slots[i] >= memory + CHECKPOINT_COMMIT_BYTES);
        CHECK(slots[i] + store.slot_bytes <= memory + sizeof memory);
        for (int j = i + 1; j < 4; j++)
            CHECK(slots[i] + store.slot_bytes <= slots[j]);
    }
    CHECK(checkpoint_slot(&store, CHECKPOINT_OWN, 7) == slots[1]);

    /* Written, then read back whole. */
    uint8_t data[300];
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7u + 1u);
    struct checkpoint_header header = {0xC0FFEEu, 5, 3, 150, sizeof data};
    checkpoint_slot_write(slots[1], &header, data);
    struct checkpoint_header got;
    CHECK(checkpoint_slot_check(slots[1], store.slot_bytes, 0xC0FFEEu, 5, 3, &got));
    CHECK(got.iteration == 150 && got.length == sizeof data);
    CHECK(memcmp(slots[1] + CHECKPOINT_HEADER_BYTES, data, sizeof data) == 0);
    CHECK(checkpoint_slot_bytes(&got) == CHECKPOINT_HEADER_BYTES + sizeof data);
    /* As received: exactly its bytes pass, one fewer does not. */
    CHECK(checkpoint_slot_check(slots[1], CHECKPOINT_HEADER_BYTES + sizeof data, 0xC0FFEEu, 5, 3,
                                &got));
    CHECK(!checkpoint_slot_check(slots[1], CHECKPOINT_HEADER_BYTES + sizeof data - 1, 0xC0FFEEu,
                                 5, 3, &got));
    CHECK(!checkpoint_slot_check(slots[1], 8, 0xC0FFEEu, 5, 3, &got));
    /* Another job, rank or generation. */
    CHECK(!checkpoint_slot_check(slots[1], store.slot_bytes, 0xC0FFEFu, 5, 3, &got));
    CHECK(!checkpoint_slot_check(slots[1], store.slot_bytes, 0xC0FFEEu, 4, 3, &got));
    CHECK(!checkpoint_slot_check(slots[1], store.slot_bytes, 0xC0FFEEu, 5, 1, &got));
    /* Any flipped byte of header or data. */
    for (unsigned at = 0; at < CHECKPOINT_HEADER_BYTES + sizeof data; at++) {
        slots[1][at] ^= 0x10u;
        CHECK(!checkpoint_slot_check(slots[1], store.slot_bytes, 0xC0FFEEu, 5, 3, &got));
        slots[1][at] ^= 0x10u;
        CHECK_BAIL_IF_MANY();
    }
    CHECK(checkpoint_slot_check(slots[1], store.slot_bytes, 0xC0FFEEu, 5, 3, &got));
    /* Generation 0 is "none" even when written. */
    struct checkpoint_header zero = {0xC0FFEEu, 5, 0, 1, 4};
    checkpoint_slot_write(slots[0], &zero, data);
    CHECK(!checkpoint_slot_check(slots[0], store.slot_bytes, 0xC0FFEEu, 5, 0, &got));
    /* Zeroed RAM (a new process, a fresh QEMU) holds nothing. */
    memset(slots[2], 0, store.slot_bytes);
    CHECK(!checkpoint_slot_check(slots[2], store.slot_bytes, 0, 0, 0, &got));

    /* The commit record. */
    CHECK(checkpoint_commit_read(&store, 0xC0FFEEu, 5) == 0);
    checkpoint_commit_write(&store, 0xC0FFEEu, 5, 9);
    CHECK(checkpoint_commit_read(&store, 0xC0FFEEu, 5) == 9);
    CHECK(checkpoint_commit_read(&store, 0xC0FFEEu, 6) == 0);
    CHECK(checkpoint_commit_read(&store, 0xBEEFu, 5) == 0);
    memory[12] ^= 1u; /* torn */
    CHECK(checkpoint_commit_read(&store, 0xC0FFEEu, 5) == 0);
    return check_report("test_checkpoint_store");
}
