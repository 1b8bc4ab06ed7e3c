/*
 * mincore (include/quire/mmap.h, docs/mm/mremap.md), Linux 6.12's rules:
 * one byte per page, bit 0 set when the page is resident: mapped by the
 * page tables (a PTE, a PMD, a page kept under PROT_NONE, the zero page),
 * or, where nothing is mapped in a file VMA (shared anonymous memory
 * included), present in the file's page cache. The other bits are 0.
 * Errors: -EINVAL for an unaligned start, -ENOMEM for a range outside
 * user space or with a hole (the bytes before it are written), -EFAULT
 * for a bad vec.
 */
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/swapops.h>
#include <quire/pagemap.h>
#include <quire/syscalls.h>
#include <quire/uaccess.h>
#include <quire/sched.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>

/* What the page tables say for [addr, end) (one 2 MiB block): 1 mapped, 0 not. */
static void mincore_block(struct mm_struct *mm, unsigned long addr, unsigned long end, u8 *vec)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;
	unsigned long n = (end - addr) >> PAGE_SHIFT;
	spinlock_t *ptl;

	/* A PMD mapping, or a THP being migrated (resident, as a PTE migration entry is). */
	if (pmd && pmd_leaf_or_migration(READ_ONCE(*pmd))) {
		memset(vec, 1, n);
		return;
	}
	pte = pmd ? pte_offset_map_lock(mm, pmd, addr, &ptl) : NULL;
	if (!pte) {
		/* No table; or a PMD mapping came meanwhile, which is resident too. */
		memset(vec, pmd && pmd_leaf_or_migration(READ_ONCE(*pmd)), n);
		return;
	}
	for (unsigned long i = 0; i < n; i++)
		vec[i] = pte_has_page(pte[i]) || is_migration_pte(pte[i]);	/* Linux: resident */
	pte_unmap_unlock(pte, ptl);
}

long do_mincore(struct mm_struct *mm, unsigned long addr, unsigned long pages, u8 *vec)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	unsigned long end, n;

	mmap_assert_locked(mm);
	if (!vma || vma->vm_start > addr)
		return -ENOMEM;
	end = vma->vm_end - addr > pages << PAGE_SHIFT ? addr + (pages << PAGE_SHIFT) : vma->vm_end;
	n = (end - addr) >> PAGE_SHIFT;
	for (unsigned long a = addr; a < end;) {
		unsigned long next = min(ALIGN_DOWN(a, PMD_SIZE) + PMD_SIZE, end);

		mincore_block(mm, a, next, vec + ((a - addr) >> PAGE_SHIFT));
		a = next;
	}
	if (!vma->vm_file)
		return (long)n;
	/* Not mapped here: is the file's page in the page cache? (no page-table lock held) */
	for (unsigned long i = 0; i < n; i++) {
		unsigned long index = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT) + i;
		struct folio *folio;

		if (vec[i])
			continue;
		folio = filemap_get_folio(vma->vm_file->f_mapping, index);
		if (folio) {
			vec[i] = 1;
			folio_put(folio);
		}
	}
	return (long)n;
}

long sys_mincore(u64 start, u64 len, u64 uvec, u64 a3, u64 a4, u64 a5)
{
	struct mm_struct *mm = current->mm;
	unsigned long pages;
	long ret = 0;
	u8 *buf;

	if (start & (PAGE_SIZE - 1))
		return -EINVAL;
	if (!access_ok((void *)start, len))
		return -ENOMEM;
	pages = (len >> PAGE_SHIFT) + ((len & (PAGE_SIZE - 1)) != 0);
	if (!access_ok((void *)uvec, pages))
		return -EFAULT;
	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -EAGAIN;		/* Linux's answer when it has no page for its buffer */
	/* A page of bytes at a time; the copy out runs without mmap_lock (it may fault). */
	while (pages) {
		down_read(&mm->mmap_lock);
		ret = do_mincore(mm, start, min(pages, PAGE_SIZE), buf);
		up_read(&mm->mmap_lock);
		if (ret <= 0)
			break;
		if (copy_to_user((void *)uvec, buf, (unsigned long)ret)) {
			ret = -EFAULT;
			break;
		}
		pages -= (unsigned long)ret;
		uvec += (unsigned long)ret;
		start += (unsigned long)ret << PAGE_SHIFT;
		ret = 0;
	}
	kfree(buf);
	return ret;
}
