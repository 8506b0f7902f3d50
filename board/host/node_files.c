/* The files a process node reads at start (see node_files.h). */
#include "board/host/node_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board/board.h"
#include "kernel/job.h"
#include "kernel/personality.h"

/* Room for a block larger than ours, so "too long" is not silently cut. */
static uint8_t personality_block[PERSONALITY_SIZE * 2];
static size_t personality_length;
static bool personality_present;

/* The same room for the job block; a named file must be readable. */
static uint8_t job_block[JOB_SIZE * 2];
static size_t job_length;

/* --key-file's key, and --auth off. */
static uint8_t link_key[BOARD_KEY_BYTES];
static bool link_key_present;
static bool auth_off;

static const char *personality_path;
static const char *job_path;
static const char *key_path;

const uint8_t *board_personality_block(size_t *length)
{
    *length = personality_present ? personality_length : 0;
    return personality_present ? personality_block : NULL;
}

bool board_link_key(uint8_t key[BOARD_KEY_BYTES])
{
    if (link_key_present)
        memcpy(key, link_key, BOARD_KEY_BYTES);
    return link_key_present;
}

bool board_keyless_allowed(void)
{
    return auth_off;
}

const uint8_t *board_job_block(size_t *length)
{
    *length = job_length;
    return job_length != 0 ? job_block : NULL;
}

/* One option with a file name: true when argv[*index] is it. */
static int file_option(const char *program, const char *option, int argc, char **argv,
                       int *index, const char **path)
{
    if (strcmp(argv[*index], option) != 0)
        return 0;
    if (*index + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a file name\n", program, option);
        return -1;
    }
    *path = argv[++*index];
    return 1;
}

int node_files_option(const char *program, int argc, char **argv, int *index)
{
    int taken = file_option(program, "--personality", argc, argv, index, &personality_path);
    if (taken == 0)
        taken = file_option(program, "--job", argc, argv, index, &job_path);
    if (taken == 0)
        taken = file_option(program, "--key-file", argc, argv, index, &key_path);
    if (taken != 0)
        return taken;
    if (strcmp(argv[*index], "--auth") != 0)
        return 0;
    if (*index + 1 < argc && strcmp(argv[*index + 1], "off") == 0) {
        auth_off = true;
        ++*index;
        return 1;
    }
    fprintf(stderr, "%s: --auth takes only 'off' (on is the default: "
                    "the key comes from the job block or --key-file)\n", program);
    return -1;
}

/* A missing or unreadable file is reported by the kernel as "missing". */
static void load_personality(const char *program, const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open personality '%s': %s\n", program, path,
                strerror(errno));
        return;
    }
    ssize_t got = read(fd, personality_block, sizeof personality_block);
    close(fd);
    if (got > 0) {
        personality_length = (size_t)got;
        personality_present = true;
    }
}

/* The key file: exactly BOARD_KEY_BYTES bytes, not readable by group or
 * others (a key anyone can read protects nothing).  Never printed. */
static bool load_key(const char *program, const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open key file '%s': %s\n", program, path,
                strerror(errno));
        return false;
    }
    struct stat info;
    uint8_t buffer[BOARD_KEY_BYTES + 1];
    ssize_t got = fstat(fd, &info) == 0 ? read(fd, buffer, sizeof buffer) : -1;
    close(fd);
    if (got != (ssize_t)BOARD_KEY_BYTES) {
        fprintf(stderr, "%s: key file '%s' must hold exactly %u bytes\n", program, path,
                (unsigned)BOARD_KEY_BYTES);
        return false;
    }
    if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        fprintf(stderr, "%s: key file '%s' is open to group or others "
                        "(expected mode 0600 or 0400)\n", program, path);
        return false;
    }
    memcpy(link_key, buffer, BOARD_KEY_BYTES);
    memset(buffer, 0, sizeof buffer); /* one copy of the key, not two */
    link_key_present = true;
    return true;
}

/* A job named but unreadable (or empty) is refused before the node starts:
 * running no application instead would hide the mistake. */
static bool load_job(const char *program, const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open job '%s': %s\n", program, path, strerror(errno));
        return false;
    }
    ssize_t got = read(fd, job_block, sizeof job_block);
    int read_errno = errno;
    close(fd);
    if (got <= 0) {
        fprintf(stderr, "%s: cannot read job '%s': %s\n", program, path,
                got < 0 ? strerror(read_errno) : "the file is empty");
        return false;
    }
    job_length = (size_t)got;
    return true;
}

bool node_files_load(const char *program)
{
    if (personality_path != NULL)
        load_personality(program, personality_path);
    if (job_path != NULL && !load_job(program, job_path))
        return false;
    if (key_path != NULL && auth_off) {
        fprintf(stderr, "%s: --key-file and --auth off contradict each other\n", program);
        return false;
    }
    return key_path == NULL || load_key(program, key_path);
}
