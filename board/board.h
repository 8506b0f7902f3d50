/*
 * The board interface: everything the kernel needs from hardware or from the
 * operating system underneath it.  One backend is linked per build, chosen by
 * TORI_BOARD (board/qemu-virt, board/host; board/mpi is built beside host,
 * tori-node-mpi); the kernel never looks past this header.  No function here blocks except board_idle_until().
 */
#ifndef BOARD_BOARD_H
#define BOARD_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Brings up console, clock and interrupt routing; called first, once. */
void board_init(void);

/* Short board name for events and logs ("qemu-virt", "host"). */
const char *board_name(void);

/* Monotonic time since an arbitrary origin, in nanoseconds. */
uint64_t board_now_ns(void);

/* Writes bytes to the console; never allocates, never fails visibly. */
void board_console_write(const char *bytes, size_t length);

/*
 * Reads console input (the launcher's control channel) without blocking;
 * returns the number of bytes read, 0 when none are waiting.
 */
size_t board_console_read(char *buffer, size_t capacity);

/*
 * The raw personality block as the loader left it, or NULL with *length 0
 * when there is none.  Validation is the kernel's (kernel/personality.h).
 */
const uint8_t *board_personality_block(size_t *length);

/*
 * The raw job block (kernel/job.h) as the loader left it, or NULL with
 * *length 0 when there is none: the node then runs no application.
 */
const uint8_t *board_job_block(size_t *length);

/*
 * The job key (issue 20) a board may hold apart from a job block, for
 * nodes that run no job (host: tori-node --key-file FILE): copies it to
 * key and returns true; false when there is none.
 */
#define BOARD_KEY_BYTES 16
bool board_link_key(uint8_t key[BOARD_KEY_BYTES]);

/*
 * Whether a node may run keyless (frames with a CRC only, anyone on the
 * wire may forge them): false where other processes can reach the links
 * (host UDP) unless the node was told so (host: --auth off); true on
 * qemu-virt, where the job block is the only way in for a key.
 */
bool board_keyless_allowed(void);

/*
 * Sleeps until deadline_ns (board_now_ns() scale) or until a device or the
 * OS has input for the node, whichever is first.  UINT64_MAX: no deadline.
 * qemu-virt: WFI with interrupts masked in the CPU; host: ppoll.
 */
void board_idle_until(uint64_t deadline_ns);

/*
 * Resets this node has been through since it was powered on (0 on a fresh
 * start).  The kernel adds it to the personality's boot incarnation, so a
 * reset node never speaks with the incarnation of its earlier life.
 */
uint32_t board_reset_count(void);

/*
 * The checkpoint store (node/checkpoint.c): CONFIG_CHECKPOINT_STORE_BYTES of
 * RAM that no start-up code clears.  *survives_reset tells whether a reset
 * of the node keeps its contents (qemu-virt: yes, system_reset reloads only
 * the image and the loader's blocks; host: no, a restart is a new process).
 */
uint8_t *board_checkpoint_store(size_t *bytes, bool *survives_reset);

/*
 * The checkpoint mirror (node/tori_checkpoint.c, PROMOTE):
 * CONFIG_CHECKPOINT_MIRROR_BYTES of RAM that no start-up code clears, where
 * a standby spare keeps the checkpoints of the ranks it mirrors.
 */
uint8_t *board_checkpoint_mirror(size_t *bytes);

/*
 * The node's one stack: the deepest use so far and the size, in bytes,
 * where the board can measure them (qemu-virt paints the stack at reset).
 * Otherwise returns false and *why says why in a few words (host: the
 * process stack belongs to the operating system).
 */
bool board_stack_usage(size_t *high_water, size_t *size, const char **why);

/* Stops the node for good: WFI loop on hardware, exit(code) on host. */
_Noreturn void board_halt(int code);

#endif /* BOARD_BOARD_H */
