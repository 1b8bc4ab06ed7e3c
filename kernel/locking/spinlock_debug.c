/*
 * Spinlock debugging (DEBUG_LOCKS): the out-of-line lock and unlock that
 * include/quire/spinlock.h calls instead of the bare ones. Each lock
 * records its owner CPU and task, the TSC and the call site when taken, and
 * a short backtrace of the taker; that record is what the reports print, so
 * a waiter can show where the owner took the lock without interrupting it.
 *
 *   recursion       this CPU takes a lock it already holds (also an
 *                   interrupt handler taking a lock the code it interrupted
 *                   holds without irqsave): a certain deadlock; report, panic
 *   bad unlock      unlock on a CPU that does not hold the lock (or of an
 *                   unlocked lock): report; the lock stays with its owner
 *   held too long   one holder kept it longer than spinlock_timeout_ms
 *                   while a waiter spun: report once per wait, with the
 *                   owner's record; keep waiting
 *
 * Ownership is per CPU, not per task: a spinlock holder cannot be preempted
 * or migrate, so "this CPU holds it" is the meaningful test (and a lock
 * handed across a context switch, like a run-queue lock, stays legal).
 */
#include <quire/spinlock.h>
#include <quire/debug_locks.h>
#include <quire/sched.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/stacktrace.h>
#include <quire/time.h>
#include <asm/cpu.h>

#ifdef DEBUG_LOCKS

#ifndef _RET_IP_
#define _RET_IP_ ((unsigned long)__builtin_return_address(0))
#endif

static const char *comm_of(struct task *t)
{
	return t ? t->comm : "(no task)";
}

/* Who holds l, where they took it, and (with_trace) their backtrace then. */
static void show_owner(spinlock_t *l, bool with_trace)
{
	struct percpu *cpu = READ_ONCE(l->owner_cpu);
	struct task *t = READ_ONCE(l->owner);
	char sym[128];

	if (!cpu) {
		pr_err(" owner: none (the lock is %s)\n",
		       arch_spin_is_locked(&l->raw) ? "being taken or released" : "not locked");
		return;
	}
	pr_err(" owner: CPU %d, task %s (tid %d), taken at %s\n", cpu->cpu, comm_of(t),
	       t ? t->tid : -1, lock_debug_sym(sym, sizeof(sym), l->taken_ip));
	if (!with_trace)
		return;
	pr_err(" owner's backtrace when it took the lock:\n");
	for (int i = 0; i < SPINLOCK_TRACE_DEPTH && l->trace[i]; i++)
		pr_err("  [<%016llx>] %s\n", (unsigned long long)l->trace[i],
		       lock_debug_sym(sym, sizeof(sym), l->trace[i]));
}

static void spin_acquired(spinlock_t *l, unsigned long ip, u64 fp)
{
	struct task *t = current;
	int n;

	l->owner_cpu = this_cpu();
	l->owner = t;
	l->taken_tsc = rdtsc();
	l->taken_ip = ip;
	n = stack_trace_save(fp, l->trace, SPINLOCK_TRACE_DEPTH);
	if (n < SPINLOCK_TRACE_DEPTH)
		l->trace[n] = 0;
	this_cpu_add_int(spinlocks_held, 1);
	if (t)
		t->locks_held++;
}

/* Returns true when the caller is to return without the lock (the test hook). */
static bool spin_recursion(spinlock_t *l, unsigned long ip)
{
	unsigned long flags = lock_report_begin(&lock_debug_counts.spin_recursion);
	char sym[128];

	pr_err("BUG: spinlock recursion on CPU %d: lock 0x%lx taken again by %s at %s\n",
	       smp_processor_id(), (unsigned long)l, comm_of(current),
	       lock_debug_sym(sym, sizeof(sym), ip));
	show_owner(l, true);
	dump_stack();
	lock_report_end(flags);
	if (lock_debug_recursion_returns) {
		lock_debug_recursion_returns = false;
		preempt_enable_no_resched();	/* undo spin_lock's: as if never called */
		return true;
	}
	panic("spinlock recursion (a certain deadlock)");
}

static u64 timeout_cycles(void)
{
	u64 khz = tsc_khz();

	if (!khz)
		khz = 4000000;		/* not calibrated yet: assume a fast TSC, so never early */
	return (u64)READ_ONCE(spinlock_timeout_ms) * khz;
}

static u64 cycles_to_ms(u64 c)
{
	u64 khz = tsc_khz();

	return khz ? c / khz : 0;
}

static void spin_held_too_long(spinlock_t *l, unsigned long ip, u64 waited)
{
	unsigned long flags = lock_report_begin(&lock_debug_counts.spin_held_too_long);
	u64 taken = READ_ONCE(l->taken_tsc), now = rdtsc();
	char sym[128];

	pr_err("BUG: spinlock held too long: lock 0x%lx, CPU %d (task %s) has waited %llu ms at %s\n",
	       (unsigned long)l, smp_processor_id(), comm_of(current),
	       (unsigned long long)cycles_to_ms(waited), lock_debug_sym(sym, sizeof(sym), ip));
	show_owner(l, true);
	if (READ_ONCE(l->owner_cpu) && now > taken)
		pr_err(" held for about %llu ms so far\n", (unsigned long long)cycles_to_ms(now - taken));
	pr_err(" the waiter:\n");
	dump_stack();
	pr_err(" (still waiting; reported once per wait)\n");
	lock_report_end(flags);
}

/* The contended path: spin, and report once if it takes too long. */
static void spin_wait(spinlock_t *l, unsigned long ip)
{
	u64 start = rdtsc(), limit = timeout_cycles();
	bool reported = false;

	u64 holder = READ_ONCE(l->taken_tsc), seen = start;

	do {
		while (arch_spin_is_locked(&l->raw)) {
			u64 taken = READ_ONCE(l->taken_tsc);

			cpu_relax();
			/*
			 * Too long is one holder keeping it, timed from when this
			 * waiter first saw that holder (its taken_tsc): the lock is
			 * test-and-set, not fair, so a waiter may lose it to other
			 * CPUs many times in a row, which is slow but not a bug.
			 */
			if (taken != holder) {
				holder = taken;
				seen = rdtsc();
			}
			/* Still held? (A vCPU may have been away for the whole hold.) */
			if (!reported && limit && rdtsc() - seen > limit &&
			    arch_spin_is_locked(&l->raw) && READ_ONCE(l->taken_tsc) == holder) {
				spin_held_too_long(l, ip, rdtsc() - start);
				reported = true;
			}
		}
	} while (!arch_spin_trylock(&l->raw));
}

void do_raw_spin_lock(spinlock_t *l)
{
	u64 fp = (u64)(uintptr_t)__builtin_frame_address(0);
	unsigned long ip = _RET_IP_;

	/* Only this CPU ever sets owner_cpu to itself, and clears it before releasing. */
	if (unlikely(READ_ONCE(l->owner_cpu) == this_cpu()) && spin_recursion(l, ip))
		return;
	if (unlikely(!arch_spin_trylock(&l->raw)))
		spin_wait(l, ip);
	spin_acquired(l, ip, fp);
}

bool do_raw_spin_trylock(spinlock_t *l)
{
	u64 fp = (u64)(uintptr_t)__builtin_frame_address(0);

	if (!arch_spin_trylock(&l->raw))
		return false;
	spin_acquired(l, _RET_IP_, fp);
	return true;
}

static void spin_bad_unlock(spinlock_t *l, unsigned long ip)
{
	unsigned long flags = lock_report_begin(&lock_debug_counts.spin_bad_unlock);
	char sym[128];

	pr_err("BUG: spinlock unlock by non-owner: lock 0x%lx unlocked on CPU %d by %s at %s\n",
	       (unsigned long)l, smp_processor_id(), comm_of(current),
	       lock_debug_sym(sym, sizeof(sym), ip));
	show_owner(l, false);
	dump_stack();
	pr_err(" (the lock is left as it was)\n");
	lock_report_end(flags);
}

bool spin_is_held_by_me(spinlock_t *l)
{
	return READ_ONCE(l->owner_cpu) == this_cpu();
}

/* A "lock held" contract broken: report and go on (a missing lock is a race, not a hang). */
void lockdep_assert_failed(const void *lock, const char *what, const char *file, int line)
{
	unsigned long flags = lock_report_begin(&lock_debug_counts.assert_not_held);

	pr_err("BUG: lock not held: %s (0x%lx) at %s:%d, task %s on CPU %d\n", what,
	       (unsigned long)lock, file, line, comm_of(current), smp_processor_id());
	dump_stack();
	lock_report_end(flags);
}

void do_raw_spin_unlock(spinlock_t *l)
{
	struct task *t;

	if (unlikely(READ_ONCE(l->owner_cpu) != this_cpu())) {
		spin_bad_unlock(l, _RET_IP_);
		/* This CPU never took it: cancel the preempt_enable() spin_unlock does next. */
		preempt_disable();
		return;
	}
	/* The taker's count, even if it is switched out now (a lock held across a switch). */
	t = l->owner;
	if (t)
		t->locks_held--;
	this_cpu_add_int(spinlocks_held, -1);
	l->owner = NULL;
	l->taken_ip = 0;
	WRITE_ONCE(l->owner_cpu, NULL);
	arch_spin_unlock(&l->raw);
}

#endif /* DEBUG_LOCKS */
