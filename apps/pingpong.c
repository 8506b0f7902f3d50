/*
 * pingpong: round trips between rank 0 and rank 1 for message sizes 0, 1,
 * 2, 4 ... 64 KiB, `iterations` round trips per size; rank 0 reports the
 * median round trip per size as an `app-pingpong` event (bytes, rtt_ns).
 * Every reply carries the bytes it was sent, checked on arrival.  Then
 * every rank times `iterations` barriers and `iterations` allreduces of one
 * int64 sum (each total checked); rank 0 reports the median of each as
 * `app-barrier` and `app-allreduce` (rounds, median_ns).  The benchmark
 * `./tori bench comm` reads these lines.
 */
#include "config/tori_config.h"
#include "lib/crc32.h"
#include "node/tori.h"


#define PINGPONG_MAX_BYTES ((uint32_t)CONFIG_APP_PINGPONG_MAX_BYTES)
#define PINGPONG_MAX_SAMPLES 64u
#define PINGPONG_TAG 7

static uint8_t outgoing[PINGPONG_MAX_BYTES];
static uint8_t incoming[PINGPONG_MAX_BYTES];
static uint64_t samples[PINGPONG_MAX_SAMPLES];

/* Insertion sort: at most PINGPONG_MAX_SAMPLES values. */
static uint64_t median(uint64_t *values, uint32_t count)
{
    for (uint32_t i = 1; i < count; i++) {
        uint64_t v = values[i];
        uint32_t j = i;
        for (; j > 0 && values[j - 1] > v; j--)
            values[j] = values[j - 1];
        values[j] = v;
    }
    return values[count / 2];
}

/* Rank 0 reports the median of samples[0..rounds) as event name. */
static void report_median(uint32_t rank, const char *name, uint32_t rounds)
{
    if (rank != 0)
        return;
    static const char *const keys[] = {"rounds", "median_ns"};
    int64_t values[2] = {rounds, (int64_t)median(samples, rounds)};
    tori_report(name, keys, values, 2);
}

/*
 * Times rounds barriers, then rounds allreduces, each call on its own (the
 * first barrier lines the ranks up); false when a call fails.  *ok turns
 * false on a wrong total.
 */
static bool time_collectives(uint32_t rank, uint32_t size, uint32_t rounds, bool *ok)
{
    if (tori_barrier(TORI_COMM_WORLD) != TORI_OK)
        return false;
    for (uint32_t round = 0; round < rounds; round++) {
        uint64_t began = tori_now_ns();
        if (tori_barrier(TORI_COMM_WORLD) != TORI_OK)
            return false;
        samples[round] = tori_now_ns() - began;
    }
    report_median(rank, "app-barrier", rounds);
    for (uint32_t round = 0; round < rounds; round++) {
        int64_t mine = (int64_t)rank + 1;
        int64_t total = 0;
        uint64_t began = tori_now_ns();
        if (tori_allreduce(TORI_COMM_WORLD, &mine, &total, 1, TORI_INT64, TORI_SUM) !=
            TORI_OK)
            return false;
        samples[round] = tori_now_ns() - began;
        *ok = *ok && total == (int64_t)size * ((int64_t)size + 1) / 2;
    }
    report_median(rank, "app-allreduce", rounds);
    return true;
}

struct tori_result tori_app_pingpong(const struct tori_args *args)
{
    struct tori_result outcome = {false, 0, 0};
    uint32_t rank = 0;
    uint32_t size = 0;
    if (tori_rank(TORI_COMM_WORLD, &rank) != TORI_OK ||
        tori_size(TORI_COMM_WORLD, &size) != TORI_OK)
        return outcome;
    uint32_t rounds = args->iterations < PINGPONG_MAX_SAMPLES ? args->iterations
                                                               : PINGPONG_MAX_SAMPLES;
    bool ok = true;
    uint32_t digest = 0;
    for (uint32_t i = 0; i < PINGPONG_MAX_BYTES; i++)
        outgoing[i] = (uint8_t)(i * 7u + 3u);
    for (uint32_t bytes = 0; size >= 2 && rank < 2 && bytes <= PINGPONG_MAX_BYTES;
         bytes = bytes == 0 ? 1 : bytes * 2) {
        for (uint32_t round = 0; round < rounds; round++) {
            struct tori_status status;
            uint64_t began = tori_now_ns();
            if (rank == 0) {
                if (tori_send(TORI_COMM_WORLD, 1, PINGPONG_TAG, outgoing, bytes) != TORI_OK ||
                    tori_recv(TORI_COMM_WORLD, 1, PINGPONG_TAG, incoming, bytes, &status) !=
                        TORI_OK)
                    return outcome;
            } else {
                if (tori_recv(TORI_COMM_WORLD, 0, PINGPONG_TAG, incoming, bytes, &status) !=
                        TORI_OK ||
                    tori_send(TORI_COMM_WORLD, 0, PINGPONG_TAG, incoming, bytes) != TORI_OK)
                    return outcome;
            }
            samples[round] = tori_now_ns() - began;
            ok = ok && status.count == bytes;
            for (uint32_t i = 0; i < bytes && ok; i++)
                ok = incoming[i] == outgoing[i];
        }
        digest = crc32_update(digest, incoming, bytes);
        if (rank == 0) {
            static const char *const keys[] = {"bytes", "rounds", "rtt_ns"};
            int64_t values[3] = {bytes, rounds, (int64_t)median(samples, rounds)};
            tori_report("app-pingpong", keys, values, 3);
        }
        outcome.iterations++;
        tori_iteration_done(outcome.iterations);
    }
    if (!time_collectives(rank, size, rounds, &ok))
        return outcome;
    outcome.iterations += 2;
    tori_iteration_done(outcome.iterations);
    if (tori_barrier(TORI_COMM_WORLD) != TORI_OK)
        return outcome;
    /* Ranks beyond 1 exchanged nothing: they share rank 0's digest through
     * a broadcast, so that one digest stands for the whole job. */
    uint64_t shared = digest;
    if (tori_bcast(TORI_COMM_WORLD, 0, &shared, sizeof shared) != TORI_OK)
        return outcome;
    outcome.ok = ok && (rank >= 2 || size < 2 || shared == digest);
    outcome.digest = shared;
    return outcome;
}
