/* The communicators' part of the agreement check after a fault
 * (emu_app_check_comms): every kind of disagreement among the live ranks'
 * `comm` lines is caught and named, and what is allowed passes. */
#include <string.h>

#include "qemu/launcher/emu_app.h"
#include "qemu/launcher/emu_options.h"
#include "qemu/launcher/emu_run.h"
#include "tests/check.h"

#define NODES 4

static struct emu_options options;
static struct emu_node nodes[NODES];
static struct emu emu;
static bool live[NODES];

/* Four running ranks, all live, no comm line yet. */
static void setup(void)
{
    memset(&options, 0, sizeof options);
    memset(nodes, 0, sizeof nodes);
    memset(&emu, 0, sizeof emu);
    emu.options = &options;
    emu.count = NODES;
    emu.nodes = nodes;
    for (uint32_t r = 0; r < NODES; r++) {
        nodes[r].rank = r;
        nodes[r].app_started = true;
        nodes[r].pid = 100 + (int)r;
        live[r] = true;
    }
}

static void report(uint32_t node, unsigned slot, const char *comm, uint64_t epoch, uint32_t size,
                   uint32_t rank, const char *digest)
{
    struct emu_comm_report *c = &nodes[node].comm[slot];
    c->valid = true;
    snprintf(c->comm, sizeof c->comm, "%s", comm);
    snprintf(c->digest, sizeof c->digest, "%s", digest);
    c->epoch = epoch;
    c->size = size;
    c->rank = rank;
}

/* Rank 3 killed: the survivors' WORLD lines, and a shrunk communicator of
 * epoch 9 that ranks 0..2 hold as ranks 0..2. */
static void survivors_agree(void)
{
    setup();
    live[3] = false;
    nodes[3].pid = 0;
    for (uint32_t r = 0; r < 3; r++) {
        report(r, 0, "0x100", 0, 4, r, "0xaaaa");
        report(r, 1, "0x101", 9, 3, r, "0xbbbb");
    }
}

static void expect(bool passes, const char *part)
{
    char reason[200] = "";
    bool passed = emu_app_check_comms(&emu, live, reason, sizeof reason);
    CHECK(passed == passes);
    if (!passes)
        CHECK_CONTAINS(reason, part);
}

int main(void)
{
    /* Nothing lost, nothing reported: nothing to check. */
    setup();
    expect(true, NULL);

    survivors_agree();
    expect(true, NULL);

    /* A dead rank's old lines do not count. */
    survivors_agree();
    report(3, 0, "0x101", 9, 3, 0, "0xdead");
    expect(true, NULL);

    /* A rank that has not yet rebuilt still holds the older epoch: fine. */
    survivors_agree();
    report(2, 1, "0x101", 5, 4, 2, "0xcccc");
    expect(true, NULL);

    /* A running survivor without a WORLD line after WORLD lost rank 3. */
    survivors_agree();
    nodes[1].comm[0].valid = false;
    expect(false, "rank 1 reported no comm line for WORLD");

    /* ... unless its application had already ended. */
    survivors_agree();
    nodes[1].comm[0].valid = false;
    nodes[1].app_reported = true;
    expect(true, NULL);

    /* Another rank map in one communicator epoch. */
    survivors_agree();
    report(2, 1, "0x101", 9, 3, 2, "0xcccc");
    expect(false, "communicator 0x101 epoch 9: node 2 holds size 3, map 0xcccc");

    /* Another size. */
    survivors_agree();
    report(1, 1, "0x101", 9, 4, 1, "0xbbbb");
    expect(false, "node 1 holds size 4");

    /* One rank twice. */
    survivors_agree();
    report(2, 1, "0x101", 9, 3, 0, "0xbbbb");
    expect(false, "nodes 0 and 2 are both rank 0");

    /* More holders than ranks (a spare adopted a rank no one lost). */
    survivors_agree();
    report(0, 1, "0x101", 9, 2, 0, "0xbbbb");
    report(1, 1, "0x101", 9, 2, 1, "0xbbbb");
    report(2, 1, "0x101", 9, 2, 2, "0xbbbb");
    expect(false, "3 live ranks hold it, its size is 2");
    return check_report("emu.comms");
}
