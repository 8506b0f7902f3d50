/*
 * Host-board extras beyond board/board.h: the command line a node process
 * was started with, and file descriptors that wake the idle loop.
 */
#ifndef BOARD_HOST_HOST_H
#define BOARD_HOST_HOST_H

#include <stdbool.h>

#define HOST_MAX_WATCHED_FDS 16

/* Adds a descriptor whose readability ends board_idle_until(). */
bool host_watch_fd(int fd);

/* argv after the board's own options, for drivers (e.g. --link ...). */
int host_argument_count(void);
const char *host_argument(int index);

#endif /* BOARD_HOST_HOST_H */
