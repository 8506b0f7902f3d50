/*
 * Doing a fault to a running node, by its board.
 *
 *   action    QEMU node                           host node
 *   kill      SIGKILL to QEMU                     SIGKILL
 *   hang      QMP stop                            SIGSTOP
 *   resume    QMP cont                            SIGCONT
 *   link off  QMP set_link lL up=false            console `link DIR off`
 *   link on   QMP set_link lL up=true             console `link DIR on`
 *   reboot    QMP system_reset                    (refused before the run)
 *   restart   start again, same id and ports, personality incarnation =
 *             last reported incarnation + 1
 *   join      start the spare
 *
 * A link action cuts or mends the whole cable: the node's end and the
 * neighbour's opposite end (QEMU: the netdev lL; set_link on it also takes
 * down the NIC behind it, so that end neither sends nor receives).  An end
 * whose node is not running is left alone; emu_fault_reapply_cuts cuts it
 * when the node is ready again.  A rebooted or restarted node has to be
 * told `start` again once ready (emu_run does).
 */
#ifndef QEMU_FAULTS_EMU_FAULT_H
#define QEMU_FAULTS_EMU_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qemu/faults/emu_inject.h"
#include "qemu/launcher/emu_run.h"

/* Does action now; false with a one-line reason in error. */
bool emu_fault_apply(struct emu *emu, const struct emu_action *action, char *error,
                     size_t capacity);

/* Cuts the ends at node of the cables in cut_mask (bit per link). */
bool emu_fault_reapply_cuts(struct emu *emu, struct emu_node *node, uint32_t cut_mask,
                            char *error, size_t capacity);

#endif /* QEMU_FAULTS_EMU_FAULT_H */
