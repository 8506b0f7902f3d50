/*
 * tori-fuzz-seeds DIR: writes the seed corpus of every fuzz target, a few
 * valid inputs each, into DIR/<target>/ (tests/fuzz/corpus in the tree):
 * frames, blocks and messages made by the project's own encoders and state
 * machine, command lines, and op sequences for the two state-machine
 * harnesses.  Deterministic: rerunning it rewrites the same files.  Inputs
 * that once crashed a target stay beside them as regression-* files
 * (copied from build/fuzz/crashes/, never rewritten here).
 *
 *   build/fuzz/tests/fuzz/tori-fuzz-seeds tests/fuzz/corpus
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comm/codec.h"
#include "kernel/job.h"
#include "kernel/personality.h"
#include "membership/codec.h"
#include "membership/membership.h"
#include "membership/outbox.h"
#include "net/torus/frame.h"
#include "net/torus/geometry.h"
#include "net/torus/route_table.h"

static const char *root;

static void write_seed(const char *target, const char *name, const void *bytes, size_t length)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, target);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tori-fuzz-seeds: cannot create %s: %s\n", path, strerror(errno));
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(bytes, 1, length, f) != length || fclose(f) != 0) {
        fprintf(stderr, "tori-fuzz-seeds: cannot write %s\n", path);
        exit(1);
    }
}

static void frame_seeds(void)
{
    static uint8_t frame[TORUS_FRAME_MAX_SIZE];
    struct torus_frame_header h;
    memset(&h, 0, sizeof h);
    torus_frame_mac_for_link(1, 0, h.destination_mac);
    torus_frame_mac_for_link(0, 1, h.source_mac);
    h.type = TORUS_FRAME_TYPE_PING;
    h.ttl = 4;
    h.source = 0;
    h.destination = 5;
    h.epoch = 1;
    h.link_sequence = 7;
    h.link_ack = 3;
    h.link_sender_incarnation = 2;
    h.link_receiver_incarnation = 9;
    uint8_t ping[13] = {1, 0, 0, 0, 0x40, 0x42, 0x0f};
    write_seed("frame", "ping", frame, torus_frame_encode(&h, ping, sizeof ping, NULL, frame, sizeof frame));
    h.type = TORUS_FRAME_TYPE_LINK_ACK;
    h.flags = TORUS_FRAME_FLAG_SYN;
    h.link_receiver_incarnation = 0;
    write_seed("frame", "syn", frame, torus_frame_encode(&h, NULL, 0, NULL, frame, sizeof frame));
    h.type = TORUS_FRAME_TYPE_MEMBERSHIP;
    h.flags = 0;
    static uint8_t body[600];
    for (unsigned i = 0; i < sizeof body; i++)
        body[i] = (uint8_t)(i * 7u);
    write_seed("frame", "membership", frame,
               torus_frame_encode(&h, body, sizeof body, NULL, frame, sizeof frame));
}

/* Link ops (fuzz_link.c): bit 0 the end, bits 1.. the action. */
enum { L_SEND, L_TICK, L_TIME, L_DELIVER, L_EDIT, L_LOSE, L_DUPLICATE, L_RESTART };
#define LINK_OP(action, end) (uint8_t)(((action) << 1) | (end))

static void link_seeds(void)
{
    /* Handshake both ways, data both ways, a loss and its resend. */
    const uint8_t handshake[] = {
        1, 1, LINK_OP(L_TICK, 0), LINK_OP(L_TICK, 1), LINK_OP(L_DELIVER, 1),
        LINK_OP(L_DELIVER, 0), LINK_OP(L_TICK, 0), LINK_OP(L_TICK, 1), LINK_OP(L_DELIVER, 1),
        LINK_OP(L_DELIVER, 0), LINK_OP(L_SEND, 0), LINK_OP(L_SEND, 1), LINK_OP(L_DELIVER, 1),
        LINK_OP(L_DELIVER, 0), LINK_OP(L_SEND, 0), LINK_OP(L_LOSE, 1), LINK_OP(L_SEND, 0),
        LINK_OP(L_DELIVER, 1), LINK_OP(L_TICK, 1), LINK_OP(L_DELIVER, 0), LINK_OP(L_TIME, 0),
        0x10, 0x27, LINK_OP(L_TICK, 0), LINK_OP(L_DELIVER, 1), LINK_OP(L_DELIVER, 1)};
    write_seed("link", "handshake", handshake, sizeof handshake);
    /* A restart, a stale frame replayed, an edited header. */
    const uint8_t restart[] = {
        2, 3, LINK_OP(L_TICK, 0), LINK_OP(L_DELIVER, 1), LINK_OP(L_TICK, 1),
        LINK_OP(L_DELIVER, 0), LINK_OP(L_TICK, 0), LINK_OP(L_DELIVER, 1), LINK_OP(L_SEND, 0),
        LINK_OP(L_DUPLICATE, 1), LINK_OP(L_RESTART, 0), 1, LINK_OP(L_DELIVER, 1),
        LINK_OP(L_EDIT, 1), 2, 34, 5, 38, 1, LINK_OP(L_TICK, 0), LINK_OP(L_DELIVER, 1),
        LINK_OP(L_TICK, 1), LINK_OP(L_DELIVER, 0)};
    write_seed("link", "restart", restart, sizeof restart);
}

/* Membership ops (fuzz_membership.c): op % 10 the action, (op >> 4) % 8 the node. */
enum { M_DELIVER, M_DELIVER2, M_LOSE, M_TICK, M_TIME, M_BYTES, M_EDIT, M_SUSPECT, M_CRASH, M_LINK };

static uint8_t membership_op(unsigned action, unsigned node)
{
    for (unsigned op = 0; op < 256; op++)
        if (op % 10u == action && (op >> 4) % 8u == node)
            return (uint8_t)op;
    return 0;
}

static void membership_seeds(void)
{
    uint8_t ops[96];
    size_t n = 0;
    /* Node 5 crashes, 6 suspects it, the root's round removes it. */
    ops[n++] = membership_op(M_CRASH, 5);
    ops[n++] = membership_op(M_SUSPECT, 6);
    ops[n++] = 5;
    for (unsigned i = 0; i < 6; i++)
        ops[n++] = membership_op(M_DELIVER, 0);
    ops[n++] = membership_op(M_TICK, 6);
    for (unsigned i = 0; i < 30; i++)
        ops[n++] = membership_op(M_DELIVER, 0);
    write_seed("membership", "crash", ops, n);
    /* ... and then restarts and rejoins. */
    ops[n++] = membership_op(M_CRASH, 5);
    ops[n++] = 0;
    for (unsigned i = 0; i < 30; i++)
        ops[n++] = membership_op(i % 5u == 0 ? M_TICK : M_DELIVER, i % 8u);
    write_seed("membership", "rejoin", ops, n);
    /* Heartbeats, a lost message, an edited one. */
    n = 0;
    for (unsigned id = 0; id < 8; id++)
        ops[n++] = membership_op(M_TICK, id);
    ops[n++] = membership_op(M_LOSE, 0);
    ops[n++] = membership_op(M_EDIT, 0);
    ops[n++] = 0;
    ops[n++] = 12;
    ops[n++] = 0;
    ops[n++] = 0xff;
    ops[n++] = membership_op(M_TIME, 0);
    ops[n++] = 0x60;
    ops[n++] = 0xea;
    for (unsigned id = 0; id < 8; id++)
        ops[n++] = membership_op(M_TICK, id);
    write_seed("membership", "heartbeats", ops, n);
}

/* The first message of each type a small failure and its round send. */
static void membership_codec_seeds(void)
{
    static struct membership nodes[8];
    static struct membership_outbox out;
    static bool written[MEMBERSHIP_MSG_TYPE_LIMIT];
    static struct {
        uint32_t to;
        uint16_t length;
        uint8_t bytes[MEMBERSHIP_MAX_PAYLOAD];
    } queue[512];
    unsigned head = 0;
    unsigned tail = 0;
    struct torus_geometry g;
    const uint32_t sizes[3] = {2, 2, 2};
    torus_geometry_init(&g, 3, sizes, NULL, NULL);
    for (uint32_t id = 0; id < 8; id++) {
        struct membership_config c;
        membership_config_defaults(&c);
        c.geometry = g;
        c.node_id = id;
        c.member_count = 8;
        c.radix = 2;
        c.incarnation = 1;
        membership_init(&nodes[id], &c);
    }
    uint64_t now = 1000000;
    membership_suspect(&nodes[6], 5, now, &out);
    uint32_t from = 6;
    for (unsigned step = 0; step < 4000; step++) {
        for (uint32_t i = 0; i < out.message_count; i++) {
            const uint8_t *p = membership_outbox_payload(&out, i);
            uint8_t type = p[1];
            if (type < MEMBERSHIP_MSG_TYPE_LIMIT && !written[type]) {
                written[type] = true;
                write_seed("membership_codec", membership_msg_type_name(type), p,
                           out.messages[i].length);
            }
            if (tail - head < 512 && out.messages[i].destination != 5) {
                unsigned s = tail++ % 512u;
                queue[s].to = out.messages[i].destination;
                queue[s].length = out.messages[i].length;
                memcpy(queue[s].bytes, p, out.messages[i].length);
            }
        }
        membership_outbox_clear(&out);
        (void)from;
        if (head != tail) {
            unsigned s = head++ % 512u;
            from = queue[s].to;
            membership_receive(&nodes[from], queue[s].bytes, queue[s].length, now, &out);
        } else {
            uint32_t id = step % 8u;
            if (id == 5)
                continue;
            uint64_t next = membership_next_deadline(&nodes[id]);
            if (next != MEMBERSHIP_NEVER && next > now)
                now = next;
            from = id;
            membership_tick(&nodes[id], now, &out);
        }
    }
}

static void block_seeds(void)
{
    struct personality p;
    memset(&p, 0, sizeof p);
    personality_set_defaults(&p);
    p.node_id = 5;
    p.dims = 3;
    for (unsigned d = 0; d < 3; d++) {
        p.dim_size[d] = 2;
        p.coord[d] = (uint16_t)((5u >> d) & 1u);
    }
    p.member_count = 8;
    uint8_t block[JOB_SIZE];
    personality_encode(&p, block);
    write_seed("personality", "node5_2x2x2", block, PERSONALITY_SIZE);
    p.role = PERSONALITY_ROLE_SPARE;
    p.member_count = 7;
    p.node_id = 7;
    for (unsigned d = 0; d < 3; d++)
        p.coord[d] = 1;
    p.tree_layout = PERSONALITY_TREE_TORUS;
    p.mesh_mask = 2;
    personality_encode(&p, block);
    write_seed("personality", "spare_mesh", block, PERSONALITY_SIZE);

    struct job job;
    job_set_defaults(&job);
    job.app = JOB_APP_STENCIL;
    job.iterations = 200;
    job.progress_interval = 50;
    job.app_arg[0] = 4;
    job_encode(&job, block);
    write_seed("job", "stencil", block, JOB_SIZE);
    job.app = JOB_APP_ALLREDUCE;
    job.iterations = 20;
    job.app_arg[0] = -3;
    job_encode(&job, block);
    write_seed("job", "allreduce", block, JOB_SIZE);
}

static void console_seeds(void)
{
    static const char *const lines[][2] = {
        {"help", "help\n"},
        {"ping", "ping all\nping 3\nping 99\n"},
        {"flood", "flood 1 10 100\n"},
        {"link", "link x+ off\nlink x+ on\nlink q off\n"},
        {"membership", "start\nview\nsuspect 3\nsuspect x\n"},
        {"stats", "stats\ncomm\nstack\nview extra\n"},
    };
    for (unsigned i = 0; i < sizeof lines / sizeof lines[0]; i++)
        write_seed("console", lines[i][0], lines[i][1], strlen(lines[i][1]));
}

static void comm_codec_seeds(void)
{
    static uint8_t out[TORUS_FRAME_MAX_PAYLOAD];
    static uint8_t bytes[COMM_FRAGMENT_BYTES];
    struct comm_frame f;
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_OPEN;
    f.sender_incarnation = 3;
    f.session = 1;
    write_seed("comm_codec", "open", out, comm_encode(&f, out, sizeof out));
    f.kind = COMM_KIND_ACK;
    f.receiver_incarnation = 4;
    f.seq = 9;
    f.mask = 0x5;
    write_seed("comm_codec", "ack", out, comm_encode(&f, out, sizeof out));
    memset(&f, 0, sizeof f);
    f.kind = COMM_KIND_DATA;
    f.flags = COMM_FLAG_FIRST;
    f.sender_incarnation = 3;
    f.receiver_incarnation = 4;
    f.session = 7;
    f.seq = 1;
    f.total = 100;
    f.data_length = 100;
    for (unsigned i = 0; i < 100; i++)
        bytes[i] = (uint8_t)i;
    f.data = bytes;
    f.tag = 5;
    f.source_rank = 2;
    write_seed("comm_codec", "data", out, comm_encode(&f, out, sizeof out));
}

/* Route table ops (fuzz_route_table.c): an op (op % 11 the action), then
 * which (node which % nodes, link which / nodes % links), then the
 * action's bytes. */
enum { R_DELIVER, R_DELIVER2, R_COLLECT, R_COLLECT_ALL, R_TIME, R_CABLE, R_RESTART, R_EDIT,
       R_FORGE, R_RAW, R_SETTLE };

/* 4x4 (shape 0), incarnation 1, no hold; the op bytes follow. */
static size_t route_table_start(uint8_t *ops)
{
    ops[0] = 0;
    ops[1] = 1;
    ops[2] = 0;
    ops[3] = 0;
    ops[4] = 0;
    return 5;
}

/* Collect everything and deliver every cable's oldest advert, rounds times. */
static size_t route_table_rounds(uint8_t *ops, size_t n, unsigned rounds)
{
    for (unsigned r = 0; r < rounds; r++) {
        ops[n++] = R_COLLECT_ALL;
        ops[n++] = 0;
        for (unsigned which = 0; which < 16u * 4u; which++) {
            ops[n++] = R_DELIVER;
            ops[n++] = (uint8_t)which;
        }
    }
    return n;
}

static void route_table_seeds(void)
{
    static uint8_t ops[4096];
    /* Node 5's x+ cable cut, the routes to 5 and 6 recomputed, then mended. */
    size_t n = route_table_start(ops);
    ops[n++] = R_CABLE;
    ops[n++] = 5; /* node 5, link 0 (x+) */
    n = route_table_rounds(ops, n, 6);
    write_seed("route_table", "cut", ops, n);
    ops[n++] = R_CABLE;
    ops[n++] = 5;
    n = route_table_rounds(ops, n, 6);
    write_seed("route_table", "cut_mend", ops, n);
    /* A cut, then node 6 restarts mid-flood. */
    n = route_table_start(ops);
    ops[n++] = R_CABLE;
    ops[n++] = 5;
    n = route_table_rounds(ops, n, 2);
    ops[n++] = R_RESTART;
    ops[n++] = 6;
    n = route_table_rounds(ops, n, 5);
    write_seed("route_table", "restart", ops, n);

    /* Node 0 in its 65535th life (sequence numbers from 0xFFFF0000): a cut
     * on a route to it, then it restarts, its numbers wrapping to 0. */
    n = route_table_start(ops);
    ops[1] = 0xFF;
    ops[2] = 0xFF;
    ops[n++] = R_CABLE;
    ops[n++] = 3; /* node 3, link 0 (x+): to node 0 */
    ops[n++] = R_SETTLE;
    ops[n++] = 0;
    ops[n++] = R_RESTART;
    ops[n++] = 0;
    ops[n++] = R_SETTLE;
    ops[n++] = 0;
    write_seed("route_table", "late_incarnation", ops, n);

    /* Valid adverts, as a table writes them after a cut, delivered raw to
     * node 1 on its x- link (which 1 + 16 * 1). */
    struct torus_geometry g;
    const uint32_t sizes[2] = {4, 4};
    torus_geometry_init(&g, 2, sizes, NULL, NULL);
    static struct route_table tables[2];
    for (uint32_t id = 0; id < 2; id++) {
        struct route_table_config c = {.geometry = g,
                                       .rank = id,
                                       .link_mask = torus_geometry_link_mask(&g, id),
                                       .incarnation = 1};
        route_table_init(&tables[id], &c);
        for (unsigned l = 0; l < 4; l++)
            route_table_link_changed(&tables[id], l, true);
    }
    route_table_link_changed(&tables[0], 2, false); /* y+ of 0 */
    static uint8_t advert[256];
    size_t length = route_table_advert(&tables[0], 0, advert, sizeof advert, 0);
    n = route_table_start(ops);
    ops[n++] = R_RAW;
    ops[n++] = 1 + 16;
    ops[n++] = (uint8_t)length;
    memcpy(ops + n, advert, length);
    write_seed("route_table", "advert_link", ops, n + length);
    /* 0's own route, after a link record on a route to it (from 3, whose
     * x+ leads to 0): the advert that carries both. */
    route_table_link_changed(&tables[0], 2, true);
    static const uint8_t from_3[] = {1, 0, 1, 0, 0, 0, 3, 0, 0, 0, 9, 0, 0, 0, 0, 1};
    route_table_receive(&tables[0], 1, from_3, sizeof from_3);
    length = route_table_advert(&tables[0], 0, advert, sizeof advert, 0);
    n = route_table_start(ops);
    ops[n++] = R_RAW;
    ops[n++] = 1 + 16;
    ops[n++] = (uint8_t)length;
    memcpy(ops + n, advert, length);
    write_seed("route_table", "advert_route", ops, n + length);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tori-fuzz-seeds DIR (the corpus root: tests/fuzz/corpus)\n");
        return 2;
    }
    root = argv[1];
    if (mkdir(root, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tori-fuzz-seeds: cannot create %s: %s\n", root, strerror(errno));
        return 1;
    }
    frame_seeds();
    link_seeds();
    membership_seeds();
    membership_codec_seeds();
    block_seeds();
    console_seeds();
    comm_codec_seeds();
    route_table_seeds();
    return 0;
}
