/*
 * User address spaces: struct mm_struct (page tables, the list of VMAs,
 * brk) and struct vm_area_struct, with Linux's names and the mmap family's
 * semantics (mm/mmap.c) and the fault path (mm/memory.c). See
 * docs/mm/faults.md.
 *
 * Locking: mmap_lock (a rw_semaphore) protects the VMA list and brk: taken
 * for reading by faults, for writing by mmap/munmap/brk/exec. A PTE
 * changes under its PTE table's lock, a PMD entry under its PMD table's
 * lock, the upper levels under page_table_lock (mm/pgtable.c,
 * docs/locking.md).
 */
#ifndef QUIRE_MMAP_H
#define QUIRE_MMAP_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/atomic.h>
#include <quire/spinlock.h>
#include <quire/rwsem.h>
#include <quire/mutex.h>
#include <quire/sched.h>
#include <quire/pte.h>

/* vm_flags */
#define VM_READ		0x00000001UL
#define VM_WRITE	0x00000002UL
#define VM_EXEC		0x00000004UL
#define VM_SHARED	0x00000008UL
#define VM_GROWSDOWN	0x00000100UL
#define VM_DONTCOPY	0x00020000UL	/* MADV_DONTFORK: not copied by fork */
/*
 * Every page of the VMA counts as soft-dirty (pagemap bit 55): set on each
 * new region (mmap, brk, exec), cleared by clear_refs 4 (mm/clear_refs.c),
 * which then tracks writes page by page. Merging ignores it (the merged VMA
 * has it if either part had). fork copies it.
 */
#define VM_SOFTDIRTY	0x08000000UL
#define VM_HUGEPAGE	0x20000000UL	/* MADV_HUGEPAGE */
#define VM_NOHUGEPAGE	0x40000000UL	/* MADV_NOHUGEPAGE */
#define VM_STACK	VM_GROWSDOWN

/* Linux's mmap constants (x86-64). */
#define PROT_NONE	0x0
#define PROT_READ	0x1
#define PROT_WRITE	0x2
#define PROT_EXEC	0x4
#define MAP_SHARED	0x01
#define MAP_PRIVATE	0x02
#define MAP_FIXED	0x10
#define MAP_ANONYMOUS	0x20
#define MAP_SHARED_VALIDATE 0x03	/* MAP_SHARED, and unknown flags are an error */
#define MAP_GROWSDOWN	0x0100
#define MAP_DENYWRITE	0x0800	/* ignored, as by Linux */
#define MAP_EXECUTABLE	0x1000	/* ignored, as by Linux */
#define MAP_LOCKED	0x2000
#define MAP_NORESERVE	0x4000	/* nothing is reserved anyway */
#define MAP_POPULATE	0x8000
#define MAP_NONBLOCK	0x10000
#define MAP_STACK	0x20000	/* a hint; no effect, as on Linux */
#define MAP_HUGETLB	0x40000
#define MAP_SYNC	0x80000
#define MAP_FIXED_NOREPLACE 0x100000
#define MAP_HUGE_SHIFT	26		/* MAP_HUGETLB's page size, log2, in bits 26-31 */

#define MADV_NORMAL	0
#define MADV_RANDOM	1
#define MADV_SEQUENTIAL	2
#define MADV_WILLNEED	3
#define MADV_DONTNEED	4
#define MADV_FREE	8
#define MADV_DONTFORK	10
#define MADV_DOFORK	11
#define MADV_HUGEPAGE	14
#define MADV_NOHUGEPAGE	15
#define MADV_COLD	20
#define MADV_PAGEOUT	21
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#define MADV_COLLAPSE		25	/* copy a range's pages into THPs now (mm/khugepaged.c) */
#define MADV_HWPOISON		100	/* poison the pages (root; mm/memory-failure.c) */
#define MADV_SOFT_OFFLINE	101

#define MREMAP_MAYMOVE		1
#define MREMAP_FIXED		2
#define MREMAP_DONTUNMAP	4

#define MS_ASYNC	1
#define MS_INVALIDATE	2
#define MS_SYNC		4

struct mm_struct;

struct file;

struct vm_area_struct {
	unsigned long vm_start;		/* first byte */
	unsigned long vm_end;		/* one past the last byte */
	unsigned long vm_flags;
	struct mm_struct *vm_mm;
	struct file *vm_file;		/* file-backed: holds a reference; NULL: anonymous */
	unsigned long vm_pgoff;		/* file: the file page vm_start maps; anonymous: vm_start's
					 * page number when the VMA was made (folio->index space),
					 * kept when mremap moves it */
	struct list_head vm_list;	/* in the mm's list, sorted by address */
	struct anon_vma *anon_vma;	/* where new anonymous folios point (NULL: none yet) */
	struct list_head anon_vma_chain;/* struct anon_vma_chain.same_vma: every anon_vma linked */
	struct list_head shared;	/* file VMAs: in the address_space's i_mmap */
	struct mempolicy vm_policy;	/* mbind; MPOL_DEFAULT (all zero): the task's policy.
					 * Changed with mmap_lock held for writing */
};

struct mm_struct {
	phys_addr_t pgd;
	struct list_head vmas;		/* sorted by address: ordered walks */
	int map_count;
	/* The same VMAs in an array, for find_vma's binary search (O(log n)). */
	struct vm_area_struct **vma_index;
	int index_cap;
	struct rw_semaphore mmap_lock;
	spinlock_t page_table_lock;	/* filling in PGD, P4D and PUD entries */
	atomic_t mm_users;
	unsigned long start_brk, brk;
	unsigned long start_stack;
	/* execve's argv and envp strings on the stack (/proc/<pid>/cmdline, environ) */
	unsigned long arg_start, arg_end, env_start, env_end;
	unsigned long mmap_base;	/* top-down search for mmap starts here */
	cpumask_t cpus;			/* CPUs that may cache its translations */
	atomic_long_t rss;		/* pages mapped */
	unsigned long pgtables_freed;	/* page tables freed by munmap (tests) */
	/*
	 * Page tables set aside for PMD-mapped folios (one each, on the PMD
	 * table's page, mm/huge_memory.c): how many, updated atomically.
	 */
	unsigned long nr_deposited;
	/*
	 * Odd while fork copies a private mapping's entries (Linux's
	 * write_protect_seq): GUP-fast pins give way to it (mm/fork_copy.c).
	 */
	unsigned int write_protect_seq;
	struct list_head mm_list;	/* in the list of every mm (mm_verify) */
	/*
	 * References to the mm_struct itself (mmgrab/mmdrop): one for all of
	 * mm_users together, one per holder that must outlive the address
	 * space's teardown (an MMU interval notifier).
	 */
	atomic_t mm_count;
	struct mmu_notifier_subscriptions *notifier_subscriptions;	/* NULL: none ever */
};

/* Every live mm, for mm_verify (mm_list_lock, a mutex). */
extern struct list_head mm_list;
extern struct mutex mm_list_lock;
/* Address spaces that failed mm_verify_mm as they exited (DEBUG_MM builds). */
extern unsigned long mm_exit_verify_failures;

/* The mm's mmap_lock is held (for reading or writing) / by this task for writing. */
#define mmap_assert_locked(mm)		rwsem_assert_held(&(mm)->mmap_lock)
#define mmap_assert_write_locked(mm)	rwsem_assert_held_write(&(mm)->mmap_lock)

/*
 * Split page-table locks (mm/pgtable.c). pte_lockptr: the lock of the PTE
 * table *pmd points to; pmd_lockptr: the lock of the PMD table holding pmd.
 * pmd_lock takes the latter and returns it. pte_offset_map_lock takes the
 * PTE table's lock and returns addr's PTE in it, or NULL when *pmd is not
 * (or no longer) a page table: none, or a 2 MiB leaf. Each acquisition is
 * counted ("PTL acquisitions" in make bench).
 */
spinlock_t *pte_lockptr(struct mm_struct *mm, pte_t *pmd);
spinlock_t *pmd_lockptr(struct mm_struct *mm, pte_t *pmd);
spinlock_t *pmd_lock(struct mm_struct *mm, pte_t *pmd);
pte_t *pte_offset_map_lock(struct mm_struct *mm, pte_t *pmd, unsigned long addr,
			   spinlock_t **ptlp);

static inline void pte_unmap_unlock(pte_t *pte, spinlock_t *ptl)
{
	(void)pte;
	spin_unlock(ptl);
}

/*
 * addr's PMD entry, filling in the upper levels (under page_table_lock, a
 * spare table freed when another CPU was first). NULL: out of memory.
 */
pte_t *pmd_alloc(struct mm_struct *mm, unsigned long addr);
/* Make *pmd point to a page table unless it is set already (PMD lock). 0 or -ENOMEM. */
int pte_alloc(struct mm_struct *mm, pte_t *pmd);

#define STACK_TOP	0x00007ffffffff000UL
#define STACK_SIZE_MAX	(8UL << 20)	/* the stack VMA may grow down this far */
#define MMAP_BASE	(STACK_TOP - STACK_SIZE_MAX - (1UL << 30))
#define MMAP_MIN_ADDR	0x10000UL	/* nothing is mapped below (NULL guard) */
#define STACK_GUARD_GAP	(256UL << PAGE_SHIFT)	/* Linux's stack_guard_gap: no mmap just below a stack */

struct mm_struct *mm_alloc(void);
/*
 * The address space of process pid (0: the caller's), with a reference
 * (mmput it): 0, -ESRCH (no such process), -EINVAL (it has none: exited).
 * For move_pages and migrate_pages on another process (kernel/pgrp.c; the
 * host build has no processes: -ESRCH there, arch/host/mm.c).
 */
int get_process_mm(int pid, struct mm_struct **mmp);
/* Drop a user; the last one frees every page, table and VMA. */
void mmput(struct mm_struct *mm);
/* A reference to the mm_struct, not to the address space (Linux's mmgrab/mmdrop). */
void mmgrab(struct mm_struct *mm);
void mmdrop(struct mm_struct *mm);

/* The first VMA ending after addr (it may start after addr too), or NULL. */
struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr);

/* mmap/munmap/brk on an mm, with mmap_lock held for writing. */
/* file: NULL for anonymous memory (the caller's reference is not taken). */
long do_mmap(struct mm_struct *mm, unsigned long addr, unsigned long len,
	     unsigned long prot, unsigned long flags, struct file *file, unsigned long pgoff);
int do_munmap(struct mm_struct *mm, unsigned long start, unsigned long len);
unsigned long do_brk(struct mm_struct *mm, unsigned long brk);
int do_mprotect(struct mm_struct *mm, unsigned long start, unsigned long len, unsigned long prot);
/* Every advice but MADV_POPULATE_* (mm/madvise.c). */
int do_madvise(struct mm_struct *mm, unsigned long start, unsigned long len, int advice);
/*
 * MADV_POPULATE_READ (write false) and MADV_POPULATE_WRITE: fault every
 * page of [start, start + len) in, mmap_lock NOT held (each fault takes
 * it). 0, or Linux's errno: EINVAL (bad range, or a VMA that does not
 * allow the access), ENOMEM (a hole, no memory), EFAULT (a page past the
 * end of a mapped file), EHWPOISON.
 */
int madvise_populate(struct mm_struct *mm, unsigned long start, unsigned long len, bool write);
/*
 * MADV_HWPOISON: each page of the range (faulted in for reading first)
 * goes through memory_failure as if it had a memory error; a large folio's
 * page moves the walk on by the folio's size, as Linux. MADV_SOFT_OFFLINE
 * needs page migration: -EINVAL, logged. Called without mmap_lock.
 */
int madvise_inject_error(struct mm_struct *mm, unsigned long start, unsigned long len,
			 int advice);
/*
 * mremap (mm/mremap.c, Linux 6.12's rules and errno values): shrink or
 * grow [addr, addr + old_len) in place, or move it, its page-table entries
 * and all, to a new range; returns the address or -errno. mmap_lock held
 * for writing.
 */
long do_mremap(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
	       unsigned long new_len, unsigned long flags, unsigned long new_addr);
/*
 * mincore (mm/mincore.c): one byte per page from addr on, at most pages of
 * them, inside the VMA that holds addr: 1 when the page is resident
 * (mapped, or for a file VMA in the page cache), else 0. Returns how many
 * bytes it wrote, or -ENOMEM when no VMA holds addr. mmap_lock held.
 */
long do_mincore(struct mm_struct *mm, unsigned long addr, unsigned long pages, u8 *vec);
/* msync (mm/msync.c): checks the range and the flags; files live in RAM (nothing to write). */
long do_msync(struct mm_struct *mm, unsigned long start, unsigned long len, unsigned long flags);
/* Add a VMA for [start, end) (exec, the stack). -EEXIST when it overlaps. */
int insert_vma(struct mm_struct *mm, unsigned long start, unsigned long end,
	       unsigned long vm_flags);
/* The same for a file mapping (takes a reference on file). */
int insert_vma_file(struct mm_struct *mm, unsigned long start, unsigned long end,
		    unsigned long vm_flags, struct file *file, unsigned long pgoff);

/* fault flags */
#define FAULT_FLAG_WRITE	0x1
#define FAULT_FLAG_USER		0x2
#define FAULT_FLAG_INSTRUCTION	0x4
#define FAULT_FLAG_UNSHARE	0x400	/* GUP: make a shared anonymous page exclusive, read-only */

/*
 * Resolve a fault at addr: 0, or -EFAULT (no VMA: SIGSEGV with SEGV_MAPERR),
 * -EACCES (a VMA that forbids this access: SEGV_ACCERR), -EIO (a file page
 * beyond the end of the file: SIGBUS), -ENOMEM.
 */
int handle_mm_fault(struct mm_struct *mm, unsigned long addr, unsigned int flags);
/*
 * The same inside vma, mmap_lock held for reading, without the permission
 * and stack checks (GUP's faultin_page made them). FAULT_FLAG_WRITE on a
 * VMA without VM_WRITE (FOLL_FORCE: private mappings only) and
 * FAULT_FLAG_UNSHARE break copy-on-write but map the now exclusive page
 * read-only. Returns as handle_mm_fault.
 */
int handle_mm_fault_locked(struct vm_area_struct *vma, unsigned long addr, unsigned int flags);
/*
 * Unmap the pages of [start, end) inside vma: clear the entries, flush the
 * TLB of every CPU that may cache them (once per batch), then drop the
 * references (mm/zap.c).
 */
void unmap_region(struct vm_area_struct *vma, unsigned long start, unsigned long end);
/* The same for a range that stays mapped (madvise, truncate): MMU_NOTIFY_CLEAR, not UNMAP. */
void zap_page_range_single(struct vm_area_struct *vma, unsigned long start, unsigned long end);
/* Give the entries of [start, end) inside vma the protection of vma->vm_flags (mm/mprotect.c). */
void change_protection(struct vm_area_struct *vma, unsigned long start, unsigned long end);
/* Flush an mm's range on every CPU that may cache it. */
void flush_tlb_mm_range(struct mm_struct *mm, unsigned long start, unsigned long end);

/* Copy an address space for fork: private pages shared copy-on-write (mm/fork_copy.c). */
struct mm_struct *dup_mm(struct mm_struct *old);
/*
 * Test hook: called by fork with the parent's page-table lock held, after
 * a run of anonymous pages at addr was made shared (no longer
 * anon-exclusive) and before the parent's entries lose write access;
 * NULL normally.
 */
extern void (*fork_share_hook)(unsigned long addr);

/* Boot: the shared zero page. */
void zero_page_init(void);

#endif
