/*
 * The life of each node's process: start (personality written, link queues
 * drained, instance spawned), signals, QMP, reaping exits (an unexpected
 * exit fails the run and shows the node's last log lines), and stopping
 * every node at the end so that none is left behind.  Fault runs
 * (qemu/faults/emu_fault.h) restart, signal and reset nodes through these.
 */
#ifndef QEMU_LAUNCHER_EMU_PROCESS_H
#define QEMU_LAUNCHER_EMU_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qemu/launcher/emu_run.h"
#include "qemu/launcher/qmp.h"

/*
 * (Re)starts a node that is not running: writes its personality (with its
 * current incarnation), drains datagrams queued on its link sockets while
 * it was down, and starts its instance.  False (with a message printed)
 * when it could not be started.
 */
bool emu_process_start(struct emu *emu, struct emu_node *node);

/*
 * Kills a running node: SIGKILL; on the MPI board it stops dead instead
 * (SIGSTOP: no more sends, no more polling) and counts as ended, its
 * process killed when the run ends (emu_mpi.h says why).
 */
bool emu_process_kill(struct emu *emu, struct emu_node *node);

/* Sends a signal to a running node's process. */
bool emu_process_signal(struct emu *emu, struct emu_node *node, int signal_number);

/*
 * Executes a QMP command on a running QEMU node, connecting to its socket on
 * first use (qemu/launcher/qmp.h for statuses and reply).  Host nodes: QMP_CLOSED.
 */
enum qmp_status emu_process_qmp(struct emu *emu, struct emu_node *node, const char *command,
                                const char *arguments, char *reply, size_t capacity);

/* node was just reset (QMP system_reset): it boots again, not ready. */
void emu_process_rebooting(struct emu *emu, struct emu_node *node);

/*
 * Collects every node process that exited (without waiting), after reading
 * its last console output.  An exit nobody asked for fails the run.
 */
void emu_process_reap(struct emu *emu);

/*
 * Stops every running node: SIGTERM (SIGCONT to hung ones), a grace period
 * while the loop turns, then SIGKILL and a blocking wait for each.
 */
void emu_process_stop_all(struct emu *emu);

/*
 * The CPU time (user + system) a running node's process has used so far,
 * from /proc/PID/stat: false when the node runs no process of its own here
 * (MPI ranks) or it cannot be read.
 */
bool emu_process_cpu_ns(const struct emu_node *node, uint64_t *cpu_ns);

/* Prints the last lines of a failing node's log to stderr. */
void emu_process_show_tail(struct emu *emu, const struct emu_node *node);

#endif /* QEMU_LAUNCHER_EMU_PROCESS_H */
