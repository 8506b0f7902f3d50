/*
 * Coordinated checkpoints of the job (node/tori.h; issue 15, ABARIS over
 * tori): the rounds that fill the checkpoint store (node/checkpoint.h) and
 * restore from it, written over the application API itself, so that a
 * checkpoint fails exactly as the application's own calls do.
 *
 * A round costs one barrier (the cut: every rank has completed its sends,
 * and a send completes only once its receiver acknowledged it, so no
 * message of the application is in flight across the cut), one exchange
 * with the buddy and the ward, and one allreduce that commits the
 * generation everywhere or nowhere.  A restore costs four allreduces and
 * one transfer per rank that lacks the newest generation.
 *
 * The buddy of a rank is its successor on a ring in the torus's snake
 * order (see partner): a torus neighbour but where spares or the ring's
 * closing step intervene.
 *
 * PROMOTE (a policy with `promote`): each round also sends the rank's copy
 * to the standby spare that mirrors it (recovery_mirror_node: the spares
 * share the ranks in blocks of consecutive ranks), which keeps the last two
 * generations of each in the mirror region (board_checkpoint_mirror) while
 * it waits to adopt; REBUILD pairs a failed rank with that spare, whose
 * restore then takes the mirrored copy with no transfer.
 */
#include <string.h>

#include "board/board.h"
#include "kernel/event.h"
#include "lib/crc32.h"
#include "lib/recovery.h"
#include "node/checkpoint.h"
#include "node/node.h"
#include "node/tori.h"
#include "membership/layout.h"

enum { KIND_COPY = 1, KIND_RESTORE = 2, KIND_MIRROR = 3 }; /* tags of the runtime's traffic */
#define BITMAP_WORDS (CONFIG_CHECKPOINT_MAX_RANKS / 62 + 1)

static struct {
    bool ready;
    struct checkpoint_store store;
    bool survives_reset;
    uint32_t job;        /* CRC-32 of the job block */
    tori_save_fn save;
    tori_load_fn load;
    void *context;
    /* The newest generation committed, the same at every rank (a commit
     * is an allreduce's result; a restore agrees on it): the next round's
     * is one more, whose slots never hold the committed one's. */
    uint32_t committed;
} ckpt;

static int64_t bitmap[BITMAP_WORDS];

/* A standby spare's mirror: two slots (by generation parity) per mirrored
 * rank, in the store's slot size, then the slot it receives into. */
static struct {
    uint8_t *base;
    uint32_t entries; /* ranks it can hold */
    bool posted;
    uint32_t request;
} mirror;

static void store_ready(void)
{
    if (ckpt.ready)
        return;
    size_t bytes = 0;
    uint8_t *base = board_checkpoint_store(&bytes, &ckpt.survives_reset);
    checkpoint_store_init(&ckpt.store, base, bytes);
    size_t mirror_bytes = 0;
    mirror.base = board_checkpoint_mirror(&mirror_bytes);
    size_t slots = mirror_bytes / ckpt.store.slot_bytes;
    mirror.entries = slots >= 3u ? (uint32_t)((slots - 1u) / 2u) : 0u;
    if (mirror.entries > CONFIG_CHECKPOINT_MIRROR_RANKS)
        mirror.entries = CONFIG_CHECKPOINT_MIRROR_RANKS;
    uint8_t block[JOB_SIZE];
    const struct job *job = node_job_block();
    if (job != NULL) {
        job_encode(job, block);
        ckpt.job = crc32_update(0, block, sizeof block);
    }
    ckpt.ready = true;
}

/* The runtime's own failures are the application's errors, named. */
static int checkpoint_failed(const char *call)
{
    event_begin("app-error");
    event_add_str("call", call);
    event_add_text("error", tori_error_text(TORI_ERR_CHECKPOINT));
    event_end();
    return TORI_ERR_CHECKPOINT;
}

int tori_checkpoint_register(tori_save_fn save, tori_load_fn load, void *context)
{
    store_ready();
    if (save == NULL || load == NULL)
        return TORI_ERR_CHECKPOINT;
    ckpt.save = save;
    ckpt.load = load;
    ckpt.context = context;
    return TORI_OK;
}

uint32_t tori_checkpoint_capacity(void)
{
    store_ready();
    return checkpoint_capacity(&ckpt.store);
}

/*
 * Buddies form a ring in the torus's snake order (membership/layout.h),
 * whose consecutive positions are one hop apart: the buddy of a rank is
 * the next rank along it, its ward the previous, skipping nodes that hold
 * no rank (spares).  Ranks are node ids when comm has at most the torus's
 * nodes (WORLD; REBUILD keeps its ranks); other communicators use the next
 * rank.
 */
static uint32_t partner(uint32_t rank, uint32_t size, int step)
{
    const struct torus_geometry *geometry = node_job_geometry();
    uint32_t nodes = torus_geometry_node_count(geometry);
    if (size > nodes)
        return step > 0 ? (rank + 1u) % size : (rank + size - 1u) % size;
    struct membership_layout snake = {MEMBERSHIP_LAYOUT_TORUS, *geometry};
    uint32_t pos = membership_layout_pos(&snake, rank);
    for (;;) {
        pos = step > 0 ? (pos + 1u) % nodes : (pos + nodes - 1u) % nodes;
        uint32_t id = membership_layout_id(&snake, pos);
        if (id < size)
            return id;
    }
}

static uint8_t *mirror_slot(uint32_t index, uint32_t generation)
{
    return mirror.base + ((size_t)index * 2u + (generation & 1u)) * ckpt.store.slot_bytes;
}

static uint8_t *mirror_inbox(void)
{
    return mirror.base + (size_t)mirror.entries * 2u * ckpt.store.slot_bytes;
}

/* The spare that mirrors rank of comm (node id), or UINT32_MAX: none, or
 * the job does not promote, or that spare holds a rank of comm already. */
static uint32_t mirror_of(tori_comm comm, uint32_t rank, uint32_t size)
{
    const struct job *job = node_job_block();
    if (job == NULL || !recovery_policy_uses(&job->recovery, RECOVERY_PROMOTE))
        return UINT32_MAX;
    uint32_t index;
    uint32_t node = recovery_mirror_node(rank, size,
                                         torus_geometry_node_count(node_job_geometry()),
                                         CONFIG_CHECKPOINT_MIRROR_RANKS, &index);
    return node != UINT32_MAX && !node_job_has_node(comm, node) ? node : UINT32_MAX;
}

/* Where this spare keeps rank's copies (its place in its block), or
 * UINT32_MAX when it does not mirror rank. */
static uint32_t mirror_index(uint32_t rank, uint32_t ranks)
{
    uint32_t self, world;
    node_mirror_shape(&self, &world);
    uint32_t index;
    uint32_t node = recovery_mirror_node(rank, ranks,
                                         torus_geometry_node_count(node_job_geometry()),
                                         CONFIG_CHECKPOINT_MIRROR_RANKS, &index);
    return node == self && index < mirror.entries ? index : UINT32_MAX;
}

void node_checkpoint_mirror_poll(void)
{
    store_ready();
    if (mirror.entries == 0)
        return;
    if (mirror.posted) {
        uint32_t source, count;
        int error;
        if (!node_mirror_test(mirror.request, &source, &count, &error))
            return;
        mirror.posted = false;
        struct checkpoint_header header;
        uint32_t self, world;
        node_mirror_shape(&self, &world);
        const uint8_t *inbox = mirror_inbox();
        if (error == 0 && checkpoint_slot_peek(inbox, count, &header)) {
            uint32_t index = mirror_index(header.rank, world);
            if (index != UINT32_MAX &&
                checkpoint_slot_check(inbox, count, ckpt.job, header.rank, header.generation,
                                      &header))
                memcpy(mirror_slot(index, header.generation), inbox,
                       checkpoint_slot_bytes(&header));
        }
    }
    if (node_mirror_irecv(KIND_MIRROR, mirror_inbox(), (uint32_t)ckpt.store.slot_bytes,
                          &mirror.request) == 0)
        mirror.posted = true;
}

/* A promoted spare: the mirrored copy of rank's generation into its own
 * slot, with no transfer; false when it holds none. */
static bool mirror_take(uint32_t rank, uint32_t size, uint32_t generation)
{
    if (mirror.entries == 0 || generation == 0)
        return false;
    uint32_t index = mirror_index(rank, size);
    if (index == UINT32_MAX)
        return false;
    const uint8_t *slot = mirror_slot(index, generation);
    struct checkpoint_header header;
    if (!checkpoint_slot_check(slot, ckpt.store.slot_bytes, ckpt.job, rank, generation, &header))
        return false;
    memcpy(checkpoint_slot(&ckpt.store, CHECKPOINT_OWN, generation), slot,
           checkpoint_slot_bytes(&header));
    return true;
}

static int rank_and_size(tori_comm comm, uint32_t *rank, uint32_t *size)
{
    int error = tori_rank(comm, rank);
    return error != TORI_OK ? error : tori_size(comm, size);
}

static int wait_both(tori_request *a, tori_request *b, struct tori_status *status_b)
{
    int error_a = *a != TORI_REQUEST_NULL ? tori_wait(a, NULL) : TORI_OK;
    int error_b = *b != TORI_REQUEST_NULL ? tori_wait(b, status_b) : TORI_OK;
    return error_a != TORI_OK ? error_a : error_b;
}

int tori_checkpoint(tori_comm comm, uint32_t done)
{
    store_ready();
    const struct job *job = node_job_block();
    if (job == NULL || job->checkpoint_interval == 0 || done == 0 ||
        done % job->checkpoint_interval != 0)
        return TORI_OK;
    if (ckpt.save == NULL)
        return checkpoint_failed("tori_checkpoint");
    uint32_t rank, size;
    int error = rank_and_size(comm, &rank, &size);
    if (error != TORI_OK)
        return error;
    uint64_t started = board_now_ns();
    error = tori_barrier(comm); /* the cut */
    if (error != TORI_OK)
        return error;
    uint32_t generation = ckpt.committed + 1u;
    uint8_t *own = checkpoint_slot(&ckpt.store, CHECKPOINT_OWN, generation);
    uint8_t *ward_slot = checkpoint_slot(&ckpt.store, CHECKPOINT_WARD, generation);
    /* cert: indirect call, targets are the save functions given to tori_checkpoint_register */
    uint32_t length = ckpt.save(ckpt.context, own + CHECKPOINT_HEADER_BYTES,
                                checkpoint_capacity(&ckpt.store));
    uint64_t saved = board_now_ns();
    int64_t verified = length <= checkpoint_capacity(&ckpt.store);
    struct checkpoint_header header = {ckpt.job, rank, generation, done, length};
    uint32_t buddy = partner(rank, size, +1);
    uint32_t ward = partner(rank, size, -1);
    if (verified)
        checkpoint_slot_write(own, &header, own + CHECKPOINT_HEADER_BYTES);
    else
        header.length = 0; /* still take part: the allreduce makes the failure everyone's */
    /* PROMOTE: the copy for the standby spare, best effort (a spare that
     * is not there or not listening costs the promotion's shortcut only). */
    uint32_t mirror_node = verified ? mirror_of(comm, rank, size) : UINT32_MAX;
    uint32_t mirror_send = COMM_REQUEST_NULL;
    if (mirror_node != UINT32_MAX &&
        node_mirror_isend(mirror_node, KIND_MIRROR, own, checkpoint_slot_bytes(&header),
                          &mirror_send) != 0)
        mirror_send = COMM_REQUEST_NULL;
    if (size > 1) {
        tori_request receive = TORI_REQUEST_NULL, send = TORI_REQUEST_NULL;
        struct tori_status status = {0};
        error = node_job_irecv(comm, ward, KIND_COPY, ward_slot, (uint32_t)ckpt.store.slot_bytes,
                               &receive);
        if (error == TORI_OK)
            error = node_job_isend(comm, buddy, KIND_COPY, own, checkpoint_slot_bytes(&header),
                                   &send);
        if (error == TORI_OK)
            error = wait_both(&send, &receive, &status);
        if (error != TORI_OK)
            return error;
        struct checkpoint_header got;
        verified = verified && checkpoint_slot_check(ward_slot, status.count, ckpt.job, ward,
                                                     generation, &got);
    }
    if (mirror_send != COMM_REQUEST_NULL)
        node_mirror_wait(mirror_send);
    int64_t all = 0;
    error = tori_allreduce(comm, &verified, &all, 1, TORI_INT64, TORI_MIN);
    if (error != TORI_OK)
        return error;
    if (all == 0)
        return checkpoint_failed("tori_checkpoint");
    checkpoint_commit_write(&ckpt.store, ckpt.job, rank, generation);
    ckpt.committed = generation;
    uint64_t finished = board_now_ns();
    event_begin("checkpoint");
    event_add_u64("generation", generation);
    event_add_u64("iteration", done);
    event_add_u64("bytes", length);
    uint32_t buddy_node = size > 1 ? node_job_rank_node(comm, buddy) : rank;
    event_add_u64("buddy", buddy_node);
    event_add_u64("buddy_hops", torus_geometry_distance(node_job_geometry(),
                                                         node_job_rank_node(comm, rank),
                                                         buddy_node));
    event_add_u64("save_ns", saved - started);
    event_add_u64("round_ns", finished - started);
    event_end();
    return TORI_OK;
}

/* The generation this node holds whole for rank (0: none). */
static uint32_t held_generation(uint32_t rank)
{
    uint32_t generation = checkpoint_commit_read(&ckpt.store, ckpt.job, rank);
    struct checkpoint_header header;
    if (generation == 0 ||
        !checkpoint_slot_check(checkpoint_slot(&ckpt.store, CHECKPOINT_OWN, generation),
                               ckpt.store.slot_bytes, ckpt.job, rank, generation, &header))
        return 0;
    return generation;
}

/* Every rank learns the newest generation; false when none exists. */
static int restore_target(tori_comm comm, uint32_t rank, uint32_t *have, uint32_t *target)
{
    *have = held_generation(rank);
    int64_t mine = *have;
    int64_t newest = 0;
    int error = tori_allreduce(comm, &mine, &newest, 1, TORI_INT64, TORI_MAX);
    *target = (uint32_t)newest;
    return error;
}

static bool needs(uint32_t rank)
{
    return ((uint64_t)bitmap[rank / 62u] >> (rank % 62u)) & 1u;
}

int tori_restore(tori_comm comm, uint32_t *done)
{
    store_ready();
    *done = 0;
    if (ckpt.load == NULL)
        return checkpoint_failed("tori_restore");
    uint32_t rank, size;
    int error = rank_and_size(comm, &rank, &size);
    if (error != TORI_OK)
        return error;
    if (size > CONFIG_CHECKPOINT_MAX_RANKS)
        return checkpoint_failed("tori_restore");
    uint64_t started = board_now_ns();
    uint32_t have, target;
    error = restore_target(comm, rank, &have, &target);
    if (error != TORI_OK)
        return error;
    if (target == 0) {
        ckpt.committed = 0;
        return TORI_ERR_NO_CHECKPOINT;
    }
    /* A promoted spare holds the newest generation in its mirror. */
    bool mirrored = have != target && mirror_take(rank, size, target);
    if (mirrored)
        have = target;
    /* Who lacks it: a bitmap, 62 ranks a word (a sum of distinct bits). */
    uint32_t words = size / 62u + 1u;
    memset(bitmap, 0, sizeof bitmap);
    int64_t mine[BITMAP_WORDS];
    memset(mine, 0, sizeof mine);
    if (have != target)
        mine[rank / 62u] = (int64_t)((uint64_t)1u << (rank % 62u));
    error = tori_allreduce(comm, mine, bitmap, words, TORI_INT64, TORI_SUM);
    if (error != TORI_OK)
        return error;
    uint32_t buddy = partner(rank, size, +1);
    uint32_t ward = partner(rank, size, -1);
    uint8_t *own = checkpoint_slot(&ckpt.store, CHECKPOINT_OWN, target);
    const uint8_t *ward_slot = checkpoint_slot(&ckpt.store, CHECKPOINT_WARD, target);
    struct checkpoint_header header;
    /* Can every rank that lacks it be served?  Its buddy answers for it. */
    int64_t servable = !(size == 1 && have != target);
    bool serve = size > 1 && needs(ward);
    if (serve && !checkpoint_slot_check(ward_slot, ckpt.store.slot_bytes, ckpt.job, ward,
                                        target, &header))
        servable = 0;
    int64_t all = 0;
    error = tori_allreduce(comm, &servable, &all, 1, TORI_INT64, TORI_MIN);
    if (error != TORI_OK)
        return error;
    uint32_t moved = 0;
    int64_t loaded = 1;
    if (all != 0) {
        tori_request receive = TORI_REQUEST_NULL, send = TORI_REQUEST_NULL;
        struct tori_status status = {0};
        if (have != target)
            error = node_job_irecv(comm, buddy, KIND_RESTORE, own,
                                   (uint32_t)ckpt.store.slot_bytes, &receive);
        if (error == TORI_OK && serve)
            error = node_job_isend(comm, ward, KIND_RESTORE, ward_slot,
                                   checkpoint_slot_bytes(&header), &send);
        if (error == TORI_OK)
            error = wait_both(&send, &receive, &status);
        if (error != TORI_OK)
            return error;
        size_t bytes = have != target ? status.count : ckpt.store.slot_bytes;
        moved = have != target ? status.count : 0;
        /* cert: indirect call, targets are the load functions given to tori_checkpoint_register */
        loaded = checkpoint_slot_check(own, bytes, ckpt.job, rank, target, &header) &&
                 ckpt.load(ckpt.context, own + CHECKPOINT_HEADER_BYTES, header.length) ==
                     TORI_OK;
    }
    int64_t everywhere = 0;
    error = tori_allreduce(comm, &loaded, &everywhere, 1, TORI_INT64, TORI_MIN);
    if (error != TORI_OK)
        return error;
    if (all == 0 || everywhere == 0) {
        /* Uniformly from the beginning; the next round overwrites what is
         * left of the lost generations. */
        checkpoint_commit_write(&ckpt.store, ckpt.job, rank, 0);
        ckpt.committed = 0;
        return TORI_ERR_NO_CHECKPOINT;
    }
    checkpoint_commit_write(&ckpt.store, ckpt.job, rank, target);
    ckpt.committed = target;
    *done = header.iteration;
    event_begin("restore");
    event_add_u64("generation", target);
    event_add_u64("iteration", header.iteration);
    event_add_str("source", mirrored ? "mirror" : have == target ? "own" : "buddy");
    event_add_u64("bytes", header.length);
    event_add_u64("bytes_transferred", moved);
    event_add_u64("from", have == target ? node_job_rank_node(comm, rank)
                                         : node_job_rank_node(comm, buddy));
    event_add_u64("load_ns", board_now_ns() - started);
    event_end();
    return TORI_OK;
}
