/*
 * Pipes, as Linux's: a ring of PIPE_DEF_BUFFERS buffers between a read end
 * and a write end, each a struct file on one anonymous FIFO inode. A
 * buffer is part of one page: a page of the pipe's own that write() fills
 * (and a later small write tops up: "can merge"), or a user page that
 * vmsplice() put there by reference (fs/splice.c), which the reader copies
 * from as it is then and which the pipe holds a reference on until the
 * buffer is read. Readers sleep while it is empty and see the end of file
 * once every writer is gone; writers sleep while every buffer is taken,
 * and a write with no reader left fails with EPIPE and ends the writer
 * with SIGPIPE, as Linux's default action does. A write of PIPE_BUF bytes
 * or less is atomic: it goes into one buffer under one hold of the lock.
 * write(2) hands the pipe the user's bytes whole (write_user), because
 * how a write fills the buffers depends on its total size, as on Linux.
 *
 * The lock covers the ring and the counts. Pages are allocated, and the
 * pages of emptied buffers released, with it dropped.
 */
#include <quire/signal.h>
#include <quire/fs.h>
#include <quire/wait.h>
#include <quire/poll.h>
#include <quire/mutex.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/sched.h>
#include <quire/gfp.h>
#include <quire/gup.h>
#include <quire/mm.h>
#include <quire/uaccess.h>
#include <quire/uapi/fcntl.h>
#include <quire/uapi/stat.h>
#include <asm/page.h>
#include "internal.h"

#define SIGPIPE		13

struct pipe_buffer {
	struct page *page;
	unsigned int offset, len;
	bool user_page;		/* vmsplice's: a FOLL_GET reference (put_page), never merged */
};

struct pipe {
	spinlock_t lock;
	struct mutex rd_mutex;		/* one reader at a time looks and takes */
	struct pipe_buffer bufs[PIPE_DEF_BUFFERS];
	unsigned int tail, nrbufs;	/* the next buffer to read, buffers in use */
	int readers, writers;
	wait_queue_head_t rd_wait, wr_wait;
};

static const struct file_operations pipe_fops;

static void pipe_buf_release(struct pipe_buffer *buf)
{
	if (buf->user_page)
		put_page(buf->page);
	else
		__free_pages(buf->page, 0);
}

static struct pipe_buffer *pipe_buf(struct pipe *p, unsigned int i)
{
	return &p->bufs[(p->tail + i) % PIPE_DEF_BUFFERS];
}

static bool pipe_full(struct pipe *p)
{
	return p->nrbufs == PIPE_DEF_BUFFERS;
}

static bool pipe_readable(struct pipe *p)
{
	bool r;

	spin_lock(&p->lock);
	r = p->nrbufs || !p->writers;
	spin_unlock(&p->lock);
	return r;
}

static bool pipe_writable(struct pipe *p)
{
	bool r;

	spin_lock(&p->lock);
	r = !pipe_full(p) || !p->readers;
	spin_unlock(&p->lock);
	return r;
}

struct pipe *get_pipe_info(struct file *f)
{
	return f->f_op == &pipe_fops ? f->private_data : NULL;
}

/* Copy up to count bytes from the front of the pipe into buf, taking none (lock held). */
static size_t pipe_peek(struct pipe *p, char *buf, size_t count)
{
	size_t n = 0;

	for (unsigned int i = 0; i < p->nrbufs && n < count; i++) {
		struct pipe_buffer *b = pipe_buf(p, i);
		size_t chunk = min(count - n, (size_t)b->len);

		memcpy(buf + n, (char *)page_address(b->page) + b->offset, chunk);
		n += chunk;
	}
	return n;
}

/* Take n bytes (that pipe_peek saw) off the front; emptied buffers are released. */
static void pipe_consume(struct pipe *p, size_t n)
{
	struct pipe_buffer done_bufs[PIPE_DEF_BUFFERS];
	unsigned int ndone = 0;

	spin_lock(&p->lock);
	while (n) {
		struct pipe_buffer *b = pipe_buf(p, 0);
		size_t chunk = min(n, (size_t)b->len);

		n -= chunk;
		b->offset += (unsigned int)chunk;
		b->len -= (unsigned int)chunk;
		if (!b->len) {
			done_bufs[ndone++] = *b;
			p->tail = (p->tail + 1) % PIPE_DEF_BUFFERS;
			p->nrbufs--;
		}
	}
	spin_unlock(&p->lock);
	for (unsigned int i = 0; i < ndone; i++)
		pipe_buf_release(&done_bufs[i]);
	if (ndone)
		wake_up_all(&p->wr_wait);
}

/*
 * Take up to count bytes out of the pipe, as read() does: wait while it is
 * empty (unless nonblock: EAGAIN), take what is there, 0 once every writer
 * is gone. The bytes are copied into buf, a kernel buffer, and then handed
 * to accept (NULL: nothing more to do); they leave the pipe only if accept
 * returns 0, else the call is EFAULT and the pipe keeps them, as Linux's
 * does when the user buffer is bad. rd_mutex makes the look and the take
 * one step against other readers; writers only ever add behind.
 */
ssize_t pipe_read_bytes(struct pipe *p, void *buf, size_t count, bool nonblock,
			int (*accept)(void *arg, const void *buf, size_t n), void *arg)
{
	size_t n;

	for (;;) {
		if (!pipe_readable(p)) {
			if (nonblock)
				return -EAGAIN;
			if (wait_event_interruptible(p->rd_wait, pipe_readable(p)))
				return -ERESTARTSYS;
		}
		mutex_lock(&p->rd_mutex);
		spin_lock(&p->lock);
		if (p->nrbufs || !p->writers)
			break;
		spin_unlock(&p->lock);		/* another reader took it first */
		mutex_unlock(&p->rd_mutex);
	}
	n = pipe_peek(p, buf, count);
	spin_unlock(&p->lock);
	if (n && accept && accept(arg, buf, n)) {
		mutex_unlock(&p->rd_mutex);
		return -EFAULT;
	}
	pipe_consume(p, n);
	mutex_unlock(&p->rd_mutex);
	return (ssize_t)n;		/* 0: every writer is gone (end of file) */
}

static ssize_t pipe_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	return pipe_read_bytes(f->private_data, buf, count, f->f_flags & O_NONBLOCK, NULL, NULL);
}

/* No reader: SIGPIPE to the writer (SI_USER, from itself, as Linux) and EPIPE. */
static long pipe_no_reader(void)
{
	send_sig(SIGPIPE, current, SI_USER);
	return -EPIPE;
}

static int pipe_copy_in(void *dst, const void *src, size_t n, bool user)
{
	if (user)
		return copy_from_user(dst, src, n) ? -EFAULT : 0;
	memcpy(dst, src, n);
	return 0;
}

/*
 * A write of count bytes from src (user memory if user), Linux's way: the
 * partial page of the write (count % PAGE_SIZE) first tops up the last
 * buffer when it fits there whole; the rest goes a page to a buffer, the
 * partial page last when it did not fit. Each page is filled before the
 * lock is taken (a user copy may fault), then put in the ring under it.
 */
static ssize_t pipe_do_write(struct pipe *p, bool nonblock, const char *src, size_t count,
			     bool user)
{
	size_t chars = count % PAGE_SIZE, done = 0, staged_at = SIZE_MAX;
	struct page *spare = NULL;
	long err = 0;

	if (chars && p->nrbufs) {		/* unlocked peek; rechecked below */
		spare = alloc_pages(GFP_KERNEL, 0);
		if (!spare)
			return -ENOMEM;
		if (pipe_copy_in(page_address(spare), src, chars, user)) {
			__free_pages(spare, 0);
			return -EFAULT;
		}
		spin_lock(&p->lock);
		if (p->readers && p->nrbufs) {
			struct pipe_buffer *b = pipe_buf(p, p->nrbufs - 1);

			if (!b->user_page && b->offset + b->len + chars <= PAGE_SIZE) {
				memcpy((char *)page_address(b->page) + b->offset + b->len,
				       page_address(spare), chars);
				b->len += (unsigned int)chars;
				done = chars;
			}
		}
		spin_unlock(&p->lock);
		if (done)
			wake_up_all(&p->rd_wait);
	}
	while (done < count) {
		size_t n = min(count - done, PAGE_SIZE);

		if (!spare && !(spare = alloc_pages(GFP_KERNEL, 0))) {
			err = -ENOMEM;
			break;
		}
		if (staged_at != done) {
			if (pipe_copy_in(page_address(spare), src + done, n, user)) {
				err = -EFAULT;
				break;
			}
			staged_at = done;
		}
		spin_lock(&p->lock);
		if (!p->readers) {
			spin_unlock(&p->lock);
			err = pipe_no_reader();
			break;
		}
		if (pipe_full(p)) {
			spin_unlock(&p->lock);
			if (nonblock) {
				err = -EAGAIN;
				break;
			}
			if (wait_event_interruptible(p->wr_wait, pipe_writable(p))) {
				err = -ERESTARTSYS;
				break;
			}
			continue;
		}
		*pipe_buf(p, p->nrbufs++) = (struct pipe_buffer){ .page = spare, .len = (unsigned int)n };
		spare = NULL;
		done += n;
		spin_unlock(&p->lock);
		wake_up_all(&p->rd_wait);
	}
	if (spare)
		__free_pages(spare, 0);
	return done ? (ssize_t)done : err;
}

static ssize_t pipe_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	return pipe_do_write(f->private_data, f->f_flags & O_NONBLOCK, buf, count, false);
}

static ssize_t pipe_write_user(struct file *f, const void *ubuf, size_t count)
{
	return pipe_do_write(f->private_data, f->f_flags & O_NONBLOCK, ubuf, count, true);
}

/*
 * vmsplice's side (fs/splice.c): wait until a buffer is free (EPIPE with
 * SIGPIPE when no reader is left, EAGAIN if nonblock), then return how
 * many are free now.
 */
long pipe_wait_for_space(struct pipe *p, bool nonblock)
{
	for (;;) {
		long free;

		spin_lock(&p->lock);
		if (!p->readers) {
			spin_unlock(&p->lock);
			return pipe_no_reader();
		}
		free = PIPE_DEF_BUFFERS - p->nrbufs;
		spin_unlock(&p->lock);
		if (free)
			return free;
		if (nonblock)
			return -EAGAIN;
		if (wait_event_interruptible(p->wr_wait, pipe_writable(p)))
			return -ERESTARTSYS;
	}
}

/*
 * Put user pages, each with a FOLL_GET reference, into the pipe by
 * reference: page i holds len[i] bytes from offset off[i]. The ones that
 * no longer fit (another writer was faster) are put back. Returns the
 * bytes added, or -EPIPE (with SIGPIPE) when no reader is left.
 */
long pipe_add_user_pages(struct pipe *p, struct page **pages, const unsigned int *off,
			 const unsigned int *len, unsigned int nr)
{
	unsigned int i = 0;
	long added = 0;
	bool no_reader;

	spin_lock(&p->lock);
	no_reader = !p->readers;
	for (; !no_reader && i < nr && !pipe_full(p); i++) {
		*pipe_buf(p, p->nrbufs++) = (struct pipe_buffer){
			.page = pages[i], .offset = off[i], .len = len[i], .user_page = true };
		added += len[i];
	}
	spin_unlock(&p->lock);
	for (unsigned int j = i; j < nr; j++)
		put_page(pages[j]);
	if (added)
		wake_up_all(&p->rd_wait);
	return no_reader ? pipe_no_reader() : added;
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
		while (p->nrbufs) {
			pipe_buf_release(pipe_buf(p, 0));
			p->tail = (p->tail + 1) % PIPE_DEF_BUFFERS;
			p->nrbufs--;
		}
		kfree(p);
	}
	return 0;
}

/*
 * poll (fs/select.c), as Linux's pipe_poll: the read end is readable with
 * data in it, and hung up (POLLHUP) once every writer is gone; the write
 * end is writable with a free buffer, and POLLERR once every reader is
 * gone.
 */
static unsigned int pipe_poll(struct file *f, poll_table *pt)
{
	struct pipe *p = f->private_data;
	unsigned int mask = 0;

	if (f->f_mode & FMODE_READ)
		poll_wait(f, &p->rd_wait, pt);
	if (f->f_mode & FMODE_WRITE)
		poll_wait(f, &p->wr_wait, pt);
	spin_lock(&p->lock);
	if (f->f_mode & FMODE_READ) {
		if (p->nrbufs)
			mask |= POLLIN | POLLRDNORM;
		if (!p->writers)
			mask |= POLLHUP;
	}
	if (f->f_mode & FMODE_WRITE) {
		if (!pipe_full(p))
			mask |= POLLOUT | POLLWRNORM;
		if (!p->readers)
			mask |= POLLERR;
	}
	spin_unlock(&p->lock);
	return mask;
}

static const struct file_operations pipe_fops = {
	.poll = pipe_poll,
	.read = pipe_read,
	.write = pipe_write,
	.write_user = pipe_write_user,
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
	inode = new_inode(S_IFIFO | 0600);
	if (!inode) {
		kfree(p);
		return -ENOMEM;
	}
	spin_lock_init(&p->lock);
	mutex_init(&p->rd_mutex);
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
			kfree(p);
		}
		return -ENOMEM;
	}
	return 0;
}
