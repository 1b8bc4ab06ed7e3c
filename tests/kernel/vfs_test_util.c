/* Helpers of the vfs suite: scratch directories, files, memory snapshots. */
#include <quire/fs.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include "vfs_test.h"

void vt_rm_rf(struct inode *cwd, const char *path)
{
	struct file *f;
	char buf[512], sub[256];
	ssize_t n;

	if (!vfs_unlink(cwd, path) || vfs_open(cwd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &f))
		return;
	while ((n = vfs_getdents64(f, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, d->d_name);
			vt_rm_rf(cwd, sub);
		}
	}	/* one pass: removing entries does not disturb a listing */
	fput(f);
	vfs_rmdir(cwd, path);
}

struct inode *vt_tmpdir(const char *name)
{
	char path[64];
	struct inode *dir;

	snprintf(path, sizeof(path), "/ktest-%s", name);
	vt_rm_rf(NULL, path);
	if (vfs_mkdir(NULL, path, 0755) || vfs_lookup(NULL, path, &dir))
		return NULL;
	return dir;
}

void vt_done(struct inode *dir, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/ktest-%s", name);
	iput(dir);
	vt_rm_rf(NULL, path);
}

int vt_write_file(struct inode *cwd, const char *path, const void *buf, size_t len)
{
	struct file *f;
	ssize_t n;
	int err = vfs_open(cwd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, &f);

	if (err)
		return err;
	n = vfs_write(f, buf, len, NULL);
	fput(f);
	return n < 0 ? (int)n : (size_t)n == len ? 0 : -EIO;
}

void vt_mem_snapshot(struct vt_mem *m)
{
	int nid;

	slab_shrink_all();
	for_each_online_node(nid)
		m->free[nid] = node_page_state(nid, NR_FREE_PAGES);
	m->inodes = READ_ONCE(nr_inodes);
	m->radix_nodes = READ_ONCE(radix_tree_nodes);
}

void vt_mem_expect_same(struct ktest *t, const struct vt_mem *before)
{
	struct vt_mem now;
	int nid;

	vt_mem_snapshot(&now);
	for_each_online_node(nid)
		KEXPECT_EQ(t, now.free[nid], before->free[nid]);
	KEXPECT_EQ(t, now.inodes, before->inodes);
	KEXPECT_EQ(t, now.radix_nodes, before->radix_nodes);
	KEXPECT_EQ(t, mm_verify(), 0);
}
