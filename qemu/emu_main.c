/*
 * tori-emu: runs a whole torus of tori nodes on this machine (see
 * qemu/launcher/emu_options.c for the options and qemu/launcher/emu_run.h for how),
 * with the fault hooks (qemu/faults/emu_faults.h) when the options ask for faults.
 */
#include <stdio.h>

#include "tools/cli.h"
#include "qemu/launcher/emu_options.h"
#include "qemu/faults/emu_faults.h"
#include "qemu/launcher/emu_run.h"

#ifndef TORI_DEFAULT_IMAGE
#error "TORI_DEFAULT_IMAGE must be defined by the build"
#endif
#ifndef TORI_DEFAULT_NODE_BINARY
#error "TORI_DEFAULT_NODE_BINARY must be defined by the build"
#endif

int main(int argc, char **argv)
{
    cli_whole_lines();
    struct emu_options options;
    char error[320];
    switch (emu_options_parse(argc, argv, TORI_DEFAULT_IMAGE, TORI_DEFAULT_NODE_BINARY,
                              &options, error, sizeof error)) {
    case EMU_OPTIONS_HELP:
        emu_options_usage(stdout);
        return 0;
    case EMU_OPTIONS_ERROR:
        fprintf(stderr, "tori-emu: %s\n", error);
        return 2;
    case EMU_OPTIONS_OK:
        break;
    }
    bool faults = emu_faults_wanted(&options);
    struct emu_chaos_spec chaos;
    if (faults && !emu_faults_check_options(&options, &chaos, error, sizeof error)) {
        fprintf(stderr, "tori-emu: %s\n", error);
        return 2;
    }
    if (options.demo)
        fprintf(options.json ? stderr : stdout,
                "tori demo: a %s QEMU torus boots; a leaf node is killed, then the "
                "root, then the leaf restarts and rejoins with its old id\n",
                options.dims_text);
    return emu_run(&options, faults ? &emu_faults_hooks : NULL);
}
