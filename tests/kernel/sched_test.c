/*
 * The scheduler: sleep and wake-up without lost wake-ups, preemption of a
 * thread that never yields, affinity, sleeping with a timeout, and threads
 * spreading over every CPU.
 */
#include <quire/ktest.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/time.h>
#include <quire/string.h>

#define SLEEPERS	16
#define ROUNDS		50

static struct task *sleepers[SLEEPERS];
static volatile int tokens[SLEEPERS];
static int woken[SLEEPERS];

static int sleeper(void *arg)
{
	int me = (int)(uintptr_t)arg;

	for (int round = 0; round < ROUNDS; round++) {
		for (;;) {
			set_current_state(TASK_UNINTERRUPTIBLE);
			if (__atomic_load_n(&tokens[me], __ATOMIC_ACQUIRE))
				break;
			schedule();
		}
		__set_current_state(TASK_RUNNING);
		__atomic_store_n(&tokens[me], 0, __ATOMIC_RELEASE);
		woken[me]++;
	}
	return me;
}

/* Wake-ups are handed out one at a time; each sleeper must see all of them. */
static void many_threads_sleep_and_wake(struct ktest *t)
{
	for (int i = 0; i < SLEEPERS; i++) {
		tokens[i] = 0;
		woken[i] = 0;
		sleepers[i] = kthread_run(sleeper, (void *)(uintptr_t)i, "sleeper");
		KASSERT_TRUE(t, sleepers[i] != NULL);
	}
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < SLEEPERS; i++) {
			__atomic_store_n(&tokens[i], 1, __ATOMIC_RELEASE);
			wake_up_process(sleepers[i]);
		}
		/* Wait until every token was taken before the next round. */
		for (int i = 0; i < SLEEPERS; i++)
			while (__atomic_load_n(&tokens[i], __ATOMIC_ACQUIRE))
				yield();
	}
	for (int i = 0; i < SLEEPERS; i++) {
		KEXPECT_EQ(t, kthread_join(sleepers[i]), i);
		KEXPECT_EQ(t, woken[i], ROUNDS);
	}
}

static volatile bool stop_spinning;
static volatile u64 spinner_iterations, other_ran_at;

static int spinner(void *arg)
{
	while (!__atomic_load_n(&stop_spinning, __ATOMIC_ACQUIRE))
		spinner_iterations++;		/* never yields, never sleeps */
	return 0;
}

static int note_run(void *arg)
{
	other_ran_at = spinner_iterations + 1;	/* the spinner had not stopped */
	return 0;
}

/* Two threads on one CPU, one of which never gives up the CPU: the tick must preempt it. */
static void preemption_moves_a_spinner(struct ktest *t)
{
	int cpu = nr_cpus_online - 1;
	struct task *spin = kthread_create(spinner, NULL, "spinner");
	struct task *other = kthread_create(note_run, NULL, "other");
	u64 start;

	KASSERT_TRUE(t, spin && other);
	stop_spinning = false;
	other_ran_at = 0;
	kthread_bind(spin, cpu);
	kthread_bind(other, cpu);
	wake_up_process(spin);
	start = ktime_get_ns();
	while (spinner_iterations == 0 && ktime_get_ns() - start < NSEC_PER_SEC)
		yield();
	wake_up_process(other);
	KEXPECT_EQ(t, kthread_join(other), 0);	/* returns only if it got the CPU */
	__atomic_store_n(&stop_spinning, true, __ATOMIC_RELEASE);
	KEXPECT_EQ(t, kthread_join(spin), 0);
	KEXPECT_GT(t, other_ran_at, 0);
}

static volatile cpumask_t seen_cpus;

static int roam(void *arg)
{
	for (int i = 0; i < 200; i++) {
		preempt_disable();
		__atomic_fetch_or(&seen_cpus, cpumask_of(smp_processor_id()), __ATOMIC_RELAXED);
		preempt_enable();
		if (i % 10 == 0)
			msleep(1);
		else
			yield();
	}
	return 0;
}

static void affinity_is_honoured(struct ktest *t)
{
	cpumask_t allowed = cpumask_of(nr_cpus_online - 1);
	struct task *th;

	if (nr_cpus_online > 2)
		allowed |= cpumask_of(1);
	seen_cpus = 0;
	th = kthread_create(roam, NULL, "roam");
	KASSERT_TRUE(t, th != NULL);
	KASSERT_EQ(t, set_cpus_allowed(th, allowed), 0);
	wake_up_process(th);
	KEXPECT_EQ(t, kthread_join(th), 0);
	KEXPECT_NE(t, seen_cpus, 0);
	KEXPECT_EQ(t, seen_cpus & ~allowed, 0);
	/* An empty or offline-only mask is refused. */
	th = kthread_create(roam, NULL, "roam");
	KASSERT_TRUE(t, th != NULL);
	KEXPECT_EQ(t, set_cpus_allowed(th, 0), -22);
	KEXPECT_EQ(t, set_cpus_allowed(th, cpumask_of(MAX_CPUS - 1)), -22);
	wake_up_process(th);
	kthread_join(th);
}

static void msleep_sleeps(struct ktest *t)
{
	u64 start = ktime_get_ns();

	msleep(30);
	KEXPECT_GE(t, ktime_get_ns() - start, 30 * NSEC_PER_MSEC);
	KEXPECT_LT(t, ktime_get_ns() - start, 2 * NSEC_PER_SEC);
}

static volatile cpumask_t busy_seen;
static volatile bool busy_stop;

static int busy(void *arg)
{
	while (!__atomic_load_n(&busy_stop, __ATOMIC_ACQUIRE)) {
		preempt_disable();
		__atomic_fetch_or(&busy_seen, cpumask_of(smp_processor_id()), __ATOMIC_RELAXED);
		preempt_enable();
	}
	return 0;
}

/* Runnable threads, created on one CPU, end up using every CPU. */
static void runnable_threads_use_all_cpus(struct ktest *t)
{
	struct task *th[2 * MAX_CPUS];
	int n = 2 * nr_cpus_online;
	u64 start;

	busy_seen = 0;
	busy_stop = false;
	for (int i = 0; i < n; i++) {
		th[i] = kthread_run(busy, NULL, "busy");
		KASSERT_TRUE(t, th[i] != NULL);
	}
	start = ktime_get_ns();
	while (busy_seen != cpu_online_mask() && ktime_get_ns() - start < 3 * NSEC_PER_SEC)
		msleep(5);
	__atomic_store_n(&busy_stop, true, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++)
		kthread_join(th[i]);
	KEXPECT_EQ(t, busy_seen, cpu_online_mask());
}

KTEST_SUITE(sched,
	    KTEST_CASE(many_threads_sleep_and_wake),
	    KTEST_CASE(preemption_moves_a_spinner),
	    KTEST_CASE(affinity_is_honoured),
	    KTEST_CASE(msleep_sleeps),
	    KTEST_CASE(runnable_threads_use_all_cpus));
