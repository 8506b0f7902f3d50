/*
 * stale: a test application (never in a product image) for a node that
 * hangs, is expelled, and resumes: its traffic from its old life must be
 * fenced (counted as stale, never delivered).
 *
 * Arguments: arg[0] the sender rank (the one the test hangs); arg[1] the
 * pace, ms per iteration.  The sender keeps one message in flight to every
 * other rank (tag STALE_TAG), each carrying its view epoch and iteration,
 * until a call fails (it lost its view).  The other ranks, the survivors,
 * pass a token around a ring of their own (RING_TAG) that never includes
 * the sender, so their result does not depend on it, and keep an
 * any-source receive posted for the sender's messages: one delivered from
 * a view older than the receiver's current one is a stale delivery.  A
 * survivor reports `app-stale` (messages delivered from the sender, stale
 * deliveries, the last iteration delivered, its view epoch at the end);
 * ok: every token right, no stale delivery, no failed call but the one
 * receive the sender's expulsion fails (the job runs in CONT mode: issue
 * 14; the survivors acknowledge it and post the receive again).  The
 * digest is the CRC-32 of the iterations done, the same on every survivor.
 */
#include <string.h>

#include "lib/crc32.h"
#include "node/tori.h"
#include "tests/node/stale.h"

#define RING_TAG 1
#define STALE_TAG 2
#define STALE_MAX_RANKS 64

/* What the sender sends (both ends are the same build: raw bytes). */
struct stale_message {
    uint64_t sender;
    uint64_t epoch;     /* the sender's view epoch when it sent it */
    uint64_t iteration;
};

/* Lets the node run until ms have passed since began_ns. */
static void pace(uint64_t began_ns, int64_t ms)
{
    while (tori_now_ns() - began_ns < (uint64_t)ms * 1000000u)
        tori_progress();
}

static struct tori_result run_sender(const struct tori_args *args, uint32_t rank, uint32_t size)
{
    static struct stale_message messages[STALE_MAX_RANKS];
    static tori_request requests[STALE_MAX_RANKS];
    struct tori_result outcome = {true, 0, 0};
    int64_t sent = 0;
    for (uint32_t i = 1; i <= args->iterations; i++) {
        uint64_t began = tori_now_ns();
        for (uint32_t to = 0; to < size && outcome.ok; to++) {
            if (to == rank)
                continue;
            bool done = true;
            struct tori_status status;
            if (requests[to] != TORI_REQUEST_NULL &&
                tori_test(&requests[to], &done, &status) != TORI_OK)
                outcome.ok = false; /* expelled: the job is over for this life */
            if (!done || !outcome.ok)
                continue;
            messages[to] = (struct stale_message){rank, tori_view_epoch(), i};
            if (tori_isend(TORI_COMM_WORLD, to, STALE_TAG, &messages[to], sizeof messages[to],
                           &requests[to]) != TORI_OK)
                outcome.ok = false;
            else
                sent++;
        }
        if (!outcome.ok)
            break;
        pace(began, args->arg[1]);
        outcome.digest = crc32_update((uint32_t)outcome.digest, &i, sizeof i);
        outcome.iterations = i;
        tori_iteration_done(i);
    }
    static const char *const keys[] = {"sent", "iterations", "view"};
    const int64_t values[] = {sent, outcome.iterations, (int64_t)tori_view_epoch()};
    tori_report("app-stale-sender", keys, values, 3);
    /* Its result is not the test's: the life it ran in ended. */
    return outcome;
}

static struct tori_result run_survivor(const struct tori_args *args, uint32_t rank,
                                       uint32_t size, uint32_t sender)
{
    struct tori_result outcome = {true, 0, 0};
    /* The ring of the survivors: every rank but the sender. */
    uint32_t next = (rank + 1) % size;
    if (next == sender)
        next = (next + 1) % size;
    uint32_t prev = (rank + size - 1) % size;
    if (prev == sender)
        prev = (prev + size - 1) % size;
    struct stale_message got;
    tori_request pending = TORI_REQUEST_NULL;
    int64_t delivered = 0, stale = 0, last_iteration = 0;
    if (tori_irecv(TORI_COMM_WORLD, TORI_ANY_SOURCE, STALE_TAG, &got, sizeof got, &pending) !=
        TORI_OK)
        outcome.ok = false;
    for (uint32_t i = 1; i <= args->iterations && outcome.ok; i++) {
        uint64_t began = tori_now_ns();
        uint64_t token = (uint64_t)rank << 32 | i;
        uint64_t passed = 0;
        tori_request send = TORI_REQUEST_NULL;
        if (tori_isend(TORI_COMM_WORLD, next, RING_TAG, &token, sizeof token, &send) != TORI_OK ||
            tori_recv(TORI_COMM_WORLD, prev, RING_TAG, &passed, sizeof passed, NULL) != TORI_OK ||
            tori_wait(&send, NULL) != TORI_OK || passed != ((uint64_t)prev << 32 | i)) {
            outcome.ok = false;
            break;
        }
        /* Every message that came is taken now: one of our view taken
         * after the sender was expelled (hung for a detector timeout
         * first, so that nothing it sent before is still unread) would be
         * taken for stale. */
        bool done = true;
        while (outcome.ok && done) {
            struct tori_status status;
            int error = tori_test(&pending, &done, &status);
            if (error == TORI_ERR_PROC_FAILED) {
                /* The sender's expulsion (issue 14, CONT): a receive from
                 * any source fails until the failure is acknowledged. */
                if (tori_comm_failure_ack(TORI_COMM_WORLD) != TORI_OK ||
                    tori_irecv(TORI_COMM_WORLD, TORI_ANY_SOURCE, STALE_TAG, &got, sizeof got,
                               &pending) != TORI_OK)
                    outcome.ok = false;
                continue;
            }
            if (error != TORI_OK)
                outcome.ok = false;
            if (!done || !outcome.ok)
                break;
            delivered++;
            /* Its view is not ours: it was sent in a life that ended. */
            if (status.source != sender || status.count != sizeof got ||
                got.sender != sender || got.epoch != tori_view_epoch())
                stale++;
            last_iteration = (int64_t)got.iteration;
            if (tori_irecv(TORI_COMM_WORLD, TORI_ANY_SOURCE, STALE_TAG, &got, sizeof got,
                           &pending) != TORI_OK)
                outcome.ok = false;
        }
        pace(began, args->arg[1]);
        outcome.digest = crc32_update((uint32_t)outcome.digest, &i, sizeof i);
        outcome.iterations = i;
        tori_iteration_done(i);
    }
    static const char *const keys[] = {"delivered", "stale", "last_iteration", "view"};
    const int64_t values[] = {delivered, stale, last_iteration, (int64_t)tori_view_epoch()};
    tori_report("app-stale", keys, values, 4);
    outcome.ok = outcome.ok && stale == 0 && outcome.iterations == args->iterations;
    return outcome;
}

struct tori_result tori_test_app_stale(const struct tori_args *args)
{
    struct tori_result failed = {false, 0, 0};
    uint32_t rank = 0, size = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK ||
        tori_size(TORI_COMM_WORLD, &size) != TORI_OK)
        return failed;
    if (size < 3 || size > STALE_MAX_RANKS || args->arg[0] < 0 ||
        args->arg[0] >= (int64_t)size || args->arg[1] < 0) {
        static const char *const keys[] = {"size", "sender", "pace_ms"};
        const int64_t values[] = {size, args->arg[0], args->arg[1]};
        tori_report("app-stale-bad-arguments", keys, values, 3);
        return failed;
    }
    uint32_t sender = (uint32_t)args->arg[0];
    return rank == sender ? run_sender(args, rank, size)
                          : run_survivor(args, rank, size, sender);
}
