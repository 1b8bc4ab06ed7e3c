/*
 * kmalloc: thirteen size classes (8 .. 8192 bytes), each a kmem_cache, and
 * folios from the page allocator above that. kfree tells the two apart by
 * the head page: PG_slab for a slab object; for a large kmalloc, a folio
 * whose private word holds KMALLOC_LARGE_MAGIC (struct page has no
 * PG_large_kmalloc bit yet).
 */
#define pr_fmt(fmt) "slab: " fmt
#include "slab.h"
#include <quire/kernel.h>
#include <quire/numa.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/stacktrace.h>
#include <quire/string.h>

#define KMALLOC_LARGE_MAGIC	0x6b6d616c6c6f63UL	/* "kmalloc" */

static struct kmem_cache kmalloc_caches[NR_KMALLOC_CACHES];
static char kmalloc_names[NR_KMALLOC_CACHES][KMEM_CACHE_NAME_LEN];

static const unsigned int kmalloc_sizes[NR_KMALLOC_CACHES] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
};

/* Class index for sizes 1..192, by (size - 1) / 8: the two odd classes fit here. */
static const u8 small_index[24] = {
	0, 1, 2, 2, 3, 3, 3, 3,		/*   1..64  */
	4, 4, 4, 4, 5, 5, 5, 5,		/*  65..128 */
	6, 6, 6, 6, 6, 6, 6, 6,		/* 129..192 */
};

/* size is 1..KMALLOC_MAX_CACHE_SIZE. */
static unsigned int kmalloc_index(size_t size)
{
	if (size <= 192)
		return small_index[(size - 1) / 8];
	/* 193..256 -> 7 (256), 257..512 -> 8, ... 4097..8192 -> 12. */
	return (unsigned int)slab_fls(size - 1) - 1;
}

struct kmem_cache *kmalloc_slab(size_t size)
{
	if (!size || size > KMALLOC_MAX_CACHE_SIZE || !slab_is_available())
		return NULL;
	return &kmalloc_caches[kmalloc_index(size)];
}

void kmalloc_init_caches(void)
{
	for (unsigned int i = 0; i < NR_KMALLOC_CACHES; i++) {
		unsigned int size = kmalloc_sizes[i];
		struct kmem_cache *s = &kmalloc_caches[i];

		/* Linux's names: kmalloc-96, kmalloc-1k, kmalloc-8k. */
		if (size >= 1024)
			snprintf(kmalloc_names[i], KMEM_CACHE_NAME_LEN, "kmalloc-%uk", size / 1024);
		else
			snprintf(kmalloc_names[i], KMEM_CACHE_NAME_LEN, "kmalloc-%u", size);
		/* Aligned to the largest power of two dividing the size: 96 -> 32. */
		if (kmem_cache_setup(s, kmalloc_names[i], size, size & -size, 0))
			panic("kmalloc_init_caches: cannot set up %s", kmalloc_names[i]);
		s->is_static = true;
	}
}

struct page *slab_virt_to_head(const void *p)
{
	unsigned long pfn = PHYS_PFN(__pa(p));

	if (!pfn_valid(pfn))
		return NULL;
	return compound_head(pfn_to_page(pfn));
}

/* ---- large kmalloc: a folio of its own ---- */

static void *kmalloc_large(size_t size, gfp_t gfp, int nid)
{
	unsigned int order = kmalloc_order(size);
	struct folio *folio;
	int home;

	if (size > KMALLOC_MAX_SIZE) {
		if (!(gfp & __GFP_NOWARN)) {
			pr_warn("kmalloc of %zu bytes: more than the %lu MiB maximum\n",
				size, KMALLOC_MAX_SIZE >> 20);
			dump_stack();
		}
		return NULL;
	}
	home = slab_home_node(nid, gfp);
	if (home < 0)
		return NULL;
	gfp &= __GFP_ZERO | __GFP_THISNODE | __GFP_NOWARN | __GFP_FAIL;
	/*
	 * The node asked for first, even a slow-tier one (the page allocator's
	 * own fallback would skip it for kernel memory); then anywhere.
	 */
	if (gfp & __GFP_THISNODE) {
		folio = folio_alloc(gfp, order, home);
	} else {
		folio = folio_alloc(gfp | __GFP_THISNODE | __GFP_NOWARN, order, home);
		if (!folio)
			folio = folio_alloc(gfp, order, home);
	}
	if (!folio)
		return NULL;
	folio->private = KMALLOC_LARGE_MAGIC;
	atomic_long_add((long)folio_nr_pages(folio),
			&NODE_DATA(folio_nid(folio))->stat[NR_SLAB_PAGES]);
	return folio_address(folio);
}

static void kfree_large(struct folio *folio)
{
	atomic_long_sub((long)folio_nr_pages(folio),
			&NODE_DATA(folio_nid(folio))->stat[NR_SLAB_PAGES]);
	folio->private = 0;
	folio_put(folio);
}

/* ---- the kmalloc API ---- */

static void *__kmalloc(size_t size, gfp_t gfp, int nid, unsigned long ip)
{
	if (!size)
		return ZERO_SIZE_PTR;
	if (size > KMALLOC_MAX_CACHE_SIZE)
		return kmalloc_large(size, gfp, nid);
	if (!slab_is_available()) {
		pr_err("kmalloc(%zu) before kmem_cache_init\n", size);
		dump_stack();
		return NULL;
	}
	return slab_alloc_node(&kmalloc_caches[kmalloc_index(size)], gfp, nid, size, ip);
}

void *kmalloc(size_t size, gfp_t gfp)
{
	return __kmalloc(size, gfp, NUMA_NO_NODE, _RET_IP_);
}

void *kmalloc_node(size_t size, gfp_t gfp, int nid)
{
	return __kmalloc(size, gfp, nid, _RET_IP_);
}

void kfree(const void *p)
{
	struct page *head;
	struct folio *folio;

	if (ZERO_OR_NULL_PTR(p))
		return;
	head = slab_virt_to_head(p);
	if (!head) {
		slab_report_invalid_free(NULL, p, "not memory the page allocator manages");
		return;
	}
	if (PageSlab(head)) {
		struct kmem_cache *s = head->slab_cache;

		if (obj_index(s, head, p) < 0) {
			slab_report_invalid_free(s, p, "not the start of an object");
			return;
		}
		slab_free(s, head, (void *)p, _RET_IP_);
		return;
	}
	folio = (struct folio *)head;
	if (folio->private != KMALLOC_LARGE_MAGIC) {
		slab_report_invalid_free(NULL, p, "not from kmalloc (or already freed)");
		return;
	}
	if (p != folio_address(folio)) {
		slab_report_invalid_free(NULL, p, "inside a large kmalloc, not its start");
		return;
	}
	kfree_large(folio);
}

size_t ksize(const void *p)
{
	struct page *head;

	if (ZERO_OR_NULL_PTR(p))
		return 0;
	head = slab_virt_to_head(p);
	if (head && PageSlab(head)) {
		struct kmem_cache *s = head->slab_cache;

		if (obj_index(s, head, p) < 0)
			return 0;
		if (s->debug)
			slab_debug_grant_full(s, (void *)p);
		return s->object_size;
	}
	if (head && ((struct folio *)head)->private == KMALLOC_LARGE_MAGIC)
		return folio_size((struct folio *)head);
	return 0;
}

size_t kmalloc_size_roundup(size_t size)
{
	if (!size)
		return 0;
	if (size <= KMALLOC_MAX_CACHE_SIZE)
		return kmalloc_sizes[kmalloc_index(size)];
	if (size <= KMALLOC_MAX_SIZE)
		return PAGE_SIZE << kmalloc_order(size);
	return size;
}
