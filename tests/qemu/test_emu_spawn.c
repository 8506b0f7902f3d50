/* Instance command lines (QEMU and host) and the start itself: console
 * pipes, the link descriptor inherited, every other descriptor closed, a
 * program that cannot run reported by the child before exec. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qemu/launcher/emu_spawn.h"
#include "tests/check.h"

static bool has_argument(const struct emu_argv *argv, const char *option,
                         const char *value)
{
    for (unsigned i = 0; i + 1 < argv->count; i++)
        if (strcmp(argv->arg[i], option) == 0 && strcmp(argv->arg[i + 1], value) == 0)
            return true;
    return false;
}

static void setup_node(struct emu_node *node, enum emu_board board)
{
    struct torus_geometry g;
    const uint32_t sizes[2] = {4, 2};
    CHECK(torus_geometry_init(&g, 2, sizes, NULL, NULL) == TORUS_GEOMETRY_OK);
    emu_node_init(node, 5);
    node->board = board;
    emu_links_plan(&g, 5, node->link);
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
        node->link[l].fd = node->link[l].present ? 10 + (int)l : -1;
        node->link[l].peer_port = (uint16_t)(40000 + l);
    }
    node->personality_path = strdup("/o/node5.personality");
    node->qmp_name = strdup("node5.qmp");
}

static void test_qemu_command(void)
{
    struct emu_programs programs = {"qemu-system-arm", "/b/node.elf", "/b/tori-node", "/o",
                                    NULL, NULL, false};
    struct emu_node node;
    setup_node(&node, EMU_BOARD_QEMU);
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(!argv.failed && argv.arg[argv.count] == NULL);
    CHECK(strcmp(argv.arg[0], "qemu-system-arm") == 0);
    CHECK(has_argument(&argv, "-M", "virt") && has_argument(&argv, "-cpu", "cortex-a15"));
    CHECK(has_argument(&argv, "-kernel", "/b/node.elf"));
    CHECK(has_argument(&argv, "-device",
                       "loader,file=/o/node5.personality,addr=0x40100000,force-raw=on"));
    CHECK(has_argument(&argv, "-global", "virtio-mmio.force-legacy=false"));
    CHECK(has_argument(&argv, "-netdev", "dgram,id=l0,local.type=fd,local.str=10"));
    CHECK(has_argument(&argv, "-device",
                       "virtio-net-device,netdev=l0,mac=02:74:00:00:05:00,bus=virtio-mmio-bus.0"));
    CHECK(has_argument(&argv, "-netdev", "dgram,id=l3,local.type=fd,local.str=13"));
    CHECK(has_argument(&argv, "-device",
                       "virtio-net-device,netdev=l3,mac=02:74:00:00:05:03,bus=virtio-mmio-bus.3"));
    CHECK(has_argument(&argv, "-qmp", "unix:node5.qmp,server=on,wait=off"));
    CHECK(has_argument(&argv, "-serial", "chardev:console"));
    unsigned netdevs = 0;
    for (unsigned i = 0; i < argv.count; i++) {
        netdevs += strcmp(argv.arg[i], "-netdev") == 0;
        CHECK(strstr(argv.arg[i], "remote") == NULL);
        CHECK(strcmp(argv.arg[i], "-nographic") != 0);
    }
    CHECK(netdevs == 4); /* 4x2 torus: x+ x- y+ y- */
    emu_argv_free(&argv);
    emu_node_release(&node);
}

static void test_host_command(void)
{
    struct emu_programs programs = {"qemu-system-arm", "/b/node.elf", "/b/tori-node", "/o",
                                    NULL, NULL, false};
    struct emu_node node;
    setup_node(&node, EMU_BOARD_HOST);
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(strcmp(argv.arg[0], "/b/tori-node") == 0);
    CHECK(has_argument(&argv, "--personality", "/o/node5.personality"));
    CHECK(has_argument(&argv, "--link", "x+:fd=10:peer=127.0.0.1:40000"));
    CHECK(has_argument(&argv, "--link", "x-:fd=11:peer=127.0.0.1:40001"));
    CHECK(has_argument(&argv, "--link", "y+:fd=12:peer=127.0.0.1:40002"));
    CHECK(has_argument(&argv, "--link", "y-:fd=13:peer=127.0.0.1:40003"));
    CHECK(argv.count == 3 + 2 * 4);
    emu_argv_free(&argv);
    /* --job: the same block for every node, named on the command line. */
    programs.job = "/o/job.bin";
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(has_argument(&argv, "--job", "/o/job.bin") && argv.count == 5 + 2 * 4);
    emu_argv_free(&argv);
    /* The run's key (emu_auth.h) by file name, or keyless by --auth off. */
    programs.key_file = "/proc/self/fd/7";
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(has_argument(&argv, "--key-file", "/proc/self/fd/7") && argv.count == 7 + 2 * 4);
    emu_argv_free(&argv);
    programs.key_file = NULL;
    programs.auth_off = true;
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(has_argument(&argv, "--auth", "off") && argv.count == 7 + 2 * 4);
    emu_argv_free(&argv);
    emu_node_release(&node);
}

/* --pcap: every link end captured, QEMU by filter-dump on its netdev, a
 * host node by its own --pcap; a later start writes new files. */
static void test_pcap_commands(void)
{
    struct emu_programs programs = {"qemu-system-arm", "/b/node.elf", "/b/tori-node", "/o",
                                    NULL, NULL, false};
    struct emu_node node;
    setup_node(&node, EMU_BOARD_QEMU);
    node.pcap = true;
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(has_argument(&argv, "-object", "filter-dump,id=p0,netdev=l0,file=pcap/node5-x+.pcap"));
    CHECK(has_argument(&argv, "-object", "filter-dump,id=p3,netdev=l3,file=pcap/node5-y-.pcap"));
    emu_argv_free(&argv);
    node.board = EMU_BOARD_HOST;
    node.starts = 1; /* its second start */
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(has_argument(&argv, "--pcap", "x+:pcap/node5-x+-2.pcap"));
    CHECK(has_argument(&argv, "--pcap", "y-:pcap/node5-y--2.pcap"));
    CHECK(argv.count == 3 + 4 * 4);
    emu_argv_free(&argv);
    char name[8];
    emu_spawn_pcap_name(&node, 0, name, sizeof name); /* does not fit: empty */
    CHECK(name[0] == '\0');
    emu_node_release(&node);
}

/* --job on QEMU: a second loader blob at the job address of the page. */
static void test_qemu_job(void)
{
    struct emu_programs programs = {"qemu-system-arm", "/b/node.elf", "/b/tori-node", "/o",
                                    "/o/job.bin", NULL, false};
    struct emu_node node;
    setup_node(&node, EMU_BOARD_QEMU);
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_spawn_command(&programs, &node, &argv);
    CHECK(has_argument(&argv, "-device", "loader,file=/o/job.bin,addr=0x40100400,force-raw=on"));
    CHECK(has_argument(&argv, "-device",
                       "loader,file=/o/node5.personality,addr=0x40100000,force-raw=on"));
    emu_argv_free(&argv);
    emu_node_release(&node);
}

static void test_start(void)
{
    char directory[] = "/tmp/tori-emu-spawn-XXXXXX";
    CHECK(mkdtemp(directory) != NULL);
    struct emu_programs programs = {"qemu-system-arm", "-", "/bin/sh", directory,
                                    NULL, NULL, false};
    struct emu_node node;
    emu_node_init(&node, 0);
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) == 0);
    node.link[2].present = true;
    node.link[2].fd = pair[0];
    int private_pipe[2];
    CHECK(pipe2(private_pipe, O_CLOEXEC) == 0);

    char script[512];
    snprintf(script, sizeof script,
             "printf hello >&%d; "
             "if [ -e /proc/self/fd/%d ]; then echo leaked; else echo closed; fi; "
             "pwd; echo to-stderr >&2; read command; echo got:$command",
             pair[0], private_pipe[0]);
    struct emu_argv argv;
    emu_argv_init(&argv);
    emu_argv_add(&argv, "sh");
    emu_argv_add(&argv, "-c");
    emu_argv_add(&argv, "%s", script);
    char error[256] = "";
    CHECK(emu_spawn_start(&programs, &node, &argv, error, sizeof error));
    CHECK(node.pid > 0 && node.console_in >= 0 && node.console_out >= 0);
    CHECK(emu_node_send(&node, "ping all"));

    char output[512] = "";
    size_t used = 0;
    fcntl(node.console_out, F_SETFL, 0);
    for (;;) {
        ssize_t n = read(node.console_out, output + used, sizeof output - 1 - used);
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    output[used] = '\0';
    char expected[512];
    snprintf(expected, sizeof expected, "closed\n%s\nto-stderr\ngot:ping all\n", directory);
    CHECK(strcmp(output, expected) == 0);
    if (strcmp(output, expected) != 0)
        fprintf(stderr, "child said:\n%s", output);
    char datagram[16] = "";
    CHECK(recv(pair[1], datagram, sizeof datagram - 1, MSG_DONTWAIT) == 5);
    CHECK(strcmp(datagram, "hello") == 0);
    int status = 0;
    CHECK(waitpid(node.pid, &status, 0) == node.pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    /* The launcher's own copy stays close-on-exec. */
    CHECK((fcntl(pair[0], F_GETFD) & FD_CLOEXEC) != 0);
    emu_argv_free(&argv);
    emu_node_release(&node);

    /* A program that is not there: the child says so before exec fails. */
    emu_node_init(&node, 1);
    emu_argv_add(&argv, "/nonexistent/tori-node");
    CHECK(!emu_spawn_start(&programs, &node, &argv, error, sizeof error));
    CHECK_CONTAINS(error, "cannot run /nonexistent/tori-node: No such file or directory");
    CHECK(node.pid > 0 && waitpid(node.pid, &status, 0) == node.pid &&
          WIFEXITED(status) && WEXITSTATUS(status) == 127);
    emu_argv_free(&argv);
    emu_node_release(&node);

    char resolved[4096];
    CHECK(emu_spawn_find_program("sh", resolved, sizeof resolved));
    CHECK(resolved[0] == '/');
    CHECK(!emu_spawn_find_program("tori-no-such-program-anywhere", resolved,
                                  sizeof resolved));
    CHECK(!emu_spawn_find_program("/etc/passwd", resolved, sizeof resolved));
    close(pair[0]);
    close(pair[1]);
    close(private_pipe[0]);
    close(private_pipe[1]);
    rmdir(directory);
}

int main(void)
{
    test_qemu_job();
    test_qemu_command();
    test_host_command();
    test_pcap_commands();
    test_start();
    return check_report("emu.spawn");
}
