/*
 * Poisoned memory (include/quire/memory-failure.h, docs/mm/memory-failure.md),
 * Linux's memory_failure() cut to what Quire has: no swap, no writeback,
 * no hugetlb; and soft_offline_page(), which takes a frame out of service
 * without losing its data (migration moves the page to another frame).
 *
 * A frame is marked PG_hwpoison first; from then on nothing maps or
 * allocates it. Then, by what it is:
 *   free (in the buddy lists)  taken out of them for good: recovered;
 *   a user folio               a large one is split so that only this page
 *                              is lost (failed if it will not split); the
 *                              page is unmapped from every process, each PTE
 *                              replaced by a hwpoison entry (an access is
 *                              SIGBUS BUS_MCEERR_AR, fork copies it, munmap
 *                              drops it); a page-cache page stays in the
 *                              cache, so that reads of it are EIO (ramfs
 *                              cannot read it back: Linux's answer for a
 *                              dirty page): recovered;
 *   anything else              a kernel page: ignored (left as it is).
 * The caller that consumed the error (MF_ACTION_REQUIRED) gets SIGBUS
 * BUS_MCEERR_AR at once when it maps the page; other processes meet the
 * hwpoison entry when they touch it (Linux's default, late kill), or, if
 * they asked for early kill (prctl PR_MCE_KILL, vm.memory_failure_early_kill),
 * get SIGBUS BUS_MCEERR_AO at once (kernel/mce_kill.c). When the
 * last reference to the page goes, the allocator keeps it out of its
 * lists (mm/page_alloc.c, free_block_checked).
 *
 * Locking: one frame at a time (mf_mutex, as Linux's); the folio lock
 * around the split and the unmap; rmap_walk takes the rmap locks and the
 * walk each page-table lock. The queue is a spinlock'd array with
 * interrupts off, so that the #MC handler can add to it.
 */
#define pr_fmt(fmt) "memory_failure: " fmt
#include <quire/mmu_notifier.h>
#include <quire/memory-failure.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/swapops.h>
#include <quire/migrate.h>
#include <quire/signal.h>
#include <quire/sched.h>
#include <quire/mutex.h>
#include <quire/spinlock.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <asm/irqflags.h>
#include <asm/pgtable.h>

static DEFINE_MUTEX(mf_mutex);
static long poisoned;				/* frames marked now */
static bool hw_memory_failure;			/* a real error was seen: no unpoisoning */
static unsigned long mf_stats[MAX_NUMNODES][NR_MF_RESULTS];

static const char *const result_name[NR_MF_RESULTS] = {
	[MF_IGNORED] = "Ignored", [MF_FAILED] = "Failed",
	[MF_DELAYED] = "Delayed", [MF_RECOVERED] = "Recovered",
};

unsigned long num_poisoned_pages(void)
{
	return (unsigned long)__atomic_load_n(&poisoned, __ATOMIC_RELAXED);
}

unsigned long memory_failure_stat(int nid, enum mf_result r)
{
	return __atomic_load_n(&mf_stats[nid][r], __ATOMIC_RELAXED);
}

static int action_result(struct page *page, const char *what, enum mf_result r)
{
	__atomic_fetch_add(&mf_stats[page_to_nid(page)][r], 1, __ATOMIC_RELAXED);
	pr_err("%#lx: recovery action for %s: %s\n", page_to_pfn(page), what, result_name[r]);
	return r == MF_RECOVERED ? 0 : -EBUSY;
}

/*
 * Take a free frame off the buddy lists for good, and mark it (again: a
 * free that raced with the marking cleared every flag before the frame
 * reached the lists). false when it is not in them.
 */
static bool take_poisoned_off_buddy(struct page *page)
{
	if (!take_page_off_buddy(page))
		return false;
	SetPageHWPoison(page);
	return true;
}

/* ---- unmapping ---- */

#define MF_MAX_VICTIMS	16	/* address spaces told early; more are told late (logged) */

struct hwpoison_walk {
	struct page *page;
	int flags;
	unsigned long kill_addr;	/* where the caller maps it (MF_ACTION_REQUIRED); 0: nowhere */
	/* Other address spaces that mapped it, referenced, and where: for early kill. */
	struct { struct mm_struct *mm; unsigned long addr; } victims[MF_MAX_VICTIMS];
	unsigned int nr_victims;
	bool victims_dropped;
};

int sysctl_memory_failure_early_kill;

/* Remember mm (a reference taken) as one to tell early, once per address space. */
static void note_victim(struct hwpoison_walk *w, struct mm_struct *mm, unsigned long addr)
{
	for (unsigned int i = 0; i < w->nr_victims; i++)
		if (w->victims[i].mm == mm)
			return;
	if (w->nr_victims == MF_MAX_VICTIMS) {
		w->victims_dropped = true;
		return;
	}
	if (!atomic_add_unless(&mm->mm_users, 1, 0))
		return;			/* exiting: nobody to tell */
	w->victims[w->nr_victims].mm = mm;
	w->victims[w->nr_victims++].addr = addr;
}

/* After the unmap: SIGBUS BUS_MCEERR_AO to each early-kill process; the references go. */
static void kill_victims_early(struct hwpoison_walk *w)
{
	for (unsigned int i = 0; i < w->nr_victims; i++) {
		memory_failure_kill_early(w->victims[i].mm, w->victims[i].addr);
		mmput(w->victims[i].mm);
	}
	if (w->victims_dropped)
		pr_warn("%#lx: more than %d address spaces map it: the rest are told when they touch it\n",
			page_to_pfn(w->page), MF_MAX_VICTIMS);
}

/* rmap_walk callback: each PTE of vma mapping the page becomes a hwpoison entry. */
static bool unmap_hwpoison_one(struct folio *folio, struct vm_area_struct *vma,
			       unsigned long address, void *arg)
{
	struct hwpoison_walk *w = arg;
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };
	struct mm_struct *mm = vma->vm_mm;
	pte_t poison = swp_entry_to_pte(make_hwpoison_entry(page_to_pfn(w->page)));
	struct mmu_notifier_range range;

	mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, mm, max(address, vma->vm_start),
			   min(address + folio_size(folio), vma->vm_end));
	while (page_vma_mapped_walk(&pvmw)) {
		if (pvmw.pmd || pte_pfn(ptep_get(pvmw.pte)) != page_to_pfn(w->page))
			continue;	/* (split before: no PMD maps it) another page of the folio */
		ptep_get_and_clear(mm, pvmw.address, pvmw.pte);
		set_pte(pvmw.pte, poison);
		folio_remove_rmap_ptes(folio, w->page, 1, vma);
		atomic_long_dec(&mm->rss);
		flush_tlb_mm_range(mm, pvmw.address, pvmw.address + PAGE_SIZE);
		folio_put(folio);	/* the mapping's reference; ours keeps it alive */
		if ((w->flags & MF_ACTION_REQUIRED) && current && mm == current->mm) {
			if (!w->kill_addr)
				w->kill_addr = pvmw.address;
		} else {
			note_victim(w, mm, pvmw.address);
		}
	}
	mmu_notifier_invalidate_range_end(&range);
	return true;
}

/* Unmap the page (the folio locked, one reference ours) from every process. */
static bool hwpoison_user_mappings(struct folio *folio, struct hwpoison_walk *w)
{
	struct rmap_walk_control rwc = { .arg = w, .rmap_one = unmap_hwpoison_one };

	if (folio_mapped(folio))
		rmap_walk(folio, &rwc);
	return !folio_mapped(folio);
}

/* ---- the frame ---- */

static int handle_user_folio(struct page *page, struct folio *folio, int flags)
{
	struct hwpoison_walk w = { .page = page, .flags = flags };
	bool anon = folio_test_anon(folio), unmapped;
	int ret;

	folio_lock(folio);
	if (folio_test_large(folio)) {
		/* Only this page is lost: split the folio (anonymous only, as Quire splits). */
		int err = anon ? split_folio(folio) : -EINVAL;

		/*
		 * -EAGAIN: a passing reference, such as a migration that failed on
		 * this very page and is still giving the folio back (the mce-migrate
		 * job): wait for it to go, 100 ms at most. Split by someone else
		 * meanwhile: done.
		 */
		for (int tries = 0; err == -EAGAIN && tries < 50; tries++) {
			folio_unlock(folio);
			msleep(2);
			folio_lock(folio);
			err = folio_test_large(folio) ? split_folio(folio) : 0;
		}
		if (err) {
			folio_unlock(folio);
			folio_put(folio);
			return action_result(page, "large folio that did not split", MF_FAILED);
		}
		/* Our lock and reference stayed with the first page's folio. */
		folio_unlock(folio);
		folio_put(folio);
		folio = page_folio(page);
		if (!folio_try_get(folio))	/* freed by the split (unmapped): kept out */
			return action_result(page, "free page after a split", MF_RECOVERED);
		folio_lock(folio);
	}
	unmapped = hwpoison_user_mappings(folio, &w);
	folio_unlock(folio);
	folio_put(folio);	/* anonymous: the last one; the allocator keeps the page out */
	ret = action_result(page, anon ? "anonymous page" : "page-cache page",
			    unmapped ? MF_RECOVERED : MF_FAILED);
	if (w.kill_addr)
		force_sig_mceerr(BUS_MCEERR_AR, w.kill_addr, PAGE_SHIFT,
				 "memory error in a page it maps (BUS_MCEERR_AR)");
	kill_victims_early(&w);
	return ret;
}

/* ---- a frame poisoned already ---- */

/* Where current's address space maps (or held, now a hwpoison entry) the frame. */
struct accessing_walk {
	struct mmu_walk walk;
	unsigned long pfn;
	unsigned long addr;	/* 0: nowhere */
};

static void accessing_pte(struct mmu_walk *walk, unsigned long addr, pte_t pte)
{
	struct accessing_walk *a = container_of(walk, struct accessing_walk, walk);
	unsigned long pfn = 0;

	if (pte_present(pte))
		pfn = pte_pfn(pte);
	else if (is_swap_pte(pte) && is_hwpoison_entry(pte_to_swp_entry(pte)))
		pfn = pte_to_swp_entry(pte).offset;
	if (pfn == a->pfn && !a->addr)
		a->addr = addr;
}

static void accessing_pmd(struct mmu_walk *walk, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct accessing_walk *a = container_of(walk, struct accessing_walk, walk);
	unsigned long first = pmd_pfn(pmd) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);

	if (!a->addr && a->pfn >= first && a->pfn < first + ((end - addr) >> PAGE_SHIFT))
		a->addr = addr + ((a->pfn - first) << PAGE_SHIFT);
}

/*
 * A frame poisoned already, met again by an access that needs it (a second
 * machine check on it, MADV_HWPOISON of a page whose first memory_failure()
 * could not unmap it): as Linux's kill_accessing_process, find where the
 * caller maps the frame, or held it before a hwpoison entry replaced it,
 * and send SIGBUS BUS_MCEERR_AR there at once instead of letting the access
 * run again. -EHWPOISON when a signal went, 0 when the caller does not map
 * it, -EFAULT for a caller without an address space (a kernel thread).
 */
static int kill_accessing_process(unsigned long pfn)
{
	struct accessing_walk a = {
		.walk = { .pte = accessing_pte, .pmd = accessing_pmd }, .pfn = pfn,
	};
	struct mm_struct *mm = current ? current->mm : NULL;
	struct vm_area_struct *v;

	if (!mm)
		return -EFAULT;
	down_read(&mm->mmap_lock);
	list_for_each_entry(v, &mm->vmas, vm_list) {
		walk_range(mm, v->vm_start, v->vm_end, &a.walk);
		if (a.addr)
			break;
	}
	up_read(&mm->mmap_lock);
	if (!a.addr)
		return 0;
	force_sig_mceerr(BUS_MCEERR_AR, a.addr, PAGE_SHIFT,
			 "memory error in a page poisoned already (BUS_MCEERR_AR)");
	return -EHWPOISON;
}

/*
 * Linux's answer for a frame marked already: logged as a failed recovery
 * of an "already poisoned page", not counted again (neither in the node's
 * counters nor in HardwareCorrupted), nothing unmapped twice; -EHWPOISON,
 * or what kill_accessing_process() says for an access that needs the page.
 */
static int already_poisoned(struct page *page, int flags)
{
	int ret = -EHWPOISON;

	if (flags & MF_ACTION_REQUIRED)
		ret = kill_accessing_process(page_to_pfn(page));
	pr_err("%#lx: recovery action for already poisoned page: %s\n", page_to_pfn(page),
	       result_name[MF_FAILED]);
	return ret;
}

/*
 * The frame memory_failure() is working on (MF_NO_PFN: none): marked
 * PG_hwpoison but maybe still mapped until the unmap reaches each PTE.
 * mm_verify (an exiting mm's, say) accepts that one mapped poisoned page.
 */
#define MF_NO_PFN	(~0UL)
static unsigned long mf_busy_pfn = MF_NO_PFN;

bool memory_failure_busy(unsigned long pfn)
{
	return __atomic_load_n(&mf_busy_pfn, __ATOMIC_ACQUIRE) == pfn;
}

static int __memory_failure(unsigned long pfn, struct page *page, int flags);

int memory_failure(unsigned long pfn, int flags)
{
	int ret;

	if (!pfn_valid(pfn)) {
		pr_err("%#lx: no memory frame there\n", pfn);
		return -ENXIO;
	}
	if (is_huge_zero_pfn(pfn)) {
		/* Linux cannot split it either ("unsplit thp", ignored): left as it is. */
		pr_err("%#lx: the huge zero page: not handled (-EBUSY)\n", pfn);
		return -EBUSY;
	}
	mutex_lock(&mf_mutex);
	__atomic_store_n(&mf_busy_pfn, pfn, __ATOMIC_RELEASE);	/* before the mark */
	ret = __memory_failure(pfn, pfn_to_page(pfn), flags);
	__atomic_store_n(&mf_busy_pfn, MF_NO_PFN, __ATOMIC_RELEASE);
	mutex_unlock(&mf_mutex);
	return ret;
}

/* memory_failure() for a valid frame, mf_mutex held. */
static int __memory_failure(unsigned long pfn, struct page *page, int flags)
{
	struct folio *folio;
	int ret;

	if (PageHWPoison(page)) {
		ret = already_poisoned(page, flags);
		goto out;
	}
	SetPageHWPoison(page);
	__atomic_fetch_add(&poisoned, 1, __ATOMIC_RELAXED);
	if (!(flags & MF_SW_SIMULATED))
		WRITE_ONCE(hw_memory_failure, true);
	if (PageReserved(page) || PageSlab(page)) {
		ret = action_result(page, "reserved or slab kernel page", MF_IGNORED);
		goto out;
	}
	if (take_poisoned_off_buddy(page)) {
		ret = action_result(page, "free buddy page", MF_RECOVERED);
		goto out;
	}
	folio = page_folio(page);
	if (!folio_try_get(folio)) {
		/* Freed just now: the allocator kept it out, or it is in the lists. */
		ret = action_result(page, "free page", take_poisoned_off_buddy(page) ||
				    !page_count(page) ? MF_RECOVERED : MF_FAILED);
		goto out;
	}
	if (!folio_test_anon(folio) && !folio->mapping) {
		folio_put(folio);
		ret = action_result(page, "kernel page", MF_IGNORED);
		goto out;
	}
	ret = handle_user_folio(page, folio, flags);
out:
	return ret;
}

/* ---- soft offline ---- */

/* The page's folio, referenced, split down to the page (anonymous only, as memory_failure). */
static struct folio *soft_offline_split(struct page *page, struct folio *folio)
{
	folio_lock(folio);
	if (!folio_test_anon(folio) || split_folio(folio)) {
		folio_unlock(folio);
		folio_put(folio);
		pr_info("Soft offline: %#lx: thp split failed\n", page_to_pfn(page));
		return NULL;
	}
	/* Our lock and reference stayed with the first page's folio. */
	folio_unlock(folio);
	folio_put(folio);
	folio = page_folio(page);
	return folio_try_get(folio) ? folio : NULL;
}

/* An in-use user page: to another frame by migration; the old one is poisoned as it goes. */
static int soft_offline_in_use(struct page *page, struct folio *folio)
{
	struct migration_target_control mtc = { .nid = NUMA_NO_NODE };
	unsigned long pfn = page_to_pfn(page);
	LIST_HEAD(list);
	bool isolated;
	int ret;

	if (folio_test_large(folio)) {
		folio = soft_offline_split(page, folio);
		if (!folio)	/* split failed, or the page was freed by the split */
			return take_poisoned_off_buddy(page) ? 0 : -EBUSY;
	}
	/* The isolation holds its own reference: ours would make the move fail. */
	isolated = isolate_folio_to_list(folio, &list);
	folio_put(folio);
	if (!isolated) {
		pr_info("Soft offline: %#lx: page isolation failed, page count %d\n", pfn,
			page_count(page));
		return -EBUSY;
	}
	ret = migrate_pages(&list, alloc_migration_target, NULL, (unsigned long)&mtc,
			    MIGRATE_SYNC, MR_MEMORY_FAILURE, NULL);
	if (ret) {
		putback_movable_pages(&list);
		pr_info("Soft offline: %#lx: page migration failed %d\n", pfn, ret);
		return -EBUSY;
	}
	return 0;
}

int soft_offline_page(unsigned long pfn, int flags)
{
	struct folio *folio;
	struct page *page;
	int ret = 0;

	if (!pfn_valid(pfn))
		return -ENXIO;
	if (is_huge_zero_pfn(pfn)) {
		pr_info("Soft offline: %#lx: the huge zero page: not migrated (-EBUSY)\n", pfn);
		return -EBUSY;
	}
	page = pfn_to_page(pfn);
	mutex_lock(&mf_mutex);
	if (PageHWPoison(page)) {
		pr_info("Soft offline: %#lx: page already poisoned\n", pfn);
		goto out;
	}
	folio = page_folio(page);
	if (PageReserved(page) || PageSlab(page)) {
		ret = -EIO;
	} else if (folio_try_get(folio)) {
		if (folio_test_anon(folio) || folio->mapping)
			ret = soft_offline_in_use(page, folio);
		else {
			folio_put(folio);
			ret = -EIO;		/* a kernel page: Linux's "unhandlable page" */
		}
	} else {
		/* Free: out of the buddy lists, poisoned (the allocator keeps one in flight out). */
		SetPageHWPoison(page);
		if (!take_poisoned_off_buddy(page) && page_count(page)) {
			ClearPageHWPoison(page);	/* allocated meanwhile: not ours to poison */
			ret = -EBUSY;
		}
	}
	if (ret == -EIO)
		pr_info("Soft offline: %#lx: unhandlable page\n", pfn);
	if (!ret)
		__atomic_fetch_add(&poisoned, 1, __ATOMIC_RELAXED);
out:
	mutex_unlock(&mf_mutex);
	return ret;
}

/* ---- unpoison ---- */

static DEFINE_MUTEX(unpoison_mutex);

struct entry_search {
	struct mmu_walk walk;
	unsigned long pfn;
	bool found;
};

static void search_pte(struct mmu_walk *w, unsigned long addr, pte_t pte)
{
	struct entry_search *s = container_of(w, struct entry_search, walk);

	if (is_swap_pte(pte) && is_hwpoison_entry(pte_to_swp_entry(pte)) &&
	    swp_offset_pfn(pte_to_swp_entry(pte)) == s->pfn)
		s->found = true;
}

static void search_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	/* A 2 MiB mapping is never a hwpoison entry (memory_failure splits first). */
}

/*
 * Whether a hwpoison entry in any page table names pfn, with every mm held
 * for writing under mm_list_lock, as mm_verify_system does (its lock order:
 * mm_list_lock, then each mmap_lock; nobody else holds two). While pfn
 * stays poisoned no new entry can name it (only memory_failure() makes
 * them, for a frame it has just marked; fork and mremap copy or move
 * existing ones), so a search that finds none stays true.
 */
static bool hwpoison_entries_name(unsigned long pfn)
{
	struct entry_search s = { .walk = { .pte = search_pte, .pmd = search_pmd }, .pfn = pfn };
	struct vm_area_struct *vma;
	struct mm_struct *mm;

	mutex_lock(&mm_list_lock);
	list_for_each_entry(mm, &mm_list, mm_list)
		down_write(&mm->mmap_lock);
	list_for_each_entry(mm, &mm_list, mm_list)
		list_for_each_entry(vma, &mm->vmas, vm_list)
			if (!s.found)
				walk_range(mm, vma->vm_start, vma->vm_end, &s.walk);
	list_for_each_entry(mm, &mm_list, mm_list)
		up_write(&mm->mmap_lock);
	mutex_unlock(&mm_list_lock);
	return s.found;
}

int unpoison_memory(unsigned long pfn)
{
	struct page *page;
	int ret = -EBUSY;

	if (!pfn_valid(pfn))
		return -ENXIO;
	page = pfn_to_page(pfn);
	mutex_lock(&unpoison_mutex);	/* one at a time: the frame stays poisoned while searched */
	if (READ_ONCE(hw_memory_failure)) {
		pr_info("Unpoison: %#lx: disabled after HW memory failure\n", pfn);
		ret = -EOPNOTSUPP;
	} else if (!PageHWPoison(page)) {
		pr_info("Unpoison: %#lx: page was already unpoisoned\n", pfn);
	} else if (hwpoison_entries_name(pfn)) {
		pr_info("Unpoison: %#lx: a hwpoison entry still names it (unmap it first)\n", pfn);
	} else {
		mutex_lock(&mf_mutex);
		/* Only a frame nobody holds: not a page-cache page, not a kernel page. */
		if (PageHWPoison(page) && put_page_back_buddy(page)) {
			__atomic_fetch_sub(&poisoned, 1, __ATOMIC_RELAXED);
			pr_info("Unpoison: Software-unpoisoned page %#lx\n", pfn);
			ret = 0;
		} else {
			pr_info("Unpoison: %#lx: someone holds the hwpoison page\n", pfn);
		}
		mutex_unlock(&mf_mutex);
	}
	mutex_unlock(&unpoison_mutex);
	return ret;
}

/* ---- the queue ---- */

#define MF_QUEUE_LEN	64
#define MF_HISTORY_LEN	64

static DEFINE_SPINLOCK(mf_lock);
static struct { unsigned long pfn; int flags; } mf_queue[MF_QUEUE_LEN];
static unsigned int mf_queued;			/* entries waiting */
static unsigned long mf_history[MF_HISTORY_LEN];	/* every pfn queued, for tests */
static unsigned int mf_history_len;
void (*memory_failure_kick)(void);

void memory_failure_queue(unsigned long pfn, int flags)
{
	unsigned long irqflags = arch_local_irq_save();
	void (*kick)(void);
	bool full;

	spin_lock(&mf_lock);
	full = mf_queued == MF_QUEUE_LEN;
	if (!full)
		mf_queue[mf_queued++] = (typeof(mf_queue[0])){ pfn, flags };
	if (mf_history_len < MF_HISTORY_LEN)
		mf_history[mf_history_len++] = pfn;
	spin_unlock(&mf_lock);
	arch_local_irq_restore(irqflags);
	if (full)
		pr_err("queue full: pfn %#lx not handled\n", pfn);
	kick = __atomic_load_n(&memory_failure_kick, __ATOMIC_ACQUIRE);
	if (kick)
		kick();
}

void memory_failure_process_queue(void)
{
	for (;;) {
		unsigned long irqflags = arch_local_irq_save(), pfn;
		int flags;
		bool any;

		spin_lock(&mf_lock);
		any = mf_queued > 0;
		if (any) {
			pfn = mf_queue[0].pfn;
			flags = mf_queue[0].flags;
			for (unsigned int i = 1; i < mf_queued; i++)
				mf_queue[i - 1] = mf_queue[i];
			mf_queued--;
		}
		spin_unlock(&mf_lock);
		arch_local_irq_restore(irqflags);
		if (!any)
			return;
		/* Not the consumer's context any more: its SIGBUS was sent where it happened. */
		memory_failure(pfn, flags & ~MF_ACTION_REQUIRED);
	}
}

unsigned long memory_failure_queued(unsigned long pfn)
{
	unsigned long irqflags = arch_local_irq_save(), n = 0;

	spin_lock(&mf_lock);
	for (unsigned int i = 0; i < mf_history_len; i++)
		n += mf_history[i] == pfn;
	spin_unlock(&mf_lock);
	arch_local_irq_restore(irqflags);
	return n;
}
