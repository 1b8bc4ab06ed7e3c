/*
 * futex(2)'s edges, through the raw system call: EAGAIN when the value
 * differs, ETIMEDOUT for relative and absolute timeouts, the EINVAL,
 * EFAULT and ENOSYS cases, the counts FUTEX_WAKE, FUTEX_REQUEUE,
 * FUTEX_CMP_REQUEUE and FUTEX_WAKE_OP return (FUTEX_WAKE of 0 still wakes
 * one), bitsets, private and shared keys, and what each FUTEX_WAKE_OP
 * operation leaves in the second word.
 *
 * Waiters are forked processes asleep on a MAP_SHARED page. A waker waits
 * until they sleep (count_waiters(): user/tests/futex_user.h).
 */
#include "diff.h"
#include "futex_user.h"
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PAGE	4096UL

/* Waits (10 s at most) until n tasks sleep on w; says so if they never do. */
static void await_waiters(fword *w, long n)
{
	for (int i = 0; i < 1000; i++) {
		if (count_waiters(w) == n)
			return;
		sleep_ms(10);
	}
	say("(waiters: %ld, not %ld)", count_waiters(w), n);
}

/* A child asleep on w (FUTEX_WAIT_BITSET with bitset), 10 s at most; exits 0 when woken, else 100 + errno. */
static pid_t waiter(fword *w, int flags, uint32_t bitset)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = ts_of(now_ns(CLOCK_MONOTONIC) + 10000 * MS);
		long r = futex(w, FUTEX_WAIT_BITSET | flags, *w, &ts, NULL, bitset);

		_exit(r == 0 ? 0 : 100 + errno % 100);
	}
	return pid;
}

static void reap(const char *what, pid_t pid)
{
	int st = 0;

	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) >= 100)
		say("%s: -1 %s", what, errname(WEXITSTATUS(st) - 100));
	else if (WIFEXITED(st))
		say("%s: %s", what, WEXITSTATUS(st) == 0 ? "woken" : "status?");
	else
		say("%s: killed by signal %d", what, WTERMSIG(st));
}

static void mismatch_and_timeouts(fword *shared)
{
	static uint32_t priv = 1;
	struct timespec ts = ts_of(20 * MS), zero = { 0, 0 }, past = { 0, 0 };
	long long t0, deadline;

	show("wait private, value differs", futex(&priv, FUTEX_WAIT | PRIV, 2, NULL, NULL, 0));
	show("wait shared key on private memory, value differs", futex(&priv, FUTEX_WAIT, 2, NULL, NULL, 0));
	shared[0] = 7;
	show("wait shared, value differs", futex(shared, FUTEX_WAIT, 8, NULL, NULL, 0));
	show("wait_bitset, value differs", futex(shared, FUTEX_WAIT_BITSET, 8, NULL, NULL, ~0u));
	show("wait_bitset, value differs, deadline past",
	     futex(shared, FUTEX_WAIT_BITSET | PRIV, 8, &past, NULL, 1));

	t0 = now_ns(CLOCK_MONOTONIC);
	show("wait 20 ms relative", futex(&priv, FUTEX_WAIT | PRIV, 1, &ts, NULL, 0));
	yesno("waited at least 20 ms", now_ns(CLOCK_MONOTONIC) - t0 >= 20 * MS);
	show("wait 20 ms relative, shared", futex(shared, FUTEX_WAIT, 7, &ts, NULL, 0));
	show("wait, zero timeout", futex(&priv, FUTEX_WAIT | PRIV, 1, &zero, NULL, 0));
	deadline = now_ns(CLOCK_MONOTONIC) + 30 * MS;
	ts = ts_of(deadline);
	show("wait_bitset absolute monotonic +30 ms",
	     futex(&priv, FUTEX_WAIT_BITSET | PRIV, 1, &ts, NULL, ~0u));
	yesno("not before the deadline", now_ns(CLOCK_MONOTONIC) >= deadline);
	deadline = now_ns(CLOCK_REALTIME) + 30 * MS;
	ts = ts_of(deadline);
	show("wait_bitset absolute realtime +30 ms",
	     futex(&priv, FUTEX_WAIT_BITSET | PRIV | FUTEX_CLOCK_REALTIME, 1, &ts, NULL, ~0u));
	yesno("not before the realtime deadline", now_ns(CLOCK_REALTIME) >= deadline);
	t0 = now_ns(CLOCK_MONOTONIC);
	show("wait_bitset absolute, deadline past", futex(&priv, FUTEX_WAIT_BITSET | PRIV, 1, &past, NULL, 1));
	yesno("returned at once", now_ns(CLOCK_MONOTONIC) - t0 < 2000 * MS);
	ts = ts_of(10 * MS);
	show("wait with FUTEX_CLOCK_REALTIME (relative)",
	     futex(&priv, FUTEX_WAIT | PRIV | FUTEX_CLOCK_REALTIME, 1, &ts, NULL, 0));
	show("wake with FUTEX_CLOCK_REALTIME", futex(&priv, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0));
}

static void errors(fword *shared, fword *readonly, void *unmapped)
{
	static uint32_t w;
	struct timespec bad_ns = { 0, 1000000000L }, neg = { -1, 0 }, ok = ts_of(10 * MS);
	fword *odd = (fword *)((char *)shared + 1);

	show("unknown op 99", futex(&w, 99 | PRIV, 0, NULL, NULL, 0));
	show("FUTEX_FD", futex(&w, FUTEX_FD, 0, NULL, NULL, 0));
	show("op 15", futex(&w, 15, 0, NULL, NULL, 0));
	show("wait on an unaligned address", futex(odd, FUTEX_WAIT, 0, NULL, NULL, 0));
	show("wake on an unaligned address", futex(odd, FUTEX_WAKE, 1, NULL, NULL, 0));
	show("wake private on an unaligned address", futex(odd, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0));
	show("wait, tv_nsec 1000000000", futex(&w, FUTEX_WAIT | PRIV, 0, &bad_ns, NULL, 0));
	show("wait, tv_sec -1", futex(&w, FUTEX_WAIT | PRIV, 0, &neg, NULL, 0));
	show("wait_bitset, bitset 0", futex(&w, FUTEX_WAIT_BITSET | PRIV, 0, &ok, NULL, 0));
	show("wake_bitset, bitset 0", futex(&w, FUTEX_WAKE_BITSET | PRIV, 1, NULL, NULL, 0));
	show("requeue onto an unaligned address", futex(shared, FUTEX_REQUEUE, 1, VAL2(1), odd, 0));
	show("cmp_requeue, nr_wake -1", futex(shared, FUTEX_CMP_REQUEUE, -1, VAL2(1), shared + 1, shared[0]));
	show("cmp_requeue, nr_requeue -1",
	     futex(shared, FUTEX_CMP_REQUEUE, 1, VAL2(-1), shared + 1, shared[0]));

	show("wait on NULL", futex(NULL, FUTEX_WAIT, 0, NULL, NULL, 0));
	show("wait private on NULL", futex(NULL, FUTEX_WAIT | PRIV, 0, NULL, NULL, 0));
	show("wait on an unmapped page", futex(unmapped, FUTEX_WAIT, 0, NULL, NULL, 0));
	show("wait, timeout pointer bad", futex(&w, FUTEX_WAIT | PRIV, 0, (void *)8, NULL, 0));
	show("wait on a read-only page, value differs", futex(readonly, FUTEX_WAIT, 1, NULL, NULL, 0));
	show("wake on an unmapped page", futex(unmapped, FUTEX_WAKE, 1, NULL, NULL, 0));
	show("wake private on an unmapped page", futex(unmapped, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0));
	show("wake private on NULL", futex(NULL, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0));
	show("wake_op, second word unmapped",
	     futex(&w, FUTEX_WAKE_OP | PRIV, 1, VAL2(1), unmapped, FUTEX_OP(FUTEX_OP_SET, 1, 0, 0)));
	show("wake_op, second word read-only",
	     futex(&w, FUTEX_WAKE_OP | PRIV, 1, VAL2(1), readonly, FUTEX_OP(FUTEX_OP_SET, 1, 0, 0)));
	show("cmp_requeue, first word unmapped",
	     futex(unmapped, FUTEX_CMP_REQUEUE, 1, VAL2(1), shared, 0));
}

static void wake_counts(fword *w)
{
	pid_t pids[4];
	int i;

	show("wake, nobody waits", futex(w, FUTEX_WAKE, 1, NULL, NULL, 0));
	show("wake INT_MAX, nobody waits", futex(w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0));
	for (i = 0; i < 3; i++)
		pids[i] = waiter(w, 0, ~0u);
	await_waiters(w, 3);
	show("wake 2 of 3", futex(w, FUTEX_WAKE, 2, NULL, NULL, 0));
	show("sleepers left", count_waiters(w));
	show("wake 0 (wakes one)", futex(w, FUTEX_WAKE, 0, NULL, NULL, 0));
	show("sleepers left", count_waiters(w));
	for (i = 0; i < 3; i++)
		reap("waiter", pids[i]);
	for (i = 0; i < 2; i++)
		pids[i] = waiter(w, 0, ~0u);
	await_waiters(w, 2);
	show("wake -1 (wakes one)", futex(w, FUTEX_WAKE, -1, NULL, NULL, 0));
	show("wake private on a shared waiter", futex(w, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0));
	show("wake INT_MAX", futex(w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0));
	for (i = 0; i < 2; i++)
		reap("waiter", pids[i]);

	/* Bitsets: a wake reaches only waiters whose bitset it shares. */
	pids[0] = waiter(w, 0, 0x1);
	pids[1] = waiter(w, 0, 0x6);
	await_waiters(w, 2);
	show("wake_bitset 0x8", futex(w, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x8));
	show("wake_bitset 0x2", futex(w, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x2));
	show("wake_bitset 0x1", futex(w, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x1));
	reap("bitset 0x1 waiter", pids[0]);
	reap("bitset 0x6 waiter", pids[1]);

	/* A private waiter is not found by a shared wake, and the other way round. */
	pids[0] = waiter(w, PRIV, ~0u);
	sleep_ms(200);
	show("shared wake of a private waiter", futex(w, FUTEX_WAKE, 1, NULL, NULL, 0));
	show("private wake from another process", futex(w, FUTEX_WAKE | PRIV, 1, NULL, NULL, 0));
	kill(pids[0], SIGKILL);
	reap("private waiter", pids[0]);
}

static void requeues(fword *a, fword *b)
{
	pid_t pids[4];
	int i;

	for (i = 0; i < 4; i++)
		pids[i] = waiter(a, 0, ~0u);
	await_waiters(a, 4);
	show("requeue: wake 1, move 2", futex(a, FUTEX_REQUEUE, 1, VAL2(2), b, 0));
	show("left on the first word", count_waiters(a));
	show("on the second word", count_waiters(b));
	show("cmp_requeue, value differs", futex(a, FUTEX_CMP_REQUEUE, 1, VAL2(1), b, *a + 1));
	show("cmp_requeue: wake 0, move 5", futex(a, FUTEX_CMP_REQUEUE, 0, VAL2(5), b, *a));
	show("left on the first word", count_waiters(a));
	show("on the second word", count_waiters(b));
	show("cmp_requeue back: wake 1, move 1", futex(b, FUTEX_CMP_REQUEUE, 1, VAL2(1), a, *b));
	show("wake all on the first word", futex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0));
	show("wake all on the second word", futex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0));
	for (i = 0; i < 4; i++)
		reap("requeued waiter", pids[i]);
}

static void wake_ops(fword *a, fword *b)
{
	static const struct { const char *name; int op, oparg; } ops[] = {
		{ "SET 5", FUTEX_OP_SET, 5 },
		{ "ADD 3", FUTEX_OP_ADD, 3 },
		{ "ADD -1 (12-bit signed)", FUTEX_OP_ADD, 0xfff },
		{ "OR 0x30", FUTEX_OP_OR, 0x30 },
		{ "ANDN 0x10", FUTEX_OP_ANDN, 0x10 },
		{ "XOR 0x7ff", FUTEX_OP_XOR, 0x7ff },
		{ "SET 1<<4", FUTEX_OP_SET | FUTEX_OP_OPARG_SHIFT, 4 },
		{ "OR 1<<31", FUTEX_OP_OR | FUTEX_OP_OPARG_SHIFT, 31 },
		{ "SET 1<<33 (shift taken mod 32)", FUTEX_OP_SET | FUTEX_OP_OPARG_SHIFT, 33 },
		{ "unknown op 7", 7, 1 },
	};
	static const struct { const char *name; int cmp, cmparg; } cmps[] = {
		{ "EQ 9", FUTEX_OP_CMP_EQ, 9 }, { "EQ 8", FUTEX_OP_CMP_EQ, 8 },
		{ "NE 9", FUTEX_OP_CMP_NE, 9 }, { "LT 10", FUTEX_OP_CMP_LT, 10 },
		{ "LE 9", FUTEX_OP_CMP_LE, 9 }, { "GT 9", FUTEX_OP_CMP_GT, 9 },
		{ "GE 9", FUTEX_OP_CMP_GE, 9 }, { "LT -1 (12-bit signed)", FUTEX_OP_CMP_LT, 0xfff },
		{ "unknown comparison 6", 6, 0 },
	};
	unsigned i;

	*b = 0;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		uint32_t before = *b;
		long r = futex(a, FUTEX_WAKE_OP, 1, VAL2(1), b, FUTEX_OP(ops[i].op, ops[i].oparg,
									FUTEX_OP_CMP_EQ, 0));
		int e = errno;

		say("wake_op %s: %s%s, second word %#x -> %#x", ops[i].name, r == -1 ? "-1 " : "",
		    r == -1 ? errname(e) : r == 0 ? "0" : "woke", before, *b);
	}
	/* The comparison is on the old value (9 here); a true one wakes the second word's waiter too. */
	for (i = 0; i < sizeof(cmps) / sizeof(cmps[0]); i++) {
		pid_t p1, p2;
		long r;

		*a = 0;
		*b = 9;
		p1 = waiter(a, 0, ~0u);
		p2 = waiter(b, 0, ~0u);
		await_waiters(a, 1);
		await_waiters(b, 1);
		errno = 0;
		r = futex(a, FUTEX_WAKE_OP, 1, VAL2(1), b,
			  FUTEX_OP(FUTEX_OP_ADD, 1, cmps[i].cmp, cmps[i].cmparg));
		show_result(cmps[i].name, r, errno);
		say("  second word now %u; still asleep: %ld on the first, %ld on the second", *b,
		    count_waiters(a), count_waiters(b));
		futex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		futex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		reap("  first word's waiter", p1);
		reap("  second word's waiter", p2);
	}
}

int main(void)
{
	char *page = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fword *shared = (fword *)page, *readonly = (fword *)(page + PAGE);

	diff_begin("futex");
	memset(page, 0, 3 * PAGE);
	munmap(page + 2 * PAGE, PAGE);
	mprotect(page + PAGE, PAGE, PROT_READ);
	mismatch_and_timeouts(shared);
	errors(shared, readonly, page + 2 * PAGE);
	shared[0] = 0;
	wake_counts(shared);
	requeues(shared + 16, shared + 32);
	wake_ops(shared + 48, shared + 64);
	return 0;
}
