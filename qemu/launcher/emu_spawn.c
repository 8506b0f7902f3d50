#define _GNU_SOURCE
#include "qemu/launcher/emu_spawn.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Plain #defines, shared with the board and its linker script. */
#include "board/qemu-virt/memory_map.h"
#include "kernel/job.h"

void emu_argv_init(struct emu_argv *argv)
{
    argv->arg = NULL;
    argv->count = 0;
    argv->capacity = 0;
    argv->failed = false;
}

void emu_argv_free(struct emu_argv *argv)
{
    for (unsigned i = 0; i < argv->count; i++)
        free(argv->arg[i]);
    free(argv->arg);
    emu_argv_init(argv);
}

void emu_argv_add(struct emu_argv *argv, const char *format, ...)
{
    if (argv->failed)
        return;
    if (argv->count + 2 > argv->capacity) {
        unsigned capacity = argv->capacity == 0 ? 32 : argv->capacity * 2;
        char **grown = realloc(argv->arg, capacity * sizeof *grown);
        if (grown == NULL) {
            argv->failed = true;
            return;
        }
        argv->arg = grown;
        argv->capacity = capacity;
    }
    va_list arguments;
    va_start(arguments, format);
    char *text = NULL;
    int length = vasprintf(&text, format, arguments);
    va_end(arguments);
    if (length < 0) {
        argv->failed = true;
        return;
    }
    argv->arg[argv->count++] = text;
    argv->arg[argv->count] = NULL;
}

void emu_argv_print(const struct emu_argv *argv, FILE *out)
{
    for (unsigned i = 0; i < argv->count; i++)
        fprintf(out, "%s%s", i > 0 ? " " : "", argv->arg[i]);
    fputc('\n', out);
}

void emu_spawn_pcap_name(const struct emu_node *node, unsigned l, char *name,
                         size_t capacity)
{
    int length = node->starts == 0
                     ? snprintf(name, capacity, "pcap/node%u-%s.pcap", (unsigned)node->rank,
                                torus_geometry_link_name(l))
                     : snprintf(name, capacity, "pcap/node%u-%s-%u.pcap", (unsigned)node->rank,
                                torus_geometry_link_name(l), node->starts + 1);
    if (length < 0 || (size_t)length >= capacity)
        name[0] = '\0';
}

static void qemu_command(const struct emu_programs *programs,
                         const struct emu_node *node, struct emu_argv *argv)
{
    emu_argv_add(argv, "%s", programs->qemu);
    emu_argv_add(argv, "-M");
    emu_argv_add(argv, "virt");
    emu_argv_add(argv, "-cpu");
    emu_argv_add(argv, "cortex-a15");
    emu_argv_add(argv, "-m");
    emu_argv_add(argv, "%uM", (unsigned)QEMU_VIRT_RAM_SIZE_MIB);
    emu_argv_add(argv, "-nodefaults");
    emu_argv_add(argv, "-display");
    emu_argv_add(argv, "none");
    emu_argv_add(argv, "-chardev");
    emu_argv_add(argv, "stdio,id=console,signal=off");
    emu_argv_add(argv, "-serial");
    emu_argv_add(argv, "chardev:console");
    emu_argv_add(argv, "-kernel");
    emu_argv_add(argv, "%s", programs->image);
    emu_argv_add(argv, "-device");
    emu_argv_add(argv, "loader,file=%s,addr=0x%x,force-raw=on", node->personality_path,
                 (unsigned)QEMU_VIRT_PERSONALITY_ADDRESS);
    if (programs->job != NULL) {
        emu_argv_add(argv, "-device");
        emu_argv_add(argv, "loader,file=%s,addr=0x%x,force-raw=on", programs->job,
                     (unsigned)QEMU_VIRT_JOB_ADDRESS);
    }
    if (programs->key_file != NULL) { /* the key, job block or not */
        emu_argv_add(argv, "-device");
        emu_argv_add(argv, "loader,file=%s,addr=0x%x,force-raw=on", programs->key_file,
                     (unsigned)QEMU_VIRT_KEY_ADDRESS);
    }
    emu_argv_add(argv, "-global");
    emu_argv_add(argv, "virtio-mmio.force-legacy=false");
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
        const struct emu_link *link = &node->link[l];
        if (!link->present)
            continue;
        char mac[18];
        emu_links_format_mac(link->mac, mac);
        emu_argv_add(argv, "-netdev");
        emu_argv_add(argv,
                     "dgram,id=l%u,local.type=fd,local.str=%d", l, link->fd);
        emu_argv_add(argv, "-device");
        emu_argv_add(argv, "virtio-net-device,netdev=l%u,mac=%s,bus=virtio-mmio-bus.%u", l,
                     mac, l);
        if (node->pcap) {
            /* QEMU's own capture of the netdev, both directions. */
            char name[64];
            emu_spawn_pcap_name(node, l, name, sizeof name);
            emu_argv_add(argv, "-object");
            emu_argv_add(argv, "filter-dump,id=p%u,netdev=l%u,file=%s", l, l, name);
        }
    }
    emu_argv_add(argv, "-qmp");
    emu_argv_add(argv, "unix:%s,server=on,wait=off", node->qmp_name);
}

static void host_command(const struct emu_programs *programs,
                         const struct emu_node *node, struct emu_argv *argv)
{
    emu_argv_add(argv, "%s", programs->node_binary);
    emu_argv_add(argv, "--personality");
    emu_argv_add(argv, "%s", node->personality_path);
    if (programs->job != NULL) {
        emu_argv_add(argv, "--job");
        emu_argv_add(argv, "%s", programs->job);
    }
    if (programs->key_file != NULL) {
        emu_argv_add(argv, "--key-file");
        emu_argv_add(argv, "%s", programs->key_file);
    } else if (programs->auth_off) {
        emu_argv_add(argv, "--auth");
        emu_argv_add(argv, "off");
    }
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++) {
        const struct emu_link *link = &node->link[l];
        if (!link->present)
            continue;
        emu_argv_add(argv, "--link");
        emu_argv_add(argv, "%s:fd=%d:peer=127.0.0.1:%u", torus_geometry_link_name(l),
                     link->fd, (unsigned)link->peer_port);
        if (node->pcap) {
            char name[64];
            emu_spawn_pcap_name(node, l, name, sizeof name);
            emu_argv_add(argv, "--pcap");
            emu_argv_add(argv, "%s:%s", torus_geometry_link_name(l), name);
        }
    }
}

void emu_spawn_command(const struct emu_programs *programs,
                       const struct emu_node *node, struct emu_argv *argv)
{
    if (node->board == EMU_BOARD_QEMU)
        qemu_command(programs, node, argv);
    else
        host_command(programs, node, argv);
}

bool emu_spawn_find_program(const char *program, char *resolved, size_t capacity)
{
    if (strchr(program, '/') != NULL) {
        struct stat info;
        snprintf(resolved, capacity, "%s", program);
        return stat(program, &info) == 0 && S_ISREG(info.st_mode) &&
               access(program, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/usr/bin:/bin";
    while (*path != '\0') {
        const char *end = strchr(path, ':');
        size_t length = end != NULL ? (size_t)(end - path) : strlen(path);
        char candidate[4096];
        if (length > 0 && length + strlen(program) + 2 < sizeof candidate) {
            snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, path, program);
            struct stat info;
            if (stat(candidate, &info) == 0 && S_ISREG(info.st_mode) &&
                access(candidate, X_OK) == 0) {
                snprintf(resolved, capacity, "%s", candidate);
                return true;
            }
        }
        if (end == NULL)
            break;
        path = end + 1;
    }
    return false;
}

/* The common names of ELF machines a wrong image is likely to be built for. */
static const char *machine_name(unsigned machine)
{
    switch (machine) {
    case EM_386:
        return " (i386)";
    case EM_X86_64:
        return " (x86-64)";
    case EM_AARCH64:
        return " (AArch64)";
    case EM_RISCV:
        return " (RISC-V)";
    default:
        return "";
    }
}

#define IMAGE_EXPECTED "expected a 32-bit ARM ELF node image such as build/qemu-virt/node.elf"

/* The node image, by its ELF header: what QEMU's -kernel needs to boot a node. */
static bool check_image(const char *path, char *error, size_t capacity)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        if (errno == ENOENT)
            snprintf(error, capacity, "node image '%s' not found (expected a built image: "
                                      "run ./tori build qemu-virt, or pass --image FILE)",
                     path);
        else
            snprintf(error, capacity, "cannot read node image '%s': %s (" IMAGE_EXPECTED ")",
                     path, strerror(errno));
        return false;
    }
    if (!S_ISREG(info.st_mode)) {
        snprintf(error, capacity, "node image '%s' is %s (" IMAGE_EXPECTED ")", path,
                 S_ISDIR(info.st_mode) ? "a directory" : "not a regular file");
        return false;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(error, capacity, "cannot read node image '%s': %s (" IMAGE_EXPECTED ")", path,
                 strerror(errno));
        return false;
    }
    unsigned char header[sizeof(Elf32_Ehdr)];
    ssize_t got = read(fd, header, sizeof header);
    close(fd);
    if (got < EI_NIDENT || memcmp(header, ELFMAG, SELFMAG) != 0) {
        snprintf(error, capacity, "node image '%s' is not an ELF file (" IMAGE_EXPECTED
                                  "; node.bin is for a loader, not for -kernel)",
                 path);
        return false;
    }
    if (got < (ssize_t)sizeof header) {
        snprintf(error, capacity, "node image '%s' is a truncated ELF file (" IMAGE_EXPECTED ")",
                 path);
        return false;
    }
    bool big = header[EI_DATA] == ELFDATA2MSB;
    unsigned type = big ? (unsigned)(header[16] << 8 | header[17])
                        : (unsigned)(header[16] | header[17] << 8);
    unsigned machine = big ? (unsigned)(header[18] << 8 | header[19])
                           : (unsigned)(header[18] | header[19] << 8);
    if (machine != EM_ARM) {
        snprintf(error, capacity,
                 "node image '%s' is an ELF file for machine %u%s, not ARM (" IMAGE_EXPECTED ")",
                 path, machine, machine_name(machine));
        return false;
    }
    if (header[EI_CLASS] != ELFCLASS32 || header[EI_DATA] != ELFDATA2LSB) {
        snprintf(error, capacity, "node image '%s' is a %s-bit %s-endian ARM ELF file, not "
                                  "32-bit little-endian (" IMAGE_EXPECTED ")",
                 path, header[EI_CLASS] == ELFCLASS64 ? "64" : "32", big ? "big" : "little");
        return false;
    }
    if (type != ET_EXEC) {
        snprintf(error, capacity, "node image '%s' is an ARM ELF %s, not an executable "
                                  "(" IMAGE_EXPECTED ")",
                 path, type == ET_REL ? "object file" : type == ET_DYN ? "shared object"
                                                                        : "file of an odd type");
        return false;
    }
    return true;
}

#define NODE_PROGRAM_EXPECTED \
    "expected a built tori-node: run ./tori build host, or pass --node-binary FILE"

static bool check_node_program(const char *path, char *resolved, size_t resolved_capacity,
                               char *error, size_t capacity)
{
    if (emu_spawn_find_program(path, resolved, resolved_capacity))
        return true;
    struct stat info;
    if (strchr(path, '/') == NULL || stat(path, &info) != 0)
        snprintf(error, capacity, "node program '%s' not found (" NODE_PROGRAM_EXPECTED ")",
                 path);
    else
        snprintf(error, capacity, "node program '%s' is %s (" NODE_PROGRAM_EXPECTED ")", path,
                 S_ISDIR(info.st_mode)    ? "a directory"
                 : !S_ISREG(info.st_mode) ? "not a regular file"
                                          : "not executable");
    return false;
}

_Static_assert(EMU_PATH_MAX >= PATH_MAX, "realpath writes up to PATH_MAX bytes");

/* out: EMU_PATH_MAX bytes. */
static bool absolute(const char *path, char *out, const char *what, char *error,
                     size_t capacity)
{
    if (realpath(path, out) == NULL) {
        snprintf(error, capacity, "cannot resolve %s '%s': %s", what, path, strerror(errno));
        return false;
    }
    return true;
}

/* The job block is decoded here, so a bad one stops the run before any
 * node starts instead of halting every node. */
static bool check_job(const char *path, char *out, char *error, size_t capacity)
{
    uint8_t block[JOB_SIZE + 1];
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        snprintf(error, capacity, "--job '%s' cannot be read: %s", path, strerror(errno));
        return false;
    }
    size_t length = fread(block, 1, sizeof block, file);
    fclose(file);
    struct job job;
    struct personality_error invalid;
    char reason[192];
    if (length > JOB_SIZE) {
        snprintf(error, capacity, "--job '%s' is longer than a job block (expected %u bytes "
                 "written by tori-personality --job-out)", path, (unsigned)JOB_SIZE);
        return false;
    }
    if (!job_decode(block, length, &job, &invalid)) {
        job_format_error(&invalid, reason, sizeof reason);
        snprintf(error, capacity, "--job '%s': %s", path, reason);
        return false;
    }
    return absolute(path, out, "job block", error, capacity);
}

bool emu_spawn_check_programs(const struct emu_programs *programs, bool want_qemu,
                              bool want_host, struct emu_program_paths *paths, char *error,
                              size_t capacity)
{
    char found[PATH_MAX];
    memset(paths, 0, sizeof *paths);
    if (want_qemu) {
        if (!emu_spawn_find_program(programs->qemu, found, sizeof found)) {
            if (strchr(programs->qemu, '/') == NULL)
                snprintf(error, capacity,
                         "%s not found in PATH (expected QEMU for Arm: install the Debian "
                         "package qemu-system-arm, or pass --qemu PROGRAM)",
                         programs->qemu);
            else
                snprintf(error, capacity, "--qemu '%s' is not an executable file",
                         programs->qemu);
            return false;
        }
        if (!absolute(found, paths->qemu, "QEMU", error, capacity))
            return false;
    }
    if (want_host) {
        if (!check_node_program(programs->node_binary, found, sizeof found, error, capacity) ||
            !absolute(found, paths->node_binary, "node program", error, capacity))
            return false;
    }
    if (want_qemu) {
        if (!check_image(programs->image, error, capacity) ||
            !absolute(programs->image, paths->image, "node image", error, capacity))
            return false;
    }
    return programs->job == NULL || check_job(programs->job, paths->job, error, capacity);
}

/* In the child, between fork and exec: only async-signal-safe calls. */
void emu_spawn_child_reset(pid_t parent)
{
    /* Die with the launcher, whatever kills it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

static _Noreturn void child_exec(const struct emu_programs *programs,
                                 const struct emu_node *node,
                                 const struct emu_argv *argv, pid_t parent,
                                 int stdin_read, int stdout_write, int report)
{
    int error = 0;
    emu_spawn_child_reset(parent);
    if (dup2(stdin_read, STDIN_FILENO) < 0 || dup2(stdout_write, STDOUT_FILENO) < 0 ||
        dup2(stdout_write, STDERR_FILENO) < 0)
        error = errno;
    for (unsigned l = 0; l < CONFIG_MAX_LINKS && error == 0; l++)
        if (node->link[l].present && fcntl(node->link[l].fd, F_SETFD, 0) != 0)
            error = errno;
    if (error == 0 && chdir(programs->out_dir) != 0)
        error = errno;
    if (error == 0) {
        execvp(argv->arg[0], argv->arg);
        error = errno;
    }
    ssize_t ignored = write(report, &error, sizeof error);
    (void)ignored;
    _exit(127);
}

bool emu_spawn_start(const struct emu_programs *programs, struct emu_node *node,
                     const struct emu_argv *argv, char *error, size_t capacity)
{
    if (argv->failed || argv->count == 0) {
        snprintf(error, capacity, "out of memory building the command line");
        return false;
    }
    int input[2], output[2], report[2];
    if (pipe2(input, O_CLOEXEC) != 0) {
        snprintf(error, capacity, "pipe: %s", strerror(errno));
        return false;
    }
    if (pipe2(output, O_CLOEXEC) != 0) {
        snprintf(error, capacity, "pipe: %s", strerror(errno));
        close(input[0]);
        close(input[1]);
        return false;
    }
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(error, capacity, "pipe: %s", strerror(errno));
        close(input[0]);
        close(input[1]);
        close(output[0]);
        close(output[1]);
        return false;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child_exec(programs, node, argv, parent, input[0], output[1], report[1]);
    int fork_error = errno;
    close(input[0]);
    close(output[1]);
    close(report[1]);
    if (pid < 0) {
        snprintf(error, capacity, "fork: %s", strerror(fork_error));
        close(input[1]);
        close(output[0]);
        close(report[0]);
        return false;
    }
    /* The report pipe closes at a successful exec, or carries errno. */
    int exec_error = 0;
    ssize_t got;
    do
        got = read(report[0], &exec_error, sizeof exec_error);
    while (got < 0 && errno == EINTR);
    close(report[0]);
    node->pid = pid;
    node->console_in = input[1];
    node->console_out = output[0];
    fcntl(node->console_in, F_SETFL, O_NONBLOCK);
    fcntl(node->console_out, F_SETFL, O_NONBLOCK);
    if (got == (ssize_t)sizeof exec_error && exec_error != 0) {
        snprintf(error, capacity, "cannot run %s: %s", argv->arg[0], strerror(exec_error));
        return false; /* the child exits with 127; the caller reaps it */
    }
    return true;
}
