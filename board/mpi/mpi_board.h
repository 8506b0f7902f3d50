/*
 * MPI-board extras beyond board/board.h: the link driver's options, the
 * arguments after the board's own (as on the host board, host.h).
 */
#ifndef BOARD_MPI_MPI_BOARD_H
#define BOARD_MPI_MPI_BOARD_H

int mpi_board_argument_count(void);
const char *mpi_board_argument(int index);

#endif /* BOARD_MPI_MPI_BOARD_H */
