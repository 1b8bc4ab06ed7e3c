/*
 * Machine checks met inside a machine-check-safe copy (copy_mc.S): the
 * exception table sends the copy to its fixup, which returns short; the
 * caller (copy_mc_highpages) works out the poisoned page and queues it for
 * memory_failure(). This file holds what the trap handler does on the way,
 * and the test hook that makes a chosen source address behave as poisoned.
 *
 * Not here yet: reading and grading the MCA banks, CR4.MCE and bank setup
 * at boot, and a machine check anywhere else (it panics, as before).
 */
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <asm/direct_map.h>
#include <quire/printk.h>
#include <asm/cpu.h>
#include <asm/ptrace.h>
#include <asm/traps.h>

#define MSR_IA32_MCG_STATUS	0x17a
#define CPUID_1_EDX_MCA		(1u << 14)

/* The test hook's poisoned page (its direct-map address), or 0. */
static unsigned long test_poison_va;

int copy_mc_test_poison_page(struct page *page)
{
	unsigned long va = (unsigned long)page_address(page);
	int err;

	copy_mc_test_unpoison();
	__atomic_store_n(&test_poison_va, va, __ATOMIC_RELEASE);
	err = direct_map_set_present(va, false);
	if (err)
		__atomic_store_n(&test_poison_va, 0, __ATOMIC_RELEASE);
	return err;
}

void copy_mc_test_unpoison(void)
{
	unsigned long va = __atomic_load_n(&test_poison_va, __ATOMIC_ACQUIRE);

	if (!va)
		return;
	direct_map_set_present(va, true);
	__atomic_store_n(&test_poison_va, 0, __ATOMIC_RELEASE);
}

bool copy_mc_test_poisoned(unsigned long addr)
{
	unsigned long va = __atomic_load_n(&test_poison_va, __ATOMIC_ACQUIRE);

	return va && addr - va < PAGE_SIZE;
}

static bool cpu_has_mca(void)
{
	u32 a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	return d & CPUID_1_EDX_MCA;
}

/*
 * A machine check (real, or the test hook's page fault on a poisoned
 * address) ended a machine-check-safe copy; the caller resumes at the
 * fixup. A real one leaves MCG_STATUS.MCIP set, and a second machine check
 * with MCIP set resets the machine (QEMU does too): clear it.
 */
void mce_recovered_in_copy(const struct pt_regs *regs, unsigned long addr, bool simulated)
{
	if (simulated) {
		pr_debug("mce: test hook: poisoned read at %#lx in a machine-check-safe copy (rip %#llx); the copy ends short\n",
			addr, (unsigned long long)regs->rip);
		return;
	}
	pr_err("mce: [Hardware Error]: machine check in a machine-check-safe copy at rip %#llx; the copy ends short\n",
	       (unsigned long long)regs->rip);
	if (cpu_has_mca())
		wrmsr(MSR_IA32_MCG_STATUS, 0);
}
