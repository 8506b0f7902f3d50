/*
 * tori-emu's command line, parsed and checked before anything starts.
 */
#ifndef QEMU_LAUNCHER_EMU_OPTIONS_H
#define QEMU_LAUNCHER_EMU_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/tori_config.h"
#include "kernel/job.h"
#include "tools/reach.h"

enum emu_boards { EMU_BOARDS_QEMU, EMU_BOARDS_HOST, EMU_BOARDS_MIXED, EMU_BOARDS_MPI };

struct emu_options {
    const char *dims_text;
    unsigned dims;
    uint32_t size[CONFIG_MAX_DIMS];
    uint8_t mesh_mask;
    enum emu_boards boards;
    uint8_t radix;
    uint8_t tree_layout;      /* PERSONALITY_TREE_* */
    uint32_t spares;          /* the last ranks are spares */
    uint32_t idle_spares;     /* spares not started until a `join`: all of them
                               * but under --comm-mode rebuild, where they start
                               * with the others and wait to adopt a rank */
    uint16_t heartbeat_ms;     /* personality detector and link timings */
    uint16_t detect_timeout_ms;
    uint16_t link_rto_ms;
    uint8_t link_retries;
    uint8_t partition_policy; /* PERSONALITY_PARTITION_* */
    uint8_t timeout_ceiling;  /* the adaptive detector's bound (personality) */
    bool duration_set;
    uint64_t duration_ns;     /* after every node is ready (and --ping) */
    uint64_t ready_timeout_ns; /* 0: scaled with the node count */
    uint64_t ping_timeout_ns;  /* per node */
    unsigned ping_parallel;   /* nodes pinging at once */
    bool ping, json, demo, verbose;
    bool reach_set;           /* --reach INTERVAL[,PAIRS] (emu_reach.h) */
    struct reach_options reach;
    bool check_qmp;           /* ask every QEMU node's QMP socket once ready */
    bool pcap;                /* capture every link end in <out>/pcap/ */
    bool auth;                /* frames tagged with a fresh job key (--auth, on) */
    const char *out_dir;      /* NULL: a fresh directory under /tmp */
    uint32_t base_port;       /* 0: the system picks free ports */
    const char *image, *node_binary, *qemu;
    const char *mpiexec;      /* --board mpi: the MPI launcher (emu_mpi.h) */
    bool mpi_kill_real;       /* --mpi-kill kill: SIGKILL a rank, not SIGSTOP */
    const char *job;          /* --job FILE: every node's job block (NULL: none) */
    /* --app NAME [--iterations N] [--progress K] [--app-args ...]: the
     * launcher writes the job block (<out>/job.bin) and waits for every
     * compute node's app-result (qemu/launcher/emu_app.h). */
    bool app_set;
    struct job app_job;
    bool app_progress_set;     /* --progress given (else a tenth of the iterations) */
    uint64_t app_timeout_ns;   /* 0: scaled with the iterations and nodes */

    /* Fault runs: read here, parsed and checked by the fault hooks
     * (qemu/faults/emu_faults.h: emu_faults_check_options) before anything
     * starts. */
    const char *inject_text;   /* --inject SCRIPT, or the text of --inject-file FILE */
    const char *inject_option; /* "--inject" or "--inject-file", for messages */
    bool sequential;           /* script times are minimum spacings after settling */
    const char *chaos_text;    /* --chaos SPEC */
    const char *fault_rates_text; /* --fault-rates GROUPS (with --chaos) */
    uint64_t settle_quiet_ns;   /* 0: from the detect timeout */
    uint64_t settle_timeout_ns; /* 0: from the detect timeout */
};

/* Default and largest --iterations of tori-emu --app. */
#define EMU_APP_DEFAULT_ITERATIONS 200
#define EMU_APP_MAX_ITERATIONS 1000000

enum emu_options_result { EMU_OPTIONS_OK, EMU_OPTIONS_HELP, EMU_OPTIONS_ERROR };

/*
 * Parses argv.  defaults supply image, node binary and qemu.  On error
 * writes a one-line reason (without the "tori-emu: " prefix).
 */
enum emu_options_result emu_options_parse(int argc, char **argv,
                                          const char *default_image,
                                          const char *default_node_binary,
                                          struct emu_options *options, char *error,
                                          size_t capacity);

void emu_options_usage(FILE *out);

#endif /* QEMU_LAUNCHER_EMU_OPTIONS_H */
