/*
 * TLB shootdown for kernel mappings and for user address spaces (the caller
 * passes the CPUs that may cache the range: for an mm, mm->cpus).
 * The local CPU invalidates page by page with invlpg, or reloads CR3 past
 * TLB_FLUSH_ALL_THRESHOLD pages; the other CPUs in the mask get one
 * call-function IPI for the whole range, and the call returns once all of
 * them have flushed.
 */
#include <quire/smp.h>
#include <quire/percpu.h>
#include <quire/preempt.h>
#include <asm/page.h>
#include <asm/cpu.h>

struct flush_range {
	unsigned long start, end;
};

static void flush_tlb_all_local(void)
{
	/* Reloading CR3 drops every non-global translation (Quire uses no global pages). */
	write_cr3(read_cr3());
	atomic_long_inc(&tlb_stats.full_flushes);
}

static void flush_range_local(void *info)
{
	const struct flush_range *r = info;
	unsigned long pages = (r->end - r->start + PAGE_SIZE - 1) / PAGE_SIZE;

	if (pages > TLB_FLUSH_ALL_THRESHOLD) {
		flush_tlb_all_local();
		return;
	}
	for (unsigned long va = r->start & PAGE_MASK; va < r->end; va += PAGE_SIZE)
		__asm__ __volatile__("invlpg (%0)" : : "r"(va) : "memory");
	atomic_long_add((long)pages, &tlb_stats.pages_flushed);
}

void flush_tlb_mask_range(cpumask_t mask, unsigned long start, unsigned long end)
{
	struct flush_range r = { start, end };
	cpumask_t others;

	if (end <= start)
		return;
	preempt_disable();
	if (mask & cpumask_of(smp_processor_id()))
		flush_range_local(&r);
	others = mask & cpu_online_mask() & ~cpumask_of(smp_processor_id());
	if (others) {
		atomic_long_inc(&tlb_stats.shootdowns);
		smp_call_function_many(others, flush_range_local, &r, true);
	}
	preempt_enable();
}

void flush_tlb_kernel_range(unsigned long start, unsigned long end)
{
	flush_tlb_mask_range(cpu_online_mask(), start, end);
}
