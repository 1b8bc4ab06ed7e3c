/*
 * TLB shootdown: a reader on another CPU keeps reading a kernel test
 * mapping while this CPU points it at another page and shoots down; once
 * the shootdown returns, the reader must never see the old page. The
 * counters show one IPI per CPU per range, not per page.
 */
#include <quire/ktest.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/mm.h>
#include <quire/errno.h>
#include <asm/io_map.h>

#define OLD_MARK 0x01d01d01d01d01d0ULL
#define NEW_MARK 0x0e40e40e40e40e40ULL

struct shared {
	volatile u64 *va;
	volatile int switched;		/* set after the shootdown returned */
	volatile bool stop;
	u64 reads, stale_after_switch;
};

static int reader(void *arg)
{
	struct shared *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		int sw = __atomic_load_n(&s->switched, __ATOMIC_ACQUIRE);
		u64 v = *s->va;

		if (sw && v == OLD_MARK)
			s->stale_after_switch++;
		s->reads++;
	}
	return 0;
}

/* Map one page of the kernel mapping area at a frame filled with mark. */
static struct page *marked_page(u64 mark)
{
	struct page *p = alloc_pages(GFP_KERNEL, 0);

	if (p)
		for (unsigned int i = 0; i < PAGE_SIZE / 8; i++)
			((u64 *)page_address(p))[i] = mark;
	return p;
}

static void reader_never_sees_old_page(struct ktest *t)
{
	static struct shared s;
	struct page *old = marked_page(OLD_MARK), *new = marked_page(NEW_MARK);
	unsigned long va = (unsigned long)kmap_area_alloc(PAGE_SIZE);
	struct task *th;
	long ipis, shootdowns;

	if (nr_cpus_online < 2)
		ktest_skip(t, "one CPU");
	KASSERT_TRUE(t, old && new && va);
	s.va = (volatile u64 *)va;
	s.switched = 0;
	s.stop = false;
	s.reads = s.stale_after_switch = 0;
	for (int round = 0; round < 20; round++) {
		KASSERT_EQ(t, kmap_set_pte(va, page_to_phys(old), true, false), 0);
		flush_tlb_kernel_range(va, va + PAGE_SIZE);
		s.switched = 0;
		th = kthread_create(reader, &s, "tlb-reader");
		KASSERT_TRUE(t, th != NULL);
		kthread_bind(th, 1 + round % (nr_cpus_online - 1));
		wake_up_process(th);
		while (s.reads < 1000)
			yield();		/* the reader's TLB now holds the old page */
		ipis = atomic_long_read(&tlb_stats.ipis_sent);
		shootdowns = atomic_long_read(&tlb_stats.shootdowns);
		KASSERT_EQ(t, kmap_set_pte(va, page_to_phys(new), true, false), 0);
		flush_tlb_kernel_range(va, va + PAGE_SIZE);
		__atomic_store_n(&s.switched, 1, __ATOMIC_RELEASE);
		KEXPECT_EQ(t, atomic_long_read(&tlb_stats.ipis_sent) - ipis, nr_cpus_online - 1);
		KEXPECT_EQ(t, atomic_long_read(&tlb_stats.shootdowns) - shootdowns, 1);
		s.reads = 0;
		while (s.reads < 1000)
			yield();
		__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
		kthread_join(th);
		s.stop = false;
	}
	KEXPECT_EQ(t, s.stale_after_switch, 0);
	kmap_set_pte(va, 0, false, false);
	flush_tlb_kernel_range(va, va + PAGE_SIZE);
	__free_pages(old, 0);
	__free_pages(new, 0);
}

/* A range of 100 pages costs one IPI per other CPU, and a full flush past the threshold. */
static void one_ipi_per_range(struct ktest *t)
{
	unsigned long va = (unsigned long)kmap_area_alloc(100 * PAGE_SIZE);
	long ipis = atomic_long_read(&tlb_stats.ipis_sent);
	long full = atomic_long_read(&tlb_stats.full_flushes);
	long pages = atomic_long_read(&tlb_stats.pages_flushed);

	KASSERT_TRUE(t, va != 0);
	flush_tlb_kernel_range(va, va + 100 * PAGE_SIZE);
	KEXPECT_EQ(t, atomic_long_read(&tlb_stats.ipis_sent) - ipis, nr_cpus_online - 1);
	KEXPECT_EQ(t, atomic_long_read(&tlb_stats.full_flushes) - full, nr_cpus_online);
	/* A small range is flushed page by page on every CPU. */
	pages = atomic_long_read(&tlb_stats.pages_flushed);
	flush_tlb_kernel_range(va, va + 4 * PAGE_SIZE);
	KEXPECT_EQ(t, atomic_long_read(&tlb_stats.pages_flushed) - pages, 4L * nr_cpus_online);
	/* Only the CPUs in the mask are interrupted. */
	ipis = atomic_long_read(&tlb_stats.ipis_sent);
	flush_tlb_mask_range(cpumask_of(smp_processor_id()), va, va + PAGE_SIZE);
	KEXPECT_EQ(t, atomic_long_read(&tlb_stats.ipis_sent) - ipis, 0);
}

static void mapping_area_rejects_bad_addresses(struct ktest *t)
{
	KEXPECT_EQ(t, kmap_set_pte(0x1000, 0x2000, true, false), -EINVAL);
	KEXPECT_EQ(t, kmap_set_pte(KMAP_AREA_START + KMAP_AREA_SIZE, 0x2000, true, false), -EINVAL);
	KEXPECT_EQ(t, kmap_lookup(KMAP_AREA_START + KMAP_AREA_SIZE - PAGE_SIZE), 0);
}

KTEST_SUITE(tlb,
	    KTEST_CASE(reader_never_sees_old_page),
	    KTEST_CASE(one_ipi_per_range),
	    KTEST_CASE(mapping_area_rejects_bad_addresses));
