/*
 * Copying folios so that a poisoned source page ends the copy, not the
 * kernel (include/quire/copy_mc.h, docs/mm/copy_mc.md).
 *
 * copy_mc_highpages() copies a run of pages with one machine-check-safe
 * copy through the direct map, instead of one call per page: the string
 * instruction's start-up cost is paid once. Quire's kernel is preemptive
 * and rep movs is interruptible, so a long copy needs no reschedule points
 * of its own (Linux's non-preemptible kernels cut it into 32 MiB pieces).
 */
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <quire/cmdline.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/memory-failure.h>

enum copy_mc_body copy_mc_body = COPY_MC_MOVSQ;

static int copy_mc_parse(const char *value)
{
	if (value && !strcmp(value, "movsq"))
		copy_mc_body = COPY_MC_MOVSQ;
	else if (value && !strcmp(value, "movsb"))
		copy_mc_body = COPY_MC_MOVSB;
	else
		return -EINVAL;
	return 0;
}
CMDLINE_CALL("copy_mc", copy_mc_parse,
	     "machine-check-safe copy body: movsq (default) or movsb");

bool copy_mc_batching = true;
CMDLINE_BOOL("copy_mc_batch", copy_mc_batching,
	     "copy a folio with one machine-check-safe copy (0: one per page)");

atomic_long_t copy_mc_calls;

/*
 * Copy nr pages from `from` to `to` (each a run of consecutive frames) in
 * one copy. 0, or -EHWPOISON when a source page is poisoned: that page is
 * queued for memory_failure() and the destination holds a partial copy.
 */
int copy_mc_highpages(struct page *to, struct page *from, unsigned int nr)
{
	size_t len = (size_t)nr * PAGE_SIZE;
	unsigned long left;

	atomic_long_inc(&copy_mc_calls);
	left = copy_mc_to_kernel(page_address(to), page_address(from), len);
	if (!left)
		return 0;
	memory_failure_queue(page_to_pfn(from) + (len - left) / PAGE_SIZE, 0);
	return -EHWPOISON;
}

/*
 * One page of user data for copy-on-write and fork (Linux's
 * copy_mc_user_highpage): the bytes NOT copied, 0 when all were. On a
 * short copy the source frame is queued for memory_failure(), and the
 * caller fails its fault with -EHWPOISON (SIGBUS BUS_MCEERR_AR for the
 * faulting task). vaddr and vma are for architectures with aliasing
 * caches; x86 has none.
 */
int copy_mc_user_highpage(struct page *to, struct page *from, unsigned long vaddr,
			  struct vm_area_struct *vma)
{
	unsigned long left;

	(void)vaddr;
	(void)vma;
	atomic_long_inc(&copy_mc_calls);
	left = copy_mc_to_kernel(page_address(to), page_address(from), PAGE_SIZE);
	if (left)
		memory_failure_queue(page_to_pfn(from), 0);
	return (int)left;
}

/* Copy a whole folio: one copy, or one per page with copy_mc_batch=0. */
int folio_mc_copy(struct folio *dst, struct folio *src)
{
	unsigned long nr = folio_nr_pages(src);

	if (copy_mc_batching)
		return copy_mc_highpages(folio_page(dst, 0), folio_page(src, 0), (unsigned int)nr);
	for (unsigned long i = 0; i < nr; i++) {
		int err = copy_mc_highpages(folio_page(dst, i), folio_page(src, i), 1);

		if (err)
			return err;
	}
	return 0;
}
