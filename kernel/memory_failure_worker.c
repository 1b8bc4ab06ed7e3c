/*
 * The thread that runs memory_failure() for frames queued where it cannot
 * run (mm/memory-failure.c): the #MC handler, which stands on its own
 * stack with interrupts off, and machine-check-safe copies. Linux does
 * the same with a work item. Started at boot; memory_failure_queue wakes
 * it through memory_failure_kick.
 */
#define pr_fmt(fmt) "memory_failure: " fmt
#include <quire/memory-failure.h>
#include <quire/sched.h>
#include <quire/wait.h>
#include <quire/printk.h>

static DECLARE_WAIT_QUEUE_HEAD(mf_wq);
static bool mf_kicked;

static void kick(void)
{
	__atomic_store_n(&mf_kicked, true, __ATOMIC_RELEASE);
	wake_up_all(&mf_wq);
}

static int memory_failure_thread(void *unused)
{
	for (;;) {
		wait_event(mf_wq, __atomic_load_n(&mf_kicked, __ATOMIC_ACQUIRE));
		__atomic_store_n(&mf_kicked, false, __ATOMIC_RELAXED);
		memory_failure_process_queue();
	}
	return 0;
}

void memory_failure_worker_start(void)
{
	if (!kthread_run(memory_failure_thread, NULL, "kmemfaild")) {
		pr_err("cannot start the worker: queued frames wait\n");
		return;
	}
	__atomic_store_n(&memory_failure_kick, kick, __ATOMIC_RELEASE);
	memory_failure_process_queue();		/* what came before */
}
