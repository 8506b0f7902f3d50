/*
 * Everything a run needs before the first node starts, and its release:
 * the geometry from --dims, the node table (board, spare role, planned
 * links), the programs (QEMU and the image, or tori-node), the open-file
 * limit, the output directory (logs, personalities, events.jsonl, QMP
 * sockets), every link socket bound and connected, and the signalfd the
 * loop reads SIGCHLD, SIGINT, SIGTERM and SIGHUP from.
 */
#ifndef QEMU_LAUNCHER_EMU_SETUP_H
#define QEMU_LAUNCHER_EMU_SETUP_H

#include <stdbool.h>

#include "qemu/launcher/emu_run.h"

/* False (with a message printed) when the run cannot go ahead. */
bool emu_setup_prepare(struct emu *emu);
bool emu_setup_signals(struct emu *emu);

/* Frees and closes what emu_setup_prepare and emu_setup_signals made
 * (safe on a partly prepared emu). */
void emu_setup_release(struct emu *emu);

#endif /* QEMU_LAUNCHER_EMU_SETUP_H */
