/*
 * getdents64: a directory's entries as struct linux_dirent64 records.
 * Each record's d_off is the position of the entry after it, so lseek to
 * any d_off resumes the listing there. A buffer too small for even one
 * record is EINVAL; a removed directory lists as ENOENT, as on Linux.
 */
#include <quire/fs.h>
#include <quire/string.h>
#include <quire/errno.h>
#include "internal.h"

bool dir_emit_dots(struct inode *dir, struct dir_context *ctx)
{
	if (ctx->pos == 0) {
		if (!ctx->actor(ctx, ".", 1, 1, dir->i_ino, DT_DIR))
			return false;
		ctx->pos = 1;
	}
	if (ctx->pos == 1) {
		if (!ctx->actor(ctx, "..", 2, 2, dir->i_parent->i_ino, DT_DIR))
			return false;
		ctx->pos = 2;
	}
	return true;
}

loff_t dir_position_llseek(struct file *f, loff_t offset, int whence)
{
	if (whence != SEEK_SET && whence != SEEK_CUR)
		return -EINVAL;
	return generic_file_llseek(f, offset, whence);
}

struct getdents_ctx {
	struct dir_context ctx;
	char *buf;
	size_t count;		/* room left */
	size_t used;
	int error;
};

static bool filldir64(struct dir_context *ctx, const char *name, size_t len,
		      loff_t next_pos, u64 ino, unsigned int d_type)
{
	struct getdents_ctx *g = container_of(ctx, struct getdents_ctx, ctx);
	size_t reclen = ALIGN_UP(offsetof(struct linux_dirent64, d_name) + len + 1, 8);
	struct linux_dirent64 *d;

	if (reclen > g->count) {
		if (!g->used)
			g->error = -EINVAL;
		return false;
	}
	d = (struct linux_dirent64 *)(g->buf + g->used);
	d->d_ino = ino;
	d->d_off = next_pos;
	d->d_reclen = (u16)reclen;
	d->d_type = (u8)d_type;
	memcpy(d->d_name, name, len);
	memset(d->d_name + len, 0, reclen - offsetof(struct linux_dirent64, d_name) - len);
	g->used += reclen;
	g->count -= reclen;
	return true;
}

ssize_t vfs_getdents64(struct file *f, void *buf, size_t count)
{
	struct inode *dir = file_inode(f);
	struct getdents_ctx g = { .ctx.actor = filldir64, .buf = buf, .count = count };
	int err = 0;

	if (!S_ISDIR(dir->i_mode) || !f->f_op || !f->f_op->iterate)
		return -ENOTDIR;
	mutex_lock(&f->f_pos_lock);
	mutex_lock(&vfs_ns_mutex);
	if (READ_ONCE(dir->i_nlink) == 0) {
		err = -ENOENT;
	} else {
		g.ctx.pos = f->f_pos;
		err = f->f_op->iterate(f, &g.ctx);
		f->f_pos = g.ctx.pos;
	}
	mutex_unlock(&vfs_ns_mutex);
	mutex_unlock(&f->f_pos_lock);
	if (err)
		return err;
	if (g.error)
		return g.error;
	return (ssize_t)g.used;
}
