/*
 * Threads from ring 3: musl's pthreads on Quire's clone(CLONE_THREAD),
 * and raw clone for the tid words. Run under init as /tests/thread_ktap.
 * Each case that must end a process forks a child to do it and checks
 * the child's wait status.
 */
#define _GNU_SOURCE
#include <errno.h>
#define FUTEX_WAIT_PRIVATE 128	/* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ktap.h"

#define NTHREADS 4

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Wait for a child and return its raw wait status (-1: none in 20 s). */
static int wait_child(pid_t pid)
{
	int st;
	long end = now_ms() + 20000;

	while (now_ms() < end) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* ---- 1: ids ---- */

struct ids { pid_t pid, tid; };

static void *report_ids(void *arg)
{
	struct ids *id = arg;

	id->pid = getpid();
	id->tid = my_tid();
	return (void *)(long)(id->tid + 1);
}

static void case_create_join_ids(void)
{
	pthread_t th[NTHREADS];
	struct ids id[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, report_ids, &id[i]) == 0);
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;

		CHECK(pthread_join(th[i], &ret) == 0);
		CHECK((long)ret == id[i].tid + 1);
		CHECK(id[i].pid == getpid());
		CHECK(id[i].tid != getpid() && id[i].tid > 0);
		for (int j = 0; j < i; j++)
			CHECK(id[i].tid != id[j].tid);
	}
	CHECK(my_tid() == getpid());		/* the first thread's id is the process's */
	ktap_report("create_join_ids", NULL);
}

/* ---- 2: one address space, a mutex, many CPUs ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long plain_counter;
static atomic_long atomic_counter;
static atomic_int cpus_seen;
static atomic_int spinning;

static void *hammer(void *arg)
{
	atomic_fetch_add(&spinning, 1);
	while (atomic_load(&spinning) < NTHREADS)	/* all at once: they must share CPUs */
		;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&lock);
		plain_counter++;
		pthread_mutex_unlock(&lock);
		atomic_fetch_add(&atomic_counter, 1);
		if (i % 1000 == 0)
			atomic_fetch_or(&cpus_seen, 1 << sched_getcpu());
	}
	return NULL;
}

static void case_shared_memory_and_cpus(void)
{
	pthread_t th[NTHREADS];
	int n = 0;

	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, hammer, NULL) == 0);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	CHECK(plain_counter == NTHREADS * 20000L);
	CHECK(atomic_load(&atomic_counter) == NTHREADS * 20000L);
	for (int c = 0; c < 32; c++)
		n += (atomic_load(&cpus_seen) >> c) & 1;
	printf("    # threads ran on %d CPUs (mask %#x)\n", n, atomic_load(&cpus_seen));
	CHECK(n >= 2);
	ktap_report("shared_memory_mutex_and_cpus", NULL);
}

/* ---- 3: raw clone: the tid words and the flag rules ---- */

#define CLONE_FLAGS_THREAD (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | \
			    CLONE_SYSVSEM)

static volatile int raw_ran, raw_ctid_seen;
static volatile int raw_ptid, raw_ctid;

/*
 * clone(flags, stack, ptid, ctid, 0), the child calling fn() on the new
 * stack and then exit(0). It must not touch libc's thread state (no
 * TLS): fn only uses raw system calls.
 */
long raw_clone(unsigned long flags, void *stack, volatile int *ptid, volatile int *ctid,
	       void (*fn)(void));
__asm__(".text\n.globl raw_clone\nraw_clone:\n"
	"	mov %rcx, %r10\n"	/* ctid: the kernel's 4th argument register */
	"	mov %r8, %r9\n"		/* fn, kept across the call */
	"	xor %r8d, %r8d\n"	/* tls: none */
	"	mov $56, %eax\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	call *%r9\n"
	"	mov $60, %eax\n"
	"	xor %edi, %edi\n"
	"	syscall\n"
	"	ud2\n"
	"1:	ret\n");

static void raw_child(void)
{
	long tid;

	__asm__ volatile("syscall" : "=a"(tid) : "a"(SYS_gettid) : "rcx", "r11", "memory");
	raw_ctid_seen = raw_ctid == tid;	/* CLONE_CHILD_SETTID wrote it before we ran */
	raw_ran = 1;
}

static void case_raw_clone_tid_words(void)
{
	size_t size = 64 * 1024;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long tid, end;

	CHECK(stack != MAP_FAILED);
	tid = raw_clone(CLONE_FLAGS_THREAD | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID |
			CLONE_CHILD_CLEARTID, stack + size, &raw_ptid, &raw_ctid, raw_child);
	CHECK(tid > 0);
	CHECK(raw_ptid == tid);
	for (end = now_ms() + 5000; !raw_ran && now_ms() < end;)
		sched_yield();
	for (end = now_ms() + 5000; raw_ctid != 0 && now_ms() < end;)
		sched_yield();
	if (!(raw_ran && raw_ctid_seen))
		printf("    # raw child: ran %d, saw its tid in ctid %d (tid %ld)\n", raw_ran, raw_ctid_seen, tid);
	CHECK(raw_ran && raw_ctid_seen);
	CHECK(raw_ctid == 0);				/* CLONE_CHILD_CLEARTID at its exit */
	CHECK(kill(tid, 0) == -1 && errno == ESRCH);	/* gone, and nobody waits for it */
	munmap(stack, size);

	/* Linux's consistency rules. */
	errno = 0;
	CHECK(syscall(SYS_clone, CLONE_THREAD | CLONE_VM, 0, 0, 0, 0) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_clone, CLONE_SIGHAND, 0, 0, 0, 0) == -1 && errno == EINVAL);
	ktap_report("raw_clone_tid_words_and_flag_rules", NULL);
}

/* ---- 4: how a threaded process ends ---- */

static void *sleep_then_exit(void *arg)
{
	usleep(100000);
	exit((int)(long)arg);		/* exit_group: the whole process, status arg */
}

static void *sleep_forever(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

static void *thread_returns(void *arg)
{
	usleep(50000);
	return NULL;
}

static void case_process_ends(const char *self)
{
	pid_t pid;
	int st;
	long t0;

	/* The first thread leaves with pthread_exit; another ends the process later. */
	pid = fork();
	if (pid == 0) {
		execl(self, self, "pexit-then-exit7", (char *)NULL);
		_exit(99);
	}
	st = wait_child(pid);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 7);

	/* Every thread leaves with pthread_exit: the process ends, status 0. */
	pid = fork();
	if (pid == 0) {
		execl(self, self, "pexit-all", (char *)NULL);
		_exit(99);
	}
	st = wait_child(pid);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* exit from the first thread ends threads that sleep in pause(). */
	t0 = now_ms();
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		for (int i = 0; i < 3; i++)
			pthread_create(&t, NULL, sleep_forever, NULL);
		usleep(50000);
		_exit(5);
	}
	st = wait_child(pid);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 5);
	CHECK(now_ms() - t0 < 5000);
	ktap_report("process_ends_with_its_last_thread_or_exit_group", NULL);
}

/* ---- 5: signals and threads ---- */

static atomic_int handler_tid;

static void on_usr(int sig)
{
	atomic_store(&handler_tid, (int)my_tid());
}

static atomic_int ready;
static volatile pid_t waiter_tid;

static void *unblocked_waiter(void *arg)
{
	sigset_t none;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	waiter_tid = my_tid();
	atomic_store(&ready, 1);
	while (!atomic_load(&handler_tid))
		usleep(1000);
	return NULL;
}

static int futex_word;
static volatile long futex_result;
static volatile int futex_errno;

static void *futex_sleeper(void *arg)
{
	sigset_t none;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	waiter_tid = my_tid();
	atomic_store(&ready, 1);
	futex_result = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	futex_errno = errno;
	return NULL;
}

static atomic_int alarms;

static void on_alarm(int sig)
{
	atomic_fetch_add(&alarms, 1);
}

static void *set_alarm(void *arg)
{
	struct itimerval v = { .it_value = { 0, 200000 } };	/* once, in 200 ms */

	setitimer(ITIMER_REAL, &v, NULL);
	return NULL;
}

static void *fault_in_thread(void *arg)
{
	int *volatile bad = (int *)8;

	usleep(20000);
	*bad = 1;
	return NULL;
}

static void case_signals(void)
{
	struct sigaction sa;
	sigset_t usr1;
	pthread_t t;
	pid_t pid;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);

	/* kill() to the process runs the handler in the thread that does not block it. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	atomic_store(&handler_tid, 0);
	CHECK(pthread_create(&t, NULL, unblocked_waiter, NULL) == 0);
	while (!atomic_load(&ready))
		usleep(1000);
	CHECK(kill(getpid(), SIGUSR1) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(atomic_load(&handler_tid) == waiter_tid);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);

	/* pthread_kill (tgkill) runs it in the thread named. */
	atomic_store(&handler_tid, 0);
	atomic_store(&ready, 0);
	CHECK(pthread_create(&t, NULL, unblocked_waiter, NULL) == 0);
	while (!atomic_load(&ready))
		usleep(1000);
	CHECK(pthread_kill(t, SIGUSR2) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(atomic_load(&handler_tid) == waiter_tid);
	CHECK(syscall(SYS_tgkill, getpid(), waiter_tid, 0) == -1 && errno == ESRCH);

	/* The process has one ITIMER_REAL: set by a thread that ends, it still fires. */
	{
		struct itimerval seen;
		long end;

		atomic_store(&alarms, 0);
		sa.sa_handler = on_alarm;
		CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
		CHECK(pthread_create(&t, NULL, set_alarm, NULL) == 0);
		CHECK(pthread_join(t, NULL) == 0);
		CHECK(getitimer(ITIMER_REAL, &seen) == 0);
		CHECK(seen.it_value.tv_sec || seen.it_value.tv_usec);	/* the setter's, seen here */
		for (end = now_ms() + 3000; !atomic_load(&alarms) && now_ms() < end;)
			usleep(5000);
		CHECK(atomic_load(&alarms) == 1);
	}

	/* A signal to a thread asleep in FUTEX_WAIT: the wait ends with EINTR (no SA_RESTART). */
	atomic_store(&handler_tid, 0);
	atomic_store(&ready, 0);
	futex_word = 0;
	CHECK(pthread_create(&t, NULL, futex_sleeper, NULL) == 0);
	while (!atomic_load(&ready))
		usleep(1000);
	usleep(20000);				/* into the wait */
	CHECK(pthread_kill(t, SIGUSR2) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(futex_result == -1 && futex_errno == EINTR);
	CHECK(atomic_load(&handler_tid) == waiter_tid);

	/* A fault in one thread ends the whole process. */
	pid = fork();
	if (pid == 0) {
		pthread_create(&t, NULL, fault_in_thread, NULL);
		for (;;)
			pause();
	}
	st = wait_child(pid);
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	ktap_report("signals_to_threads", NULL);
}

/* ---- 6: fork and execve in a threaded process ---- */

static void *forker(void *arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(3);
	return (void *)(long)pid;
}

static void case_fork_and_exec(const char *self)
{
	pthread_t t;
	void *ret;
	pid_t pid;
	int st;

	/* A child forked by another thread is the process's: the first thread reaps it. */
	CHECK(pthread_create(&t, NULL, forker, NULL) == 0);
	CHECK(pthread_join(t, &ret) == 0);
	st = wait_child((pid_t)(long)ret);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 3);

	/* execve ends the other threads; the new program runs alone. */
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 2; i++)
			pthread_create(&t, NULL, sleep_forever, NULL);
		usleep(20000);
		execl(self, self, "exec-probe", (char *)NULL);
		_exit(99);
	}
	st = wait_child(pid);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 42);
	ktap_report("fork_and_execve_with_threads", NULL);
}

/* ---- 7: one address space, many threads changing it at once ---- */

#define STRESS_ROUNDS 60
#define PAGE 4096

static atomic_int stress_errors, stress_go;
static char *shared_area;		/* NTHREADS * 64 pages, written by all */
static unsigned long stack_low;		/* the main stack VMA's start */

/* The [stack] line of /proc/self/smaps: its start address, or 0. */
static unsigned long stack_vma_start(void)
{
	char line[256];
	unsigned long lo = 0, hi;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	fclose(f);
	return lo;
}

static void *mm_stress(void *arg)
{
	long id = (long)arg;

	while (!atomic_load(&stress_go))
		;
	/* Grow the first thread's stack from here, all threads at once. */
	for (int k = 0; k < 8; k++) {
		volatile long *p = (long *)(stack_low - (unsigned long)(k * NTHREADS + id + 1) * PAGE);

		*p = id * 100 + k;
	}
	for (int r = 0; r < STRESS_ROUNDS; r++) {
		size_t len = 16 * PAGE;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			atomic_fetch_add(&stress_errors, 1);
			continue;
		}
		for (size_t o = 0; o < len; o += PAGE)
			m[o] = (char)(id + r + o / PAGE);
		mprotect(m, len / 2, PROT_READ);
		if (r % 4 == 0)
			madvise(m + len / 2, PAGE, MADV_DONTNEED);	/* that page reads zero again */
		for (size_t o = 0; o < len; o += PAGE) {
			char want = o == len / 2 && r % 4 == 0 ? 0 : (char)(id + r + o / PAGE);

			if (m[o] != want)
				atomic_fetch_add(&stress_errors, 1);
		}
		munmap(m, len);
		/* Interleaved pages of one shared area: faults on neighbouring PTEs. */
		for (int k = 0; k < 64; k++)
			shared_area[(size_t)(k * NTHREADS + id) * PAGE + r] = (char)(id + 1);
		if (id == 0 && r % 10 == 0) {		/* fork while the others fault */
			pid_t pid = fork();

			if (pid == 0)
				_exit(shared_area[(size_t)NTHREADS * PAGE] == 1 ? 0 : 1);
			if (pid < 0 || wait_child(pid) != 0)
				atomic_fetch_add(&stress_errors, 1);
		}
	}
	return NULL;
}

static void case_mm_stress(void)
{
	pthread_t th[NTHREADS];
	unsigned long low;

	shared_area = mmap(NULL, (size_t)NTHREADS * 64 * PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(shared_area != MAP_FAILED);
	shared_area[(size_t)NTHREADS * PAGE] = 1;	/* read by the fork children */
	stack_low = stack_vma_start();
	CHECK(stack_low != 0);
	for (long i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, mm_stress, (void *)i) == 0);
	atomic_store(&stress_go, 1);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	CHECK(atomic_load(&stress_errors) == 0);
	for (long id = 0; id < NTHREADS; id++)
		for (int k = 0; k < 8; k++)
			CHECK(*(long *)(stack_low - (unsigned long)(k * NTHREADS + id + 1) * PAGE) ==
			      id * 100 + k);
	low = stack_vma_start();
	CHECK(low != 0 && low <= stack_low - 8 * NTHREADS * PAGE);	/* one VMA grew down */
	for (long id = 0; id < NTHREADS; id++)
		for (int k = 0; k < 64; k++)
			for (int r = 0; r < STRESS_ROUNDS; r++)
				if (shared_area[(size_t)(k * NTHREADS + id) * PAGE + r] != (char)(id + 1)) {
					CHECK(!"shared area byte lost");
					k = 64;
					break;
				}
	munmap(shared_area, (size_t)NTHREADS * 64 * PAGE);
	ktap_report("mm_stress_faults_mmap_mprotect_fork_and_stack_growth", NULL);
}

int main(int argc, char **argv)
{
	/* Probes run in a fresh exec (a fork child of a threaded musl program has no tid word). */
	if (argc > 1 && strcmp(argv[1], "pexit-then-exit7") == 0) {
		pthread_t t;

		pthread_create(&t, NULL, sleep_then_exit, (void *)7L);
		pthread_exit(NULL);
	}
	if (argc > 1 && strcmp(argv[1], "pexit-all") == 0) {
		pthread_t t;

		pthread_create(&t, NULL, thread_returns, NULL);
		pthread_exit(NULL);
	}
	if (argc > 1 && strcmp(argv[1], "exec-probe") == 0)
		return getpid() == my_tid() ? 42 : 1;	/* alone, as the process's first thread */
	ktap_begin("thread", 7);
	case_create_join_ids();
	case_shared_memory_and_cpus();
	case_raw_clone_tid_words();
	case_process_ends(argv[0]);
	case_signals();
	case_fork_and_exec(argv[0]);
	case_mm_stress();
	return ktap_finish();
}
