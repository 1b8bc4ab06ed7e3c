/*
 * Hooks the architecture's trap and timer code calls, for generic code that
 * wants to hear of a crash or of every tick (the KTAP runner in
 * kernel/ktest.c sets both before it runs a case). One hook of each kind;
 * setting another replaces it, NULL removes it. The architecture provides
 * the setters and calls the hooks; it knows nothing of who set them.
 */
#ifndef QUIRE_ARCH_HOOKS_H
#define QUIRE_ARCH_HOOKS_H

/*
 * Called after the report of a fatal kernel exception is printed and just
 * before the panic, with the exception's name ("#PF Page fault"). It may
 * not return: the test runner ends the crashed case there. When it returns,
 * the kernel panics as without it.
 */
typedef void (*trap_crash_hook_t)(const char *what);
/* Called from the timer interrupt on every CPU, interrupts off. */
typedef void (*timer_tick_hook_t)(void);

void set_trap_crash_hook(trap_crash_hook_t hook);
void set_timer_tick_hook(timer_tick_hook_t hook);

#endif
