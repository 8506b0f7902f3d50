/*
 * The application API (node/tori.h) over the comm core, and the job's
 * life on the node: started after `start` once the initial view is
 * installed, run outside the poll loop (kernel_services_run), reported as
 * app-start, app-progress, app-result, app-error, app-rebuild and starved
 * events.
 */
#include "node/tori.h"

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/main.h"
#include "kernel/poll.h"
#include "lib/crc32.h"
#include "lib/format.h"
#include "lib/le.h"
#include "node/node.h"

_Static_assert(TORI_OK == COMM_ERR_OK, "tori errors are comm errors");
_Static_assert(TORI_COMM_WORLD == COMM_WORLD && TORI_COMM_NULL == COMM_NULL,
               "tori handles are comm handles");
_Static_assert(TORI_ANY_SOURCE == COMM_ANY_SOURCE && TORI_ANY_TAG == COMM_ANY_TAG &&
                   TORI_UNDEFINED == COMM_UNDEFINED && TORI_REQUEST_NULL == COMM_REQUEST_NULL,
               "tori wildcards are comm wildcards");
_Static_assert((int)TORI_INT64 == (int)COMM_INT64 && (int)TORI_DOUBLE == (int)COMM_DOUBLE &&
                   (int)TORI_SUM == (int)COMM_SUM && (int)TORI_MIN == (int)COMM_MIN &&
                   (int)TORI_MAX == (int)COMM_MAX,
               "tori types and operations are comm's");
_Static_assert(TORI_APP_ARGS == JOB_APP_ARGS, "one argument per job argument");
_Static_assert(TORI_ERR_PROC_FAILED == COMM_ERR_PROC_FAILED && TORI_ERR_REVOKED == COMM_ERR_REVOKED &&
                   TORI_ERR_INVALID_RANK == COMM_ERR_INVALID_RANK &&
                   TORI_ERR_UNSUPPORTED == COMM_ERR_UNSUPPORTED &&
                   TORI_ERR_ABORTED >= COMM_ERROR_COUNT,
               "tori failure errors are comm errors; ABORTED is the node's own");
_Static_assert(TORI_ERR_NO_CHECKPOINT > TORI_ERR_ABORTED && TORI_ERR_CHECKPOINT > TORI_ERR_ABORTED,
               "the checkpoint errors are the node's own");
_Static_assert(NODE_JOB_TAG_BASE > TORI_TAG_MAX && NODE_JOB_TAG_BASE + 16u <= COMM_TAG_MAX,
               "the runtime's tags lie above the application's");
_Static_assert((int)TORI_MODE_ABORT == (int)COMM_MODE_ABORT &&
                   (int)TORI_MODE_BLANK == (int)COMM_MODE_BLANK &&
                   (int)TORI_MODE_SHRINK == (int)COMM_MODE_SHRINK &&
                   (int)TORI_MODE_REBUILD == (int)COMM_MODE_REBUILD &&
                   (int)TORI_MSG_NOP == (int)COMM_MSG_NOP && (int)TORI_MSG_CONT == (int)COMM_MSG_CONT &&
                   (int)COMM_MODE_REBUILD == (int)JOB_COMM_REBUILD &&
                   (int)COMM_MSG_CONT == (int)JOB_MESSAGE_CONT,
               "tori modes are comm modes are job modes");
_Static_assert((int)TORI_STATE_DETECTED == (int)COMM_STATE_DETECTED &&
                   (int)TORI_STATE_FAILED == (int)COMM_STATE_FAILED,
               "tori communicator states are comm's");
_Static_assert(TORI_MAX_DIMS >= CONFIG_MAX_DIMS, "the torus shape holds every dimension");

enum job_state { JOB_NONE = 0, JOB_WAITING, JOB_READY, JOB_RUNNING, JOB_DONE };

/* Collectives counted per communicator (CONFIG_COMM_MAX_COMMS, plus the
 * runtime's own of all nodes): every rank of a communicator calls them in
 * the same order, so the count names one collective on every rank. */
#define COLLECTIVE_COUNTERS (CONFIG_COMM_MAX_COMMS + 1)
struct collective_counter {
    tori_comm comm; /* TORI_COMM_NULL: unused */
    uint32_t count; /* collectives called on comm so far */
};

/* The job on this node (static: one node per image). */
static struct {
    struct node *node;
    const struct job *job;
    enum job_state state;
    struct tori_args args;
    uint64_t started_ns;
    uint64_t last_ran_ns;  /* the runtime last ran (inside a call) */
    uint64_t starve_ns;    /* half the detector timeout */
    bool aborted;          /* an ABORT communicator failed: every call refused */
    bool requests_dropped; /* after the abort: the core holds no request of the job */
    tori_error_handler handler;
    bool in_handler;       /* a handler's own calls never call it again */
    bool failure_pending;  /* a failure the handler has not been told */
    tori_comm failed_comm;
    int failed_error;
    tori_comm call_comm;   /* the communicator of the call under way */
    const char *call;      /* the application's call under way (the runtime runs only
                              inside one), for the comm line of a failure */
    uint32_t collective;   /* that call's number among comm's collectives; 0: none */
    struct collective_counter counters[COLLECTIVE_COUNTERS];
    unsigned counter_next; /* the slot a new communicator takes when all are used */
    uint32_t adopted_rank; /* a spare's rank after its adoption, else COMM_RANK_NONE */
    uint64_t spares_until_ns; /* REBUILD: how long a rank waits for the spares to join */
    bool app_killed;       /* `appkill`: the application stops dead at its next call */
} job;

/*
 * A killed application (a process fault) never runs again: its call does
 * not return, and the runtime serves on (probes, views, routing) until the
 * launcher restarts the node.
 */
static void stop_dead_if_killed(void)
{
    if (!job.app_killed)
        return;
    for (;;)
        poll_run();
}

static bool is_failure(int error)
{
    return error == TORI_ERR_PROC_FAILED || error == TORI_ERR_REVOKED ||
           error == TORI_ERR_INVALID_RANK;
}

/* The application's handler, from inside its own call. */
static void deliver_failure(void)
{
    if (!job.failure_pending || job.handler == NULL || job.in_handler ||
        job.state != JOB_RUNNING)
        return;
    job.failure_pending = false;
    job.in_handler = true;
    /* cert: indirect call, targets are the handlers given to tori_set_error_handler */
    job.handler(job.failed_comm, job.failed_error);
    job.in_handler = false;
}

static void note_failure(tori_comm comm, int error)
{
    job.failure_pending = true;
    job.failed_comm = comm;
    job.failed_error = error;
}

/* ---- the runtime inside calls ---- */

/* On entry to every call: a gap longer than half the detector's timeout
 * since the runtime last ran is named, so that an expulsion it causes is
 * never mistaken for a crash. */
static void enter(const char *call)
{
    stop_dead_if_killed();
    uint64_t now = board_now_ns();
    if (job.state == JOB_RUNNING && now - job.last_ran_ns > job.starve_ns) {
        event_begin("starved");
        event_add_u64("gap_ns", now - job.last_ran_ns);
        event_add_str("call", call);
        event_end();
    }
    deliver_failure();
    /* after the handler: its own calls were calls of their own */
    job.call = call;
    job.collective = 0;
}

/* enter() for a call on comm: a failure it returns names comm. */
static void enter_on(const char *call, tori_comm comm)
{
    job.call_comm = comm;
    enter(call);
}

/* comm's collectives so far, this one counted. */
static uint32_t count_collective(tori_comm comm)
{
    struct collective_counter *slot = NULL;
    for (unsigned i = 0; i < COLLECTIVE_COUNTERS && slot == NULL; i++)
        if (job.counters[i].comm == comm)
            slot = &job.counters[i];
    for (unsigned i = 0; i < COLLECTIVE_COUNTERS && slot == NULL; i++)
        if (job.counters[i].comm == TORI_COMM_NULL)
            slot = &job.counters[i];
    if (slot == NULL) { /* every slot used (communicators freed since): in turn */
        slot = &job.counters[job.counter_next];
        job.counter_next = (job.counter_next + 1u) % COLLECTIVE_COUNTERS;
    }
    if (slot->comm != comm) {
        slot->comm = comm;
        slot->count = 0;
    }
    return ++slot->count;
}

/* enter_on() for a collective: its number on comm goes into its app-error
 * and into the comm line of a failure that reaches it. */
static void enter_collective(const char *call, tori_comm comm)
{
    enter_on(call, comm);
    job.collective = count_collective(comm);
}

static void ran(void)
{
    job.last_ran_ns = board_now_ns();
}

static void run_once(void)
{
    poll_pass();
    stop_dead_if_killed();
    ran();
}

static void flush(uint64_t now_ns);

/*
 * Once the job aborted, the application unwinds and its buffers die with
 * it: the requests it leaves pending must never be written again (frames
 * of the aborted collectives still arrive; on QEMU one corrupted the
 * stack).  The core forgets them as when this node loses its view, and
 * follows the view again at its next poll.  Called from the application's
 * call (never from the flush that reported the abort).
 */
static void drop_requests(void)
{
    if (job.requests_dropped)
        return;
    job.requests_dropped = true;
    uint64_t now = board_now_ns();
    comm_drop_view(&job.node->comm, membership_incarnation(&job.node->membership), now,
                   &job.node->comm_outbox);
    flush(now);
}

static int result(const char *call, int error)
{
    if (error == TORI_ERR_ABORTED)
        drop_requests();
    if (error != TORI_OK) {
        event_begin("app-error");
        event_add_str("call", call);
        if (job.collective != 0)
            event_add_u64("collective", job.collective); /* which one, on call_comm */
        event_add_text("error", tori_error_text(error));
        event_end();
    }
    ran();
    if (is_failure(error)) {
        note_failure(job.call_comm, error);
        deliver_failure();
    }
    return error;
}

/* After the job was aborted every communication call is refused. */
#define REFUSE_IF_ABORTED(call)                                                          \
    do {                                                                                 \
        if (job.aborted)                                                                 \
            return result(call, TORI_ERR_ABORTED);                                       \
    } while (0)

static struct comm *core(void)
{
    return &job.node->comm;
}

/* After a call into the core: its frames go out at once. */
static void flush(uint64_t now_ns)
{
    node_comm_flush(job.node, now_ns);
}

/* Runs the node until the request is done; a standby spare (mirroring)
 * also takes the checkpoints it mirrors after each pass. */
static int wait_for_mirroring(const char *call, uint32_t request, struct comm_status *status,
                              bool mirroring)
{
    bool done = false;
    while (!job.aborted && !(done = comm_test(core(), request, status))) {
        run_once();
        if (mirroring)
            node_checkpoint_mirror_poll();
    }
    if (job.aborted) {
        if (!done)
            status->error = (uint8_t)COMM_ERR_PROC_FAILED; /* the request is abandoned */
        return result(call, TORI_ERR_ABORTED);
    }
    return result(call, (int)status->error);
}

static int wait_for(const char *call, uint32_t request, struct comm_status *status)
{
    return wait_for_mirroring(call, request, status, false);
}

/*
 * Starting a collective (or agree, dup, split, shrink, rebuild).  The core
 * refuses a start with BUSY when its CONFIG_COMM_MAX_COLLECTIVES slots are
 * held, or a creation (dup, split, rebuild) is still draining: right
 * after a recovery, background rounds (a kept decision served, an
 * abstention, a stopped round draining) may hold both slots, and a
 * completed creation keeps its own until its last sends are acknowledged.
 * All of it ends without the application (comm/DESIGN.md, "Strict
 * collectives"), so such a start is made again after each pass of the
 * node until it is accepted, refused otherwise (the view lost: NO_VIEW),
 * or the job aborts.  A BUSY the application caused itself (its request
 * table full of its own requests, which nothing frees while it waits) is
 * returned at once, as before; and the retries stop after BUSY_GRACE
 * detector timeouts, so that a slot held for good (a bug, not a design
 * case) fails the call instead of hanging the job.
 */
#define BUSY_GRACE 30u

enum start_kind {
    START_BARRIER,
    START_BCAST,
    START_REDUCE,
    START_ALLREDUCE,
    START_GATHER,
    START_ALLGATHER,
    START_AGREE,
    START_DUP,
    START_SPLIT,
    START_SHRINK,
    START_REBUILD,
};

/* One start's arguments (the fields its kind uses). */
struct start {
    enum start_kind kind;
    tori_comm comm;
    uint32_t root;     /* bcast, reduce, gather */
    const void *send;  /* reduce, allreduce, gather, allgather */
    void *recv;        /* those, and bcast's buffer */
    uint32_t count;    /* reduce, allreduce: elements; bcast: bytes; gathers: block */
    enum comm_type type;
    enum comm_op op;
    int32_t color;     /* split */
    int32_t key;
    uint32_t *flag;    /* agree */
    uint32_t *made;    /* shrink, rebuild */
};

static enum comm_error start_once(const struct start *s, uint64_t now, uint32_t *request)
{
    struct comm *ctx = core();
    struct comm_outbox *out = &job.node->comm_outbox;
    switch (s->kind) {
    case START_BARRIER:
        return comm_ibarrier(ctx, s->comm, now, out, request);
    case START_BCAST:
        return comm_ibcast(ctx, s->comm, s->root, s->recv, s->count, now, out, request);
    case START_REDUCE:
        return comm_ireduce(ctx, s->comm, s->root, s->send, s->recv, s->count, s->type, s->op,
                            now, out, request);
    case START_ALLREDUCE:
        return comm_iallreduce(ctx, s->comm, s->send, s->recv, s->count, s->type, s->op, now,
                               out, request);
    case START_GATHER:
        return comm_igather(ctx, s->comm, s->root, s->send, s->count, s->recv, now, out,
                            request);
    case START_ALLGATHER:
        return comm_iallgather(ctx, s->comm, s->send, s->count, s->recv, now, out, request);
    case START_AGREE:
        return comm_iagree(ctx, s->comm, s->flag, now, out, request);
    case START_DUP:
        return comm_idup(ctx, s->comm, now, out, request);
    case START_SPLIT:
        return comm_isplit(ctx, s->comm, s->color, s->key, now, out, request);
    case START_SHRINK:
        return comm_ishrink(ctx, s->comm, now, out, s->made, request);
    case START_REBUILD:
        return comm_irebuild(ctx, s->comm, now, out, s->made, request);
    default:
        return COMM_ERR_ARG;
    }
}

/* The start, made again while it is refused BUSY and that can clear (see
 * above); TORI_ERR_ABORTED when the job aborted meanwhile. */
static int start(const struct start *s, uint32_t *request)
{
    uint64_t now = board_now_ns();
    uint64_t until =
        now + BUSY_GRACE * (uint64_t)job.node->personality->detect_timeout_ms * 1000000u;
    enum comm_error error = start_once(s, now, request);
    flush(now);
    while (error == COMM_ERR_BUSY && !job.aborted && comm_busy_clears(core()) && now < until) {
        run_once();
        if (job.aborted)
            break;
        now = board_now_ns();
        error = start_once(s, now, request);
        flush(now);
    }
    return job.aborted && error != COMM_ERR_OK ? TORI_ERR_ABORTED : (int)error;
}

void tori_progress(void)
{
    enter("tori_progress");
    run_once();
}

void tori_iteration_done(uint32_t done)
{
    enter("tori_iteration_done");
    run_once();
    uint32_t interval = job.job != NULL ? job.job->progress_interval : 0;
    if (interval != 0 && done % interval == 0) {
        event_begin("app-progress");
        event_add_u64("iteration", done);
        event_end();
    }
}

uint64_t tori_now_ns(void)
{
    return board_now_ns();
}

uint64_t tori_view_epoch(void)
{
    return comm_has_view(core()) ? comm_view_epoch(core()) : 0;
}

const char *tori_error_text(int error)
{
    if (error == TORI_ERR_ABORTED)
        return "the job was aborted (a communicator in abort mode lost a rank)";
    if (error == TORI_ERR_NO_CHECKPOINT)
        return "no checkpoint to resume from (none taken, or every copy of one lost)";
    if (error == TORI_ERR_CHECKPOINT)
        return "the checkpoint failed (a copy did not verify, or no state is registered)";
    if (error == TORI_ERR_FREE_WORLD)
        return "TORI_COMM_WORLD is never freed";
    if (error == TORI_ERR_FREE_PENDING)
        return "requests on the communicator are still pending: wait for them first";
    return comm_error_text((enum comm_error)error);
}

void tori_report(const char *name, const char *const *keys, const int64_t *values,
                 unsigned count)
{
    event_begin(name);
    for (unsigned i = 0; i < count; i++)
        event_add_i64(keys[i], values[i]);
    event_end();
}

void tori_torus_shape(struct tori_torus *out)
{
    const struct personality *p = job.node->personality;
    out->dims = p->dims;
    for (unsigned d = 0; d < TORI_MAX_DIMS; d++) {
        out->size[d] = d < p->dims ? p->dim_size[d] : 1;
        out->coord[d] = d < p->dims ? p->coord[d] : 0;
    }
}

/* ---- communicators ---- */

int tori_rank(tori_comm comm, uint32_t *rank)
{
    enter("tori_rank");
    *rank = comm_rank(core(), comm);
    if (comm_size(core(), comm) == 0)
        return result("tori_rank", COMM_ERR_COMM);
    return result("tori_rank", *rank == COMM_RANK_NONE ? COMM_ERR_NOT_MEMBER : COMM_ERR_OK);
}

int tori_size(tori_comm comm, uint32_t *size)
{
    enter("tori_size");
    *size = comm_size(core(), comm);
    return result("tori_size", *size == 0 ? COMM_ERR_COMM : COMM_ERR_OK);
}

int tori_comm_dup(tori_comm comm, tori_comm *out)
{
    enter_on("tori_comm_dup", comm);
    REFUSE_IF_ABORTED("tori_comm_dup");
    uint32_t request = COMM_REQUEST_NULL;
    struct comm_status status;
    const struct start s = {.kind = START_DUP, .comm = comm};
    int error = start(&s, &request);
    *out = TORI_COMM_NULL;
    if (error != TORI_OK)
        return result("tori_comm_dup", error);
    int done = wait_for("tori_comm_dup", request, &status);
    *out = status.comm;
    return done;
}

int tori_comm_split(tori_comm comm, int32_t color, int32_t key, tori_comm *out)
{
    enter_on("tori_comm_split", comm);
    REFUSE_IF_ABORTED("tori_comm_split");
    uint32_t request = COMM_REQUEST_NULL;
    struct comm_status status;
    const struct start s = {.kind = START_SPLIT, .comm = comm, .color = color, .key = key};
    int error = start(&s, &request);
    *out = TORI_COMM_NULL;
    if (error != TORI_OK)
        return result("tori_comm_split", error);
    int done = wait_for("tori_comm_split", request, &status);
    *out = status.comm;
    return done;
}

int tori_comm_free(tori_comm *comm)
{
    enter_on("tori_comm_free", *comm);
    REFUSE_IF_ABORTED("tori_comm_free");
    if (*comm == TORI_COMM_WORLD)
        return result("tori_comm_free", TORI_ERR_FREE_WORLD);
    enum comm_error error = comm_free(core(), *comm);
    if (error == COMM_ERR_BUSY)
        return result("tori_comm_free", TORI_ERR_FREE_PENDING);
    if (error == COMM_ERR_ARG)
        error = COMM_ERR_COMM; /* NODES: not the application's */
    if (error != COMM_ERR_OK)
        return result("tori_comm_free", error);
    /* its collective counter is free for another communicator */
    for (unsigned i = 0; i < COLLECTIVE_COUNTERS; i++)
        if (job.counters[i].comm == *comm)
            job.counters[i].comm = TORI_COMM_NULL;
    *comm = TORI_COMM_NULL;
    return result("tori_comm_free", TORI_OK);
}

/* ---- point-to-point ---- */

int tori_isend(tori_comm comm, uint32_t dest, int32_t tag, const void *buffer,
               uint32_t length, tori_request *request)
{
    enter_on("tori_isend", comm);
    REFUSE_IF_ABORTED("tori_isend");
    if (tag > TORI_TAG_MAX)
        return result("tori_isend", COMM_ERR_TAG); /* above: the runtime's own */
    uint64_t now = board_now_ns();
    enum comm_error error = comm_isend(core(), comm, dest, tag, buffer, length, now,
                                       &job.node->comm_outbox, request);
    flush(now);
    return result("tori_isend", error);
}

int tori_irecv(tori_comm comm, uint32_t source, int32_t tag, void *buffer, uint32_t capacity,
               tori_request *request)
{
    enter_on("tori_irecv", comm);
    REFUSE_IF_ABORTED("tori_irecv");
    if (tag > TORI_TAG_MAX)
        return result("tori_irecv", COMM_ERR_TAG);
    uint64_t now = board_now_ns();
    enum comm_error error = comm_irecv(core(), comm, source, tag, buffer, capacity, now,
                                       &job.node->comm_outbox, request);
    flush(now);
    return result("tori_irecv", error);
}

static void fill_status(const struct comm_status *from, struct tori_status *to)
{
    if (to == NULL)
        return;
    to->error = (int)from->error;
    to->source = from->source;
    to->tag = from->tag;
    to->count = from->count;
}

int tori_test(tori_request *request, bool *done, struct tori_status *status)
{
    enter("tori_test");
    REFUSE_IF_ABORTED("tori_test");
    run_once();
    struct comm_status got;
    *done = comm_test(core(), *request, &got);
    if (!*done)
        return TORI_OK;
    *request = TORI_REQUEST_NULL;
    fill_status(&got, status);
    return result("tori_test", (int)got.error);
}

int tori_wait(tori_request *request, struct tori_status *status)
{
    enter("tori_wait");
    REFUSE_IF_ABORTED("tori_wait");
    struct comm_status got;
    int error = wait_for("tori_wait", *request, &got);
    *request = TORI_REQUEST_NULL;
    fill_status(&got, status);
    return error;
}

int tori_send(tori_comm comm, uint32_t dest, int32_t tag, const void *buffer, uint32_t length)
{
    tori_request request = TORI_REQUEST_NULL;
    int error = tori_isend(comm, dest, tag, buffer, length, &request);
    return error != TORI_OK ? error : tori_wait(&request, NULL);
}

int tori_recv(tori_comm comm, uint32_t source, int32_t tag, void *buffer, uint32_t capacity,
              struct tori_status *status)
{
    tori_request request = TORI_REQUEST_NULL;
    int error = tori_irecv(comm, source, tag, buffer, capacity, &request);
    return error != TORI_OK ? error : tori_wait(&request, status);
}

/* ---- the runtime's own traffic on a job's communicator (node/node.h) ---- */

int node_job_isend(tori_comm comm, uint32_t dest, uint32_t kind, const void *buffer,
                   uint32_t length, tori_request *request)
{
    enter_on("tori_isend", comm);
    REFUSE_IF_ABORTED("tori_isend");
    uint64_t now = board_now_ns();
    enum comm_error error = comm_isend(core(), comm, dest, (int32_t)(NODE_JOB_TAG_BASE + kind),
                                       buffer, length, now, &job.node->comm_outbox, request);
    flush(now);
    return result("tori_isend", error);
}

int node_job_irecv(tori_comm comm, uint32_t source, uint32_t kind, void *buffer,
                   uint32_t capacity, tori_request *request)
{
    enter_on("tori_irecv", comm);
    REFUSE_IF_ABORTED("tori_irecv");
    uint64_t now = board_now_ns();
    enum comm_error error =
        comm_irecv(core(), comm, source, (int32_t)(NODE_JOB_TAG_BASE + kind), buffer, capacity,
                   now, &job.node->comm_outbox, request);
    flush(now);
    return result("tori_irecv", error);
}

uint32_t node_job_rank_node(tori_comm comm, uint32_t rank)
{
    return comm_node_of(core(), comm, rank);
}

bool node_job_has_node(tori_comm comm, uint32_t node)
{
    uint32_t size = comm_size(core(), comm);
    for (uint32_t r = 0; r < size; r++)
        if (comm_node_of(core(), comm, r) == node)
            return true;
    return false;
}

int node_mirror_isend(uint32_t node, uint32_t kind, const void *buffer, uint32_t length,
                      uint32_t *request)
{
    uint64_t now = board_now_ns();
    enum comm_error error =
        comm_isend(core(), comm_nodes(core()), node, (int32_t)(NODE_JOB_TAG_BASE + kind), buffer,
                   length, now, &job.node->comm_outbox, request);
    flush(now);
    return (int)error;
}

int node_mirror_irecv(uint32_t kind, void *buffer, uint32_t capacity, uint32_t *request)
{
    uint64_t now = board_now_ns();
    uint32_t nodes = comm_nodes(core());
    enum comm_error error = comm_irecv(core(), nodes, COMM_ANY_SOURCE,
                                       (int32_t)(NODE_JOB_TAG_BASE + kind), buffer, capacity,
                                       now, &job.node->comm_outbox, request);
    if (error == COMM_ERR_PROC_FAILED) {
        /* ULFM: a receive from anyone waits for the failures' ack */
        comm_failure_ack(core(), nodes);
        error = comm_irecv(core(), nodes, COMM_ANY_SOURCE, (int32_t)(NODE_JOB_TAG_BASE + kind),
                           buffer, capacity, now, &job.node->comm_outbox, request);
    }
    flush(now);
    return (int)error;
}

bool node_mirror_test(uint32_t request, uint32_t *source, uint32_t *count, int *error)
{
    struct comm_status status;
    if (!comm_test(core(), request, &status))
        return false;
    *source = status.source;
    *count = status.count;
    *error = (int)status.error;
    return true;
}

void node_mirror_shape(uint32_t *self, uint32_t *ranks)
{
    *self = job.node->personality->node_id;
    *ranks = comm_size(core(), COMM_WORLD);
}

void node_mirror_wait(uint32_t request)
{
    struct comm_status status;
    while (!job.aborted && !comm_test(core(), request, &status))
        run_once();
}

struct node *node_job_node(void)
{
    return job.node;
}

const struct job *node_job_block(void)
{
    return job.job;
}

const struct torus_geometry *node_job_geometry(void)
{
    return &job.node->network.geometry;
}

/* ---- collectives: started, then waited for ---- */

/* A collective started (again while BUSY clears), then waited for. */
static int run_collective(const char *call, const struct start *s)
{
    uint32_t request = COMM_REQUEST_NULL;
    int error = start(s, &request);
    if (error != TORI_OK)
        return result(call, error);
    struct comm_status status;
    return wait_for(call, request, &status);
}

int tori_barrier(tori_comm comm)
{
    enter_collective("tori_barrier", comm);
    REFUSE_IF_ABORTED("tori_barrier");
    const struct start s = {.kind = START_BARRIER, .comm = comm};
    return run_collective("tori_barrier", &s);
}

int tori_bcast(tori_comm comm, uint32_t root, void *buffer, uint32_t length)
{
    enter_collective("tori_bcast", comm);
    REFUSE_IF_ABORTED("tori_bcast");
    const struct start s = {
        .kind = START_BCAST, .comm = comm, .root = root, .recv = buffer, .count = length};
    return run_collective("tori_bcast", &s);
}

int tori_reduce(tori_comm comm, uint32_t root, const void *send, void *recv, uint32_t count,
                enum tori_type type, enum tori_op op)
{
    enter_collective("tori_reduce", comm);
    REFUSE_IF_ABORTED("tori_reduce");
    const struct start s = {.kind = START_REDUCE,
                            .comm = comm,
                            .root = root,
                            .send = send,
                            .recv = recv,
                            .count = count,
                            .type = (enum comm_type)type,
                            .op = (enum comm_op)op};
    return run_collective("tori_reduce", &s);
}

int tori_allreduce(tori_comm comm, const void *send, void *recv, uint32_t count,
                   enum tori_type type, enum tori_op op)
{
    enter_collective("tori_allreduce", comm);
    REFUSE_IF_ABORTED("tori_allreduce");
    const struct start s = {.kind = START_ALLREDUCE,
                            .comm = comm,
                            .send = send,
                            .recv = recv,
                            .count = count,
                            .type = (enum comm_type)type,
                            .op = (enum comm_op)op};
    return run_collective("tori_allreduce", &s);
}

int tori_gather(tori_comm comm, uint32_t root, const void *send, uint32_t block, void *recv)
{
    enter_collective("tori_gather", comm);
    REFUSE_IF_ABORTED("tori_gather");
    const struct start s = {
        .kind = START_GATHER, .comm = comm, .root = root, .send = send, .recv = recv, .count = block};
    return run_collective("tori_gather", &s);
}

int tori_allgather(tori_comm comm, const void *send, uint32_t block, void *recv)
{
    enter_collective("tori_allgather", comm);
    REFUSE_IF_ABORTED("tori_allgather");
    const struct start s = {
        .kind = START_ALLGATHER, .comm = comm, .send = send, .recv = recv, .count = block};
    return run_collective("tori_allgather", &s);
}

/* ---- failures ---- */

/* `comm`: a communicator as this rank sees it (handle, epoch, size, rank
 * and the CRC-32 of its node ids in rank order), so that the launcher can
 * check that every live rank holds one rank map per communicator epoch. */
static void report_comm(tori_comm comm, const char *call)
{
    uint32_t rank = comm_rank(core(), comm);
    uint32_t size = comm_size(core(), comm);
    if (size == 0 || rank == COMM_RANK_NONE)
        return;
    uint32_t digest = 0;
    for (uint32_t r = 0; r < size; r++) {
        uint8_t id[4];
        le_put_u32(id, comm_node_of(core(), comm, r));
        digest = crc32_update(digest, id, sizeof id);
    }
    event_begin("comm");
    event_add_hex("comm", comm);
    event_add_u64("epoch", comm_epoch_of(core(), comm));
    event_add_u64("size", size);
    event_add_u64("rank", rank);
    event_add_hex("digest", digest);
    static const char *const state_names[] = {"ok", "detected", "recovered", "failed"};
    enum comm_state state = comm_state_of(core(), comm);
    event_add_str("state", (unsigned)state <= COMM_STATE_FAILED ? state_names[state] : "?");
    if (call != NULL) {
        /* where the failure reached the application: the launcher checks
         * that a strict collective's ranks all learnt it inside it */
        event_add_str("call", call);
        if (job.collective != 0)
            event_add_u64("collective", job.collective);
    }
    event_end();
}

/* "3,5" (at most FAILED_LISTED ranks, then "...") into text. */
#define FAILED_LISTED 16
static void list_failed(tori_comm comm, char *text, unsigned capacity, uint64_t *epoch)
{
    uint32_t ranks[FAILED_LISTED];
    uint32_t count = 0;
    if (comm_failed_ranks(core(), comm, ranks, FAILED_LISTED, &count, epoch) != COMM_ERR_OK) {
        count = 0; /* a communicator that is gone: nothing to name */
        *epoch = comm_view_epoch(core());
    }
    unsigned used = 0;
    text[0] = '\0';
    for (uint32_t i = 0; i < count && i < FAILED_LISTED && used + 22 < capacity; i++) {
        if (i > 0)
            text[used++] = ',';
        used += format_u64(text + used, ranks[i]);
        text[used] = '\0';
    }
    if (count > FAILED_LISTED && used + 5 < capacity) {
        for (unsigned i = 0; i < 4; i++)
            text[used++] = ",..."[i];
        text[used] = '\0';
    }
    if (used == 0 && capacity > 1)
        text[0] = '-', text[1] = '\0';
}

void node_job_comm_failed(tori_comm comm, bool abort)
{
    if (job.state != JOB_RUNNING || job.aborted)
        return;
    if (!abort) { /* DETECTED: an ABORT event follows it when comm's mode says so */
        report_comm(comm, job.call != NULL ? job.call : "(none)");
        note_failure(comm, TORI_ERR_PROC_FAILED);
        return;
    }
    job.aborted = true;
    char failed[FAILED_LISTED * 11 + 24];
    uint64_t epoch = 0;
    list_failed(comm, failed, sizeof failed, &epoch);
    event_begin("app-abort");
    event_add_hex("comm", comm);
    event_add_u64("epoch", epoch);
    event_add_str("failed", failed);
    event_end();
}

int tori_comm_set_mode(tori_comm comm, enum tori_comm_mode mode, enum tori_msg_mode msg_mode)
{
    enter_on("tori_comm_set_mode", comm);
    enum comm_error error =
        comm_set_mode(core(), comm, (enum comm_mode)mode, (enum comm_msg_mode)msg_mode);
    return result("tori_comm_set_mode", error);
}

enum tori_comm_state tori_comm_state(tori_comm comm)
{
    enter_on("tori_comm_state", comm);
    ran();
    return (enum tori_comm_state)comm_state_of(core(), comm);
}

/* A rebuild or a shrink: started, waited for, and the new map reported. */
/*
 * Before a REBUILD: a failed rank whose node the root decided to restart
 * is held for it, up to RESTART_GRACE detector timeouts, so that the rank
 * returns to its own node (and its own checkpoint) rather than to a spare
 * or a gap.  Every member waits alike; the decision is the rebuild's.
 */
#define RESTART_GRACE 30u
static void await_restarts(tori_comm comm)
{
    if (job.job == NULL || job.job->comm_mode != JOB_COMM_REBUILD)
        return; /* the communicators' mode is the job's */
    uint64_t detect_ns = (uint64_t)job.node->personality->detect_timeout_ms * 1000000u;
    uint64_t until = board_now_ns() + RESTART_GRACE * detect_ns;
    bool waited = false;
    while (!job.aborted && comm_restart_awaited(core(), comm, true) && board_now_ns() < until) {
        waited = true;
        run_once();
    }
    /* Back in the view: the node installs it a moment after us, and its
     * application must be waiting to adopt before the rebuild's adoption
     * message is of use: give it two detector timeouts. */
    uint64_t settle = board_now_ns() + 2u * detect_ns;
    while (waited && !job.aborted && board_now_ns() < settle)
        run_once();
}

static int remake(const char *call, tori_comm comm, bool shrink, tori_comm *out)
{
    enter_on(call, comm);
    REFUSE_IF_ABORTED(call);
    /* The recovery begins here: the fault injectors time "at recovery" by
     * it (tools/fault.h), ./tori bench recovery may too. */
    event_begin("app-rebuild");
    event_add_str("call", call);
    event_add_hex("comm", comm);
    event_add_u64("epoch", comm_epoch_of(core(), comm));
    event_end();
    if (!shrink)
        await_restarts(comm);
    uint32_t request = COMM_REQUEST_NULL;
    uint32_t made = COMM_NULL;
    const struct start s = {
        .kind = shrink ? START_SHRINK : START_REBUILD, .comm = comm, .made = &made};
    int error = start(&s, &request);
    *out = TORI_COMM_NULL;
    if (error != TORI_OK)
        return result(call, error);
    struct comm_status status;
    int done = wait_for(call, request, &status);
    if (done == TORI_OK) {
        *out = made;
        report_comm(made, NULL);
    }
    return done;
}

int tori_comm_rebuild(tori_comm comm, tori_comm *out)
{
    return remake("tori_comm_rebuild", comm, false, out);
}

int tori_comm_shrink(tori_comm comm, tori_comm *out)
{
    return remake("tori_comm_shrink", comm, true, out);
}

int tori_comm_revoke(tori_comm comm)
{
    enter_on("tori_comm_revoke", comm);
    REFUSE_IF_ABORTED("tori_comm_revoke");
    uint64_t now = board_now_ns();
    enum comm_error error = comm_revoke(core(), comm, now, &job.node->comm_outbox);
    flush(now);
    return result("tori_comm_revoke", error);
}

int tori_comm_agree(tori_comm comm, uint32_t *flag)
{
    enter_collective("tori_comm_agree", comm);
    REFUSE_IF_ABORTED("tori_comm_agree");
    const struct start s = {.kind = START_AGREE, .comm = comm, .flag = flag};
    return run_collective("tori_comm_agree", &s);
}

int tori_comm_failure_ack(tori_comm comm)
{
    enter_on("tori_comm_failure_ack", comm);
    return result("tori_comm_failure_ack", comm_failure_ack(core(), comm));
}

int tori_comm_failed_ranks(tori_comm comm, uint32_t *ranks, uint32_t max, uint32_t *count,
                           uint64_t *epoch)
{
    enter_on("tori_comm_failed_ranks", comm);
    return result("tori_comm_failed_ranks",
                  comm_failed_ranks(core(), comm, ranks, max, count, epoch));
}

void tori_set_error_handler(tori_error_handler handler)
{
    job.handler = handler;
}

int tori_adopted(struct tori_adoption *out)
{
    enter_on("tori_adopted", TORI_COMM_NULL);
    out->adopted = false;
    out->comm = TORI_COMM_NULL;
    out->rank = COMM_RANK_NONE;
    if (comm_rank(core(), COMM_WORLD) != COMM_RANK_NONE &&
        job.node->personality->boot_incarnation <= 1)
        return result("tori_adopted", TORI_OK); /* a WORLD rank in its first life */
    uint32_t made = COMM_NULL;
    for (;;) {
        /* A spare expelled while it waits (a false suspicion) rejoins as a
         * spare and waits again: a rebuild may still pair it with a gap. */
        while (!job.aborted && !comm_has_view(core()))
            run_once();
        REFUSE_IF_ABORTED("tori_adopted");
        uint64_t now = board_now_ns();
        uint32_t request = COMM_REQUEST_NULL;
        enum comm_error error = comm_iadopt(core(), now, &job.node->comm_outbox, &made, &request);
        flush(now);
        if (error == COMM_ERR_NO_VIEW)
            continue;
        if (error != COMM_ERR_OK)
            return result("tori_adopted", error);
        struct comm_status status;
        /* A standby spare mirrors the ranks' checkpoints while it waits. */
        int done = wait_for_mirroring("tori_adopted", request, &status,
                                      comm_nodes(core()) != COMM_NULL);
        if (done == TORI_OK)
            break;
        if (done != COMM_ERR_NO_VIEW)
            return done;
    }
    out->adopted = true;
    out->comm = made;
    out->rank = comm_rank(core(), made);
    job.adopted_rank = out->rank;
    event_begin("app-adopted");
    event_add_hex("comm", made);
    event_add_u64("rank", out->rank);
    event_add_u64("epoch", comm_epoch_of(core(), made));
    event_end();
    report_comm(made, NULL);
    return TORI_OK;
}

/* ---- the job's life ---- */

/*
 * Under REBUILD a WORLD rank starts once the spares joined too (or after a
 * grace of SPARES_GRACE detector timeouts, for a spare that never comes):
 * the spare's join is a view change, and one that lands while the first
 * collective's frames are in flight was seen to stall it for good.
 */
#define SPARES_GRACE 10u
static bool spares_joined(uint64_t now_ns)
{
    const struct personality *p = job.node->personality;
    if (job.job->comm_mode != JOB_COMM_REBUILD || personality_is_spare(p))
        return true;
    if (job.spares_until_ns == 0)
        job.spares_until_ns = now_ns + SPARES_GRACE * (uint64_t)p->detect_timeout_ms * 1000000u;
    return membership_live_count(&job.node->membership) >= personality_node_count(p) ||
           now_ns >= job.spares_until_ns;
}

/* Waits for `start` and the initial view (and under REBUILD the spares),
 * then stops the poll loop so that kernel_services_run starts the
 * application outside it. */
static unsigned job_poll(void *context, uint64_t now_ns)
{
    (void)context;
    if (job.state != JOB_WAITING || !node_membership_is_started() ||
        !comm_has_view(core()) || !spares_joined(now_ns))
        return 0;
    job.state = JOB_READY;
    poll_stop();
    return 1;
}

/* `appkill`: the fault injectors' process fault (tools/fault.h). */
static void command_appkill(void *context, const char *arguments, uint64_t now_ns)
{
    (void)context;
    (void)arguments;
    if (job.state != JOB_RUNNING || job.app_killed) {
        console_command_reply_error("appkill: no application running here");
        return;
    }
    job.app_killed = true;
    bool leaving = node_membership_request_removal(job.node, FAULT_MODEL_PROCESS, now_ns);
    event_begin("app-killed");
    event_add_str("leaving", leaving ? "true" : "false"); /* false: the only member */
    event_end();
}

void node_job_init(struct node *node)
{
    job.node = node;
    job.job = kernel_job();
    console_command_register("appkill", command_appkill, NULL, CONSOLE_NO_ARGUMENTS);
    const struct personality *p = node->personality;
    /* Spares and restarted nodes run nothing but under REBUILD, where their
     * application waits to adopt a failed rank (tori_adopted): a restarted
     * node its own, when it is back before the survivors rebuild (else its
     * ranks went on without it). */
    bool standby = personality_is_spare(p) || p->boot_incarnation > 1;
    if (job.job == NULL || (standby && job.job->comm_mode != JOB_COMM_REBUILD))
        return;
    job.state = JOB_WAITING;
    job.adopted_rank = COMM_RANK_NONE;
    job.args.iterations = job.job->iterations;
    for (unsigned i = 0; i < JOB_APP_ARGS; i++)
        job.args.arg[i] = job.job->app_arg[i];
    job.starve_ns = (uint64_t)p->detect_timeout_ms * 1000000u / 2;
    poll_register("job", job_poll, NULL);
}

const struct tori_args *node_job_begin(uint8_t *app)
{
    if (job.state != JOB_READY)
        return NULL;
    job.state = JOB_RUNNING;
    *app = job.job->app;
    job.started_ns = board_now_ns();
    job.last_ran_ns = job.started_ns;
    event_begin("app-start");
    event_add_str("app", job_app_name(job.job->app));
    uint32_t rank = comm_rank(core(), COMM_WORLD);
    event_add_i64("rank", rank == COMM_RANK_NONE ? -1 : (int64_t)rank); /* -1: a spare */
    event_add_u64("size", comm_size(core(), COMM_WORLD));
    event_add_u64("iterations", job.args.iterations);
    event_add_str("comm_mode", job_comm_mode_name(job.job->comm_mode));
    event_add_str("msg_mode", job_message_mode_name(job.job->message_mode));
    event_end();
    return &job.args;
}

void node_job_end(const struct tori_result *outcome)
{
    enter("(return)");
    job.state = JOB_DONE;
    if (job.aborted)
        return; /* its app-abort was the job's end */
    event_begin("app-result");
    event_add_str("app", job_app_name(job.job->app));
    event_add_str("ok", outcome->ok ? "true" : "false");
    event_add_hex("digest", outcome->digest);
    event_add_u64("iterations", outcome->iterations);
    bool adopted = job.adopted_rank != COMM_RANK_NONE;
    event_add_u64("rank", adopted ? job.adopted_rank : comm_rank(core(), COMM_WORLD));
    if (adopted)
        event_add_str("adopted", "true");
    event_add_u64("elapsed_ns", board_now_ns() - job.started_ns);
    event_end();
}

void node_job_missing(uint8_t app)
{
    job.state = JOB_DONE;
    event_begin("app-error");
    event_add_str("call", "start");
    event_add_str("app", job_app_name(app));
    event_add_text("error", "this image does not hold the application");
    event_end();
}
