/*
 * Dispatch of interrupt vectors 32-255: a table of handlers, the LAPIC's
 * end-of-interrupt, and preemption on the way out (the interrupted task is
 * switched out if a reschedule is due and it was preemptible). NMIs stop the
 * CPU when another CPU panicked; otherwise they are reported.
 */
#define pr_fmt(fmt) "irq: " fmt
#include <asm/irq.h>
#include <asm/apic.h>
#include <asm/cpu.h>
#include <asm/ptrace.h>
#include <quire/percpu.h>
#include <quire/sched.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/errno.h>
#include <quire/ksyms.h>
#include <quire/arch_hooks.h>
#include <quire/stacktrace.h>
#include <quire/time.h>
#include <quire/timer.h>
#include <quire/preempt.h>

struct vector_desc {
	vector_handler_t fn;
	void *data;
	const char *name;
	u64 count;
};

static struct vector_desc vectors[256];

int request_vector(u8 vector, vector_handler_t fn, void *data, const char *name)
{
	if (vector < 32)
		return -EINVAL;
	if (vectors[vector].fn)
		return -EBUSY;
	vectors[vector].data = data;
	vectors[vector].name = name;
	__atomic_store_n(&vectors[vector].fn, fn, __ATOMIC_RELEASE);
	return 0;
}

u64 vector_count(u8 vector)
{
	return __atomic_load_n(&vectors[vector].count, __ATOMIC_RELAXED);
}

static timer_tick_hook_t timer_tick_hook;

void set_timer_tick_hook(timer_tick_hook_t hook)
{
	__atomic_store_n(&timer_tick_hook, hook, __ATOMIC_RELEASE);
}

static void timer_interrupt(struct pt_regs *regs, void *unused)
{
	timer_tick_hook_t hook = __atomic_load_n(&timer_tick_hook, __ATOMIC_ACQUIRE);

	this_cpu()->timer_ticks++;
	account_process_tick(user_mode(regs), NSEC_PER_SEC / TIMER_HZ);
	scheduler_tick();
	run_timers();		/* after the tick: their functions may wake tasks */
	if (hook)
		hook();
}

void handle_irq(struct pt_regs *regs)
{
	u8 v = (u8)regs->vector;
	struct vector_desc *d = &vectors[v];
	struct percpu *pc = this_cpu();

	pc->irqs++;
	pc->irq_depth++;
	__atomic_fetch_add(&d->count, 1, __ATOMIC_RELAXED);
	if (v == SPURIOUS_APIC_VECTOR) {
		pc->irq_depth--;
		return;			/* spurious: no EOI */
	}
	if (d->fn)
		d->fn(regs, d->data);
	else if (d->count <= 3)
		pr_warn("CPU %d: unexpected interrupt on vector %u; ignored\n", pc->cpu, v);
	lapic_eoi();
	pc->irq_depth--;
	/*
	 * Preempt the interrupted code if it allows it and someone is waiting:
	 * kernel code with preemption on, or a user thread (which would
	 * otherwise keep its CPU for as long as it spins in user mode).
	 */
	if (pc->need_resched && pc->irq_depth == 0 && (regs->rflags & X86_EFLAGS_IF))
		preempt_schedule_irq();
}

/* CPUs asked to print their backtrace (trigger_all_cpu_backtrace). */
static volatile u64 backtrace_pending;

void trigger_all_cpu_backtrace(void)
{
	u64 others = 0;
	int cpu, self;

	preempt_disable();
	self = smp_processor_id();
	for_each_online_cpu(cpu)
		if (cpu != self)
			others |= 1ULL << cpu;
	__atomic_store_n(&backtrace_pending, others, __ATOMIC_SEQ_CST);
	pr_emerg("CPU %d: backtrace\n", self);
	dump_stack();
	if (others)
		lapic_send_nmi_all_but_self();
	/* Give the others a moment to print (they print under printk's lock). */
	for (u64 start = ktime_get_ns(); __atomic_load_n(&backtrace_pending, __ATOMIC_SEQ_CST) &&
	     ktime_get_ns() - start < NSEC_PER_SEC;)
		cpu_relax();
	/* A CPU that did not answer must not print a stale backtrace at a later NMI. */
	__atomic_store_n(&backtrace_pending, 0, __ATOMIC_SEQ_CST);
	preempt_enable();
}

/* An NMI somebody sent on purpose: a backtrace request or a panic stop. */
bool nmi_is_for_us(void)
{
	return panic_in_progress ||
	       (__atomic_load_n(&backtrace_pending, __ATOMIC_SEQ_CST) & (1ULL << smp_processor_id()));
}

void handle_nmi(struct pt_regs *regs)
{
	u64 me = 1ULL << smp_processor_id();

	if (__atomic_load_n(&backtrace_pending, __ATOMIC_SEQ_CST) & me) {
		struct task *t = this_cpu_read(current_task);
		char sym[96];

		ksym_format(sym, sizeof(sym), regs->rip);
		pr_emerg("CPU %d: backtrace (task %s, %s, preempt_count %d, interrupts %s)\n",
			 smp_processor_id(), t ? t->comm : "-", sym, this_cpu()->preempt_count,
			 regs->rflags & X86_EFLAGS_IF ? "on" : "off");
		show_regs_stack_trace(regs);
		__atomic_fetch_and(&backtrace_pending, ~me, __ATOMIC_SEQ_CST);
		return;
	}
	if (panic_in_progress) {
		printk(KERN_RAW "CPU %d: stopped (another CPU panicked)\n", smp_processor_id());
		for (;;)
			__asm__ __volatile__("cli; hlt");
	}
	pr_warn("CPU %d: NMI received for an unknown reason; continuing\n", smp_processor_id());
}

void irq_init(void)
{
	request_vector(LOCAL_TIMER_VECTOR, timer_interrupt, NULL, "timer");
}
