/*
 * The page cache (fs/filemap.c): each regular file's data lives in folios
 * kept in its address_space by page index. Linux's names. What the fault
 * path and file-backed mmap need is filemap_get_folio: a referenced folio
 * whose folio->mapping is the address_space and folio->index its page index.
 */
#ifndef QUIRE_PAGEMAP_H
#define QUIRE_PAGEMAP_H

#include <quire/fs.h>

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
 * The folio at index, allocating a zeroed one for a hole; referenced like
 * filemap_get_folio. i_mutex held (it changes the file). NULL: -ENOMEM.
 */
struct folio *filemap_grab_folio(struct address_space *mapping, unsigned long index);

/* Put a new folio in the cache at index: 0, -EEXIST, -ENOMEM. The cache takes its own reference. */
int filemap_add_folio(struct address_space *mapping, struct folio *folio, unsigned long index);

/* Drop every folio from index start on (truncate); i_mutex held. */
void truncate_inode_pages(struct address_space *mapping, loff_t start);

/* Read and write through the cache (i_mutex held by the caller). */
ssize_t filemap_read(struct inode *inode, void *buf, size_t count, loff_t pos);
ssize_t filemap_write(struct inode *inode, const void *buf, size_t count, loff_t pos);

#endif
