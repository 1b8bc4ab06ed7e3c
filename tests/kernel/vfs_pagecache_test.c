/*
 * The vfs suite, page cache: a regular file's data lives in order-0 folios
 * indexed by page, found by filemap_get_folio with folio->mapping and
 * folio->index set; truncation and the file's last reference free them,
 * and every node's free page count comes back to where it started.
 */
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/mm.h>
#include <quire/string.h>
#include <quire/errno.h>
#include "vfs_test.h"

static u8 fill(unsigned long index, size_t i)
{
	return (u8)(index * 37 + i * 11 + 3);
}

/* Open dir/name for read and write, creating it; the inode comes with it. */
static struct file *open_rw(struct ktest *t, struct inode *dir, const char *name)
{
	struct file *f = NULL;

	KEXPECT_EQ(t, vfs_open(dir, name, O_RDWR | O_CREAT, 0600, &f), 0);
	return f;
}

void pagecache_three_pages(struct ktest *t)
{
	static u8 buf[3 * 4096];
	struct address_space *mapping;
	struct vt_mem before;
	struct inode *dir;
	struct file *f;

	vt_mem_snapshot(&before);
	dir = vt_tmpdir("pc3");
	KASSERT_TRUE(t, dir != NULL);
	f = open_rw(t, dir, "f");
	KASSERT_TRUE(t, f != NULL);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = fill(i / 4096, i % 4096);
	KEXPECT_EQ(t, vfs_write(f, buf, sizeof(buf), NULL), sizeof(buf));
	mapping = f->f_mapping;
	KEXPECT_PTR_EQ(t, mapping, &file_inode(f)->i_data);
	KEXPECT_EQ(t, mapping->nrpages, 3);
	KEXPECT_EQ(t, file_inode(f)->i_blocks, 24);
	for (unsigned long i = 0; i < 3; i++) {
		struct folio *folio = filemap_get_folio(mapping, i);

		KASSERT_TRUE(t, folio != NULL);
		KEXPECT_PTR_EQ(t, folio->mapping, mapping);
		KEXPECT_EQ(t, folio->index, i);
		KEXPECT_EQ(t, folio_order(folio), 0);
		KEXPECT_EQ(t, folio_ref_count(folio), 2);	/* the cache's and ours */
		KEXPECT_TRUE(t, test_page_flag((struct page *)folio, PG_uptodate));
		KEXPECT_TRUE(t, test_page_flag((struct page *)folio, PG_user_alloc));
		KEXPECT_TRUE(t, node_online(folio_nid(folio)));
		KEXPECT_EQ(t, memcmp(folio_address(folio), buf + i * 4096, 4096), 0);
		folio_put(folio);
	}
	KEXPECT_TRUE(t, filemap_get_folio(mapping, 3) == NULL);
	KEXPECT_EQ(t, vfs_unlink(dir, "f"), 0);
	KEXPECT_EQ(t, mapping->nrpages, 3);	/* still open */
	fput(f);				/* the last reference: the folios go */
	vt_done(dir, "pc3");
	vt_mem_expect_same(t, &before);
}

void pagecache_truncate_and_holes(struct ktest *t)
{
	static u8 buf[4 * 4096];
	struct address_space *mapping;
	struct vt_mem before;
	struct folio *folio;
	struct inode *dir;
	struct file *f;
	loff_t pos;
	bool zero;

	vt_mem_snapshot(&before);
	dir = vt_tmpdir("pctrunc");
	KASSERT_TRUE(t, dir != NULL);
	f = open_rw(t, dir, "f");
	KASSERT_TRUE(t, f != NULL);
	mapping = f->f_mapping;
	/* One byte far out: a single folio, the rest is a hole of zeroes. */
	pos = 5 * 4096 + 10;
	KEXPECT_EQ(t, vfs_write(f, "Z", 1, &pos), 1);
	KEXPECT_EQ(t, file_inode(f)->i_size, 5 * 4096 + 11);
	KEXPECT_EQ(t, mapping->nrpages, 1);
	KEXPECT_EQ(t, file_inode(f)->i_blocks, 8);
	pos = 0;
	memset(buf, 0xee, sizeof(buf));
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), &pos), sizeof(buf));
	zero = true;
	for (size_t i = 0; i < sizeof(buf); i++)
		zero &= buf[i] == 0;
	KEXPECT_TRUE(t, zero);
	KEXPECT_EQ(t, mapping->nrpages, 1);	/* reading a hole allocates nothing */
	KEXPECT_EQ(t, vfs_llseek(f, 0, SEEK_DATA), 0);
	KEXPECT_EQ(t, vfs_llseek(f, 0, SEEK_HOLE), 5 * 4096 + 11);
	KEXPECT_EQ(t, vfs_llseek(f, 5 * 4096 + 11, SEEK_DATA), -ENXIO);

	/* Fill pages 0-3, then cut in the middle of page 1. */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = fill(i / 4096, i % 4096);
	pos = 0;
	KEXPECT_EQ(t, vfs_write(f, buf, sizeof(buf), &pos), sizeof(buf));
	KEXPECT_EQ(t, mapping->nrpages, 5);
	KEXPECT_EQ(t, vfs_ftruncate(f, 4096 + 100), 0);
	KEXPECT_EQ(t, mapping->nrpages, 2);
	KEXPECT_EQ(t, file_inode(f)->i_blocks, 16);
	folio = filemap_get_folio(mapping, 1);
	KASSERT_TRUE(t, folio != NULL);
	KEXPECT_EQ(t, ((u8 *)folio_address(folio))[99], fill(1, 99));
	KEXPECT_EQ(t, ((u8 *)folio_address(folio))[100], 0);	/* past the end: zeroed */
	KEXPECT_EQ(t, ((u8 *)folio_address(folio))[4095], 0);
	folio_put(folio);
	/* Growing again shows zeroes where the old data was. */
	KEXPECT_EQ(t, vfs_ftruncate(f, 3 * 4096), 0);
	KEXPECT_EQ(t, mapping->nrpages, 2);
	pos = 4096 + 96;
	KEXPECT_EQ(t, vfs_read(f, buf, 8, &pos), 8);
	KEXPECT_EQ(t, buf[3], fill(1, 99));
	KEXPECT_EQ(t, buf[4] | buf[7], 0);
	pos = 2 * 4096;
	KEXPECT_EQ(t, vfs_read(f, buf, 4096, &pos), 4096);
	KEXPECT_EQ(t, buf[0] | buf[4095], 0);
	KEXPECT_EQ(t, vfs_ftruncate(f, 0), 0);
	KEXPECT_EQ(t, mapping->nrpages, 0);
	KEXPECT_TRUE(t, radix_tree_empty(&mapping->i_pages));
	fput(f);
	vt_done(dir, "pctrunc");
	vt_mem_expect_same(t, &before);
}

void pagecache_far_offsets(struct ktest *t)
{
	struct vt_mem before;
	struct inode *dir;
	struct file *f;
	long nodes;
	char buf[4];
	loff_t pos;

	vt_mem_snapshot(&before);
	dir = vt_tmpdir("pcfar");
	KASSERT_TRUE(t, dir != NULL);
	f = open_rw(t, dir, "f");
	KASSERT_TRUE(t, f != NULL);
	nodes = READ_ONCE(radix_tree_nodes);
	/* Page index 2^28: a tree five levels deep. */
	pos = (1LL << 40) + 7;
	KEXPECT_EQ(t, vfs_write(f, "far", 3, &pos), 3);
	KEXPECT_EQ(t, READ_ONCE(radix_tree_nodes) - nodes, 5);
	pos = (1LL << 40) + 6;
	KEXPECT_EQ(t, vfs_read(f, buf, 4, &pos), 4);
	KEXPECT_EQ(t, memcmp(buf, "\0far", 4), 0);
	/* The largest offset: a write there stops at MAX_LFS_FILESIZE. */
	pos = MAX_LFS_FILESIZE - 1;
	KEXPECT_EQ(t, vfs_write(f, "ab", 2, &pos), 1);
	KEXPECT_EQ(t, file_inode(f)->i_size, MAX_LFS_FILESIZE);
	KEXPECT_EQ(t, vfs_write(f, "c", 1, &pos), -EFBIG);
	KEXPECT_EQ(t, f->f_mapping->nrpages, 2);
	KEXPECT_EQ(t, vfs_llseek(f, 1, SEEK_END), -EINVAL);	/* would overflow */
	KEXPECT_EQ(t, vfs_ftruncate(f, 0), 0);
	KEXPECT_EQ(t, READ_ONCE(radix_tree_nodes), nodes);
	fput(f);
	vt_done(dir, "pcfar");
	vt_mem_expect_same(t, &before);
}

/* A folio someone still holds (a future mapping) survives its file, marked truncated. */
void pagecache_folio_outlives_file(struct ktest *t)
{
	struct vt_mem before;
	struct folio *folio;
	struct inode *dir;
	struct file *f;

	vt_mem_snapshot(&before);
	dir = vt_tmpdir("pcheld");
	KASSERT_TRUE(t, dir != NULL);
	f = open_rw(t, dir, "f");
	KASSERT_TRUE(t, f != NULL);
	KEXPECT_EQ(t, vfs_write(f, "kept", 4, NULL), 4);
	folio = filemap_get_folio(f->f_mapping, 0);
	KASSERT_TRUE(t, folio != NULL);
	KEXPECT_EQ(t, vfs_unlink(dir, "f"), 0);
	fput(f);
	KEXPECT_TRUE(t, folio->mapping == NULL);
	KEXPECT_EQ(t, folio_ref_count(folio), 1);
	KEXPECT_EQ(t, memcmp(folio_address(folio), "kept", 4), 0);
	folio_put(folio);
	vt_done(dir, "pcheld");
	vt_mem_expect_same(t, &before);
}
