/*
 * tori-personality: writes a node's personality block, or decodes one.
 *
 *   tori-personality --node N --dims 2x2x2 [options] -o FILE
 *   tori-personality --dump FILE
 *   tori-personality --job-out FILE --app NAME [--iterations N] [...]
 *   tori-personality --dump-job FILE
 *
 * The block is made by the same codec the node decodes it with
 * (kernel/personality.h), so what this tool accepts the node accepts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/job.h"
#include "kernel/personality.h"
#include "tools/cli.h"
#include "tools/job_options.h"

#define TOOL "tori-personality"

/* The defaults shown are the ones written: personality_set_defaults's. */
static void usage(FILE *out)
{
    struct personality defaults;
    memset(&defaults, 0, sizeof defaults);
    personality_set_defaults(&defaults);
    fprintf(out,
            "usage: tori-personality --node N --dims DIMS [options] -o FILE\n"
            "       tori-personality --dump FILE\n"
            "\n"
            "Writes the 64-byte personality block of node N (its rank; coordinates\n"
            "are computed from it, dimension 0 fastest), or decodes and checks one.\n"
            "\n"
            "  --node N              rank of the node, 0..nodes-1 (required)\n"
            "  --dims DIMS           torus shape, e.g. 2x2x2, 1 to 6 sizes (required)\n"
            "  --mesh x,z | all      these dimensions are meshes, not tori\n"
            "  --radix R             membership tree radix, power of two 2..16 (%u)\n"
            "  --tree radix|torus|box  membership tree layout (radix)\n"
            "  --members M           size of the initial view, 1..nodes (all);\n"
            "                        ranks >= M are spares\n"
            "  --incarnation K       boot incarnation counter (%u)\n"
            "  --heartbeat-ms MS     heartbeat period, 1..65535 (%u)\n"
            "  --detect-timeout-ms MS  failure detection timeout, above the heartbeat (%u)\n"
            "  --link-rto-ms MS      link retransmission timeout, 1..65535 (%u)\n"
            "  --link-retries N      retransmissions before a link is down, 1..255 (%u)\n"
            "  --partition primary|every-side  who goes on after a partition (primary)\n"
            "  --timeout-ceiling N   detector timeouts grow to at most N x the set ones (%u)\n"
            "                        on a slow host, 1..64 (1: fixed)\n"
            "  -o, --output FILE     where to write the block\n"
            "  --dump FILE           decode FILE and print its fields, or the exact error\n"
            "\n"
            "The job block (kernel/job.h), the same for every node of a job:\n"
            "  --job-out FILE        write it (with --app and the options below only)\n"
            "  --app NAME            allreduce, stencil, pingpong; greedy, stale, ftprobe (tests)\n"
            "  --iterations N        iterations, 1..4294967295 (1)\n"
            "  --progress K          an app-progress event every K iterations (0: none)\n"
            "  --app-args a,b,c      up to 4 signed 64-bit application arguments (0)\n"
            "  --comm-mode MODE      abort|blank|shrink|rebuild: what WORLD does when a\n"
            "                        rank fails (abort: the job ends)\n"
            "  --msg-mode MODE       nop|cont: after a failure every call fails until\n"
            "                        the rebuild (nop), or only those naming a failed rank\n"
            "  --routing MODE        detour|table: dimension order with local detours, or\n"
            "                        Phoenix routing tables for fault regions\n"
            "  --recovery POLICY     the root's decision per fault model, e.g.\n"
            "                        'process=restart; physical=migrate; repeated(3 in 60s)=migrate'\n"
            "  --lossy-link COUNT/MS more than COUNT frames resent on a link within MS ms\n"
            "                        is a network fault (default 64/1000)\n"
            "  --seeds a,b           up to 4 seed nodes a joiner asks first (ids the\n"
            "                        node checks against its torus)\n"
            "  --dump-job FILE       decode a job block and print its fields\n",
            (unsigned)defaults.tree_radix, (unsigned)defaults.boot_incarnation,
            (unsigned)defaults.heartbeat_ms, (unsigned)defaults.detect_timeout_ms,
            (unsigned)defaults.link_rto_ms, (unsigned)defaults.link_retries,
            (unsigned)defaults.timeout_ceiling);
}

__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    fputs(TOOL ": ", stderr);
    vfprintf(stderr, format, arguments);
    fputc('\n', stderr);
    va_end(arguments);
    exit(2);
}

static const char dimension_letters[] = "xyzuvw";

static void print_personality(const struct personality *p)
{
    printf("node_id=%u\n", (unsigned)p->node_id);
    printf("boot_incarnation=%u\n", (unsigned)p->boot_incarnation);
    printf("role=%s\n", personality_is_spare(p) ? "spare" : "compute");
    printf("dims=");
    for (unsigned d = 0; d < p->dims; d++)
        printf("%s%u", d > 0 ? "x" : "", (unsigned)p->dim_size[d]);
    printf("\nmesh=");
    bool any = false;
    for (unsigned d = 0; d < p->dims; d++) {
        if (personality_is_mesh(p, d)) {
            printf("%s%c", any ? "," : "", dimension_letters[d]);
            any = true;
        }
    }
    printf("%s\ncoords=", any ? "" : "none");
    for (unsigned d = 0; d < p->dims; d++)
        printf("%s%u", d > 0 ? "," : "", (unsigned)p->coord[d]);
    printf("\nnodes=%u\n", (unsigned)personality_node_count(p));
    printf("member_count=%u\n", (unsigned)p->member_count);
    printf("tree_radix=%u\n", (unsigned)p->tree_radix);
    printf("tree_layout=%s\n", personality_tree_layout_name(p->tree_layout));
    printf("heartbeat_ms=%u\n", (unsigned)p->heartbeat_ms);
    printf("detect_timeout_ms=%u\n", (unsigned)p->detect_timeout_ms);
    printf("link_rto_ms=%u\n", (unsigned)p->link_rto_ms);
    printf("link_retries=%u\n", (unsigned)p->link_retries);
    printf("partition=%s\n", p->partition_policy == PERSONALITY_PARTITION_EVERY_SIDE
                                 ? "every-side"
                                 : "primary");
    printf("timeout_ceiling=%u\n", (unsigned)p->timeout_ceiling);
}

static int dump(const char *path)
{
    /* A file we cannot read is named as such, not decoded as an empty block. */
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, TOOL ": cannot read '%s': %s\n", path, strerror(errno));
        return 1;
    }
    uint8_t block[PERSONALITY_SIZE * 2];
    size_t length = fread(block, 1, sizeof block, file);
    int read_error = ferror(file) ? errno : 0;
    bool longer = length == sizeof block;
    fclose(file);
    if (read_error != 0) {
        fprintf(stderr, TOOL ": cannot read '%s': %s\n", path, strerror(read_error));
        return 1;
    }
    if (longer) {
        fprintf(stderr,
                TOOL ": %s: personality: length is more than %u bytes, expected "
                     "exactly %u\n",
                path, (unsigned)PERSONALITY_SIZE, (unsigned)PERSONALITY_SIZE);
        return 1;
    }
    if (length > PERSONALITY_SIZE) {
        fprintf(stderr,
                TOOL ": %s: personality: length=%zu is invalid, expected exactly %u "
                     "bytes\n",
                path, length, (unsigned)PERSONALITY_SIZE);
        return 1;
    }
    struct personality p;
    struct personality_error error;
    if (!personality_decode(block, length, &p, &error)) {
        char message[256];
        personality_format_error(&error, message, sizeof message);
        fprintf(stderr, TOOL ": %s: %s\n", path, message);
        return 1;
    }
    print_personality(&p);
    return 0;
}

/* Options that are numbers: where to find them and their limits. */
struct number_option {
    const char *name;
    uint64_t min, max;
    const char *expected;
};

static uint64_t number(const struct number_option *option, const char *value)
{
    uint64_t result = 0;
    char error[160];
    if (!cli_parse_u64(value, option->min, option->max, &result)) {
        cli_invalid(error, sizeof error, option->name, value, option->expected);
        fail("%s", error);
    }
    return result;
}

static const struct number_option node_option = {"--node", 0, UINT32_MAX,
                                                 "a rank, 0..nodes-1"};
static const struct number_option radix_option = {"--radix", 2, 16,
                                                  "a power of two in 2..16"};
static const struct number_option members_option = {"--members", 1, UINT32_MAX,
                                                     "a count in 1..nodes"};
static const struct number_option incarnation_option = {
    "--incarnation", 0, UINT32_MAX, "an integer 0..4294967295"};
static const struct number_option heartbeat_option = {"--heartbeat-ms", 1, 65535,
                                                      "milliseconds, 1..65535"};
static const struct number_option detect_option = {
    "--detect-timeout-ms", 2, 65535, "milliseconds, 2..65535, above the heartbeat"};
static const struct number_option rto_option = {"--link-rto-ms", 1, 65535,
                                                "milliseconds, 1..65535"};
static const struct number_option retries_option = {"--link-retries", 1, 255,
                                                    "a count in 1..255"};

struct request {
    const char *node, *dims, *mesh, *radix, *tree, *members, *incarnation;
    const char *heartbeat, *detect, *rto, *retries, *partition, *ceiling, *output, *dump;
};

static void parse_arguments(int argc, char **argv, struct request *r)
{
    const struct cli_option options[] = {
        {"--node", &r->node, NULL},
        {"--dims", &r->dims, NULL},
        {"--mesh", &r->mesh, NULL},
        {"--radix", &r->radix, NULL},
        {"--tree", &r->tree, NULL},
        {"--members", &r->members, NULL},
        {"--incarnation", &r->incarnation, NULL},
        {"--heartbeat-ms", &r->heartbeat, NULL},
        {"--detect-timeout-ms", &r->detect, NULL},
        {"--link-rto-ms", &r->rto, NULL},
        {"--link-retries", &r->retries, NULL},
        {"--partition", &r->partition, NULL},
        {"--timeout-ceiling", &r->ceiling, NULL},
        {"--output", &r->output, NULL},
        {"-o", &r->output, NULL},
        {"--dump", &r->dump, NULL},
    };
    char error[200];
    switch (cli_scan(argc, argv, options, sizeof options / sizeof options[0], error,
                     sizeof error)) {
    case CLI_SCAN_HELP:
        usage(stdout);
        exit(0);
    case CLI_SCAN_ERROR:
        fail("%s", error);
    case CLI_SCAN_OK:
        break;
    }
}

static void parse_dims(const char *text, struct personality *p)
{
    unsigned dims = 0;
    uint32_t sizes[CONFIG_MAX_DIMS];
    char error[240];
    if (!cli_parse_dims("--dims", text, &dims, sizes, error, sizeof error))
        fail("%s", error);
    p->dims = (uint8_t)dims;
    for (unsigned d = 0; d < dims; d++)
        p->dim_size[d] = (uint16_t)sizes[d];
}

static void build(const struct request *r, struct personality *p)
{
    memset(p, 0, sizeof *p);
    personality_set_defaults(p);
    if (r->node == NULL)
        fail("--node is missing (expected the node's rank, e.g. --node 5)");
    if (r->dims == NULL)
        fail("--dims is missing (expected the torus shape, e.g. --dims 2x2x2)");
    parse_dims(r->dims, p);
    uint32_t nodes = personality_node_count(p);

    uint64_t rank = number(&node_option, r->node);
    if (rank >= nodes)
        fail("--node %s is out of range (expected 0..%u for a %s torus)", r->node,
             (unsigned)(nodes - 1), r->dims);
    p->node_id = (uint32_t)rank;
    uint32_t rest = p->node_id;
    for (unsigned d = 0; d < p->dims; d++) {
        p->coord[d] = (uint16_t)(rest % p->dim_size[d]);
        rest /= p->dim_size[d];
    }

    if (r->mesh != NULL) {
        char reason[160];
        if (!cli_parse_mesh(r->mesh, p->dims, &p->mesh_mask, reason, sizeof reason))
            fail("--mesh %s", reason);
    }
    if (r->radix != NULL) {
        uint64_t radix = number(&radix_option, r->radix);
        if ((radix & (radix - 1)) != 0)
            fail("--radix '%s' is invalid (expected a power of two in 2..16)", r->radix);
        p->tree_radix = (uint8_t)radix;
    }
    if (r->tree != NULL) {
        if (!personality_tree_layout_from_name(r->tree, &p->tree_layout))
            fail("--tree '%.40s' is invalid (expected radix, torus or box)", r->tree);
    }
    p->member_count = nodes;
    if (r->members != NULL) {
        uint64_t members = number(&members_option, r->members);
        if (members > nodes)
            fail("--members %s is out of range (expected 1..%u, the node count)",
                 r->members, (unsigned)nodes);
        p->member_count = (uint32_t)members;
    }
    p->role = p->node_id < p->member_count ? PERSONALITY_ROLE_COMPUTE
                                           : PERSONALITY_ROLE_SPARE;
    if (r->incarnation != NULL)
        p->boot_incarnation = (uint32_t)number(&incarnation_option, r->incarnation);
    if (r->heartbeat != NULL)
        p->heartbeat_ms = (uint16_t)number(&heartbeat_option, r->heartbeat);
    if (r->detect != NULL)
        p->detect_timeout_ms = (uint16_t)number(&detect_option, r->detect);
    if (p->detect_timeout_ms <= p->heartbeat_ms)
        fail("--detect-timeout-ms %u is not above the heartbeat of %u ms (expected "
             "a timeout longer than --heartbeat-ms)",
             (unsigned)p->detect_timeout_ms, (unsigned)p->heartbeat_ms);
    if (r->rto != NULL)
        p->link_rto_ms = (uint16_t)number(&rto_option, r->rto);
    if (r->retries != NULL)
        p->link_retries = (uint8_t)number(&retries_option, r->retries);
    if (r->partition != NULL) {
        if (strcmp(r->partition, "primary") == 0)
            p->partition_policy = PERSONALITY_PARTITION_PRIMARY;
        else if (strcmp(r->partition, "every-side") == 0)
            p->partition_policy = PERSONALITY_PARTITION_EVERY_SIDE;
        else
            fail("--partition '%.40s' is invalid (expected primary or every-side)",
                 r->partition);
    }
    char ceiling_error[240];
    if (r->ceiling != NULL &&
        !job_options_parse_timeout_ceiling("--timeout-ceiling", r->ceiling, &p->timeout_ceiling,
                                           ceiling_error, sizeof ceiling_error))
        fail("%s", ceiling_error);

    /* The codec has the last word: anything it refuses is a tool bug. */
    struct personality_error error;
    if (!personality_validate(p, &error)) {
        char message[256];
        personality_format_error(&error, message, sizeof message);
        fail("internal error, the options made an invalid block: %s", message);
    }
}

static int write_block(const char *path, const struct personality *p)
{
    uint8_t block[PERSONALITY_SIZE];
    personality_encode(p, block);
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        fprintf(stderr, TOOL ": cannot create '%s': %s\n", path, strerror(errno));
        return 1;
    }
    bool written = fwrite(block, 1, sizeof block, file) == sizeof block;
    if (fclose(file) != 0 || !written) {
        fprintf(stderr, TOOL ": cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static int job_main(int argc, char **argv);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--job-out", 9) == 0 || strncmp(argv[i], "--dump-job", 10) == 0)
            return job_main(argc, argv);
    struct request request;
    memset(&request, 0, sizeof request);
    parse_arguments(argc, argv, &request);
    if (request.dump != NULL) {
        if (request.node != NULL || request.dims != NULL || request.output != NULL)
            fail("--dump takes no other options (expected --dump FILE alone)");
        return dump(request.dump);
    }
    if (argc == 1) {
        usage(stderr);
        return 2;
    }
    struct personality p;
    build(&request, &p);
    if (request.output == NULL)
        fail("-o is missing (expected -o FILE, where to write the block)");
    return write_block(request.output, &p);
}

/* ---- the job block: written once per job, the same for every node ---- */

static void print_job(const struct job *job)
{
    printf("app=%s\n", job_app_name(job->app));
    printf("iterations=%u\n", (unsigned)job->iterations);
    printf("progress_interval=%u\n", (unsigned)job->progress_interval);
    printf("app_args=");
    for (unsigned i = 0; i < JOB_APP_ARGS; i++)
        printf("%s%lld", i > 0 ? "," : "", (long long)job->app_arg[i]);
    printf("\ncomm_mode=%s\n", job_comm_mode_name(job->comm_mode));
    printf("message_mode=%s\n", job_message_mode_name(job->message_mode));
    printf("routing_mode=%s\n", job_routing_mode_name(job->routing_mode));
    printf("checkpoint_interval=%u\n", (unsigned)job->checkpoint_interval);
    printf("seed_count=%u\n", (unsigned)job->seed_count);
    if (job->seed_count > 0) {
        printf("seed_nodes=");
        for (unsigned i = 0; i < job->seed_count && i < JOB_SEED_NODES; i++)
            printf("%s%u", i > 0 ? "," : "", (unsigned)job->seed_node[i]);
        printf("\n");
    }
    char policy[160];
    job_options_format_recovery(&job->recovery, policy, sizeof policy);
    printf("recovery_policy=%s\n", policy);
    if (job->link_lossy_retransmits == 0 && job->link_lossy_window_ms == 0)
        printf("link_lossy=default\n");
    else
        printf("link_lossy=%u/%u\n", (unsigned)job->link_lossy_retransmits,
               (unsigned)job->link_lossy_window_ms); /* 0: that half's default */
    printf("job_key=%s\n", job_has_key(job) ? "set" : "none"); /* never the value */
}

static int dump_job(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fprintf(stderr, TOOL ": cannot read '%s': %s\n", path, strerror(errno));
        return 1;
    }
    uint8_t block[JOB_SIZE + 1];
    size_t length = fread(block, 1, sizeof block, file);
    int read_error = ferror(file) ? errno : 0;
    fclose(file);
    if (read_error != 0) {
        fprintf(stderr, TOOL ": cannot read '%s': %s\n", path, strerror(read_error));
        return 1;
    }
    if (length > JOB_SIZE) {
        fprintf(stderr, TOOL ": %s: job: length is more than %u bytes, expected exactly %u\n",
                path, (unsigned)JOB_SIZE, (unsigned)JOB_SIZE);
        return 1;
    }
    struct job job;
    struct personality_error error;
    if (!job_decode(block, length, &job, &error)) {
        char message[256];
        job_format_error(&error, message, sizeof message);
        fprintf(stderr, TOOL ": %s: %s\n", path, message);
        return 1;
    }
    print_job(&job);
    return 0;
}

static int job_main(int argc, char **argv)
{
    const char *output = NULL, *dump_path = NULL, *app = NULL, *iterations = NULL;
    const char *progress = NULL, *app_args = NULL, *comm_mode = NULL, *msg_mode = NULL;
    const char *checkpoint_every = NULL, *recovery = NULL, *lossy_link = NULL, *seeds = NULL;
    const char *routing = NULL;
    const struct cli_option options[] = {
        {"--job-out", &output, NULL},   {"--dump-job", &dump_path, NULL},
        {"--app", &app, NULL},          {"--iterations", &iterations, NULL},
        {"--progress", &progress, NULL}, {"--app-args", &app_args, NULL},
        {"--comm-mode", &comm_mode, NULL}, {"--msg-mode", &msg_mode, NULL},
        {"--checkpoint-every", &checkpoint_every, NULL},
        {"--recovery", &recovery, NULL},
        {"--lossy-link", &lossy_link, NULL},
        {"--seeds", &seeds, NULL},
        {"--routing", &routing, NULL},
    };
    char error[200];
    switch (cli_scan(argc, argv, options, sizeof options / sizeof options[0], error,
                     sizeof error)) {
    case CLI_SCAN_HELP:
        usage(stdout);
        return 0;
    case CLI_SCAN_ERROR:
        fail("%s (the job block takes only --job-out, --app, --iterations, --progress, "
             "--app-args, --comm-mode, --msg-mode, --checkpoint-every, --recovery, --lossy-link, "
             "--seeds, --routing; or --dump-job alone)", error);
    case CLI_SCAN_OK:
        break;
    }
    if (dump_path != NULL) {
        if (output != NULL || app != NULL || iterations != NULL || progress != NULL ||
            app_args != NULL || comm_mode != NULL || msg_mode != NULL ||
            checkpoint_every != NULL || recovery != NULL || lossy_link != NULL ||
            seeds != NULL || routing != NULL)
            fail("--dump-job takes no other options (expected --dump-job FILE alone)");
        return dump_job(dump_path);
    }
    const struct job_options wanted = {.app = app,
                                       .iterations = iterations,
                                       .progress = progress,
                                       .app_args = app_args,
                                       .comm_mode = comm_mode,
                                       .msg_mode = msg_mode,
                                       .routing = routing,
                                       .recovery = recovery,
                                       .checkpoint_every = checkpoint_every,
                                       .lossy_link = lossy_link,
                                       .seeds = seeds,
                                       .default_iterations = 1,
                                       .max_iterations = UINT32_MAX};
    struct job job;
    if (!job_options_build(&wanted, &job, error, sizeof error))
        fail("%s", error);
    uint8_t block[JOB_SIZE];
    job_encode(&job, block);
    FILE *file = fopen(output, "wb");
    if (file == NULL) {
        fprintf(stderr, TOOL ": cannot create '%s': %s\n", output, strerror(errno));
        return 1;
    }
    bool written = fwrite(block, 1, sizeof block, file) == sizeof block;
    if (fclose(file) != 0 || !written) {
        fprintf(stderr, TOOL ": cannot write '%s': %s\n", output, strerror(errno));
        return 1;
    }
    return 0;
}
