/*
 * newlib's system calls on the node image (qemu-virt only; the host board
 * has a real libc).  newlib-nano calls these through its reentrant wrappers:
 *
 *   _sbrk   the sealed init heap (kernel/heap.h): memory during init, a
 *           panic naming the phase and the caller afterwards
 *   _write  the console, for stdout and stderr
 *   _exit   halts the node (board_halt)
 *   others  fail with the errno a system without files, processes or
 *           signals gives, so that nothing pretends to work
 *
 * newlib declares these names only while it is being built, so they are
 * declared here, where they are defined; nothing in tori calls them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/times.h>
#include <sys/types.h>

#include "board/board.h"
#include "kernel/console_output.h"
#include "kernel/heap.h"

/*
 * newlib's reentrant wrappers (_write_r and friends) read the system-call
 * layer's own errno variable and copy it into the caller's errno; the layer
 * defines it.
 */
#undef errno
extern int errno;
int errno;

struct timeval;

void *_sbrk(ptrdiff_t increment);
int _write(int fd, const void *bytes, size_t length);
int _read(int fd, void *bytes, size_t length);
_Noreturn void _exit(int status);
int _close(int fd);
int _fstat(int fd, struct stat *status);
int _isatty(int fd);
off_t _lseek(int fd, off_t offset, int whence);
int _open(const char *path, int flags, ...);
int _kill(int pid, int signal);
int _getpid(void);
int _gettimeofday(struct timeval *now, void *zone);
clock_t _times(struct tms *times);
int _unlink(const char *path);
int _link(const char *old_path, const char *new_path);
int _stat(const char *path, struct stat *status);
int _fork(void);
int _execve(const char *path, char *const argv[], char *const envp[]);
int _wait(int *status);

enum { STDIN_FD = 0, STDOUT_FD = 1, STDERR_FD = 2 };

static int fail(int error)
{
    errno = error;
    return -1;
}

static int is_console(int fd)
{
    return fd == STDIN_FD || fd == STDOUT_FD || fd == STDERR_FD;
}

void *_sbrk(ptrdiff_t increment)
{
    /* Our return address: where in newlib the request came from. */
    return heap_grow(increment, (uintptr_t)__builtin_return_address(0));
}

int _write(int fd, const void *bytes, size_t length)
{
    if (fd != STDOUT_FD && fd != STDERR_FD)
        return fail(EBADF);
    console_output_write(bytes, length);
    return (int)length;
}

int _read(int fd, void *bytes, size_t length)
{
    (void)bytes;
    (void)length;
    /* The console is output only: stdin is always at its end. */
    return fd == STDIN_FD ? 0 : fail(EBADF);
}

_Noreturn void _exit(int status)
{
    console_output_flush();
    board_halt(status);
}

int _close(int fd)
{
    (void)fd;
    return fail(EBADF);
}

int _fstat(int fd, struct stat *status)
{
    if (!is_console(fd))
        return fail(EBADF);
    status->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    if (!is_console(fd)) {
        errno = EBADF;
        return 0;
    }
    return 1;
}

off_t _lseek(int fd, off_t offset, int whence)
{
    (void)offset;
    (void)whence;
    return is_console(fd) ? fail(ESPIPE) : fail(EBADF);
}

int _open(const char *path, int flags, ...)
{
    (void)path;
    (void)flags;
    return fail(ENOENT);
}

int _kill(int pid, int signal)
{
    (void)pid;
    (void)signal;
    return fail(EINVAL);
}

int _getpid(void)
{
    return 1;
}

int _gettimeofday(struct timeval *now, void *zone)
{
    (void)now;
    (void)zone;
    return fail(ENOSYS); /* no wall clock: board_now_ns() is monotonic only */
}

clock_t _times(struct tms *times)
{
    (void)times;
    return (clock_t)fail(ENOSYS);
}

int _unlink(const char *path)
{
    (void)path;
    return fail(ENOENT);
}

int _link(const char *old_path, const char *new_path)
{
    (void)old_path;
    (void)new_path;
    return fail(EMLINK);
}

int _stat(const char *path, struct stat *status)
{
    (void)path;
    (void)status;
    return fail(ENOENT);
}

int _fork(void)
{
    return fail(EAGAIN);
}

int _execve(const char *path, char *const argv[], char *const envp[])
{
    (void)path;
    (void)argv;
    (void)envp;
    return fail(ENOMEM);
}

int _wait(int *status)
{
    (void)status;
    return fail(ECHILD);
}
