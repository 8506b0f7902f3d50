/*
 * Stack evidence for the certification (./tori cert): the high-water mark
 * of the one stack, where the board measures it (board_stack_usage:
 * qemu-virt reads the paint start-up code leaves), reported as an event
 * line
 *
 *   tori node=3 event=stack t_ns=... high_water=1184 size=65536 reason=request
 *
 * on the `stack` console command and when the node halts.  A board that
 * does not measure its stack (host) answers `stack` with a console-error
 * saying so, and reports nothing at halt.
 */
#ifndef KERNEL_STACK_REPORT_H
#define KERNEL_STACK_REPORT_H

/* Registers the `stack` console command; call during init. */
void stack_report_init(void);

/* Writes one stack event, where measured; reason is a token such as
 * "request" or "halt". */
void stack_report_emit(const char *reason);

#endif /* KERNEL_STACK_REPORT_H */
