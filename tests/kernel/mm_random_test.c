/*
 * User memory in QEMU: the random mm sequence (tests/kernel/mm_random.h,
 * the engine it shares with tests/host/test_mm_random.c) on the real
 * machine (its page tables, its TLB shootdowns across CPUs, its NUMA
 * nodes), with fewer steps than the host: mmap, faults, munmap, mprotect,
 * madvise, fork, exit, PMD and folio splits, deferred split scans and THP
 * setting changes over up to four address spaces built from the kernel
 * (mm_alloc, dup_mm, mmput; no process), mm_verify() and the shadow of
 * every byte written checked after every step. Every 25 steps the THP
 * settings put one size in focus, so that every order is faulted.
 *
 * Explicit-only (its own plan job): "ktest=mm_random". Options:
 *   mm_random.seed=N    replay a sequence (the seed is printed)
 *   mm_random.steps=N   its length (default MM_RANDOM_STEPS)
 *   mm_random.verbose   print each step
 * A failure prints the seed, the step and its operation, and how to
 * replay it.
 */
#include "mm_random.h"
#include <quire/ktest.h>
#include <quire/numa.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/percpu.h>
#include <quire/printk.h>
#include <quire/cmdline.h>

#define MM_RANDOM_STEPS	600		/* about 15 s in QEMU (TCG) on numa3: mm_verify each step */

static unsigned long opt_seed = 20261201, opt_steps = MM_RANDOM_STEPS;
static bool opt_verbose;
CMDLINE_UINT("mm_random.seed", opt_seed, 0, ~0UL, "seed of the mm_random test sequence");
CMDLINE_UINT("mm_random.steps", opt_steps, 1, 100000000, "steps of the mm_random test sequence");
CMDLINE_BOOL("mm_random.verbose", opt_verbose, "print each step of the mm_random sequence");

static struct ktest *cur;	/* the case running */
static bool ran;		/* the sequence ran: the other cases check it */
static cpumask_t saved_cpus;

void mmr_print(const char *text)
{
	printk(KERN_RAW "%s", text);
}

void mmr_fail(const char *file, int line, const char *msg)
{
	ktest_fail_msg(cur, false, file, line, "%s", msg);
}

static void random_sequence(struct ktest *t)
{
	const struct mmr_config cfg = {
		.seed = opt_seed,
		.verbose = opt_verbose,
		.max_mms = 4,
		.region_size = 64UL << 20,
		.mem_budget = (32UL << 20) >> PAGE_SHIFT,
		.low_free = 4096,
		.max_touch = 512,
		.sweep_every = 100,
		.thp_every = 25,
	};
	int cpu, chosen = -1;

	cur = t;
	saved_cpus = current->cpus_allowed;
	/* Large folios come from the faulting CPU's node only: run on one with memory. */
	for_each_online_cpu(cpu) {
		if ((saved_cpus & cpumask_of(cpu)) && node_has_memory(cpu_to_node(cpu))) {
			chosen = cpu;
			break;
		}
	}
	if (chosen < 0)
		ktest_skip(t, "no CPU on a node with memory");
	set_cpus_allowed(current, cpumask_of(chosen));
	yield();
	ran = true;
	printk(KERN_RAW "    # mm_random: seed %lu, %lu steps, on CPU %d (node %d)\n", opt_seed,
	       opt_steps, chosen, cpu_to_node(chosen));
	mmr_run(&cfg, opt_steps);
	if (mmr.failed)
		printk(KERN_RAW "    # mm_random: replay with \"ktest=mm_random mm_random.seed=%lu "
		       "mm_random.steps=%lu\"\n", opt_seed, mmr.steps_done);
}

/* Every folio order (0, 2..9) came from a write fault at least once; every kind of split happened. */
static void every_order_faulted(struct ktest *t)
{
	bool enough = mmr.steps_done >= MM_RANDOM_STEPS;

	cur = t;
	if (!ran)
		ktest_skip(t, "the sequence did not run");
	mmr_check_orders(enough);
	if (!enough)
		ktest_skip(t, "%lu steps: too few to expect every order", mmr.steps_done);
	mmr_check_splits();
}

/* Every mm gone: every page back on its node, no anonymous folio left. */
static void all_memory_back(struct ktest *t)
{
	cur = t;
	if (!ran)
		ktest_skip(t, "the sequence did not run");
	ran = false;
	mmr_end();
	set_cpus_allowed(current, saved_cpus);
}

KTEST_SUITE_EXPLICIT(mm_random,
		     KTEST_CASE(random_sequence),
		     KTEST_CASE(every_order_faulted),
		     KTEST_CASE(all_memory_back));
