/*
 * Starting and stopping node instances.
 *
 * The command lines are built first (and can be tested without starting
 * anything), then emu_spawn_start forks and execs with:
 *   - stdin and stdout (stderr too) as pipes to the launcher;
 *   - the node's link sockets inherited (close-on-exec cleared in the child
 *     only; every other launcher descriptor is close-on-exec);
 *   - PR_SET_PDEATHSIG(SIGKILL), so that no instance outlives the launcher
 *     even when the launcher is killed with SIGKILL; children stay in the
 *     launcher's process group, so Ctrl-C at a terminal reaches them too;
 *   - the working directory <out> (QEMU's QMP socket name is relative to it,
 *     which keeps it under the 108-byte limit of unix socket paths).
 *
 * QEMU node:
 *   qemu-system-arm -M virt -cpu cortex-a15 -m 128M -nodefaults
 *     -display none -chardev stdio,id=console,signal=off
 *     -serial chardev:console -kernel node.elf
 *     -device loader,file=<out>/nodeN.personality,addr=0x40100000,force-raw=on
 *     -global virtio-mmio.force-legacy=false
 *     -netdev dgram,id=lL,local.type=fd,local.str=FD
 *             (FD is bound to our port and connected to the peer's port:
 *             QEMU 7.2 refuses remote.* beside local.type=fd)
 *     -device virtio-net-device,netdev=lL,mac=02:74:RR:RR:RR:LL,
 *             bus=virtio-mmio-bus.L                      (per link L)
 *     -qmp unix:nodeN.qmp,server=on,wait=off
 *
 * Host node:
 *   tori-node --personality <out>/nodeN.personality
 *     --link DIR:fd=FD:peer=127.0.0.1:PEER_PORT ...      (per link, DIR x+ ...)
 */
#ifndef QEMU_LAUNCHER_EMU_SPAWN_H
#define QEMU_LAUNCHER_EMU_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "qemu/launcher/emu_node.h"

/* What to run. */
struct emu_programs {
    const char *qemu;        /* qemu-system-arm, searched in PATH */
    const char *image;       /* node.elf for QEMU nodes */
    const char *node_binary; /* tori-node for host nodes */
    const char *out_dir;     /* absolute; the children's working directory */
    const char *job;         /* the job block every node gets (NULL: none) */
    const char *key_file;    /* host nodes' --key-file (NULL: none; emu_auth.h) */
    bool auth_off;           /* --auth off: host nodes run keyless */
};

/*
 * The capture of node's link l in its current start, relative to <out>:
 * "pcap/node3-x+.pcap", then "pcap/node3-x+-2.pcap" from its second start
 * on, so a restart keeps its earlier life's capture.  Empty when it does
 * not fit capacity.
 */
void emu_spawn_pcap_name(const struct emu_node *node, unsigned l, char *name,
                         size_t capacity);

/* A NULL-terminated argument vector of allocated strings. */
struct emu_argv {
    char **arg;
    unsigned count;
    unsigned capacity;
    bool failed; /* an allocation failed: do not run it */
};

void emu_argv_init(struct emu_argv *argv);
void emu_argv_free(struct emu_argv *argv);
__attribute__((format(printf, 2, 3))) void emu_argv_add(struct emu_argv *argv,
                                                        const char *format, ...);
/* The whole command line, space-separated, for logs. */
void emu_argv_print(const struct emu_argv *argv, FILE *out);

/* Builds the command line of node (by its board). */
void emu_spawn_command(const struct emu_programs *programs,
                       const struct emu_node *node, struct emu_argv *argv);

/*
 * Starts node with argv: makes its console pipes, forks, execs.  On success
 * fills pid, console_in, console_out; when the program cannot be executed
 * (reported back by the child before exec returns) writes why to error.
 */
bool emu_spawn_start(const struct emu_programs *programs, struct emu_node *node,
                     const struct emu_argv *argv, char *error, size_t capacity);

/*
 * In a child the launcher forked, before exec: dies with the launcher
 * (exits 126 when it is already gone), and gives the program default
 * signals (no mask; SIGPIPE, SIGINT, SIGTERM, SIGHUP at their defaults).
 */
void emu_spawn_child_reset(pid_t parent);

/*
 * True when program can be run: an executable file, or found in PATH when
 * it has no slash.  Fills resolved (capacity bytes) with the path used.
 */
bool emu_spawn_find_program(const char *program, char *resolved, size_t capacity);

/* Linux's PATH_MAX, which strict C11 headers do not define. */
#define EMU_PATH_MAX 4096

/* Absolute paths of what a run starts (emu_spawn_check_programs). */
struct emu_program_paths {
    char qemu[EMU_PATH_MAX];
    char image[EMU_PATH_MAX];
    char node_binary[EMU_PATH_MAX];
    char job[EMU_PATH_MAX]; /* empty: no job */
    char key_file[EMU_PATH_MAX]; /* /proc/self/fd/N of the run's key, <out>/tori-key (MPI) */
};

/*
 * Checks, before anything starts, what the nodes of a run need: with
 * want_qemu, programs->qemu (searched in PATH when it has no slash) and
 * programs->image, which must be a readable 32-bit little-endian ARM ELF
 * executable (QEMU's -kernel boots nothing else usefully); with want_host,
 * programs->node_binary, an executable regular file.  Fills paths with
 * absolute paths (the children run in the output directory, where a
 * relative path would name nothing).  On failure writes one line to error:
 * the file, what is wrong with it, and what was expected.
 */
bool emu_spawn_check_programs(const struct emu_programs *programs, bool want_qemu,
                              bool want_host, struct emu_program_paths *paths, char *error,
                              size_t capacity);

#endif /* QEMU_LAUNCHER_EMU_SPAWN_H */
