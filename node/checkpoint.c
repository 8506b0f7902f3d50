/*
 * The checkpoint store's format (see checkpoint.h).
 */
#include "node/checkpoint.h"

#include <string.h>

#include "lib/crc32.h"
#include "lib/le.h"

#define SLOT_MAGIC 0x31504B43u   /* "CKP1" */
#define COMMIT_MAGIC 0x314D4B43u /* "CKM1" */

void checkpoint_store_init(struct checkpoint_store *store, uint8_t *base, size_t bytes)
{
    store->base = base;
    store->slot_bytes = ((bytes - CHECKPOINT_COMMIT_BYTES) / 4u) & ~(size_t)7u;
}

uint32_t checkpoint_capacity(const struct checkpoint_store *store)
{
    return (uint32_t)(store->slot_bytes - CHECKPOINT_HEADER_BYTES);
}

uint8_t *checkpoint_slot(const struct checkpoint_store *store, enum checkpoint_slot_kind kind,
                         uint32_t generation)
{
    size_t index = (size_t)kind * 2u + (generation & 1u);
    return store->base + CHECKPOINT_COMMIT_BYTES + index * store->slot_bytes;
}

void checkpoint_slot_write(uint8_t *slot, const struct checkpoint_header *header,
                           const void *data)
{
    memmove(slot + CHECKPOINT_HEADER_BYTES, data, header->length);
    le_put_u32(slot + 0, SLOT_MAGIC);
    le_put_u32(slot + 4, header->job);
    le_put_u32(slot + 8, header->rank);
    le_put_u32(slot + 12, header->generation);
    le_put_u32(slot + 16, header->iteration);
    le_put_u32(slot + 20, header->length);
    le_put_u32(slot + 24, crc32_update(0, slot + CHECKPOINT_HEADER_BYTES, header->length));
    le_put_u32(slot + 28, crc32_update(0, slot, 28));
}

bool checkpoint_slot_check(const uint8_t *slot, size_t bytes, uint32_t job, uint32_t rank,
                           uint32_t generation, struct checkpoint_header *header)
{
    if (!checkpoint_slot_peek(slot, bytes, header))
        return false;
    return header->job == job && header->rank == rank && header->generation == generation &&
           generation != 0 && header->length <= bytes - CHECKPOINT_HEADER_BYTES &&
           le_get_u32(slot + 24) ==
               crc32_update(0, slot + CHECKPOINT_HEADER_BYTES, header->length);
}

bool checkpoint_slot_peek(const uint8_t *slot, size_t bytes, struct checkpoint_header *header)
{
    if (bytes < CHECKPOINT_HEADER_BYTES || le_get_u32(slot) != SLOT_MAGIC ||
        le_get_u32(slot + 28) != crc32_update(0, slot, 28))
        return false;
    header->job = le_get_u32(slot + 4);
    header->rank = le_get_u32(slot + 8);
    header->generation = le_get_u32(slot + 12);
    header->iteration = le_get_u32(slot + 16);
    header->length = le_get_u32(slot + 20);
    return true;
}

uint32_t checkpoint_slot_bytes(const struct checkpoint_header *header)
{
    return CHECKPOINT_HEADER_BYTES + header->length;
}

void checkpoint_commit_write(const struct checkpoint_store *store, uint32_t job, uint32_t rank,
                             uint32_t generation)
{
    uint8_t *record = store->base;
    le_put_u32(record + 0, COMMIT_MAGIC);
    le_put_u32(record + 4, job);
    le_put_u32(record + 8, rank);
    le_put_u32(record + 12, generation);
    le_put_u32(record + 16, crc32_update(0, record, 16));
}

uint32_t checkpoint_commit_read(const struct checkpoint_store *store, uint32_t job,
                                uint32_t rank)
{
    const uint8_t *record = store->base;
    if (le_get_u32(record) != COMMIT_MAGIC || le_get_u32(record + 16) != crc32_update(0, record, 16) ||
        le_get_u32(record + 4) != job || le_get_u32(record + 8) != rank)
        return 0;
    return le_get_u32(record + 12);
}
