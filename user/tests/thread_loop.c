/*
 * Eight threads at once, a hundred times over (issue 11's acceptance
 * loop): each run is a new process whose 8 threads meet at pthread
 * barriers, take a mutex, hand items through a condition variable, and
 * meanwhile map, fault, check and unmap memory of their own and write into
 * a shared buffer. A run exits 0 only when every count and every byte is
 * right. The driver (no argument, or "-r N") runs N (100) such processes
 * one after the other, each by fork and execve of this program with
 * "once", requires exit status 0 from each, and then reads
 * /proc/quire/mm_verify, which must say 0. Prints KTAP.
 *
 * Built twice: static musl (/tests/thread_loop) and static glibc
 * (/tests/thread_loop_glibc, user/Makefile).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "ktap.h"
#include "mm_verify.h"

#define NTHREADS	8
#define ROUNDS		10
#define PAGES		8
#define PAGE		4096UL

static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static long counter;		/* under lock */
static long queue[NTHREADS * ROUNDS], head, tail;	/* under lock */
static unsigned char *shared;	/* NTHREADS * PAGE bytes, one page per thread */
static int failures;		/* under lock */

static void fail(const char *what, int id)
{
	pthread_mutex_lock(&lock);
	failures++;
	pthread_mutex_unlock(&lock);
	fprintf(stderr, "thread %d: %s\n", id, what);
}

/* Map, fill, check and unmap a private region; 0 when every byte was right. */
static int churn(int id, int round)
{
	unsigned char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int bad = 0;

	if (p == MAP_FAILED)
		return -1;
	for (unsigned long i = 0; i < PAGES * PAGE; i += 64)
		p[i] = (unsigned char)(id * 31 + round + i / PAGE);
	if (round % 4 == 0)
		mprotect(p, PAGE, PROT_READ);	/* a split and a merge-back in the VMA list */
	for (unsigned long i = 0; i < PAGES * PAGE; i += 64)
		bad |= p[i] != (unsigned char)(id * 31 + round + i / PAGE);
	return munmap(p, PAGES * PAGE) || bad ? -1 : 0;
}

static void *producer(void *arg)
{
	int id = (int)(long)arg;

	pthread_barrier_wait(&barrier);
	for (int r = 0; r < ROUNDS; r++) {
		if (churn(id, r))
			fail("private memory wrong", id);
		memset(shared + id * PAGE, id + r, PAGE);
		pthread_mutex_lock(&lock);
		counter++;
		queue[tail++] = (long)id << 16 | r;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&lock);
		if (r == ROUNDS / 2)
			pthread_barrier_wait(&barrier);		/* everyone halfway */
	}
	for (unsigned long i = 0; i < PAGE; i++)
		if (shared[id * PAGE + i] != (unsigned char)(id + ROUNDS - 1)) {
			fail("shared page wrong", id);
			break;
		}
	return NULL;
}

/* The main thread consumes every item; each producer's come in order. */
static int run_once(void)
{
	pthread_t t[NTHREADS];
	int next[NTHREADS] = { 0 };

	shared = mmap(NULL, NTHREADS * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED || pthread_barrier_init(&barrier, NULL, NTHREADS))
		return 2;
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, producer, (void *)i))
			return 3;
	for (int got = 0; got < NTHREADS * ROUNDS; got++) {
		long item;

		pthread_mutex_lock(&lock);
		while (head == tail)
			pthread_cond_wait(&nonempty, &lock);
		item = queue[head++];
		pthread_mutex_unlock(&lock);
		if ((item & 0xffff) != next[item >> 16]++)
			fail("items out of order", (int)(item >> 16));
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	if (counter != NTHREADS * ROUNDS)
		return 4;
	return failures ? 5 : 0;
}

int main(int argc, char **argv)
{
	int runs = 100, ok = 0, first_bad = -1, bad_status = 0;
	long problems;

	if (argc > 1 && !strcmp(argv[1], "once"))
		return run_once();
	if (argc > 2 && !strcmp(argv[1], "-r"))
		runs = atoi(argv[2]);
	ktap_begin("thread_loop", 2);
	for (int i = 0; i < runs; i++) {
		int status = -1;
		pid_t pid = fork();

		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "once", (char *)NULL);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0) {
			ok++;
		} else if (first_bad < 0) {
			first_bad = i;
			bad_status = status;
		}
	}
	if (first_bad >= 0)
		printf("    # run %d of %d failed: wait status %#x\n", first_bad + 1, runs, bad_status);
	CHECK(ok == runs);
	printf("    # %d of %d runs of %d threads exited 0\n", ok, runs, NTHREADS);
	ktap_report("runs_exit_0", NULL);
	problems = read_mm_verify();
	CHECK(problems == 0);
	ktap_report("mm_verify_clean", NULL);
	return ktap_finish();
}
