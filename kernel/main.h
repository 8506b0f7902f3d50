/*
 * The kernel's entry: kernel_main() is the portable start every board calls
 * once its start-up code has a stack and a C environment.
 */
#ifndef KERNEL_MAIN_H
#define KERNEL_MAIN_H

/* Boot, init phase, seal, ready, poll loop; never returns. */
_Noreturn void kernel_main(void);

#endif /* KERNEL_MAIN_H */
