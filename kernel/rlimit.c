/*
 * Resource limits: getrlimit, setrlimit and prlimit64, with Linux's rules.
 * A process's limits are its group leader's (task->rlim), copied by fork,
 * kept by execve, set to Linux's defaults for a process the kernel starts.
 * Every process runs as root (CAP_SYS_RESOURCE), so a hard limit may be
 * raised, up to Linux's own ceilings, and prlimit64 may read and set any
 * other process's limits.
 *
 * What Quire enforces:
 * - RLIMIT_NOFILE (kernel/fdtable.c): the lowest free descriptor must be
 *   below it (EMFILE); dup2/dup3 to one at or above it: EBADF; F_DUPFD
 *   from one: EINVAL. Linux's 1024/4096 at first; the hard limit may go
 *   up to nr_open (NR_OPEN_MAX, 1048576), the fd table growing on demand.
 * - RLIMIT_FSIZE (fsize_check, below; called by ramfs's write and by
 *   truncate and ftruncate, fs/open.c): a write at or past it is
 *   EFBIG with SIGXFSZ, one that crosses it is cut short; truncate and
 *   ftruncate growing a file past it, EFBIG with SIGXFSZ.
 * The other limits are kept and reported; lowering one of them is logged
 * once, since nothing then holds the process to it.
 */
#define pr_fmt(fmt) "rlimit: " fmt
#include <quire/sched.h>
#include <quire/process.h>
#include <quire/syscalls.h>
#include <quire/fdtable.h>
#include <quire/fs.h>
#include <quire/signal.h>
#include <quire/mmap.h>
#include <quire/uaccess.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/uapi/resource.h>

_Static_assert(TASK_RLIMITS == RLIM_NLIMITS, "one limit per resource");

/*
 * Serialises changes (a read-modify-write of prlimit64's old and new); a
 * spinlock, since prlimit64 on another process holds process_lock.
 */
static DEFINE_SPINLOCK(rlimit_lock);

/* Linux's defaults for a process started by the kernel (init's). */
static struct rlimit64 default_rlimit(unsigned int resource)
{
	switch (resource) {
	case RLIMIT_STACK:
		return (struct rlimit64){ STACK_SIZE_MAX, RLIM_INFINITY };
	case RLIMIT_CORE:
		return (struct rlimit64){ 0, RLIM_INFINITY };
	case RLIMIT_NOFILE:
		return (struct rlimit64){ 1024, 4096 };	/* Linux's INR_OPEN_CUR/INR_OPEN_MAX */
	case RLIMIT_MEMLOCK:
		return (struct rlimit64){ 8UL << 20, 8UL << 20 };
	case RLIMIT_MSGQUEUE:
		return (struct rlimit64){ 819200, 819200 };
	case RLIMIT_NICE:
	case RLIMIT_RTPRIO:
		return (struct rlimit64){ 0, 0 };
	default:
		return (struct rlimit64){ RLIM_INFINITY, RLIM_INFINITY };
	}
}

void rlimit_init_defaults(struct task *leader)
{
	for (unsigned int r = 0; r < RLIM_NLIMITS; r++)
		leader->rlim[r] = default_rlimit(r);
}

u64 task_rlimit(struct task *t, unsigned int resource)
{
	return __atomic_load_n(&t->group_leader->rlim[resource].rlim_cur, __ATOMIC_RELAXED);
}

/*
 * RLIMIT_FSIZE (include/quire/fs.h), called by ramfs's write and by
 * truncate and ftruncate (fs/open.c), as Linux's generic_write_check_limits
 * and inode_newsize_ok.
 */
int fsize_check(loff_t pos, size_t *count)
{
	u64 limit = current ? task_rlimit(current, RLIMIT_FSIZE) : RLIM_INFINITY;

	if (limit == RLIM_INFINITY)
		return 0;
	if (count ? (u64)pos >= limit : (u64)pos > limit) {
		send_sig(SIGXFSZ, current, SI_USER);	/* Linux's send_sig(.., 0): SI_USER, its own pid */
		return -EFBIG;
	}
	if (count && *count > limit - (u64)pos)
		*count = (size_t)(limit - (u64)pos);
	return 0;
}

static bool enforced(unsigned int resource)
{
	return resource == RLIMIT_NOFILE || resource == RLIMIT_FSIZE;
}

/* Set resource of t's process to *new (checked), after copying the old one to *old. */
static int do_prlimit(struct task *t, unsigned int resource, const struct rlimit64 *new,
		      struct rlimit64 *old)
{
	struct rlimit64 *r = &t->group_leader->rlim[resource];
	static u32 reported;

	if (new) {
		if (new->rlim_cur > new->rlim_max)
			return -EINVAL;
		/* nr_open is the ceiling, even for root. */
		if (resource == RLIMIT_NOFILE && new->rlim_max > NR_OPEN_MAX)
			return -EPERM;
	}
	spin_lock(&rlimit_lock);
	if (old)
		*old = *r;
	if (new) {
		__atomic_store_n(&r->rlim_max, new->rlim_max, __ATOMIC_RELAXED);
		__atomic_store_n(&r->rlim_cur, new->rlim_cur, __ATOMIC_RELAXED);
	}
	spin_unlock(&rlimit_lock);
	if (new && !enforced(resource) && new->rlim_cur != RLIM_INFINITY &&
	    !(__atomic_fetch_or(&reported, 1U << resource, __ATOMIC_RELAXED) & (1U << resource)))
		pr_info("pid %d (%s): resource limit %u is recorded but not enforced\n",
			current->tgid, current->comm, resource);
	return 0;
}

struct prlimit_req {
	unsigned int resource;
	const struct rlimit64 *new;
	struct rlimit64 *old;
};

/*
 * Linux's check_prlimit_permission: the caller itself, a process with the
 * caller's uid and gid (real, effective and saved), or a caller with
 * CAP_SYS_RESOURCE. Quire has no credentials: every process is uid 0 with
 * every capability, so both of the last two always hold, as for root on
 * Linux.
 */
static bool prlimit_permitted(const struct task *p)
{
	return true;
}

static int prlimit_process(struct task *p, void *arg)
{
	struct prlimit_req *req = arg;

	if (!prlimit_permitted(p))
		return -EPERM;
	return do_prlimit(p, req->resource, req->new, req->old);
}

/*
 * prlimit64 (302): the caller's process (pid 0) or any other, looked up
 * as Linux does (a thread's id names its process; a zombie still has
 * limits); no such process ESRCH. Linux's order: the resource, the new
 * value's copy, the process, the permission, then the change.
 */
long sys_prlimit64(u64 pid, u64 resource, u64 unew, u64 uold, u64 a4, u64 a5)
{
	struct rlimit64 new, old;
	struct prlimit_req req = { (unsigned int)resource, unew ? &new : NULL, &old };
	int err;

	if (resource >= RLIM_NLIMITS)
		return -EINVAL;
	if (unew && copy_from_user(&new, (void *)unew, sizeof(new)))
		return -EFAULT;
	err = with_process_by_pid((int)pid, prlimit_process, &req);
	if (!err && uold && copy_to_user((void *)uold, &old, sizeof(old)))
		return -EFAULT;
	return err;
}

long sys_getrlimit(u64 resource, u64 uold, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct rlimit64 old;

	if (resource >= RLIM_NLIMITS)
		return -EINVAL;
	do_prlimit(current, (unsigned int)resource, NULL, &old);
	return copy_to_user((void *)uold, &old, sizeof(old)) ? -EFAULT : 0;
}

long sys_setrlimit(u64 resource, u64 unew, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct rlimit64 new;

	if (resource >= RLIM_NLIMITS)
		return -EINVAL;
	if (copy_from_user(&new, (void *)unew, sizeof(new)))
		return -EFAULT;
	return do_prlimit(current, (unsigned int)resource, &new, NULL);
}
