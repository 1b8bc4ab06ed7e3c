/*
 * The page cache: each regular file's data lives in order-0 folios kept in
 * its address_space's radix tree by page index (docs/vfs.md). It is mm's,
 * as on Linux: file systems reach it through include/quire/pagemap.h, and
 * it reaches a file system only through mapping->a_ops.
 *
 * The tree holds one reference on each folio; folio->mapping and
 * folio->index say where it belongs. Lookups (filemap_get_folio) take only
 * i_pages_lock, so the fault path may call them under a page-table lock;
 * insertions and removals also hold the file's i_mutex. A new folio is
 * filled by the file system (a_ops->read_folio) before it is inserted, so
 * a lookup never sees one whose contents are not valid yet. A hole has no
 * folio: reads of it see zeroes and writes fill it. Removal (truncate,
 * eviction) clears folio->mapping and drops the tree's reference, so a
 * folio still mapped somewhere outlives its file but is known to be
 * truncated. The folio lock (include/quire/mm.h) is held while a new
 * folio is filled and inserted, while truncate takes one out, and while a
 * fault maps one (mm/memory.c): a fault that holds it sees folio->mapping
 * stay as it checked it until its PTE is in.
 */
#include <quire/pagemap.h>
#include <quire/sched.h>
#include <quire/mm_internal.h>
#include <quire/mm.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/copy_mc.h>
#include <quire/memory-failure.h>

void address_space_init(struct address_space *mapping, struct inode *host)
{
	mapping->host = host;
	mapping->a_ops = NULL;		/* the file system sets its own */
	spin_lock_init(&mapping->i_pages_lock);
	INIT_RADIX_TREE(&mapping->i_pages);
	mapping->nrpages = 0;
	init_rwsem(&mapping->i_mmap_rwsem);
	INIT_LIST_HEAD(&mapping->i_mmap);
}

struct folio *filemap_get_folio(struct address_space *mapping, unsigned long index)
{
	struct folio *folio;

	spin_lock(&mapping->i_pages_lock);
	folio = radix_tree_lookup(&mapping->i_pages, index);
	if (folio)
		folio_get(folio);
	spin_unlock(&mapping->i_pages_lock);
	return folio;
}

int filemap_add_folio(struct address_space *mapping, struct folio *folio, unsigned long index)
{
	int err;

	VM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);	/* nobody sees it half-made */
	folio->mapping = mapping;
	folio->index = index;
	folio_get(folio);			/* the cache's reference */
	spin_lock(&mapping->i_pages_lock);
	err = radix_tree_insert(&mapping->i_pages, index, folio, GFP_KERNEL | __GFP_NOWARN);
	if (!err) {
		mapping->nrpages++;
		atomic_long_inc(&NODE_DATA(folio_nid(folio))->stat[NR_FILE_PAGES]);
	}
	spin_unlock(&mapping->i_pages_lock);
	if (err) {
		folio->mapping = NULL;
		folio_put(folio);
		return err;
	}
	mapping->host->i_blocks += PAGE_SIZE / 512;
	return 0;
}

/*
 * A new folio for index, filled by the file system and then inserted: 0
 * with *foliop referenced, -ENOMEM, -EIO (the inode has no page cache) or
 * read_folio's error. i_mutex held: nobody else inserts meanwhile.
 */
static int filemap_create_folio(struct file *file, struct address_space *mapping,
				unsigned long index, struct folio **foliop)
{
	const struct address_space_operations *a_ops = mapping->a_ops;
	struct folio *folio;
	int err;

	mutex_assert_held(&mapping->host->i_mutex);
	if (!a_ops || !a_ops->read_folio)
		return -EIO;
	folio = folio_alloc(GFP_PAGECACHE | __GFP_NOWARN, 0, NUMA_NO_NODE);
	if (!folio)
		return -ENOMEM;
	/* read_folio finds the file through these; the tree does not hold it yet. */
	folio->mapping = mapping;
	folio->index = index;
	folio_lock(folio);		/* a new folio: never contended */
	err = a_ops->read_folio(file, folio);
	if (!err)
		err = filemap_add_folio(mapping, folio, index);
	folio_unlock(folio);
	if (err) {
		folio->mapping = NULL;
		folio_put(folio);
		return err;
	}
	*foliop = folio;
	return 0;
}

struct folio *filemap_grab_folio(struct address_space *mapping, unsigned long index)
{
	struct folio *folio = filemap_get_folio(mapping, index);

	if (!folio && filemap_create_folio(NULL, mapping, index, &folio))
		return NULL;
	return folio;
}

int filemap_fault_folio(struct file *file, unsigned long index, struct folio **foliop)
{
	struct address_space *mapping = file->f_mapping;
	struct inode *inode = mapping->host;
	int err = 0;

	*foliop = filemap_get_folio(mapping, index);
	if (*foliop)
		return 0;
	mutex_lock(&inode->i_mutex);
	/* The size again, under the lock truncate holds: no folio is made past the end. */
	if (!filemap_index_in_file(inode, index))
		err = -EIO;
	else
		*foliop = filemap_get_folio(mapping, index);	/* made while we waited? */
	if (!err && !*foliop)
		err = filemap_create_folio(file, mapping, index, foliop);
	mutex_unlock(&inode->i_mutex);
	return err;
}

/* The first folio at or after *index, with a reference; NULL when none is left. */
static struct folio *find_next(struct address_space *mapping, unsigned long *index)
{
	struct folio *folio;

	spin_lock(&mapping->i_pages_lock);
	folio = radix_tree_next(&mapping->i_pages, index);
	if (folio)
		folio_get(folio);
	spin_unlock(&mapping->i_pages_lock);
	return folio;
}

/* Take a locked folio out of the cache (it keeps the caller's reference). */
static void filemap_remove_folio(struct address_space *mapping, struct folio *folio)
{
	VM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);
	spin_lock(&mapping->i_pages_lock);
	radix_tree_delete(&mapping->i_pages, folio->index);
	mapping->nrpages--;
	atomic_long_dec(&NODE_DATA(folio_nid(folio))->stat[NR_FILE_PAGES]);
	folio->mapping = NULL;
	spin_unlock(&mapping->i_pages_lock);
	mapping->host->i_blocks -= PAGE_SIZE / 512;
	folio_put(folio);		/* the cache's reference */
}

void truncate_inode_pages(struct address_space *mapping, loff_t start)
{
	unsigned long index = (unsigned long)((start + PAGE_SIZE - 1) >> PAGE_SHIFT);
	unsigned long partial = (unsigned long)start & (PAGE_SIZE - 1);
	unsigned long first;
	struct folio *folio;

	/* The page the new end falls in stays, with the bytes past the end zeroed. */
	if (partial) {
		folio = filemap_get_folio(mapping, (unsigned long)(start >> PAGE_SHIFT));
		if (folio) {
			folio_lock(folio);
			memset((char *)folio_address(folio) + partial, 0, PAGE_SIZE - partial);
			folio_unlock(folio);
			folio_put(folio);
		}
	}
	/* Mappings of the pages that go are zapped first (mm/zap.c). */
	first = index;
	unmap_mapping_pages(mapping, first);
	while ((folio = find_next(mapping, &index))) {
		/* Locked: a fault mapping it, or anyone else holding it, finishes first. */
		folio_lock(folio);
		if (folio->mapping == mapping)
			filemap_remove_folio(mapping, folio);
		folio_unlock(folio);
		folio_put(folio);
		if (index == ~0UL)
			break;
		index++;
	}
	/* Again: a fault that looked before the size changed may have mapped one meanwhile. */
	unmap_mapping_pages(mapping, first);
}

ssize_t filemap_read(struct inode *inode, void *buf, size_t count, loff_t pos)
{
	size_t done = 0;

	if (pos >= inode->i_size)
		return 0;
	if (count > (u64)(inode->i_size - pos))
		count = (size_t)(inode->i_size - pos);
	while (done < count) {
		unsigned long off = (unsigned long)pos & (PAGE_SIZE - 1);
		size_t n = min((size_t)(PAGE_SIZE - off), count - done);
		struct folio *folio = filemap_get_folio(inode->i_mapping,
							(unsigned long)(pos >> PAGE_SHIFT));

		if (folio && PageHWPoison(folio_page(folio, 0))) {
			/* A memory error took the page: what came before it, else EIO (as shmem). */
			folio_put(folio);
			return done ? (ssize_t)done : -EIO;
		} else if (folio) {
			/* Machine-check-safe: a page poisoned now stops here, as above. */
			size_t left = copy_mc_to_kernel((char *)buf + done,
							(char *)folio_address(folio) + off, n);

			if (left)
				memory_failure_queue(folio_pfn(folio), 0);
			folio_put(folio);
			if (left) {
				done += n - left;
				return done ? (ssize_t)done : -EIO;
			}
		} else {
			memset((char *)buf + done, 0, n);	/* a hole */
		}
		done += n;
		pos += (loff_t)n;
	}
	return (ssize_t)done;
}

ssize_t filemap_write(struct inode *inode, const void *buf, size_t count, loff_t pos)
{
	size_t done = 0;

	while (done < count) {
		unsigned long off = (unsigned long)pos & (PAGE_SIZE - 1);
		size_t n = min((size_t)(PAGE_SIZE - off), count - done);
		struct folio *folio = filemap_grab_folio(inode->i_mapping,
							 (unsigned long)(pos >> PAGE_SHIFT));

		if (!folio)
			break;
		if (PageHWPoison(folio_page(folio, 0))) {
			folio_put(folio);
			return done ? (ssize_t)done : -EIO;
		}
		memcpy((char *)folio_address(folio) + off, (const char *)buf + done, n);
		folio_put(folio);
		done += n;
		pos += (loff_t)n;
		if (pos > inode->i_size)
			inode->i_size = pos;
	}
	return done || !count ? (ssize_t)done : -ENOMEM;
}
