/*
 * The application API (node/tori.h) over the comm core, and the job's
 * life on the node: started after `start` once the initial view is
 * installed, run outside the poll loop (kernel_services_run), reported as
 * app-start, app-progress, app-result, app-error and starved events.
 */
#include "node/tori.h"

#include "board/board.h"
#include "kernel/event.h"
#include "kernel/main.h"
#include "kernel/poll.h"
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
_Static_assert(TORI_MAX_DIMS >= CONFIG_MAX_DIMS, "the torus shape holds every dimension");

enum job_state { JOB_NONE = 0, JOB_WAITING, JOB_READY, JOB_RUNNING, JOB_DONE };

/* The job on this node (static: one node per image). */
static struct {
    struct node *node;
    const struct job *job;
    enum job_state state;
    struct tori_args args;
    uint64_t started_ns;
    uint64_t last_ran_ns;  /* the runtime last ran (inside a call) */
    uint64_t starve_ns;    /* half the detector timeout */
} job;

/* ---- the runtime inside calls ---- */

/* On entry to every call: a gap longer than half the detector's timeout
 * since the runtime last ran is named, so that an expulsion it causes is
 * never mistaken for a crash. */
static void enter(const char *call)
{
    uint64_t now = board_now_ns();
    if (job.state == JOB_RUNNING && now - job.last_ran_ns > job.starve_ns) {
        event_begin("starved");
        event_add_u64("gap_ns", now - job.last_ran_ns);
        event_add_str("call", call);
        event_end();
    }
}

static void ran(void)
{
    job.last_ran_ns = board_now_ns();
}

static void run_once(void)
{
    poll_pass();
    ran();
}

static int result(const char *call, int error)
{
    if (error != TORI_OK) {
        event_begin("app-error");
        event_add_str("call", call);
        event_add_text("error", comm_error_text((enum comm_error)error));
        event_end();
    }
    ran();
    return error;
}

static struct comm *core(void)
{
    return &job.node->comm;
}

/* After a call into the core: its frames go out at once. */
static void flush(uint64_t now_ns)
{
    node_comm_flush(job.node, now_ns);
}

static int wait_for(const char *call, uint32_t request, struct comm_status *status)
{
    while (!comm_test(core(), request, status))
        run_once();
    return result(call, (int)status->error);
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
    enter("tori_comm_dup");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    struct comm_status status;
    enum comm_error error = comm_idup(core(), comm, now, &job.node->comm_outbox, &request);
    flush(now);
    *out = TORI_COMM_NULL;
    if (error != COMM_ERR_OK)
        return result("tori_comm_dup", error);
    int done = wait_for("tori_comm_dup", request, &status);
    *out = status.comm;
    return done;
}

int tori_comm_split(tori_comm comm, int32_t color, int32_t key, tori_comm *out)
{
    enter("tori_comm_split");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    struct comm_status status;
    enum comm_error error =
        comm_isplit(core(), comm, color, key, now, &job.node->comm_outbox, &request);
    flush(now);
    *out = TORI_COMM_NULL;
    if (error != COMM_ERR_OK)
        return result("tori_comm_split", error);
    int done = wait_for("tori_comm_split", request, &status);
    *out = status.comm;
    return done;
}

/* ---- point-to-point ---- */

int tori_isend(tori_comm comm, uint32_t dest, int32_t tag, const void *buffer,
               uint32_t length, tori_request *request)
{
    enter("tori_isend");
    uint64_t now = board_now_ns();
    enum comm_error error = comm_isend(core(), comm, dest, tag, buffer, length, now,
                                       &job.node->comm_outbox, request);
    flush(now);
    return result("tori_isend", error);
}

int tori_irecv(tori_comm comm, uint32_t source, int32_t tag, void *buffer, uint32_t capacity,
               tori_request *request)
{
    enter("tori_irecv");
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

/* ---- collectives: started, then waited for ---- */

static int finish_collective(const char *call, enum comm_error error, uint32_t request,
                             uint64_t now)
{
    flush(now);
    if (error != COMM_ERR_OK)
        return result(call, error);
    struct comm_status status;
    return wait_for(call, request, &status);
}

int tori_barrier(tori_comm comm)
{
    enter("tori_barrier");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    enum comm_error error = comm_ibarrier(core(), comm, now, &job.node->comm_outbox, &request);
    return finish_collective("tori_barrier", error, request, now);
}

int tori_bcast(tori_comm comm, uint32_t root, void *buffer, uint32_t length)
{
    enter("tori_bcast");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    enum comm_error error =
        comm_ibcast(core(), comm, root, buffer, length, now, &job.node->comm_outbox, &request);
    return finish_collective("tori_bcast", error, request, now);
}

int tori_reduce(tori_comm comm, uint32_t root, const void *send, void *recv, uint32_t count,
                enum tori_type type, enum tori_op op)
{
    enter("tori_reduce");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    enum comm_error error =
        comm_ireduce(core(), comm, root, send, recv, count, (enum comm_type)type,
                     (enum comm_op)op, now, &job.node->comm_outbox, &request);
    return finish_collective("tori_reduce", error, request, now);
}

int tori_allreduce(tori_comm comm, const void *send, void *recv, uint32_t count,
                   enum tori_type type, enum tori_op op)
{
    enter("tori_allreduce");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    enum comm_error error =
        comm_iallreduce(core(), comm, send, recv, count, (enum comm_type)type,
                        (enum comm_op)op, now, &job.node->comm_outbox, &request);
    return finish_collective("tori_allreduce", error, request, now);
}

int tori_gather(tori_comm comm, uint32_t root, const void *send, uint32_t block, void *recv)
{
    enter("tori_gather");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    enum comm_error error = comm_igather(core(), comm, root, send, block, recv, now,
                                         &job.node->comm_outbox, &request);
    return finish_collective("tori_gather", error, request, now);
}

int tori_allgather(tori_comm comm, const void *send, uint32_t block, void *recv)
{
    enter("tori_allgather");
    uint64_t now = board_now_ns();
    uint32_t request = COMM_REQUEST_NULL;
    enum comm_error error = comm_iallgather(core(), comm, send, block, recv, now,
                                            &job.node->comm_outbox, &request);
    return finish_collective("tori_allgather", error, request, now);
}

/* ---- the job's life ---- */

/* Waits for `start` and the initial view, then stops the poll loop so that
 * kernel_services_run starts the application outside it. */
static unsigned job_poll(void *context, uint64_t now_ns)
{
    (void)context;
    (void)now_ns;
    if (job.state != JOB_WAITING || !node_membership_is_started() ||
        !comm_has_view(core()))
        return 0;
    job.state = JOB_READY;
    poll_stop();
    return 1;
}

void node_job_init(struct node *node)
{
    job.node = node;
    job.job = kernel_job();
    const struct personality *p = node->personality;
    /* Spares run nothing; so does a restarted node, whose ranks went on
     * without it (rejoining a running job comes with the next issues). */
    if (job.job == NULL || personality_is_spare(p) || p->boot_incarnation > 1)
        return;
    job.state = JOB_WAITING;
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
    event_add_u64("rank", comm_rank(core(), COMM_WORLD));
    event_add_u64("size", comm_size(core(), COMM_WORLD));
    event_add_u64("iterations", job.args.iterations);
    event_end();
    return &job.args;
}

void node_job_end(const struct tori_result *outcome)
{
    enter("(return)");
    job.state = JOB_DONE;
    event_begin("app-result");
    event_add_str("app", job_app_name(job.job->app));
    event_add_str("ok", outcome->ok ? "true" : "false");
    event_add_hex("digest", outcome->digest);
    event_add_u64("iterations", outcome->iterations);
    event_add_u64("rank", comm_rank(core(), COMM_WORLD));
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
