/*
 * Real machine checks, injected by QEMU (only run when named: the jobs
 * mce-copy and mce-kernel-fatal give the runner a monitor socket, mce=inject).
 * A case prints "mce-inject: when ... mce CPU BANK STATUS MCGSTATUS ADDR
 * MISC"; the runner stops the VM until this CPU is where the request says,
 * and injects an uncorrected, action-required memory error (the status
 * 0xbd80000000000000: VAL UC EN MISCV ADDRV S AR; MCG_STATUS RIPV EIPV
 * MCIP; MISC: a physical address, 64-byte granule).
 *
 *   mce_inject: inside copy_mc's rep movsq the copy returns short and the
 *	kernel lives on; twice, so the first must have cleared MCIP (a machine
 *	check with MCIP set would reset the machine).
 *   mce_inject_fatal: in kernel mode outside a safe copy: a panic, with the
 *	decoded banks in the log (the job expects the panic).
 */
#include <quire/ktest.h>
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <quire/sched.h>
#include <quire/percpu.h>
#include <quire/printk.h>
#include <quire/time.h>

#define MCE_STATUS_SRAR	"0xbd80000000000000"
#define WAIT_NS		(60ULL * NSEC_PER_SEC)

extern const char __copy_mc_movsq_end[];

/* Run the rest of the case on the CPU it is on now; the old mask back in *saved. */
static int stay_here(cpumask_t *saved)
{
	int cpu;

	*saved = current->cpus_allowed;
	cpu = this_cpu()->cpu;
	set_cpus_allowed(current, cpumask_of(cpu));
	return this_cpu()->cpu;
}

static void one_machine_check_in_a_copy(struct ktest *t)
{
	struct page *s = alloc_pages(0, 9), *d = alloc_pages(0, 9);
	u64 pos = printk_log_pos(), deadline = ktime_get_ns() + WAIT_NS;
	unsigned long left = 0;
	cpumask_t saved;
	int cpu;

	KASSERT_TRUE(t, s && d);
	cpu = stay_here(&saved);
	printk(KERN_RAW "mce-inject: when rip=%#lx-%#lx mce %d 1 " MCE_STATUS_SRAR " 7 %#llx 0x86\n",
	       (unsigned long)__copy_mc_movsq, (unsigned long)__copy_mc_movsq_end, cpu,
	       (unsigned long long)page_to_phys(s));
	while (!left && ktime_get_ns() < deadline)
		left = __copy_mc_movsq(page_address(d), page_address(s), PMD_SIZE);
	set_cpus_allowed(current, saved);
	KEXPECT_NE(t, left, 0);
	KEXPECT_TRUE(t, printk_log_contains(pos, "mce: [Hardware Error]: CPU"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "action required"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "machine check in a machine-check-safe copy"));
	__free_pages(s, 9);
	__free_pages(d, 9);
}

static void copy_returns_short(struct ktest *t)
{
	one_machine_check_in_a_copy(t);
}

static void a_second_one_after_mcip_cleared(struct ktest *t)
{
	one_machine_check_in_a_copy(t);
}

KTEST_SUITE_EXPLICIT(mce_inject,
		     KTEST_CASE(copy_returns_short),
		     KTEST_CASE(a_second_one_after_mcip_cleared));

static void machine_check_outside_a_safe_copy_panics(struct ktest *t)
{
	struct page *s = alloc_pages(0, 0);
	u64 deadline = ktime_get_ns() + WAIT_NS;
	cpumask_t saved;
	int cpu;

	KASSERT_TRUE(t, s != NULL);
	cpu = stay_here(&saved);
	printk(KERN_RAW "mce-inject: when cpl=0 mce %d 1 " MCE_STATUS_SRAR " 7 %#llx 0x86\n",
	       cpu, (unsigned long long)page_to_phys(s));
	while (ktime_get_ns() < deadline)
		cpu_relax();
	set_cpus_allowed(current, saved);
	KEXPECT_TRUE(t, !"no machine check arrived");
	__free_pages(s, 0);
}

KTEST_SUITE_EXPLICIT(mce_inject_fatal, KTEST_CASE(machine_check_outside_a_safe_copy_panics));
