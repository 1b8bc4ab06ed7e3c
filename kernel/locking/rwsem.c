/*
 * Reader-writer semaphores: see include/quire/rwsem.h. Everything happens
 * under wait_lock; count says who is inside. A release grants the semaphore
 * to the waiters at the head of the queue before waking them (a hand-off,
 * as in mutex.c): one writer, or the run of readers before the next writer.
 * A new reader queues whenever anyone waits, so a waiting writer holds back
 * later readers. Lock order: wait_lock, then the run-queue lock.
 */
#include <quire/rwsem.h>
#include <quire/sched.h>
#include <quire/debug_locks.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/stacktrace.h>

struct rwsem_waiter {
	struct list_head list;
	struct task *task;
	bool writer;
	bool granted;			/* set under wait_lock by the releaser */
};

void init_rwsem(struct rw_semaphore *sem)
{
	*sem = (struct rw_semaphore)__RWSEM_INITIALIZER(*sem);
}

#ifdef DEBUG_LOCKS
static void rwsem_report(struct rw_semaphore *sem, atomic_t *counter, const char *what)
{
	struct task *t = current, *owner = sem->owner;
	unsigned long flags = lock_report_begin(counter);

	pr_err("BUG: rwsem %s: rwsem 0x%lx, task %s on CPU %d\n", what, (unsigned long)sem,
	       t ? t->comm : "(none)", smp_processor_id());
	pr_err(" count %ld (readers inside, or -1 for a writer), writer %s\n", sem->count,
	       owner ? owner->comm : "none");
	dump_stack();
	lock_report_end(flags);
}

static void held_inc(int d)
{
	struct task *t = current;

	if (t)
		t->locks_held += d;
}

bool rwsem_is_write_held_by_me(struct rw_semaphore *sem)
{
	struct task *t = current;

	return t && __atomic_load_n(&sem->count, __ATOMIC_RELAXED) == -1 &&
	       __atomic_load_n(&sem->owner, __ATOMIC_RELAXED) == t;
}

/* Down on a semaphore this task holds for writing sleeps forever. */
static bool rwsem_recursion(struct rw_semaphore *sem)
{
	struct task *t = current;

	if (!t || __atomic_load_n(&sem->owner, __ATOMIC_RELAXED) != t)
		return false;
	rwsem_report(sem, &lock_debug_counts.rwsem_recursion, "recursion (the writer locks it again)");
	if (lock_debug_recursion_returns) {
		lock_debug_recursion_returns = false;
		return true;
	}
	panic("rwsem recursion (a certain deadlock)");
}
#else
static inline void held_inc(int d) { }
static inline bool rwsem_recursion(struct rw_semaphore *sem) { return false; }
#endif

/* Let in the waiters at the head that may enter now. Under wait_lock. */
static void grant(struct rw_semaphore *sem)
{
	struct rwsem_waiter *w, *next;

	list_for_each_entry_safe(w, next, &sem->wait_list, list) {
		bool writer = w->writer;

		if (writer) {
			if (sem->count)
				break;
			sem->count = -1;
			sem->owner = w->task;
		} else {
			if (sem->count < 0)
				break;
			sem->count++;
		}
		list_del(&w->list);
		w->granted = true;
		/* The waiter needs wait_lock to see granted: w stays valid until we drop it. */
		wake_up_process(w->task);
		if (writer)
			break;
	}
}

/* Queue and sleep until a releaser grants us the semaphore. Called and returns with wait_lock held. */
static void wait_for_grant(struct rw_semaphore *sem, bool writer)
{
	struct rwsem_waiter w = { .task = current, .writer = writer };

	list_add_tail(&w.list, &sem->wait_list);
	while (!w.granted) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		spin_unlock(&sem->wait_lock);
		schedule();
		spin_lock(&sem->wait_lock);
	}
	__set_current_state(TASK_RUNNING);
}

void down_read(struct rw_semaphore *sem)
{
	might_sleep();
	if (rwsem_recursion(sem))
		return;
	spin_lock(&sem->wait_lock);
	if (sem->count >= 0 && list_empty(&sem->wait_list))
		sem->count++;
	else
		wait_for_grant(sem, false);
	spin_unlock(&sem->wait_lock);
	held_inc(1);
}

int down_read_trylock(struct rw_semaphore *sem)
{
	int ok = 0;

	spin_lock(&sem->wait_lock);
	if (sem->count >= 0 && list_empty(&sem->wait_list)) {
		sem->count++;
		ok = 1;
	}
	spin_unlock(&sem->wait_lock);
	if (ok)
		held_inc(1);
	return ok;
}

void up_read(struct rw_semaphore *sem)
{
	spin_lock(&sem->wait_lock);
	if (sem->count <= 0) {
		spin_unlock(&sem->wait_lock);
#ifdef DEBUG_LOCKS
		rwsem_report(sem, &lock_debug_counts.rwsem_bad_unlock, "up_read while not held for reading");
#endif
		return;
	}
	if (--sem->count == 0)
		grant(sem);
	spin_unlock(&sem->wait_lock);
	held_inc(-1);
}

void down_write(struct rw_semaphore *sem)
{
	might_sleep();
	if (rwsem_recursion(sem))
		return;
	spin_lock(&sem->wait_lock);
	if (sem->count == 0 && list_empty(&sem->wait_list)) {
		sem->count = -1;
		sem->owner = current;
	} else {
		wait_for_grant(sem, true);
	}
	spin_unlock(&sem->wait_lock);
	held_inc(1);
}

int down_write_trylock(struct rw_semaphore *sem)
{
	int ok = 0;

	spin_lock(&sem->wait_lock);
	if (sem->count == 0) {
		sem->count = -1;
		sem->owner = current;
		ok = 1;
	}
	spin_unlock(&sem->wait_lock);
	if (ok)
		held_inc(1);
	return ok;
}

void up_write(struct rw_semaphore *sem)
{
	spin_lock(&sem->wait_lock);
#ifdef DEBUG_LOCKS
	/* Not ours: report and leave it with its writer, whose own up_write still works. */
	if (sem->count != -1 || sem->owner != current) {
		spin_unlock(&sem->wait_lock);
		rwsem_report(sem, &lock_debug_counts.rwsem_bad_unlock, "up_write by a task that is not the writer");
		return;
	}
#endif
	sem->count = 0;
	sem->owner = NULL;
	grant(sem);
	spin_unlock(&sem->wait_lock);
	held_inc(-1);
}
