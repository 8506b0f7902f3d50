/*
 * ftprobe: a test application (never in a product image) that probes issue
 * 14's failure semantics where the shipped applications cannot show them.
 * arg[0] picks the probe; arg[1] is the pace, ms per iteration.
 *
 * FTPROBE_PAIRS (0): ranks 2k and 2k+1 exchange one message each way per
 * iteration, and all ranks meet in a barrier every PAIRS_STEP iterations,
 * until WORLD turns DETECTED (the test kills a rank); then, for a
 * recovery window of arg[2] ms, each live pair goes on trying to exchange,
 * before every survivor rebuilds WORLD and checks one allreduce on the new
 * communicator.  It reports `app-ftprobe` with the exchanges completed in
 * the window (none under NOP: every call fails until the rebuild; some
 * under CONT between live pairs), the calls refused in it, and how often
 * the error handler ran and with which error.
 *
 * FTPROBE_AGREE (1): one agree per iteration; in every third iteration one
 * rank (it cycles) offers 0, the others 1.  A failure during a call makes
 * it return PROC_FAILED (then the rank acknowledges it and goes on).  The
 * digest is the CRC-32 of every value agreed: one digest over the survivors
 * shows agree is uniform (the value is; api14 promises no uniform error).
 * ok: a value that is certain is right (0 when its offerer is still live,
 * 1 when nobody offered 0).
 *
 * FTPROBE_REVOKE (2): every rank but the last blocks in a receive from a
 * live peer that never sends (a ring of them); the last rank revokes WORLD
 * after arg[2] ms.  Every blocked receive must fail with REVOKED; then all
 * shrink WORLD and check one allreduce on the result.
 *
 * FTPROBE_BUSY (3): each iteration, every rank holds the comm core's
 * collective slots itself (two barriers started on the core, beside the
 * blocking API; a third start must be refused BUSY), then calls
 * tori_allreduce; then it starts a dup on the core (a creation under way)
 * and calls tori_comm_dup; then holds the slots again and calls
 * tori_comm_agree.  Each blocking call must go on making the node progress
 * and start again until the core takes it (comm/DESIGN.md: a BUSY start
 * is transient, the blocking layer retries), never fail BUSY.  It reports
 * `app-ftprobe` with the starts seen refused (held) and the blocking
 * calls that succeeded (accepted); the digest is the CRC-32 of WORLD's
 * size.
 *
 * ok also needs the new communicator's allreduce (pairs, revoke) to count
 * every member of it; the digest is then the CRC-32 of its size.
 */
#include "tests/node/ftprobe.h"

#include "lib/crc32.h"
#include "node/node.h"
#include "node/tori.h"

enum { FTPROBE_PAIRS = 0, FTPROBE_AGREE = 1, FTPROBE_REVOKE = 2, FTPROBE_BUSY = 3 };

#define PAIR_TAG 1
#define RING_TAG 2
#define EXCHANGE_LATE (-1) /* the deadline passed before the exchange completed */
#define EXCHANGE_LEFT (-2) /* comm turned DETECTED while it waited (see exchange) */
#define NO_DEADLINE UINT64_MAX
#define PAIRS_STEP 10 /* iterations between barriers of the pairs probe */

static struct {
    int64_t calls;
    int64_t error;
} handled;

static void count_failure(tori_comm comm, int error)
{
    (void)comm;
    handled.calls++;
    handled.error = error;
}

/* Lets the node run until ms have passed since began_ns. */
static void pace(uint64_t began_ns, int64_t ms)
{
    while (tori_now_ns() - began_ns < (uint64_t)ms * 1000000u)
        tori_progress();
}

/*
 * One message each way with partner on comm (the iteration); *got: what
 * came.  A request still pending at the deadline, or when comm turns
 * DETECTED and stop_on_failure is set, is abandoned (its late completion
 * only writes the static buffer again): a partner that went into recovery
 * first may never send the message it waits for.
 */
static int exchange(tori_comm comm, uint32_t partner, uint32_t iteration, uint64_t deadline_ns,
                    bool stop_on_failure, uint32_t *got)
{
    static uint32_t sent, received;
    tori_request send = TORI_REQUEST_NULL, recv = TORI_REQUEST_NULL;
    sent = iteration;
    int error = tori_irecv(comm, partner, PAIR_TAG, &received, sizeof received, &recv);
    if (error == TORI_OK)
        error = tori_isend(comm, partner, PAIR_TAG, &sent, sizeof sent, &send);
    while (error == TORI_OK &&
           (send != TORI_REQUEST_NULL || recv != TORI_REQUEST_NULL)) {
        if (tori_now_ns() >= deadline_ns)
            return EXCHANGE_LATE;
        if (stop_on_failure && tori_comm_state(comm) != TORI_STATE_OK)
            return EXCHANGE_LEFT;
        bool done = false;
        if (send != TORI_REQUEST_NULL)
            error = tori_test(&send, &done, NULL);
        if (error == TORI_OK && recv != TORI_REQUEST_NULL)
            error = tori_test(&recv, &done, NULL);
    }
    *got = received;
    return error;
}

/* An allreduce of 1 over comm counts its members: true when it does. */
static bool counts_members(tori_comm comm, uint64_t *digest)
{
    uint32_t size = 0;
    int64_t one = 1, total = 0;
    if (tori_size(comm, &size) != TORI_OK ||
        tori_allreduce(comm, &one, &total, 1, TORI_INT64, TORI_SUM) != TORI_OK)
        return false;
    *digest = crc32_update(0, &size, sizeof size);
    return total == (int64_t)size;
}

static struct tori_result run_pairs(const struct tori_args *args, uint32_t rank, uint32_t size)
{
    struct tori_result outcome = {true, 0, 0};
    tori_set_error_handler(count_failure);
    uint32_t partner = rank ^ 1u;
    bool paired = partner < size;
    bool failed = false;
    for (uint32_t i = 1; i <= args->iterations && !failed; i++) {
        uint64_t began = tori_now_ns();
        failed = tori_comm_state(TORI_COMM_WORLD) != TORI_STATE_OK;
        uint32_t got = 0;
        if (!failed && paired) {
            int error = exchange(TORI_COMM_WORLD, partner, i, NO_DEADLINE, true, &got);
            /* 0: the partner's first message of its recovery window. */
            failed = error != TORI_OK || got == 0;
            outcome.ok = outcome.ok && (failed || got == i);
        }
        /* Pairs keep in step with the whole job: without it, a busy host
         * let two pairs run all their iterations before the killed rank
         * reached the iteration it dies at, and they never saw it fail. */
        if (!failed && i % PAIRS_STEP == 0)
            failed = tori_barrier(TORI_COMM_WORLD) != TORI_OK;
        if (failed)
            break;
        outcome.iterations = i;
        tori_iteration_done(i);
        pace(began, args->arg[1]);
    }
    /* The recovery window: what live pairs can still exchange. */
    int64_t exchanged = 0, refused = 0;
    uint64_t window_end = tori_now_ns() + (uint64_t)args->arg[2] * 1000000u;
    while (failed && tori_now_ns() < window_end) {
        uint64_t began = tori_now_ns();
        uint32_t got = 0;
        int error = paired ? exchange(TORI_COMM_WORLD, partner, 0, window_end, false, &got)
                           : EXCHANGE_LATE;
        if (error == TORI_OK) {
            exchanged++;
        } else if (error != EXCHANGE_LATE) {
            refused++;
            pace(began, 1);
        } else {
            pace(began, 1);
        }
    }
    tori_comm rebuilt = TORI_COMM_NULL;
    bool recovered = failed && tori_comm_rebuild(TORI_COMM_WORLD, &rebuilt) == TORI_OK &&
                     counts_members(rebuilt, &outcome.digest);
    static const char *const keys[] = {"exchanged", "refused", "handler_calls", "handler_error"};
    const int64_t values[] = {exchanged, refused, handled.calls, handled.error};
    tori_report("app-ftprobe", keys, values, 4);
    outcome.ok = outcome.ok && recovered;
    return outcome;
}

static struct tori_result run_agree(const struct tori_args *args, uint32_t rank, uint32_t size)
{
    struct tori_result outcome = {true, 0, 0};
    int64_t zeros = 0, proc_failed = 0;
    for (uint32_t i = 1; i <= args->iterations; i++) {
        uint64_t began = tori_now_ns();
        uint32_t offerer = i % 3 == 0 ? (i / 3) % size : UINT32_MAX; /* who offers 0 */
        uint32_t flag = rank == offerer ? 0 : 1;
        int error = tori_comm_agree(TORI_COMM_WORLD, &flag);
        if (error == TORI_ERR_PROC_FAILED) {
            proc_failed++;
            if (tori_comm_failure_ack(TORI_COMM_WORLD) != TORI_OK)
                outcome.ok = false;
        } else if (error != TORI_OK) {
            outcome.ok = false;
            break;
        }
        /* Certain: 1 when nobody offered 0; 0 when the offerer is still
         * live (it took part).  A failed offerer's 0 may or may not count. */
        uint32_t failed_ranks[8];
        uint32_t failed_count = 0;
        uint64_t epoch = 0;
        bool offerer_failed = false;
        if (offerer != UINT32_MAX &&
            tori_comm_failed_ranks(TORI_COMM_WORLD, failed_ranks, 8, &failed_count, &epoch) ==
                TORI_OK)
            for (uint32_t f = 0; f < failed_count && f < 8; f++)
                offerer_failed |= failed_ranks[f] == offerer;
        if ((offerer == UINT32_MAX && flag != 1) ||
            (offerer != UINT32_MAX && !offerer_failed && flag != 0))
            outcome.ok = false;
        zeros += flag == 0;
        outcome.digest = crc32_update((uint32_t)outcome.digest, &flag, sizeof flag);
        outcome.iterations = i;
        tori_iteration_done(i);
        pace(began, args->arg[1]);
    }
    static const char *const keys[] = {"zeros", "proc_failed"};
    const int64_t values[] = {zeros, proc_failed};
    tori_report("app-ftprobe", keys, values, 2);
    return outcome;
}

/* tori_comm_free's rules on comm (not WORLD; freed here): WORLD refused,
 * a pending receive refuses it until completed, then it goes (the handle
 * becomes TORI_COMM_NULL and is refused after). */
static bool free_rules(tori_comm comm)
{
    uint32_t self = 0;
    tori_comm world = TORI_COMM_WORLD;
    if (tori_comm_free(&world) != TORI_ERR_FREE_WORLD || world != TORI_COMM_WORLD ||
        tori_rank(comm, &self) != TORI_OK)
        return false;
    static uint64_t in, out = 7;
    tori_request recv = TORI_REQUEST_NULL, send = TORI_REQUEST_NULL;
    tori_comm kept = comm;
    bool ok = tori_irecv(comm, self, RING_TAG, &in, sizeof in, &recv) == TORI_OK &&
              tori_comm_free(&comm) == TORI_ERR_FREE_PENDING && comm == kept &&
              tori_isend(comm, self, RING_TAG, &out, sizeof out, &send) == TORI_OK &&
              tori_wait(&recv, NULL) == TORI_OK && tori_wait(&send, NULL) == TORI_OK && in == 7;
    ok = ok && tori_comm_free(&comm) == TORI_OK && comm == TORI_COMM_NULL;
    uint32_t size = 0;
    return ok && tori_size(kept, &size) != TORI_OK && tori_comm_free(&kept) != TORI_OK;
}

static struct tori_result run_revoke(const struct tori_args *args, uint32_t rank, uint32_t size)
{
    struct tori_result outcome = {false, 0, 0};
    int64_t revoked = 0;
    if (rank + 1 == size) {
        pace(tori_now_ns(), args->arg[2]);
        revoked = tori_comm_revoke(TORI_COMM_WORLD) == TORI_OK;
    } else {
        /* A ring of receives that no one sends: each waits on a live peer. */
        uint32_t from = (rank + 1) % (size - 1);
        uint64_t nothing = 0;
        revoked = tori_recv(TORI_COMM_WORLD, from, RING_TAG, &nothing, sizeof nothing, NULL) ==
                  TORI_ERR_REVOKED;
    }
    tori_comm shrunk = TORI_COMM_NULL;
    bool recovered = tori_comm_shrink(TORI_COMM_WORLD, &shrunk) == TORI_OK &&
                     counts_members(shrunk, &outcome.digest);
    static const char *const keys[] = {"revoked", "freed"};
    const int64_t values[] = {revoked, recovered && free_rules(shrunk)};
    tori_report("app-ftprobe", keys, values, 2);
    outcome.ok = revoked == 1 && recovered;
    outcome.iterations = args->iterations;
    return outcome;
}

/* Runs the node until the core's own request is done; its status. */
static struct comm_status core_wait(uint32_t request)
{
    struct comm_status status = {0};
    while (!comm_test(&node_job_node()->comm, request, &status))
        tori_progress();
    return status;
}

/* Both of the core's collective slots held by barriers of this rank's own
 * (every rank does the same, so they complete): true when a third start
 * is refused BUSY, as the blocking call after it will be at first. */
static bool hold_slots(uint32_t held[2])
{
    struct node *node = node_job_node();
    uint64_t now = tori_now_ns();
    held[0] = held[1] = COMM_REQUEST_NULL;
    uint32_t third = COMM_REQUEST_NULL;
    bool ok = comm_ibarrier(&node->comm, COMM_WORLD, now, &node->comm_outbox, &held[0]) ==
                  COMM_ERR_OK &&
              comm_ibarrier(&node->comm, COMM_WORLD, now, &node->comm_outbox, &held[1]) ==
                  COMM_ERR_OK &&
              comm_ibarrier(&node->comm, COMM_WORLD, now, &node->comm_outbox, &third) ==
                  COMM_ERR_BUSY;
    node_comm_flush(node, now);
    return ok;
}

static bool release_slots(const uint32_t held[2])
{
    bool ok = true;
    for (unsigned i = 0; i < 2; i++)
        if (held[i] != COMM_REQUEST_NULL)
            ok = core_wait(held[i]).error == COMM_ERR_OK && ok;
    return ok;
}

static struct tori_result run_busy(const struct tori_args *args, uint32_t size)
{
    struct tori_result outcome = {true, 0, 0};
    struct node *node = node_job_node();
    int64_t held = 0, accepted = 0;
    for (uint32_t i = 1; i <= args->iterations && outcome.ok; i++) {
        uint32_t slots[2];
        /* an allreduce while the slots are held */
        bool refused = hold_slots(slots);
        held += refused;
        int64_t one = 1, total = 0;
        bool ok = tori_allreduce(TORI_COMM_WORLD, &one, &total, 1, TORI_INT64, TORI_SUM) ==
                      TORI_OK &&
                  total == (int64_t)size;
        accepted += ok;
        bool released = release_slots(slots);
        outcome.ok = refused && released && ok;
        /* a dup while a creation (the core's own dup) is under way */
        uint32_t request = COMM_REQUEST_NULL;
        uint32_t third = COMM_REQUEST_NULL;
        uint64_t now = tori_now_ns();
        refused = comm_idup(&node->comm, COMM_WORLD, now, &node->comm_outbox, &request) ==
                      COMM_ERR_OK &&
                  comm_idup(&node->comm, COMM_WORLD, now, &node->comm_outbox, &third) ==
                      COMM_ERR_BUSY;
        node_comm_flush(node, now);
        held += refused;
        tori_comm dup = TORI_COMM_NULL;
        ok = tori_comm_dup(TORI_COMM_WORLD, &dup) == TORI_OK;
        accepted += ok;
        struct comm_status first = request != COMM_REQUEST_NULL ? core_wait(request)
                                                                : (struct comm_status){0};
        uint32_t core_dup = first.comm;
        outcome.ok = outcome.ok && refused && ok && first.error == COMM_ERR_OK &&
                     comm_free(&node->comm, core_dup) == COMM_ERR_OK &&
                     tori_comm_free(&dup) == TORI_OK;
        /* an agree while the slots are held */
        refused = hold_slots(slots);
        held += refused;
        uint32_t flag = 1;
        ok = tori_comm_agree(TORI_COMM_WORLD, &flag) == TORI_OK && flag == 1;
        accepted += ok;
        released = release_slots(slots);
        outcome.ok = outcome.ok && refused && released && ok;
        if (outcome.ok)
            outcome.iterations = i;
        tori_iteration_done(i);
    }
    static const char *const keys[] = {"held", "accepted"};
    const int64_t values[] = {held, accepted};
    tori_report("app-ftprobe", keys, values, 2);
    outcome.digest = crc32_update(0, &size, sizeof size);
    return outcome;
}

struct tori_result tori_test_app_ftprobe(const struct tori_args *args)
{
    struct tori_result failed = {false, 0, 0};
    uint32_t rank = 0, size = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK ||
        tori_size(TORI_COMM_WORLD, &size) != TORI_OK || size < 2 || args->arg[1] < 0 ||
        args->arg[2] < 0)
        return failed;
    switch (args->arg[0]) {
    case FTPROBE_PAIRS:
        return run_pairs(args, rank, size);
    case FTPROBE_AGREE:
        return run_agree(args, rank, size);
    case FTPROBE_REVOKE:
        return run_revoke(args, rank, size);
    case FTPROBE_BUSY:
        return run_busy(args, size);
    default:
        return failed;
    }
}
