/* The run's job key (see emu_auth.h). */
#define _GNU_SOURCE
#include "qemu/launcher/emu_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/job.h"
#include "qemu/launcher/emu_run.h"

/* 16 bytes from /dev/urandom that job_validate takes for a key (a draw it
 * would refuse as a pattern has a chance under 10^-24: draw again). */
static bool draw_key(struct emu *emu, uint8_t key[JOB_KEY_BYTES])
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        emu_complain(emu, "cannot open /dev/urandom for the job key: %s", strerror(errno));
        return false;
    }
    struct job probe;
    job_set_defaults(&probe);
    probe.app = JOB_APP_ALLREDUCE;
    struct personality_error error;
    bool drawn = false;
    for (unsigned attempt = 0; attempt < 4 && !drawn; attempt++)
        drawn = read(fd, probe.job_key, JOB_KEY_BYTES) == JOB_KEY_BYTES &&
                job_has_key(&probe) && job_validate(&probe, &error);
    close(fd);
    if (!drawn) {
        emu_complain(emu, "cannot read a job key from /dev/urandom");
        return false;
    }
    memcpy(key, probe.job_key, JOB_KEY_BYTES);
    memset(probe.job_key, 0, JOB_KEY_BYTES);
    return true;
}

/* An owner-only file in <out> for MPI ranks, which mpiexec starts: no
 * descriptor of ours reaches them.  Removed with the output directory. */
static int out_file(struct emu *emu, const char *name, char *path, size_t capacity)
{
    snprintf(path, capacity, "%s/%s", emu->out_dir, name);
    unlink(path);
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

/* A memory file holding bytes, inherited by the nodes (no close-on-exec),
 * owner-only; its name for them is /proc/self/fd/N.  On the MPI board, a
 * file <out>/NAME instead. */
static bool memory_file(struct emu *emu, const char *name, const uint8_t *bytes,
                        size_t length, char *path, size_t capacity)
{
    bool mpi = emu->options->boards == EMU_BOARDS_MPI;
    int fd = mpi ? out_file(emu, name, path, capacity) : memfd_create(name, 0);
    bool ok = fd >= 0 && fchmod(fd, 0600) == 0 &&
              write(fd, bytes, length) == (ssize_t)length;
    if (!ok) {
        emu_complain(emu, "cannot make the memory file for the %s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    if (mpi)
        close(fd);
    else
        snprintf(path, capacity, "/proc/self/fd/%d", fd);
    return true;
}

/* The job block the nodes get, read back (it was checked already). */
static bool read_job(struct emu *emu, const char *path, struct job *job)
{
    uint8_t block[JOB_SIZE];
    FILE *file = fopen(path, "rbe");
    size_t length = file != NULL ? fread(block, 1, sizeof block, file) : 0;
    if (file != NULL)
        fclose(file);
    struct personality_error error;
    if (!job_decode(block, length, job, &error)) {
        emu_complain(emu, "cannot read back the job block '%s'", path);
        return false;
    }
    return true;
}

bool emu_auth_prepare(struct emu *emu)
{
    struct emu_programs *programs = &emu->programs;
    programs->auth_off = !emu->options->auth;
    programs->key_file = NULL;
    if (programs->auth_off)
        return true;
    struct job job;
    bool has_job = programs->job != NULL;
    if (has_job && !read_job(emu, programs->job, &job))
        return false;
    uint8_t key[JOB_KEY_BYTES];
    if (has_job && job_has_key(&job))
        memcpy(key, job.job_key, JOB_KEY_BYTES); /* the job's own key is the run's */
    else if (!draw_key(emu, key))
        return false;
    bool ok = memory_file(emu, "tori-key", key, JOB_KEY_BYTES, emu->program_paths.key_file,
                          sizeof emu->program_paths.key_file);
    if (ok && has_job) {
        uint8_t block[JOB_SIZE];
        memcpy(job.job_key, key, JOB_KEY_BYTES);
        job_encode(&job, block);
        ok = memory_file(emu, "tori-job", block, sizeof block, emu->program_paths.job,
                         sizeof emu->program_paths.job);
        memset(block, 0, sizeof block);
        memset(job.job_key, 0, JOB_KEY_BYTES);
        programs->job = emu->program_paths.job;
    }
    memset(key, 0, sizeof key);
    if (ok)
        programs->key_file = emu->program_paths.key_file;
    return ok;
}
