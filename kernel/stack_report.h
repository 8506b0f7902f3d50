/*
 * Stack evidence for the certification (./tori cert): the high-water mark
 * of the one stack, read from the paint start-up code leaves on boards that
 * paint it (board_stack_high_water, board/board.h), reported as an event line
 *
 *   tori node=3 event=stack t_ns=... high_water=1184 size=65536 reason=request
 *
 * on the `stack` console command and when the node halts.  On a board
 * without a painted stack (host) nothing is registered or reported.
 */
#ifndef KERNEL_STACK_REPORT_H
#define KERNEL_STACK_REPORT_H

/* Registers the `stack` console command; call during init. */
void stack_report_init(void);

/* Writes one stack event; reason is a token such as "request" or "halt". */
void stack_report_emit(const char *reason);

#endif /* KERNEL_STACK_REPORT_H */
