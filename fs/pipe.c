/*
 * Pipes: a one-page ring buffer between a read end and a write end, each a
 * struct file on one anonymous FIFO inode. Readers sleep while it is empty
 * and see the end of file once every writer is gone; writers sleep while it
 * is full, and a write with no reader left fails with EPIPE and ends the
 * writer with SIGPIPE, as Linux's default action does.
 */
#include <quire/signal.h>
#include <quire/fs.h>
#include <quire/wait.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/sched.h>
#include <quire/uapi/fcntl.h>
#include <quire/uapi/stat.h>
#include <asm/page.h>

#define PIPE_SIZE	PAGE_SIZE
#define SIGPIPE		13

struct pipe {
	spinlock_t lock;
	char *buf;
	size_t head, count;		/* next byte to read, bytes held */
	int readers, writers;
	wait_queue_head_t rd_wait, wr_wait;
};

static bool pipe_readable(struct pipe *p)
{
	bool r;

	spin_lock(&p->lock);
	r = p->count || !p->writers;
	spin_unlock(&p->lock);
	return r;
}

static bool pipe_writable(struct pipe *p)
{
	bool r;

	spin_lock(&p->lock);
	r = p->count < PIPE_SIZE || !p->readers;
	spin_unlock(&p->lock);
	return r;
}

static ssize_t pipe_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	struct pipe *p = f->private_data;
	size_t n;

	for (;;) {
		spin_lock(&p->lock);
		if (p->count || !p->writers)
			break;
		spin_unlock(&p->lock);
		if (f->f_flags & O_NONBLOCK)
			return -EAGAIN;
		if (wait_event_interruptible(p->rd_wait, pipe_readable(p)))
			return -ERESTARTSYS;
	}
	n = min(count, p->count);
	for (size_t i = 0; i < n; i++)
		((char *)buf)[i] = p->buf[(p->head + i) % PIPE_SIZE];
	p->head = (p->head + n) % PIPE_SIZE;
	p->count -= n;
	spin_unlock(&p->lock);
	wake_up_all(&p->wr_wait);
	return (ssize_t)n;		/* 0: every writer is gone (end of file) */
}

static ssize_t pipe_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	struct pipe *p = f->private_data;
	size_t done = 0;

	while (done < count) {
		size_t n;

		spin_lock(&p->lock);
		if (!p->readers) {
			spin_unlock(&p->lock);
			/* As Linux: SI_USER, from the writer itself; EPIPE if caught or ignored. */
			send_sig(SIGPIPE, current, SI_USER);
			return done ? (ssize_t)done : -EPIPE;
		}
		if (p->count == PIPE_SIZE) {
			spin_unlock(&p->lock);
			if (f->f_flags & O_NONBLOCK)
				return done ? (ssize_t)done : -EAGAIN;
			if (wait_event_interruptible(p->wr_wait, pipe_writable(p)))
				return done ? (ssize_t)done : -ERESTARTSYS;
			continue;
		}
		n = min(count - done, PIPE_SIZE - p->count);
		for (size_t i = 0; i < n; i++)
			p->buf[(p->head + p->count + i) % PIPE_SIZE] = ((const char *)buf)[done + i];
		p->count += n;
		done += n;
		spin_unlock(&p->lock);
		wake_up_all(&p->rd_wait);
	}
	return (ssize_t)done;
}

static int pipe_release(struct inode *inode, struct file *f)
{
	struct pipe *p = f->private_data;
	bool last;

	spin_lock(&p->lock);
	if (f->f_mode & FMODE_READ)
		p->readers--;
	if (f->f_mode & FMODE_WRITE)
		p->writers--;
	last = !p->readers && !p->writers;
	spin_unlock(&p->lock);
	wake_up_all(&p->rd_wait);
	wake_up_all(&p->wr_wait);
	if (last) {
		kfree(p->buf);
		kfree(p);
	}
	return 0;
}

static const struct file_operations pipe_fops = {
	.read = pipe_read,
	.write = pipe_write,
	.llseek = no_llseek,
	.release = pipe_release,
};

static struct file *pipe_file(struct inode *inode, struct pipe *p, unsigned int mode, int flags)
{
	struct file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return NULL;
	atomic_set(&f->f_count, 1);
	f->f_inode = igrab(inode);
	f->f_op = &pipe_fops;
	f->f_flags = (unsigned int)flags & O_NONBLOCK;
	f->f_mode = mode;
	mutex_init(&f->f_pos_lock);
	f->private_data = p;
	return f;
}

int create_pipe_files(struct file *res[2], int flags)
{
	struct pipe *p = kzalloc(sizeof(*p), GFP_KERNEL);
	struct inode *inode;

	if (!p)
		return -ENOMEM;
	p->buf = kmalloc(PIPE_SIZE, GFP_KERNEL);
	inode = p->buf ? new_inode(S_IFIFO | 0600) : NULL;
	if (!inode) {
		kfree(p->buf);
		kfree(p);
		return -ENOMEM;
	}
	spin_lock_init(&p->lock);
	init_waitqueue_head(&p->rd_wait);
	init_waitqueue_head(&p->wr_wait);
	p->readers = p->writers = 1;
	res[0] = pipe_file(inode, p, FMODE_READ, flags);
	res[1] = res[0] ? pipe_file(inode, p, FMODE_WRITE, flags) : NULL;
	iput(inode);			/* the files hold it now */
	if (!res[1]) {
		if (res[0]) {
			p->writers = 0;
			fput(res[0]);	/* frees the pipe */
		} else {
			kfree(p->buf);
			kfree(p);
		}
		return -ENOMEM;
	}
	return 0;
}
