/*
 * Kernel timers (kernel/timer.c, docs/timers.md): functions run in expiry
 * order and never early; del_timer and mod_timer disarm and move a
 * pending timer; a function may re-arm its own timer, and one re-armed for
 * a time already past runs at a later tick, not in a loop; del_timer_sync
 * waits for a function running on another CPU.
 */
#include <quire/ktest.h>
#include <quire/timer.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/time.h>
#include <quire/kernel.h>
#include <quire/percpu.h>
#include <asm/irqflags.h>

#define MS	NSEC_PER_MSEC

struct probe {
	struct timer_list timer;
	int id;
	int runs, max_runs;
	u64 ran_at[4];
	u64 tick_at[4];			/* which tick ran it: the CPU's tick count */
	int cpu_at[4];
	u64 rearm_in;			/* 0: once; ~0: for a time already past */
};

static int order[3], nr_ran;

static void probe_fn(struct timer_list *timer)
{
	struct probe *p = container_of(timer, struct probe, timer);

	if (p->runs < (int)ARRAY_SIZE(p->ran_at)) {
		p->ran_at[p->runs] = ktime_get_ns();
		p->tick_at[p->runs] = this_cpu()->timer_ticks;
		p->cpu_at[p->runs] = smp_processor_id();
	}
	p->runs++;
	if (nr_ran < (int)ARRAY_SIZE(order))
		order[nr_ran] = p->id;
	nr_ran++;
	if (p->rearm_in && p->runs < p->max_runs)
		mod_timer(timer, p->rearm_in == ~0ULL ? 0 : ktime_get_ns() + p->rearm_in);
}

static void probe_init(struct probe *p, int id)
{
	*p = (struct probe){ .id = id };
	timer_setup(&p->timer, probe_fn);
}

/* Wait (sleeping) until cond or ms have passed. */
#define wait_until(cond, ms)							\
	do {									\
		u64 __end = ktime_get_ns() + (ms) * MS;				\
		while (!(cond) && ktime_get_ns() < __end)			\
			msleep(2);						\
	} while (0)

static void run_in_expiry_order(struct ktest *t)
{
	struct probe p[3];
	u64 now = ktime_get_ns();

	nr_ran = 0;
	for (int i = 0; i < 3; i++)
		probe_init(&p[i], i);
	/* Armed out of order: 30, 10, 20 ms from now. */
	KEXPECT_FALSE(t, mod_timer(&p[2].timer, now + 30 * MS));
	KEXPECT_FALSE(t, mod_timer(&p[0].timer, now + 10 * MS));
	KEXPECT_FALSE(t, mod_timer(&p[1].timer, now + 20 * MS));
	KEXPECT_TRUE(t, timer_pending(&p[0].timer));
	wait_until(__atomic_load_n(&nr_ran, __ATOMIC_ACQUIRE) == 3, 1000);
	for (int i = 0; i < 3; i++)
		del_timer_sync(&p[i].timer);	/* on this stack: never left armed */
	KASSERT_EQ(t, nr_ran, 3);
	for (int i = 0; i < 3; i++) {
		KEXPECT_EQ(t, order[i], i);
		KEXPECT_EQ(t, p[i].runs, 1);
		KEXPECT_GE(t, p[i].ran_at[0], now + (u64)(i + 1) * 10 * MS);	/* never early */
		KEXPECT_FALSE(t, timer_pending(&p[i].timer));
	}
}

static void del_and_mod_timer(struct ktest *t)
{
	struct probe a, b;
	u64 now = ktime_get_ns(), exp;

	nr_ran = 0;
	probe_init(&a, 0);
	probe_init(&b, 1);
	mod_timer(&a.timer, now + 20 * MS);
	KEXPECT_TRUE(t, del_timer(&a.timer));
	KEXPECT_FALSE(t, del_timer(&a.timer));		/* not pending any more */
	KEXPECT_FALSE(t, timer_active(&a.timer, &exp));
	/* Moving a pending timer later: it runs once, at the new time. */
	mod_timer(&b.timer, now + 20 * MS);
	KEXPECT_TRUE(t, mod_timer(&b.timer, now + 80 * MS));
	KEXPECT_TRUE(t, timer_active(&b.timer, &exp));
	KEXPECT_EQ(t, exp, now + 80 * MS);
	msleep(50);
	KEXPECT_EQ(t, b.runs, 0);
	wait_until(__atomic_load_n(&b.runs, __ATOMIC_ACQUIRE) == 1, 1000);
	msleep(30);
	KEXPECT_EQ(t, b.runs, 1);
	KEXPECT_GE(t, b.ran_at[0], now + 80 * MS);
	KEXPECT_EQ(t, a.runs, 0);
	KEXPECT_FALSE(t, del_timer_sync(&b.timer));
	del_timer_sync(&a.timer);
}

/* A function re-arming its timer: periodic; for a past time, once per tick, not in a loop. */
static void function_rearms_its_timer(struct ktest *t)
{
	struct probe p, q;

	probe_init(&p, 0);
	p.rearm_in = 15 * MS;
	p.max_runs = 4;
	probe_init(&q, 1);
	q.rearm_in = ~0ULL;
	q.max_runs = 4;
	mod_timer(&p.timer, ktime_get_ns() + 5 * MS);
	mod_timer(&q.timer, 0);
	wait_until(__atomic_load_n(&p.runs, __ATOMIC_ACQUIRE) == 4 &&
		   __atomic_load_n(&q.runs, __ATOMIC_ACQUIRE) == 4, 2000);
	KEXPECT_FALSE(t, del_timer_sync(&p.timer));	/* done re-arming: not pending */
	KEXPECT_FALSE(t, del_timer_sync(&q.timer));
	KEXPECT_EQ(t, p.runs, 4);
	KEXPECT_EQ(t, q.runs, 4);
	for (int i = 1; i < 4; i++) {
		KEXPECT_GE(t, p.ran_at[i] - p.ran_at[i - 1], 15 * MS);
		/* A later tick (of any CPU), not the same pass over the list. */
		KEXPECT_TRUE(t, q.cpu_at[i] != q.cpu_at[i - 1] || q.tick_at[i] != q.tick_at[i - 1]);
	}
}

static volatile int slow_started, slow_done;

static void slow_fn(struct timer_list *timer)
{
	__atomic_store_n(&slow_started, 1, __ATOMIC_RELEASE);
	mdelay(20);
	__atomic_store_n(&slow_done, 1, __ATOMIC_RELEASE);
}

/*
 * del_timer_sync returns only once a function running on another CPU has
 * returned. This CPU keeps interrupts off meanwhile, so another CPU's tick
 * runs it.
 */
static void del_timer_sync_waits_for_the_function(struct ktest *t)
{
	struct timer_list timer = { 0 };
	unsigned long flags;
	u64 end;
	bool was;

	if (nr_cpus_online < 2)
		ktest_skip(t, "needs a second CPU to run the function");
	slow_started = slow_done = 0;
	timer_setup(&timer, slow_fn);
	flags = arch_local_irq_save();
	mod_timer(&timer, ktime_get_ns() + 5 * MS);
	end = ktime_get_ns() + NSEC_PER_SEC;
	while (!__atomic_load_n(&slow_started, __ATOMIC_ACQUIRE) && ktime_get_ns() < end)
		cpu_relax();
	was = del_timer_sync(&timer);
	arch_local_irq_restore(flags);
	KASSERT_EQ(t, slow_started, 1);
	KEXPECT_FALSE(t, was);		/* it had left the list to run */
	KEXPECT_EQ(t, slow_done, 1);	/* and had returned */
	KEXPECT_FALSE(t, timer_pending(&timer));
}

KTEST_SUITE(timer,
	    KTEST_CASE(run_in_expiry_order),
	    KTEST_CASE(del_and_mod_timer),
	    KTEST_CASE(function_rearms_its_timer),
	    KTEST_CASE(del_timer_sync_waits_for_the_function));
