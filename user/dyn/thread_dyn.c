/*
 * glibc's pthreads on Quire (a dynamically linked PIE, like hello_dyn):
 * glibc 2.36's pthread_create tries clone3 first, gets -ENOSYS and falls
 * back to clone; pthread_join sleeps in FUTEX_WAIT on the thread's tid
 * word until the kernel clears it at the thread's exit and wakes it;
 * mutexes and condition variables sleep in futexes too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ktap.h"

#define NTHREADS 4
#define ROUNDS 2000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;		/* whose move it is in the ping-pong: 0 or 1 */
static long counter;

static void *count(void *arg)
{
	for (int i = 0; i < 10000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return (void *)(long)syscall(SYS_gettid);
}

/* Two threads take turns ROUNDS times: each wait is a futex sleep and wake. */
static void *ping_pong(void *arg)
{
	int me = (int)(long)arg;

	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		while (turn != me)
			pthread_cond_wait(&turn_changed, &lock);
		turn = !me;
		pthread_cond_signal(&turn_changed);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	void *ret[NTHREADS];

	ktap_begin("thread_dyn", 2);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, count, NULL) == 0);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(pthread_join(th[i], &ret[i]) == 0);
		CHECK((long)ret[i] > 0 && (long)ret[i] != getpid());
	}
	CHECK(counter == NTHREADS * 10000L);
	ktap_report("create_join_and_a_contended_mutex", NULL);

	CHECK(pthread_create(&th[0], NULL, ping_pong, (void *)0L) == 0);
	CHECK(pthread_create(&th[1], NULL, ping_pong, (void *)1L) == 0);
	CHECK(pthread_join(th[0], NULL) == 0 && pthread_join(th[1], NULL) == 0);
	CHECK(turn == 0);		/* 2 * ROUNDS moves, strictly alternating */
	ktap_report("condition_variable_ping_pong", NULL);
	return ktap_finish();
}
