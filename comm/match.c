/*
 * Matching (see DESIGN.md, "Matching and flow control").
 *
 * A message is matched when its first fragment arrives in order from its
 * sender (so a pair's messages are matched in the order they were sent):
 * against the posted receives in posting order, else it becomes an
 * unexpected record, kept in arrival order.  A record holds the whole
 * message in pool blocks reserved at once (all or nothing), or, when the
 * pool has no room, only its envelope (WAITING, the message deferred: its
 * frames are consumed unread, so the messages behind it are not held up).
 * A deferred message's sender is GRANTed when a receive matches the record
 * or pool room is reserved for it, and sends it again (RESEND), straight
 * into its place.  A posted receive looks at the records first, in arrival
 * order, so a deferred message keeps its place among its sender's.
 */
#include "comm/internal.h"

#include <string.h>

/* Largest message the pool takes unmatched; longer ones wait for their
 * receive (a rendezvous). */
#define COMM_EAGER_MAX (CONFIG_COMM_POOL_BYTES / 2)

static uint32_t blocks_for(uint32_t length)
{
    return (length + CONFIG_COMM_POOL_BLOCK - 1u) / CONFIG_COMM_POOL_BLOCK;
}

/* ---- the pool ---- */

static void pool_init(struct comm *ctx)
{
    for (uint32_t i = 0; i < COMM_POOL_BLOCKS; i++) {
        ctx->block_next[i] = (uint16_t)(i + 1u < COMM_POOL_BLOCKS ? i + 1u : COMM_NONE16);
    }
    ctx->free_block = 0;
    ctx->free_blocks = COMM_POOL_BLOCKS;
}

/* Takes count blocks as one chain; false when the pool has fewer. */
static bool pool_take(struct comm *ctx, uint32_t count, uint16_t *first)
{
    *first = COMM_NONE16;
    if (count > ctx->free_blocks) {
        return false;
    }
    if (count == 0) {
        return true;
    }
    uint16_t head = ctx->free_block;
    uint16_t last = head;
    for (uint32_t i = 1; i < count; i++) {
        last = ctx->block_next[last];
    }
    ctx->free_block = ctx->block_next[last];
    ctx->block_next[last] = COMM_NONE16;
    ctx->free_blocks -= count;
    *first = head;
    return true;
}

static void pool_give(struct comm *ctx, uint16_t first)
{
    while (first != COMM_NONE16) {
        uint16_t next = ctx->block_next[first];
        ctx->block_next[first] = ctx->free_block;
        ctx->free_block = first;
        ctx->free_blocks++;
        first = next;
    }
}

/* The block holding byte offset of a chain, and where in it. */
static uint16_t pool_seek(const struct comm *ctx, uint16_t block, uint32_t offset,
                          uint32_t *within)
{
    for (uint32_t skip = offset / CONFIG_COMM_POOL_BLOCK; skip > 0; skip--) {
        block = ctx->block_next[block];
    }
    *within = offset % CONFIG_COMM_POOL_BLOCK;
    return block;
}

/* Writes length bytes into a chain from byte offset (within its blocks). */
static void pool_write(struct comm *ctx, uint16_t first, uint32_t offset, const uint8_t *from,
                       uint32_t length)
{
    uint32_t within;
    uint16_t block = pool_seek(ctx, first, offset, &within);
    for (uint32_t done = 0; done < length && block != COMM_NONE16;) {
        uint32_t chunk = CONFIG_COMM_POOL_BLOCK - within;
        if (chunk > length - done) {
            chunk = length - done;
        }
        memcpy(ctx->pool + (uint32_t)block * CONFIG_COMM_POOL_BLOCK + within, from + done, chunk);
        done += chunk;
        within = 0;
        block = ctx->block_next[block];
    }
}

/* Reads a chain's first length bytes. */
static void pool_read(const struct comm *ctx, uint16_t first, uint8_t *to, uint32_t length)
{
    uint16_t block = first;
    for (uint32_t done = 0; done < length && block != COMM_NONE16;) {
        uint32_t chunk = CONFIG_COMM_POOL_BLOCK;
        if (chunk > length - done) {
            chunk = length - done;
        }
        memcpy(to + done, ctx->pool + (uint32_t)block * CONFIG_COMM_POOL_BLOCK, chunk);
        done += chunk;
        block = ctx->block_next[block];
    }
}

/* ---- records ---- */

void match_init(struct comm *ctx)
{
    memset(ctx->records, 0, sizeof ctx->records);
    ctx->record_head = COMM_NONE16;
    ctx->record_tail = COMM_NONE16;
    ctx->posted_head = COMM_NONE16;
    ctx->posted_tail = COMM_NONE16;
    pool_init(ctx);
}

static uint16_t record_alloc(struct comm *ctx)
{
    for (uint16_t i = 0; i < CONFIG_COMM_MAX_UNEXPECTED; i++) {
        struct comm_record *rec = &ctx->records[i];
        if (rec->state == RECORD_FREE) {
            memset(rec, 0, sizeof *rec);
            rec->next = COMM_NONE16;
            rec->peer = COMM_NONE16;
            rec->request = COMM_NONE16;
            rec->self_send = COMM_NONE16;
            rec->first_block = COMM_NONE16;
            if (ctx->record_head == COMM_NONE16) {
                ctx->record_head = i;
            } else {
                ctx->records[ctx->record_tail].next = i;
            }
            ctx->record_tail = i;
            return i;
        }
    }
    return COMM_NONE16;
}

static void record_free(struct comm *ctx, uint16_t index)
{
    uint16_t previous = COMM_NONE16;
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        if (i == index) {
            break;
        }
        previous = i;
    }
    struct comm_record *rec = &ctx->records[index];
    if (previous == COMM_NONE16) {
        ctx->record_head = rec->next;
    } else {
        ctx->records[previous].next = rec->next;
    }
    if (ctx->record_tail == index) {
        ctx->record_tail = previous;
    }
    if (rec->reserved) {
        pool_give(ctx, rec->first_block);
    }
    rec->state = RECORD_FREE;
    rec->reserved = false;
    rec->first_block = COMM_NONE16;
}

/* A waiting record may take pool room: the message fits the eager limit. */
static bool record_may_pool(const struct comm_record *rec)
{
    return rec->state == RECORD_WAITING && rec->request == COMM_NONE16 && !rec->discard &&
           !rec->reserved && rec->self_send == COMM_NONE16 && rec->length <= COMM_EAGER_MAX;
}

/* Tells a deferred message's sender to send it again (repeated until it
 * comes: match_tick). */
static void grant(struct comm *ctx, struct comm_record *rec, struct comm_outbox *out)
{
    rec->granted = true;
    if (out == NULL) { /* a call without an outbox (comm_free): the next tick sends it */
        rec->grant_tries = 0;
        rec->grant_due_ns = ctx->last_now_ns;
        return;
    }
    rec->grant_tries = 1;
    rec->grant_due_ns = ctx->last_now_ns + peer_rto(ctx, 1);
    peer_send_grant(ctx, rec->peer, rec->node, rec->seq, out);
}

/* Room came free: the earliest waiting records get it (in arrival order:
 * the first that does not fit stops the others), and their senders a GRANT. */
static void grant_waiting(struct comm *ctx, struct comm_outbox *out)
{
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        struct comm_record *rec = &ctx->records[i];
        if (!record_may_pool(rec)) {
            continue;
        }
        if (!pool_take(ctx, blocks_for(rec->length), &rec->first_block)) {
            return;
        }
        rec->reserved = true;
        grant(ctx, rec, out);
    }
}

/* True when an earlier waiting record is owed pool room before newcomers. */
static bool pool_has_queue(const struct comm *ctx)
{
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        if (record_may_pool(&ctx->records[i])) {
            return true;
        }
    }
    return false;
}

/* ---- matching ---- */

static bool request_matches(const struct comm *ctx, const struct comm_request *r,
                            uint16_t context, uint16_t context_gen, uint32_t source_rank,
                            uint32_t tag)
{
    return r->context == context && request_context_gen(ctx, r) == context_gen &&
           (r->rank == COMM_ANY_SOURCE || r->rank == source_rank) && (r->any_tag || r->tag == tag);
}

/* A record's sender is who its envelope says (checked at match time for
 * records that arrived before their communicator existed here). */
static bool record_source_valid(const struct comm *ctx, const struct comm_request *r,
                                const struct comm_record *rec)
{
    if ((rec->context & COMM_CONTEXT_BY_NODE) != 0) {
        return rec->source_rank == rec->node;
    }
    const struct comm_communicator *c = &ctx->comms[r->comm];
    return rec->source_rank < c->size && group_node(ctx, c, rec->source_rank) == rec->node;
}

static void fill_status(struct comm_request *r, uint32_t node, uint32_t source_rank,
                        uint32_t tag, uint32_t length)
{
    r->node = node;
    r->status.source = source_rank;
    r->status.tag = (int32_t)tag;
    r->status.count = length;
}

static void complete_receive(struct comm *ctx, uint16_t request, struct comm_outbox *out)
{
    ctx->counters.messages_received++;
    request_complete(ctx, request, COMM_ERR_OK, out);
}

/* Binds receive request to record (it matched). */
static void bind(struct comm *ctx, uint16_t request, uint16_t index, struct comm_outbox *out)
{
    struct comm_request *r = &ctx->requests[request];
    struct comm_record *rec = &ctx->records[index];
    fill_status(r, rec->node, rec->source_rank, rec->tag, rec->length);
    if (rec->length > r->length) {
        request_complete(ctx, request, COMM_ERR_TRUNCATE, out);
        ctx->counters.discarded_messages++;
        if (rec->self_send != COMM_NONE16) {
            request_complete(ctx, rec->self_send, COMM_ERR_OK, out);
            record_free(ctx, index);
        } else if (rec->state == RECORD_COMPLETE) {
            record_free(ctx, index);
            grant_waiting(ctx, out);
        } else {
            rec->discard = true; /* consumed unread when it arrives */
            if (rec->state == RECORD_WAITING && !rec->granted) {
                grant(ctx, rec, out);
            }
        }
        return;
    }
    switch (rec->state) {
    case RECORD_COMPLETE:
        pool_read(ctx, rec->first_block, r->target, rec->length);
        record_free(ctx, index);
        complete_receive(ctx, request, out);
        grant_waiting(ctx, out);
        return;
    case RECORD_ARRIVING:
        rec->request = request;
        return;
    default: /* WAITING */
        if (rec->self_send != COMM_NONE16) {
            const struct comm_request *s = &ctx->requests[rec->self_send];
            if (rec->length > 0) {
                memcpy(r->target, s->source, rec->length);
            }
            request_complete(ctx, rec->self_send, COMM_ERR_OK, out);
            record_free(ctx, index);
            complete_receive(ctx, request, out);
            return;
        }
        rec->request = request;
        if (rec->reserved) { /* the data goes straight to the buffer */
            pool_give(ctx, rec->first_block);
            rec->first_block = COMM_NONE16;
            rec->reserved = false;
            grant_waiting(ctx, out);
        }
        if (!rec->granted) {
            grant(ctx, rec, out);
        }
        return;
    }
}

void match_post(struct comm *ctx, uint16_t request, uint64_t now_ns, struct comm_outbox *out)
{
    (void)now_ns;
    struct comm_request *r = &ctx->requests[request];
    for (uint16_t i = ctx->record_head; i != COMM_NONE16;) {
        struct comm_record *rec = &ctx->records[i];
        uint16_t next = rec->next;
        if (rec->request == COMM_NONE16 && !rec->discard &&
            request_matches(ctx, r, rec->context, rec->context_gen, rec->source_rank, rec->tag)) {
            if (record_source_valid(ctx, r, rec)) {
                bind(ctx, request, i, out);
                return;
            }
            ctx->counters.discarded_messages++; /* an envelope that lied */
            if (rec->state == RECORD_COMPLETE || rec->self_send != COMM_NONE16) {
                record_free(ctx, i);
            } else {
                rec->discard = true;
            }
        }
        i = next;
    }
    queue_push(ctx, &ctx->posted_head, &ctx->posted_tail, request);
}

bool match_self_send(struct comm *ctx, uint16_t request, struct comm_outbox *out)
{
    struct comm_request *s = &ctx->requests[request];
    uint32_t source_rank = ctx->comms[s->comm].rank;
    for (uint16_t i = ctx->posted_head; i != COMM_NONE16; i = ctx->requests[i].next) {
        struct comm_request *r = &ctx->requests[i];
        if (!request_matches(ctx, r, s->context, request_context_gen(ctx, s), source_rank,
                             s->tag)) {
            continue;
        }
        queue_remove(ctx, &ctx->posted_head, &ctx->posted_tail, i);
        fill_status(r, ctx->config.node_id, source_rank, s->tag, s->length);
        if (s->length > r->length) {
            request_complete(ctx, i, COMM_ERR_TRUNCATE, out);
        } else {
            if (s->length > 0) {
                memcpy(r->target, s->source, s->length);
            }
            complete_receive(ctx, i, out);
        }
        request_complete(ctx, request, COMM_ERR_OK, out);
        return true;
    }
    uint16_t index = record_alloc(ctx);
    if (index == COMM_NONE16) {
        return false;
    }
    struct comm_record *rec = &ctx->records[index];
    rec->context = s->context;
    rec->context_gen = request_context_gen(ctx, s);
    rec->node = ctx->config.node_id;
    rec->source_rank = source_rank;
    rec->tag = s->tag;
    rec->length = s->length;
    if (s->length <= COMM_EAGER_MAX && !pool_has_queue(ctx) &&
        pool_take(ctx, blocks_for(s->length), &rec->first_block)) {
        rec->reserved = true;
        rec->state = RECORD_COMPLETE;
        pool_write(ctx, rec->first_block, 0, s->source, s->length);
        ctx->counters.unexpected_messages++;
        request_complete(ctx, request, COMM_ERR_OK, out);
    } else {
        rec->state = RECORD_WAITING;
        rec->self_send = request; /* completes when a receive matches */
    }
    return true;
}

/* A deferred message sent again: its record says where it goes. */
static uint8_t place_resend(struct comm *ctx, uint16_t slot, const struct comm_frame *f,
                            uint16_t *index, struct comm_outbox *out)
{
    uint32_t node = ctx->peers[slot].node;
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        struct comm_record *rec = &ctx->records[i];
        if (rec->state != RECORD_WAITING || rec->peer != slot || rec->node != node ||
            rec->seq != f->resend_of || rec->self_send != COMM_NONE16) {
            continue;
        }
        if (rec->length != f->total) {
            break;
        }
        if (rec->discard) {
            record_free(ctx, i);
            grant_waiting(ctx, out);
            return PLACE_DISCARD;
        }
        if (rec->request != COMM_NONE16) {
            *index = rec->request;
            record_free(ctx, i);
            return PLACE_REQUEST;
        }
        if (rec->reserved) {
            rec->state = RECORD_ARRIVING;
            rec->granted = false;
            *index = i;
            return PLACE_RECORD;
        }
        break; /* never GRANTed: cannot happen */
    }
    ctx->counters.discarded_messages++;
    return PLACE_DISCARD;
}

uint8_t match_place(struct comm *ctx, uint16_t slot, const struct comm_frame *f,
                    uint16_t *index, struct comm_outbox *out)
{
    if ((f->flags & COMM_FLAG_RESEND) != 0) {
        return place_resend(ctx, slot, f, index, out);
    }
    uint32_t node = ctx->peers[slot].node;
    uint16_t cslot = comm_by_context(ctx, (uint8_t)(f->context & 0xffu));
    /* A message of a freed communicator whose context id a later one took
     * here: that one has another generation.  Without a communicator on the
     * id, one made later has a generation past every one made here so far.
     * A released communicator takes only its recovery rounds' messages. */
    bool stale = cslot != COMM_NONE16
                     ? f->context_gen != ctx->comms[cslot].context_gen ||
                           (ctx->comms[cslot].released &&
                            (f->context & COMM_CONTEXT_RECOVERY) == 0)
                     : context_gen_before(f->context_gen, (uint16_t)ctx->next_context_gen) &&
                           !ft_context_pending(ctx, (uint8_t)(f->context & 0xffu), f->context_gen);
    if (stale && (f->context & COMM_CONTEXT_ADOPT) == 0) {
        ctx->counters.drops_stale_context++;
        ctx->counters.discarded_messages++;
        return PLACE_DISCARD;
    }
    /* The envelope must name the sender, when we know the communicator. */
    if ((f->context & COMM_CONTEXT_BY_NODE) != 0) {
        /* A recovery round's message of an older epoch (resent after the
         * view changed) can match nothing any more. */
        if (f->source_rank != node ||
            ((f->context & COMM_CONTEXT_RECOVERY) != 0 && !ft_round_tag_current(ctx, f->tag))) {
            ctx->counters.discarded_messages++;
            return PLACE_DISCARD;
        }
    } else if (cslot != COMM_NONE16) {
        const struct comm_communicator *c = &ctx->comms[cslot];
        bool nop_failed = f->context == c->context &&
                          ft_nop_halted(c); /* no receive will ever take it */
        if (f->source_rank >= c->size || group_node(ctx, c, f->source_rank) != node ||
            nop_failed) {
            ctx->counters.discarded_messages++;
            return PLACE_DISCARD;
        }
    }
    for (uint16_t i = ctx->posted_head; i != COMM_NONE16; i = ctx->requests[i].next) {
        struct comm_request *r = &ctx->requests[i];
        if (!request_matches(ctx, r, f->context, f->context_gen, f->source_rank, f->tag)) {
            continue;
        }
        queue_remove(ctx, &ctx->posted_head, &ctx->posted_tail, i);
        fill_status(r, node, f->source_rank, f->tag, f->total);
        if (f->total > r->length) {
            request_complete(ctx, i, COMM_ERR_TRUNCATE, out);
            ctx->counters.discarded_messages++;
            return PLACE_DISCARD;
        }
        *index = i;
        return PLACE_REQUEST;
    }
    if (cslot != COMM_NONE16 && (f->context & COMM_CONTEXT_COLLECTIVE) != 0 &&
        (ctx->comms[cslot].state == COMM_STATE_DETECTED ||
         ctx->comms[cslot].state == COMM_STATE_FAILED)) {
        /* a collective a failure cut, resent after the view changed: its
         * communicator runs no collective any more (match_drop_context) */
        ctx->counters.discarded_messages++;
        return PLACE_DISCARD;
    }
    uint16_t r = record_alloc(ctx);
    if (r == COMM_NONE16) {
        return PLACE_WAIT; /* not even an envelope fits: the sender resends later */
    }
    struct comm_record *rec = &ctx->records[r];
    rec->context = f->context;
    rec->context_gen = f->context_gen;
    rec->node = node;
    rec->source_rank = f->source_rank;
    rec->tag = f->tag;
    rec->length = f->total;
    rec->peer = slot;
    rec->seq = f->seq;
    ctx->counters.unexpected_messages++;
    if (f->total <= COMM_EAGER_MAX && !pool_has_queue(ctx) &&
        pool_take(ctx, blocks_for(f->total), &rec->first_block)) {
        rec->reserved = true;
        rec->state = RECORD_ARRIVING;
        *index = r;
        return PLACE_RECORD;
    }
    rec->state = RECORD_WAITING;
    ctx->counters.deferred_messages++;
    return PLACE_DEFER;
}

void match_write(struct comm *ctx, uint8_t target, uint16_t index, uint32_t offset,
                 const uint8_t *data, uint32_t length)
{
    if (length == 0) {
        return;
    }
    if (target == RX_TARGET_REQUEST) {
        memcpy(ctx->requests[index].target + offset, data, length);
    } else if (target == RX_TARGET_RECORD && !ctx->records[index].discard) {
        pool_write(ctx, ctx->records[index].first_block, offset, data, length);
    }
}

void match_finish(struct comm *ctx, uint8_t target, uint16_t index, struct comm_outbox *out)
{
    if (target == RX_TARGET_REQUEST) {
        complete_receive(ctx, index, out);
        return;
    }
    if (target != RX_TARGET_RECORD) {
        return;
    }
    struct comm_record *rec = &ctx->records[index];
    if (rec->discard) {
        record_free(ctx, index);
        grant_waiting(ctx, out);
        return;
    }
    if (rec->request == COMM_NONE16) {
        rec->state = RECORD_COMPLETE;
        return;
    }
    uint16_t request = rec->request;
    struct comm_request *r = &ctx->requests[request];
    pool_read(ctx, rec->first_block, r->target, rec->length);
    record_free(ctx, index);
    complete_receive(ctx, request, out);
    grant_waiting(ctx, out);
}

void match_abandon(struct comm *ctx, uint8_t target, uint16_t index, enum comm_error error,
                   struct comm_outbox *out)
{
    if (target == RX_TARGET_REQUEST) {
        request_complete(ctx, index, error, out);
    } else if (target == RX_TARGET_RECORD) {
        struct comm_record *rec = &ctx->records[index];
        if (rec->request != COMM_NONE16) {
            request_complete(ctx, rec->request, error, out);
        }
        record_free(ctx, index);
        grant_waiting(ctx, out);
    }
}

bool match_cancel(struct comm *ctx, uint16_t request)
{
    return queue_remove(ctx, &ctx->posted_head, &ctx->posted_tail, request);
}

void match_fail_posted(struct comm *ctx, uint16_t comm, bool any_source_only,
                       enum comm_error error, struct comm_outbox *out)
{
    for (uint16_t i = ctx->posted_head; i != COMM_NONE16;) {
        struct comm_request *r = &ctx->requests[i];
        uint16_t next = r->next;
        if (r->owner == 0 && r->comm == comm && (!any_source_only || r->rank == COMM_ANY_SOURCE)) {
            queue_remove(ctx, &ctx->posted_head, &ctx->posted_tail, i);
            request_complete(ctx, i, error, out);
        }
        i = next;
    }
}

void match_fail_comm(struct comm *ctx, uint16_t comm, enum comm_error error,
                     struct comm_outbox *out)
{
    match_fail_posted(ctx, comm, false, error, out);
    uint16_t context = ctx->comms[comm].context;
    bool freed = false;
    for (uint16_t i = ctx->record_head; i != COMM_NONE16;) {
        struct comm_record *rec = &ctx->records[i];
        uint16_t next = rec->next;
        if (rec->context != context) {
            i = next;
            continue;
        }
        if (rec->request != COMM_NONE16) {
            request_complete(ctx, rec->request, error, out);
            rec->request = COMM_NONE16;
        }
        if (rec->self_send != COMM_NONE16) {
            request_complete(ctx, rec->self_send, error, out);
            record_free(ctx, i);
            freed = true;
        } else if (rec->state == RECORD_COMPLETE) {
            record_free(ctx, i);
            freed = true;
        } else {
            rec->discard = true; /* consumed unread when it arrives */
            if (rec->state == RECORD_WAITING && !rec->granted) {
                grant(ctx, rec, out);
            }
        }
        i = next;
    }
    if (freed) {
        grant_waiting(ctx, out);
    }
}

/* An unbound record nothing will take: freed when complete, else consumed
 * unread when it arrives (a deferred one is GRANTed, so its sender
 * finishes).  True when freed (room for waiting records: grant_waiting). */
static bool record_drop(struct comm *ctx, uint16_t index, struct comm_outbox *out)
{
    struct comm_record *rec = &ctx->records[index];
    ctx->counters.discarded_messages++;
    if (rec->state == RECORD_COMPLETE) {
        record_free(ctx, index);
        return true;
    }
    rec->discard = true;
    if (rec->state == RECORD_WAITING && !rec->granted) {
        grant(ctx, rec, out);
    }
    return false;
}

static bool record_unbound(const struct comm_record *rec)
{
    return rec->request == COMM_NONE16 && rec->self_send == COMM_NONE16 && !rec->discard;
}

/* What a walk over the records drops (beside being unbound).  A kind, not
 * a function pointer: the certified call graph has no indirect calls. */
enum drop_kind { DROP_STALE_ROUNDS, DROP_CONTEXT, DROP_OTHER_GENERATIONS };
struct drop_rule {
    enum drop_kind kind;
    uint8_t context;
    uint16_t keep_gen;
    bool every_space;
};

static bool drop_matches(const struct comm *ctx, const struct comm_record *rec,
                         const struct drop_rule *rule)
{
    bool same_id = (rec->context & COMM_CONTEXT_ADOPT) == 0 &&
                   (rec->context & (COMM_CONTEXT_IDS - 1u)) == rule->context;
    switch (rule->kind) {
    case DROP_STALE_ROUNDS:
        return (rec->context & COMM_CONTEXT_RECOVERY) != 0 &&
               !ft_round_tag_current(ctx, rec->tag);
    case DROP_CONTEXT:
        return rec->context == (COMM_CONTEXT_COLLECTIVE | rule->context) ||
               (rule->every_space && same_id);
    case DROP_OTHER_GENERATIONS:
        return same_id && rec->context_gen != rule->keep_gen;
    }
    return false;
}

/* Drops every unbound record the rule matches; the number dropped. */
static uint32_t drop_records(struct comm *ctx, const struct drop_rule *rule,
                             struct comm_outbox *out)
{
    bool freed = false;
    uint32_t dropped = 0;
    for (uint16_t i = ctx->record_head; i != COMM_NONE16;) {
        struct comm_record *rec = &ctx->records[i];
        uint16_t next = rec->next;
        if (record_unbound(rec) && drop_matches(ctx, rec, rule)) {
            freed |= record_drop(ctx, i, out);
            dropped++;
        }
        i = next;
    }
    if (freed) {
        grant_waiting(ctx, out);
    }
    return dropped;
}

/*
 * A round's message that arrived before this node posted its receive (it
 * was still in an earlier step or round) waits as a record; when a view
 * change restarts that round under a new tag, nothing will ever take the
 * record.  Left, such records filled the table after a few view changes
 * during recovery, and then every first fragment was refused (WAIT) for
 * good: a round's offer never got in, and the round waited for ever.
 * Records bound to a receive finish with it (the round drains).
 */
void match_drop_stale_rounds(struct comm *ctx, struct comm_outbox *out)
{
    const struct drop_rule rule = {.kind = DROP_STALE_ROUNDS};
    (void)drop_records(ctx, &rule, out);
}

/*
 * The same for a collective a failure cut: a member's part that arrived
 * before this node reached that step (or that collective) waits as a
 * record, and once the communicator is DETECTED no collective runs on it
 * any more (strict ones go on as recovery rounds, in the recovery space):
 * nothing will take it.  Left, a few failures filled the pool and the
 * record table.  Point-to-point records stay (under CONT live pairs go on
 * talking); so do records bound to a draining collective's receive.  A
 * freed communicator's records go in every space (every_space): they
 * could only match a later communicator that reuses its context id.
 */
void match_drop_context(struct comm *ctx, uint8_t context, bool every_space,
                        struct comm_outbox *out)
{
    const struct drop_rule rule = {
        .kind = DROP_CONTEXT, .context = context, .every_space = every_space};
    (void)drop_records(ctx, &rule, out);
}

void match_drop_other_generations(struct comm *ctx, uint8_t context, uint16_t keep,
                                  struct comm_outbox *out)
{
    const struct drop_rule rule = {
        .kind = DROP_OTHER_GENERATIONS, .context = context, .keep_gen = keep};
    ctx->counters.drops_stale_context += drop_records(ctx, &rule, out);
}

void match_fail_node(struct comm *ctx, uint32_t node, enum comm_error error,
                     bool receives_naming_it, struct comm_outbox *out)
{
    bool freed = false;
    for (uint16_t i = ctx->record_head; i != COMM_NONE16;) {
        struct comm_record *rec = &ctx->records[i];
        uint16_t next = rec->next;
        /* Messages it completed stay deliverable; the rest never will be. */
        if (rec->node == node && rec->state != RECORD_COMPLETE) {
            if (rec->request != COMM_NONE16) {
                    request_complete(ctx, rec->request, error, out);
            }
            record_free(ctx, i);
            freed = true;
        }
        i = next;
    }
    for (uint16_t i = receives_naming_it ? ctx->posted_head : COMM_NONE16; i != COMM_NONE16;) {
        struct comm_request *r = &ctx->requests[i];
        uint16_t next = r->next;
        uint32_t from = r->rank == COMM_ANY_SOURCE || (r->context & COMM_CONTEXT_BY_NODE) != 0
                            ? r->rank
                            : group_node(ctx, &ctx->comms[r->comm], r->rank);
        if (r->rank != COMM_ANY_SOURCE && from == node) {
            queue_remove(ctx, &ctx->posted_head, &ctx->posted_tail, i);
            request_complete(ctx, i, error, out);
        }
        i = next;
    }
    if (freed) {
        grant_waiting(ctx, out);
    }
}

void match_reset_all(struct comm *ctx, enum comm_error error, struct comm_outbox *out)
{
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        struct comm_record *rec = &ctx->records[i];
        if (rec->request != COMM_NONE16) {
            request_complete(ctx, rec->request, error, out);
        }
        if (rec->self_send != COMM_NONE16) {
            request_complete(ctx, rec->self_send, error, out);
        }
    }
    for (uint16_t i = ctx->posted_head; i != COMM_NONE16;) {
        uint16_t next = ctx->requests[i].next;
        request_complete(ctx, i, error, out);
        i = next;
    }
    match_init(ctx);
}

void match_tick(struct comm *ctx, uint64_t now_ns, struct comm_outbox *out)
{
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        struct comm_record *rec = &ctx->records[i];
        if (rec->state != RECORD_WAITING || !rec->granted || now_ns < rec->grant_due_ns) {
            continue;
        }
        if (rec->grant_tries < UINT8_MAX) {
            rec->grant_tries++;
        }
        rec->grant_due_ns = now_ns + peer_rto(ctx, rec->grant_tries);
        peer_send_grant(ctx, rec->peer, rec->node, rec->seq, out);
    }
}

uint64_t match_deadline(const struct comm *ctx)
{
    uint64_t next = COMM_NEVER;
    for (uint16_t i = ctx->record_head; i != COMM_NONE16; i = ctx->records[i].next) {
        const struct comm_record *rec = &ctx->records[i];
        if (rec->state == RECORD_WAITING && rec->granted && rec->grant_due_ns < next) {
            next = rec->grant_due_ns;
        }
    }
    return next;
}
