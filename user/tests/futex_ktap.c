/*
 * futex(2) and the robust-list calls from ring 3 (kernel/futex.c,
 * docs/futex.md), through the raw system calls: the same binary runs on
 * Linux 6.12, whose rules these are. No threads: waiters are forked
 * processes sleeping on words of a MAP_SHARED page (or of a memfd mapped
 * twice), and the parent is the waker. Each child's success is its exit
 * status.
 *
 * A waker must not act before its waiters sleep. count_waiters() learns
 * how many sleep on a word without waking them: FUTEX_REQUEUE of the word
 * onto itself (wake 0, requeue all) returns how many it moved, and moving
 * a waiter to its own word changes nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "futex_user.h"
#include "ktap.h"

#define PAGE			4096UL

struct robust_list_head {
	void *next;
	long futex_offset;
	void *list_op_pending;
};

/* A robust lock as a library would lay it out: the list link, then the word. */
struct robust_lock {
	void *next;
	fword word;
};

/* -1 with this errno, as the check wants it. */
static int fails(long r, int err)
{
	return r == -1 && errno == err;
}

static fword *shared_page(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	return p == MAP_FAILED ? NULL : memset(p, 0, PAGE);
}

/* Wait (10 s at most) until n tasks sleep on w. */
static int await_waiters(fword *w, long n)
{
	for (int i = 0; i < 1000; i++) {
		if (count_waiters(w) == n)
			return 1;
		sleep_ms(10);
	}
	return 0;
}

/*
 * A child that sleeps on w while it holds val (op: FUTEX_WAIT or, with a
 * bitset, FUTEX_WAIT_BITSET; flags may add FUTEX_PRIVATE_FLAG), for 10 s
 * at most. Exits 0 when woken, else 10 + the errno.
 */
static pid_t fork_waiter(fword *w, uint32_t val, int op, uint32_t bitset)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = ts_of(10000 * MS);
		long r;

		if ((op & ~PRIV) == FUTEX_WAIT_BITSET)
			ts = ts_of(now_ns(CLOCK_MONOTONIC) + 10000 * MS);
		r = futex(w, op, val, &ts, NULL, bitset);
		_exit(r == 0 ? 0 : 10 + errno % 100);
	}
	CHECK(pid > 0);
	return pid;
}

/* A child's exit status, or 1000 + the signal that killed it. */
static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static int still_running(pid_t pid)
{
	int st;

	return waitpid(pid, &st, WNOHANG) == 0;
}

/* ---- the cases ---- */

static void case_wait_mismatch(void)
{
	static uint32_t priv = 1;
	fword *p = shared_page();
	struct timespec past = { 0, 0 };

	CHECK(fails(futex(&priv, FUTEX_WAIT | PRIV, 2, NULL, NULL, 0), EAGAIN));
	CHECK(fails(futex(&priv, FUTEX_WAIT, 2, NULL, NULL, 0), EAGAIN));
	p[0] = 7;
	CHECK(fails(futex(p, FUTEX_WAIT, 8, NULL, NULL, 0), EAGAIN));
	CHECK(fails(futex(p, FUTEX_WAIT_BITSET, 8, NULL, NULL, FUTEX_BITSET_MATCH_ANY), EAGAIN));
	/* The value is checked before the deadline: a past one still gives EAGAIN. */
	CHECK(fails(futex(p, FUTEX_WAIT_BITSET | PRIV, 8, &past, NULL, 1), EAGAIN));
	munmap((void *)p, PAGE);
	ktap_report("wait_value_mismatch_eagain", NULL);
}

static void case_wait_relative_timeout(void)
{
	static uint32_t w;
	fword *p = shared_page();
	struct timespec ts = ts_of(50 * MS), zero = { 0, 0 };
	long long t0 = now_ns(CLOCK_MONOTONIC), dt;

	CHECK(fails(futex(&w, FUTEX_WAIT | PRIV, 0, &ts, NULL, 0), ETIMEDOUT));
	dt = now_ns(CLOCK_MONOTONIC) - t0;
	CHECK(dt >= 50 * MS);
	CHECK(dt < 3000 * MS);
	t0 = now_ns(CLOCK_MONOTONIC);
	ts = ts_of(30 * MS);
	CHECK(fails(futex(p, FUTEX_WAIT, 0, &ts, NULL, 0), ETIMEDOUT));
	CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 30 * MS);
	t0 = now_ns(CLOCK_MONOTONIC);
	CHECK(fails(futex(&w, FUTEX_WAIT | PRIV, 0, &zero, NULL, 0), ETIMEDOUT));
	CHECK(now_ns(CLOCK_MONOTONIC) - t0 < 1000 * MS);
	munmap((void *)p, PAGE);
	ktap_report("wait_relative_timeout", NULL);
}

static void case_wait_bitset_absolute(void)
{
	static uint32_t w;
	long long deadline = now_ns(CLOCK_MONOTONIC) + 60 * MS;
	struct timespec ts = ts_of(deadline);

	CHECK(fails(futex(&w, FUTEX_WAIT_BITSET | PRIV, 0, &ts, NULL, FUTEX_BITSET_MATCH_ANY),
		    ETIMEDOUT));
	CHECK(now_ns(CLOCK_MONOTONIC) >= deadline);
	CHECK(now_ns(CLOCK_MONOTONIC) < deadline + 3000 * MS);
	/* The same on CLOCK_REALTIME. */
	deadline = now_ns(CLOCK_REALTIME) + 60 * MS;
	ts = ts_of(deadline);
	CHECK(fails(futex(&w, FUTEX_WAIT_BITSET | PRIV | FUTEX_CLOCK_REALTIME, 0, &ts, NULL, 1),
		    ETIMEDOUT));
	CHECK(now_ns(CLOCK_REALTIME) >= deadline);
	/* A deadline already past ends the wait at once. */
	deadline = now_ns(CLOCK_MONOTONIC);
	ts = ts_of(deadline > 1000 * MS ? deadline - 1000 * MS : 0);
	CHECK(fails(futex(&w, FUTEX_WAIT_BITSET | PRIV, 0, &ts, NULL, 1), ETIMEDOUT));
	CHECK(now_ns(CLOCK_MONOTONIC) - deadline < 900 * MS);
	/* FUTEX_CLOCK_REALTIME means nothing to FUTEX_WAIT (relative) or a wake. */
	ts = ts_of(10 * MS);
	CHECK(fails(futex(&w, FUTEX_WAIT | PRIV | FUTEX_CLOCK_REALTIME, 0, &ts, NULL, 0), ENOSYS));
	CHECK(fails(futex(&w, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0), ENOSYS));
	ktap_report("wait_bitset_absolute_timeout", NULL);
}

static void case_wake_without_waiters(void)
{
	static uint32_t w;
	fword *p = shared_page();

	CHECK(futex(&w, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0) == 0);
	CHECK(futex(&w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) == 0);
	CHECK(futex(p, FUTEX_WAKE, 1, NULL, NULL, 0) == 0);
	CHECK(futex(p, FUTEX_WAKE_BITSET, 1, NULL, NULL, 3) == 0);
	CHECK(count_waiters(p) == 0);
	munmap((void *)p, PAGE);
	ktap_report("wake_without_waiters", NULL);
}

static void case_shared_anon_across_fork(void)
{
	fword *p = shared_page();
	pid_t pid;

	if (!p)
		goto out;
	/* A shared futex: the child sleeps, the parent changes the word and wakes it. */
	pid = fork();
	if (pid == 0) {
		struct timespec ts = ts_of(10000 * MS);
		long r = futex(&p[0], FUTEX_WAIT, 0, &ts, NULL, 0);

		_exit(r == 0 && p[0] == 1 ? 0 : 1);
	}
	CHECK(await_waiters(&p[0], 1));
	p[0] = 1;
	CHECK(futex(&p[0], FUTEX_WAKE, 1, NULL, NULL, 0) == 1);
	CHECK(reap(pid) == 0);
	CHECK(count_waiters(&p[0]) == 0);

	/* A private futex is (mm, address): the parent's wakes never reach the child. */
	pid = fork();
	if (pid == 0) {
		struct timespec ts = ts_of(400 * MS);
		long r = futex(&p[1], FUTEX_WAIT | PRIV, 0, &ts, NULL, 0);

		_exit(r == -1 && errno == ETIMEDOUT ? 0 : 1);
	}
	sleep_ms(100);
	CHECK(futex(&p[1], FUTEX_WAKE | PRIV, INT_MAX, NULL, NULL, 0) == 0);
	CHECK(futex(&p[1], FUTEX_WAKE, INT_MAX, NULL, NULL, 0) == 0);
	CHECK(reap(pid) == 0);
	munmap((void *)p, PAGE);
out:
	ktap_report("shared_anon_wait_across_fork", NULL);
}

static void case_memfd_two_mappings(void)
{
	static const char zeros[2 * PAGE];
	int fd = memfd_create("futex", 0);
	char *a = MAP_FAILED, *b = MAP_FAILED;
	fword *wa, *wb;
	pid_t pid;
	int sized;

	/* Two pages long (written: Quire has no ftruncate(2) yet). */
	sized = fd >= 0 && write(fd, zeros, sizeof(zeros)) == (ssize_t)sizeof(zeros);
	CHECK(sized);
	if (!sized)
		goto out;
	a = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PAGE);
	CHECK(a != MAP_FAILED && b != MAP_FAILED);
	if (a == MAP_FAILED || b == MAP_FAILED)
		goto out;
	/* The file's second page at two addresses: the same word twice. */
	wa = (fword *)(a + PAGE + 8);
	wb = (fword *)(b + 8);
	CHECK((void *)wa != (void *)wb);
	*wa = 0x1234;
	CHECK(*wb == 0x1234);
	*wa = 0;
	pid = fork_waiter(wa, 0, FUTEX_WAIT, 0);
	CHECK(await_waiters(wb, 1));
	CHECK(count_waiters((fword *)(b + 12)) == 0);	/* another word of the page */
	CHECK(count_waiters((fword *)(a + 8)) == 0);	/* the same offset in page 0 */
	*wb = 1;
	CHECK(futex(wb, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) == 1);
	CHECK(reap(pid) == 0);
out:
	if (a != MAP_FAILED)
		munmap(a, 2 * PAGE);
	if (b != MAP_FAILED)
		munmap(b, PAGE);
	close(fd);
	ktap_report("memfd_mapped_twice_meets", NULL);
}

static void case_bitset(void)
{
	fword *p = shared_page();
	pid_t c1, c2;

	if (!p)
		goto out;
	c1 = fork_waiter(p, 0, FUTEX_WAIT_BITSET, 0x1);
	c2 = fork_waiter(p, 0, FUTEX_WAIT_BITSET, 0x2);
	CHECK(await_waiters(p, 2));
	CHECK(futex(p, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x4) == 0);
	CHECK(futex(p, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x2) == 1);
	CHECK(reap(c2) == 0);
	CHECK(still_running(c1));
	CHECK(count_waiters(p) == 1);
	CHECK(futex(p, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0x3) == 1);
	CHECK(reap(c1) == 0);
	/* A bitset of 0 matches nothing and is refused, by waiters and wakers. */
	CHECK(fails(futex(p, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0), EINVAL));
	CHECK(fails(futex(p, FUTEX_WAIT_BITSET, 0, NULL, NULL, 0), EINVAL));
	munmap((void *)p, PAGE);
out:
	ktap_report("bitset_wake_selects", NULL);
}

static void case_requeue(void)
{
	fword *p = shared_page();
	fword *a, *b;
	pid_t pids[3], first;
	int running = 0, status = -1;

	if (!p)
		goto out;
	a = &p[0];
	b = &p[1];
	for (int i = 0; i < 3; i++)
		pids[i] = fork_waiter(a, 0, FUTEX_WAIT, 0);
	CHECK(await_waiters(a, 3));
	/* Wake one, move the other two to b. */
	CHECK(futex(a, FUTEX_REQUEUE, 1, VAL2(INT_MAX), b, 0) == 3);
	CHECK(count_waiters(a) == 0);
	CHECK(count_waiters(b) == 2);
	/* Exactly one child woke (whichever slept first), and with success. */
	first = waitpid(-1, &status, 0);
	CHECK(first == pids[0] || first == pids[1] || first == pids[2]);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int i = 0; i < 3; i++)
		if (pids[i] != first)
			running += still_running(pids[i]);
	CHECK(running == 2);
	CHECK(futex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) == 2);
	for (int i = 0; i < 3; i++)
		if (pids[i] != first)
			CHECK(reap(pids[i]) == 0);
	/* Negative counts are refused. */
	CHECK(fails(futex(a, FUTEX_REQUEUE, -1, VAL2(1), b, 0), EINVAL));
	CHECK(fails(futex(a, FUTEX_REQUEUE, 1, VAL2(-1), b, 0), EINVAL));
	munmap((void *)p, PAGE);
out:
	ktap_report("requeue_moves_waiters", NULL);
}

static void case_cmp_requeue(void)
{
	fword *p = shared_page();
	fword *a, *b;
	pid_t pids[3];

	if (!p)
		goto out;
	a = &p[0];
	b = &p[1];
	*a = 5;
	for (int i = 0; i < 3; i++)
		pids[i] = fork_waiter(a, 5, FUTEX_WAIT, 0);
	CHECK(await_waiters(a, 3));
	/* The word is not what the caller thinks: nothing moves. */
	CHECK(fails(futex(a, FUTEX_CMP_REQUEUE, 0, VAL2(3), b, 6), EAGAIN));
	CHECK(count_waiters(a) == 3 && count_waiters(b) == 0);
	/* Wake none, move two. */
	CHECK(futex(a, FUTEX_CMP_REQUEUE, 0, VAL2(2), b, 5) == 2);
	CHECK(count_waiters(a) == 1 && count_waiters(b) == 2);
	CHECK(futex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) == 1);
	CHECK(futex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) == 2);
	for (int i = 0; i < 3; i++)
		CHECK(reap(pids[i]) == 0);
	CHECK(fails(futex(a, FUTEX_CMP_REQUEUE, 1, VAL2(-1), b, 5), EINVAL));
	munmap((void *)p, PAGE);
out:
	ktap_report("cmp_requeue", NULL);
}

static long wake_op(fword *w1, int nr1, fword *w2, int nr2, uint32_t op, int flags)
{
	return futex(w1, FUTEX_WAKE_OP | flags, nr1, VAL2(nr2), w2, op);
}

static void case_wake_op_changes_word(void)
{
	static uint32_t w1, w2 = 10;
	void *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_SET, 3, FUTEX_OP_CMP_EQ, 10), PRIV) == 0);
	CHECK(w2 == 3);
	CHECK(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0), PRIV) == 0);
	CHECK(w2 == 8);
	CHECK(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_OR, 0x10, FUTEX_OP_CMP_EQ, 0), 0) == 0);
	CHECK(w2 == 0x18);
	CHECK(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_ANDN, 0x8, FUTEX_OP_CMP_EQ, 0), PRIV) == 0);
	CHECK(w2 == 0x10);
	CHECK(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_XOR, 0x11, FUTEX_OP_CMP_EQ, 0), PRIV) == 0);
	CHECK(w2 == 0x1);
	/* oparg as a shift count: 1 << 4. */
	CHECK(wake_op(&w1, 1, &w2, 1,
		      FUTEX_OP(FUTEX_OP_OR | FUTEX_OP_OPARG_SHIFT, 4, FUTEX_OP_CMP_EQ, 0), PRIV) == 0);
	CHECK(w2 == 0x11);
	/* oparg is a signed 12-bit number: adding -1. */
	CHECK(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_ADD, -1, FUTEX_OP_CMP_EQ, 0), PRIV) == 0);
	CHECK(w2 == 0x10);
	/* An unknown operation changes nothing; an unknown comparison, after the change (Linux). */
	CHECK(fails(wake_op(&w1, 1, &w2, 1, FUTEX_OP(5, 1, FUTEX_OP_CMP_EQ, 0), PRIV), ENOSYS));
	CHECK(w2 == 0x10);
	CHECK(fails(wake_op(&w1, 1, &w2, 1, FUTEX_OP(FUTEX_OP_SET, 2, 6, 0), PRIV), ENOSYS));
	CHECK(w2 == 2);
	/* The second word must be writable and aligned. */
	CHECK(ro != MAP_FAILED);
	CHECK(fails(wake_op(&w1, 1, ro, 1, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0), PRIV),
		    EFAULT));
	CHECK(fails(wake_op(&w1, 1, (fword *)((char *)&w2 + 2), 1,
			    FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0), PRIV), EINVAL));
	munmap(ro, PAGE);
	ktap_report("wake_op_changes_second_word", NULL);
}

static void case_wake_op_wakes(void)
{
	fword *p = shared_page();
	fword *a, *b;
	pid_t wa, wb;

	if (!p)
		goto out;
	a = &p[0];
	b = &p[1];
	wa = fork_waiter(a, 0, FUTEX_WAIT, 0);
	wb = fork_waiter(b, 0, FUTEX_WAIT, 0);
	CHECK(await_waiters(a, 1) && await_waiters(b, 1));
	/* b: 0 -> 1; 0 > 0 is false, so only a's waiter wakes. */
	CHECK(wake_op(a, 1, b, 1, FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 0), 0) == 1);
	CHECK(*b == 1);
	CHECK(reap(wa) == 0);
	CHECK(count_waiters(b) == 1 && still_running(wb));
	/* b: 1 -> 7; 1 == 1 holds, so both wake. */
	wa = fork_waiter(a, 0, FUTEX_WAIT, 0);
	CHECK(await_waiters(a, 1));
	CHECK(wake_op(a, 1, b, 1, FUTEX_OP(FUTEX_OP_SET, 7, FUTEX_OP_CMP_EQ, 1), 0) == 2);
	CHECK(*b == 7);
	CHECK(reap(wa) == 0);
	CHECK(reap(wb) == 0);
	munmap((void *)p, PAGE);
out:
	ktap_report("wake_op_wakes_on_comparison", NULL);
}

static volatile int sig_hits;
static fword *sig_flag;

static void on_usr1(int sig)
{
	sig_hits++;
	if (sig_flag)
		*sig_flag = 1;
}

static void set_usr1(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
}

/* A child that signals the parent once it sleeps on w, then (restart) wakes it. */
static pid_t fork_signaller(fword *w, fword *flag, int wake_after)
{
	pid_t pid = fork();

	if (pid == 0) {
		pid_t parent = getppid();

		if (!await_waiters(w, 1) || kill(parent, SIGUSR1))
			_exit(1);
		if (!wake_after)
			_exit(0);
		/* The handler ran, and the parent sleeps again: the call was restarted. */
		for (int i = 0; i < 1000 && !*flag; i++)
			sleep_ms(10);
		if (!*flag || !await_waiters(w, 1))
			_exit(2);
		*w = 1;
		_exit(futex(w, FUTEX_WAKE, 1, NULL, NULL, 0) == 1 ? 0 : 3);
	}
	CHECK(pid > 0);
	return pid;
}

static void case_signal_interrupts(void)
{
	fword *p = shared_page();
	struct timespec ts = ts_of(10000 * MS);
	long long t0;
	pid_t pid;

	if (!p)
		goto out;
	sig_flag = &p[1];
	/* Untimed, a handler without SA_RESTART: EINTR. */
	set_usr1(0);
	sig_hits = 0;
	pid = fork_signaller(&p[0], &p[1], 0);
	CHECK(fails(futex(&p[0], FUTEX_WAIT, 0, NULL, NULL, 0), EINTR));
	CHECK(sig_hits == 1);
	CHECK(reap(pid) == 0);
	/* Timed: EINTR even with SA_RESTART, well before the timeout. */
	set_usr1(SA_RESTART);
	sig_hits = 0;
	p[1] = 0;
	t0 = now_ns(CLOCK_MONOTONIC);
	pid = fork_signaller(&p[0], &p[1], 0);
	CHECK(fails(futex(&p[0], FUTEX_WAIT, 0, &ts, NULL, 0), EINTR));
	CHECK(now_ns(CLOCK_MONOTONIC) - t0 < 5000 * MS);
	CHECK(sig_hits == 1);
	CHECK(reap(pid) == 0);
	/* Untimed with SA_RESTART: restarted after the handler, then woken: 0. */
	sig_hits = 0;
	p[1] = 0;
	pid = fork_signaller(&p[0], &p[1], 1);
	CHECK(futex(&p[0], FUTEX_WAIT, 0, NULL, NULL, 0) == 0);
	CHECK(sig_hits == 1 && p[0] == 1);
	CHECK(reap(pid) == 0);
	signal(SIGUSR1, SIG_DFL);
	sig_flag = NULL;
	munmap((void *)p, PAGE);
out:
	ktap_report("signal_interrupts_wait", NULL);
}

static void case_errors(void)
{
	static uint32_t w[2];
	struct timespec bad_nsec = { 0, 1000000000 }, neg_sec = { -1, 0 }, neg_nsec = { 0, -1 };
	fword *kernel = (fword *)0xffffffff80000000UL;
	void *gone = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const int pi_ops[] = { FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI,
				      FUTEX_WAIT_REQUEUE_PI, FUTEX_CMP_REQUEUE_PI, FUTEX_LOCK_PI2 };

	CHECK(gone != MAP_FAILED && none != MAP_FAILED);
	munmap(gone, PAGE);
	/* Misaligned. */
	CHECK(fails(futex((fword *)((char *)w + 1), FUTEX_WAIT | PRIV, 0, NULL, NULL, 0), EINVAL));
	CHECK(fails(futex((fword *)((char *)w + 2), FUTEX_WAKE, 1, NULL, NULL, 0), EINVAL));
	/* Unmapped, no access, or the kernel's. */
	CHECK(fails(futex(gone, FUTEX_WAIT | PRIV, 0, NULL, NULL, 0), EFAULT));
	CHECK(fails(futex(gone, FUTEX_WAIT, 0, NULL, NULL, 0), EFAULT));
	CHECK(fails(futex(gone, FUTEX_WAKE, 1, NULL, NULL, 0), EFAULT));
	CHECK(futex(gone, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0) == 0);	/* private: no lookup */
	CHECK(fails(futex(none, FUTEX_WAIT | PRIV, 0, NULL, NULL, 0), EFAULT));
	CHECK(fails(futex(kernel, FUTEX_WAIT | PRIV, 0, NULL, NULL, 0), EFAULT));
	CHECK(fails(futex(kernel, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0), EFAULT));
	/* The timeout: read first, then checked. */
	CHECK(fails(futex(w, FUTEX_WAIT | PRIV, 0, (void *)8, NULL, 0), EFAULT));
	CHECK(fails(futex(w, FUTEX_WAIT | PRIV, 1, (void *)8, NULL, 0), EFAULT));
	CHECK(fails(futex(w, FUTEX_WAIT | PRIV, 0, &bad_nsec, NULL, 0), EINVAL));
	CHECK(fails(futex(w, FUTEX_WAIT | PRIV, 0, &neg_sec, NULL, 0), EINVAL));
	CHECK(fails(futex(w, FUTEX_WAIT_BITSET | PRIV, 0, &neg_nsec, NULL, 1), EINVAL));
	/* Requeue to a bad second word. */
	CHECK(fails(futex(w, FUTEX_REQUEUE, 1, VAL2(1), gone, 0), EFAULT));
	/* Unknown operations, and the PI family (Linux has it; Quire does not, yet). */
	CHECK(fails(futex(w, FUTEX_FD, 0, NULL, NULL, 0), ENOSYS));
	CHECK(fails(futex(w, 14, 0, NULL, NULL, 0), ENOSYS));
	CHECK(fails(futex(w, 0x40 | FUTEX_WAKE, 1, NULL, NULL, 0), ENOSYS));
	for (unsigned int i = 0; i < sizeof(pi_ops) / sizeof(pi_ops[0]); i++)
		CHECK(fails(futex(w, pi_ops[i] | PRIV, 0, NULL, &w[1], 0), ENOSYS));
	munmap(none, PAGE);
	ktap_report("errors_einval_efault_enosys", NULL);
}

/*
 * Robust lists. The child (fork) owns locks in a shared page, lists them
 * in its robust list and dies holding them; the kernel marks each one it
 * still owned FUTEX_OWNER_DIED, clears the tid (as Linux), keeps
 * FUTEX_WAITERS and wakes one waiter where that bit was set.
 */
struct robust_page {
	struct robust_list_head head;	/* unused: each child has its own on its stack */
	struct robust_lock locks[4];
	fword ready;			/* the child's tid, once it holds the locks */
};

#define LOCK_OFFSET ((long)offsetof(struct robust_lock, word) - (long)offsetof(struct robust_lock, next))

static long set_robust(struct robust_list_head *h)
{
	return syscall(SYS_set_robust_list, h, sizeof(*h));
}

static void announce(struct robust_page *rp, pid_t tid)
{
	rp->ready = (uint32_t)tid;
	futex(&rp->ready, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* The child's tid once it is ready (0 after 10 s). */
static uint32_t await_ready(struct robust_page *rp)
{
	struct timespec ts = ts_of(10000 * MS);

	if (!rp->ready)
		futex(&rp->ready, FUTEX_WAIT, 0, &ts, NULL, 0);
	return rp->ready;
}

static void case_robust_owner_died(void)
{
	struct robust_page *rp = (struct robust_page *)shared_page();
	uint32_t tid, parent_tid = (uint32_t)getpid();
	long r;
	pid_t pid;

	if (!rp)
		goto out;
	pid = fork();
	if (pid == 0) {
		struct robust_list_head head;
		uint32_t me = (uint32_t)syscall(SYS_gettid);

		/* 0: held, with a waiter; 1: held; 2: someone else's; 3: pending, held. */
		rp->locks[0].word = me | FUTEX_WAITERS;
		rp->locks[1].word = me;
		rp->locks[2].word = parent_tid;
		rp->locks[3].word = me;
		head.next = &rp->locks[0].next;
		rp->locks[0].next = &rp->locks[1].next;
		rp->locks[1].next = &rp->locks[2].next;
		rp->locks[2].next = &head.next;
		head.futex_offset = LOCK_OFFSET;
		head.list_op_pending = &rp->locks[3].next;
		if (set_robust(&head))
			_exit(1);
		announce(rp, (pid_t)me);
		/* Die holding them once the parent sleeps on lock 0. */
		_exit(await_waiters(&rp->locks[0].word, 1) ? 0 : 2);
	}
	tid = await_ready(rp);
	CHECK(tid != 0);
	/* Woken by the kernel when the owner dies, not by the timeout. */
	{
		struct timespec ts = ts_of(10000 * MS);

		r = futex(&rp->locks[0].word, FUTEX_WAIT, tid | FUTEX_WAITERS, &ts, NULL, 0);
	}
	CHECK(r == 0);
	CHECK(reap(pid) == 0);
	CHECK(rp->locks[0].word == (FUTEX_OWNER_DIED | FUTEX_WAITERS));
	CHECK(rp->locks[1].word == FUTEX_OWNER_DIED);
	CHECK(rp->locks[2].word == parent_tid);
	CHECK(rp->locks[3].word == FUTEX_OWNER_DIED);
	munmap(rp, PAGE);
out:
	ktap_report("robust_list_owner_died", NULL);
}

static void case_robust_bad_lists(void)
{
	struct robust_page *rp = (struct robust_page *)shared_page();
	struct timespec ts = ts_of(10000 * MS);
	uint32_t tid;
	pid_t pid;

	if (!rp)
		goto out;
	/* Killed by a signal: the walk runs all the same. */
	pid = fork();
	if (pid == 0) {
		struct robust_list_head head = { &rp->locks[0].next, LOCK_OFFSET, NULL };

		rp->locks[0].word = (uint32_t)syscall(SYS_gettid);
		rp->locks[0].next = &head.next;
		set_robust(&head);
		raise(SIGKILL);
		_exit(1);
	}
	CHECK(reap(pid) == 1000 + SIGKILL);
	CHECK(rp->locks[0].word == FUTEX_OWNER_DIED);

	/* A list that loops forever: the walk gives up (Linux: 2048 entries). */
	pid = fork();
	if (pid == 0) {
		struct robust_list_head head = { &rp->locks[1].next, LOCK_OFFSET, NULL };

		rp->locks[1].word = (uint32_t)syscall(SYS_gettid);
		rp->locks[1].next = &rp->locks[1].next;
		set_robust(&head);
		_exit(0);
	}
	CHECK(reap(pid) == 0);
	CHECK(rp->locks[1].word == FUTEX_OWNER_DIED);

	/* A bad pointer ends the walk, after the entry that held it. */
	pid = fork();
	if (pid == 0) {
		struct robust_list_head head = { &rp->locks[2].next, LOCK_OFFSET, NULL };

		rp->locks[2].word = (uint32_t)syscall(SYS_gettid);
		rp->locks[2].next = (void *)8;
		set_robust(&head);
		_exit(0);
	}
	CHECK(reap(pid) == 0);
	CHECK(rp->locks[2].word == FUTEX_OWNER_DIED);

	/*
	 * Died between releasing a lock (word 0) and waking its waiter: the
	 * pending entry's waiter is woken by the kernel.
	 */
	rp->locks[3].word = 0;
	rp->ready = 0;
	pid = fork();
	if (pid == 0) {
		struct robust_list_head head = { &head.next, LOCK_OFFSET, &rp->locks[3].next };

		set_robust(&head);
		announce(rp, (pid_t)syscall(SYS_gettid));
		_exit(await_waiters(&rp->locks[3].word, 1) ? 0 : 2);
	}
	tid = await_ready(rp);
	CHECK(tid != 0);
	CHECK(futex(&rp->locks[3].word, FUTEX_WAIT, 0, &ts, NULL, 0) == 0);
	CHECK(reap(pid) == 0);
	CHECK(rp->locks[3].word == 0);
	munmap(rp, PAGE);
out:
	ktap_report("robust_list_bounded_killed_pending", NULL);
}

static void case_robust_syscalls(void)
{
	static struct robust_list_head head = { &head.next, 0, NULL };
	struct robust_list_head *got = NULL;
	size_t len = 0;
	pid_t pid;

	CHECK(syscall(SYS_set_robust_list, &head, sizeof(head) - 1) == -1 && errno == EINVAL);
	CHECK(set_robust(&head) == 0);
	CHECK(syscall(SYS_get_robust_list, 0, &got, &len) == 0);
	CHECK(got == &head && len == sizeof(head));
	got = NULL;
	CHECK(syscall(SYS_get_robust_list, getpid(), &got, &len) == 0 && got == &head);
	CHECK(syscall(SYS_get_robust_list, 999999, &got, &len) == -1 && errno == ESRCH);
	CHECK(syscall(SYS_get_robust_list, 0, (void *)8, &len) == -1 && errno == EFAULT);
	CHECK(syscall(SYS_get_robust_list, 0, &got, (void *)8) == -1 && errno == EFAULT);
	/* A forked child starts without a list (its locks are not its parent's). */
	pid = fork();
	if (pid == 0) {
		struct robust_list_head *h = &head;
		size_t l;

		_exit(syscall(SYS_get_robust_list, 0, &h, &l) == 0 && h == NULL ? 0 : 1);
	}
	CHECK(reap(pid) == 0);
	ktap_report("set_and_get_robust_list", NULL);
}

int main(void)
{
	ktap_begin("futex", 16);
	case_wait_mismatch();
	case_wait_relative_timeout();
	case_wait_bitset_absolute();
	case_wake_without_waiters();
	case_shared_anon_across_fork();
	case_memfd_two_mappings();
	case_bitset();
	case_requeue();
	case_cmp_requeue();
	case_wake_op_changes_word();
	case_wake_op_wakes();
	case_signal_interrupts();
	case_errors();
	case_robust_owner_died();
	case_robust_bad_lists();
	case_robust_syscalls();
	return ktap_finish();
}
