/*
 * The launcher's side of every node's console: reads what a node wrote,
 * splits it into lines, turns event lines into events.jsonl records (and
 * --json output), counts them for the summary, shows the ones a person
 * should see, and acts on those the run depends on (ready, panic, ping
 * answers; programs built on the launcher get every event through its hooks, emu_run.h).
 */
#ifndef QEMU_LAUNCHER_EMU_CONSOLE_H
#define QEMU_LAUNCHER_EMU_CONSOLE_H

#include <stdbool.h>

#include "qemu/launcher/emu_run.h"

/*
 * Reads what a node wrote (a bounded amount per call, to be fair to the
 * others) and handles every complete line.  exited: its process is gone,
 * so read everything waiting and take the last partial line too, but never
 * wait for more (a grandchild might hold the pipe open).
 */
void emu_console_pump(struct emu *emu, struct emu_node *node, bool exited);

/* The node's `ping all` is over (answered, refused or timed out). */
void emu_console_finish_ping(struct emu *emu, struct emu_node *node);

#endif /* QEMU_LAUNCHER_EMU_CONSOLE_H */
