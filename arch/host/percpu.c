/*
 * Per-CPU data on the host: the main thread is CPU 0; a test that runs
 * threads as CPUs gives each its own struct percpu (host_cpu_enter).
 */
#include <quire/percpu.h>
#include <quire/preempt.h>

static struct percpu host_cpu0 = { .self = &host_cpu0, .cpu = 0, .online = true };

__thread struct percpu *host_this_cpu = &host_cpu0;
struct percpu *percpu_areas[MAX_CPUS] = { &host_cpu0 };
int nr_cpus_online = 1;

/* No scheduler on the host: a thread keeps its "CPU" until it ends. */
void preempt_schedule(void)
{
	host_this_cpu->need_resched = false;
}
