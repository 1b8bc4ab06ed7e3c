/*
 * Threads as CPUs driving one address space at once, on the host (the twin
 * of the kernel's mm_race suite, with ASan and UBSan watching): four
 * pthreads, each with its own struct percpu, write-fault every page of the
 * same 16 MiB (8 blocks of 2 MiB, half of them MADV_NOHUGEPAGE) in
 * different orders, while in every other round one of them splits the PMD
 * mappings under them instead. After each round: no fault failed, every
 * page holds the byte its owner wrote, rss matches the mappings and
 * mm_verify is clean; after the last, every page is back.
 */
#include "ktap.h"
#include <pthread.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/mm_internal.h>
#include <quire/percpu.h>
#include <quire/numa.h>
#include <quire/slab.h>
#include "host_setup.h"
#include <asm/pgtable.h>

#define NTHREADS	4
#define ROUNDS		40
#define BLOCKS		8
#define A		0x40000000UL
#define LEN		(BLOCKS * PMD_SIZE)
#define NPAGES		(LEN / PAGE_SIZE)

static struct mm_struct *mm;
static pthread_barrier_t barrier;
static int round_nr;
static unsigned long failed[NTHREADS];

static u8 mark(unsigned long a)
{
	return (u8)((a >> PAGE_SHIFT) * 13 + round_nr);
}

/* The byte at offset 0x10 of the page mapped at a (through a PMD or a PTE), or NULL. */
static volatile u8 *byte_at(unsigned long a)
{
	pte_t *pmd = pmd_lookup(mm->pgd, a, false), *pte;
	unsigned long pfn;

	if (!pmd || !*pmd)
		return NULL;
	if (pmd_leaf(*pmd)) {
		pfn = pmd_pfn(*pmd) + ((a >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
	} else {
		pte = pte_offset(pmd, a);
		if (!pte_present(*pte) || is_zero_pfn(pte_pfn(*pte)))
			return NULL;
		pfn = pte_pfn(*pte);
	}
	return (u8 *)page_address(pfn_to_page(pfn)) + 0x10;
}

/* Page i of the range in thread me's order: two go up, two down, a few pages apart. */
static unsigned long page_for(long me, unsigned long i)
{
	unsigned long k = (i + me * 3) % NPAGES;

	return A + (me % 2 ? NPAGES - 1 - k : k) * PAGE_SIZE;
}

static void fault_all(long me)
{
	for (unsigned long i = 0; i < NPAGES; i++) {
		unsigned long a = page_for(me, i);
		volatile u8 *b;

		if (handle_mm_fault(mm, a, FAULT_FLAG_WRITE)) {
			failed[me]++;
			continue;
		}
		if ((a >> PAGE_SHIFT) % NTHREADS != (unsigned long)me)
			continue;
		down_read(&mm->mmap_lock);	/* the page stays put while we write it */
		b = byte_at(a);
		if (b)
			*b = mark(a);
		else
			failed[me]++;
		up_read(&mm->mmap_lock);
	}
}

/* Split every PMD mapping of the range, over and over, while the others fault. */
static void split_all(void)
{
	for (int pass = 0; pass < 64; pass++) {
		down_read(&mm->mmap_lock);
		for (unsigned long b = A; b < A + LEN; b += PMD_SIZE)
			split_huge_pmd(find_vma(mm, b), b);
		up_read(&mm->mmap_lock);
	}
}

static void *thread_fn(void *arg)
{
	long me = (long)arg;
	struct percpu cpu = { .self = &cpu, .cpu = (int)me + 1, .online = true };

	host_this_cpu = &cpu;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&barrier);		/* the range is mapped */
		if (me == NTHREADS - 1 && r % 2)
			split_all();
		else
			fault_all(me);
		pthread_barrier_wait(&barrier);		/* done: main checks */
		pthread_barrier_wait(&barrier);		/* checked and unmapped */
	}
	return NULL;
}

/* Pages whose byte is not their owner's mark; the pages nobody owned this round are skipped. */
static unsigned long check_marks(int round)
{
	unsigned long bad = 0;

	for (unsigned long a = A; a < A + LEN; a += PAGE_SIZE) {
		unsigned long owner = (a >> PAGE_SHIFT) % NTHREADS;
		volatile u8 *b = byte_at(a);

		if (owner == NTHREADS - 1 && round % 2)
			continue;	/* the splitter's pages: faulted by nobody */
		bad += !b || *b != mark(a);
	}
	return bad;
}

HOST_TEST(threads_fault_one_mm)
{
	pthread_t th[NTHREADS];
	unsigned long free0 = 0, bad_marks = 0, bad_rss = 0, fails = 0;
	int verify = 0;

	host_setup(64, 96, HOST_ZERO_PAGE);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		free0 += node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
	mm = mm_alloc();
	pthread_barrier_init(&barrier, NULL, NTHREADS + 1);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, thread_fn, (void *)i);
	for (round_nr = 0; round_nr < ROUNDS; round_nr++) {
		long rss = 0;

		down_write(&mm->mmap_lock);
		do_mmap(mm, A, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			NULL, 0);
		for (unsigned long b = A + PMD_SIZE; b < A + LEN; b += 2 * PMD_SIZE)
			do_madvise(mm, b, PMD_SIZE, MADV_NOHUGEPAGE);
		up_write(&mm->mmap_lock);
		pthread_barrier_wait(&barrier);
		pthread_barrier_wait(&barrier);
		bad_marks += check_marks(round_nr);
		for (unsigned long a = A; a < A + LEN; a += PAGE_SIZE)
			rss += byte_at(a) != NULL;
		bad_rss += atomic_long_read(&mm->rss) != rss;
		verify += mm_verify();
		down_write(&mm->mmap_lock);
		do_munmap(mm, A, LEN);
		up_write(&mm->mmap_lock);
		pthread_barrier_wait(&barrier);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		fails += failed[i];
	}
	mmput(mm);
	deferred_split_scan(~0UL);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		free0 -= node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
	printf("# %d rounds of %d threads on %lu pages: %lu failed faults, %lu wrong bytes, "
	       "%lu rounds with a wrong rss, %d mm_verify problems, %ld pages not back\n",
	       ROUNDS, NTHREADS, NPAGES, fails, bad_marks, bad_rss, verify, (long)free0);
	EXPECT_EQ(fails, 0);
	EXPECT_EQ(bad_marks, 0);
	EXPECT_EQ(bad_rss, 0);
	EXPECT_EQ(verify, 0);
	EXPECT_EQ((long)free0, 0);
}

HOST_TEST_MAIN(mm_threads, HOST_CASE(threads_fault_one_mm));
