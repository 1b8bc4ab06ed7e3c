/*
 * The page cache (mm/filemap.c): each regular file's data lives in folios
 * kept in its address_space by page index. Linux's names. What the fault
 * path and file-backed mmap need is filemap_get_folio: a referenced folio
 * whose folio->mapping is the address_space and folio->index its page index.
 * File systems call the functions below; the cache calls back into a file
 * system only through mapping->a_ops (include/quire/fs.h).
 */
#ifndef QUIRE_PAGEMAP_H
#define QUIRE_PAGEMAP_H

#include <quire/fs.h>
#include <asm/page.h>

/* GFP for page-cache folios: user memory, may live on the slow tier. */
#define GFP_PAGECACHE	GFP_HIGHUSER_MOVABLE

void address_space_init(struct address_space *mapping, struct inode *host);

/*
 * The folio at index, with a reference the caller drops with folio_put,
 * or NULL (a hole, or past the end of the file). Takes i_pages_lock only:
 * callable under a page-table lock.
 */
struct folio *filemap_get_folio(struct address_space *mapping, unsigned long index);

/*
 * The folio at index, creating one when there is none: filled by the file
 * system's a_ops->read_folio (ramfs: zeroes), then inserted. Referenced
 * like filemap_get_folio. i_mutex held (it changes the file). NULL: no
 * memory, or the inode has no page cache or could not fill the folio.
 */
struct folio *filemap_grab_folio(struct address_space *mapping, unsigned long index);

/*
 * The folio a fault at page index of a file mapping needs: found, or made
 * under i_mutex and filled by the file system (a_ops->read_folio, which
 * gets file). 0 with *foliop referenced like filemap_get_folio; -EIO when
 * index is past the end of the file (SIGBUS) or nothing can fill it;
 * -ENOMEM. mmap_lock may be held; no spinlock.
 */
int filemap_fault_folio(struct file *file, unsigned long index, struct folio **foliop);

/*
 * Is page index inside the file? The size is read afresh each time:
 * truncate sets it before it drops pages, so a check after taking a folio
 * (under the page-table lock) sees a racing truncate.
 */
static inline bool filemap_index_in_file(struct inode *inode, unsigned long index)
{
	return (loff_t)index << PAGE_SHIFT < i_size_read(inode);
}

/* Put a new folio in the cache at index: 0, -EEXIST, -ENOMEM. The cache takes its own reference. */
int filemap_add_folio(struct address_space *mapping, struct folio *folio, unsigned long index);

/* Drop every folio from index start on (truncate); i_mutex held. */
void truncate_inode_pages(struct address_space *mapping, loff_t start);

/*
 * Read and write through the cache (i_mutex held by the caller). A read
 * finds no folio only in a hole, which reads as zeroes and allocates
 * nothing: the file systems behind the cache (ramfs, shmem's RAM files)
 * keep all their data in it. A write creates folios with filemap_grab_folio.
 */
ssize_t filemap_read(struct inode *inode, void *buf, size_t count, loff_t pos);
ssize_t filemap_write(struct inode *inode, const void *buf, size_t count, loff_t pos);

#endif
