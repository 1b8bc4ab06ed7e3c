/*
 * Cross-CPU calls and TLB shootdown (arch/x86_64/kernel/smp.c, tlb.c).
 *
 * smp_call_function_single/many run a function on other CPUs from their
 * call-function IPI, with interrupts off there; wait=true returns after every
 * target ran it. They must be called with interrupts on (a CPU waiting with
 * interrupts off for another that waits for it would deadlock), and the
 * function must not sleep.
 */
#ifndef QUIRE_SMP_H
#define QUIRE_SMP_H

#include <quire/types.h>
#include <quire/atomic.h>
#include <quire/sched.h>

typedef void (*smp_call_func_t)(void *info);

int smp_call_function_single(int cpu, smp_call_func_t fn, void *info, bool wait);
/* On every online CPU in mask except this one. */
void smp_call_function_many(cpumask_t mask, smp_call_func_t fn, void *info, bool wait);
/* On every online CPU, this one included (here directly). */
void on_each_cpu(smp_call_func_t fn, void *info, bool wait);

void smp_send_reschedule(int cpu);
/* Stop every other CPU (panic): NMI, they halt. */
void smp_stop_other_cpus(void);

/* The online CPUs as a mask. */
cpumask_t cpu_online_mask(void);

/*
 * Kernel TLB shootdown: after changing kernel mappings in [start, end),
 * flush them on every CPU. The local CPU uses invlpg per page (a full flush
 * past TLB_FLUSH_ALL_THRESHOLD pages); every other online CPU gets one IPI
 * for the whole range. Returns when all have flushed.
 */
#define TLB_FLUSH_ALL_THRESHOLD	32
void flush_tlb_kernel_range(unsigned long start, unsigned long end);
/* The same, limited to the CPUs in mask (the CPUs that may cache the range). */
void flush_tlb_mask_range(cpumask_t mask, unsigned long start, unsigned long end);

struct tlb_stats {
	atomic_long_t ipis_sent;	/* IPIs of any kind sent by smp_call_function* */
	atomic_long_t shootdowns;	/* flush_tlb_*_range calls that involved other CPUs */
	atomic_long_t pages_flushed;	/* pages invalidated one by one, all CPUs */
	atomic_long_t full_flushes;	/* whole-TLB flushes, all CPUs */
};
extern struct tlb_stats tlb_stats;

/* The maxcpus= boot option: at most this many CPUs are started. */
extern unsigned long max_cpus;

/* Boot: the IPI handlers, then start every CPU the MADT lists. */
void smp_ipi_init(void);
void smp_boot_cpus(void);

#endif
