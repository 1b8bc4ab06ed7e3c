/*
 * The interval timers of a process (kernel/itimer.c, docs/timers.md):
 * ITIMER_REAL, behind alarm(2), getitimer(2) and setitimer(2).
 */
#ifndef QUIRE_ITIMER_H
#define QUIRE_ITIMER_H

#include <quire/sched.h>

/*
 * do_exit: disarm t's timers, waiting for an expiry running on another
 * CPU; nothing arms them again (only the task itself does), so the task
 * may be freed afterwards. t is current.
 */
void exit_itimers(struct task *t);
/*
 * Signal delivery, SIGALRM just dequeued, t's siglock held: an interval
 * ITIMER_REAL that is not armed is armed for its next period (Linux
 * re-arms here, not when it fires, so a blocked or slow handler never
 * piles up expiries). t is current.
 */
void itimer_real_rearm(struct task *t);
/*
 * The timer tick charged tick_ns of CPU time (user or kernel) to t, a
 * thread of a user process: its process's ITIMER_VIRTUAL and ITIMER_PROF
 * count down, and one that runs out sends SIGVTALRM or SIGPROF and is
 * re-armed with its interval at once (Linux re-arms CPU timers when they
 * expire). Interrupts off.
 */
void itimer_cpu_tick(struct task *t, bool user, u64 tick_ns);

#endif
