#define _GNU_SOURCE
#include "qemu/faults/emu_fault.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "qemu/launcher/emu_process.h"
#include "qemu/launcher/qmp.h"

static bool qmp(struct emu *emu, struct emu_node *node, const char *command,
                const char *arguments, char *error, size_t capacity)
{
    char reply[256];
    enum qmp_status status =
        emu_process_qmp(emu, node, command, arguments, reply, sizeof reply);
    if (status == QMP_OK)
        return true;
    snprintf(error, capacity, "node %u: QMP %s: %s (%s)", (unsigned)node->rank, command,
             qmp_status_text(status), reply);
    return false;
}

static bool signal_node(struct emu *emu, struct emu_node *node, int signal_number,
                        char *error, size_t capacity)
{
    if (emu_process_signal(emu, node, signal_number))
        return true;
    snprintf(error, capacity, "node %u: cannot send %s (not running)", (unsigned)node->rank,
             strsignal(signal_number));
    return false;
}

/* Cuts or mends the end of a cable at node's link; nothing when it is down. */
static bool cable_end(struct emu *emu, struct emu_node *node, unsigned link, bool off,
                      char *error, size_t capacity)
{
    if (node->pid <= 0)
        return true;
    if (node->board == EMU_BOARD_QEMU) {
        char arguments[64];
        snprintf(arguments, sizeof arguments, "{\"name\":\"l%u\",\"up\":%s}", link,
                 off ? "false" : "true");
        return qmp(emu, node, "set_link", arguments, error, capacity);
    }
    char command[32];
    snprintf(command, sizeof command, "link %s %s", torus_geometry_link_name(link),
             off ? "off" : "on");
    if (emu_node_send(node, command))
        return true;
    snprintf(error, capacity, "node %u: cannot send `%s` to its console", (unsigned)node->rank,
             command);
    return false;
}

bool emu_fault_reapply_cuts(struct emu *emu, struct emu_node *node, uint32_t cut_mask,
                            char *error, size_t capacity)
{
    bool ok = true;
    for (unsigned l = 0; l < CONFIG_MAX_LINKS; l++)
        if (((cut_mask >> l) & 1u) != 0 && node->link[l].present)
            ok = cable_end(emu, node, l, true, error, capacity) && ok;
    return ok;
}

bool emu_fault_apply(struct emu *emu, const struct emu_action *action, char *error,
                     size_t capacity)
{
    if (action->node >= emu->count) {
        snprintf(error, capacity, "node %u does not exist", (unsigned)action->node);
        return false;
    }
    struct emu_node *node = &emu->nodes[action->node];
    bool qemu = node->board == EMU_BOARD_QEMU;
    switch (action->kind) {
    case EMU_ACTION_KILL:
        node->expect_exit = true;
        if (!emu_process_kill(emu, node)) {
            node->expect_exit = false;
            snprintf(error, capacity, "node %u: cannot kill it (not running)",
                     (unsigned)node->rank);
            return false;
        }
        return true;
    case EMU_ACTION_HANG:
        if (!(qemu ? qmp(emu, node, "stop", NULL, error, capacity)
                   : signal_node(emu, node, SIGSTOP, error, capacity)))
            return false;
        node->hung = true;
        return true;
    case EMU_ACTION_RESUME:
        if (!(qemu ? qmp(emu, node, "cont", NULL, error, capacity)
                   : signal_node(emu, node, SIGCONT, error, capacity)))
            return false;
        node->hung = false;
        return true;
    case EMU_ACTION_LINK_OFF:
    case EMU_ACTION_LINK_ON: {
        const struct emu_link *link = &node->link[action->link];
        if (action->link >= CONFIG_MAX_LINKS || !link->present) {
            snprintf(error, capacity, "node %u has no link %s", (unsigned)node->rank,
                     torus_geometry_link_name(action->link));
            return false;
        }
        bool off = action->kind == EMU_ACTION_LINK_OFF;
        char far_error[200];
        bool near = cable_end(emu, node, action->link, off, error, capacity);
        bool far = cable_end(emu, &emu->nodes[link->peer], link->peer_link, off, far_error,
                             sizeof far_error);
        if (near && !far)
            snprintf(error, capacity, "%s", far_error);
        return near && far;
    }
    case EMU_ACTION_REBOOT:
        if (!qemu) {
            snprintf(error, capacity, "node %u is a host process: no reboot",
                     (unsigned)node->rank);
            return false;
        }
        if (!qmp(emu, node, "system_reset", NULL, error, capacity))
            return false;
        emu_process_rebooting(emu, node);
        return true;
    case EMU_ACTION_PING_ALL:
        return true; /* the sweep is the fault engine's (emu_faults.c) */
    case EMU_ACTION_APPKILL:
    case EMU_ACTION_LEAVE: {
        const char *command = action->kind == EMU_ACTION_LEAVE ? "leave" : "appkill";
        if (emu_node_send(node, command))
            return true;
        snprintf(error, capacity, "node %u: cannot send `%s` to its console",
                 (unsigned)node->rank, command);
        return false;
    }
    case EMU_ACTION_RESTART:
    case EMU_ACTION_JOIN:
        if (node->pid > 0) {
            snprintf(error, capacity, "node %u is still running", (unsigned)node->rank);
            return false;
        }
        if (action->kind == EMU_ACTION_RESTART) {
            /* A new life: above every incarnation it ever reported. */
            uint32_t last = node->reported_incarnation > node->incarnation
                                ? node->reported_incarnation
                                : node->incarnation;
            node->incarnation = last + 1u;
        }
        if (!emu_process_start(emu, node)) {
            snprintf(error, capacity, "node %u could not be started (see above)",
                     (unsigned)node->rank);
            return false;
        }
        return true;
    }
    snprintf(error, capacity, "unknown action");
    return false;
}
