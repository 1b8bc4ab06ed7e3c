/*
 * Each lock debug check, fired on purpose: the report must appear in the
 * log with what a reader needs (the CPU, the owner, where it was taken),
 * its counter must move by exactly one, and everything must be back to
 * normal afterwards. Part of the "locking" suite (locking_test.c). Skipped
 * in a DEBUG_LOCKS=0 build.
 */
#include "locking_test.h"
#include <quire/spinlock.h>
#include <quire/mutex.h>
#include <quire/rwsem.h>
#include <quire/completion.h>
#include <quire/debug_locks.h>
#include <quire/ksyms.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/time.h>

#ifndef DEBUG_LOCKS
#define SKIPPED(name) \
	void name(struct ktest *t) { ktest_skip(t, "built with DEBUG_LOCKS=0"); }
SKIPPED(debug_spinlock_tracks_owner)
SKIPPED(debug_spinlock_recursion)
SKIPPED(debug_spinlock_unlock_by_other_cpu)
SKIPPED(debug_spinlock_unlock_unlocked)
SKIPPED(debug_spinlock_held_too_long)
SKIPPED(debug_might_sleep_with_spinlock)
SKIPPED(debug_might_sleep_irqs_off)
SKIPPED(debug_might_sleep_quiet_when_allowed)
SKIPPED(debug_mutex_recursion_and_bad_unlock)
SKIPPED(debug_rwsem_recursion_and_bad_unlock)
#else

#define NEED_TWO_CPUS(t)						\
	do {								\
		if (nr_cpus_online < 2)					\
			ktest_skip(t, "needs two CPUs");		\
	} while (0)

#define COUNT(c) atomic_read(&lock_debug_counts.c)

/* Whether the function containing addr is called name. */
static bool addr_in(unsigned long addr, const char *name)
{
	u64 off, size;
	const char *sym = ksym_lookup(addr, &off, &size);

	return sym && !strcmp(sym, name);
}

void debug_spinlock_tracks_owner(struct ktest *t)
{
	DEFINE_SPINLOCK(a);
	DEFINE_SPINLOCK(b);
	int task_held = current->locks_held, cpu_held;
	bool owner_ok, site_ok, trace_ok;

	spin_lock(&a);
	cpu_held = this_cpu()->spinlocks_held;
	spin_lock(&b);
	KEXPECT_EQ(t, this_cpu()->spinlocks_held, cpu_held + 1);
	KEXPECT_EQ(t, current->locks_held, task_held + 2);
	owner_ok = b.owner_cpu == this_cpu() && b.owner == current;
	site_ok = addr_in(b.taken_ip, "debug_spinlock_tracks_owner");
	trace_ok = b.trace[0] == b.taken_ip;
	spin_unlock(&b);
	KEXPECT_EQ(t, this_cpu()->spinlocks_held, cpu_held);
	spin_unlock(&a);
	KEXPECT_TRUE(t, owner_ok);
	KEXPECT_TRUE(t, site_ok);
	KEXPECT_TRUE(t, trace_ok);
	KEXPECT_EQ(t, current->locks_held, task_held);
	KEXPECT_PTR_EQ(t, b.owner_cpu, NULL);
}

void debug_spinlock_recursion(struct ktest *t)
{
	DEFINE_SPINLOCK(l);
	int before = COUNT(spin_recursion), held = current->locks_held, pc;
	u64 pos = printk_log_pos();

	spin_lock(&l);
	pc = preempt_count();
	/* Without the hook this would panic: a recursive spinlock never comes free. */
	lock_debug_recursion_returns = true;
	spin_lock(&l);
	KEXPECT_EQ(t, preempt_count(), pc);	/* reported and ignored */
	KEXPECT_FALSE(t, lock_debug_recursion_returns);	/* one-shot */
	spin_unlock(&l);
	KEXPECT_FALSE(t, spin_is_locked(&l));
	KEXPECT_EQ(t, COUNT(spin_recursion), before + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: spinlock recursion on CPU"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "taken at debug_spinlock_recursion+"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "owner's backtrace when it took the lock"));
	KEXPECT_EQ(t, current->locks_held, held);
}

struct bad_unlock {
	spinlock_t lock;
	volatile bool held, released;
};

/* Take the lock on this CPU and keep it until told (or 5 s). */
static int hold_until_released(void *arg)
{
	struct bad_unlock *b = arg;
	u64 end = ktime_get_ns() + 5 * NSEC_PER_SEC;

	spin_lock(&b->lock);
	b->held = true;
	while (!b->released && ktime_get_ns() < end)
		cpu_relax();
	spin_unlock(&b->lock);
	return 0;
}

void debug_spinlock_unlock_by_other_cpu(struct ktest *t)
{
	NEED_TWO_CPUS(t);
	static struct bad_unlock b;
	int before = COUNT(spin_bad_unlock), me, other, pc;
	struct task *holder;
	u64 pos;
	char want[64];
	bool still_held, owner_kept;

	memset(&b, 0, sizeof(b));
	spin_lock_init(&b.lock);
	me = pin_self();		/* the holder spins on its CPU: stay off it */
	other = other_cpu(me);
	holder = start_on_cpu(other, hold_until_released, &b, "lk-holder");
	KASSERT_TRUE(t, holder != NULL);
	KEXPECT_TRUE(t, poll_until(b.held, 2000));
	pos = printk_log_pos();
	pc = preempt_count();
	spin_unlock(&b.lock);			/* not ours */
	still_held = spin_is_locked(&b.lock);
	owner_kept = b.lock.owner_cpu == per_cpu_ptr(other);
	KEXPECT_EQ(t, preempt_count(), pc);
	b.released = true;
	kthread_join(holder);
	unpin_self();
	KEXPECT_TRUE(t, still_held);		/* left with its owner... */
	KEXPECT_TRUE(t, owner_kept);
	KEXPECT_FALSE(t, spin_is_locked(&b.lock));	/* ...whose unlock worked */
	KEXPECT_EQ(t, COUNT(spin_bad_unlock), before + 1);	/* and was not reported */
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: spinlock unlock by non-owner"));
	snprintf(want, sizeof(want), "owner: CPU %d, task lk-holder", other);
	KEXPECT_TRUE(t, printk_log_contains(pos, want));
	KEXPECT_TRUE(t, printk_log_contains(pos, "taken at hold_until_released+"));
}

void debug_spinlock_unlock_unlocked(struct ktest *t)
{
	DEFINE_SPINLOCK(l);
	int before = COUNT(spin_bad_unlock), pc;
	u64 pos = printk_log_pos();

	pc = preempt_count();
	spin_unlock(&l);
	KEXPECT_EQ(t, preempt_count(), pc);
	KEXPECT_EQ(t, COUNT(spin_bad_unlock), before + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: spinlock unlock by non-owner"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "owner: none (the lock is not locked)"));
	/* The lock still works. */
	spin_lock(&l);
	spin_unlock(&l);
	KEXPECT_EQ(t, COUNT(spin_bad_unlock), before + 1);
}

struct too_long {
	spinlock_t lock;
	volatile bool held;
	int reports_before;
};

/*
 * Hold the lock until the waiter has reported (a vCPU can be descheduled by
 * the host for longer than any fixed hold), then for several more timeouts,
 * to show the report comes once per wait. 5 s at most.
 */
static int hold_too_long(void *arg)
{
	struct too_long *s = arg;
	u64 end = ktime_get_ns() + 5 * NSEC_PER_SEC;

	spin_lock(&s->lock);
	s->held = true;
	while (COUNT(spin_held_too_long) == s->reports_before && ktime_get_ns() < end)
		cpu_relax();
	mdelay(4 * spinlock_timeout_ms);
	spin_unlock(&s->lock);
	return 0;
}

static int wait_too_long(void *arg)
{
	struct too_long *s = arg;

	while (!s->held)
		cpu_relax();
	spin_lock(&s->lock);
	spin_unlock(&s->lock);
	return 0;
}

void debug_spinlock_held_too_long(struct ktest *t)
{
	NEED_TWO_CPUS(t);
	static struct too_long s;
	unsigned long saved = spinlock_timeout_ms;
	int before = COUNT(spin_held_too_long), a, b;
	struct task *holder, *waiter;
	u64 pos = printk_log_pos();
	char want[64];

	memset(&s, 0, sizeof(s));
	spin_lock_init(&s.lock);
	s.reports_before = before;
	spinlock_timeout_ms = 50;
	/*
	 * The hog keeps its CPU for the whole hold: this task must not be
	 * queued there, so it stays on its own CPU and the waiter runs there
	 * once this task sleeps in kthread_join.
	 */
	b = pin_self();
	a = other_cpu(b);
	holder = start_on_cpu(a, hold_too_long, &s, "lk-hog");
	waiter = start_on_cpu(b, wait_too_long, &s, "lk-waiter");
	KASSERT_TRUE(t, holder && waiter);
	kthread_join(holder);
	kthread_join(waiter);
	unpin_self();
	spinlock_timeout_ms = saved;
	/* Once per wait, although the wait lasted several timeouts. */
	KEXPECT_EQ(t, COUNT(spin_held_too_long), before + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: spinlock held too long"));
	snprintf(want, sizeof(want), "CPU %d (task lk-waiter) has waited", b);
	KEXPECT_TRUE(t, printk_log_contains(pos, want));
	snprintf(want, sizeof(want), "owner: CPU %d, task lk-hog", a);
	KEXPECT_TRUE(t, printk_log_contains(pos, want));
	KEXPECT_TRUE(t, printk_log_contains(pos, "taken at hold_too_long+"));
	/* The owner's backtrace, recorded when it took the lock, names it too. */
	KEXPECT_TRUE(t, printk_log_contains(pos, "owner's backtrace when it took the lock"));
	KEXPECT_GE(t, printk_log_count(pos, "hold_too_long+"), 2);
	KEXPECT_FALSE(t, spin_is_locked(&s.lock));
}

void debug_might_sleep_with_spinlock(struct ktest *t)
{
	DEFINE_SPINLOCK(l);
	DEFINE_MUTEX(m);
	DECLARE_RWSEM(sem);
	DECLARE_COMPLETION(done);
	int before = COUNT(might_sleep);
	u64 pos = printk_log_pos();

	complete(&done);
	/* None of these has to sleep here, but each might: each is reported. */
	spin_lock(&l);
	mutex_lock(&m);
	mutex_unlock(&m);
	down_read(&sem);
	up_read(&sem);
	wait_for_completion(&done);
	might_sleep();
	spin_unlock(&l);
	KEXPECT_EQ(t, COUNT(might_sleep), before + 4);
	KEXPECT_EQ(t, printk_log_count(pos, "BUG: sleeping function called from invalid context"), 4);
	KEXPECT_TRUE(t, printk_log_contains(pos, "invalid context at kernel/locking/mutex.c:"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "invalid context at kernel/locking/rwsem.c:"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "invalid context at kernel/locking/completion.c:"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "invalid context at tests/kernel/locking_debug_test.c:"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "spinlocks held: 1, irqs_disabled: 0"));
	KEXPECT_FALSE(t, mutex_is_locked(&m));
}

void debug_might_sleep_irqs_off(struct ktest *t)
{
	DEFINE_MUTEX(m);
	int before = COUNT(might_sleep);
	u64 pos = printk_log_pos();
	unsigned long flags;

	flags = arch_local_irq_save();
	mutex_lock(&m);
	mutex_unlock(&m);
	arch_local_irq_restore(flags);
	KEXPECT_EQ(t, COUNT(might_sleep), before + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: sleeping function called from invalid context"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "spinlocks held: 0, irqs_disabled: 1"));
}

/* No false alarms: the same calls where sleeping is allowed. */
void debug_might_sleep_quiet_when_allowed(struct ktest *t)
{
	DEFINE_MUTEX(m);
	DECLARE_RWSEM(sem);
	DECLARE_COMPLETION(done);
	int before = COUNT(might_sleep);

	complete(&done);
	mutex_lock(&m);
	down_write(&sem);
	up_write(&sem);
	mutex_unlock(&m);
	wait_for_completion(&done);
	msleep(1);
	might_sleep();
	KEXPECT_EQ(t, COUNT(might_sleep), before);
}

static int unlock_other(void *arg)
{
	mutex_unlock(arg);
	return 0;
}

void debug_mutex_recursion_and_bad_unlock(struct ktest *t)
{
	static DEFINE_MUTEX(m);
	int rec = COUNT(mutex_recursion), bad = COUNT(mutex_bad_unlock);
	int held = current->locks_held;
	u64 pos = printk_log_pos();
	struct task *other;
	bool owner_kept;

	mutex_lock(&m);
	lock_debug_recursion_returns = true;
	mutex_lock(&m);			/* reported, returns without sleeping forever */
	KEXPECT_EQ(t, COUNT(mutex_recursion), rec + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: mutex recursion"));

	other = kthread_run(unlock_other, &m, "lk-intruder");
	KASSERT_TRUE(t, other != NULL);
	kthread_join(other);
	owner_kept = mutex_owner(&m) == current;
	mutex_unlock(&m);
	KEXPECT_TRUE(t, owner_kept);
	KEXPECT_FALSE(t, mutex_is_locked(&m));
	KEXPECT_EQ(t, COUNT(mutex_bad_unlock), bad + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: mutex unlock by non-owner"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "locked at debug_mutex_recursion_and_bad_unlock+"));
	KEXPECT_EQ(t, current->locks_held, held);
}

static int up_write_other(void *arg)
{
	up_write(arg);
	return 0;
}

void debug_rwsem_recursion_and_bad_unlock(struct ktest *t)
{
	static DECLARE_RWSEM(sem);
	int rec = COUNT(rwsem_recursion), bad = COUNT(rwsem_bad_unlock);
	int held = current->locks_held;
	u64 pos = printk_log_pos();
	struct task *other;

	up_read(&sem);				/* not held at all */
	KEXPECT_EQ(t, COUNT(rwsem_bad_unlock), bad + 1);
	down_write(&sem);
	lock_debug_recursion_returns = true;
	down_read(&sem);			/* the writer wants in again */
	KEXPECT_EQ(t, COUNT(rwsem_recursion), rec + 1);
	other = kthread_run(up_write_other, &sem, "lk-intruder");
	KASSERT_TRUE(t, other != NULL);
	kthread_join(other);
	KEXPECT_EQ(t, COUNT(rwsem_bad_unlock), bad + 2);
	KEXPECT_TRUE(t, rwsem_is_locked(&sem));	/* still the writer's */
	up_write(&sem);
	KEXPECT_FALSE(t, rwsem_is_locked(&sem));
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: rwsem up_read while not held for reading"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: rwsem recursion"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: rwsem up_write by a task that is not the writer"));
	KEXPECT_EQ(t, current->locks_held, held);
}

#endif /* DEBUG_LOCKS */
