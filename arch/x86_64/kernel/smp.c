/*
 * Cross-CPU function calls over the CALL_FUNCTION_VECTOR IPI. Each CPU has a
 * queue of pending calls (a call_single_data per request, on the caller's
 * stack when it waits); the IPI handler runs the queue. Reschedule IPIs only
 * make the target look at need_resched on its way out of the interrupt.
 */
#define pr_fmt(fmt) "smp: " fmt
#include <quire/smp.h>
#include <quire/percpu.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/errno.h>
#include <quire/slab.h>
#include <asm/apic.h>
#include <asm/irq.h>
#include <asm/cpu.h>

struct call_single_data {
	struct list_head list;
	smp_call_func_t fn;
	void *info;
	atomic_t *pending;	/* decremented when done (waiting callers) */
	bool free_after;	/* heap-allocated: free when done (async) */
};

struct call_queue {
	volatile u8 lock;
	struct list_head list;
};

static struct call_queue call_queues[MAX_CPUS];
struct tlb_stats tlb_stats;

static void queue_lock(struct call_queue *q)
{
	while (__atomic_exchange_n(&q->lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static void queue_unlock(struct call_queue *q)
{
	__atomic_store_n(&q->lock, 0, __ATOMIC_RELEASE);
}

cpumask_t cpu_online_mask(void)
{
	cpumask_t m = 0;
	int cpu;

	for_each_online_cpu(cpu)
		m |= cpumask_of(cpu);
	return m;
}

/* The IPI handler: run everything queued for this CPU. */
static void call_function_interrupt(struct pt_regs *regs, void *unused)
{
	struct call_queue *q = &call_queues[smp_processor_id()];

	this_cpu()->ipis_received++;
	for (;;) {
		struct call_single_data *csd;

		queue_lock(q);
		csd = list_first_entry_or_null(&q->list, struct call_single_data, list);
		if (csd)
			list_del(&csd->list);
		queue_unlock(q);
		if (!csd)
			break;
		csd->fn(csd->info);
		/* A waiting caller's csd is on its stack: do not touch it after this. */
		if (csd->free_after)
			kfree(csd);
		else
			atomic_dec(csd->pending);
	}
}

static void reschedule_interrupt(struct pt_regs *regs, void *unused)
{
	this_cpu()->ipis_received++;
	this_cpu()->resched_ipis++;
	this_cpu()->need_resched = true;
}

void smp_send_reschedule(int cpu)
{
	struct percpu *pc = per_cpu_ptr(cpu);

	if (pc && pc->online)
		lapic_send_ipi(pc->apic_id, RESCHEDULE_VECTOR);
}

static void queue_call(int cpu, struct call_single_data *csd)
{
	struct call_queue *q = &call_queues[cpu];

	queue_lock(q);
	list_add_tail(&csd->list, &q->list);
	queue_unlock(q);
	atomic_long_inc(&tlb_stats.ipis_sent);
	lapic_send_ipi(per_cpu_ptr(cpu)->apic_id, CALL_FUNCTION_VECTOR);
}

void smp_call_function_many(cpumask_t mask, smp_call_func_t fn, void *info, bool wait)
{
	struct call_single_data csds[MAX_CPUS];
	atomic_t pending = ATOMIC_INIT(0);
	int self, cpu;

	if (wait && !(read_flags() & X86_EFLAGS_IF) && nr_cpus_online > 1)
		pr_warn("smp_call_function with interrupts off may deadlock\n");
	preempt_disable();
	self = smp_processor_id();
	mask &= cpu_online_mask() & ~cpumask_of(self);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct call_single_data *csd;

		if (!(mask & cpumask_of(cpu)))
			continue;
		if (wait) {
			csd = &csds[cpu];
			csd->free_after = false;
			atomic_inc(&pending);
		} else {
			csd = kmalloc(sizeof(*csd), GFP_KERNEL);
			if (!csd) {
				pr_err("out of memory for an async cross-CPU call to CPU %d\n", cpu);
				continue;
			}
			csd->free_after = true;
		}
		csd->fn = fn;
		csd->info = info;
		csd->pending = &pending;
		queue_call(cpu, csd);
	}
	while (wait && atomic_read(&pending))
		cpu_relax();
	preempt_enable();
}

int smp_call_function_single(int cpu, smp_call_func_t fn, void *info, bool wait)
{
	if (!cpu_online(cpu))
		return -ENXIO;
	preempt_disable();
	if (cpu == smp_processor_id()) {
		unsigned long flags = read_flags();

		local_irq_disable();
		fn(info);
		if (flags & X86_EFLAGS_IF)
			local_irq_enable();
	} else {
		smp_call_function_many(cpumask_of(cpu), fn, info, wait);
	}
	preempt_enable();
	return 0;
}

void on_each_cpu(smp_call_func_t fn, void *info, bool wait)
{
	unsigned long flags;

	preempt_disable();
	smp_call_function_many(cpu_online_mask(), fn, info, wait);
	flags = read_flags();
	local_irq_disable();
	fn(info);
	if (flags & X86_EFLAGS_IF)
		local_irq_enable();
	preempt_enable();
}

void smp_ipi_init(void)
{
	for (int cpu = 0; cpu < MAX_CPUS; cpu++)
		INIT_LIST_HEAD(&call_queues[cpu].list);
	request_vector(CALL_FUNCTION_VECTOR, call_function_interrupt, NULL, "call-function");
	request_vector(RESCHEDULE_VECTOR, reschedule_interrupt, NULL, "reschedule");
}

void smp_stop_other_cpus(void)
{
	if (nr_cpus_online > 1)
		lapic_send_nmi_all_but_self();
}
