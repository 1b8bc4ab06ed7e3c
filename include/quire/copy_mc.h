/*
 * Machine-check-safe copies (Linux's copy_mc_* family). A read of poisoned
 * memory raises a machine check; inside these copies it ends the copy
 * instead of the kernel, and the caller learns how far it got.
 *
 *   copy_mc_to_kernel(dst, src, len)	bytes NOT copied (0: all)
 *   copy_mc_to_user(udst, src, len)	the same, to user memory (also short
 *					on a bad user pointer)
 *   copy_mc_highpages(to, from, nr)	nr pages in one copy: 0, or
 *					-EHWPOISON with the poisoned source
 *					page queued for memory_failure()
 *   folio_mc_copy(dst, src)		a whole folio the same way
 *   copy_mc_user_highpage(to, from,	one user page (copy-on-write, fork):
 *			vaddr, vma)	bytes NOT copied, the source queued
 *					for memory_failure() when short
 *
 * The body is rep movsq (copy_mc=movsq, the default) or rep movsb
 * (copy_mc=movsb), chosen at boot for the benchmark. copy_mc_batch=0 makes
 * folio_mc_copy copy page by page, one call each, for comparison.
 *
 * The test hook: copy_mc_test_poison_page(page) makes the page's direct-
 * map address read like poisoned memory, so that a copy stops there exactly
 * as a machine check would stop it: same fixup, same return value, same
 * queueing. On x86 the page is taken out of the direct map, and the page
 * fault a machine-check-safe copy takes there is handled as a machine
 * check; arch/host's C copy checks the address itself. One page at a time;
 * copy_mc_test_unpoison() gives it back.
 */
#ifndef QUIRE_COPY_MC_H
#define QUIRE_COPY_MC_H

#include <quire/types.h>

struct page;
struct folio;
struct vm_area_struct;

/* The arch's copies (arch/x86_64/lib/copy_mc.S, arch/host/copy_mc.c). */
unsigned long __copy_mc_movsq(void *dst, const void *src, size_t len);
unsigned long __copy_mc_movsb(void *dst, const void *src, size_t len);
unsigned long __copy_mc_to_user(void *udst, const void *src, size_t len);	/* x86 only */

enum copy_mc_body { COPY_MC_MOVSQ, COPY_MC_MOVSB };
extern enum copy_mc_body copy_mc_body;
extern bool copy_mc_batching;

static inline unsigned long copy_mc_to_kernel(void *dst, const void *src, size_t len)
{
	return copy_mc_body == COPY_MC_MOVSB ? __copy_mc_movsb(dst, src, len)
					     : __copy_mc_movsq(dst, src, len);
}

unsigned long copy_mc_to_user(void *udst, const void *src, size_t len);

int copy_mc_highpages(struct page *to, struct page *from, unsigned int nr);
int folio_mc_copy(struct folio *dst, struct folio *src);
int copy_mc_user_highpage(struct page *to, struct page *from, unsigned long vaddr,
			  struct vm_area_struct *vma);

/* Test hook (see above): 0, or -ENOMEM/-EINVAL from the direct map. */
int copy_mc_test_poison_page(struct page *page);
void copy_mc_test_unpoison(void);
bool copy_mc_test_poisoned(unsigned long addr);

#endif
