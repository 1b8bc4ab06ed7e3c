/*
 * The locks, on every online CPU at once: counters that only end exact if
 * the lock excludes, readers that share an rwsem while writers do not,
 * completions and wait queues that wake across CPUs. The debug checks are
 * in locking_debug_test.c. Timings go to the log ("locking: ...").
 */
#include "locking_test.h"
#include <quire/spinlock.h>
#include <quire/mutex.h>
#include <quire/rwsem.h>
#include <quire/completion.h>
#include <quire/wait.h>
#include <quire/debug_locks.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/string.h>

/* ---- helpers ---- */

struct task *start_on_cpu(int cpu, int (*fn)(void *), void *arg, const char *name)
{
	struct task *t = kthread_create(fn, arg, name);

	if (t) {
		kthread_bind(t, cpu);
		wake_up_process(t);
	}
	return t;
}

int start_on_each_cpu(struct cpu_threads *ct, int (*fn)(void *), void *arg, const char *name)
{
	int cpu;

	ct->nr = 0;
	for_each_online_cpu(cpu) {
		struct task *t = start_on_cpu(cpu, fn, arg, name);

		if (t)
			ct->task[ct->nr++] = t;
	}
	return ct->nr;
}

int join_all(struct cpu_threads *ct)
{
	int sum = 0;

	for (int i = 0; i < ct->nr; i++)
		sum += kthread_join(ct->task[i]);
	ct->nr = 0;
	return sum;
}

int other_cpu(int cpu)
{
	int c;

	for_each_online_cpu(c)
		if (c != cpu)
			return c;
	return -1;
}

int pin_self(void)
{
	int cpu;

	preempt_disable();
	cpu = smp_processor_id();
	preempt_enable();
	set_cpus_allowed(current, cpumask_of(cpu));
	return cpu;
}

void unpin_self(void)
{
	set_cpus_allowed(current, CPU_MASK_ALL);
}

/* ---- exact counters ---- */

struct counter_test {
	spinlock_t lock;
	struct mutex mutex;
	bool use_mutex;
	unsigned long iters;
	unsigned long counter;		/* not atomic: only the lock keeps it exact */
	atomic_t ready;
	atomic_t wrong_cpu;
	unsigned long handovers;	/* acquisitions by another CPU than the last one */
	int last_cpu;
	volatile unsigned long progress[MAX_CPUS];	/* increments done, per thread */
	unsigned long pace;
	volatile bool go;
	int nr_threads;
};

/*
 * The threads keep pace: none runs more than c->pace increments ahead of
 * the slowest. Otherwise, under TCG on a busy host (vCPUs take turns on a few
 * cores) and with an unfair test-and-set lock, one thread often does all
 * its increments before the next even starts, and the test proves nothing.
 * A thread the host keeps away for long is waited for 20 ms at most.
 */
static void keep_pace(struct counter_test *c, int cpu, unsigned long done)
{
	u64 end = ktime_get_ns() + 20 * NSEC_PER_MSEC;
	int o;

	c->progress[cpu] = done;
	for_each_online_cpu(o)
		while (c->progress[o] + c->pace < done && ktime_get_ns() < end)
			cpu_relax();
}

static int counter_thread(void *arg)
{
	struct counter_test *c = arg;
	int cpu = smp_processor_id();

	atomic_inc(&c->ready);
	while (!c->go)			/* start together, so that they contend */
		cpu_relax();
	for (unsigned long i = 0; i < c->iters; i++) {
		unsigned long v;

		if (i % c->pace == 0)
			keep_pace(c, cpu, i);
		if (c->use_mutex)
			mutex_lock(&c->mutex);
		else
			spin_lock(&c->lock);
		v = c->counter;
		cpu_relax();		/* widen the window a lost update would need */
		c->counter = v + 1;
		if (c->last_cpu != cpu) {
			c->handovers++;
			c->last_cpu = cpu;
		}
		if (c->use_mutex)
			mutex_unlock(&c->mutex);
		else
			spin_unlock(&c->lock);
	}
	c->progress[cpu] = ~0UL / 2;		/* done: nobody waits for us */
	if (smp_processor_id() != cpu)
		atomic_inc(&c->wrong_cpu);	/* kthread_bind not honoured */
	return 0;
}

static void run_counter(struct ktest *t, bool use_mutex, unsigned long iters,
			unsigned long pace)
{
	static struct counter_test c;
	struct cpu_threads ct;
	int sleeps = atomic_read(&lock_debug_counts.might_sleep);
	u64 start;
	int n;

	memset(&c, 0, sizeof(c));
	spin_lock_init(&c.lock);
	mutex_init(&c.mutex);
	c.use_mutex = use_mutex;
	c.last_cpu = -1;
	c.iters = iters;
	c.pace = pace;
	n = start_on_each_cpu(&ct, counter_thread, &c, use_mutex ? "lk-mutex" : "lk-spin");
	KEXPECT_EQ(t, n, nr_cpus_online);
	KEXPECT_TRUE(t, poll_until(atomic_read(&c.ready) == n, 5000));
	start = ktime_get_ns();
	c.go = true;
	join_all(&ct);
	pr_info("locking: %s counter: %d CPUs x %lu increments = %lu in %llu ms, %lu handovers between CPUs\n",
		use_mutex ? "mutex" : "spinlock", n, iters, c.counter,
		(unsigned long long)((ktime_get_ns() - start) / NSEC_PER_MSEC), c.handovers);
	KEXPECT_EQ(t, c.counter, (unsigned long)n * iters);
	KEXPECT_EQ(t, atomic_read(&c.wrong_cpu), 0);
	KEXPECT_FALSE(t, spin_is_locked(&c.lock));
	KEXPECT_FALSE(t, mutex_is_locked(&c.mutex));
	/* Legal use never trips might_sleep. */
	KEXPECT_EQ(t, atomic_read(&lock_debug_counts.might_sleep), sleeps);
}

static void spinlock_counter_all_cpus(struct ktest *t)
{
	run_counter(t, false, 10000, 256);
}

static void mutex_counter_all_cpus(struct ktest *t)
{
	run_counter(t, true, 500, 32);
}

static void spinlock_basics(struct ktest *t)
{
	DEFINE_SPINLOCK(l);
	unsigned long flags;
	int pc;

	KEXPECT_TRUE(t, spin_trylock(&l));
	KEXPECT_TRUE(t, spin_is_locked(&l));
	pc = preempt_count();
	KEXPECT_GE(t, pc, 1);			/* a holder is not preemptible */
	KEXPECT_FALSE(t, spin_trylock(&l));
	KEXPECT_EQ(t, preempt_count(), pc);	/* a failed trylock leaves no trace */
	spin_unlock(&l);
	KEXPECT_FALSE(t, spin_is_locked(&l));

	spin_lock_irqsave(&l, flags);
	KEXPECT_TRUE(t, arch_irqs_disabled());
	spin_unlock_irqrestore(&l, flags);
	KEXPECT_FALSE(t, arch_irqs_disabled());
}

static void mutex_basics(struct ktest *t)
{
	DEFINE_MUTEX(m);

	KEXPECT_FALSE(t, mutex_is_locked(&m));
	KEXPECT_TRUE(t, mutex_trylock(&m));
	KEXPECT_PTR_EQ(t, mutex_owner(&m), current);
	KEXPECT_FALSE(t, mutex_trylock(&m));
	mutex_unlock(&m);
	KEXPECT_FALSE(t, mutex_is_locked(&m));
	mutex_lock(&m);
	KEXPECT_TRUE(t, mutex_is_locked(&m));
	mutex_unlock(&m);
	KEXPECT_PTR_EQ(t, mutex_owner(&m), NULL);
}

/* A sleeping holder: the waiters sleep too, and get it in FIFO order. */
struct mutex_order {
	struct mutex m;
	atomic_t queued;
	int order[MAX_CPUS];
	int next;
};

static int mutex_waiters(struct mutex *m)
{
	struct list_head *p;
	int n = 0;

	spin_lock(&m->wait_lock);
	list_for_each(p, &m->wait_list)
		n++;
	spin_unlock(&m->wait_lock);
	return n;
}

static int mutex_order_thread(void *arg)
{
	struct mutex_order *o = arg;
	int me = atomic_inc_return(&o->queued);

	mutex_lock(&o->m);
	o->order[o->next++] = me;
	mutex_unlock(&o->m);
	return 0;
}

static void mutex_hands_off_in_order(struct ktest *t)
{
	static struct mutex_order o;
	struct task *tasks[4];
	int n = 0;

	memset(&o, 0, sizeof(o));
	mutex_init(&o.m);
	mutex_lock(&o.m);
	for (int i = 0; i < 4; i++) {
		tasks[n] = kthread_run(mutex_order_thread, &o, "lk-order");
		if (!tasks[n])
			break;
		n++;
		/* Queued one at a time, so the expected order is known. */
		KEXPECT_TRUE(t, poll_until(mutex_waiters(&o.m) == n, 2000));
	}
	KEXPECT_EQ(t, o.next, 0);		/* nobody got past the holder */
	mutex_unlock(&o.m);
	for (int i = 0; i < n; i++)
		kthread_join(tasks[i]);
	KEXPECT_EQ(t, o.next, n);
	for (int i = 0; i < o.next; i++)
		KEXPECT_EQ(t, o.order[i], i + 1);
}

/* ---- rwsem ---- */

struct rw_test {
	struct rw_semaphore sem;
	atomic_t readers, writers, max_readers, bad;
	atomic_t arrived;			/* readers that got in, ever */
	int want;
	unsigned int iters;
};

static void note_max(atomic_t *max, int v)
{
	int m = atomic_read(max);

	while (v > m && !__atomic_compare_exchange_n(&max->counter, &m, v, false,
						     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
}

/* Every reader holds the semaphore until all are inside at once (or 5 s pass). */
static int all_readers_thread(void *arg)
{
	struct rw_test *r = arg;

	down_read(&r->sem);
	note_max(&r->max_readers, atomic_inc_return(&r->readers));
	atomic_inc(&r->arrived);
	poll_until(atomic_read(&r->arrived) >= r->want, 5000);
	note_max(&r->max_readers, atomic_read(&r->readers));
	atomic_dec(&r->readers);
	up_read(&r->sem);
	return 0;
}

static void rwsem_readers_share(struct ktest *t)
{
	static struct rw_test r;
	struct cpu_threads ct;

	memset(&r, 0, sizeof(r));
	init_rwsem(&r.sem);
	r.want = nr_cpus_online;
	start_on_each_cpu(&ct, all_readers_thread, &r, "lk-reader");
	join_all(&ct);
	pr_info("locking: rwsem: %d readers inside at once on %d CPUs\n",
		atomic_read(&r.max_readers), nr_cpus_online);
	KEXPECT_EQ(t, atomic_read(&r.max_readers), nr_cpus_online);
	KEXPECT_FALSE(t, rwsem_is_locked(&r.sem));
}

static int rw_mixed_thread(void *arg)
{
	struct rw_test *r = arg;
	bool writer = smp_processor_id() & 1;

	for (unsigned int i = 0; i < r->iters; i++) {
		if (writer || i % 8 == 0) {
			down_write(&r->sem);
			if (atomic_inc_return(&r->writers) != 1 || atomic_read(&r->readers))
				atomic_inc(&r->bad);
			ndelay(2000);
			atomic_dec(&r->writers);
			up_write(&r->sem);
		} else {
			down_read(&r->sem);
			note_max(&r->max_readers, atomic_inc_return(&r->readers));
			if (atomic_read(&r->writers))
				atomic_inc(&r->bad);
			ndelay(2000);
			atomic_dec(&r->readers);
			up_read(&r->sem);
		}
	}
	return 0;
}

static void rwsem_writers_exclusive(struct ktest *t)
{
	static struct rw_test r;
	struct cpu_threads ct;

	memset(&r, 0, sizeof(r));
	init_rwsem(&r.sem);
	r.iters = 300;
	start_on_each_cpu(&ct, rw_mixed_thread, &r, "lk-rw");
	join_all(&ct);
	KEXPECT_EQ(t, atomic_read(&r.bad), 0);
	KEXPECT_FALSE(t, rwsem_is_locked(&r.sem));
	KEXPECT_FALSE(t, rwsem_is_contended(&r.sem));
}

/* A waiting writer holds back new readers, then gets in before them. */
struct rw_starve {
	struct rw_semaphore sem;
	volatile bool writer_done;
	volatile bool reader_saw_writer_done;
	atomic_t started;
};

static int starve_writer(void *arg)
{
	struct rw_starve *s = arg;

	atomic_inc(&s->started);
	down_write(&s->sem);
	msleep(5);
	s->writer_done = true;
	up_write(&s->sem);
	return 0;
}

static int starve_reader(void *arg)
{
	struct rw_starve *s = arg;

	atomic_inc(&s->started);
	down_read(&s->sem);
	s->reader_saw_writer_done = s->writer_done;
	up_read(&s->sem);
	return 0;
}

static void rwsem_writer_not_starved(struct ktest *t)
{
	static struct rw_starve s;
	struct task *w, *r;

	memset(&s, 0, sizeof(s));
	init_rwsem(&s.sem);
	down_read(&s.sem);
	w = kthread_run(starve_writer, &s, "lk-writer");
	KASSERT_TRUE(t, w != NULL);
	KEXPECT_TRUE(t, poll_until(rwsem_is_contended(&s.sem), 2000));
	/* A reader may not jump the queued writer, though a reader holds it. */
	KEXPECT_FALSE(t, down_read_trylock(&s.sem));
	KEXPECT_FALSE(t, down_write_trylock(&s.sem));
	r = kthread_run(starve_reader, &s, "lk-reader");
	KEXPECT_TRUE(t, poll_until(atomic_read(&s.started) == 2, 2000));
	msleep(5);
	up_read(&s.sem);
	kthread_join(w);
	if (r)
		kthread_join(r);
	KEXPECT_TRUE(t, s.writer_done);
	KEXPECT_TRUE(t, s.reader_saw_writer_done);
	KEXPECT_TRUE(t, down_write_trylock(&s.sem));
	up_write(&s.sem);
	KEXPECT_FALSE(t, rwsem_is_locked(&s.sem));
}

/* ---- completions ---- */

struct comp_test {
	struct completion go[MAX_CPUS];
	struct completion ack;
	struct completion all;
	int ran_on[MAX_CPUS];
	atomic_t through;
};

static int comp_thread(void *arg)
{
	struct comp_test *c = arg;
	int cpu = smp_processor_id();

	wait_for_completion(&c->go[cpu]);
	c->ran_on[cpu] = smp_processor_id();
	complete(&c->ack);
	wait_for_completion(&c->all);
	atomic_inc(&c->through);
	return 0;
}

static void completion_wakes_across_cpus(struct ktest *t)
{
	static struct comp_test c;
	struct cpu_threads ct;
	int n, cpu, acked = 0;

	memset(&c, 0, sizeof(c));
	for (int i = 0; i < MAX_CPUS; i++) {
		init_completion(&c.go[i]);
		c.ran_on[i] = -1;
	}
	init_completion(&c.ack);
	init_completion(&c.all);
	n = start_on_each_cpu(&ct, comp_thread, &c, "lk-comp");
	msleep(10);				/* most of them asleep by now */
	for_each_online_cpu(cpu)
		complete(&c.go[cpu]);
	for (int i = 0; i < n; i++)
		if (wait_for_completion_timeout(&c.ack, 5 * NSEC_PER_SEC))
			acked++;
	KEXPECT_EQ(t, acked, n);
	KEXPECT_EQ(t, atomic_read(&c.through), 0);
	complete_all(&c.all);			/* one call lets every waiter through */
	join_all(&ct);
	KEXPECT_EQ(t, atomic_read(&c.through), n);
	for_each_online_cpu(cpu)
		KEXPECT_EQ(t, c.ran_on[cpu], cpu);
	/* complete_all stays done until reinit. */
	KEXPECT_TRUE(t, completion_done(&c.all));
	wait_for_completion(&c.all);
	reinit_completion(&c.all);
	KEXPECT_FALSE(t, completion_done(&c.all));
}

static void completion_counts_and_times_out(struct ktest *t)
{
	DECLARE_COMPLETION(x);
	u64 start, left;

	start = ktime_get_ns();
	left = wait_for_completion_timeout(&x, 20 * NSEC_PER_MSEC);
	KEXPECT_EQ(t, left, 0);
	KEXPECT_GE(t, ktime_get_ns() - start, 20 * NSEC_PER_MSEC);

	complete(&x);
	complete(&x);
	KEXPECT_GT(t, wait_for_completion_timeout(&x, NSEC_PER_SEC), 0);
	KEXPECT_TRUE(t, try_wait_for_completion(&x));
	KEXPECT_FALSE(t, try_wait_for_completion(&x));	/* two completes, two waits */
	KEXPECT_FALSE(t, completion_done(&x));
}

/* ---- wait queues ---- */

struct wq_test {
	wait_queue_head_t wq;
	volatile bool flag;
	atomic_t woke;
	int delay_ms;
};

static int wq_setter(void *arg)
{
	struct wq_test *w = arg;

	msleep(w->delay_ms);
	w->flag = true;
	wake_up(&w->wq);
	return 0;
}

static void wait_event_timeout_cases(struct ktest *t)
{
	static struct wq_test w;
	struct task *setter;
	u64 start;
	long left;
	int me;

	memset(&w, 0, sizeof(w));
	init_waitqueue_head(&w.wq);

	/* Nobody sets it: 0 after the timeout. */
	start = ktime_get_ns();
	left = wait_event_timeout(w.wq, w.flag, 20 * NSEC_PER_MSEC);
	KEXPECT_EQ(t, left, 0);
	KEXPECT_GE(t, ktime_get_ns() - start, 20 * NSEC_PER_MSEC);

	/* Already true: returns at once with time left. */
	w.flag = true;
	KEXPECT_GT(t, wait_event_timeout(w.wq, w.flag, NSEC_PER_SEC), 0);

	/* Set on another CPU 20 ms later: woken early, long before the timeout. */
	w.flag = false;
	w.delay_ms = 20;
	me = pin_self();
	setter = start_on_cpu(other_cpu(me) >= 0 ? other_cpu(me) : me, wq_setter, &w, "lk-setter");
	KASSERT_TRUE(t, setter != NULL);
	start = ktime_get_ns();
	left = wait_event_timeout(w.wq, w.flag, 3 * NSEC_PER_SEC);
	KEXPECT_GT(t, left, 0);
	KEXPECT_LT(t, ktime_get_ns() - start, NSEC_PER_SEC);
	kthread_join(setter);

	/* wait_event without a timeout, same story. */
	w.flag = false;
	setter = start_on_cpu(other_cpu(me) >= 0 ? other_cpu(me) : me, wq_setter, &w, "lk-setter");
	KASSERT_TRUE(t, setter != NULL);
	wait_event(w.wq, w.flag);
	KEXPECT_TRUE(t, w.flag);
	kthread_join(setter);
	unpin_self();
	KEXPECT_FALSE(t, waitqueue_active(&w.wq));
}

static struct wq_test wx;

static int wq_waiters(wait_queue_head_t *wq)
{
	struct list_head *p;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&wq->lock, flags);
	list_for_each(p, &wq->head)
		n++;
	spin_unlock_irqrestore(&wq->lock, flags);
	return n;
}

static int wq_waiter(void *arg)
{
	bool exclusive = arg != NULL;
	DEFINE_WAIT(w);

	if (exclusive)
		prepare_to_wait_exclusive(&wx.wq, &w, TASK_UNINTERRUPTIBLE);
	else
		prepare_to_wait(&wx.wq, &w, TASK_UNINTERRUPTIBLE);
	schedule();			/* one wake-up, whatever it is */
	finish_wait(&wx.wq, &w);
	atomic_inc(&wx.woke);
	return 0;
}

/* wake_up: every non-exclusive waiter and one exclusive; wake_up_all: the rest. */
static void wake_up_exclusive_and_all(struct ktest *t)
{
	struct task *tasks[5];
	int n = 0, woken;

	memset(&wx, 0, sizeof(wx));
	init_waitqueue_head(&wx.wq);
	for (int i = 0; i < 5; i++) {
		tasks[n] = kthread_run(wq_waiter, i < 2 ? NULL : (void *)1, "lk-waiter");
		if (tasks[n])
			n++;
	}
	KASSERT_EQ(t, n, 5);
	KEXPECT_TRUE(t, poll_until(wq_waiters(&wx.wq) == 5, 2000));
	woken = wake_up(&wx.wq);
	KEXPECT_EQ(t, woken, 3);		/* 2 non-exclusive + 1 exclusive */
	KEXPECT_TRUE(t, poll_until(atomic_read(&wx.woke) == 3, 2000));
	msleep(10);
	KEXPECT_EQ(t, atomic_read(&wx.woke), 3);
	woken = wake_up_all(&wx.wq);
	KEXPECT_EQ(t, woken, 2);
	for (int i = 0; i < n; i++)
		kthread_join(tasks[i]);
	KEXPECT_EQ(t, atomic_read(&wx.woke), 5);
	KEXPECT_FALSE(t, waitqueue_active(&wx.wq));
}

KTEST_SUITE(locking,
	    KTEST_CASE(spinlock_basics),
	    KTEST_CASE(spinlock_counter_all_cpus),
	    KTEST_CASE(mutex_basics),
	    KTEST_CASE(mutex_counter_all_cpus),
	    KTEST_CASE(mutex_hands_off_in_order),
	    KTEST_CASE(rwsem_readers_share),
	    KTEST_CASE(rwsem_writers_exclusive),
	    KTEST_CASE(rwsem_writer_not_starved),
	    KTEST_CASE(completion_wakes_across_cpus),
	    KTEST_CASE(completion_counts_and_times_out),
	    KTEST_CASE(wait_event_timeout_cases),
	    KTEST_CASE(wake_up_exclusive_and_all),
	    KTEST_CASE(debug_spinlock_tracks_owner),
	    KTEST_CASE(debug_spinlock_recursion),
	    KTEST_CASE(debug_spinlock_unlock_by_other_cpu),
	    KTEST_CASE(debug_spinlock_unlock_unlocked),
	    KTEST_CASE(debug_spinlock_held_too_long),
	    KTEST_CASE(debug_might_sleep_with_spinlock),
	    KTEST_CASE(debug_might_sleep_irqs_off),
	    KTEST_CASE(debug_might_sleep_quiet_when_allowed),
	    KTEST_CASE(debug_mutex_recursion_and_bad_unlock),
	    KTEST_CASE(debug_rwsem_recursion_and_bad_unlock));
