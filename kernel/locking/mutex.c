/*
 * Mutexes: see include/quire/mutex.h. The owner field is the lock: it
 * changes only under wait_lock. A contended locker queues a waiter on its
 * stack and sleeps; mutex_unlock makes the first waiter the owner before
 * waking it (a hand-off), so the mutex is never free while someone waits.
 * Lock order: wait_lock, then the run-queue lock (wake_up_process).
 */
#include <quire/mutex.h>
#include <quire/sched.h>
#include <quire/debug_locks.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/stacktrace.h>

#ifndef _RET_IP_
#define _RET_IP_ ((unsigned long)__builtin_return_address(0))
#endif

struct mutex_waiter {
	struct list_head list;
	struct task *task;
};

/* Before the scheduler runs there is no current task; the boot code still owns what it locks. */
static struct task early_boot_owner = { .comm = "(early boot)" };

static struct task *self(void)
{
	struct task *t = current;

	return t ? t : &early_boot_owner;
}

void mutex_init(struct mutex *m)
{
	*m = (struct mutex)__MUTEX_INITIALIZER(*m);
}

#ifdef DEBUG_LOCKS
static void mutex_report(struct mutex *m, atomic_t *counter, const char *what)
{
	struct task *owner = mutex_owner(m), *t = self();
	char sym[128];
	unsigned long flags = lock_report_begin(counter);

	pr_err("BUG: mutex %s: mutex 0x%lx, task %s (tid %d) on CPU %d\n", what,
	       (unsigned long)m, t->comm, t->tid, smp_processor_id());
	if (owner)
		pr_err(" owner: task %s (tid %d), locked at %s\n", owner->comm, owner->tid,
		       lock_debug_sym(sym, sizeof(sym), m->acquire_ip));
	else
		pr_err(" owner: none (the mutex is not locked)\n");
	dump_stack();
	lock_report_end(flags);
}

static void mutex_acquired(struct mutex *m, unsigned long ip)
{
	m->acquire_ip = ip;
	self()->locks_held++;
}

/* A task locking a mutex it holds sleeps forever: report, then panic (or return, for a test). */
static bool mutex_recursion(struct mutex *m)
{
	if (mutex_owner(m) != self())
		return false;
	mutex_report(m, &lock_debug_counts.mutex_recursion, "recursion");
	if (lock_debug_recursion_returns) {
		lock_debug_recursion_returns = false;
		return true;
	}
	panic("mutex recursion (a certain deadlock)");
}
#else
static inline void mutex_acquired(struct mutex *m, unsigned long ip) { }
static inline bool mutex_recursion(struct mutex *m) { return false; }
#endif

void mutex_lock(struct mutex *m)
{
	unsigned long ip = _RET_IP_;
	struct mutex_waiter w;
	struct task *me;

	might_sleep();
	if (mutex_recursion(m))
		return;
	me = self();
	spin_lock(&m->wait_lock);
	if (!m->owner) {
		m->owner = me;
		spin_unlock(&m->wait_lock);
		mutex_acquired(m, ip);
		return;
	}
	w.task = me;
	list_add_tail(&w.list, &m->wait_list);
	/* The unlocker sets the owner and wakes us under wait_lock: no lost wake-up. */
	while (m->owner != me) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		spin_unlock(&m->wait_lock);
		schedule();
		spin_lock(&m->wait_lock);
	}
	__set_current_state(TASK_RUNNING);
	spin_unlock(&m->wait_lock);
	mutex_acquired(m, ip);
}

int mutex_trylock(struct mutex *m)
{
	unsigned long ip = _RET_IP_;
	bool taken = false;

	spin_lock(&m->wait_lock);
	if (!m->owner) {
		m->owner = self();
		taken = true;
	}
	spin_unlock(&m->wait_lock);
	if (taken)
		mutex_acquired(m, ip);
	return taken;
}

void mutex_unlock(struct mutex *m)
{
	struct mutex_waiter *w;

#ifdef DEBUG_LOCKS
	/* Not ours: report and leave it with its owner, whose own unlock still works. */
	if (mutex_owner(m) != self()) {
		mutex_report(m, &lock_debug_counts.mutex_bad_unlock, "unlock by non-owner");
		return;
	}
	self()->locks_held--;
#endif
	spin_lock(&m->wait_lock);
	w = list_first_entry_or_null(&m->wait_list, struct mutex_waiter, list);
	if (w) {
		list_del(&w->list);
		m->owner = w->task;
		/* Under wait_lock: the waiter cannot see it is the owner, return and go away first. */
		wake_up_process(w->task);
	} else {
		m->owner = NULL;
	}
	spin_unlock(&m->wait_lock);
}
