/*
 * Signals (kernel/signal.c, being built for issue 11). For now only the
 * query other subsystems need: whether a signal is waiting that should
 * end an interruptible sleep (futex waits, pipes, nanosleep).
 */
#ifndef QUIRE_SIGNAL_H
#define QUIRE_SIGNAL_H

#include <quire/sched.h>

static inline bool signal_pending(struct task *t)
{
	return __atomic_load_n(&t->pending_kill, __ATOMIC_RELAXED) != 0;
}

#endif
