/*
 * mremap on the host (mm/mremap.c, docs/mm/mremap.md), with ASan and UBSan
 * watching: the moves of the kernel's mremap suite in one sequence (a THP
 * between PMD tables and then unaligned, 64 KiB folios across a page-table
 * boundary, DONTUNMAP, a shared file, fork after the moves), a move that
 * runs out of memory half way (everything goes back), then a race:
 * one thread moves a THP and sixteen 64 KiB folios back and forth while
 * two others walk those folios' rmap over and over (mm_verify_folio_rmap:
 * every mapping found, as many as the mapcounts say). The move holds the
 * rmap locks, so a walker never sees an entry in flight.
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
#include <quire/fs.h>
#include <quire/uapi/fcntl.h>
#include <quire/errno.h>
#include "host_setup.h"
#include <asm/pgtable.h>

#define A	0x40000000UL		/* home: 1 GiB, one PMD table */
#define B	0x80000000UL		/* away: the next GiB, another PMD table */
#define SZ_64K	0x10000UL
#define SZ_2M	0x200000UL

static void setup(void)
{
	if (!host_setup(32, 96, HOST_ROOTFS | HOST_ZERO_PAGE))
		return;
	/* 2 MiB by PMD, 64 KiB where 2 MiB does not fit, nothing in between. */
	thp_set_global_mode(THP_ALWAYS);
	for (unsigned int o = THP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, o == 4 ? THP_ALWAYS : THP_NEVER);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
}

static unsigned long free_total(void)
{
	unsigned long n = 0;

	deferred_split_scan(~0UL);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		n += node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
	return n;
}

static long remap(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
		  unsigned long new_len, unsigned long flags, unsigned long new_addr)
{
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mremap(mm, addr, old_len, new_len, flags, new_addr);
	up_write(&mm->mmap_lock);
	return ret;
}

static long map(struct mm_struct *mm, unsigned long addr, unsigned long len, unsigned long type,
		struct file *f)
{
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, len, PROT_READ | PROT_WRITE, type | MAP_FIXED, f, 0);
	up_write(&mm->mmap_lock);
	return ret;
}

static unsigned long fault_range(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	unsigned long bad = 0;

	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE)
		bad += handle_mm_fault(mm, a, FAULT_FLAG_WRITE) != 0;
	return bad;
}

static pte_t *huge_pmd(struct mm_struct *mm, unsigned long a)
{
	pte_t *pmd = pmd_lookup(mm->pgd, a, false);

	return pmd && pmd_leaf(*pmd) ? pmd : NULL;
}

/* The page mapped at a; NULL for nothing or the zero page. */
static struct page *page_at(struct mm_struct *mm, unsigned long a)
{
	pte_t *pmd = pmd_lookup(mm->pgd, a, false), pte;

	if (!pmd || !*pmd)
		return NULL;
	if (pmd_leaf(*pmd))
		return pfn_to_page(pmd_pfn(*pmd) + ((a >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1)));
	pte = *pte_offset(pmd, a);
	return pte_has_page(pte) && !is_zero_pfn(pte_pfn(pte)) ? pfn_to_page(pte_pfn(pte)) : NULL;
}

static struct folio *folio_at(struct mm_struct *mm, unsigned long a)
{
	struct page *p = page_at(mm, a);

	return p ? page_folio(p) : NULL;
}

static u8 mark(unsigned long a, u8 salt)
{
	return (u8)((a >> PAGE_SHIFT) * 7 + salt);
}

/* A byte per page at 0x10, through the direct map, saying where it was written. */
static void write_marks(struct mm_struct *mm, unsigned long a, unsigned long len, u8 salt)
{
	for (unsigned long off = 0; off < len; off += PAGE_SIZE)
		((u8 *)page_address(page_at(mm, a + off)))[0x10] = mark(a + off, salt);
}

/* Pages of [to, to + len) not holding the marks written at from. */
static unsigned long wrong_marks(struct mm_struct *mm, unsigned long to, unsigned long from,
				 unsigned long len, u8 salt)
{
	unsigned long bad = 0;

	for (unsigned long off = 0; off < len; off += PAGE_SIZE) {
		struct page *p = page_at(mm, to + off);

		bad += !p || ((u8 *)page_address(p))[0x10] != mark(from + off, salt);
	}
	return bad;
}

HOST_TEST(moves_keep_frames_rmap_and_data)
{
	const unsigned long small = A + 8 * SZ_2M, mthp = A + 4 * SZ_2M;
	unsigned long free0, frames = 0;
	struct mm_struct *mm, *child;
	struct folio *thp, *f64;
	struct file *file;
	loff_t pos = 0;
	long dup;

	setup();
	free0 = free_total();
	mm = mm_alloc();
	/* A THP, four 64 KiB folios, three 4 KiB pages. */
	EXPECT_EQ(map(mm, A, SZ_2M, MAP_PRIVATE | MAP_ANONYMOUS, NULL), (long)A);
	EXPECT_EQ(map(mm, mthp, 4 * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS, NULL), (long)mthp);
	EXPECT_EQ(map(mm, small, 3 * PAGE_SIZE, MAP_PRIVATE | MAP_ANONYMOUS, NULL), (long)small);
	EXPECT_EQ(fault_range(mm, A, SZ_2M) + fault_range(mm, mthp, 4 * SZ_64K) +
		  fault_range(mm, small, 3 * PAGE_SIZE), 0);
	thp = folio_at(mm, A);
	f64 = folio_at(mm, mthp);
	if (!thp || !f64 || !huge_pmd(mm, A) || folio_order(f64) != 4)
		HOST_SKIP("no THP or 64 KiB folio to move");
	write_marks(mm, A, SZ_2M, 1);
	write_marks(mm, mthp, 4 * SZ_64K, 2);
	write_marks(mm, small, 3 * PAGE_SIZE, 3);

	/* The THP into another PMD table, still one PMD with its deposited table. */
	EXPECT_EQ(remap(mm, A, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, B), (long)B);
	EXPECT_TRUE(huge_pmd(mm, B) != NULL && folio_at(mm, B) == thp);
	EXPECT_EQ(mm->nr_deposited, 1);
	EXPECT_EQ(folio_entire_mapcount(thp), 1);
	EXPECT_EQ(wrong_marks(mm, B, A, SZ_2M, 1), 0);
	EXPECT_EQ(mm_verify(), 0);
	/* Then unaligned: split, across two page tables; a folio split still locks both. */
	EXPECT_EQ(remap(mm, B, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, B + SZ_2M + 3 * PAGE_SIZE),
		  (long)(B + SZ_2M + 3 * PAGE_SIZE));
	EXPECT_EQ(mm->nr_deposited, 0);
	EXPECT_EQ(folio_mapcount(thp), HPAGE_PMD_NR);
	EXPECT_EQ(wrong_marks(mm, B + SZ_2M + 3 * PAGE_SIZE, A, SZ_2M, 1), 0);
	EXPECT_EQ(mm_verify(), 0);
	folio_get(thp);
	folio_lock(thp);
	EXPECT_EQ(split_folio_to_order(thp, 4), 0);
	folio_unlock(thp);
	folio_put(thp);
	EXPECT_EQ(mm_verify(), 0);

	/* 64 KiB folios across a table boundary. */
	EXPECT_EQ(remap(mm, mthp, 4 * SZ_64K, 4 * SZ_64K, MREMAP_MAYMOVE | MREMAP_FIXED,
			B + 6 * SZ_2M - 3 * PAGE_SIZE), (long)(B + 6 * SZ_2M - 3 * PAGE_SIZE));
	EXPECT_PTR_EQ(folio_at(mm, B + 6 * SZ_2M - 3 * PAGE_SIZE), f64);
	EXPECT_EQ(folio_mapcount(f64), 16);
	EXPECT_EQ(wrong_marks(mm, B + 6 * SZ_2M - 3 * PAGE_SIZE, mthp, 4 * SZ_64K, 2), 0);
	EXPECT_EQ(mm_verify(), 0);

	/* DONTUNMAP: the old range stays, empty. */
	for (unsigned long off = 0; off < 3 * PAGE_SIZE; off += PAGE_SIZE)
		frames += page_to_pfn(page_at(mm, small + off));
	EXPECT_EQ(remap(mm, small, 3 * PAGE_SIZE, 3 * PAGE_SIZE,
			MREMAP_MAYMOVE | MREMAP_DONTUNMAP | MREMAP_FIXED, B + 8 * SZ_2M),
		  (long)(B + 8 * SZ_2M));
	for (unsigned long off = 0; off < 3 * PAGE_SIZE; off += PAGE_SIZE) {
		frames -= page_to_pfn(page_at(mm, B + 8 * SZ_2M + off));
		EXPECT_TRUE(page_at(mm, small + off) == NULL);
	}
	EXPECT_EQ(frames, 0);
	EXPECT_TRUE(find_vma(mm, small)->vm_start == small);
	EXPECT_EQ(handle_mm_fault(mm, small, FAULT_FLAG_WRITE), 0);
	EXPECT_EQ(((u8 *)page_address(page_at(mm, small)))[0x10], 0);
	EXPECT_EQ(wrong_marks(mm, B + 8 * SZ_2M, small, 3 * PAGE_SIZE, 3), 0);
	EXPECT_EQ(mm_verify(), 0);

	/* A shared file mapping, moved, then mapped twice (old_size 0). */
	EXPECT_EQ(vfs_open(NULL, "/mremap-file", O_RDWR | O_CREAT, 0600, &file), 0);
	EXPECT_EQ(vfs_write(file, "0123456789", 10, &pos), 10);
	EXPECT_EQ(map(mm, A, PAGE_SIZE, MAP_SHARED, file), (long)A);
	EXPECT_EQ(handle_mm_fault(mm, A, FAULT_FLAG_WRITE), 0);
	EXPECT_EQ(remap(mm, A, PAGE_SIZE, PAGE_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, B + 10 * SZ_2M),
		  (long)(B + 10 * SZ_2M));
	dup = remap(mm, B + 10 * SZ_2M, 0, PAGE_SIZE, MREMAP_MAYMOVE, 0);
	EXPECT_TRUE(dup > 0);
	EXPECT_EQ(handle_mm_fault(mm, (unsigned long)dup, 0), 0);
	EXPECT_PTR_EQ(folio_at(mm, (unsigned long)dup), folio_at(mm, B + 10 * SZ_2M));
	EXPECT_EQ(folio_mapcount(folio_at(mm, (unsigned long)dup)), 2);
	EXPECT_EQ(((char *)page_address(page_at(mm, (unsigned long)dup)))[3], '3');
	EXPECT_EQ(mm_verify(), 0);

	/* fork after the moves: shared copy-on-write, each side keeps its bytes. */
	child = dup_mm(mm);
	EXPECT_TRUE(child != NULL);
	EXPECT_PTR_EQ(folio_at(child, B + 8 * SZ_2M), folio_at(mm, B + 8 * SZ_2M));
	EXPECT_EQ(handle_mm_fault(child, B + 8 * SZ_2M, FAULT_FLAG_WRITE), 0);
	EXPECT_TRUE(folio_at(child, B + 8 * SZ_2M) != folio_at(mm, B + 8 * SZ_2M));
	((u8 *)page_address(page_at(child, B + 8 * SZ_2M)))[0x10] = 0xee;
	EXPECT_EQ(wrong_marks(mm, B + 8 * SZ_2M, small, 3 * PAGE_SIZE, 3), 0);
	EXPECT_EQ(mm_verify(), 0);
	mmput(child);
	mmput(mm);
	fput(file);
	EXPECT_EQ(vfs_unlink(NULL, "/mremap-file"), 0);
	EXPECT_EQ(mm_verify(), 0);
	EXPECT_EQ((long)(free0 - free_total()), 0);
}

/* ---- out of memory half way ---- */

static struct { struct page *page; unsigned int order; } held[1 << 16];
static int nr_held;

/* Take every free page (largest blocks first); give them back. */
static void hold_all_memory(void)
{
	for (int order = MAX_PAGE_ORDER; order >= 0; order--) {
		struct page *p;

		while (nr_held < (int)ARRAY_SIZE(held) &&
		       (p = alloc_pages(GFP_KERNEL | __GFP_NOWARN, (unsigned int)order))) {
			held[nr_held].page = p;
			held[nr_held++].order = (unsigned int)order;
		}
	}
}

static void release_memory(void)
{
	while (nr_held) {
		nr_held--;
		__free_pages(held[nr_held].page, held[nr_held].order);
	}
}

/*
 * A move whose first 2 MiB block goes as a whole page table (nothing to
 * allocate) and whose tail needs a new one, with no page left: -ENOMEM, the
 * first block moved back, the new VMA gone, everything as it was.
 */
HOST_TEST(failed_move_puts_everything_back)
{
	const unsigned long len = SZ_2M + 4 * PAGE_SIZE, to = A + 4 * SZ_2M;
	struct mm_struct *mm;
	struct folio *first;
	unsigned long free0;
	int maps;
	long ret;

	setup();
	free0 = free_total();
	mm = mm_alloc();
	down_write(&mm->mmap_lock);
	do_mmap(mm, A, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	do_madvise(mm, A, len, MADV_NOHUGEPAGE);	/* 4 KiB pages: a PTE table to move whole */
	up_write(&mm->mmap_lock);
	EXPECT_EQ(fault_range(mm, A, len), 0);
	write_marks(mm, A, len, 11);
	first = folio_at(mm, A);
	maps = mm->map_count;
	hold_all_memory();
	ret = remap(mm, A, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	release_memory();
	printf("# with every page held: mremap returned %ld\n", ret);
	EXPECT_EQ(ret, -ENOMEM);
	EXPECT_EQ(mm->map_count, maps);
	EXPECT_TRUE(find_vma(mm, to) == NULL || find_vma(mm, to)->vm_start >= to + len);
	EXPECT_PTR_EQ(folio_at(mm, A), first);
	EXPECT_EQ(wrong_marks(mm, A, A, len, 11), 0);
	EXPECT_EQ(atomic_long_read(&mm->rss), (long)(len / PAGE_SIZE));
	EXPECT_EQ(mm_verify(), 0);
	/* With memory, the same move works. */
	EXPECT_EQ(remap(mm, A, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to), (long)to);
	EXPECT_EQ(wrong_marks(mm, to, A, len, 11), 0);
	EXPECT_EQ(mm_verify(), 0);
	mmput(mm);
	EXPECT_EQ((long)(free0 - free_total()), 0);
}

/* ---- the race ---- */

#define WALKERS		2
#define MOVES		1000
#define NFOLIOS		(1 + 16)

static struct mm_struct *race_mm;
static struct folio *race_folios[NFOLIOS];
static volatile int race_done;
static int walker_problems[WALKERS];
static unsigned long walks[WALKERS];
/*
 * mm_verify_folio_rmap reads the mapcounts after its walk: the one move
 * that splits the THP (and so changes them) runs with the walkers held
 * off (write); every other move changes no count.
 */
static pthread_rwlock_t counts_change = PTHREAD_RWLOCK_INITIALIZER;

static void *walker(void *arg)
{
	long me = (long)arg;
	struct percpu cpu = { .self = &cpu, .cpu = (int)me + 1, .online = true };

	host_this_cpu = &cpu;
	while (!__atomic_load_n(&race_done, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < NFOLIOS; i++) {
			pthread_rwlock_rdlock(&counts_change);
			walker_problems[me] += mm_verify_folio_rmap(race_folios[i]);
			pthread_rwlock_unlock(&counts_change);
		}
		walks[me]++;
	}
	return NULL;
}

HOST_TEST(walkers_never_see_a_move_half_done)
{
	/* The THP's 2 MiB, then 1 MiB of 64 KiB folios, each moved between home and away. */
	const unsigned long home[2] = { A, A + 2 * SZ_2M }, len[2] = { SZ_2M, 16 * SZ_64K };
	unsigned long away[2], free0;
	pthread_t th[WALKERS];
	int problems = 0, bad_moves = 0;
	bool thp_split = false;

	setup();
	free0 = free_total();
	race_mm = mm_alloc();
	for (int k = 0; k < 2; k++) {
		EXPECT_EQ(map(race_mm, home[k], len[k], MAP_PRIVATE | MAP_ANONYMOUS, NULL), (long)home[k]);
		EXPECT_EQ(fault_range(race_mm, home[k], len[k]), 0);
		write_marks(race_mm, home[k], len[k], 9);
	}
	race_folios[0] = folio_at(race_mm, A);
	for (int i = 0; i < 16; i++)
		race_folios[1 + i] = folio_at(race_mm, home[1] + i * SZ_64K);
	for (int i = 0; i < NFOLIOS; i++) {
		if (!race_folios[i])
			HOST_SKIP("a folio is missing");
		folio_get(race_folios[i]);	/* the walkers' */
	}
	race_done = 0;
	for (long i = 0; i < WALKERS; i++)
		pthread_create(&th[i], NULL, walker, (void *)i);
	for (int n = 0; n < MOVES; n++) {
		/* Aligned for a while (whole PMDs move), then unaligned (split, PTEs move). */
		unsigned long shift = n < MOVES / 2 ? 0 : (unsigned long)(n % 7) * PAGE_SIZE;

		away[0] = B + shift;
		away[1] = B + 2 * SZ_2M - SZ_64K / 2 + shift;	/* across a table boundary */
		if (shift && !thp_split) {
			/* The first unaligned move splits the THP's PMD: its counts change. */
			pthread_rwlock_wrlock(&counts_change);
			bad_moves += remap(race_mm, home[0], len[0], len[0], MREMAP_MAYMOVE | MREMAP_FIXED,
					   away[0]) != (long)away[0];
			bad_moves += remap(race_mm, away[0], len[0], len[0], MREMAP_MAYMOVE | MREMAP_FIXED,
					   home[0]) != (long)home[0];
			pthread_rwlock_unlock(&counts_change);
			thp_split = true;
			bad_moves += huge_pmd(race_mm, home[0]) != NULL;
		}
		for (int k = 0; k < 2; k++) {
			bad_moves += remap(race_mm, home[k], len[k], len[k], MREMAP_MAYMOVE | MREMAP_FIXED,
					   away[k]) != (long)away[k];
			bad_moves += remap(race_mm, away[k], len[k], len[k], MREMAP_MAYMOVE | MREMAP_FIXED,
					   home[k]) != (long)home[k];
		}
	}
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < WALKERS; i++) {
		pthread_join(th[i], NULL);
		problems += walker_problems[i];
	}
	printf("# %d moves of a THP and 16 folios of 64 KiB, %lu + %lu walks of their rmap: "
	       "%d problems\n", 4 * MOVES, walks[0], walks[1], problems);
	EXPECT_EQ(bad_moves, 0);
	EXPECT_EQ(problems, 0);
	EXPECT_TRUE(walks[0] > 0 && walks[1] > 0);
	EXPECT_EQ(wrong_marks(race_mm, home[0], home[0], len[0], 9), 0);
	EXPECT_EQ(wrong_marks(race_mm, home[1], home[1], len[1], 9), 0);
	EXPECT_EQ(mm_verify(), 0);
	for (int i = 0; i < NFOLIOS; i++)
		folio_put(race_folios[i]);
	mmput(race_mm);
	EXPECT_EQ((long)(free0 - free_total()), 0);
}

HOST_TEST_MAIN(mremap, HOST_CASE(moves_keep_frames_rmap_and_data),
	       HOST_CASE(failed_move_puts_everything_back),
	       HOST_CASE(walkers_never_see_a_move_half_done));
