/*
 * Helpers of the thp suite (thp_test.h): each case's setup and teardown
 * (the THP controls and rmap_batching saved and restored, the CPU pinned,
 * every page back), its address spaces, and the page-table lookups.
 */
#include <quire/mm_internal.h>
#include <quire/migrate.h>
#include <quire/errno.h>
#include <quire/rmap.h>
#include <quire/slab.h>
#include <quire/smp.h>
#include <quire/string.h>
#include "thp_test.h"

/* ---- setup and teardown ---- */

static void snapshot_free(unsigned long before[MAX_NUMNODES])
{
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		before[nid] = node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
}

/* Every page is back and mm_verify agrees. */
static void expect_free_back(struct ktest *t, const unsigned long before[MAX_NUMNODES])
{
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			KEXPECT_EQ(t, (long)before[nid] - (long)node_page_state(nid, NR_FREE_PAGES), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
}

/* Linux's defaults: global "always", 2 MiB "inherit", every other size "never". */
static void thp_defaults(void)
{
	thp_set_global_mode(THP_ALWAYS);
	for (unsigned int o = THP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, THP_NEVER);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
}

/*
 * Run on one CPU of a node with memory (faults allocate large folios on
 * the running CPU's node only), with the default controls, nothing on the
 * deferred split queue, and a snapshot of the free pages.
 */
void thpt_begin(struct ktest *t, struct thp_ctx *c)
{
	int cpu, chosen = -1;

	memset(c, 0, sizeof(*c));
	c->global = thp_global_mode();
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		c->order[o] = thp_order_mode(o);
	c->batching = rmap_batching;
	c->cpus = current->cpus_allowed;
	for_each_online_cpu(cpu) {
		if ((c->cpus & cpumask_of(cpu)) && node_has_memory(cpu_to_node(cpu))) {
			chosen = cpu;
			break;
		}
	}
	if (chosen < 0)
		ktest_skip(t, "no CPU on a node with memory");
	set_cpus_allowed(current, cpumask_of(chosen));
	yield();
	c->nid = cpu_to_node(chosen);
	thp_defaults();
	rmap_batching = true;
	deferred_split_scan(~0UL);
	snapshot_free(c->free_before);
}

void thpt_end(struct ktest *t, struct thp_ctx *c)
{
	for (int i = 0; i < MAX_MMS; i++)
		if (c->mm[i])
			mmput(c->mm[i]);
	memset(c->mm, 0, sizeof(c->mm));
	thp_set_global_mode(c->global);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, c->order[o]);
	rmap_batching = c->batching;
	set_cpus_allowed(current, c->cpus);
	expect_free_back(t, c->free_before);
}

struct mm_struct *thpt_new_mm(struct thp_ctx *c)
{
	for (int i = 0; i < MAX_MMS; i++) {
		if (!c->mm[i]) {
			c->mm[i] = mm_alloc();
			return c->mm[i];
		}
	}
	return NULL;
}

struct mm_struct *thpt_fork_mm(struct thp_ctx *c, struct mm_struct *parent)
{
	for (int i = 0; i < MAX_MMS; i++) {
		if (!c->mm[i]) {
			c->mm[i] = dup_mm(parent);
			return c->mm[i];
		}
	}
	return NULL;
}

void thpt_drop_mm(struct thp_ctx *c, struct mm_struct *mm)
{
	for (int i = 0; i < MAX_MMS; i++) {
		if (c->mm[i] == mm) {
			c->mm[i] = NULL;
			mmput(mm);
		}
	}
}

/* ---- address-space operations (taking mmap_lock as the system calls do) ---- */

long thpt_map_anon(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&mm->mmap_lock);
	return ret;
}

int thpt_unmap(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_munmap(mm, addr, len);
	up_write(&mm->mmap_lock);
	return ret;
}

int thpt_protect(struct mm_struct *mm, unsigned long addr, unsigned long len,
		 unsigned long prot)
{
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_mprotect(mm, addr, len, prot);
	up_write(&mm->mmap_lock);
	return ret;
}

int thpt_advise(struct mm_struct *mm, unsigned long addr, unsigned long len, int advice)
{
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_madvise(mm, addr, len, advice);
	up_write(&mm->mmap_lock);
	return ret;
}

unsigned long thpt_fault_range(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	unsigned long bad = 0;

	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE)
		bad += fault(mm, a, true) != 0;
	return bad;
}

void thpt_split_pmd_at(struct mm_struct *mm, unsigned long addr)
{
	down_read(&mm->mmap_lock);
	split_huge_pmd(find_vma(mm, addr), addr);
	up_read(&mm->mmap_lock);
}

/* ---- looking at the page tables ---- */

pte_t *thpt_huge_pmd(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

	return pmd && pmd_leaf(*pmd) ? pmd : NULL;
}

pte_t *thpt_pte_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

	if (!pmd || !pmd_is_table(*pmd))
		return NULL;
	return pte_offset(pmd, addr);
}

pte_t thpt_entry_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = thpt_huge_pmd(mm, addr), *pte;

	if (pmd)
		return *pmd;
	pte = thpt_pte_of(mm, addr);
	return pte ? *pte : 0;
}

unsigned long thpt_pfn_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = thpt_huge_pmd(mm, addr), *pte;

	if (pmd)
		return pmd_pfn(*pmd) + ((addr >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
	pte = thpt_pte_of(mm, addr);
	return pte && pte_has_page(*pte) ? pte_pfn(*pte) : 0;
}

/* The page mapped at addr; NULL for nothing or the zero page. */
struct page *thpt_page_of(struct mm_struct *mm, unsigned long addr)
{
	unsigned long pfn = thpt_pfn_of(mm, addr);

	return pfn && !is_zero_pfn(pfn) ? pfn_to_page(pfn) : NULL;
}

struct folio *thpt_folio_of(struct mm_struct *mm, unsigned long addr)
{
	struct page *page = thpt_page_of(mm, addr);

	return page ? page_folio(page) : NULL;
}

/* The first frame of the folio at addr; 0 for none or the zero page. */
unsigned long thpt_head_pfn_of(struct mm_struct *mm, unsigned long addr)
{
	struct folio *folio = thpt_folio_of(mm, addr);

	return folio ? folio_pfn(folio) : 0;
}

bool thpt_exclusive_at(struct mm_struct *mm, unsigned long addr)
{
	struct page *page = thpt_page_of(mm, addr);

	return page && PageAnonExclusive(page);
}

/* The order of the folio at addr; -1 for none or the zero page. */
int thpt_order_of(struct mm_struct *mm, unsigned long addr)
{
	struct folio *folio = thpt_folio_of(mm, addr);

	return folio ? (int)folio_order(folio) : -1;
}

/* Where thpt_byte_of points when nothing is mapped: a failed check, not a crash. */
static volatile u8 nowhere;

/* The byte of the mapped page at addr, through the direct map. */
volatile u8 *thpt_byte_of(struct mm_struct *mm, unsigned long addr)
{
	struct page *page = thpt_page_of(mm, addr);

	if (!page) {
		nowhere = 0xff;	/* never a pattern byte the checks expect here */
		return &nowhere;
	}
	return (u8 *)page_address(page) + (addr & (PAGE_SIZE - 1));
}

void thpt_write_pattern(struct mm_struct *mm, unsigned long addr, unsigned long len, u8 salt)
{
	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE)
		*thpt_byte_of(mm, a + 0x10) = pattern(a, salt);
}

unsigned long thpt_pattern_mismatches(struct mm_struct *mm, unsigned long addr,
				      unsigned long len, u8 salt)
{
	unsigned long bad = 0;

	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE) {
		volatile u8 *b = thpt_byte_of(mm, a + 0x10);

		bad += b == &nowhere || *b != pattern(a, salt);
	}
	return bad;
}

/* ---- migration (the migrate and gup suites) ---- */

/* A node with memory other than nid, or NUMA_NO_NODE. */
int thpt_other_node(int nid)
{
	for (int n = 0; n < nr_node_ids; n++)
		if (n != nid && node_has_memory(n))
			return n;
	return NUMA_NO_NODE;
}

/* thpt_begin, and a target node other than the case's: skips the case on one node. */
int thpt_begin_two_nodes(struct ktest *t, struct thp_ctx *c)
{
	int target;

	thpt_begin(t, c);
	target = thpt_other_node(c->nid);
	if (target == NUMA_NO_NODE) {
		thpt_end(t, c);
		ktest_skip(t, "one node with memory");
	}
	return target;
}

/* Migrate the folio mapped at addr to nid with get (NULL: alloc_migration_target). */
int thpt_move_folio(struct mm_struct *mm, unsigned long addr, int nid, new_folio_t *get)
{
	struct migration_target_control mtc = { .nid = nid, .gfp_mask = __GFP_THISNODE };
	struct folio *folio = thpt_folio_of(mm, addr);
	LIST_HEAD(list);
	int ret;

	if (!folio || !isolate_folio_to_list(folio, &list))
		return -EBUSY;
	ret = migrate_pages(&list, get ? get : alloc_migration_target, NULL, (unsigned long)&mtc,
			    MIGRATE_SYNC, MR_SYSCALL, NULL);
	putback_movable_pages(&list);
	return ret;
}
