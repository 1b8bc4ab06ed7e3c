/*
 * What /proc/<pid>/smaps and /proc/<pid>/pagemap report about an address
 * space (mm/task_mmu.c), in Linux's formats (docs/procfs.md). Both take
 * mmap_lock for reading and the page-table lock while they read entries.
 */
#ifndef QUIRE_TASK_MMU_H
#define QUIRE_TASK_MMU_H

#include <quire/types.h>
#include <quire/fs.h>

struct mm_struct;

/* pagemap: one 64-bit entry per virtual page, at offset (vaddr / 4096) * 8. */
#define PM_ENTRY_BYTES		8
#define PM_PFRAME_BITS		55
#define PM_PFRAME_MASK		((1ULL << PM_PFRAME_BITS) - 1)	/* bits 0-54: the PFN */
#define PM_SOFT_DIRTY		(1ULL << 55)	/* written since clear_refs 4, or a VM_SOFTDIRTY VMA */
#define PM_MMAP_EXCLUSIVE	(1ULL << 56)	/* the page is mapped once, by this mm */
#define PM_FILE			(1ULL << 61)	/* a file page (not anonymous) */
#define PM_SWAP			(1ULL << 62)	/* a swap entry: a hwpoison entry (type | offset << 5) */
#define PM_PRESENT		(1ULL << 63)

/*
 * Fill kbuf with the entries for the bytes [pos, pos + count) of the
 * pagemap file: the bytes written, 0 at or past the end of the user
 * address range, -EINVAL when pos or count is not a multiple of 8.
 * Unmapped pages read as 0.
 */
ssize_t pagemap_read(struct mm_struct *mm, void *kbuf, size_t count, loff_t pos);

/* What a write to /proc/<pid>/clear_refs resets (Linux's numbers; mm/clear_refs.c). */
enum clear_refs_type {
	CLEAR_REFS_ALL = 1,		/* the accessed bit of every mapped page */
	CLEAR_REFS_ANON,		/* ... of anonymous VMAs */
	CLEAR_REFS_MAPPED,		/* ... of file VMAs */
	CLEAR_REFS_SOFT_DIRTY,		/* soft-dirty, write-protecting what it clears */
	CLEAR_REFS_MM_HIWATER_RSS,	/* the peak RSS: not kept here, -ENOSYS */
	CLEAR_REFS_LAST,
};
/* 0, or -EINVAL for a number out of range, -ENOSYS for 5. Takes mmap_lock. */
int clear_refs(struct mm_struct *mm, enum clear_refs_type type);

/*
 * The smaps text of every VMA into buf (size bytes, NUL-terminated): the
 * length written; size - 1 when it was cut (the caller retries larger).
 */
ssize_t smaps_show(struct mm_struct *mm, char *buf, size_t size);
/* /proc/self/maps: each VMA's smaps header line alone (Linux's format). */
ssize_t maps_show(struct mm_struct *mm, char *buf, size_t size);
/*
 * /proc/<pid>/numa_maps: a line per VMA in Linux's format, its policy
 * (task_pol, the file's task's, where the VMA has none) and its present
 * pages per node.
 */
struct mempolicy;
ssize_t numa_maps_show(struct mm_struct *mm, const struct mempolicy *task_pol, char *buf,
		       size_t size);

/*
 * /proc/kpageflags: 8 bytes per page frame at offset pfn * 8, Linux's KPF_*
 * bits (those Quire has: locked, referenced, uptodate, dirty, slab, buddy,
 * mmap, anon, swapbacked, compound head/tail, hwpoison, nopage, thp,
 * zero_page); the bytes written, 0 past the last frame, -EINVAL when pos or
 * count is not a multiple of 8.
 */
ssize_t kpageflags_read(void *kbuf, size_t count, loff_t pos);

/*
 * What /proc/<pid>/status says of an address space, in bytes: VmSize (every
 * VMA), VmData (private writable, not stack), VmStk (stack), and the pages
 * mapped now, counted from the page tables as smaps counts Rss (the zero
 * page left out): RssAnon (anonymous), RssFile (file pages: Quire's shared
 * memory is a RAM file, so Linux's RssShmem is in it).
 */
struct task_mem {
	unsigned long size, data, stack, rss_anon, rss_file;
};
void task_mem_counts(struct mm_struct *mm, struct task_mem *tm);

#endif
