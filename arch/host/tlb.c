/*
 * TLB flushes on the host: no MMU reads the simulated page tables, so
 * there is nothing to flush; the calls are counted, for tests and benches.
 */
#include <quire/smp.h>

unsigned long host_tlb_flushes;

void flush_tlb_mask_range(cpumask_t mask, unsigned long start, unsigned long end)
{
	(void)mask;
	(void)start;
	(void)end;
	__atomic_fetch_add(&host_tlb_flushes, 1, __ATOMIC_RELAXED);
}
