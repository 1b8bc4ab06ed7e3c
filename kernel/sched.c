/*
 * The scheduler. Each CPU has a run queue (a FIFO of runnable tasks) and an
 * idle task; the running task is not on any queue. One lock, sched_lock,
 * protects every queue and every task's scheduling fields: simple to get
 * right, and cheap enough for 8 CPUs. It is held, with interrupts off,
 * across the switch itself and released by the task switched to
 * (finish_switch), so a wake-up can never see a task half switched out.
 *
 * Policy: round robin with a 10 ms slice (the LAPIC tick); a woken task goes
 * to the least loaded CPU it may run on; a CPU with nothing to run steals a
 * waiting task from the busiest queue (idle balancing). See docs/smp.md.
 */
#define pr_fmt(fmt) "sched: " fmt
#include <quire/sched.h>
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/preempt.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/panic.h>
#include <quire/errno.h>
#include <quire/uaccess.h>
#include <quire/time.h>
#include <quire/smp.h>
#include <quire/debug_locks.h>
#include <asm/irqflags.h>

struct rq {
	struct list_head queue;
	unsigned int nr_queued;
	struct task *idle;
};

static struct rq runqueues[MAX_CPUS];
static LIST_HEAD(sleepers);		/* tasks in schedule_timeout, by sleep_list */
static volatile u8 sched_lock;
/* Task ids, as Linux's pids: 1 is kept for the first process (sched_take_pid_1). */
#define FIRST_PROCESS_TID 1
static int next_tid = FIRST_PROCESS_TID + 1;
static u64 nr_switches_total;		/* context switches since boot (sched_lock) */
static bool pid_1_taken;
static long nr_tasks;			/* allocated and not yet freed: sysinfo's procs */

struct task *switch_to(struct task *prev, struct task *next);
void kthread_trampoline(void);
__attribute__((noreturn)) void kthread_start(struct task *last);

/* A raw lock: no preemption accounting, no debugging (it is held across switches). */
static void sched_lock_acquire(void)
{
	while (__atomic_exchange_n(&sched_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&sched_lock, __ATOMIC_RELAXED))
			cpu_relax();
}

static void sched_lock_release(void)
{
	__atomic_store_n(&sched_lock, 0, __ATOMIC_RELEASE);
}

u64 sched_nr_running(int cpu)
{
	return runqueues[cpu].nr_queued;
}

void set_current_state(int state)
{
	__atomic_store_n(&current->state, state, __ATOMIC_SEQ_CST);
}

static bool is_idle(const struct task *t)
{
	return t && runqueues[t->cpu].idle == t;
}

static void enqueue(struct task *t, int cpu)
{
	t->cpu = cpu;
	t->on_rq = true;
	list_add_tail(&t->run_list, &runqueues[cpu].queue);
	runqueues[cpu].nr_queued++;
}

static void dequeue(struct task *t)
{
	list_del(&t->run_list);
	runqueues[t->cpu].nr_queued--;
	t->on_rq = false;
}

/* How busy a CPU looks to a task being placed. */
static unsigned int cpu_load(int cpu)
{
	struct task *curr = per_cpu_ptr(cpu)->current_task;

	return runqueues[cpu].nr_queued + (curr && !is_idle(curr) ? 1 : 0);
}

/* The CPU a waking task should run on: its last one if idle, else the least loaded. */
static int select_cpu(struct task *t)
{
	int cpu, best = -1;

	if (cpu_online(t->cpu) && (t->cpus_allowed & cpumask_of(t->cpu)) && cpu_load(t->cpu) == 0)
		return t->cpu;
	for_each_online_cpu(cpu) {
		if (!(t->cpus_allowed & cpumask_of(cpu)))
			continue;
		if (best < 0 || cpu_load(cpu) < cpu_load(best))
			best = cpu;
	}
	return best >= 0 ? best : smp_processor_id();
}

/* Ask a CPU to pick again: locally a flag, remotely an IPI. Lock held. */
static void resched_cpu(int cpu)
{
	struct percpu *pc = per_cpu_ptr(cpu);

	pc->need_resched = true;
	if (cpu != smp_processor_id())
		smp_send_reschedule(cpu);
}

/* Make t runnable. Lock held. */
static bool __wake(struct task *t)
{
	int cpu;

	/* A dead task is never woken (it may be about to be freed). */
	if (t->state == TASK_RUNNING || t->state == TASK_DEAD)
		return false;
	t->state = TASK_RUNNING;
	if (t->on_cpu || t->on_rq)
		return true;	/* still on its CPU: schedule() will keep it running */
	cpu = select_cpu(t);
	if (cpu != t->cpu)
		t->nr_migrations++;
	enqueue(t, cpu);
	resched_cpu(cpu);
	return true;
}

bool wake_up_process(struct task *t)
{
	unsigned long flags = arch_local_irq_save();
	bool woke;

	sched_lock_acquire();
	woke = __wake(t);
	sched_lock_release();
	arch_local_irq_restore(flags);
	return woke;
}

/* A waiting task from the busiest other queue that may run here. Lock held. */
static struct task *steal_task(int cpu)
{
	int other, busiest = -1;
	struct task *t;

	for_each_online_cpu(other)
		if (other != cpu && runqueues[other].nr_queued &&
		    (busiest < 0 || runqueues[other].nr_queued > runqueues[busiest].nr_queued))
			busiest = other;
	if (busiest < 0)
		return NULL;
	list_for_each_entry(t, &runqueues[busiest].queue, run_list)
		if (t->cpus_allowed & cpumask_of(cpu)) {
			dequeue(t);
			t->nr_migrations++;
			return t;
		}
	return NULL;
}

static struct task *pick_next(int cpu)
{
	struct rq *rq = &runqueues[cpu];
	struct task *t;

	if (!list_empty(&rq->queue)) {
		t = list_first_entry(&rq->queue, struct task, run_list);
		dequeue(t);
		return t;
	}
	t = steal_task(cpu);
	return t ? t : rq->idle;
}

/* Runs in the task switched to, with the lock held and interrupts off. */
static void finish_switch(struct task *last)
{
	last->on_cpu = false;
	if (last->state == TASK_DEAD && last->joiner)
		__wake(last->joiner);
	sched_lock_release();
}

/*
 * Pick and switch. Interrupts off. A preempted task stays runnable whatever
 * its state: it may have been caught between set_current_state() and
 * schedule(), and taking it off the queue then would lose a wake-up that
 * came before. It goes to sleep only when it calls schedule() itself.
 */
static void __schedule(bool preempt)
{
	int cpu = smp_processor_id();
	struct task *prev = current, *next, *last;

	sched_lock_acquire();
	this_cpu()->need_resched = false;
	if ((prev->state == TASK_RUNNING || (preempt && prev->state != TASK_DEAD)) &&
	    !is_idle(prev)) {
		/* Still runnable: here, unless its affinity changed to exclude this CPU. */
		int to = (prev->cpus_allowed & cpumask_of(cpu)) ? cpu : select_cpu(prev);

		enqueue(prev, to);
		if (to != cpu)
			resched_cpu(to);
	}
	next = pick_next(cpu);
	if (next == prev) {
		sched_lock_release();
		return;
	}
	/* Gave up the CPU (a sleep) or was put back on the queue. */
	if (prev->state != TASK_RUNNING && !preempt)
		__atomic_fetch_add(&prev->cputime.nvcsw, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&prev->cputime.nivcsw, 1, __ATOMIC_RELAXED);
	next->on_cpu = true;
	next->cpu = cpu;
	next->nr_switches++;
	nr_switches_total++;
	next->slice_start_ns = ktime_get_ns();
	prev->runtime_ns += next->slice_start_ns - prev->slice_start_ns;
	this_cpu()->current_task = next;
	arch_switch_to(prev, next);
	last = switch_to(prev, next);
	finish_switch(last);
}

void schedule(void)
{
	unsigned long flags;

	if (!current)
		return;		/* before sched_init */
	might_sleep();
	flags = arch_local_irq_save();
	__schedule(false);
	arch_local_irq_restore(flags);
}

void preempt_schedule(void)
{
	unsigned long flags;

	if (!current || !(read_flags() & X86_EFLAGS_IF) || this_cpu()->irq_depth)
		return;
	flags = arch_local_irq_save();
	__schedule(true);
	arch_local_irq_restore(flags);
}

void preempt_schedule_irq(void)
{
	if (current && this_cpu()->preempt_count == 0)
		__schedule(true);
}

void yield(void)
{
	unsigned long flags;

	might_sleep();
	flags = arch_local_irq_save();

	__schedule(true);	/* stays runnable, goes to the back of the queue */
	arch_local_irq_restore(flags);
}

/* ---- sleeping with a timeout ---- */

struct sleeper {
	struct list_head list;
	struct task *task;
	u64 wake_at;
};

/*
 * Sleep in the state the caller set (set_current_state before the call, as
 * for schedule()) until woken or until ns have passed. A wake-up that came
 * after the caller set its state is kept: the state is not touched here.
 */
void schedule_timeout_ns(u64 ns)
{
	struct sleeper s = { .task = current, .wake_at = ktime_get_ns() + ns };
	unsigned long flags;

	might_sleep();
	flags = arch_local_irq_save();
	sched_lock_acquire();
	list_add(&s.list, &sleepers);
	sched_lock_release();
	__schedule(false);
	sched_lock_acquire();
	list_del(&s.list);		/* woken early, or by the tick */
	sched_lock_release();
	arch_local_irq_restore(flags);
}

void msleep(u64 ms)
{
	u64 end = ktime_get_ns() + ms * NSEC_PER_MSEC;

	might_sleep();
	for (u64 now = ktime_get_ns(); now < end; now = ktime_get_ns()) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule_timeout_ns(end - now);
	}
}

/* ---- the tick ---- */

bool is_idle_task(const struct task *t)
{
	return is_idle(t);
}

long sched_nr_active(void)
{
	unsigned long flags = arch_local_irq_save();
	long n = 0;
	int cpu;

	sched_lock_acquire();
	for_each_online_cpu(cpu) {
		struct task *curr = per_cpu_ptr(cpu)->current_task;

		n += (long)runqueues[cpu].nr_queued + (curr && !is_idle(curr) ? 1 : 0);
	}
	sched_lock_release();
	arch_local_irq_restore(flags);
	return n;
}

int sched_last_pid(void)
{
	return __atomic_load_n(&next_tid, __ATOMIC_RELAXED) - 1;
}

u64 sched_nr_switches(void)
{
	return __atomic_load_n(&nr_switches_total, __ATOMIC_RELAXED);
}

void scheduler_tick(void)
{
	struct task *curr = current;
	int cpu = smp_processor_id();
	u64 now = ktime_get_ns();
	struct sleeper *s;

	sched_lock_acquire();
	list_for_each_entry(s, &sleepers, list)
		if (s->wake_at <= now && s->task->state != TASK_RUNNING)
			__wake(s->task);
	if (curr && !is_idle(curr) && now - curr->slice_start_ns >= SCHED_SLICE_NS &&
	    runqueues[cpu].nr_queued)
		this_cpu()->need_resched = true;	/* slice used up, others wait */
	if (curr && is_idle(curr)) {
		int other;

		for_each_online_cpu(other)
			if (runqueues[other].nr_queued > (other == cpu ? 0 : 1))
				this_cpu()->need_resched = true;	/* go and steal */
	}
	sched_lock_release();
	if (cpu == 0)
		calc_global_load_tick();
}

/* ---- kernel threads ---- */

/*
 * A forked child's first code after the switch, interrupts off; it
 * returns to user mode, which disables them again. A CLONE_CHILD_SETTID
 * child stores its tid in its own memory first (a bad address is ignored,
 * as on Linux).
 */
void schedule_tail(struct task *last)
{
	struct task *self;

	finish_switch(last);
	self = current;
	if (self->set_child_tid) {
		int tid = self->tid;

		local_irq_enable();
		if (copy_to_user(self->set_child_tid, &tid, sizeof(tid)))
			pr_debug("pid %d: CLONE_CHILD_SETTID address unwritable\n", tid);
		self->set_child_tid = NULL;
	}
}

void kthread_start(struct task *last)
{
	struct task *self;

	finish_switch(last);
	local_irq_enable();
	self = current;
	kthread_exit(self->fn(self->arg));
}

/* A task, with a new kernel stack on the node unless it adopts a running context. */
static struct task *alloc_task(const char *name, int node, bool with_stack)
{
	struct task *t = kzalloc_node(sizeof(*t), GFP_KERNEL, node);

	if (!t)
		return NULL;
	rlimit_init_defaults(t);	/* fork copies its parent's over them */
	if (with_stack) {
		struct page *stack = alloc_pages_node(node, GFP_KERNEL, KERNEL_STACK_ORDER);

		if (!stack) {
			kfree(t);
			return NULL;
		}
		t->stack = page_address(stack);
	}
	strscpy(t->comm, name, sizeof(t->comm));
	t->cpus_allowed = CPU_MASK_ALL;
	t->tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
	INIT_LIST_HEAD(&t->run_list);
	INIT_LIST_HEAD(&t->children);
	INIT_LIST_HEAD(&t->sibling);
	INIT_LIST_HEAD(&t->process_node);
	INIT_LIST_HEAD(&t->thread_node);
	INIT_LIST_HEAD(&t->pending.list);
	t->tgid = t->tid;
	t->group_leader = t;
	t->sas.ss_flags = SS_DISABLE;
	t->start_ns = ktime_get_ns();
	__atomic_fetch_add(&nr_tasks, 1, __ATOMIC_RELAXED);
	return t;
}

bool sched_take_pid_1(struct task *t)
{
	if (__atomic_exchange_n(&pid_1_taken, true, __ATOMIC_RELAXED))
		return false;
	t->tid = t->tgid = FIRST_PROCESS_TID;
	return true;
}

long sched_nr_tasks(void)
{
	return __atomic_load_n(&nr_tasks, __ATOMIC_RELAXED);
}

static void free_task(struct task *t)
{
	BUG_ON(timer_pending(&t->real_timer));	/* do_exit cancels it (exit_itimers) */
	free_sighand(t);
	kfree(t->exe_path);
	__atomic_fetch_sub(&nr_tasks, 1, __ATOMIC_RELAXED);
	__free_pages(virt_to_page(t->stack), KERNEL_STACK_ORDER);
	kfree(t);
}

struct task *kthread_create(int (*fn)(void *), void *arg, const char *name)
{
	struct task *t = alloc_task(name, numa_mem_id_of(numa_node_id()), true);
	u64 *sp;

	if (!t)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	t->state = TASK_UNINTERRUPTIBLE;	/* until woken */
	t->cpu = smp_processor_id();
	/* The frame switch_to pops: six callee-saved registers, then the return. */
	/* kthread_trampoline starts with rsp at the (16-byte aligned) top, so its call is ABI-aligned. */
	sp = (u64 *)((u8 *)t->stack + KERNEL_STACK_SIZE);
	*--sp = (u64)(uintptr_t)kthread_trampoline;
	for (int i = 0; i < 6; i++)
		*--sp = 0;
	t->rsp = (u64)(uintptr_t)sp;
	return t;
}

void kthread_free_unstarted(struct task *t)
{
	free_task(t);
}

struct task *kthread_run(int (*fn)(void *), void *arg, const char *name)
{
	struct task *t = kthread_create(fn, arg, name);

	if (t)
		wake_up_process(t);
	return t;
}

int set_cpus_allowed(struct task *t, cpumask_t mask)
{
	unsigned long flags;
	int cpu;
	cpumask_t online = 0;

	for_each_online_cpu(cpu)
		online |= cpumask_of(cpu);
	if (!(mask & online))
		return -EINVAL;
	flags = arch_local_irq_save();
	sched_lock_acquire();
	t->cpus_allowed = mask;
	if (t->on_rq && !(mask & cpumask_of(t->cpu))) {
		dequeue(t);
		enqueue(t, select_cpu(t));
		resched_cpu(t->cpu);
	} else if (t->on_cpu && !(mask & cpumask_of(t->cpu))) {
		resched_cpu(t->cpu);	/* it moves when it next switches out */
	} else if (!t->on_rq && !t->on_cpu && !(mask & cpumask_of(t->cpu))) {
		t->cpu = __builtin_ctzll(mask & online);
	}
	sched_lock_release();
	arch_local_irq_restore(flags);
	/* A running task that left its allowed set moves at its next switch. */
	if (t == current && !(mask & cpumask_of(smp_processor_id())))
		yield();
	return 0;
}

void kthread_exit(int code)
{
	local_irq_disable();
	sched_lock_acquire();
	current->exit_code = code;
	current->state = TASK_DEAD;
	sched_lock_release();
	__schedule(false);
	panic("a dead task was scheduled again");
}

int kthread_join(struct task *t)
{
	unsigned long flags;
	int code;

	might_sleep();
	flags = arch_local_irq_save();
	sched_lock_acquire();
	while (!(t->state == TASK_DEAD && !t->on_cpu)) {
		t->joiner = current;
		current->state = TASK_UNINTERRUPTIBLE;
		sched_lock_release();
		__schedule(false);
		sched_lock_acquire();
	}
	sched_lock_release();
	arch_local_irq_restore(flags);
	code = t->exit_code;
	free_task(t);
	return code;
}

/* ---- boot ---- */

void cpu_idle_loop(void)
{
	for (;;) {
		local_irq_disable();
		if (this_cpu()->need_resched || runqueues[smp_processor_id()].nr_queued) {
			__schedule(false);
			local_irq_enable();
			continue;
		}
		/* sti takes effect after hlt starts: no wake-up slips in between. */
		__asm__ __volatile__("sti; hlt" ::: "memory");
	}
}

static int idle_thread(void *unused)
{
	cpu_idle_loop();
}

/* Turn the running context of this CPU into a task (boot code, AP startup). */
struct task *sched_adopt_current(const char *name)
{
	int cpu = smp_processor_id();
	struct task *t = alloc_task(name, numa_mem_id_of(cpu_to_node(cpu)), false);

	if (!t)
		panic("out of memory for CPU %d's first task", cpu);
	/* It keeps the stack it runs on (the boot stack, or the AP's first stack). */
	t->state = TASK_RUNNING;
	t->on_cpu = true;
	t->cpu = cpu;
	t->slice_start_ns = ktime_get_ns();
	INIT_LIST_HEAD(&runqueues[cpu].queue);
	this_cpu()->current_task = t;
	return t;
}

/* An AP's startup context becomes its idle task. */
void sched_init_ap(void)
{
	struct task *t = sched_adopt_current("idle");

	t->cpus_allowed = cpumask_of(smp_processor_id());
	runqueues[smp_processor_id()].idle = t;
}

/* The boot context becomes CPU 0's "main" task; CPU 0 gets an idle thread. */
void sched_init(void)
{
	struct task *idle;

	sched_adopt_current("main");
	idle = kthread_create(idle_thread, NULL, "idle");
	if (!idle)
		panic("out of memory for the idle task");
	idle->cpus_allowed = cpumask_of(0);
	idle->state = TASK_RUNNING;
	runqueues[0].idle = idle;
	pr_info("scheduler: %d ms slices, per-CPU run queues\n",
		(int)(SCHED_SLICE_NS / NSEC_PER_MSEC));
}
