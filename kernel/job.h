/*
 * The job block: which application a node runs and with what parameters,
 * written by the loader beside the personality (QEMU: a second -device
 * loader blob at QEMU_VIRT_JOB_ADDRESS; host: tori-node --job FILE).  Fixed
 * layout, little-endian, JOB_SIZE bytes, guarded by a magic number, a
 * version, its size and a CRC-32 over everything before the CRC; validated
 * field by field like the personality (the same error record and line).
 * No block: the node runs no application.
 *
 *   off size field                  off size field
 *   0   4    magic "JOB1"           28  16   seed_node[4]      (u32; 0 beyond seed_count)
 *   4   2    version (1)            44  2    link_lossy_retransmits
 *   6   2    size (128)             46  2    link_lossy_window_ms
 *                                  48  32   app_arg[4]        (i64)
 *   8   1    app                    80  16   job_key           (128 bits)
 *   9   1    comm_mode              96  24   recovery_policy   (binary, lib/recovery.h)
 *   10  1    message_mode           120 4    reserved (0)
 *   11  1    routing_mode           124 4    crc32 of bytes 0..123
 *   12  4    iterations
 *   16  4    progress_interval      (app-progress every K iterations; 0: none)
 *   20  4    checkpoint_interval    (every K iterations; 0: none)
 *   24  4    seed_count             (0..4: a joiner asks these nodes first)
 *
 * comm_mode and message_mode are WORLD's failure and message modes (issue
 * 14; every communicator the application creates takes them too).  The
 * recovery policy (issue 15) is lib/recovery.h's binary form, checked byte
 * by byte; the field only ever accepted 24 zero bytes before, which still
 * read as "no policy", so the block kept its version.  Fields of features
 * later issues bring are defined now and accept only their "off" value,
 * with an error that says so; the seed nodes (issue 16) are node ids the
 * node's membership checks against the torus; routing_mode (issue 16): 0
 * detour, 1 table.  The job key (issue 20): all zero is none, else 128 random bits
 * (the launcher's, from /dev/urandom; a key of fewer than 4 distinct byte
 * values is refused as no random key); every frame is then tagged under it
 * (net/torus/frame.h).  It is never printed.  The link loss limit (issue
 * 15's network fault): more than link_lossy_retransmits frames resent on
 * one link within link_lossy_window_ms is reported (net/torus/link.h); 0 in
 * either: the link layer's default (64 frames, 1000 ms); the bytes were
 * reserved (0) before, so older blocks read as the defaults.
 */
#ifndef KERNEL_JOB_H
#define KERNEL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/personality.h"
#include "lib/recovery.h"

/* "JOB1" read little-endian.  A word whose top byte is below 0x40 is no
 * address in the node's RAM (0x40000000 up), which the certification's
 * sections check would otherwise take a constant for. */
#define JOB_MAGIC 0x31424F4Au
#define JOB_VERSION 1
#define JOB_SIZE 128
#define JOB_APP_ARGS 4
#define JOB_SEED_NODES 4
#define JOB_KEY_BYTES 16
#define JOB_POLICY_BYTES RECOVERY_POLICY_BYTES

/* The applications a job may name; an image holds those it was built with. */
enum job_app {
    JOB_APP_ALLREDUCE = 1,
    JOB_APP_STENCIL = 2,
    JOB_APP_PINGPONG = 3,
    JOB_APP_GREEDY = 4, /* a test application (tests/ only): computes, never yields */
    JOB_APP_STALE = 5,  /* a test application (tests/ only): a hung rank's stale sends */
    JOB_APP_FTPROBE = 6, /* a test application (tests/ only): failure semantics probes */
};
#define JOB_APP_LAST JOB_APP_FTPROBE

/* Communicator failure modes (FT-MPI; the numbers are comm/comm.h's enum
 * comm_mode): ABORT ends the job on a failure, BLANK leaves gaps, SHRINK
 * renumbers the survivors, REBUILD lets a spare adopt the failed rank. */
enum job_comm_mode { JOB_COMM_ABORT = 0, JOB_COMM_BLANK, JOB_COMM_SHRINK, JOB_COMM_REBUILD };
/* Message modes (FT-MPI; comm/comm.h's enum comm_msg_mode): NOP fails every
 * call on a failed communicator until it is rebuilt, CONT only the calls
 * naming a failed rank. */
enum job_message_mode { JOB_MESSAGE_NOP = 0, JOB_MESSAGE_CONT };
/* Routing modes (issue 16): DETOUR, the network's own (dimension order
 * with local detours, net/torus/route.h); TABLE, Phoenix's routing tables
 * for fault regions (net/torus/route_table.h). */
enum job_routing_mode { JOB_ROUTING_DETOUR = 0, JOB_ROUTING_TABLE = 1 };

struct job {
    uint8_t app;          /* enum job_app */
    uint8_t comm_mode;    /* enum job_comm_mode */
    uint8_t message_mode; /* enum job_message_mode */
    uint8_t routing_mode; /* enum job_routing_mode */
    uint32_t iterations;  /* >= 1 */
    uint32_t progress_interval;   /* app-progress every K iterations, 0: none */
    uint32_t checkpoint_interval; /* checkpoint every K iterations, 0: none */
    uint32_t seed_count;          /* 0..JOB_SEED_NODES */
    uint32_t seed_node[JOB_SEED_NODES];
    int64_t app_arg[JOB_APP_ARGS];
    uint8_t job_key[JOB_KEY_BYTES]; /* all zero: none; never printed */
    struct recovery_policy recovery; /* version 0: no policy */
    uint16_t link_lossy_retransmits; /* 0: the link layer's default */
    uint16_t link_lossy_window_ms;   /* 0: the link layer's default */
};

/* Clears every field to its "off" value and sets the defaults: no
 * application (app 0 is invalid: set one), 1 iteration, no progress. */
void job_set_defaults(struct job *job);

/* Checks every field; returns false and fills *error on the first bad one. */
bool job_validate(const struct job *job, struct personality_error *error);

/* Decodes and validates a raw block (NULL: "missing"; short: "length"). */
bool job_decode(const uint8_t *block, size_t length, struct job *out,
                struct personality_error *error);

/* Encodes a job, CRC included. */
void job_encode(const struct job *job, uint8_t out[JOB_SIZE]);

/* One line, NUL-terminated, cut to fit: "job: iterations=0 is invalid,
 * expected at least 1".  Returns its length. */
unsigned job_format_error(const struct personality_error *error, char *out,
                          unsigned capacity);

/* Names ("allreduce", ...; NULL for an id that is none) and back (0: none). */
const char *job_app_name(uint8_t app);
uint8_t job_app_from_name(const char *name);
const char *job_comm_mode_name(uint8_t mode);
const char *job_message_mode_name(uint8_t mode);
const char *job_routing_mode_name(uint8_t mode);
/* Back from a name: a value job_*_name gives NULL for when it is none. */
uint8_t job_comm_mode_from_name(const char *name);
uint8_t job_message_mode_from_name(const char *name);
uint8_t job_routing_mode_from_name(const char *name);

/* True when the job key is set (it is never printed, only this). */
bool job_has_key(const struct job *job);

#endif /* KERNEL_JOB_H */
