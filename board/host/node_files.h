/*
 * What a process node (board/host, board/mpi) reads from files named on
 * its command line before the kernel starts: the personality, the job
 * block and the job key, and whether it may run keyless (--auth off).
 * Both boards answer board_personality_block, board_job_block,
 * board_link_key and board_keyless_allowed from here.
 */
#ifndef BOARD_HOST_NODE_FILES_H
#define BOARD_HOST_NODE_FILES_H

#include <stdbool.h>

/*
 * Takes argv[*index] when it is --personality FILE, --job FILE,
 * --key-file FILE or --auth off (advancing *index past its value).
 * Returns 1 when taken, 0 when the option is not one of these, -1 after a
 * one-line error on stderr prefixed with program.
 */
int node_files_option(const char *program, int argc, char **argv, int *index);

/* Loads what the options named; false after a one-line error on stderr. */
bool node_files_load(const char *program);

#endif /* BOARD_HOST_NODE_FILES_H */
