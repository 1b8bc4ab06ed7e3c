/*
 * Every CPU is up and knows its node; cross-CPU calls reach each CPU once;
 * the page allocator stays exact when every CPU allocates at once.
 */
#include <quire/ktest.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/numa.h>
#include <quire/acpi.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/panic.h>

struct cpu_report {
	int cpu, node, percpu_node;
};

static int report_cpu(void *arg)
{
	struct cpu_report *r = arg;

	preempt_disable();
	r->cpu = smp_processor_id();
	r->node = cpu_to_node(r->cpu);
	r->percpu_node = this_cpu()->node;
	preempt_enable();
	return 0;
}

static void every_cpu_runs_a_thread(struct ktest *t)
{
	static struct cpu_report reports[MAX_CPUS];
	struct task *threads[MAX_CPUS] = { 0 };
	int cpu, n = 0;

	/* Every CPU the MADT lists came up (up to maxcpus=). */
	KEXPECT_EQ(t, nr_cpus_online, min(acpi_madt.nr_cpus ? acpi_madt.nr_cpus : 1, (int)max_cpus));
	for_each_online_cpu(cpu) {
		reports[cpu].cpu = -1;
		threads[cpu] = kthread_create(report_cpu, &reports[cpu], "report");
		KASSERT_TRUE(t, threads[cpu] != NULL);
		KASSERT_EQ(t, kthread_bind(threads[cpu], cpu), 0);
		wake_up_process(threads[cpu]);
	}
	for_each_online_cpu(cpu) {
		KEXPECT_EQ(t, kthread_join(threads[cpu]), 0);
		KEXPECT_EQ(t, reports[cpu].cpu, cpu);
		KEXPECT_EQ(t, reports[cpu].node, reports[cpu].percpu_node);
		KEXPECT_TRUE(t, numa_nodes[reports[cpu].node].cpus & (1ULL << cpu));
		printk(KERN_RAW "    # cpu %d node %d\n", reports[cpu].cpu, reports[cpu].node);
		n++;
	}
	KEXPECT_EQ(t, n, nr_cpus_online);
}

static int hits[MAX_CPUS];

static void count_hit(void *arg)
{
	__atomic_fetch_add(&hits[smp_processor_id()], 1, __ATOMIC_RELAXED);
}

static void report_id(void *arg)
{
	*(int *)arg = smp_processor_id();
}

static void calls_reach_each_cpu_once(struct ktest *t)
{
	long ipis = atomic_long_read(&tlb_stats.ipis_sent);
	int cpu;

	memset(hits, 0, sizeof(hits));
	on_each_cpu(count_hit, NULL, true);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		KEXPECT_EQ(t, hits[cpu], cpu_online(cpu) ? 1 : 0);
	/* One IPI per other CPU. */
	KEXPECT_EQ(t, atomic_long_read(&tlb_stats.ipis_sent) - ipis, nr_cpus_online - 1);
	for_each_online_cpu(cpu) {
		int where = -1;

		KEXPECT_EQ(t, smp_call_function_single(cpu, report_id, &where, true), 0);
		KEXPECT_EQ(t, where, cpu);
	}
	KEXPECT_LT(t, smp_call_function_single(MAX_CPUS - 1 + 10, report_id, NULL, true), 0);
}

#define STRESS_SLOTS 64
#define STRESS_STEPS 3000

static int stress_allocator(void *arg)
{
	u64 seed = 0x9e3779b97f4a7c15ULL * ((u64)(uintptr_t)arg + 1);
	struct page *held[STRESS_SLOTS] = { 0 };
	u8 fill[STRESS_SLOTS];
	int errors = 0;

	for (int step = 0; step < STRESS_STEPS; step++) {
		int slot;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		slot = (int)((seed >> 33) % STRESS_SLOTS);
		if (held[slot]) {
			const u8 *b = page_address(held[slot]);
			unsigned int order = folio_order(page_folio(held[slot]));

			if (b[0] != fill[slot] || b[(PAGE_SIZE << order) - 1] != fill[slot])
				errors++;	/* someone else got these pages too */
			__free_pages(held[slot], order);
			held[slot] = NULL;
		} else {
			unsigned int order = (seed >> 20) % 6;
			int nid = (int)((seed >> 8) % (u64)nr_node_ids);

			held[slot] = alloc_pages_node(node_online(nid) ? nid : 0,
						      __GFP_NOWARN, order);
			if (held[slot]) {
				fill[slot] = (u8)(seed >> 40);
				memset(page_address(held[slot]), fill[slot], PAGE_SIZE << order);
			}
		}
	}
	for (int i = 0; i < STRESS_SLOTS; i++)
		if (held[i])
			__free_pages(held[i], folio_order(page_folio(held[i])));
	return errors;
}

static void allocator_stress_from_every_cpu(struct ktest *t)
{
	unsigned long before[MAX_NUMNODES];
	struct task *threads[MAX_CPUS] = { 0 };
	int cpu, nid;

	/* The threads' task structs come from slab pages: start and end with no spare slab. */
	slab_shrink_all();
	for (nid = 0; nid < MAX_NUMNODES; nid++)
		before[nid] = node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
	for_each_online_cpu(cpu) {
		threads[cpu] = kthread_create(stress_allocator, (void *)(uintptr_t)cpu, "stress");
		KASSERT_TRUE(t, threads[cpu] != NULL);
		kthread_bind(threads[cpu], cpu);
		wake_up_process(threads[cpu]);
	}
	for_each_online_cpu(cpu)
		KEXPECT_EQ(t, kthread_join(threads[cpu]), 0);
	slab_shrink_all();
	for (nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			KEXPECT_EQ(t, node_page_state(nid, NR_FREE_PAGES), before[nid]);
	KEXPECT_EQ(t, mm_verify(), 0);
}

KTEST_SUITE(smp,
	    KTEST_CASE(every_cpu_runs_a_thread),
	    KTEST_CASE(calls_reach_each_cpu_once),
	    KTEST_CASE(allocator_stress_from_every_cpu));

/* The harness's check that a panic on another CPU stops the rest and says where. */
static int panic_here(void *arg)
{
	panic("selftest: deliberate panic on CPU %d", smp_processor_id());
}

static void panic_on_another_cpu(struct ktest *t)
{
	int cpu = nr_cpus_online - 1;
	struct task *th = kthread_create(panic_here, NULL, "panic");

	KASSERT_TRUE(t, th != NULL);
	kthread_bind(th, cpu);
	wake_up_process(th);
	kthread_join(th);		/* never returns: the machine stops */
}

KTEST_SUITE_EXPLICIT(selftest_smp_panic, KTEST_CASE(panic_on_another_cpu));
