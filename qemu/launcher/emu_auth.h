/*
 * The run's job key (issue 20): made from /dev/urandom when the run starts
 * (`--auth on`, the default), put in the job block every node loads, and
 * handed to every node on its own as well: host nodes as `--key-file`,
 * QEMU nodes as a loader blob at QEMU_VIRT_KEY_ADDRESS, so that a run with
 * no job block is keyed too.  The key never touches the disk, a log or a
 * record: the keyed job block and the key are memory files (memfd) the
 * nodes inherit and open as /proc/self/fd/N; the <out>/job.bin the
 * launcher writes stays keyless.
 */
#ifndef QEMU_LAUNCHER_EMU_AUTH_H
#define QEMU_LAUNCHER_EMU_AUTH_H

#include <stdbool.h>

struct emu;

/* After the programs are checked and the job (if any) written: makes the
 * key and points emu->programs at the keyed job and key file.  With
 * `--auth off` only tells host nodes to run keyless.  False (complained)
 * on failure. */
bool emu_auth_prepare(struct emu *emu);

#endif /* QEMU_LAUNCHER_EMU_AUTH_H */
