/*
 * Futexes: futex(2) (202), set_robust_list (273), get_robust_list (274),
 * and the robust-list walk at exit. docs/futex.md is the long version.
 *
 * A futex is a 32-bit word of user memory. User space does the fast path
 * with atomic instructions on the word alone; the kernel is asked only to
 * sleep while the word still holds an expected value (FUTEX_WAIT) and to
 * wake the sleepers of a word (FUTEX_WAKE), so it keeps no state per word
 * but the queue of tasks asleep on it.
 *
 * Keys. A word is found by a key, not by its address: a private key is
 * (mm, address), for FUTEX_PRIVATE_FLAG or a word in memory no other
 * address space shares; a shared key is (inode, byte offset in the file)
 * for a word in a VM_SHARED file mapping (shared anonymous memory is an
 * unnamed RAM file too), so processes mapping the same page at different
 * addresses meet. A shared key holds a reference on its inode for as long
 * as it is in use (a waiter's whole sleep), so no other inode can take its
 * address meanwhile; a private key is compared as a value only (its mm is
 * the waiter's own, alive while it sleeps).
 *
 * Waiters. A hash table of buckets, each a lock and a FIFO list of the
 * waiters whose keys hash there; a waiter is a struct futex_waiter on its
 * own kernel stack.
 *
 * The bucket lock is a mutex, and this is the rule: the futex word is read
 * (or changed, FUTEX_WAKE_OP) with the bucket's mutex held. A waiter reads
 * the word and queues itself in one critical section, and a waker (who
 * changed the word first) looks for waiters under the same mutex, so a
 * wake-up can never fall between the check and the sleep. Reading user
 * memory may fault, and the fault handler sleeps (mmap_lock, allocating
 * the page): a spinlock could not be held across it (Linux disables page
 * faults under its spinlock and retries outside it instead). A sleeping
 * lock makes the plain copy correct, at the price of a mutex per bucket.
 * read_word_locked() and change_word_locked() assert the rule
 * (mutex_assert_held, might_sleep).
 *
 * Lock order: a bucket mutex, then (by a fault on the word) mmap_lock and
 * the mm locks under it; two buckets (requeue, wake-op) lowest address
 * first. Nobody takes a bucket mutex while holding mmap_lock: keys are
 * looked up before the bucket is locked.
 *
 * A waiter leaves its sleep for one of three reasons: a waker took it off
 * the list (and set woken), the timeout, or a signal. Whatever woke it, it
 * settles the outcome by taking the lock of the bucket it is in now (a
 * requeue may have moved it): off the list means woken, and the waker,
 * which did everything under that lock, is done with the waiter's stack
 * and task. Still on the list, it unlinks itself and reports the timeout
 * or the signal.
 *
 * Not implemented: the priority-inheritance operations (-ENOSYS, logged
 * once), and Linux's restart_block for a timed wait (futex_sleep()).
 */
#define pr_fmt(fmt) "futex: " fmt
#include <quire/futex.h>
#include <quire/syscalls.h>
#include <quire/mutex.h>
#include <quire/list.h>
#include <quire/sched.h>
#include <quire/signal.h>
#include <quire/mmap.h>
#include <quire/fs.h>
#include <quire/uaccess.h>
#include <quire/time.h>
#include <quire/debug_locks.h>
#include <quire/printk.h>
#include <quire/errno.h>

#define FUTEX_HASH_BITS		8
#define FUTEX_HASH_SIZE		(1u << FUTEX_HASH_BITS)
#define KTIME_MAX		((u64)INT64_MAX)

struct futex_key {
	void *object;		/* private: the mm_struct; shared: the inode (referenced) */
	u64 offset;		/* private: the address; shared: the byte offset in the file */
	bool shared;
};

struct futex_bucket {
	struct mutex lock;
	struct list_head waiters;	/* struct futex_waiter, oldest first */
};

struct futex_waiter {
	struct list_head list;		/* in bucket->waiters; empty once woken */
	struct task *task;
	struct futex_key key;		/* changed by a requeue, under both buckets' locks */
	u32 bitset;
	struct futex_bucket *bucket;	/* the bucket it is queued in (requeue moves it) */
	bool woken;			/* set by the waker, under the bucket's lock */
};

static struct futex_bucket futex_table[FUTEX_HASH_SIZE];

void futex_init(void)
{
	for (unsigned int i = 0; i < FUTEX_HASH_SIZE; i++) {
		mutex_init(&futex_table[i].lock);
		INIT_LIST_HEAD(&futex_table[i].waiters);
	}
}

/* ---- keys ---- */

static bool key_equal(const struct futex_key *a, const struct futex_key *b)
{
	return a->object == b->object && a->offset == b->offset && a->shared == b->shared;
}

/* One more reference on what a shared key names (a requeued waiter's new key). */
static void key_get(const struct futex_key *key)
{
	if (key->shared)
		igrab(key->object);
}

static void key_put(const struct futex_key *key)
{
	if (key->shared)
		iput(key->object);
}

/*
 * The key of the word at uaddr in the current address space. private:
 * FUTEX_PRIVATE_FLAG, (mm, address) without looking at the mapping (as
 * Linux, a private wake on an unmapped address finds no one). Otherwise
 * the VMA decides: a VM_SHARED file mapping gives a shared key, anything
 * else a private one; no readable VMA there is -EFAULT. A shared key holds
 * an inode reference: key_put() when done.
 */
static int get_futex_key(u32 *uaddr, bool private, struct futex_key *key)
{
	unsigned long addr = (unsigned long)uaddr;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = 0;

	if (addr % sizeof(u32))
		return -EINVAL;
	if (!access_ok(uaddr, sizeof(u32)) || !mm)
		return -EFAULT;
	*key = (struct futex_key){ .object = mm, .offset = addr, .shared = false };
	if (private)
		return 0;
	down_read(&mm->mmap_lock);
	vma = find_vma(mm, addr);
	if (!vma || vma->vm_start > addr || !(vma->vm_flags & VM_READ)) {
		ret = -EFAULT;
	} else if ((vma->vm_flags & VM_SHARED) && vma->vm_file) {
		u64 pgoff = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);

		key->object = igrab(file_inode(vma->vm_file));
		key->offset = (pgoff << PAGE_SHIFT) | (addr & ~PAGE_MASK);
		key->shared = true;
	}
	up_read(&mm->mmap_lock);
	return ret;
}

static struct futex_bucket *key_bucket(const struct futex_key *key)
{
	u64 h = (u64)(uintptr_t)key->object ^ (key->offset * 0x9e3779b97f4a7c15ULL);

	h *= 0xc2b2ae3d27d4eb4fULL;
	return &futex_table[h >> (64 - FUTEX_HASH_BITS)];
}

/* ---- buckets ---- */

/* Two buckets at once (requeue, wake-op): the lower address first. */
static void double_lock(struct futex_bucket *a, struct futex_bucket *b)
{
	if (a > b) {
		struct futex_bucket *t = a;

		a = b;
		b = t;
	}
	mutex_lock(&a->lock);
	if (b != a)
		mutex_lock(&b->lock);
}

static void double_unlock(struct futex_bucket *a, struct futex_bucket *b)
{
	mutex_unlock(&a->lock);
	if (b != a)
		mutex_unlock(&b->lock);
}

/*
 * The futex word, read under its bucket's mutex: the rule of the header
 * comment. The read may fault and sleep.
 */
static int read_word_locked(struct futex_bucket *hb, u32 *uaddr, u32 *val)
{
	mutex_assert_held(&hb->lock);
	might_sleep();
	return copy_from_user(val, uaddr, sizeof(*val)) ? -EFAULT : 0;
}

/* Take w off its list and wake its task; hb (w's bucket) is held. */
static void wake_waiter(struct futex_bucket *hb, struct futex_waiter *w)
{
	mutex_assert_held(&hb->lock);
	list_del_init(&w->list);
	__atomic_store_n(&w->woken, true, __ATOMIC_RELEASE);
	wake_up_process(w->task);
}

/*
 * Wake waiters on key whose bitset meets bitset, oldest first: up to nr,
 * and as on Linux at least one (nr 0 or less wakes one). How many woke.
 */
static int wake_matching(struct futex_bucket *hb, const struct futex_key *key, int nr,
			 u32 bitset)
{
	struct futex_waiter *w, *next;
	int woken = 0;

	mutex_assert_held(&hb->lock);
	list_for_each_entry_safe(w, next, &hb->waiters, list) {
		if (!key_equal(&w->key, key) || !(w->bitset & bitset))
			continue;
		wake_waiter(hb, w);
		if (++woken >= nr)
			break;
	}
	return woken;
}

/* The lock of the bucket w is queued in now, held; a requeue may move it until then. */
static struct futex_bucket *lock_waiter_bucket(struct futex_waiter *w)
{
	for (;;) {
		struct futex_bucket *hb = __atomic_load_n(&w->bucket, __ATOMIC_ACQUIRE);

		mutex_lock(&hb->lock);
		if (hb == w->bucket)
			return hb;
		mutex_unlock(&hb->lock);
	}
}

/* ---- wait ---- */

/*
 * Sleep until woken, the deadline (ktime_get_ns; NULL: none) or a signal.
 * 0 when woken, -ETIMEDOUT, or for a signal: untimed, -ERESTARTSYS (a
 * handler with SA_RESTART restarts the call, one without gives EINTR);
 * timed, -ERESTARTNOHAND (any handler gives EINTR, as Linux's
 * restart_block does; a signal that runs none restarts the call, which
 * for FUTEX_WAIT's relative timeout starts the whole timeout again).
 */
static long futex_sleep(struct futex_waiter *w, const u64 *deadline)
{
	struct futex_bucket *hb;
	long ret;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (__atomic_load_n(&w->woken, __ATOMIC_ACQUIRE) || signal_pending(current))
			break;
		if (deadline) {
			u64 now = ktime_get_ns();

			if (now >= *deadline)
				break;
			schedule_timeout_ns(*deadline - now);
		} else {
			schedule();
		}
	}
	__set_current_state(TASK_RUNNING);

	hb = lock_waiter_bucket(w);
	if (list_empty(&w->list)) {
		ret = 0;	/* woken, whatever else happened meanwhile */
	} else {
		list_del_init(&w->list);
		if (deadline && ktime_get_ns() >= *deadline)
			ret = -ETIMEDOUT;
		else
			ret = deadline ? -ERESTARTNOHAND : -ERESTARTSYS;
	}
	mutex_unlock(&hb->lock);
	return ret;
}

static long futex_wait(u32 *uaddr, bool private, u32 val, const u64 *deadline, u32 bitset)
{
	struct futex_waiter w = { .task = current, .bitset = bitset };
	struct futex_bucket *hb;
	u32 cur;
	long ret;

	if (!bitset)
		return -EINVAL;
	ret = get_futex_key(uaddr, private, &w.key);
	if (ret)
		return ret;
	hb = key_bucket(&w.key);
	mutex_lock(&hb->lock);
	ret = read_word_locked(hb, uaddr, &cur);
	if (!ret && cur != val)
		ret = -EAGAIN;
	if (ret) {
		mutex_unlock(&hb->lock);
		key_put(&w.key);
		return ret;
	}
	w.bucket = hb;
	list_add_tail(&w.list, &hb->waiters);
	mutex_unlock(&hb->lock);

	ret = futex_sleep(&w, deadline);
	key_put(&w.key);	/* a requeue moved the reference to the key it gave */
	return ret;
}

/* ---- wake, requeue, wake-op ---- */

int futex_wake(u32 *uaddr, bool private, int nr, u32 bitset)
{
	struct futex_key key;
	struct futex_bucket *hb;
	int ret;

	might_sleep();
	if (!bitset)
		return -EINVAL;
	ret = get_futex_key(uaddr, private, &key);
	if (ret)
		return ret;
	hb = key_bucket(&key);
	mutex_lock(&hb->lock);
	ret = wake_matching(hb, &key, nr, bitset);
	mutex_unlock(&hb->lock);
	key_put(&key);
	return ret;
}

/* Move w from key1 in bucket from to key2 in bucket to (both held). */
static void requeue_waiter(struct futex_waiter *w, struct futex_bucket *from,
			   struct futex_bucket *to, const struct futex_key *key2)
{
	mutex_assert_held(&from->lock);
	mutex_assert_held(&to->lock);
	key_get(key2);		/* the waiter's reference: its old one is dropped by the caller */
	w->key = *key2;
	if (from != to) {
		list_move_tail(&w->list, &to->waiters);
		__atomic_store_n(&w->bucket, to, __ATOMIC_RELEASE);
	}
}

/* The keys of two words (requeue, wake-op): 0 with both referenced, or -errno with none. */
static int get_futex_key_pair(u32 *uaddr1, u32 *uaddr2, bool private, struct futex_key *key1,
			      struct futex_key *key2)
{
	int ret = get_futex_key(uaddr1, private, key1);

	if (ret)
		return ret;
	ret = get_futex_key(uaddr2, private, key2);
	if (ret)
		key_put(key1);
	return ret;
}

/*
 * FUTEX_REQUEUE and FUTEX_CMP_REQUEUE (cmpval: the value *uaddr1 must
 * hold, else -EAGAIN): wake nr_wake waiters of uaddr1 and move up to
 * nr_requeue more to uaddr2. Returns woken + moved.
 */
static long futex_requeue(u32 *uaddr1, bool private, u32 *uaddr2, int nr_wake,
			  int nr_requeue, const u32 *cmpval)
{
	struct futex_key key1, key2;
	struct futex_bucket *hb1, *hb2;
	struct futex_waiter *w, *next;
	int count = 0, moved = 0;
	long ret;

	if (nr_wake < 0 || nr_requeue < 0)
		return -EINVAL;
	ret = get_futex_key_pair(uaddr1, uaddr2, private, &key1, &key2);
	if (ret)
		return ret;
	hb1 = key_bucket(&key1);
	hb2 = key_bucket(&key2);
	double_lock(hb1, hb2);
	if (cmpval) {
		u32 cur;

		ret = read_word_locked(hb1, uaddr1, &cur);
		if (!ret && cur != *cmpval)
			ret = -EAGAIN;
		if (ret)
			goto out;
	}
	list_for_each_entry_safe(w, next, &hb1->waiters, list) {
		if (count - nr_wake >= nr_requeue)
			break;
		if (!key_equal(&w->key, &key1))
			continue;
		if (++count <= nr_wake) {
			wake_waiter(hb1, w);
			continue;
		}
		requeue_waiter(w, hb1, hb2, &key2);
		moved++;
	}
	ret = count;
out:
	double_unlock(hb1, hb2);
	while (moved--)
		key_put(&key1);		/* the references the moved waiters held */
	key_put(&key1);
	key_put(&key2);
	return ret;
}

static int sign_extend_12(u32 v)
{
	return (int)(v << 20) >> 20;
}

/*
 * FUTEX_WAKE_OP's change of *uaddr (encoded: FUTEX_OP()), atomic in user
 * memory, under the bucket's mutex (the word may fault in). Returns 1 if
 * the comparison with the old value holds, 0 if not, or -errno: -ENOSYS
 * for an unknown operation (nothing changed) or comparison (as Linux, the
 * word has been changed then), -EFAULT.
 */
static int change_word_locked(struct futex_bucket *hb, u32 *uaddr, u32 encoded)
{
	static bool shift_reported;
	unsigned int op = (encoded >> 28) & 7, cmp = (encoded >> 24) & 15;
	int oparg = sign_extend_12((encoded >> 12) & 0xfff);
	int cmparg = sign_extend_12(encoded & 0xfff);
	u32 old, new, found;
	int ret;

	mutex_assert_held(&hb->lock);
	might_sleep();
	if (encoded & (FUTEX_OP_OPARG_SHIFT << 28)) {
		if ((oparg < 0 || oparg > 31) &&
		    !__atomic_exchange_n(&shift_reported, true, __ATOMIC_RELAXED))
			pr_info("pid %d (%s): FUTEX_WAKE_OP shifts by %d; taken modulo 32, as Linux does\n",
				current->tid, current->comm, oparg);
		oparg = (int)(1u << (oparg & 31));
	}
	if (op > FUTEX_OP_XOR)
		return -ENOSYS;
	if (copy_from_user(&old, uaddr, sizeof(old)))
		return -EFAULT;
	for (;;) {
		switch (op) {
		case FUTEX_OP_SET:	new = (u32)oparg; break;
		case FUTEX_OP_ADD:	new = old + (u32)oparg; break;
		case FUTEX_OP_OR:	new = old | (u32)oparg; break;
		case FUTEX_OP_ANDN:	new = old & ~(u32)oparg; break;
		default:		new = old ^ (u32)oparg; break;	/* FUTEX_OP_XOR */
		}
		ret = cmpxchg_user_u32(uaddr, old, new, &found);
		if (ret)
			return ret;
		if (found == old)
			break;
		old = found;	/* changed under us: again on what is there */
	}
	switch (cmp) {
	case FUTEX_OP_CMP_EQ:	return (int)old == cmparg;
	case FUTEX_OP_CMP_NE:	return (int)old != cmparg;
	case FUTEX_OP_CMP_LT:	return (int)old < cmparg;
	case FUTEX_OP_CMP_LE:	return (int)old <= cmparg;
	case FUTEX_OP_CMP_GT:	return (int)old > cmparg;
	case FUTEX_OP_CMP_GE:	return (int)old >= cmparg;
	default:		return -ENOSYS;
	}
}

/*
 * FUTEX_WAKE_OP: change *uaddr2, wake nr_wake waiters of uaddr1, and if the
 * comparison held also nr_wake2 of uaddr2. Returns how many woke in all.
 */
static long futex_wake_op(u32 *uaddr1, bool private, u32 *uaddr2, int nr_wake,
			  int nr_wake2, u32 encoded)
{
	struct futex_key key1, key2;
	struct futex_bucket *hb1, *hb2;
	long ret;
	int cond;

	ret = get_futex_key_pair(uaddr1, uaddr2, private, &key1, &key2);
	if (ret)
		return ret;
	hb1 = key_bucket(&key1);
	hb2 = key_bucket(&key2);
	double_lock(hb1, hb2);
	cond = change_word_locked(hb2, uaddr2, encoded);
	if (cond < 0) {
		ret = cond;
	} else {
		/* Bitsets play no part here, as on Linux. */
		ret = wake_matching(hb1, &key1, nr_wake, FUTEX_BITSET_MATCH_ANY);
		if (cond)
			ret += wake_matching(hb2, &key2, nr_wake2, FUTEX_BITSET_MATCH_ANY);
	}
	double_unlock(hb1, hb2);
	key_put(&key1);
	key_put(&key2);
	return ret;
}

/* ---- the system calls ---- */

static bool is_pi_op(int cmd)
{
	switch (cmd) {
	case FUTEX_LOCK_PI:
	case FUTEX_UNLOCK_PI:
	case FUTEX_TRYLOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI:
	case FUTEX_CMP_REQUEUE_PI:
	case FUTEX_LOCK_PI2:
		return true;
	default:
		return false;
	}
}

/*
 * A wait's timeout as a deadline on ktime_get_ns: FUTEX_WAIT's is
 * relative, WAIT_BITSET's absolute on CLOCK_MONOTONIC or, with
 * FUTEX_CLOCK_REALTIME, on CLOCK_REALTIME (converted once, kernel/time.c).
 * Saturates rather than overflows.
 */
static int futex_deadline(u64 utime, int cmd, bool realtime, u64 *deadline)
{
	struct kernel_timespec ts;
	u64 ns;

	if (copy_from_user(&ts, (void *)utime, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (s64)NSEC_PER_SEC)
		return -EINVAL;
	if ((u64)ts.tv_sec >= KTIME_MAX / NSEC_PER_SEC)
		ns = KTIME_MAX;
	else
		ns = (u64)ts.tv_sec * NSEC_PER_SEC + (u64)ts.tv_nsec;
	if (cmd == FUTEX_WAIT) {
		u64 now = ktime_get_ns();

		ns = ns > KTIME_MAX - now ? KTIME_MAX : now + ns;
	} else if (realtime) {
		ns = ktime_real_to_mono(ns);
	}
	*deadline = ns;
	return 0;
}

/*
 * futex(uaddr, op, val, timeout or val2, uaddr2, val3): Linux's checks in
 * Linux's order (the timeout is read first, then FUTEX_CLOCK_REALTIME is
 * refused where it has no meaning, then the operation runs).
 */
long sys_futex(u64 a_uaddr, u64 a_op, u64 a_val, u64 a_utime, u64 a_uaddr2, u64 a_val3)
{
	static bool pi_reported;
	u32 *uaddr = (u32 *)a_uaddr, *uaddr2 = (u32 *)a_uaddr2;
	int op = (int)a_op, cmd = op & FUTEX_CMD_MASK;
	bool private = op & FUTEX_PRIVATE_FLAG;
	u32 val = (u32)a_val, val3 = (u32)a_val3;
	int val2 = (int)(u32)a_utime;	/* the count where the argument is no timeout */
	u64 deadline, *timeout = NULL;
	int ret;

	if (is_pi_op(cmd)) {
		if (!__atomic_exchange_n(&pi_reported, true, __ATOMIC_RELAXED))
			pr_warn("pid %d (%s): futex op %d: priority-inheritance futexes are not implemented (-ENOSYS)\n",
				current->tid, current->comm, cmd);
		return -ENOSYS;
	}
	if (a_utime && (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET)) {
		ret = futex_deadline(a_utime, cmd, op & FUTEX_CLOCK_REALTIME, &deadline);
		if (ret)
			return ret;
		timeout = &deadline;
	}
	if ((op & FUTEX_CLOCK_REALTIME) && cmd != FUTEX_WAIT_BITSET)
		return -ENOSYS;
	switch (cmd) {
	case FUTEX_WAIT:
		return futex_wait(uaddr, private, val, timeout, FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAIT_BITSET:
		return futex_wait(uaddr, private, val, timeout, val3);
	case FUTEX_WAKE:
		return futex_wake(uaddr, private, (int)val, FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAKE_BITSET:
		return futex_wake(uaddr, private, (int)val, val3);
	case FUTEX_REQUEUE:
		return futex_requeue(uaddr, private, uaddr2, (int)val, val2, NULL);
	case FUTEX_CMP_REQUEUE:
		return futex_requeue(uaddr, private, uaddr2, (int)val, val2, &val3);
	case FUTEX_WAKE_OP:
		return futex_wake_op(uaddr, private, uaddr2, (int)val, val2, val3);
	default:
		return -ENOSYS;		/* FUTEX_FD and unknown numbers, as Linux */
	}
}

long sys_set_robust_list(u64 head, u64 len, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if (len != sizeof(struct robust_list_head))
		return -EINVAL;
	current->robust_list = head;
	return 0;
}

/* The caller's own list (pid 0 or its own tid); another task's: -ESRCH. */
long sys_get_robust_list(u64 pid, u64 uhead, u64 ulen, u64 a3, u64 a4, u64 a5)
{
	u64 len = sizeof(struct robust_list_head);

	if ((int)pid && (int)pid != current->tid)
		return -ESRCH;
	if (copy_to_user((void *)ulen, &len, sizeof(len)))
		return -EFAULT;
	return copy_to_user((void *)uhead, &current->robust_list, sizeof(u64)) ? -EFAULT : 0;
}

/* ---- robust lists at exit ---- */

/*
 * One lock of the exiting task's robust list (pi: bit 0 of its entry
 * pointer; pending: it is list_op_pending). Returns -1 to stop the walk
 * (a misaligned or unreachable word), else 0.
 */
static int robust_lock_died(u32 *uaddr, bool pi, bool pending)
{
	u32 uval, nval, mval;

	if ((unsigned long)uaddr % sizeof(u32))
		return -1;
	for (;;) {
		if (copy_from_user(&uval, uaddr, sizeof(uval)))
			return -1;
		/*
		 * The task died in the middle of an unlock (the word is free
		 * already, the wake not done yet) or right after being woken
		 * for the lock: wake the next waiter, who would sleep forever.
		 */
		if (pending && !pi && !(uval & FUTEX_TID_MASK)) {
			futex_wake(uaddr, false, 1, FUTEX_BITSET_MATCH_ANY);
			return 0;
		}
		if ((uval & FUTEX_TID_MASK) != (u32)current->tid)
			return 0;	/* not ours (any more) */
		/* The owner is gone: no tid, the waiters bit kept, OWNER_DIED. */
		mval = (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
		if (cmpxchg_user_u32(uaddr, uval, mval, &nval))
			return -1;
		if (nval == uval)
			break;		/* else a waiter changed it meanwhile: look again */
	}
	/* PI locks would be handed over by the PI code, which Quire does not have. */
	if (!pi && (uval & FUTEX_WAITERS))
		futex_wake(uaddr, false, 1, FUTEX_BITSET_MATCH_ANY);
	return 0;
}

/* A list pointer: the entry (bit 0 cleared) and its PI bit. 0, or -EFAULT. */
static int fetch_robust_entry(u64 uptr, u64 *entry, bool *pi)
{
	u64 v;

	if (copy_from_user(&v, (void *)uptr, sizeof(v)))
		return -EFAULT;
	*entry = v & ~1ULL;
	*pi = v & 1;
	return 0;
}

void futex_exit_robust_list(void)
{
	u64 head = current->robust_list, entry, next = 0, pending;
	bool pi, next_pi = false, pending_pi;
	unsigned int limit = ROBUST_LIST_LIMIT;
	s64 offset;

	if (!head || !current->mm)
		return;
	current->robust_list = 0;
	if (fetch_robust_entry(head + offsetof(struct robust_list_head, next), &entry, &pi) ||
	    copy_from_user(&offset, (void *)(head + offsetof(struct robust_list_head, futex_offset)),
			   sizeof(offset)) ||
	    fetch_robust_entry(head + offsetof(struct robust_list_head, list_op_pending),
			       &pending, &pending_pi))
		return;
	/* Bounded: a list that loops (or is just long) cannot hold the exit up. */
	while (entry != head) {
		int rc = fetch_robust_entry(entry, &next, &next_pi);

		/* The pending entry is done last, whatever the list says. */
		if (entry != pending && robust_lock_died((u32 *)(entry + (u64)offset), pi, false))
			return;
		if (rc)
			return;
		entry = next;
		pi = next_pi;
		if (!--limit)
			break;
	}
	if (pending)
		robust_lock_died((u32 *)(pending + (u64)offset), pending_pi, true);
}
