/*
 * CPU time and fault counts (include/quire/cputime.h): the tick's samples,
 * the totals of a process, and getrusage(2) and times(2).
 *
 * A thread's own counters are written only by the CPU it runs on (the tick,
 * its faults, its switches) and read by others with relaxed atomic loads.
 * The leader's dead_threads is changed under the process's siglock, at the
 * same moment the thread leaves the thread list, so a sum taken under that
 * lock counts every thread once; children_cputime is changed with atomic adds by
 * whichever thread reaps.
 */
#include <quire/cputime.h>
#include <quire/sched.h>
#include <quire/signal.h>
#include <quire/itimer.h>
#include <quire/syscalls.h>
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/time.h>
#include <quire/uapi/resource.h>
#include <asm/irqflags.h>

#define load(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define add(x, v)	__atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

/* Per CPU, in ticks: user, system and idle time (/proc/stat). */
static u64 cpustat[MAX_CPUS][3];

void cpu_times(int cpu, u64 *user, u64 *system, u64 *idle)
{
	*user = load(cpustat[cpu][0]);
	*system = load(cpustat[cpu][1]);
	*idle = load(cpustat[cpu][2]);
}

void account_process_tick(bool user, u64 tick_ns)
{
	struct task *t = current;

	if (!t)
		return;
	add(cpustat[smp_processor_id()][user ? 0 : is_idle_task(t) ? 2 : 1], 1);
	if (user)
		add(t->cputime.utime_ns, tick_ns);
	else
		add(t->cputime.stime_ns, tick_ns);
	if (t->sighand && t->mm)	/* a user process's thread, not exiting */
		itimer_cpu_tick(t, user, tick_ns);
}

void account_page_fault(void)
{
	add(current->cputime.min_flt, 1);
}

u64 task_sched_runtime(struct task *t)
{
	u64 run = load(t->runtime_ns);

	/* A slice in progress: on this CPU for sure when t is current. */
	if (t == current || load(t->on_cpu)) {
		u64 start = load(t->slice_start_ns), now = ktime_get_ns();

		if (now > start)
			run += now - start;
	}
	return run;
}

static void add_cputime(struct task_cputime *sum, const struct task_cputime *c)
{
	sum->utime_ns += load(c->utime_ns);
	sum->stime_ns += load(c->stime_ns);
	sum->sum_exec_ns += load(c->sum_exec_ns);
	sum->min_flt += load(c->min_flt);
	sum->maj_flt += load(c->maj_flt);
	sum->nvcsw += load(c->nvcsw);
	sum->nivcsw += load(c->nivcsw);
}

/* A live thread's own figures (sum_exec_ns from the scheduler's count). */
static void thread_cputime(struct task *t, struct task_cputime *out)
{
	*out = (struct task_cputime){ 0 };
	add_cputime(out, &t->cputime);
	out->sum_exec_ns = task_sched_runtime(t);
}

void thread_group_cputime(struct task *t, struct task_cputime *out)
{
	struct sighand_struct *sh = t->sighand;
	struct task *leader = t->group_leader, *o;
	struct task_cputime one;
	unsigned long flags;

	*out = (struct task_cputime){ 0 };
	if (!sh) {			/* a kernel thread: itself */
		thread_cputime(t, out);
		return;
	}
	flags = arch_local_irq_save();
	spin_lock(&sh->siglock);
	add_cputime(out, &leader->dead_threads);
	list_for_each_entry(o, &sh->threads, thread_node) {
		thread_cputime(o, &one);
		add_cputime(out, &one);
	}
	spin_unlock(&sh->siglock);
	arch_local_irq_restore(flags);
}

void cputime_fold_thread(struct task *t)
{
	struct task_cputime mine;

	lockdep_assert_held(&t->sighand->siglock);
	thread_cputime(t, &mine);
	add_cputime(&t->group_leader->dead_threads, &mine);
}

void cputime_reap_child(struct task *parent, struct task *child)
{
	struct task_cputime *to = &parent->group_leader->children_cputime;
	struct task_cputime sum = { 0 };

	add_cputime(&sum, &child->dead_threads);
	add_cputime(&sum, &child->children_cputime);
	add(to->utime_ns, sum.utime_ns);
	add(to->stime_ns, sum.stime_ns);
	add(to->sum_exec_ns, sum.sum_exec_ns);
	add(to->min_flt, sum.min_flt);
	add(to->maj_flt, sum.maj_flt);
	add(to->nvcsw, sum.nvcsw);
	add(to->nivcsw, sum.nivcsw);
}

/* a * b / c for c > 0 and a result that fits (no 128-bit divide in the kernel's libgcc-free build). */
static u64 mul_div(u64 a, u64 b, u64 c)
{
	unsigned __int128 n = (unsigned __int128)a * b, rem = 0;
	u64 q = 0;

	for (int bit = 127; bit >= 0; bit--) {
		rem = rem << 1 | ((n >> bit) & 1);
		if (rem >= c) {
			rem -= c;
			if (bit < 64)
				q |= 1ULL << bit;
		}
	}
	return q;
}

static DEFINE_SPINLOCK(prev_lock);

void cputime_adjust(const struct task_cputime *c, struct prev_cputime *prev,
		    u64 *utime, u64 *stime)
{
	u64 rtime = c->sum_exec_ns, u = c->utime_ns, s = c->stime_ns;

	if (!s) {
		*utime = rtime;
		*stime = 0;
	} else if (!u) {
		*utime = 0;
		*stime = rtime;
	} else {
		*stime = mul_div(rtime, s, u + s);	/* <= rtime: s <= u + s */
		*utime = rtime - *stime;
	}
	if (!prev)
		return;
	spin_lock(&prev_lock);
	if (rtime < prev->utime_ns + prev->stime_ns) {
		/* Read a moment ago, before a slice was added: report the last. */
		*utime = prev->utime_ns;
		*stime = prev->stime_ns;
	} else {
		/* Neither part goes back; the total stays exact. */
		if (*stime < prev->stime_ns)
			*stime = prev->stime_ns;
		*utime = rtime - *stime;
		if (*utime < prev->utime_ns) {
			*utime = prev->utime_ns;
			*stime = rtime - *utime;
		}
		prev->utime_ns = *utime;
		prev->stime_ns = *stime;
	}
	spin_unlock(&prev_lock);
}

static struct timeval ns_to_timeval(u64 ns)
{
	return (struct timeval){ (long)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC / 1000) };
}

static void fill_rusage(const struct task_cputime *c, struct prev_cputime *prev,
			struct rusage *ru)
{
	u64 ut, st;

	*ru = (struct rusage){ 0 };
	cputime_adjust(c, prev, &ut, &st);
	ru->ru_utime = ns_to_timeval(ut);
	ru->ru_stime = ns_to_timeval(st);
	ru->ru_minflt = (long)c->min_flt;
	ru->ru_majflt = (long)c->maj_flt;
	ru->ru_nvcsw = (long)c->nvcsw;
	ru->ru_nivcsw = (long)c->nivcsw;
	/* ru_maxrss stays 0: the mm keeps no high-water mark yet (docs/syscalls.md). */
}

void child_rusage(struct task *child, struct rusage *ru)
{
	struct task_cputime sum = { 0 };

	add_cputime(&sum, &child->dead_threads);
	add_cputime(&sum, &child->children_cputime);
	fill_rusage(&sum, NULL, ru);
}

long sys_getrusage(u64 who, u64 uru, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *leader = current->group_leader;
	struct task_cputime c = { 0 };
	struct prev_cputime *prev;
	struct rusage ru;

	switch ((int)who) {
	case RUSAGE_SELF:
		thread_group_cputime(current, &c);
		prev = &leader->prev_group;
		break;
	case RUSAGE_THREAD:
		thread_cputime(current, &c);
		prev = &current->prev_thread;
		break;
	case RUSAGE_CHILDREN:
		add_cputime(&c, &leader->children_cputime);
		prev = &leader->prev_children;
		break;
	default:
		return -EINVAL;
	}
	fill_rusage(&c, prev, &ru);
	return copy_to_user((void *)uru, &ru, sizeof(ru)) ? -EFAULT : 0;
}

static long ns_to_clock_t(u64 ns)
{
	return (long)(ns / (NSEC_PER_SEC / USER_HZ));
}

/* times(2): CPU times in USER_HZ ticks; the result is ticks since boot. */
long sys_times(u64 ubuf, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *leader = current->group_leader;
	struct task_cputime self, *ch = &leader->children_cputime;
	struct task_cputime children = { 0 };
	struct tms tms;
	u64 ut, st;

	if (ubuf) {
		thread_group_cputime(current, &self);
		add_cputime(&children, ch);
		cputime_adjust(&self, &leader->prev_group, &ut, &st);
		tms.tms_utime = ns_to_clock_t(ut);
		tms.tms_stime = ns_to_clock_t(st);
		cputime_adjust(&children, &leader->prev_children, &ut, &st);
		tms.tms_cutime = ns_to_clock_t(ut);
		tms.tms_cstime = ns_to_clock_t(st);
		if (copy_to_user((void *)ubuf, &tms, sizeof(tms)))
			return -EFAULT;
	}
	return ns_to_clock_t(ktime_get_ns());
}
