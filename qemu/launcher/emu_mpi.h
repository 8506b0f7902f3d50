/*
 * The MPI board under the launcher (tori-emu --board mpi, issue 18): every
 * node is a rank of one `mpiexec` job the launcher starts, and each rank's
 * console is a UNIX stream socket <out>/nodeN.ctl the launcher listens on
 * (mpiexec forwards stdin to rank 0 only, so a per-rank channel is needed
 * for commands).  The rank connects at start; the launcher takes its pid
 * from the socket (SO_PEERCRED), so kill and hang are real signals to the
 * rank, and a rank's end shows as the end of its console.
 *
 * mpiexec runs as
 *   mpiexec -disable-auto-cleanup -genv UCX_TLS sm,self -wdir <out> -n N
 *     tori-node-mpi --personality node%r.personality --control node%r.ctl
 *     --idle-us U [--job FILE] [--key-file <out>/tori-key | --auth off]
 * (U: 500 us, times ranks/16 beyond 16 ranks, at most 20 ms.)
 * Measured with Debian's MPICH 4.0.2 (hydra, ch4:ucx): without
 * -disable-auto-cleanup hydra kills every rank when one is SIGKILLed; with
 * UCX's TCP transport a send to the dead rank times out and aborts the
 * sender; with both settings survivors live on only sometimes (hydra's
 * proxy kills them all when it reaps the dead rank before it sees the
 * rank's PMI socket close: 2 runs of 3 survived under tori-emu, none of 4
 * by hand).  So a `kill` here stops the rank dead (SIGSTOP: no more sends,
 * no more polling), the launcher counts it as ended, and its process is
 * killed when the run ends; --mpi-kill kill sends a real SIGKILL instead,
 * for launchers that survive it (emu_mpi_kill_hint names mpiexec when
 * they do not).  A rank cannot come back (restart, reboot,
 * join are refused before the run starts).
 */
#ifndef QEMU_LAUNCHER_EMU_MPI_H
#define QEMU_LAUNCHER_EMU_MPI_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "qemu/launcher/emu_run.h"

/* Opens every rank's control socket; false after a one-line error. */
bool emu_mpi_prepare(struct emu *emu);

/*
 * Starts node's rank: the world starts (one mpiexec) when the last rank's
 * personality is written; false after a one-line error (a rank that ran
 * already cannot be started again).
 */
bool emu_mpi_start(struct emu *emu, struct emu_node *node);

/* Adds the control sockets still waiting for their rank to a poll set. */
unsigned emu_mpi_poll_fds(const struct emu *emu, struct pollfd *set, uint32_t *rank,
                          unsigned n);

/* node's rank is connecting: its console is now the accepted socket. */
void emu_mpi_accept(struct emu *emu, struct emu_node *node);

/*
 * After a real kill (--mpi-kill kill): ", after a real SIGKILL of a rank
 * mpiexec took the others down (expected --mpi-kill stop, or a launcher
 * that survives SIGKILL)", for every line that reports a rank or the world
 * ending; "" otherwise.
 */
const char *emu_mpi_kill_hint(const struct emu *emu);

/* True (with the world's exit recorded) when pid is mpiexec's. */
bool emu_mpi_reaped(struct emu *emu, int pid, int status);

/*
 * Ranks that ended: their console closed, or the world ended before they
 * connected.  Calls ended(emu, node) for each.
 */
void emu_mpi_collect(struct emu *emu, void (*ended)(struct emu *, struct emu_node *));

/* The end of a run: SIGKILL to mpiexec if it is still there, and waits. */
void emu_mpi_stop(struct emu *emu);

#endif /* QEMU_LAUNCHER_EMU_MPI_H */
