/*
 * poll(2), ppoll(2), select(2) and pselect6(2), as Linux's fs/select.c
 * behaves (include/quire/poll.h has the file side).
 *
 * One loop serves all four: each file is asked what it is ready for
 * (vfs_poll); on the first pass each asked file queues the caller on the
 * wait queues that report its changes (poll_wait), and the pass runs with
 * the task running, so it may allocate. Then, until something is ready,
 * a signal is pending or the time is up: the task is marked
 * TASK_INTERRUPTIBLE, the entries a wake-up took off are queued again,
 * the files are asked again and, when none is ready, the task sleeps. A
 * wake-up after the state was set makes schedule() return at once, so none
 * is lost. Every file is held (fget) for the whole call.
 *
 * Linux's errno values and orders: poll: more descriptors than
 * RLIMIT_NOFILE EINVAL, the array EFAULT, a negative fd ignored (revents
 * 0), one not open POLLNVAL; select: n < 0 EINVAL, n above the fd table's
 * size cut to it, a set EFAULT, a bit for a descriptor not open EBADF, a
 * timeval with a negative part EINVAL (microseconds past a second carry
 * over, as Linux normalizes them). A signal: poll -EINTR (restart_syscall goes on with
 * the time left when no handler ran), ppoll, select and pselect6
 * -ERESTARTNOHAND (-EINTR with a handler). select, pselect6 and ppoll
 * write the time left back into their timeout, as Linux does (no
 * STICKY_TIMEOUTS personality). The arrays are copied in whole: a call
 * with more entries than one kmalloc holds is ENOMEM.
 */
#define pr_fmt(fmt) "select: " fmt
#include <quire/poll.h>
#include <quire/fs.h>
#include <quire/fdtable.h>
#include <quire/sched.h>
#include <quire/signal.h>
#include <quire/slab.h>
#include <quire/uaccess.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <quire/time.h>
#include <quire/syscalls.h>

#define ENTRIES_PER_CHUNK	32

/* select's timeout: Linux's __kernel_old_timeval (struct timeval, 16 bytes). */
struct old_timeval {
	long tv_sec;
	long tv_usec;
};

struct poll_table_entry {
	wait_queue_head_t *wq;
	wait_queue_entry_t wait;
};

struct poll_table_chunk {
	struct poll_table_chunk *next;
	unsigned int n;
	struct poll_table_entry e[ENTRIES_PER_CHUNK];
};

/* One descriptor being waited for. */
struct poll_item {
	struct file *file;		/* NULL: fd < 0 (poll), or not open */
	int fd;
	__poll_t events;		/* what is asked (POLLERR | POLLHUP always) */
	__poll_t revents;
};

void poll_wait(struct file *f, wait_queue_head_t *wq, poll_table *pt)
{
	struct poll_table_chunk *c;
	struct poll_table_entry *e;

	if (!pt || !pt->record || !wq)
		return;
	c = pt->chunks;
	if (!c || c->n == ENTRIES_PER_CHUNK) {
		c = kmalloc(sizeof(*c), GFP_KERNEL);
		if (!c) {
			pt->error = -ENOMEM;
			return;
		}
		c->n = 0;
		c->next = pt->chunks;
		pt->chunks = c;
	}
	e = &c->e[c->n++];
	e->wq = wq;
	init_wait_entry(&e->wait, 0);
	add_wait_queue(wq, &e->wait);
}

__poll_t vfs_poll(struct file *f, poll_table *pt)
{
	if (!f->f_op || !f->f_op->poll)
		return DEFAULT_POLLMASK;
	return f->f_op->poll(f, pt);
}

/* Queue again the entries a wake-up took off. */
static void poll_rearm(poll_table *pt)
{
	for (struct poll_table_chunk *c = pt->chunks; c; c = c->next)
		for (unsigned int i = 0; i < c->n; i++)
			add_wait_queue(c->e[i].wq, &c->e[i].wait);
}

static void poll_freewait(poll_table *pt)
{
	while (pt->chunks) {
		struct poll_table_chunk *c = pt->chunks;

		for (unsigned int i = 0; i < c->n; i++)
			remove_wait_queue(c->e[i].wq, &c->e[i].wait);
		pt->chunks = c->next;
		kfree(c);
	}
}

/* One pass over the items: how many are ready. */
static int poll_pass(struct poll_item *it, unsigned int n, poll_table *pt)
{
	int count = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (!it[i].file)
			continue;
		it[i].revents = vfs_poll(it[i].file, pt) & it[i].events;
		if (it[i].revents)
			count++;
	}
	return count;
}

/*
 * Wait until an item is ready (their count), the time is up (0: end is a
 * ktime_get_ns reading; forever: none) or a signal comes (-EINTR). Items
 * that are ready before the wait (POLLNVAL) are counted in pre.
 */
static long poll_loop(struct poll_item *it, unsigned int n, int pre, u64 end, bool forever)
{
	poll_table pt = { .record = true };
	bool timed_out = !forever && ktime_get_ns() >= end;	/* a zero timeout: one look */
	long count;

	pt.record = !timed_out;
	count = poll_pass(it, n, &pt) + pre;
	pt.record = false;
	while (!count && !timed_out && !pt.error) {
		u64 now, sleep;

		set_current_state(TASK_INTERRUPTIBLE);
		poll_rearm(&pt);
		count = poll_pass(it, n, &pt) + pre;
		if (count)
			break;
		if (signal_pending(current)) {
			count = -EINTR;
			break;
		}
		now = ktime_get_ns();
		if (!forever && now >= end) {
			timed_out = true;
			break;
		}
		sleep = forever ? 0 : end - now;
		if (pt.max_sleep_ns && (!sleep || pt.max_sleep_ns < sleep))
			sleep = pt.max_sleep_ns;
		if (sleep)
			schedule_timeout_ns(sleep);
		else
			schedule();
	}
	__set_current_state(TASK_RUNNING);
	poll_freewait(&pt);
	return pt.error && !count ? pt.error : count;
}

static void put_items(struct poll_item *it, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (it[i].file)
			fput(it[i].file);
	kfree(it);
}

/* ---- poll, ppoll ---- */

static long do_sys_poll(u64 ufds, unsigned int nfds, u64 end, bool forever)
{
	struct pollfd *pfd;
	struct poll_item *it;
	long ret;
	int pre = 0;

	if (nfds > (unsigned int)nofile_limit())
		return -EINVAL;
	if ((u64)nfds * sizeof(*pfd) > KMALLOC_MAX_SIZE || (u64)nfds * sizeof(*it) > KMALLOC_MAX_SIZE)
		return -ENOMEM;
	pfd = kmalloc(max(nfds, 1u) * sizeof(*pfd), GFP_KERNEL);
	it = kzalloc(max(nfds, 1u) * sizeof(*it), GFP_KERNEL);
	if (!pfd || !it) {
		kfree(pfd);
		kfree(it);
		return -ENOMEM;
	}
	if (copy_from_user(pfd, (void *)ufds, nfds * sizeof(*pfd))) {
		ret = -EFAULT;
		goto out;
	}
	for (unsigned int i = 0; i < nfds; i++) {
		it[i].fd = pfd[i].fd;
		it[i].events = ((__poll_t)(u16)pfd[i].events) | POLLERR | POLLHUP;
		if (pfd[i].fd < 0)
			continue;
		it[i].file = fget(current->files, pfd[i].fd);
		if (!it[i].file) {
			it[i].revents = POLLNVAL;
			pre++;
		}
	}
	ret = poll_loop(it, nfds, pre, end, forever);
	if (ret >= 0) {
		for (unsigned int i = 0; i < nfds; i++)
			pfd[i].revents = (short)it[i].revents;
		/* Only revents is written, as Linux's unsafe_put_user loop. */
		for (unsigned int i = 0; i < nfds; i++)
			if (copy_to_user((void *)(ufds + i * sizeof(*pfd) + 6), &pfd[i].revents, 2)) {
				ret = -EFAULT;
				break;
			}
	}
out:
	kfree(pfd);
	put_items(it, nfds);
	return ret;
}

static long poll_restart(struct restart_block *rb);

static long poll_common(u64 ufds, unsigned int nfds, u64 end, bool forever)
{
	long ret = do_sys_poll(ufds, nfds, end, forever);

	if (ret == -EINTR) {
		current->restart_block = (struct restart_block){
			.fn = poll_restart, .end_ns = end, .poll_ufds = ufds,
			.poll_nfds = nfds, .poll_forever = forever };
		ret = -ERESTART_RESTARTBLOCK;
	}
	return ret;
}

static long poll_restart(struct restart_block *rb)
{
	return poll_common(rb->poll_ufds, rb->poll_nfds, rb->end_ns, rb->poll_forever);
}

long sys_poll(u64 ufds, u64 nfds, u64 timeout_ms, u64 a3, u64 a4, u64 a5)
{
	int ms = (int)timeout_ms;

	return poll_common(ufds, (unsigned int)nfds,
			   ms >= 0 ? deadline_after((u64)ms * NSEC_PER_MSEC) : 0, ms < 0);
}

/* The signal mask argument of ppoll and pselect6: EINVAL for a size other than 8, EFAULT. */
static int take_sigmask(u64 umask, u64 size)
{
	u64 mask;

	if (!umask)
		return 0;
	if (size != sizeof(mask))
		return -EINVAL;
	if (copy_from_user(&mask, (void *)umask, sizeof(mask)))
		return -EFAULT;
	set_temporary_sigmask(mask);
	return 0;
}

/*
 * The end of ppoll, select, pselect6 (Linux's poll_select_finish): the
 * signal mask back unless interrupted, the time left written back (not
 * for a zero timeout); when that write fails, an interrupted call is EINTR
 * rather than restarted.
 */
static long poll_select_finish(long ret, u64 utimeout, bool timeval, u64 start_ns, u64 end)
{
	u64 now = ktime_get_ns(), left = now < end ? end - now : 0;
	int err;

	if (ret == -EINTR)
		ret = -ERESTARTNOHAND;
	restore_saved_sigmask_unless(ret == -ERESTARTNOHAND);
	if (!utimeout || end == start_ns)
		return ret;
	if (timeval) {
		struct old_timeval tv = { (long)(left / NSEC_PER_SEC),
				      (long)(left % NSEC_PER_SEC / 1000) };

		err = copy_to_user((void *)utimeout, &tv, sizeof(tv));
	} else {
		struct kernel_timespec ts = { (s64)(left / NSEC_PER_SEC),
					      (s64)(left % NSEC_PER_SEC) };

		err = copy_to_user((void *)utimeout, &ts, sizeof(ts));
	}
	if (err && ret == -ERESTARTNOHAND)
		ret = -EINTR;
	return ret;
}

long sys_ppoll(u64 ufds, u64 nfds, u64 uts, u64 umask, u64 sigsetsize, u64 a5)
{
	u64 ns = 0, start = ktime_get_ns(), end = start;
	long ret;

	if (uts) {
		int err = get_timespec_ns(uts, &ns);

		if (err)
			return err;
		end = ns ? deadline_after(ns) : start;
	}
	ret = take_sigmask(umask, sigsetsize);
	if (ret)
		return ret;
	ret = do_sys_poll(ufds, (unsigned int)nfds, end, !uts);
	return poll_select_finish(ret, uts, false, start, end);
}

/* ---- select, pselect6 ---- */

#define POLLIN_SET	(POLLRDNORM | POLLRDBAND | POLLIN | POLLHUP | POLLERR)
#define POLLOUT_SET	(POLLWRBAND | POLLWRNORM | POLLOUT | POLLERR)
#define POLLEX_SET	(POLLPRI)

static long do_select(int n, u64 uin, u64 uout, u64 uex, u64 end, bool forever)
{
	u64 *sets[3] = { NULL }, usets[3] = { uin, uout, uex };
	unsigned int words, max_fds, nitems = 0;
	struct poll_item *it = NULL;
	long ret;

	if (n < 0)
		return -EINVAL;
	spin_lock(&current->files->lock);
	max_fds = current->files->max_fds;
	spin_unlock(&current->files->lock);
	if ((unsigned int)n > max_fds)
		n = (int)max_fds;
	words = ((unsigned int)n + 63) / 64;
	for (int s = 0; s < 3; s++) {
		sets[s] = kzalloc(max(words, 1u) * 8, GFP_KERNEL);
		if (!sets[s]) {
			ret = -ENOMEM;
			goto out;
		}
		if (usets[s] && copy_from_user(sets[s], (void *)usets[s], words * 8)) {
			ret = -EFAULT;
			goto out;
		}
	}
	it = kzalloc(max((unsigned int)n, 1u) * sizeof(*it), GFP_KERNEL);
	if (!it) {
		ret = -ENOMEM;
		goto out;
	}
	for (int fd = 0; fd < n; fd++) {
		u64 bit = 1ULL << (fd % 64);
		bool in = sets[0][fd / 64] & bit, out = sets[1][fd / 64] & bit,
		     ex = sets[2][fd / 64] & bit;
		struct poll_item *p = &it[nitems];

		if (!in && !out && !ex)
			continue;
		p->fd = fd;
		p->events = (in ? POLLIN_SET : 0) | (out ? POLLOUT_SET : 0) | (ex ? POLLEX_SET : 0);
		p->file = fget(current->files, fd);
		nitems++;
		if (!p->file) {
			ret = -EBADF;
			goto out;
		}
	}
	ret = poll_loop(it, nitems, 0, end, forever);
	if (ret < 0)
		goto out;
	/* The sets become the answer: one bit per readiness, counted. */
	for (int s = 0; s < 3; s++)
		memset(sets[s], 0, words * 8);
	ret = 0;
	for (unsigned int i = 0; i < nitems; i++) {
		__poll_t r = it[i].revents;
		u64 bit = 1ULL << (it[i].fd % 64);
		unsigned int w = (unsigned int)it[i].fd / 64;

		if (r & POLLIN_SET & it[i].events) {
			sets[0][w] |= bit;
			ret++;
		}
		if (r & POLLOUT_SET & it[i].events) {
			sets[1][w] |= bit;
			ret++;
		}
		if (r & POLLEX_SET & it[i].events) {
			sets[2][w] |= bit;
			ret++;
		}
	}
	for (int s = 0; s < 3; s++)
		if (usets[s] && copy_to_user((void *)usets[s], sets[s], words * 8)) {
			ret = -EFAULT;
			break;
		}
out:
	for (int s = 0; s < 3; s++)
		kfree(sets[s]);
	if (it)
		put_items(it, nitems);
	return ret;
}

long sys_select(u64 n, u64 uin, u64 uout, u64 uex, u64 utv, u64 a5)
{
	u64 start = ktime_get_ns(), end = start;
	long ret;

	if (utv) {
		struct old_timeval tv;
		long sec, usec;
		u64 ns;

		if (copy_from_user(&tv, (void *)utv, sizeof(tv)))
			return -EFAULT;
		/* Whole seconds in tv_usec count (Linux normalizes); negatives are EINVAL. */
		sec = tv.tv_sec + tv.tv_usec / 1000000;
		usec = tv.tv_usec % 1000000;
		if (sec < 0 || usec < 0)
			return -EINVAL;
		ns = (u64)sec >= (u64)INT64_MAX / NSEC_PER_SEC ? (u64)INT64_MAX
			: (u64)sec * NSEC_PER_SEC + (u64)usec * 1000;
		end = ns ? deadline_after(ns) : start;
	}
	ret = do_select((int)n, uin, uout, uex, end, !utv);
	return poll_select_finish(ret, utv, true, start, end);
}

long sys_pselect6(u64 n, u64 uin, u64 uout, u64 uex, u64 uts, u64 usig)
{
	struct { u64 mask; u64 size; } pack = { 0, 0 };
	u64 ns, start = ktime_get_ns(), end = start;
	long ret;

	if (usig && copy_from_user(&pack, (void *)usig, sizeof(pack)))
		return -EFAULT;
	if (uts) {
		int err = get_timespec_ns(uts, &ns);

		if (err)
			return err;
		end = ns ? deadline_after(ns) : start;
	}
	ret = take_sigmask(pack.mask, pack.size);
	if (ret)
		return ret;
	ret = do_select((int)n, uin, uout, uex, end, !uts);
	return poll_select_finish(ret, uts, false, start, end);
}
