/*
 * /dev/hmm_dmirror0 and /dev/hmm_dmirror1: a pretend device with private
 * memory (and 2, 3 with coherent memory, below), for Linux's hmm-tests selftest (the ioctls of Linux 6.12's
 * test_hmm driver, include/quire/uapi/hmm_dmirror.h; written from that
 * interface and docs/mm/device-memory.md). Each open file is a "mirror":
 * a device page table for the opener's address space, kept coherent with
 * the CPU's by an MMU interval notifier over the whole space.
 *
 *   READ, WRITE       the device reads or writes the range through its
 *                     page table; where an entry is missing it faults the
 *                     rest of the range in with hmm_range_fault (counted in
 *                     cmd.faults) and goes on.
 *   MIGRATE_TO_DEV    migrate_vma the range's system pages (and empty
 *                     anonymous slots) into device memory; _TO_SYS back.
 *   SNAPSHOT          a byte per page: what the CPU's page tables map.
 *   EXCLUSIVE         make_device_exclusive_range: the CPU gives the pages
 *                     up until it touches them; CHECK_EXCLUSIVE says EPERM
 *                     while the device still holds one.
 *   RELEASE           evict every page of device memory back to RAM.
 * /dev/hmm_dmirror2 and 3 (with "hmm_dmirror_coherent") have device-coherent
 * memory instead: the CPU maps those pages with present PTEs, and only the
 * migrations, the snapshot's bytes and long-term pins see the difference.
 * Without the option they do not exist, as on Linux without its SPM ranges.
 *
 * Device memory comes in 2 MiB chunks of what was kept at boot (devmem=,
 * memremap_claim), added when the free list runs dry. The device's "DMA"
 * is a copy_mc copy between the page and the kernel's bounce pages.
 *
 * Locks: the mirror's mutex over its page table (the notifier's invalidate
 * takes it too, so nothing under it may fault), the device's spinlock
 * over its free list and chunks, mmap_lock for reading around
 * hmm_range_fault and migrate_vma.
 */
#define pr_fmt(fmt) "hmm_dmirror: " fmt
#include <quire/fs.h>
#include <quire/pseudofs.h>
#include <quire/hmm.h>
#include <quire/memremap.h>
#include <quire/migrate.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mmu_notifier.h>
#include <quire/radix-tree.h>
#include <quire/copy_mc.h>
#include <quire/mutex.h>
#include <quire/spinlock.h>
#include <quire/slab.h>
#include <quire/sched.h>
#include <quire/uaccess.h>
#include <quire/syscalls.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/cmdline.h>
#include <quire/uapi/hmm_dmirror.h>

#define NR_DEVICES	4		/* 0-1 device-private, 2-3 device-coherent */
#define FIRST_COHERENT	2
#define CHUNK_SIZE	(2UL << 20)
#define MAX_CHUNKS	1024		/* 2 GiB a device at most */
#define BATCH		64		/* pages per hmm_range_fault / migrate_vma call */
#define MAX_RETRIES	1000		/* hmm_range_fault's -EBUSY, before giving up */

/* Tags in the low bits of a device page-table entry (a struct page pointer). */
#define DPT_WRITE	1UL
#define DPT_ATOMIC	2UL
#define DPT_TAGS	3UL

struct dmirror_device {
	int id;
	bool coherent;			/* MEMORY_DEVICE_COHERENT: the CPU maps its pages */
	bool present;			/* the node exists (2-3: hmm_dmirror_coherent) */
	spinlock_t lock;		/* free list, chunks */
	struct page *free;		/* free pages, linked through zone_device_data */
	struct dev_pagemap chunks[MAX_CHUNKS];
	int nr_chunks;
	unsigned long calloc, cfree;	/* pages handed out, given back */
	/* /sys/kernel/debug/hmm_dmirror */
	atomic_long_t to_device;	/* pages migrated into device memory */
	atomic_long_t faults_back;	/* pages a CPU fault brought back (migrate_to_ram) */
	atomic_long_t evicted;		/* pages RELEASE or a close evicted */
};

struct dmirror {
	struct dmirror_device *mdevice;
	struct mmu_interval_notifier notifier;
	struct mutex mutex;		/* pt */
	struct radix_tree_root pt;	/* addr >> PAGE_SHIFT -> struct page * | DPT_* */
	atomic_t refs;			/* the file's, and each migrate_to_ram's */
};

static struct dmirror_device devices[NR_DEVICES];

/*
 * Devices 2 and 3 with device-coherent memory. On Linux they exist when
 * test_hmm is given RAM ranges for them (spm_addr_dev0/1); here their
 * memory comes from devmem= like the others'.
 */
static bool dmirror_coherent;
CMDLINE_BOOL("hmm_dmirror_coherent", dmirror_coherent,
	     "add /dev/hmm_dmirror2 and 3, test devices with device-coherent memory");

static void dmirror_put(struct dmirror *dmirror)
{
	if (atomic_dec_and_test(&dmirror->refs)) {
		unsigned long i = 0;

		while (radix_tree_next(&dmirror->pt, &i))
			radix_tree_delete(&dmirror->pt, i);
		kfree(dmirror);
	}
}

/* ---- the device page table ---- */

static struct page *entry_page(void *entry)
{
	return (struct page *)((unsigned long)entry & ~DPT_TAGS);
}

static unsigned long entry_tags(void *entry)
{
	return (unsigned long)entry & DPT_TAGS;
}

/* Set the entry for addr (mutex held): 0 or -ENOMEM. */
static int pt_store(struct dmirror *dmirror, unsigned long addr, struct page *page,
		    unsigned long tags)
{
	void *item = (void *)((unsigned long)page | tags);
	unsigned long index = addr >> PAGE_SHIFT;

	mutex_assert_held(&dmirror->mutex);
	if (radix_tree_replace(&dmirror->pt, index, item))
		return 0;
	return radix_tree_insert(&dmirror->pt, index, item, GFP_KERNEL);
}

/* Drop the entries of [start, end) (mutex held). */
static void pt_erase(struct dmirror *dmirror, unsigned long start, unsigned long end)
{
	unsigned long i = start >> PAGE_SHIFT, last = (end - 1) >> PAGE_SHIFT;

	mutex_assert_held(&dmirror->mutex);
	while (radix_tree_next(&dmirror->pt, &i) && i <= last) {
		radix_tree_delete(&dmirror->pt, i);
		if (i++ == ~0UL)
			break;
	}
}

static bool dmirror_invalidate(struct mmu_interval_notifier *sub,
			       const struct mmu_notifier_range *range, unsigned long cur_seq)
{
	struct dmirror *dmirror = container_of(sub, struct dmirror, notifier);

	/* Our own migration keeps what it is setting up. */
	if (range->event == MMU_NOTIFY_MIGRATE && range->owner == dmirror->mdevice)
		return true;
	mutex_lock(&dmirror->mutex);
	mmu_interval_set_seq(sub, cur_seq);
	pt_erase(dmirror, range->start, range->end);
	mutex_unlock(&dmirror->mutex);
	return true;
}

static const struct mmu_interval_notifier_ops dmirror_notifier_ops = {
	.invalidate = dmirror_invalidate,
};

/* ---- bounce pages: the device's side of a copy ---- */

/*
 * BATCH kernel pages that a transfer goes through a window at a time: the
 * device copies between them and the pages under the mirror's mutex, and
 * they are copied to or from the user's buffer with no lock held (that
 * copy may fault, and a fault may invalidate: the callback takes the
 * mutex). A request that fails part way may have filled the user's buffer
 * for the windows before (Linux's driver copies nothing then).
 */
struct bounce {
	struct page *pages[BATCH];
	int nr;
};

static int bounce_init(struct bounce *b, unsigned long npages)
{
	b->nr = (int)min(npages, (unsigned long)BATCH);
	for (int i = 0; i < b->nr; i++) {
		b->pages[i] = alloc_pages(GFP_KERNEL, 0);
		if (!b->pages[i]) {
			b->nr = i;
			return -ENOMEM;
		}
	}
	return 0;
}

static void bounce_free(struct bounce *b)
{
	for (int i = 0; i < b->nr; i++)
		__free_pages(b->pages[i], 0);
}

/* The window [wstart, wend) between the bounce pages and the user's buffer at uptr. */
static int bounce_user(struct bounce *b, unsigned long wstart, unsigned long wend, u64 uptr,
		       bool to_user)
{
	for (unsigned long a = wstart; a < wend; a += PAGE_SIZE) {
		void *k = page_address(b->pages[(a - wstart) >> PAGE_SHIFT]), *u = (void *)uptr;

		if (to_user ? copy_to_user(u, k, PAGE_SIZE) : copy_from_user(k, u, PAGE_SIZE))
			return -EFAULT;
		uptr += PAGE_SIZE;
	}
	return 0;
}

/* The device's DMA: a machine-check-safe copy. */
static int dma_copy(struct page *to, struct page *from)
{
	return copy_mc_highpages(to, from, 1) ? -EIO : 0;
}

/* ---- READ and WRITE ---- */

/*
 * Copy through the device page table from *addr to wend (the window
 * starting at wstart), moving *addr on; -ENOENT at the first page the
 * device has no entry for (for a write: no writable one).
 */
static int do_copy(struct dmirror *dmirror, unsigned long *addr, unsigned long wstart,
		   unsigned long wend, struct bounce *b, bool write)
{
	mutex_assert_held(&dmirror->mutex);
	for (; *addr < wend; *addr += PAGE_SIZE) {
		void *entry = radix_tree_lookup(&dmirror->pt, *addr >> PAGE_SHIFT);
		struct page *bp = b->pages[(*addr - wstart) >> PAGE_SHIFT];
		int err;

		if (!entry || (write && !(entry_tags(entry) & DPT_WRITE)))
			return -ENOENT;
		err = write ? dma_copy(entry_page(entry), bp) : dma_copy(bp, entry_page(entry));
		if (err)
			return err;
	}
	return 0;
}

/*
 * hmm_range_fault for range (at most BATCH pages), retried while the
 * notifier says an invalidation came between; then the result goes into
 * the device page table under the mutex, if still current.
 */
static int range_fault(struct dmirror *dmirror, struct hmm_range *range)
{
	struct mm_struct *mm = dmirror->notifier.mm;
	int err = -EBUSY;

	for (int tries = 0; tries < MAX_RETRIES; tries++) {
		range->notifier_seq = mmu_interval_read_begin(range->notifier);
		down_read(&mm->mmap_lock);
		err = hmm_range_fault(range);
		up_read(&mm->mmap_lock);
		if (err == -EBUSY)
			continue;
		if (err)
			return err;
		mutex_lock(&dmirror->mutex);
		if (mmu_interval_read_retry(range->notifier, range->notifier_seq)) {
			mutex_unlock(&dmirror->mutex);
			err = -EBUSY;
			continue;
		}
		break;
	}
	if (err)
		return err;
	for (unsigned long addr = range->start; addr < range->end; addr += PAGE_SIZE) {
		unsigned long w = range->hmm_pfns[(addr - range->start) >> PAGE_SHIFT];

		if (!(w & HMM_PFN_VALID) || (w & HMM_PFN_ERROR)) {
			err = -EFAULT;
			break;
		}
		if (!(w & HMM_PFN_WRITE) && (range->default_flags & HMM_PFN_REQ_WRITE)) {
			err = -EFAULT;
			break;
		}
		err = pt_store(dmirror, addr, pfn_to_page(hmm_pfn_to_pfn(w)),
			       (w & HMM_PFN_WRITE) ? DPT_WRITE : 0);
		if (err)
			break;
	}
	mutex_unlock(&dmirror->mutex);
	return err;
}

/* Fault [start, end) into the device page table, BATCH pages at a time. */
static int dmirror_fault(struct dmirror *dmirror, unsigned long start, unsigned long end,
			 bool write)
{
	unsigned long pfns[BATCH];
	struct hmm_range range = {
		.notifier = &dmirror->notifier, .hmm_pfns = pfns,
		.default_flags = HMM_PFN_REQ_FAULT | (write ? HMM_PFN_REQ_WRITE : 0),
		.dev_private_owner = dmirror->mdevice,
	};

	for (unsigned long addr = start; addr < end; addr = range.end) {
		int err;

		range.start = addr;
		range.end = min(addr + BATCH * PAGE_SIZE, end);
		err = range_fault(dmirror, &range);
		if (err)
			return err;
	}
	return 0;
}

/* A mm reference for the duration of a request: -EINVAL when the address space is gone. */
static int get_mm(struct dmirror *dmirror)
{
	return atomic_add_unless(&dmirror->notifier.mm->mm_users, 1, 0) ? 0 : -EINVAL;
}

/*
 * READ (WRITE): the device copies [start, end) to (from) the user's buffer
 * through its page table, a window at a time; at the first page it has no
 * (writable) entry for, it faults the rest of the range in, once, and goes
 * on (Linux's count of faults). fault false: -ENOENT instead (the read-back
 * after a migration or an exclusive request).
 */
static int device_copy(struct dmirror *dmirror, struct hmm_dmirror_cmd *cmd, bool write,
		       bool fault)
{
	unsigned long start = cmd->addr, end = start + (cmd->npages << PAGE_SHIFT), addr = start;
	struct bounce b;
	int err = bounce_init(&b, cmd->npages);

	while (!err && addr < end) {
		unsigned long wstart = addr, wend = min(addr + BATCH * PAGE_SIZE, end);
		u64 uptr = cmd->ptr + (wstart - start);

		if (write)
			err = bounce_user(&b, wstart, wend, uptr, false);
		while (!err && addr < wend) {
			mutex_lock(&dmirror->mutex);
			err = do_copy(dmirror, &addr, wstart, wend, &b, write);
			mutex_unlock(&dmirror->mutex);
			if (err != -ENOENT || !fault)
				break;
			err = dmirror_fault(dmirror, addr, end, write);
			if (!err)
				cmd->faults++;
		}
		if (!err && !write)
			err = bounce_user(&b, wstart, wend, uptr, true);
	}
	if (!err)
		cmd->cpages = (addr - start) >> PAGE_SHIFT;
	bounce_free(&b);
	return err;
}

static int dmirror_read_write(struct dmirror *dmirror, struct hmm_dmirror_cmd *cmd, bool write)
{
	int err = get_mm(dmirror);

	if (err)
		return err;
	err = device_copy(dmirror, cmd, write, true);
	mmput(dmirror->notifier.mm);
	return err;
}

/* ---- device memory ---- */

static void dmirror_page_free(struct page *page)
{
	struct dmirror_device *mdevice = page->pgmap->owner;

	spin_lock(&mdevice->lock);
	page->zone_device_data = mdevice->free;
	mdevice->free = page;
	mdevice->cfree++;
	spin_unlock(&mdevice->lock);
}

static int dmirror_migrate_to_ram(struct vm_fault *vmf);

static const struct dev_pagemap_ops dmirror_pagemap_ops = {
	.page_free = dmirror_page_free,
	.migrate_to_ram = dmirror_migrate_to_ram,
};

/* One more 2 MiB chunk of device memory (its pages on the free list): 0 or -ENOMEM. */
static int add_chunk(struct dmirror_device *mdevice)
{
	struct dev_pagemap *pgmap;
	phys_addr_t start;
	int err;

	spin_lock(&mdevice->lock);
	if (mdevice->nr_chunks == MAX_CHUNKS || memremap_claim(CHUNK_SIZE, &start)) {
		spin_unlock(&mdevice->lock);
		return -ENOMEM;
	}
	pgmap = &mdevice->chunks[mdevice->nr_chunks];
	*pgmap = (struct dev_pagemap){
		.type = mdevice->coherent ? MEMORY_DEVICE_COHERENT : MEMORY_DEVICE_PRIVATE,
		.start = start, .end = start + CHUNK_SIZE,
		.ops = &dmirror_pagemap_ops, .owner = mdevice,
	};
	err = memremap_pages(pgmap);
	if (!err) {
		for (unsigned long pfn = PHYS_PFN(start); pfn < PHYS_PFN(start + CHUNK_SIZE); pfn++) {
			struct page *page = pfn_to_page(pfn);

			page->zone_device_data = mdevice->free;
			mdevice->free = page;
		}
		mdevice->nr_chunks++;
	}
	spin_unlock(&mdevice->lock);
	if (err)
		pr_err("device %d: chunk at %#llx refused (%d)\n", mdevice->id,
		       (unsigned long long)start, err);
	return err;
}

/* A free device page, referenced and locked, for dmirror; NULL when there is none left. */
static struct page *devmem_alloc(struct dmirror_device *mdevice, struct dmirror *dmirror)
{
	struct page *page;

	for (;;) {
		spin_lock(&mdevice->lock);
		page = mdevice->free;
		if (page) {
			mdevice->free = page->zone_device_data;
			mdevice->calloc++;
		}
		spin_unlock(&mdevice->lock);
		if (page || add_chunk(mdevice))
			break;
	}
	if (!page)
		return NULL;
	page->zone_device_data = dmirror;	/* whose page table maps it */
	zone_device_page_init(page);
	return page;
}

/* ---- MIGRATE_TO_DEV and MIGRATE_TO_SYS ---- */

static void alloc_and_copy_to_device(struct migrate_vma *m, struct dmirror *dmirror)
{
	for (unsigned long i = 0; i < m->npages; i++) {
		struct page *spage = migrate_pfn_to_page(m->src[i]), *dpage;

		if (!(m->src[i] & MIGRATE_PFN_MIGRATE) || (spage && is_zone_device_page(spage)))
			continue;
		dpage = devmem_alloc(dmirror->mdevice, dmirror);
		if (!dpage)
			continue;
		if (spage ? dma_copy(dpage, spage) : (memset(page_address(dpage), 0, PAGE_SIZE), 0)) {
			folio_unlock(page_folio(dpage));
			folio_put(page_folio(dpage));
			continue;
		}
		m->dst[i] = migrate_pfn(page_to_pfn(dpage));
		if ((m->src[i] & MIGRATE_PFN_WRITE) || (!spage && (m->vma->vm_flags & VM_WRITE)))
			m->dst[i] |= MIGRATE_PFN_WRITE;
	}
}

/* The pages that moved are the device's now: into its page table. */
static void map_migrated(struct migrate_vma *m, struct dmirror *dmirror)
{
	mutex_lock(&dmirror->mutex);
	for (unsigned long i = 0; i < m->npages; i++) {
		struct page *dpage = migrate_pfn_to_page(m->dst[i]);

		if (!dpage || !(m->src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		atomic_long_inc(&dmirror->mdevice->to_device);
		if (pt_store(dmirror, m->start + (i << PAGE_SHIFT), dpage,
			     (m->dst[i] & MIGRATE_PFN_WRITE) ? DPT_WRITE : 0))
			break;	/* out of memory for the table: the device reads it again later */
	}
	mutex_unlock(&dmirror->mutex);
}

/* Device pages back to new system pages. */
static void alloc_and_copy_to_system(unsigned long *src, unsigned long *dst, unsigned long npages,
				     struct dmirror *dmirror, unsigned long start)
{
	for (unsigned long i = 0; i < npages; i++) {
		struct page *spage = migrate_pfn_to_page(src[i]);
		struct folio *folio;

		dst[i] = 0;
		if (!spage || !(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		folio = folio_alloc(GFP_HIGHUSER_MOVABLE, 0, NUMA_NO_NODE);
		if (!folio)
			continue;
		folio_lock(folio);
		if (dma_copy(folio_page(folio, 0), spage)) {
			folio_unlock(folio);
			folio_put(folio);
			continue;
		}
		if (dmirror) {
			mutex_lock(&dmirror->mutex);
			radix_tree_delete(&dmirror->pt, (start >> PAGE_SHIFT) + i);
			mutex_unlock(&dmirror->mutex);
		}
		dst[i] = migrate_pfn(folio_pfn(folio)) | (src[i] & MIGRATE_PFN_WRITE);
	}
}

/* The VMA at addr may be migrated: -EINVAL for a hole or a VMA that cannot be read. */
static struct vm_area_struct *migrate_vma_at(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr);

	if (!vma || vma->vm_start > addr || !(vma->vm_flags & VM_READ))
		return NULL;
	return vma;
}

static int dmirror_migrate(struct dmirror *dmirror, struct hmm_dmirror_cmd *cmd, bool to_device)
{
	unsigned long start = cmd->addr, end = start + (cmd->npages << PAGE_SHIFT);
	struct mm_struct *mm = dmirror->notifier.mm;
	unsigned long src[BATCH], dst[BATCH], moved = 0;
	int err = get_mm(dmirror);

	if (err)
		return err;
	down_read(&mm->mmap_lock);
	for (unsigned long addr = start, next; addr < end; addr = next) {
		struct vm_area_struct *vma = migrate_vma_at(mm, addr);
		struct migrate_vma m = {
			.vma = vma, .src = src, .dst = dst, .pgmap_owner = dmirror->mdevice,
			.flags = to_device ? MIGRATE_VMA_SELECT_SYSTEM :
				 dmirror->mdevice->coherent ? MIGRATE_VMA_SELECT_DEVICE_COHERENT :
				 MIGRATE_VMA_SELECT_DEVICE_PRIVATE,
		};

		if (!vma) {
			err = -EINVAL;
			break;
		}
		next = min(min(end, addr + BATCH * PAGE_SIZE), vma->vm_end);
		m.start = addr;
		m.end = next;
		err = migrate_vma_setup(&m);
		if (err)
			break;
		if (to_device) {
			alloc_and_copy_to_device(&m, dmirror);
		} else {
			alloc_and_copy_to_system(m.src, m.dst, m.npages, dmirror, m.start);
		}
		migrate_vma_pages(&m);
		if (to_device)
			map_migrated(&m, dmirror);
		else	/* the pages that moved */
			for (unsigned long i = 0; i < m.npages; i++)
				moved += (m.src[i] & MIGRATE_PFN_MIGRATE) && m.dst[i];
		migrate_vma_finalize(&m);
	}
	up_read(&mm->mmap_lock);
	mmput(mm);
	if (err)
		return err;
	if (!to_device) {
		cmd->cpages = moved;
		return 0;
	}
	/* What the device now holds, read back for the caller to check. */
	return device_copy(dmirror, cmd, false, false);
}

/* A CPU touched one of our pages: it goes back to system memory. */
static int dmirror_migrate_to_ram(struct vm_fault *vmf)
{
	struct dmirror_device *mdevice = vmf->page->pgmap->owner;
	unsigned long src = 0, dst = 0;
	struct migrate_vma m = {
		.vma = vmf->vma, .start = vmf->address, .end = vmf->address + PAGE_SIZE,
		.src = &src, .dst = &dst, .pgmap_owner = mdevice,
		.flags = MIGRATE_VMA_SELECT_DEVICE_PRIVATE, .fault_page = vmf->page,
	};
	struct dmirror *dmirror;

	/* The mirror whose table maps the page (gone if its file was closed). */
	spin_lock(&mdevice->lock);
	dmirror = vmf->page->zone_device_data;
	if (dmirror)
		atomic_inc(&dmirror->refs);
	spin_unlock(&mdevice->lock);
	if (migrate_vma_setup(&m)) {
		if (dmirror)
			dmirror_put(dmirror);
		return -EIO;
	}
	alloc_and_copy_to_system(&src, &dst, 1, dmirror, m.start);
	migrate_vma_pages(&m);
	if ((src & MIGRATE_PFN_MIGRATE) && dst)
		atomic_long_inc(&mdevice->faults_back);
	migrate_vma_finalize(&m);
	if (dmirror)
		dmirror_put(dmirror);
	return 0;
}

/* ---- SNAPSHOT ---- */

static u8 snapshot_byte(struct dmirror *dmirror, unsigned long w)
{
	struct page *page;
	u8 perm;

	if (w & HMM_PFN_ERROR)
		return HMM_DMIRROR_PROT_ERROR;
	if (!(w & HMM_PFN_VALID))
		return HMM_DMIRROR_PROT_NONE;
	page = pfn_to_page(hmm_pfn_to_pfn(w));
	if (page && is_device_private_page(page))
		perm = page->pgmap->owner == dmirror->mdevice ?
		       HMM_DMIRROR_PROT_DEV_PRIVATE_LOCAL : HMM_DMIRROR_PROT_DEV_PRIVATE_REMOTE;
	else if (page && is_device_coherent_page(page))
		perm = page->pgmap->owner == dmirror->mdevice ?
		       HMM_DMIRROR_PROT_DEV_COHERENT_LOCAL : HMM_DMIRROR_PROT_DEV_COHERENT_REMOTE;
	else if (is_zero_pfn(hmm_pfn_to_pfn(w)))
		perm = HMM_DMIRROR_PROT_ZERO;
	else
		perm = HMM_DMIRROR_PROT_NONE;
	perm |= (w & HMM_PFN_WRITE) ? HMM_DMIRROR_PROT_WRITE : HMM_DMIRROR_PROT_READ;
	if (hmm_pfn_to_map_order(w) + PAGE_SHIFT == PMD_SHIFT)
		perm |= HMM_DMIRROR_PROT_PMD;
	else if (hmm_pfn_to_map_order(w) + PAGE_SHIFT == PUD_SHIFT)
		perm |= HMM_DMIRROR_PROT_PUD;
	return perm;
}

static int dmirror_snapshot(struct dmirror *dmirror, struct hmm_dmirror_cmd *cmd)
{
	unsigned long start = cmd->addr, end = start + (cmd->npages << PAGE_SHIFT);
	struct mm_struct *mm = dmirror->notifier.mm;
	unsigned long pfns[BATCH];
	u8 perm[BATCH];
	int err = get_mm(dmirror);

	if (err)
		return err;
	for (unsigned long addr = start, next; addr < end && !err; addr = next) {
		struct hmm_range range = {
			.notifier = &dmirror->notifier, .hmm_pfns = pfns,
			.dev_private_owner = dmirror->mdevice,
		};
		unsigned long n;

		next = min(addr + BATCH * PAGE_SIZE, end);
		range.start = addr;
		range.end = next;
		err = -EBUSY;
		for (int tries = 0; err == -EBUSY && tries < MAX_RETRIES; tries++) {
			range.notifier_seq = mmu_interval_read_begin(&dmirror->notifier);
			down_read(&mm->mmap_lock);
			err = hmm_range_fault(&range);
			up_read(&mm->mmap_lock);
		}
		if (err)
			break;
		n = (next - addr) >> PAGE_SHIFT;
		for (unsigned long i = 0; i < n; i++)
			perm[i] = snapshot_byte(dmirror, pfns[i]);
		if (copy_to_user((void *)(cmd->ptr + cmd->cpages), perm, n))
			err = -EFAULT;
		else
			cmd->cpages += n;
	}
	mmput(mm);
	return err;
}

/* ---- EXCLUSIVE ---- */

static int dmirror_exclusive(struct dmirror *dmirror, struct hmm_dmirror_cmd *cmd)
{
	unsigned long start = cmd->addr, end = start + (cmd->npages << PAGE_SHIFT);
	struct mm_struct *mm = dmirror->notifier.mm;
	struct page *pages[BATCH];
	int err = get_mm(dmirror);

	if (err)
		return err;
	down_read(&mm->mmap_lock);
	for (unsigned long addr = start, next; addr < end && !err; addr = next) {
		unsigned long n, mapped = 0;
		int got;

		next = min(end, addr + BATCH * PAGE_SIZE);
		n = (next - addr) >> PAGE_SHIFT;
		got = make_device_exclusive_range(mm, addr, next, pages, NULL);
		/* Only when every page is held: the device's entries say "atomic". */
		if (got == (int)n) {
			mutex_lock(&dmirror->mutex);
			for (unsigned long i = 0; i < n; i++)
				if (pages[i] && !pt_store(dmirror, addr + (i << PAGE_SHIFT), pages[i],
							  DPT_ATOMIC))
					mapped++;
			mutex_unlock(&dmirror->mutex);
		}
		for (int i = 0; i < got; i++) {
			if (pages[i]) {
				folio_unlock(page_folio(pages[i]));
				folio_put(page_folio(pages[i]));
			}
		}
		if (mapped < n)
			err = got < 0 ? got : -EBUSY;
	}
	up_read(&mm->mmap_lock);
	mmput(mm);
	if (err)
		return err;
	return device_copy(dmirror, cmd, false, false);
}

static int dmirror_check_exclusive(struct dmirror *dmirror, struct hmm_dmirror_cmd *cmd)
{
	unsigned long start = cmd->addr, end = start + (cmd->npages << PAGE_SHIFT);
	unsigned long i = start >> PAGE_SHIFT, last = (end - 1) >> PAGE_SHIFT;
	void *entry;
	int err = 0;

	/* The entries there, not every page: a range may be as large as the address space. */
	mutex_lock(&dmirror->mutex);
	while (!err && (entry = radix_tree_next(&dmirror->pt, &i)) && i <= last) {
		if (entry_tags(entry) & DPT_ATOMIC)
			err = -EPERM;
		if (i++ == ~0UL)
			break;
	}
	mutex_unlock(&dmirror->mutex);
	return err;
}

/* ---- RELEASE: every page of device memory back to RAM ---- */

static void evict_chunk(struct dmirror_device *mdevice, struct dev_pagemap *pgmap)
{
	unsigned long npages = (pgmap->end - pgmap->start) >> PAGE_SHIFT;
	unsigned long *src = kzalloc(npages * sizeof(*src), GFP_KERNEL);
	unsigned long *dst = kzalloc(npages * sizeof(*dst), GFP_KERNEL);

	if (src && dst) {
		migrate_device_range(src, PHYS_PFN(pgmap->start), npages);
		alloc_and_copy_to_system(src, dst, npages, NULL, 0);
		migrate_device_pages(src, dst, npages);
		for (unsigned long i = 0; i < npages; i++)
			if ((src[i] & MIGRATE_PFN_MIGRATE) && dst[i])
				atomic_long_inc(&mdevice->evicted);
		migrate_device_finalize(src, dst, npages);
	}
	kfree(src);
	kfree(dst);
}

static int dmirror_release_memory(struct dmirror_device *mdevice)
{
	int nr;

	spin_lock(&mdevice->lock);
	nr = mdevice->nr_chunks;
	spin_unlock(&mdevice->lock);
	/* (Chunks stay the device's: Quire never gives carved memory back; they are free now.) */
	for (int i = 0; i < nr; i++)
		evict_chunk(mdevice, &mdevice->chunks[i]);
	return 0;
}

/* ---- the file ---- */

static long dmirror_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dmirror *dmirror = file->private_data;
	struct hmm_dmirror_cmd *c = (struct hmm_dmirror_cmd *)arg;	/* a kernel copy (fs/ioctl.c) */
	unsigned long size = c->npages << PAGE_SHIFT;

	if (!IS_ALIGNED(c->addr, PAGE_SIZE) || !c->npages || c->npages > (~0UL >> PAGE_SHIFT) ||
	    c->addr + size <= c->addr)
		return -EINVAL;
	c->cpages = 0;
	c->faults = 0;
	switch (cmd) {
	case HMM_DMIRROR_READ:
		return dmirror_read_write(dmirror, c, false);
	case HMM_DMIRROR_WRITE:
		return dmirror_read_write(dmirror, c, true);
	case HMM_DMIRROR_MIGRATE_TO_DEV:
		return dmirror_migrate(dmirror, c, true);
	case HMM_DMIRROR_MIGRATE_TO_SYS:
		return dmirror_migrate(dmirror, c, false);
	case HMM_DMIRROR_SNAPSHOT:
		return dmirror_snapshot(dmirror, c);
	case HMM_DMIRROR_EXCLUSIVE:
		return dmirror_exclusive(dmirror, c);
	case HMM_DMIRROR_CHECK_EXCLUSIVE:
		return dmirror_check_exclusive(dmirror, c);
	case HMM_DMIRROR_RELEASE:
		return dmirror_release_memory(dmirror->mdevice);
	default:
		return -EINVAL;
	}
}

static int dmirror_open(struct inode *inode, struct file *file)
{
	unsigned int minor = MINOR(inode->i_rdev);
	struct dmirror *dmirror;
	int err;

	if (minor >= NR_DEVICES || !devices[minor].present)
		return -ENXIO;
	if (!current->mm)
		return -EINVAL;
	dmirror = kzalloc(sizeof(*dmirror), GFP_KERNEL);
	if (!dmirror)
		return -ENOMEM;
	dmirror->mdevice = &devices[minor];
	mutex_init(&dmirror->mutex);
	INIT_RADIX_TREE(&dmirror->pt);
	atomic_set(&dmirror->refs, 1);
	/* The whole address space: the device may be asked about any of it. */
	err = mmu_interval_notifier_insert(&dmirror->notifier, current->mm, 0, STACK_TOP,
					   &dmirror_notifier_ops);
	if (err) {
		kfree(dmirror);
		return err;
	}
	file->private_data = dmirror;
	return 0;
}

static int dmirror_release(struct inode *inode, struct file *file)
{
	struct dmirror *dmirror = file->private_data;
	struct dmirror_device *mdevice = dmirror->mdevice;

	mmu_interval_notifier_remove(&dmirror->notifier);
	/* As Linux's driver: every page of the device's memory goes back to RAM. */
	dmirror_release_memory(mdevice);
	/* A page on its way back meanwhile names this mirror no more. */
	spin_lock(&mdevice->lock);
	for (int c = 0; c < mdevice->nr_chunks; c++)
		for (phys_addr_t pa = mdevice->chunks[c].start; pa < mdevice->chunks[c].end;
		     pa += PAGE_SIZE) {
			struct page *page = pfn_to_page(PHYS_PFN(pa));

			if (page_count(page) && page->zone_device_data == dmirror)
				page->zone_device_data = NULL;
		}
	spin_unlock(&mdevice->lock);
	dmirror_put(dmirror);
	return 0;
}

/*
 * mmap of the device: zeroed pages of its own, there from the start (Linux's
 * driver inserts them with vm_insert_page). Quire maps an unnamed RAM file
 * of the length, faulted in at mmap; a private writable mapping maps it
 * read-only until a write copies it, as Linux's does.
 */
static int dmirror_mmap_backing(struct file *file, u64 len, u64 flags, struct file **backing)
{
	return (int)shmem_file_setup(len, backing);
}

static const struct file_operations dmirror_fops = {
	.open = dmirror_open,
	.release = dmirror_release,
	.ioctl = dmirror_ioctl,
	.mmap_backing = dmirror_mmap_backing,
	.mmap_prefault = true,
};

/* /sys/kernel/debug/hmm_dmirror: a line a device. */
static ssize_t stats_show(struct pseudo_file *pf, char *buf, size_t size)
{
	size_t n = 0;

	for (int i = 0; i < NR_DEVICES && n < size; i++) {
		struct dmirror_device *d = &devices[i];
		unsigned long chunks, in_use;

		if (!d->present)
			continue;
		spin_lock(&d->lock);
		chunks = d->nr_chunks;
		in_use = d->calloc - d->cfree;
		spin_unlock(&d->lock);
		n += scnprintf(buf + n, size - n,
			      "hmm_dmirror%d memory_kB %lu in_use %lu to_device %ld faults_back %ld "
			      "evicted %ld\n", i, chunks * (CHUNK_SIZE >> 10), in_use,
			      atomic_long_read(&d->to_device), atomic_long_read(&d->faults_back),
			      atomic_long_read(&d->evicted));
	}
	return (ssize_t)n;
}

static const struct pseudo_ops stats_ops = { .show = stats_show };

void hmm_dmirror_init(void)
{
	for (int i = 0; i < NR_DEVICES; i++) {
		devices[i].id = i;
		devices[i].coherent = i >= FIRST_COHERENT;
		spin_lock_init(&devices[i].lock);
	}
	/* Without device memory kept at boot (devmem=0) there is no device, as without the module. */
	if (!memremap_carved_bytes()) {
		pr_info("no device memory (devmem=0): /dev/hmm_dmirror* not registered\n");
		return;
	}
	for (int i = 0; i < NR_DEVICES; i++)
		devices[i].present = !devices[i].coherent || dmirror_coherent;
	register_chrdev_region(HMM_DMIRROR_MAJOR, 0, NR_DEVICES, "hmm_dmirror", &dmirror_fops);
	/* (0 and 1 are in the root file system's table; 2 and 3 only when they exist.) */
	for (int i = FIRST_COHERENT; i < NR_DEVICES && dmirror_coherent; i++) {
		char path[32];

		scnprintf(path, sizeof(path), "/dev/hmm_dmirror%d", i);
		if (vfs_mknod(NULL, path, S_IFCHR | 0600, MKDEV(HMM_DMIRROR_MAJOR, i)))
			pr_warn("cannot create %s\n", path);
	}
	if (!debugfs_root || pseudo_create(debugfs_root, "hmm_dmirror", 0444, &stats_ops, NULL))
		pr_warn("no /sys/kernel/debug/hmm_dmirror\n");
}
