/*
 * /proc/<pid>/pagemap and /proc/<pid>/smaps (include/quire/task_mmu.h,
 * docs/procfs.md): what an address space maps, read from its page tables
 * in Linux's formats; the memory lines of /proc/<pid>/status; and
 * /proc/kpageflags, the flags of every page frame.
 *
 * Both walk the VMAs under mmap_lock (read) and each 2 MiB block of a VMA
 * under the page-table lock (walk_range, mm/pagewalk.c): a PMD leaf is one
 * PMD-mapped folio, anything else is a page table of 512 PTEs. The shared zero page is what Linux
 * calls a special page (the rmap does not count it): pagemap reports it
 * present with its PFN and nothing more, and smaps leaves it out of Rss,
 * as Linux does.
 *
 * PROT_NONE pages keep their frame and count as present, as on Linux (x86's
 * pte_present is true for them). Non-present entries read as not mapped:
 * there is no swap, and migration entries are not reported yet.
 */
#include <quire/task_mmu.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/mm_internal.h>
#include <quire/huge_mm.h>
#include <quire/numa.h>
#include <quire/mempolicy.h>
#include <quire/pte.h>
#include <quire/fs.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <asm/page.h>

/* ---- pagemap ---- */

struct pagemap_walk {
	struct mmu_walk w;
	unsigned long start;	/* the address of out[0] */
	u64 *out;
};

static u64 pagemap_entry(unsigned long pfn, bool soft_dirty)
{
	u64 e = PM_PRESENT | ((u64)pfn & PM_PFRAME_MASK) | (soft_dirty ? PM_SOFT_DIRTY : 0);
	struct page *page;
	struct folio *folio = normal_folio(pfn, &page);

	if (!folio)
		return e;
	if (!folio_test_anon(folio))
		e |= PM_FILE;
	/* Per page, as Linux: this page's PTEs plus the folio's PMDs, not the folio's state. */
	if (page_mapcount(page) == 1)
		e |= PM_MMAP_EXCLUSIVE;
	return e;
}

static void pagemap_pte(struct mmu_walk *w, unsigned long addr, pte_t pte)
{
	struct pagemap_walk *pw = container_of(w, struct pagemap_walk, w);

	if (pte_has_page(pte)) {
		pw->out[(addr - pw->start) >> PAGE_SHIFT] =
			pagemap_entry(pte_pfn(pte), pte_soft_dirty(pte));
	} else if (is_swap_pte(pte)) {
		swp_entry_t e = pte_to_swp_entry(pte);

		/* Linux's layout: the type in bits 0-4, the offset (the frame, for Quire's kinds) above. */
		pw->out[(addr - pw->start) >> PAGE_SHIFT] =
			PM_SWAP | ((e.type | (u64)swp_offset_pfn(e) << 5) & PM_PFRAME_MASK) |
			(pte_swp_soft_dirty(pte) ? PM_SOFT_DIRTY : 0);
	}
}

static void pagemap_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct pagemap_walk *pw = container_of(w, struct pagemap_walk, w);

	for (; addr < end; addr += PAGE_SIZE) {
		unsigned long pfn = pmd_pfn(pmd) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);

		pw->out[(addr - pw->start) >> PAGE_SHIFT] = pagemap_entry(pfn, pmd_soft_dirty(pmd)) |
			(is_huge_zero_pmd(pmd) ? PM_FILE : 0);	/* Linux: a page, not anonymous */
	}
}

ssize_t pagemap_read(struct mm_struct *mm, void *kbuf, size_t count, loff_t pos)
{
	struct pagemap_walk pw = {
		.w = { .pte = pagemap_pte, .pmd = pagemap_pmd },
		.out = kbuf,
	};
	unsigned long start, end, nr;
	struct vm_area_struct *v;

	if (pos < 0 || pos % PM_ENTRY_BYTES || count % PM_ENTRY_BYTES)
		return -EINVAL;
	if (!count || (u64)pos / PM_ENTRY_BYTES >= USER_TOP >> PAGE_SHIFT)
		return 0;
	start = (unsigned long)(pos / PM_ENTRY_BYTES) << PAGE_SHIFT;
	nr = min(count / PM_ENTRY_BYTES, (USER_TOP - start) >> PAGE_SHIFT);
	end = start + (nr << PAGE_SHIFT);
	pw.start = start;
	memset(kbuf, 0, nr * PM_ENTRY_BYTES);
	down_read(&mm->mmap_lock);
	/* From the first VMA ending after start (found in O(log n)), in address order. */
	for (v = find_vma(mm, start); v && v->vm_start < end;
	     v = v->vm_list.next == &mm->vmas ? NULL :
		 list_entry(v->vm_list.next, struct vm_area_struct, vm_list)) {
		unsigned long from = max(v->vm_start, start), to = min(v->vm_end, end);

		walk_range(mm, from, to, &pw.w);
		/* A VM_SOFTDIRTY VMA is soft-dirty all over, holes included (as Linux). */
		for (unsigned long a = from; a < to && (v->vm_flags & VM_SOFTDIRTY); a += PAGE_SIZE)
			pw.out[(a - start) >> PAGE_SHIFT] |= PM_SOFT_DIRTY;
	}
	up_read(&mm->mmap_lock);
	return (ssize_t)(nr * PM_ENTRY_BYTES);
}

/* ---- smaps ---- */

#define PSS_SHIFT	12	/* Pss is summed in 1/4096ths of a byte, as Linux does */

struct smaps_walk {
	struct mmu_walk w;
	unsigned long resident, anonymous, anon_thp, referenced;
	unsigned long shared_clean, shared_dirty, private_clean, private_dirty;
	u64 pss;
};

/*
 * One page of a mapped folio: private or shared by its own mapcount. A
 * page behind a migration entry (not present) counts as shared, whole in
 * Pss, as Linux's smaps_account: its mapcount says nothing meanwhile.
 */
static void account_page(struct smaps_walk *s, struct page *page, bool dirty, bool present)
{
	int mapcount = present ? page_mapcount(page) : 1;
	u64 pss = (u64)PAGE_SIZE << PSS_SHIFT;

	if (mapcount >= 2 || !present) {
		pss /= (u64)mapcount;
		if (dirty)
			s->shared_dirty += PAGE_SIZE;
		else
			s->shared_clean += PAGE_SIZE;
	} else if (dirty) {
		s->private_dirty += PAGE_SIZE;
	} else {
		s->private_clean += PAGE_SIZE;
	}
	s->pss += pss;
}

/* nr pages from page on, mapped by one entry (a PTE: 1, a PMD: 512). */
static void smaps_account(struct smaps_walk *s, struct folio *folio, struct page *page,
			  unsigned long nr, pte_t entry, bool pmd, bool present)
{
	unsigned long size = nr << PAGE_SHIFT;
	const struct page *head = (const struct page *)folio;
	bool dirty = pte_dirty(entry) || test_page_flag(head, PG_dirty);

	s->resident += size;
	if (folio_test_anon(folio)) {
		s->anonymous += size;
		if (pmd)
			s->anon_thp += size;
	}
	if (pte_young(entry) || test_page_flag(head, PG_referenced))
		s->referenced += size;
	for (unsigned long i = 0; i < nr; i++)
		account_page(s, page + i, dirty, present);
}

static void smaps_pte(struct mmu_walk *w, unsigned long addr, pte_t pte)
{
	struct smaps_walk *s = container_of(w, struct smaps_walk, w);
	struct page *page;
	struct folio *folio = pte_normal_folio(pte, &page);

	if (folio) {
		smaps_account(s, folio, page, 1, pte, false, true);
	} else if (is_migration_pte(pte)) {
		/* Counted as Linux does (its young and dirty bits read as clear). */
		page = pfn_to_page(swp_offset_pfn(pte_to_swp_entry(pte)));
		smaps_account(s, page_folio(page), page, 1, pte, false, false);
	}
}

static void smaps_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct smaps_walk *s = container_of(w, struct smaps_walk, w);
	unsigned long first = (addr & (PMD_SIZE - 1)) >> PAGE_SHIFT;
	struct folio *folio;
	struct page *page;

	folio = normal_folio(pmd_pfn(pmd) + first, &page);
	if (folio)
		smaps_account(s, folio, page, (end - addr) >> PAGE_SHIFT, pmd, true, true);
}

/* A THP being migrated: its pages, as Linux's smaps_pmd_entry counts them (AnonHugePages too). */
static void smaps_swap_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct smaps_walk *s = container_of(w, struct smaps_walk, w);
	struct page *page;

	if (!is_pmd_migration_entry(pmd))
		return;
	page = pfn_to_page(swp_offset_pfn(pmd_to_swp_entry(pmd))) +
	       ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);
	smaps_account(s, page_folio(page), page, (end - addr) >> PAGE_SHIFT, 0, true, false);
}

/* Linux's two-letter VmFlags names, for the flags Quire has, in bit order. */
static const struct {
	unsigned long flag;
	char name[3];
} vm_flag_names[] = {
	{ VM_READ, "rd" }, { VM_WRITE, "wr" }, { VM_EXEC, "ex" }, { VM_SHARED, "sh" },
	{ VM_GROWSDOWN, "gd" }, { VM_DONTCOPY, "dc" }, { VM_SOFTDIRTY, "sd" }, { VM_HUGEPAGE, "hg" },
	{ VM_NOHUGEPAGE, "nh" },
};

/* Linux's vma_is_initial_heap and vma_is_initial_stack (as Quire has always drawn them). */
static bool vma_is_initial_heap(struct mm_struct *mm, struct vm_area_struct *v)
{
	return mm->start_brk && v->vm_start <= mm->brk && v->vm_end >= mm->start_brk;
}

static bool vma_is_initial_stack(struct mm_struct *mm, struct vm_area_struct *v)
{
	return v->vm_start <= mm->start_stack && v->vm_end >= mm->start_stack;
}

static const char *vma_name(struct mm_struct *mm, struct vm_area_struct *v)
{
	if (v->vm_file)
		return NULL;	/* no path names for inodes yet (no dentries) */
	if (vma_is_initial_heap(mm, v))
		return "[heap]";
	if (vma_is_initial_stack(mm, v))
		return "[stack]";
	return NULL;
}

#define HEADER_WIDTH	72	/* Linux pads the header to 25 + 6 * sizeof(void *) - 1 */

/* "start-end perms offset dev inode [name]", as /proc/<pid>/maps prints it. */
static int show_header(char *buf, size_t size, struct mm_struct *mm, struct vm_area_struct *v,
		       const void *unused)
{
	unsigned long f = v->vm_flags, ino = 0;
	unsigned long long off = 0;
	const char *name = vma_name(mm, v);
	unsigned int major = 0, minor = 0;
	int len;

	if (v->vm_file) {
		struct inode *inode = file_inode(v->vm_file);

		off = (unsigned long long)v->vm_pgoff << PAGE_SHIFT;
		ino = inode->i_ino;
		major = MAJOR(inode_dev(inode));	/* the file's tree: 0:1 for the root's ramfs */
		minor = MINOR(inode_dev(inode));
	}
	len = scnprintf(buf, size, "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu ",
			v->vm_start, v->vm_end, f & VM_READ ? 'r' : '-', f & VM_WRITE ? 'w' : '-',
			f & VM_EXEC ? 'x' : '-', f & VM_SHARED ? 's' : 'p', off, major, minor, ino);
	if (name)
		len += scnprintf(buf + len, size - len, "%*s %s",
				 len < HEADER_WIDTH ? HEADER_WIDTH - len : 0, "", name);
	len += scnprintf(buf + len, size - len, "\n");
	return len;
}

static int show_kb(char *buf, size_t size, const char *name, unsigned long bytes)
{
	return scnprintf(buf, size, "%-16s%8lu kB\n", name, bytes >> 10);
}

static int show_vma(char *buf, size_t size, struct mm_struct *mm, struct vm_area_struct *v,
		    const void *unused)
{
	struct smaps_walk s = { .w = { .pte = smaps_pte, .pmd = smaps_pmd, .swap_pmd = smaps_swap_pmd } };
	bool thp = thp_vma_smaps_eligible(v);
	int len;

	walk_range(mm, v->vm_start, v->vm_end, &s.w);
	len = show_header(buf, size, mm, v, NULL);
	len += show_kb(buf + len, size - len, "Size:", v->vm_end - v->vm_start);
	len += show_kb(buf + len, size - len, "KernelPageSize:", PAGE_SIZE);
	len += show_kb(buf + len, size - len, "MMUPageSize:", PAGE_SIZE);
	len += show_kb(buf + len, size - len, "Rss:", s.resident);
	len += show_kb(buf + len, size - len, "Pss:", (unsigned long)(s.pss >> PSS_SHIFT));
	len += show_kb(buf + len, size - len, "Shared_Clean:", s.shared_clean);
	len += show_kb(buf + len, size - len, "Shared_Dirty:", s.shared_dirty);
	len += show_kb(buf + len, size - len, "Private_Clean:", s.private_clean);
	len += show_kb(buf + len, size - len, "Private_Dirty:", s.private_dirty);
	len += show_kb(buf + len, size - len, "Referenced:", s.referenced);
	len += show_kb(buf + len, size - len, "Anonymous:", s.anonymous);
	len += show_kb(buf + len, size - len, "AnonHugePages:", s.anon_thp);
	len += scnprintf(buf + len, size - len, "%-16s%8u\n", "THPeligible:", thp ? 1u : 0u);
	len += scnprintf(buf + len, size - len, "VmFlags: ");
	for (size_t i = 0; i < ARRAY_SIZE(vm_flag_names); i++)
		if (v->vm_flags & vm_flag_names[i].flag)
			len += scnprintf(buf + len, size - len, "%s ", vm_flag_names[i].name);
	len += scnprintf(buf + len, size - len, "\n");
	return len;
}

/* Each VMA's text from show into buf, under mmap_lock (read); cut when buf is full. */
static ssize_t show_vmas(struct mm_struct *mm, char *buf, size_t size,
			 int (*show)(char *, size_t, struct mm_struct *, struct vm_area_struct *,
				     const void *arg), const void *arg)
{
	struct vm_area_struct *v;
	size_t len = 0;

	if (!size)
		return 0;
	buf[0] = '\0';
	down_read(&mm->mmap_lock);
	list_for_each_entry(v, &mm->vmas, vm_list) {
		len += show(buf + len, size - len, mm, v, arg);
		if (len + 1 >= size)
			break;		/* cut: the caller asks again with more room */
	}
	up_read(&mm->mmap_lock);
	return (ssize_t)len;
}

ssize_t maps_show(struct mm_struct *mm, char *buf, size_t size)
{
	return show_vmas(mm, buf, size, show_header, NULL);
}

ssize_t smaps_show(struct mm_struct *mm, char *buf, size_t size)
{
	return show_vmas(mm, buf, size, show_vma, NULL);
}

/* ---- numa_maps ---- */

/* Linux's struct numa_maps, for what Quire has (no LRU, swap or writeback). */
struct numa_maps_walk {
	struct mmu_walk w;
	unsigned long pages, anon, dirty, mapcount_max;
	unsigned long node[MAX_NUMNODES];
};

/* Linux's gather_stats: nr pages from page on, mapped by one entry; page's mapcount stands for them. */
static void numa_gather(struct numa_maps_walk *md, struct folio *folio, struct page *page,
			unsigned long nr, pte_t entry)
{
	unsigned long count = (unsigned long)page_mapcount(page);

	md->pages += nr;
	if (pte_dirty(entry) || test_page_flag((const struct page *)folio, PG_dirty))
		md->dirty += nr;
	if (folio_test_anon(folio))
		md->anon += nr;
	md->mapcount_max = max(md->mapcount_max, count);
	md->node[folio_nid(folio)] += nr;
}

static void numa_maps_pte(struct mmu_walk *w, unsigned long addr, pte_t pte)
{
	struct numa_maps_walk *md = container_of(w, struct numa_maps_walk, w);
	struct page *page;
	struct folio *folio = pte_normal_folio(pte, &page);

	if (folio)
		numa_gather(md, folio, page, 1, pte);
}

static void numa_maps_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct numa_maps_walk *md = container_of(w, struct numa_maps_walk, w);
	struct folio *folio;
	struct page *page;

	folio = normal_folio(pmd_pfn(pmd) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT), &page);
	if (folio)
		numa_gather(md, folio, page, (end - addr) >> PAGE_SHIFT, pmd);
}

/*
 * Linux's show_numa_map: "start policy [heap|stack] anon= dirty= mapped=
 * mapmax= N<node>= kernelpagesize_kB=", the counts only where not zero
 * (mapped only when it says more than anon or dirty), nothing after the
 * policy for a VMA with no page present.
 */
static int show_numa_map(char *buf, size_t size, struct mm_struct *mm, struct vm_area_struct *v,
			 const void *task_pol)
{
	struct numa_maps_walk md = { .w = { .pte = numa_maps_pte, .pmd = numa_maps_pmd } };
	int len = scnprintf(buf, size, "%08lx ", v->vm_start);

	/* A VMA without a policy shows the task's (Linux: the /proc/<pid> task's) */
	len += mpol_to_str(buf + len, size - len, v->vm_policy.mode != MPOL_DEFAULT ?
			   &v->vm_policy : (const struct mempolicy *)task_pol);
	if (!v->vm_file && vma_is_initial_heap(mm, v))
		len += scnprintf(buf + len, size - len, " heap");
	else if (!v->vm_file && vma_is_initial_stack(mm, v))
		len += scnprintf(buf + len, size - len, " stack");
	walk_range(mm, v->vm_start, v->vm_end, &md.w);
	if (md.pages) {
		if (md.anon)
			len += scnprintf(buf + len, size - len, " anon=%lu", md.anon);
		if (md.dirty)
			len += scnprintf(buf + len, size - len, " dirty=%lu", md.dirty);
		if (md.pages != md.anon && md.pages != md.dirty)
			len += scnprintf(buf + len, size - len, " mapped=%lu", md.pages);
		if (md.mapcount_max > 1)
			len += scnprintf(buf + len, size - len, " mapmax=%lu", md.mapcount_max);
		for (int nid = 0; nid < MAX_NUMNODES; nid++)
			if (md.node[nid])
				len += scnprintf(buf + len, size - len, " N%d=%lu", nid, md.node[nid]);
		len += scnprintf(buf + len, size - len, " kernelpagesize_kB=%lu", PAGE_SIZE >> 10);
	}
	return len + scnprintf(buf + len, size - len, "\n");
}

ssize_t numa_maps_show(struct mm_struct *mm, const struct mempolicy *task_pol, char *buf,
		       size_t size)
{
	return show_vmas(mm, buf, size, show_numa_map, task_pol);
}

/* ---- /proc/<pid>/status's memory lines ---- */

void task_mem_counts(struct mm_struct *mm, struct task_mem *tm)
{
	struct smaps_walk s = { .w = { .pte = smaps_pte, .pmd = smaps_pmd, .swap_pmd = smaps_swap_pmd } };
	struct vm_area_struct *v;

	*tm = (struct task_mem){ 0 };
	down_read(&mm->mmap_lock);
	list_for_each_entry(v, &mm->vmas, vm_list) {
		unsigned long size = v->vm_end - v->vm_start;

		tm->size += size;
		/* Linux's is_stack_mapping and is_data_mapping. */
		if (v->vm_flags & VM_STACK)
			tm->stack += size;
		else if ((v->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
			tm->data += size;
		walk_range(mm, v->vm_start, v->vm_end, &s.w);
	}
	up_read(&mm->mmap_lock);
	tm->rss_anon = s.anonymous;
	tm->rss_file = s.resident - s.anonymous;
}

/* ---- /proc/kpageflags ---- */

/* Linux's KPF_* bit numbers (include/uapi/linux/kernel-page-flags.h). */
enum {
	KPF_LOCKED = 0, KPF_REFERENCED = 2, KPF_UPTODATE = 3, KPF_DIRTY = 4, KPF_LRU = 5,
	KPF_SLAB = 7, KPF_BUDDY = 10, KPF_MMAP = 11, KPF_ANON = 12, KPF_SWAPBACKED = 14,
	KPF_COMPOUND_HEAD = 15, KPF_COMPOUND_TAIL = 16, KPF_HWPOISON = 19, KPF_NOPAGE = 20,
	KPF_THP = 22, KPF_ZERO_PAGE = 24,
};

/*
 * A frame's flags, read without a lock as Linux reads them (a snapshot
 * that may be stale by the time it is used). The frames of free blocks,
 * the slab and reserved memory say only that.
 */
static u64 kpageflags_of(unsigned long pfn)
{
	static const struct { int page_flag, kpf; } copied[] = {
		{ PG_locked, KPF_LOCKED }, { PG_referenced, KPF_REFERENCED },
		{ PG_uptodate, KPF_UPTODATE }, { PG_dirty, KPF_DIRTY }, { PG_lru, KPF_LRU },
		{ PG_swapbacked, KPF_SWAPBACKED },
	};
	struct page *page = pfn_to_page(pfn);
	const struct page *head;
	struct folio *folio;
	u64 u = 0;

	if (!page)
		return 1ULL << KPF_NOPAGE;
	if (test_page_flag(page, PG_hwpoison))
		u |= 1ULL << KPF_HWPOISON;
	if (test_page_flag(page, PG_buddy))
		return u | 1ULL << KPF_BUDDY;
	if (test_page_flag(page, PG_reserved))
		return u;
	folio = page_folio(page);
	head = (const struct page *)folio;
	if (test_page_flag(head, PG_slab))
		return u | 1ULL << KPF_SLAB;
	if (is_zero_pfn(pfn))
		return u | 1ULL << KPF_ZERO_PAGE;
	if (page_mapcount(page) > 0)
		u |= 1ULL << KPF_MMAP;
	if (folio_test_anon(folio))
		u |= 1ULL << KPF_ANON;
	if (folio_test_large(folio)) {
		u |= 1ULL << (page == head ? KPF_COMPOUND_HEAD : KPF_COMPOUND_TAIL);
		/* Any THP, not only 2 MiB ones, as Linux says: Quire's are anonymous. */
		if (folio_test_anon(folio))
			u |= 1ULL << KPF_THP;
	}
	for (size_t i = 0; i < ARRAY_SIZE(copied); i++)
		if (test_page_flag(head, copied[i].page_flag))
			u |= 1ULL << copied[i].kpf;
	return u;
}

ssize_t kpageflags_read(void *kbuf, size_t count, loff_t pos)
{
	unsigned long end_pfn = 0, pfn = (unsigned long)(pos / 8), nr;
	u64 *out = kbuf;
	int nid;

	if (pos < 0 || pos % 8 || count % 8)
		return -EINVAL;
	for_each_online_node(nid)
		end_pfn = max(end_pfn, node_end_pfn(nid));
	if (pfn >= end_pfn)
		return 0;
	nr = min(count / 8, end_pfn - pfn);
	for (unsigned long i = 0; i < nr; i++)
		out[i] = kpageflags_of(pfn + i);
	return (ssize_t)(nr * 8);
}
