/*
 * Per-CPU data. Each CPU has one struct percpu; on x86-64 the GS base points
 * at it (asm/percpu.h), on the host a thread-local pointer does. Read fields
 * of this CPU with this_cpu()->field while preemption is disabled (or
 * interrupts are off), so the task cannot move to another CPU in between;
 * this_cpu_read(current_task) is a single load and safe anywhere.
 */
#ifndef QUIRE_PERCPU_H
#define QUIRE_PERCPU_H

#define MAX_CPUS	64

/* Offsets the syscall entry code uses (arch/x86_64/kernel/syscall.S). */
#define PERCPU_KERNEL_STACK	16
#define PERCPU_USER_RSP		24

#ifndef __ASSEMBLER__
#include <quire/types.h>

struct task;

struct percpu {
	struct percpu *self;		/* must stay first: gs:0 */
	struct task *current_task;	/* must stay second: gs:8 */
	u64 kernel_stack;		/* gs:16: top of the current task's kernel stack (syscall entry) */
	u64 user_rsp;			/* gs:24: the user stack pointer, saved at syscall entry */
	int cpu;			/* logical id (MADT order) */
	int node;			/* from SRAT */
	u32 apic_id;
	int preempt_count;		/* > 0: no preemption on this CPU */
	bool need_resched;		/* switch at the next chance */
	bool online;
	int boot_state;			/* smpboot.c: starting, online or abandoned */
	int irq_depth;			/* nested interrupts being handled */
	int spinlocks_held;		/* lock debugging: spinlocks this CPU holds */
	struct task *idle_task;
	void *arch;			/* the architecture's per-CPU state (GDT, TSS, stacks) */
	/* Counters (docs/smp.md). */
	u64 irqs;			/* interrupts handled */
	u64 timer_ticks;
	u64 ipis_received;
	u64 resched_ipis;
};

extern struct percpu *percpu_areas[MAX_CPUS];	/* NULL for CPUs not started */
extern int nr_cpus_online;

/* Boot: the boot CPU's area, set up before anything else runs. */
void percpu_early_init(void);

#include <asm/percpu.h>		/* this_cpu(), this_cpu_read() */

static inline int smp_processor_id(void)
{
	return this_cpu()->cpu;
}

static inline struct percpu *per_cpu_ptr(int cpu)
{
	return cpu >= 0 && cpu < MAX_CPUS ? percpu_areas[cpu] : NULL;
}

static inline bool cpu_online(int cpu)
{
	struct percpu *p = per_cpu_ptr(cpu);

	return p && __atomic_load_n(&p->online, __ATOMIC_ACQUIRE);
}

#define for_each_online_cpu(c) \
	for (c = 0; c < MAX_CPUS; c++) if (!cpu_online(c)) {} else

#endif /* __ASSEMBLER__ */
#endif
