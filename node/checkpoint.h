/*
 * The checkpoint store's format (node/checkpoint.c; issue 15): what a node
 * keeps of its application's coordinated checkpoints in the board's store
 * (board_checkpoint_store), apart from the rounds that fill it, so that a
 * unit test can check it byte by byte.
 *
 * The store: a commit record, then four slots of equal size:
 *
 *   own[0], own[1]    this rank's checkpoints, by generation parity
 *   ward[0], ward[1]  the copies this node keeps for its ward (the rank
 *                     whose buddy it is), by generation parity
 *
 * Two generations are kept so that a round cut short by a failure leaves
 * the previous one whole.  A slot: a 32-byte header (magic, job, rank,
 * generation, iteration, length, CRC-32 of the data, CRC-32 of the header
 * before it), then the data.  The commit record names the newest
 * generation every member completed (job, rank, generation, CRC).  Nothing
 * in the store is trusted: a slot counts only when its magic, job, rank,
 * generation and both CRCs match.  Pure: no I/O, no globals.
 */
#ifndef NODE_CHECKPOINT_H
#define NODE_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHECKPOINT_HEADER_BYTES 32u
#define CHECKPOINT_COMMIT_BYTES 64u

enum checkpoint_slot_kind { CHECKPOINT_OWN = 0, CHECKPOINT_WARD = 1 };

struct checkpoint_store {
    uint8_t *base;
    size_t slot_bytes; /* header included */
};

struct checkpoint_header {
    uint32_t job;        /* CRC-32 of the job block: another job's slots never count */
    uint32_t rank;
    uint32_t generation; /* 1, 2, ...; 0 is "none" */
    uint32_t iteration;  /* the application's, from tori_checkpoint */
    uint32_t length;     /* data bytes */
};

/* Carves a store of `bytes` (a multiple of 8, at least 4 KiB). */
void checkpoint_store_init(struct checkpoint_store *store, uint8_t *base, size_t bytes);

/* The largest state a slot holds. */
uint32_t checkpoint_capacity(const struct checkpoint_store *store);

/* The slot of a kind and generation (header first). */
uint8_t *checkpoint_slot(const struct checkpoint_store *store, enum checkpoint_slot_kind kind,
                         uint32_t generation);

/* Writes header and data into a slot (length <= capacity). */
void checkpoint_slot_write(uint8_t *slot, const struct checkpoint_header *header,
                           const void *data);

/*
 * True when the slot (of `bytes` bytes as received, or the slot's size)
 * holds a whole checkpoint of job, rank and generation; *header filled.
 */
bool checkpoint_slot_check(const uint8_t *slot, size_t bytes, uint32_t job, uint32_t rank,
                           uint32_t generation, struct checkpoint_header *header);

/* The header's fields as they stand (magic and header CRC checked, nothing
 * else): whose slot it claims to be, for checkpoint_slot_check to judge. */
bool checkpoint_slot_peek(const uint8_t *slot, size_t bytes, struct checkpoint_header *header);

/* Bytes a slot's checkpoint occupies (header and data). */
uint32_t checkpoint_slot_bytes(const struct checkpoint_header *header);

/* The commit record: the newest generation every member completed. */
void checkpoint_commit_write(const struct checkpoint_store *store, uint32_t job, uint32_t rank,
                             uint32_t generation);
/* That generation, or 0 when the record is absent, torn or another job's
 * or rank's. */
uint32_t checkpoint_commit_read(const struct checkpoint_store *store, uint32_t job,
                                uint32_t rank);

#endif /* NODE_CHECKPOINT_H */
