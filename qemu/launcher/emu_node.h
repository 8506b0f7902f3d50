/*
 * One instance of the emulated torus, as the launcher sees it: everything
 * about a node lives in this one struct, so that fault injection (kill,
 * hang/resume, link off/on, reboot, restart with a new incarnation, joining
 * a spare) acts on it without restructuring the launcher.
 *
 * The console: the node's stdout (QEMU: its serial port; stderr too) is a
 * pipe the launcher reads without blocking; every byte is appended to
 * <out>/node<N>.log, and complete lines are handed out one at a time.  Its
 * stdin is the control channel: command lines written by emu_node_send.
 */
#ifndef QEMU_LAUNCHER_EMU_NODE_H
#define QEMU_LAUNCHER_EMU_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config/tori_config.h"
#include "qemu/launcher/emu_links.h"
#include "tools/event_line.h"
#include "qemu/launcher/qmp.h"

enum emu_board { EMU_BOARD_QEMU, EMU_BOARD_HOST, EMU_BOARD_MPI };

enum emu_node_state {
    EMU_NODE_IDLE,    /* not running: never started, or down and reaped */
    EMU_NODE_STARTED, /* running, not ready yet */
    EMU_NODE_READY,   /* printed event=ready since its last start */
};

/* Communicators whose latest `comm` line a node keeps. */
#define EMU_NODE_COMM_REPORTS 4

/* Console bytes kept while a line is incomplete (longer lines are cut). */
#define EMU_NODE_CONSOLE_MAX (2 * EVENT_LINE_MAX)

struct emu_node {
    uint32_t rank;
    enum emu_board board;
    bool spare;             /* personality role spare (rank >= members) */
    uint32_t incarnation;   /* boot incarnation written in its personality */
    enum emu_node_state state;
    bool hung;              /* stopped on purpose (QMP stop / SIGSTOP) */
    bool expect_exit;       /* the launcher is stopping it: exit is no error */
    bool panicked;
    unsigned starts;        /* how many times it was started */
    uint32_t reported_incarnation; /* from its latest `ready` line, 0: none yet */
    bool job_started;       /* told `start` since its latest boot */
    bool pcap;              /* --pcap: its links captured (emu_spawn_pcap_name) */

    pid_t pid;              /* 0 when not running */
    int console_in;         /* write end of its stdin, -1 when closed */
    int console_out;        /* read end of its stdout, -1 when closed */
    int control_listen;     /* MPI board: where its rank connects (emu_mpi.h), -1: none */
    pid_t stopped_dead;     /* MPI board: its rank, killed as stopped dead (SIGSTOP) */
    int wait_status;        /* from waitpid, once reaped */
    uint64_t started_ns;    /* launcher clock at the latest start */
    uint64_t ready_ns;      /* launcher clock at its latest ready, 0: none */

    char *personality_path; /* <out>/node<N>.personality */
    char *log_path;         /* <out>/node<N>.log */
    char *qmp_path;         /* where the launcher connects (QEMU nodes) */
    char *qmp_name;         /* the name QEMU creates, relative to <out> */
    struct qmp_client *qmp; /* connected on first use, closed when it exits */
    FILE *log;

    struct emu_link link[CONFIG_MAX_LINKS];

    /* Console line assembly. */
    char console[EMU_NODE_CONSOLE_MAX + 1];
    size_t console_length;
    size_t console_consumed; /* bytes of the line handed out last */
    bool console_skipping;   /* dropping the rest of an overlong line */

    /* The --ping exchange. */
    bool ping_asked, ping_done;
    uint64_t ping_asked_ns;
    unsigned ping_ok, ping_failed;

    /* The job's application (tori-emu --app; qemu/launcher/emu_app.h). */
    bool app_started, app_reported, app_ok;
    uint32_t app_iteration;   /* the latest app-progress iteration */
    uint64_t app_iterations;  /* from app-result */
    uint64_t app_elapsed_ns;  /* from app-result: the node's own clock */
    char app_digest[24];      /* from app-result, as written ("0x...") */
    char app_error[96];       /* the first app-error: "call: error" */
    unsigned app_starved;     /* starved events */
    bool app_aborted;         /* reported app-abort: the job ended (ABORT mode) */
    bool app_adopted;         /* a spare that adopted a failed rank (REBUILD) */
    bool app_expelled;        /* expelled while its application ran: it owes no result */
    bool app_killed;          /* its application was killed (appkill): it owes no result */
    bool left;                /* it left (`leave`, its own `left` event): its halt is no
                                 crash, it owes no result */
    bool app_ended;           /* the job ended; app_was_down says how this node was then */
    bool app_was_down;        /* down when the job ended (not stopped by the launcher after) */
    char app_abort[64];       /* from app-abort: "comm 0x100, epoch 5, failed 3" */
    /* Its latest `comm` line per communicator (the launcher checks that one
     * communicator epoch has one rank map, ranks distinct). */
    struct emu_comm_report {
        bool valid;
        char comm[20], digest[20]; /* hex, as the node writes them */
        uint32_t size, rank;
        uint64_t epoch;
    } comm[EMU_NODE_COMM_REPORTS];

    /* The closing `stats` (emu_run.c): asked, and answered. */
    bool stats_asked, stats_answered;
    /* --duration: its process's CPU time when the run's window opened
     * (emu_run.c), and that process; 0: not measured. */
    uint64_t window_cpu_ns;
    pid_t window_pid;

    /* Counters. */
    unsigned events, malformed;
    char panic_reason[160];
};

/* Zeroes the node and marks every descriptor closed. */
void emu_node_init(struct emu_node *node, uint32_t rank);

/* Closes its descriptors and log, frees its paths (not its link sockets). */
void emu_node_release(struct emu_node *node);

/* Closes the launcher's ends of the node's console pipes. */
void emu_node_close_console(struct emu_node *node);

/*
 * Reads what the node wrote (without blocking) into the line buffer and
 * appends it to the log.  Returns bytes read, 0 at end of file (the console
 * is then closed), -1 when nothing was waiting.
 */
ssize_t emu_node_read_console(struct emu_node *node);

/*
 * Hands out the next complete console line (NUL-terminated, newline
 * removed; a line longer than EMU_NODE_CONSOLE_MAX comes out cut), or NULL.
 * The pointer is valid until the next call on this node.  At end of file
 * (final) a last unterminated line is handed out too.
 */
const char *emu_node_next_line(struct emu_node *node, bool final, size_t *length);

/* Writes "command\n" to the node's console input; false when it cannot. */
bool emu_node_send(struct emu_node *node, const char *command);

/* Prints the last lines of the node's log, each indented. */
void emu_node_print_log_tail(const struct emu_node *node, FILE *out,
                             unsigned lines);

const char *emu_node_board_name(enum emu_board board);

#endif /* QEMU_LAUNCHER_EMU_NODE_H */
