/*
 * Collectives (see DESIGN.md, "Collectives").
 *
 * A collective is a short program of tree steps over the communicator's
 * "runs" tree of radix CONFIG_COMM_TREE_RADIX, built on ranks relative to
 * the root (membership_tree_runs), so that every subtree is a run of
 * consecutive relative ranks:
 *   REDUCE  combine the children's vectors with ours, in child order, and
 *           send the result to the parent (fixed order: the same bits on
 *           every run and every machine);
 *   BCAST   receive from the parent, send to every child;
 *   GATHER  place our block and the children's runs of blocks, send the
 *           subtree's run to the parent.
 * Each step's messages are internal requests (one per child, one for the
 * parent) in the collective space of the communicator's context, tagged
 * with the collective's sequence number and the step.  A step ends when
 * its sends are acknowledged, so no buffer is rewritten under a frame that
 * may still be resent.  Reduce vectors travel little-endian.
 */
#include "comm/internal.h"

#include <string.h>

#include "lib/le.h"
#include "membership/tree.h"

static uint16_t sub_index(uint16_t slot, uint32_t j)
{
    return (uint16_t)(CONFIG_COMM_MAX_REQUESTS + slot * COMM_COLL_SUBS + j);
}

#define PARENT_SUB CONFIG_COMM_TREE_RADIX

void coll_init_all(struct comm *ctx)
{
    for (uint32_t i = 0; i < CONFIG_COMM_MAX_COLLECTIVES; i++) {
        ctx->colls[i].state = COLL_FREE;
    }
    ctx->coll_work = 0;
    ctx->creating = false;
}

/* The communicator rank of a tree position: trees run over the ranks that
 * are not BLANK gaps ("compact" ranks; all of them when there are none). */
static uint32_t rank_of(const struct comm *ctx, const struct comm_collective *c, uint32_t vrank)
{
    uint32_t compact = (uint32_t)(((uint64_t)vrank + c->root) % c->size);
    return group_rank_of_compact(&ctx->comms[c->comm], compact);
}

static uint32_t child_subtree(const struct comm_collective *c, uint32_t j)
{
    uint32_t end = j + 1u < c->child_count ? c->children[j + 1u] : c->vrank + c->subtree;
    return end - c->children[j];
}

/* ---- internal requests ---- */

/* Adoption messages (to and from spares) go in the adoption space; rounds
 * address members by node id in the recovery space. */
static bool adopting(const struct comm_collective *c)
{
    return c->kind == COLL_ADOPT || c->steps[c->step].kind == STEP_ADOPT_SEND;
}

static uint16_t sub_context(const struct comm *ctx, const struct comm_collective *c)
{
    if (adopting(c)) {
        return COMM_CONTEXT_ADOPT;
    }
    return (uint16_t)(ctx->comms[c->comm].context |
                      (coll_is_round(c->kind) ? COMM_CONTEXT_RECOVERY : COMM_CONTEXT_COLLECTIVE));
}

static uint32_t sub_tag(const struct comm_collective *c)
{
    if (adopting(c)) {
        return 0u;
    }
    /* a result round may share its number with an agree's: other steps */
    return c->tag_base | (c->step + (c->kind == COLL_RESULT ? 8u : 0u));
}

static void post_recv(struct comm *ctx, uint16_t slot, uint32_t j, uint32_t from_vrank,
                      uint8_t *buffer, uint32_t capacity, uint64_t now_ns,
                      struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    uint16_t index = request_alloc(ctx, sub_index(slot, j), COMM_REQ_RECV, (uint8_t)(slot + 1u));
    struct comm_request *r = &ctx->requests[index];
    r->comm = c->comm;
    r->context = sub_context(ctx, c);
    bool by_node = (r->context & COMM_CONTEXT_BY_NODE) != 0;
    r->rank = by_node ? c->nodes[j] : rank_of(ctx, c, from_vrank);
    r->tag = sub_tag(c);
    r->target = buffer;
    r->length = capacity;
    match_post(ctx, index, now_ns, out);
}

static void post_send(struct comm *ctx, uint16_t slot, uint32_t j, uint32_t to_vrank,
                      const uint8_t *buffer, uint32_t length, uint64_t now_ns,
                      struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    const struct comm_communicator *comm = &ctx->comms[c->comm];
    uint16_t index = request_alloc(ctx, sub_index(slot, j), COMM_REQ_SEND, (uint8_t)(slot + 1u));
    struct comm_request *r = &ctx->requests[index];
    r->comm = c->comm;
    r->context = sub_context(ctx, c);
    bool by_node = (r->context & COMM_CONTEXT_BY_NODE) != 0;
    r->rank = by_node ? c->nodes[j] : rank_of(ctx, c, to_vrank);
    r->node = by_node ? c->nodes[j] : group_node(ctx, comm, r->rank);
    r->tag = sub_tag(c);
    r->source = buffer;
    r->length = length;
    r->frames_total = COMM_FRAMES_FOR(length);
    if (!node_is_live(ctx, r->node) || (!by_node && group_member_out(ctx, comm, r->rank))) {
        request_complete(ctx, index, COMM_ERR_PROC_FAILED, out);
        return;
    }
    peer_send(ctx, index, now_ns, out);
}

/* The error of a finished internal request (a short or long message means
 * the ranks called the collective with different sizes). */
static enum comm_error sub_error(const struct comm *ctx, uint16_t index, uint32_t expected)
{
    const struct comm_request *r = &ctx->requests[index];
    if (r->error == COMM_ERR_TRUNCATE) {
        return COMM_ERR_MISMATCH;
    }
    if (r->error != COMM_ERR_OK) {
        return (enum comm_error)r->error;
    }
    if (r->kind == COMM_REQ_RECV && r->status.count != expected) {
        return COMM_ERR_MISMATCH;
    }
    return COMM_ERR_OK;
}

/*
 * A recovery round's offers and decisions have room for any decision
 * (a strict result of up to CONFIG_COMM_REDUCE_MAX bytes: 2,128 bytes in
 * all, two frames), but what follows the last word in use is zeros.  So a
 * round sends its buffer up to its last non-zero word (one frame for any
 * result up to 165 values) and a receiver fills the rest with zeros: the
 * same bytes as the whole buffer, in half the frames.
 */
static uint32_t round_length(const uint8_t *buffer, uint32_t bytes)
{
    uint32_t length = bytes;
    while (length >= 8u) {
        uint64_t w;
        memcpy(&w, buffer + length - 8u, 8u);
        if (w != 0) {
            break;
        }
        length -= 8u;
    }
    return length > 8u ? length : 8u;
}

/* A round's message received into buffer (room for bytes): OK when it was
 * whole words, no more than bytes, with zeros after it (round_length). */
static enum comm_error round_received(const struct comm *ctx, uint16_t index, uint8_t *buffer,
                                      uint32_t bytes)
{
    const struct comm_request *r = &ctx->requests[index];
    if (r->error == COMM_ERR_TRUNCATE) {
        return COMM_ERR_MISMATCH;
    }
    if (r->error != COMM_ERR_OK) {
        return (enum comm_error)r->error;
    }
    uint32_t count = r->status.count;
    if (count == 0 || count > bytes || count % 8u != 0) {
        return COMM_ERR_MISMATCH;
    }
    memset(buffer + count, 0, bytes - count);
    return COMM_ERR_OK;
}

/* ---- reduction ---- */

static uint64_t combine_one(uint64_t a, uint64_t b, uint8_t type, uint8_t op)
{
    if (op == COMM_BOR) {
        return a | b;
    }
    if (type == COMM_INT64) {
        int64_t x = (int64_t)a;
        int64_t y = (int64_t)b;
        switch (op) {
        case COMM_SUM:
            return a + b; /* two's complement wrap, no undefined overflow */
        case COMM_MIN:
            return (uint64_t)(y < x ? y : x);
        default:
            return (uint64_t)(y > x ? y : x);
        }
    }
    double x;
    double y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    double z;
    switch (op) {
    case COMM_SUM:
        z = x + y;
        break;
    case COMM_MIN:
        z = y < x ? y : x;
        break;
    default:
        z = y > x ? y : x;
        break;
    }
    uint64_t r;
    memcpy(&r, &z, sizeof r);
    return r;
}

static void combine(uint8_t *acc, const uint8_t *in, uint32_t count, uint8_t type, uint8_t op)
{
    for (uint32_t i = 0; i < count; i++) {
        uint64_t v = combine_one(le_get_u64(acc + 8u * i), le_get_u64(in + 8u * i), type, op);
        le_put_u64(acc + 8u * i, v);
    }
}

/* Native 8-byte values to little-endian and back (in place allowed). */
static void encode_vector(uint8_t *to, const uint8_t *from, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint64_t v;
        memcpy(&v, from + 8u * i, sizeof v);
        le_put_u64(to + 8u * i, v);
    }
}

static void decode_vector(uint8_t *to, const uint8_t *from, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint64_t v = le_get_u64(from + 8u * i);
        memcpy(to + 8u * i, &v, sizeof v);
    }
}

/* ---- steps: each returns OK when done, PENDING while waiting ---- */

static enum comm_error step_reduce(struct comm *ctx, uint16_t slot, uint64_t now_ns,
                                   struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    uint32_t bytes = c->count * 8u;
    uint8_t *acc = c->scratch;
    if (c->phase == 0) {
        encode_vector(acc, c->send, c->count);
        for (uint32_t j = 0; j < c->child_count; j++) {
            post_recv(ctx, slot, j, c->children[j], c->scratch + (j + 1u) * bytes, bytes, now_ns,
                      out);
        }
        c->combined = 0;
        c->phase = 1;
    }
    if (c->phase == 1) {
        while (c->combined < c->child_count) {
            uint16_t index = sub_index(slot, c->combined);
            if (!request_done(ctx, index)) {
                return COMM_ERR_PENDING;
            }
            uint8_t *in = c->scratch + (c->combined + 1u) * bytes;
            enum comm_error e = coll_is_round(c->kind) ? round_received(ctx, index, in, bytes)
                                                       : sub_error(ctx, index, bytes);
            if (e != COMM_ERR_OK) {
                return e;
            }
            if (coll_is_round(c->kind)) {
                ft_combine(acc, in, c->count);
            } else if (c->kind == COLL_DUP || c->kind == COLL_SPLIT) {
                combine(acc, in, COMM_CONTEXT_WORDS, COMM_INT64, COMM_BOR);
                combine(acc + 8u * COMM_CONTEXT_WORDS, in + 8u * COMM_CONTEXT_WORDS, 1u,
                        COMM_INT64, COMM_MAX);
            } else {
                combine(acc, in, c->count, c->type, c->op);
            }
            request_release(ctx, index);
            c->combined++;
        }
        if (c->parent == COMM_RANK_NONE) {
            return COMM_ERR_OK;
        }
        post_send(ctx, slot, PARENT_SUB, c->parent, acc,
                  coll_is_round(c->kind) ? round_length(acc, bytes) : bytes, now_ns, out);
        c->phase = 2;
    }
    uint16_t index = sub_index(slot, PARENT_SUB);
    if (!request_done(ctx, index)) {
        return COMM_ERR_PENDING;
    }
    enum comm_error e = sub_error(ctx, index, bytes);
    request_release(ctx, index);
    return e;
}

/* Waits for every child send; OK when all went well. */
static enum comm_error wait_children(struct comm *ctx, uint16_t slot, uint32_t expected)
{
    struct comm_collective *c = &ctx->colls[slot];
    for (uint32_t j = 0; j < c->child_count; j++) {
        if (ctx->requests[sub_index(slot, j)].state == COMM_REQ_PENDING) {
            return COMM_ERR_PENDING;
        }
    }
    enum comm_error result = COMM_ERR_OK;
    for (uint32_t j = 0; j < c->child_count; j++) {
        uint16_t index = sub_index(slot, j);
        if (ctx->requests[index].state == COMM_REQ_DONE) {
            enum comm_error e = sub_error(ctx, index, expected);
            if (result == COMM_ERR_OK) {
                result = e;
            }
            request_release(ctx, index);
        }
    }
    return result;
}

static enum comm_error step_bcast(struct comm *ctx, uint16_t slot,
                                  const struct comm_coll_step *st, uint64_t now_ns,
                                  struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    if (c->phase == 0) {
        if (c->parent != COMM_RANK_NONE) {
            post_recv(ctx, slot, PARENT_SUB, c->parent, st->buffer, st->bytes, now_ns, out);
            c->phase = 1;
        } else {
            c->phase = 2;
        }
    }
    if (c->phase == 1) {
        uint16_t index = sub_index(slot, PARENT_SUB);
        if (!request_done(ctx, index)) {
            return COMM_ERR_PENDING;
        }
        enum comm_error e = coll_is_round(c->kind)
                                ? round_received(ctx, index, st->buffer, st->bytes)
                                : sub_error(ctx, index, st->bytes);
        request_release(ctx, index);
        if (e != COMM_ERR_OK) {
            return e;
        }
        c->phase = 2;
    }
    if (c->phase == 2) {
        uint32_t length =
            coll_is_round(c->kind) ? round_length(st->buffer, st->bytes) : st->bytes;
        for (uint32_t j = 0; j < c->child_count; j++) {
            post_send(ctx, slot, j, c->children[j], st->buffer, length, now_ns, out);
        }
        c->phase = 3;
    }
    enum comm_error e = wait_children(ctx, slot, st->bytes);
    if (e == COMM_ERR_OK && st->decode) {
        decode_vector(c->recv, st->buffer, c->count);
    }
    return e;
}

static enum comm_error step_gather(struct comm *ctx, uint16_t slot,
                                   const struct comm_coll_step *st, uint64_t now_ns,
                                   struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    uint32_t block = st->bytes;
    if (c->phase == 0) {
        const uint8_t *own = c->kind == COLL_SPLIT ? c->own : c->send;
        if (block > 0 && st->buffer != own) {
            memmove(st->buffer, own, block);
        }
        for (uint32_t j = 0; j < c->child_count; j++) {
            uint32_t offset = (c->children[j] - c->vrank) * block;
            uint32_t length = child_subtree(c, j) * block;
            post_recv(ctx, slot, j, c->children[j], st->buffer + offset, length, now_ns, out);
        }
        c->phase = 1;
    }
    if (c->phase == 1) {
        for (uint32_t j = 0; j < c->child_count; j++) {
            if (ctx->requests[sub_index(slot, j)].state == COMM_REQ_PENDING) {
                return COMM_ERR_PENDING;
            }
        }
        for (uint32_t j = 0; j < c->child_count; j++) {
            uint16_t index = sub_index(slot, j);
            enum comm_error e = sub_error(ctx, index, child_subtree(c, j) * block);
            request_release(ctx, index);
            if (e != COMM_ERR_OK) {
                return e;
            }
        }
        if (c->parent == COMM_RANK_NONE) {
            return COMM_ERR_OK;
        }
        post_send(ctx, slot, PARENT_SUB, c->parent, st->buffer, c->subtree * block, now_ns, out);
        c->phase = 2;
    }
    uint16_t index = sub_index(slot, PARENT_SUB);
    if (!request_done(ctx, index)) {
        return COMM_ERR_PENDING;
    }
    enum comm_error e = sub_error(ctx, index, 0);
    request_release(ctx, index);
    return e;
}

/* ---- recovery rounds and adoption ---- */

#define FT_OFFER_BYTES (FT_OFFER_WORDS * 8u)

static uint64_t *round_offer(struct comm_collective *c)
{
    return (uint64_t *)(void *)(c->scratch + (CONFIG_COMM_TREE_RADIX + 1u) * FT_OFFER_BYTES);
}

static uint8_t *adopt_message(struct comm_collective *c)
{
    return c->scratch + (CONFIG_COMM_TREE_RADIX + 2u) * FT_OFFER_BYTES;
}

/* The rebuild's root tells each spare of the decision its communicator,
 * one after another (the parent's internal request is free at the root). */
static enum comm_error step_adopt_send(struct comm *ctx, uint16_t slot, uint64_t now_ns,
                                       struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    /* a result round's root tells the spares of the rebuild it decided too */
    if (c->parent != COMM_RANK_NONE || (c->kind != COLL_REBUILD && c->kind != COLL_RESULT)) {
        return COMM_ERR_OK;
    }
    uint16_t index = sub_index(slot, PARENT_SUB);
    for (;;) {
        if (c->phase == 1) {
            if (!request_done(ctx, index)) {
                return COMM_ERR_PENDING;
            }
            request_release(ctx, index); /* a spare that left: nobody to tell */
            c->phase = 0;
        }
        uint32_t node;
        while (c->spare_next < CONFIG_COMM_FT_MAX_EDITS &&
               !ft_adopt_message(ctx, c, c->spare_next, adopt_message(c), &node)) {
            c->spare_next++;
        }
        if (c->spare_next >= CONFIG_COMM_FT_MAX_EDITS) {
            return COMM_ERR_OK;
        }
        c->spare_next++;
        c->nodes[PARENT_SUB] = node;
        post_send(ctx, slot, PARENT_SUB, 0, adopt_message(c), FT_ADOPT_WORDS * 4u, now_ns, out);
        c->phase = 1;
    }
}

/*
 * A rebuild (or an adoption) made communicator handle here: our sessions
 * to its collectives' tree neighbours (root 0) open now, so that its first
 * collective (the application's resume) needs no OPEN round trip.  Under
 * SHRINK and BLANK that tree is the rounds' live tree, opened at the view
 * (ft_detected); under REBUILD the adopting spare's edges are new.
 */
void coll_open_comm_tree(struct comm *ctx, uint32_t handle, uint64_t now_ns,
                         struct comm_outbox *out)
{
    const struct comm_communicator *comm = comm_const_slot(ctx, handle);
    if (comm == NULL || comm->rank == COMM_RANK_NONE) {
        return;
    }
    struct membership_tree_links links;
    membership_tree_runs(comm->size - group_gap_count(comm), CONFIG_COMM_TREE_RADIX,
                         group_compact_of_rank(comm, comm->rank), &links);
    if (links.parent != MEMBERSHIP_POS_NONE) {
        peer_open_ahead(ctx, group_node(ctx, comm, group_rank_of_compact(comm, links.parent)),
                        now_ns, out);
    }
    for (uint32_t j = 0; j < links.child_count; j++) {
        peer_open_ahead(ctx, group_node(ctx, comm, group_rank_of_compact(comm, links.children[j])),
                        now_ns, out);
    }
}

static enum comm_error step_adopt_wait(struct comm *ctx, uint16_t slot, uint64_t now_ns,
                                       struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    uint16_t index = sub_index(slot, PARENT_SUB);
    if (c->phase == 0) {
        c->nodes[PARENT_SUB] = COMM_ANY_SOURCE;
        post_recv(ctx, slot, PARENT_SUB, 0, c->scratch, FT_ADOPT_WORDS * 4u, now_ns, out);
        c->phase = 1;
    }
    if (!request_done(ctx, index)) {
        return COMM_ERR_PENDING;
    }
    enum comm_error e = sub_error(ctx, index, FT_ADOPT_WORDS * 4u);
    request_release(ctx, index);
    if (e == COMM_ERR_OK) {
        e = ft_adopt_apply(ctx, c->scratch, FT_ADOPT_WORDS * 4u, c->new_comm);
    }
    if (e != COMM_ERR_OK) {
        c->phase = 0; /* not for us after all: wait for the next */
        return COMM_ERR_PENDING;
    }
    coll_open_comm_tree(ctx, *c->new_comm, now_ns, out);
    return COMM_ERR_OK;
}

/* ---- the end of a collective ---- */

static void reverse(uint8_t *bytes, uint32_t length)
{
    for (uint32_t i = 0, j = length; i + 1u < j; i++, j--) {
        uint8_t t = bytes[i];
        bytes[i] = bytes[j - 1u];
        bytes[j - 1u] = t;
    }
}

static uint64_t key_at(const uint8_t *bytes, uint32_t i)
{
    uint64_t key;
    memcpy(&key, bytes + 8u * i, sizeof key);
    return key;
}

static void swap_keys(uint8_t *bytes, uint32_t i, uint32_t j)
{
    uint64_t a = key_at(bytes, i);
    uint64_t b = key_at(bytes, j);
    memcpy(bytes + 8u * i, &b, sizeof b);
    memcpy(bytes + 8u * j, &a, sizeof a);
}

/* Moves key i down the max-heap over [0, end). */
static void sift_down(uint8_t *bytes, uint32_t i, uint32_t end)
{
    for (;;) {
        uint32_t child = 2u * i + 1u;
        if (child >= end) {
            return;
        }
        if (child + 1u < end && key_at(bytes, child + 1u) > key_at(bytes, child)) {
            child++;
        }
        if (key_at(bytes, i) >= key_at(bytes, child)) {
            return;
        }
        swap_keys(bytes, i, child);
        i = child;
    }
}

/* Heap sort, in place: count 64-bit keys (native) ascending. */
static void sort_keys(uint8_t *bytes, uint32_t count)
{
    for (uint32_t i = count / 2u; i > 0; i--) {
        sift_down(bytes, i - 1u, count);
    }
    for (uint32_t end = count; end > 1u; end--) {
        swap_keys(bytes, 0, end - 1u);
        sift_down(bytes, 0, end - 1u);
    }
}

int coll_lowest_free_context(const uint64_t *used)
{
    for (uint32_t w = 0; w < COMM_CONTEXT_WORDS; w++) {
        if (used[w] != UINT64_MAX) {
            return (int)(w * 64u + (uint32_t)__builtin_ctzll(~used[w]));
        }
    }
    return -1;
}

/* Dup and split: the new communicator (COMM_NULL for an undefined color). */
static enum comm_error create_comm(struct comm *ctx, struct comm_collective *c,
                                   uint32_t *handle)
{
    *handle = COMM_NULL;
    const struct comm_communicator *parent = &ctx->comms[c->comm];
    int context = coll_lowest_free_context(c->contexts);
    if (context < 0) {
        return COMM_ERR_BUSY;
    }
    uint32_t context_gen = (uint32_t)c->contexts[COMM_CONTEXT_WORDS];
    uint16_t slot;
    if (c->kind == COLL_DUP) {
        const uint8_t *list =
            parent->group == GROUP_LIST ? (const uint8_t *)&ctx->map[parent->first] : NULL;
        slot = comm_create(ctx, (uint8_t)context, context_gen, list, parent->first, parent->size);
    } else {
        if (c->color == COMM_UNDEFINED) {
            return COMM_ERR_OK;
        }
        /* Our color's members as (key, rank) keys, compacted in place. */
        uint32_t members = 0;
        for (uint32_t r = 0; r < c->size; r++) {
            int32_t color = (int32_t)(uint32_t)le_get_u64(c->scratch + 8u * r);
            int32_t key = (int32_t)(uint32_t)(le_get_u64(c->scratch + 8u * r) >> 32);
            if (color != c->color) {
                continue;
            }
            uint64_t sort_key = ((uint64_t)((uint32_t)key ^ 0x80000000u) << 32) | r;
            memcpy(c->scratch + 8u * members, &sort_key, sizeof sort_key);
            members++;
        }
        sort_keys(c->scratch, members);
        /* Ranks to node ids, compacted to 4-byte entries in place. */
        bool range = true;
        uint32_t first = 0;
        for (uint32_t i = 0; i < members; i++) {
            uint64_t sort_key;
            memcpy(&sort_key, c->scratch + 8u * i, sizeof sort_key);
            uint32_t node = group_node(ctx, parent, (uint32_t)sort_key);
            if (i == 0) {
                first = node;
            } else if (node != first + i) {
                range = false;
            }
            memcpy(c->scratch + 4u * i, &node, sizeof node);
        }
        slot = comm_create(ctx, (uint8_t)context, context_gen, range ? NULL : c->scratch, first,
                           members);
    }
    if (slot == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    if (ctx->comms[slot].state == COMM_STATE_DETECTED) {
        /* a member failed (seen here) since: its collectives will not run */
        match_drop_context(ctx, (uint8_t)context, false, NULL);
    }
    ctx->contexts_used[context / 64] |= UINT64_C(1) << (context % 64);
    *handle = comm_handle_of(ctx, slot);
    return COMM_ERR_OK;
}

static void release_slot(struct comm *ctx, uint16_t slot)
{
    struct comm_collective *c = &ctx->colls[slot];
    for (uint32_t j = 0; j < COMM_COLL_SUBS; j++) {
        request_release(ctx, sub_index(slot, j));
    }
    if (c->kind == COLL_DUP || c->kind == COLL_SPLIT ||
        (c->kind == COLL_REBUILD && !c->background)) {
        ctx->creating = false;
    }
    c->background = false;
    c->restart = false;
    c->parked = false;
    c->strict_phase = false;
    c->in_hand = false;
    c->handed = false;
    c->attach_offered = false;
    c->state = COLL_FREE;
}

/* Strict mode (the default): reduce, allreduce, barrier, gather and
 * allgather return the same outcome at every survivor.  Allreduce and
 * barrier: each member keeps the result it returned; a view change during
 * one turns it into a result round in which a survivor's result wins (no
 * message more when nothing fails).  Reduce, gather, allgather: after the
 * operation, an agree on whether it succeeded everywhere. */
static bool strict_kind(uint8_t kind)
{
    return kind == COLL_REDUCE || kind == COLL_GATHER || kind == COLL_ALLGATHER;
}

static bool result_kind(uint8_t kind)
{
    return kind == COLL_BARRIER || kind == COLL_ALLREDUCE;
}

/* CONFIG_COMM_FT 0: never (comm_init refuses strict), and the compiler
 * drops the agree and result rounds. */
static bool goes_strict(const struct comm *ctx, const struct comm_collective *c)
{
    return CONFIG_COMM_FT && strict_kind(c->kind) && !c->strict_phase && ctx->comms[c->comm].strict;
}

static bool keeps_result(const struct comm *ctx, const struct comm_collective *c)
{
    return CONFIG_COMM_FT && result_kind(c->kind) && ctx->comms[c->comm].strict;
}

static void become_agree(struct comm *ctx, uint16_t slot, enum comm_error own, bool drain);
static void become_result_round(struct comm *ctx, uint16_t slot, bool drain);

/* A strict allreduce's or barrier's result is here once its broadcast step
 * has it: the root's from the reduce, the others' from their parent (the
 * broadcast is its last step).  What is left are the sends to children. */
static bool result_in_hand(const struct comm_collective *c)
{
    return c->step + 1u == c->step_count && c->steps[c->step].kind == STEP_BCAST &&
           c->phase >= 2u;
}

/* The application's request ends (none for a background round); an OK
 * strict allreduce or barrier keeps its result for the rounds after. */
static void complete_request(struct comm *ctx, struct comm_collective *c, enum comm_error error,
                             uint32_t handle, struct comm_outbox *out)
{
    if (CONFIG_COMM_FT && c->kind != COLL_ADOPT && !c->background && error == COMM_ERR_OK) {
        /* every member took part: the decisions before it are known to all */
        ft_collective_done(ctx, c->comm, coll_is_round(c->kind) ? c->round_seq : -1);
        if (keeps_result(ctx, c)) {
            ft_result_done(ctx, c, (uint8_t)(c->tag_base >> 4));
        }
    }
    if (!c->background) {
        ctx->requests[c->request].status.comm = handle;
        request_complete(ctx, c->request, error, out);
    }
}

static void finish(struct comm *ctx, uint16_t slot, struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    enum comm_error error = COMM_ERR_OK;
    uint32_t handle = COMM_NULL;
    if (c->kind == COLL_REDUCE && c->parent == COMM_RANK_NONE) {
        decode_vector(c->recv, c->scratch, c->count);
    } else if (c->kind == COLL_GATHER && c->parent == COMM_RANK_NONE && c->root != 0) {
        /* Blocks lie in relative-rank order: rotate right by root blocks. */
        uint32_t block = c->steps[0].bytes;
        uint32_t total = c->size * block;
        uint32_t shift = c->root * block;
        reverse(c->recv, total);
        reverse(c->recv, shift);
        reverse(c->recv + shift, total - shift);
    } else if (c->kind == COLL_DUP || c->kind == COLL_SPLIT) {
        error = create_comm(ctx, c, &handle);
    } else if (c->strict_phase) {
        if (c->strict_flag == 0) {
            error = c->strict_error != COMM_ERR_OK ? (enum comm_error)c->strict_error
                                                    : COMM_ERR_PROC_FAILED; /* failed elsewhere */
        }
    } else if (coll_is_round(c->kind) || c->kind == COLL_ADOPT) {
        error = (enum comm_error)c->round_error;
        handle = c->new_comm != NULL ? *c->new_comm : COMM_NULL;
    }
    if (goes_strict(ctx, c)) {
        become_agree(ctx, slot, COMM_ERR_OK, false);
        return;
    }
    complete_request(ctx, c, error, handle, out);
    release_slot(ctx, slot);
}

/*
 * A strict allreduce or barrier cut after its result came down (the root's
 * from its reduce, the others' from their parent): the result is the
 * application's at once, OK, and kept.  Its sends to children still under
 * way read a copy in the slot's scratch (free: the reduce step waited for
 * its send to the parent; at the root the result is there already), so the
 * slot drains on without the application's buffer, which the call returns.
 * It once waited for those sends' acknowledgements, and a frame lost on the
 * way (through the failed node before routes turned away from it) cost the
 * retransmission timeout before the member even joined the next
 * collective's result round: on QEMU 2x2x2 the root noticed a second crash
 * 15-20 ms after every other rank.
 */
static void hand_over(struct comm *ctx, uint16_t slot, struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    struct comm_coll_step *st = &c->steps[c->step];
    if (st->buffer != c->scratch && st->bytes > 0) {
        memcpy(c->scratch, st->buffer, st->bytes);
        for (uint32_t j = 0; j < COMM_COLL_SUBS; j++) {
            struct comm_request *r = &ctx->requests[sub_index(slot, j)];
            if (r->state == COMM_REQ_PENDING && r->kind == COMM_REQ_SEND &&
                r->source == st->buffer) {
                r->source = c->scratch;
            }
        }
        st->buffer = c->scratch;
    }
    if (st->decode) { /* as step_bcast does once its sends are done */
        decode_vector(c->recv, st->buffer, c->count);
    }
    c->handed = true;
    complete_request(ctx, c, COMM_ERR_OK, COMM_NULL, out);
}

/* Fails the collective: the application hears at once; internal requests
 * still under way (matched receives, sends in windows) finish first. */
static void fail(struct comm *ctx, uint16_t slot, enum comm_error error,
                 struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    if (goes_strict(ctx, c) && error != COMM_ERR_REVOKED && error != COMM_ERR_NO_VIEW) {
        become_agree(ctx, slot, error, true); /* others may have succeeded: agree first */
    } else if (keeps_result(ctx, c) && error == COMM_ERR_PROC_FAILED && c->state == COLL_RUNNING &&
               result_in_hand(c)) {
        /* The root's result came down here: only a send to a child failed.
         * It completes OK (hand_over, from advance at the next coll_run:
         * in this call, or at the next poll, coll_work making the deadline
         * now; coll_stop_background reaches fail, and completing here would
         * close a call cycle through ft_result_done, which the image's
         * static stack bound forbids), and its result is kept and served
         * like any returned one: waiting for a result round to tell it
         * what it holds cost its member a whole traversal before the next
         * one could start. */
        c->in_hand = true;
    } else if (keeps_result(ctx, c) && error == COMM_ERR_PROC_FAILED) {
        become_result_round(ctx, slot, true); /* others may have the result */
    }
    if (!c->background && !c->restart && !c->in_hand) {
        request_complete(ctx, c->request, error, out);
    }
    c->state = COLL_DRAINING;
    for (uint32_t j = 0; j < COMM_COLL_SUBS; j++) {
        uint16_t index = sub_index(slot, j);
        struct comm_request *r = &ctx->requests[index];
        if (r->state == COMM_REQ_PENDING && r->kind == COMM_REQ_RECV && match_cancel(ctx, index)) {
            request_release(ctx, index);
        }
    }
    ctx->coll_work |= 1u << slot;
}

/* An abstention restarting in a new view gives its slot to a kept
 * decision waiting to be served: members still in the earlier round wait
 * for that decision, and no member can be in the abstained round before
 * it has finished the earlier one.  With CONFIG_COMM_MAX_COLLECTIVES 2 a
 * rebuild and its abstention held both slots, and the kept result that a
 * member still in a cut allreduce needed was never served: every member
 * waited for ever. */
static bool yields(const struct comm *ctx, const struct comm_collective *c)
{
    return c->background && c->abstain && !ctx->comms[c->comm].abstain_queued &&
           ft_background_waiting(ctx);
}

/* The abstention waits on its communicator for a slot (coll_start_abstention),
 * and starts afresh there (a round restarts anyway). */
static void queue_round(struct comm *ctx, uint16_t slot)
{
    struct comm_collective *c = &ctx->colls[slot];
    struct comm_communicator *x = &ctx->comms[c->comm];
    x->abstain_queued = true;
    ctx->ft_background = true;
    x->abstain_seq = c->round_seq;
    release_slot(ctx, slot);
}

static void advance(struct comm *ctx, uint16_t slot, uint64_t now_ns, struct comm_outbox *out)
{
    struct comm_collective *c = &ctx->colls[slot];
    if (c->state == COLL_DRAINING) {
        if (CONFIG_COMM_FT && c->in_hand && !c->handed) {
            hand_over(ctx, slot, out);
        }
        for (uint32_t j = 0; j < COMM_COLL_SUBS; j++) {
            if (ctx->requests[sub_index(slot, j)].state == COMM_REQ_PENDING) {
                return;
            }
        }
        if (CONFIG_COMM_FT && c->in_hand) {
            uint16_t comm = c->comm;
            uint8_t seq = (uint8_t)(c->tag_base >> 4);
            const struct comm_communicator *x = &ctx->comms[comm];
            release_slot(ctx, slot); /* its request completed at the cut */
            if (x->state == COMM_STATE_DETECTED && x->decision_held &&
                x->decision_kind == COLL_RESULT && x->decision_seq == seq) {
                /* members the failure cut before the result reached them
                 * wait in its result round for it (the view that cut it
                 * found no result here to serve): served as after any
                 * failure, in the slot just freed.  Unless a later round
                 * decided meanwhile: every member had offered in it, so
                 * none is still in this one. */
                ft_serve_kept(ctx, comm);
            }
            return;
        }
        if (!c->restart || !CONFIG_COMM_FT) {
            release_slot(ctx, slot);
            return;
        }
        if (c->parked && ctx->has_view && ft_round_tag_current(ctx, c->tag_base)) {
            return; /* the next view starts it again (coll_restart_rounds) */
        }
        c->parked = false;
        if (!ctx->has_view) {
            c->restart = false; /* the view went while it drained */
            if (!c->background) {
                request_complete(ctx, c->request, COMM_ERR_NO_VIEW, out);
            }
            release_slot(ctx, slot);
            return;
        }
        if (yields(ctx, c)) {
            queue_round(ctx, slot);
            return;
        }
        /* a recovery round again, in the view that interrupted it */
        for (uint32_t j = 0; j < COMM_COLL_SUBS; j++) {
            request_release(ctx, sub_index(slot, j));
        }
        c->restart = false;
        c->state = COLL_RUNNING;
        c->step = 0;
        c->phase = 0;
        c->spare_next = 0;
        ft_round_setup(ctx, c, round_offer(c));
    }
    if (c->state != COLL_RUNNING) {
        return;
    }
    while (c->step < c->step_count) {
        const struct comm_coll_step *st = &c->steps[c->step];
        enum comm_error e;
        switch (st->kind) {
        case STEP_REDUCE:
            e = step_reduce(ctx, slot, now_ns, out);
            break;
        case STEP_BCAST:
            e = step_bcast(ctx, slot, st, now_ns, out);
            break;
        case STEP_GATHER:
            e = step_gather(ctx, slot, st, now_ns, out);
            break;
        case STEP_DECIDE:
            if (CONFIG_COMM_FT && c->parent == COMM_RANK_NONE) {
                ft_decide(ctx, c, c->scratch);
            }
            e = COMM_ERR_OK;
            break;
        case STEP_APPLY:
            c->round_error = CONFIG_COMM_FT ? (uint8_t)ft_apply(ctx, c, c->scratch) : 0u;
            if (c->round_error == COMM_ERR_OK && c->kind == COLL_REBUILD && c->new_comm != NULL) {
                coll_open_comm_tree(ctx, *c->new_comm, now_ns, out);
            }
            e = COMM_ERR_OK;
            break;
        case STEP_ADOPT_SEND:
            e = CONFIG_COMM_FT ? step_adopt_send(ctx, slot, now_ns, out) : COMM_ERR_ARG;
            break;
        default: /* the recovery steps run only with CONFIG_COMM_FT */
            e = CONFIG_COMM_FT ? step_adopt_wait(ctx, slot, now_ns, out) : COMM_ERR_ARG;
            break;
        }
        if (e == COMM_ERR_PENDING) {
            return;
        }
        if (e == COMM_ERR_PROC_FAILED && coll_is_round(c->kind)) {
            /* A peer failed under it (reset, restarted) before any view
             * said so: a round ends only with a decision, the same at
             * every member, so it waits for the view that settles it. */
            c->restart = true;
            c->parked = true;
            fail(ctx, slot, e, out);
            return;
        }
        if (e != COMM_ERR_OK) {
            fail(ctx, slot, e, out);
            return;
        }
        c->step++;
        c->phase = 0;
    }
    finish(ctx, slot, out);
}

void coll_run(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    for (;;) {
        while (ctx->coll_work != 0) {
            uint16_t slot = (uint16_t)__builtin_ctz(ctx->coll_work);
            ctx->coll_work &= ~(1u << slot);
            advance(ctx, slot, now_ns, out);
        }
        if (CONFIG_COMM_FT && ctx->ft_background) {
            ft_background_due(ctx, now_ns, out); /* a slot may have come free */
        }
        if (ctx->coll_work == 0) {
            return;
        }
    }
}

void coll_fail_comm(struct comm *ctx, uint16_t comm, enum comm_error error,
                    struct comm_outbox *out)
{
    if (error == COMM_ERR_NO_VIEW) {
        ctx->comms[comm].abstain_queued = false; /* no round of it runs any more */
        ft_attach_fail(ctx, comm, error, out);
    }
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_COLLECTIVES; slot++) {
        struct comm_collective *c = &ctx->colls[slot];
        if (c->state == COLL_FREE || c->comm != comm) {
            continue;
        }
        if ((c->kind == COLL_ADOPT && error == COMM_ERR_PROC_FAILED) ||
            ((coll_is_round(c->kind) || c->kind == COLL_ADOPT) && error == COMM_ERR_REVOKED)) {
            continue; /* a spare waits for any root; recovery goes on on a revoked one */
        }
        if (coll_is_round(c->kind) && error == COMM_ERR_PROC_FAILED) {
            if (c->state == COLL_RUNNING && c->step < c->step_count &&
                c->steps[c->step].kind != STEP_ADOPT_SEND) {
                c->restart = true; /* the view changed under it: again in the new one */
                fail(ctx, slot, error, out);
            }
            continue;
        }
        if (c->state == COLL_RUNNING) {
            c->restart = false;
            fail(ctx, slot, error, out);
        } else if (c->restart) {
            c->restart = false; /* draining for a restart: it ends here instead */
            if (!c->background) {
                request_complete(ctx, c->request, error, out);
            }
        } else if (c->in_hand && !c->handed && error == COMM_ERR_NO_VIEW) {
            c->in_hand = false; /* the view went before it was handed over */
            request_complete(ctx, c->request, error, out);
        } /* a result handed over drains on: its request is done */
    }
}

void coll_restart_rounds(struct comm *ctx, struct comm_outbox *out)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_COLLECTIVES; slot++) {
        struct comm_collective *c = &ctx->colls[slot];
        if (c->state == COLL_RUNNING && coll_is_round(c->kind) && c->step < c->step_count &&
            c->steps[c->step].kind != STEP_ADOPT_SEND) {
            c->restart = true;
            fail(ctx, slot, COMM_ERR_PROC_FAILED, out);
        } else if (c->state == COLL_DRAINING && c->parked) {
            ctx->coll_work |= 1u << slot; /* parked: its view came */
        }
    }
}

/* ---- starting ---- */

/* The largest subtree below a root of a communicator of size ranks. */
static uint32_t largest_child_subtree(uint32_t size)
{
    return size <= 1u ? 0u : (size - 1u + CONFIG_COMM_TREE_RADIX - 1u) / CONFIG_COMM_TREE_RADIX;
}

static enum comm_error check_args(const struct comm *ctx, const struct coll_args *a)
{
    const struct comm_communicator *comm = &ctx->comms[a->comm];
    uint32_t n = comm->size - group_gap_count(comm);
    bool rooted = a->kind == COLL_BCAST || a->kind == COLL_REDUCE || a->kind == COLL_GATHER;
    if (rooted && a->root >= comm->size) {
        return COMM_ERR_RANK;
    }
    if (rooted && group_node(ctx, comm, a->root) == COMM_NODE_NONE) {
        return COMM_ERR_INVALID_RANK; /* a BLANK gap */
    }
    bool at_root = comm->rank == a->root;
    switch (a->kind) {
    case COLL_BCAST:
        if (a->count > CONFIG_COMM_MAX_MESSAGE) {
            return COMM_ERR_COUNT;
        }
        return a->count > 0 && a->recv == NULL ? COMM_ERR_ARG : COMM_ERR_OK;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
        if ((uint64_t)a->count * 8u > CONFIG_COMM_REDUCE_MAX) {
            return COMM_ERR_COUNT;
        }
        if (a->type > COMM_DOUBLE || a->op > COMM_MAX) {
            return COMM_ERR_ARG;
        }
        if (a->count > 0 && (a->send == NULL ||
                             ((a->kind == COLL_ALLREDUCE || at_root) && a->recv == NULL))) {
            return COMM_ERR_ARG;
        }
        return COMM_ERR_OK;
    case COLL_GATHER:
        if ((uint64_t)largest_child_subtree(n) * a->count > CONFIG_COMM_COLL_SCRATCH ||
            (uint64_t)n * a->count > UINT32_MAX) {
            return COMM_ERR_COUNT;
        }
        if (a->count > 0 && (a->send == NULL || (at_root && a->recv == NULL))) {
            return COMM_ERR_ARG;
        }
        return COMM_ERR_OK;
    case COLL_ALLGATHER:
        if ((uint64_t)n * a->count > CONFIG_COMM_MAX_MESSAGE) {
            return COMM_ERR_COUNT;
        }
        return a->count > 0 && (a->send == NULL || a->recv == NULL) ? COMM_ERR_ARG : COMM_ERR_OK;
    case COLL_SPLIT:
        if ((uint64_t)n * 8u > CONFIG_COMM_COLL_SCRATCH) {
            return COMM_ERR_COUNT;
        }
        if (a->color < 0 && a->color != COMM_UNDEFINED) {
            return COMM_ERR_ARG;
        }
        return ctx->creating || coll_attach_offered(ctx, COMM_NONE16) ? COMM_ERR_BUSY
                                                                      : COMM_ERR_OK;
    case COLL_DUP:
        return ctx->creating || coll_attach_offered(ctx, COMM_NONE16) ? COMM_ERR_BUSY
                                                                      : COMM_ERR_OK;
    default:
        return COMM_ERR_OK;
    }
}

static void add_step(struct comm_collective *c, uint8_t kind, uint8_t *buffer, uint32_t bytes,
                     bool decode)
{
    struct comm_coll_step *st = &c->steps[c->step_count++];
    st->kind = kind;
    st->buffer = buffer;
    st->bytes = bytes;
    st->decode = decode;
}

/* Reduce to the root, then (all = true) broadcast the result to recv. */
static void add_reduce(struct comm_collective *c, bool all)
{
    add_step(c, STEP_REDUCE, NULL, c->count * 8u, false);
    if (all) {
        uint8_t *buffer = c->parent == COMM_RANK_NONE ? c->scratch : c->recv;
        add_step(c, STEP_BCAST, buffer, c->count * 8u, true);
    }
}

static void program(struct comm *ctx, struct comm_collective *c, const struct coll_args *a)
{
    (void)ctx;
    switch (a->kind) {
    case COLL_BARRIER:
        c->count = 0;
        add_reduce(c, true);
        break;
    case COLL_BCAST:
        add_step(c, STEP_BCAST, a->recv, a->count, false);
        break;
    case COLL_REDUCE:
        add_reduce(c, false);
        break;
    case COLL_ALLREDUCE:
        add_reduce(c, true);
        break;
    case COLL_GATHER:
        add_step(c, STEP_GATHER, c->parent == COMM_RANK_NONE ? a->recv : c->scratch, a->count,
                 false);
        break;
    case COLL_ALLGATHER:
        add_step(c, STEP_GATHER, a->recv + (uint64_t)c->vrank * a->count, a->count, false);
        add_step(c, STEP_BCAST, a->recv, c->size * a->count, false);
        break;
    default: /* DUP, SPLIT: agree on a free context (an OR of the sets in use)
              * and its generation (the largest next one) */
        ft_contexts_taken(ctx, c->contexts); /* and those kept decisions reserve */
        c->contexts[COMM_CONTEXT_WORDS] = ctx->next_context_gen;
        c->send = (const uint8_t *)c->contexts;
        c->recv = (uint8_t *)c->contexts;
        c->count = COMM_CONTEXT_WORDS + 1u;
        c->type = COMM_INT64;
        c->op = COMM_BOR;
        add_reduce(c, true);
        if (a->kind == COLL_SPLIT) {
            le_put_u64(c->own, (uint64_t)(uint32_t)a->color | ((uint64_t)(uint32_t)a->key << 32));
            add_step(c, STEP_GATHER, c->scratch + 8u * c->vrank, 8u, false);
            add_step(c, STEP_BCAST, c->scratch, c->size * 8u, false);
        }
        break;
    }
}

enum comm_error coll_start(struct comm *ctx, const struct coll_args *a, uint64_t now_ns,
                           struct comm_outbox *out, uint32_t *request)
{
    (void)now_ns;
    (void)out;
    struct comm_communicator *comm = &ctx->comms[a->comm];
    enum comm_error e = check_args(ctx, a);
    if (e != COMM_ERR_OK) {
        return e;
    }
    uint16_t slot = COMM_NONE16;
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COLLECTIVES; i++) {
        if (ctx->colls[i].state == COLL_FREE) {
            slot = i;
            break;
        }
    }
    if (slot == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    uint16_t index = request_alloc_app(ctx, COMM_REQ_COLLECTIVE);
    if (index == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    struct comm_collective *c = &ctx->colls[slot];
    c->state = COLL_RUNNING;
    c->kind = a->kind;
    c->op = a->op;
    c->type = a->type;
    c->step = 0;
    c->step_count = 0;
    c->phase = 0;
    c->comm = a->comm;
    c->request = index;
    c->tag_base = (comm->collective_seq++ & 0x0fffffffu) << 4;
    c->root = a->kind == COLL_BCAST || a->kind == COLL_REDUCE || a->kind == COLL_GATHER ? a->root
                                                                                        : 0;
    c->size = comm->size - group_gap_count(comm);
    c->root = group_compact_of_rank(comm, c->root);
    c->vrank = (uint32_t)(((uint64_t)group_compact_of_rank(comm, comm->rank) + c->size - c->root) %
                          c->size);
    struct membership_tree_links links;
    membership_tree_runs(c->size, CONFIG_COMM_TREE_RADIX, c->vrank, &links);
    c->parent = links.parent == MEMBERSHIP_POS_NONE ? COMM_RANK_NONE : links.parent;
    c->child_count = links.child_count;
    for (uint32_t j = 0; j < links.child_count; j++) {
        c->children[j] = links.children[j];
    }
    c->subtree = links.subtree_size;
    c->count = a->count;
    c->send = a->send;
    c->recv = a->recv;
    c->color = a->color;
    ctx->requests[index].comm = a->comm;
    if (a->kind == COLL_DUP || a->kind == COLL_SPLIT) {
        ctx->creating = true;
    }
    c->strict_phase = false;
    c->abstain = false;
    c->in_hand = false;
    c->handed = false;
    c->attach_offered = false;
    program(ctx, c, a);
    if (a->failed && result_kind(c->kind)) {
        become_result_round(ctx, slot, false);
    } else if (a->failed) {
        become_agree(ctx, slot, COMM_ERR_PROC_FAILED, false);
    }
    ctx->coll_work |= 1u << slot;
    *request = request_handle(ctx, index);
    return COMM_ERR_OK;
}

/* ---- recovery rounds ---- */

static void add_round_steps(struct comm_collective *c)
{
    c->step_count = 0;
    uint32_t bytes = ft_offer_words(c) * 8u;
    add_step(c, STEP_REDUCE, NULL, bytes, false);
    add_step(c, STEP_DECIDE, NULL, 0, false);
    add_step(c, STEP_BCAST, c->scratch, bytes, false);
    add_step(c, STEP_APPLY, NULL, 0, false);
    add_step(c, STEP_ADOPT_SEND, NULL, 0, false);
}

/* A strict collective's slot turned into a recovery round (its kind, seq
 * and flag already set): now, or once its internal requests drained. */
static void become_round(struct comm *ctx, uint16_t slot, bool drain)
{
    struct comm_collective *c = &ctx->colls[slot];
    c->new_comm = NULL;
    c->round_error = COMM_ERR_OK;
    c->spare_next = 0;
    c->step = 0;
    c->phase = 0;
    add_round_steps(c);
    if (drain) {
        c->restart = true;
        return;
    }
    for (uint32_t j = 0; j < COMM_COLL_SUBS; j++) {
        request_release(ctx, sub_index(slot, j));
    }
    ft_round_setup(ctx, c, round_offer(c));
    ctx->coll_work |= 1u << slot;
}

/* A strict allreduce's or barrier's result round, in the same slot and
 * request, named by the operation's sequence number: now (called on a
 * DETECTED communicator) or once its internal requests drained. */
static void become_result_round(struct comm *ctx, uint16_t slot, bool drain)
{
    struct comm_collective *c = &ctx->colls[slot];
    c->result_count = c->kind == COLL_ALLREDUCE ? c->count : 0u;
    c->round_seq = (uint8_t)(c->tag_base >> 4);
    c->kind = COLL_RESULT;
    c->flag = NULL;
    become_round(ctx, slot, drain);
}

/* The strict collective's outcome agree, in the same slot and request:
 * now (the operation finished here) or once its internal requests drained
 * (it failed here). */
static void become_agree(struct comm *ctx, uint16_t slot, enum comm_error own, bool drain)
{
    struct comm_collective *c = &ctx->colls[slot];
    struct comm_communicator *x = &ctx->comms[c->comm];
    c->strict_phase = true;
    c->strict_error = (uint8_t)own;
    c->strict_flag = own == COMM_ERR_OK ? 1u : 0u;
    c->kind = COLL_AGREE;
    c->round_seq = x->recovery_seq++;
    c->flag = &c->strict_flag;
    become_round(ctx, slot, drain);
}

bool coll_round_running(const struct comm *ctx, uint16_t comm, uint8_t kind, uint8_t seq)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_COLLECTIVES; slot++) {
        const struct comm_collective *c = &ctx->colls[slot];
        /* one past its decision (telling spares) serves no round any more */
        bool deciding = c->step >= c->step_count || c->steps[c->step].kind != STEP_ADOPT_SEND;
        if (c->state != COLL_FREE && c->comm == comm && c->kind == kind && c->round_seq == seq &&
            deciding) {
            return true;
        }
    }
    return false;
}

static uint16_t free_slot(const struct comm *ctx)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_COLLECTIVES; i++) {
        if (ctx->colls[i].state == COLL_FREE) {
            return i;
        }
    }
    return COMM_NONE16;
}

/* A round in a free slot, for the application's request index (or none:
 * a background round). */
static void setup_round(struct comm *ctx, uint16_t slot, uint16_t comm, uint8_t kind, uint8_t seq,
                        uint8_t rebuild_mode, uint32_t *flag, uint32_t *new_comm, uint16_t index)
{
    struct comm_collective *c = &ctx->colls[slot];
    c->state = COLL_RUNNING;
    c->kind = kind;
    c->background = index == COMM_NONE16;
    c->restart = false;
    c->parked = false;
    /* a background result round with no result of ours to serve */
    const struct comm_communicator *x = &ctx->comms[comm];
    c->abstain = kind == COLL_RESULT && c->background &&
                 !(x->decision_held && x->decision_kind == COLL_RESULT && x->decision_seq == seq);
    c->comm = comm;
    c->request = index;
    c->round_seq = seq;
    c->rebuild_mode = rebuild_mode;
    c->round_error = COMM_ERR_OK;
    c->flag = flag;
    c->new_comm = new_comm;
    c->step = 0;
    c->phase = 0;
    c->step_count = 0;
    c->spare_next = 0;
    c->strict_phase = false;
    c->attach_offered = false;
    if (kind == COLL_ADOPT) {
        c->parent = COMM_RANK_NONE;
        c->child_count = 0;
        add_step(c, STEP_ADOPT_WAIT, NULL, 0, false);
    } else {
        /* a background result round serves the result kept here */
        c->result_count = kind == COLL_RESULT && !c->abstain ? (uint32_t)x->decision[2] : 0u;
        ft_round_setup(ctx, c, round_offer(c));
        add_round_steps(c);
    }
    ctx->coll_work |= 1u << slot;
}

enum comm_error coll_start_round(struct comm *ctx, uint16_t comm, uint8_t kind, uint8_t seq,
                                 uint8_t rebuild_mode, uint32_t *flag, uint32_t *new_comm,
                                 uint32_t *request)
{
    uint16_t slot = free_slot(ctx);
    if (slot == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    uint16_t index = COMM_NONE16;
    if (request != NULL) {
        index = request_alloc_app(ctx, COMM_REQ_COLLECTIVE);
        if (index == COMM_NONE16) {
            return COMM_ERR_BUSY;
        }
        ctx->requests[index].comm = comm;
        *request = request_handle(ctx, index);
    }
    if (kind == COLL_REBUILD && request != NULL) {
        ctx->creating = true; /* one creation at a time picks a context */
    }
    setup_round(ctx, slot, comm, kind, seq, rebuild_mode, flag, new_comm, index);
    return COMM_ERR_OK;
}

void coll_start_abstention(struct comm *ctx, uint16_t comm)
{
    struct comm_communicator *x = &ctx->comms[comm];
    uint16_t slot = free_slot(ctx);
    if (!x->abstain_queued || slot == COMM_NONE16) {
        return;
    }
    x->abstain_queued = false;
    setup_round(ctx, slot, comm, COLL_RESULT, x->abstain_seq, 0, NULL, NULL, COMM_NONE16);
}

enum comm_error coll_start_waiting_rebuild(struct comm *ctx, uint16_t comm)
{
    struct comm_communicator *x = &ctx->comms[comm];
    uint16_t slot = free_slot(ctx);
    if (slot == COMM_NONE16) {
        return COMM_ERR_BUSY;
    }
    /* ctx->creating stays set: the round now holds the creation */
    setup_round(ctx, slot, comm, COLL_REBUILD, x->attach_seq, x->attach_mode, NULL,
                x->attach_new_comm, x->attach_req);
    return COMM_ERR_OK;
}

bool coll_attach_offered(const struct comm *ctx, uint16_t comm)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_COLLECTIVES; slot++) {
        const struct comm_collective *c = &ctx->colls[slot];
        if (c->state != COLL_FREE && c->attach_offered && c->comm != comm) {
            return true;
        }
    }
    return false;
}

void coll_stop_background(struct comm *ctx, uint16_t comm, uint8_t kind, uint8_t seq,
                          bool abstentions)
{
    for (uint16_t slot = 0; slot < CONFIG_COMM_MAX_COLLECTIVES; slot++) {
        struct comm_collective *c = &ctx->colls[slot];
        if (c->state == COLL_FREE || !c->background || c->comm != comm ||
            (c->kind == kind && c->round_seq == seq) || (c->abstain && !abstentions)) {
            continue;
        }
        if (c->state == COLL_RUNNING) {
            c->restart = false;
            fail(ctx, slot, COMM_ERR_OK, NULL);
        } else {
            c->restart = false; /* draining to start again: it ends instead */
        }
    }
}
