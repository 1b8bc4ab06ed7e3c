/*
 * Machine checks met inside a machine-check-safe copy (copy_mc.S): the
 * exception table sends the copy to its fixup, which returns short; the
 * caller (copy_mc_highpages) works out the poisoned page and queues it for
 * memory_failure(). This file holds what the trap handler does on the way,
 * and the test hook that makes a chosen source address behave as poisoned.
 *
 * Machine checks themselves: at boot each CPU turns on CR4.MCE and its MCA
 * banks; do_machine_check() reads and logs every valid bank, grades what
 * happened and says what the trap handler must do: resume a safe copy at
 * its fixup, kill the user process that consumed poison, or panic.
 * docs/mm/copy_mc.md tells the whole path.
 */
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <asm/direct_map.h>
#include <asm/pte_format.h>
#include <quire/printk.h>
#include <asm/cpu.h>
#include <asm/ptrace.h>
#include <asm/traps.h>
#include <quire/percpu.h>
#include <quire/extable.h>
#include <quire/memory-failure.h>
#include <quire/sched.h>

#define MSR_IA32_MCG_CAP	0x179
#define MSR_IA32_MCG_STATUS	0x17a
#define MSR_IA32_MCG_CTL	0x17b
#define MSR_IA32_MC_CTL(b)	(0x400 + 4 * (b))
#define MSR_IA32_MC_STATUS(b)	(0x401 + 4 * (b))
#define MSR_IA32_MC_ADDR(b)	(0x402 + 4 * (b))
#define MSR_IA32_MC_MISC(b)	(0x403 + 4 * (b))

#define MCG_CAP_COUNT		0xffu		/* banks */
#define MCG_CAP_CTL_P		(1ULL << 8)	/* MCG_CTL present */
#define MCG_STATUS_RIPV		(1ULL << 0)	/* the saved RIP may be resumed */
#define MCG_STATUS_EIPV		(1ULL << 1)	/* the saved RIP is where it happened */
#define MCG_STATUS_MCIP		(1ULL << 2)	/* a machine check is in progress */

#define MCI_STATUS_VAL		(1ULL << 63)
#define MCI_STATUS_OVER		(1ULL << 62)
#define MCI_STATUS_UC		(1ULL << 61)
#define MCI_STATUS_EN		(1ULL << 60)
#define MCI_STATUS_MISCV	(1ULL << 59)
#define MCI_STATUS_ADDRV	(1ULL << 58)
#define MCI_STATUS_PCC		(1ULL << 57)
#define MCI_STATUS_S		(1ULL << 56)
#define MCI_STATUS_AR		(1ULL << 55)
#define MCI_MISC_LSB(m)		((m) & 0x3f)	/* address granularity, log2 */

#define CPUID_1_EDX_MCE		(1u << 7)
#define CPUID_1_EDX_MCA		(1u << 14)
#define X86_CR4_MCE		(1UL << 6)

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
	return (d & CPUID_1_EDX_MCE) && (d & CPUID_1_EDX_MCA);
}

static unsigned int mce_banks;		/* 0: no machine-check architecture */

/*
 * On every CPU: report every error the banks can, start with them clean,
 * and take #MC (without CR4.MCE a machine check shuts the CPU down; QEMU
 * then resets the guest).
 */
void mce_cpu_init(void)
{
	u64 cap;

	if (!cpu_has_mca())
		return;
	cap = rdmsr(MSR_IA32_MCG_CAP);
	mce_banks = (unsigned int)(cap & MCG_CAP_COUNT);
	if (cap & MCG_CAP_CTL_P)
		wrmsr(MSR_IA32_MCG_CTL, ~0ULL);
	for (unsigned int b = 0; b < mce_banks; b++) {
		wrmsr(MSR_IA32_MC_CTL(b), ~0ULL);
		wrmsr(MSR_IA32_MC_STATUS(b), 0);
	}
	wrmsr(MSR_IA32_MCG_STATUS, 0);
	write_cr4(read_cr4() | X86_CR4_MCE);
	if (this_cpu()->cpu == 0)
		pr_info("mce: machine checks on, %u banks\n", mce_banks);
}

/* The worst valid bank: the one do_machine_check() acts on. */
struct mce_error {
	int bank;		/* -1: no valid bank */
	u64 status, addr, misc;
};

/* Log every valid bank, clear it, and return the worst (PCC, then UC, then the first). */
static struct mce_error read_banks(u64 mcgstatus)
{
	struct mce_error worst = { .bank = -1 };

	for (unsigned int b = 0; b < mce_banks; b++) {
		u64 st = rdmsr(MSR_IA32_MC_STATUS(b));
		u64 addr = st & MCI_STATUS_ADDRV ? rdmsr(MSR_IA32_MC_ADDR(b)) : 0;
		u64 misc = st & MCI_STATUS_MISCV ? rdmsr(MSR_IA32_MC_MISC(b)) : 0;

		if (!(st & MCI_STATUS_VAL))
			continue;
		pr_emerg("mce: [Hardware Error]: CPU %d bank %u status %#llx addr %#llx misc %#llx mcgstatus %#llx\n",
			 this_cpu()->cpu, b, (unsigned long long)st, (unsigned long long)addr,
			 (unsigned long long)misc, (unsigned long long)mcgstatus);
		pr_emerg("mce: [Hardware Error]: %s%s%s%s%s%s%s%s\n",
			 st & MCI_STATUS_UC ? "uncorrected" : "corrected",
			 st & MCI_STATUS_PCC ? ", processor context corrupt" : "",
			 st & MCI_STATUS_S ? ", signaled" : "",
			 st & MCI_STATUS_AR ? ", action required" : "",
			 st & MCI_STATUS_OVER ? ", overflow" : "",
			 mcgstatus & MCG_STATUS_RIPV ? ", RIP valid" : ", RIP not valid",
			 mcgstatus & MCG_STATUS_EIPV ? ", at RIP" : "",
			 st & MCI_STATUS_MISCV ? "" : ", granularity unknown");
		wrmsr(MSR_IA32_MC_STATUS(b), 0);
		if (worst.bank < 0 || (st & MCI_STATUS_PCC) ||
		    ((st & MCI_STATUS_UC) && !(worst.status & (MCI_STATUS_UC | MCI_STATUS_PCC))))
			worst = (struct mce_error){ (int)b, st, addr, misc };
	}
	return worst;
}

/*
 * An uncorrected error the current thread consumed in user mode: remember
 * it on the thread (Linux's queue_task_work). memory_failure() cannot run
 * here (interrupts off, in the middle of a machine check): the thread runs
 * it on its way back to user mode (exit_to_user_mode, mce_kill_me_maybe),
 * which sends it SIGBUS BUS_MCEERR_AR at its own address for the page.
 * More machine checks before that are fine on the same page; on another
 * page, or more than ten, it is fatal, as on Linux. Without an address
 * (ADDRV clear) there is no page to take away: SIGBUS only (mce_addr ~0).
 */
static bool queue_user_mce(const struct mce_error *e, bool copyin)
{
	struct task *t = current;
	u64 addr = e->status & MCI_STATUS_ADDRV ? e->addr : MCE_ADDR_NONE;
	u64 granule = e->status & MCI_STATUS_MISCV ? MCI_MISC_LSB(e->misc) : PAGE_SHIFT;
	int count = ++t->mce_count;

	pr_err("mce: memory error at %#llx (2^%llu bytes) consumed %s (pid %d)\n",
	       (unsigned long long)addr, (unsigned long long)granule,
	       copyin ? "by the kernel reading user memory" : "in user mode", t->tid);
	if (count == 1) {
		t->mce_addr = addr;
		t->mce_copyin = copyin;
	}
	if (count > 10) {
		pr_emerg("mce: too many consecutive machine checks while accessing user data\n");
		return false;
	}
	if (count > 1 && (t->mce_addr >> PAGE_SHIFT) != (addr >> PAGE_SHIFT)) {
		pr_emerg("mce: consecutive machine checks to different user pages\n");
		return false;
	}
	return true;
}

/*
 * In the kernel, at a user-access instruction (an exception-table entry of
 * EX_TYPE_UACCESS) that reads user memory: copy_from_user's rep movs with
 * its source below USER_TOP (Linux's is_copy_from_user, which also decodes
 * single movs: Quire reads user memory with rep movs only). The poison is
 * in the user's page, not the kernel's: the copy can end short.
 */
static bool mce_in_copy_from_user(const struct pt_regs *regs,
				  const struct exception_table_entry *ex)
{
	const u8 *insn = (const u8 *)regs->rip;

	if (user_mode(regs) || !ex || !(ex->type & EX_TYPE_UACCESS))
		return false;
	if (insn[0] == 0xf3)			/* rep */
		insn++;
	if ((insn[0] & 0xf0) == 0x40)		/* REX */
		insn++;
	return (insn[0] == 0xa4 || insn[0] == 0xa5) && regs->rsi < USER_TOP;
}

/*
 * The #MC handler's decision, Linux's grading cut to what Quire can do:
 * without a valid bank, with the processor context corrupt, or without a
 * RIP to resume, it is fatal; in kernel mode a machine-check-safe copy
 * survives (MCE_RESUME_AT_FIXUP), and so does copy_from_user reading a
 * poisoned user page (MCE_RESUME_COPYIN: the copy ends short, the thread
 * runs memory_failure() for the page on its way out, no signal: Linux's
 * kill_me_never); in user mode an uncorrected error is the thread's to pay
 * for (MCE_KILL_USER: queue_user_mce), and the kernel lives on.
 */
enum mce_action do_machine_check(const struct pt_regs *regs)
{
	u64 mcgstatus = rdmsr(MSR_IA32_MCG_STATUS);
	struct mce_error e = read_banks(mcgstatus);
	const struct exception_table_entry *ex = search_exception_tables(regs->rip);
	enum mce_action act = MCE_FATAL;

	if (e.bank < 0)
		pr_emerg("mce: machine check with no valid bank\n");
	else if ((e.status & MCI_STATUS_PCC) || !(mcgstatus & MCG_STATUS_RIPV))
		pr_emerg("mce: cannot resume: %s\n", e.status & MCI_STATUS_PCC ?
			 "processor context corrupt" : "no valid RIP");
	else if (!(e.status & MCI_STATUS_UC))
		act = MCE_CORRECTED;
	else if (!user_mode(regs) && ex && (ex->type & EX_TYPE_MCE_SAFE))
		act = MCE_RESUME_AT_FIXUP;
	else if (mce_in_copy_from_user(regs, ex))
		act = queue_user_mce(&e, true) ? MCE_RESUME_COPYIN : MCE_FATAL;
	else if (user_mode(regs))
		act = queue_user_mce(&e, false) ? MCE_KILL_USER : MCE_FATAL;
	else
		pr_emerg("mce: uncorrected error in kernel mode outside a machine-check-safe copy\n");
	if (act != MCE_FATAL)
		wrmsr(MSR_IA32_MCG_STATUS, 0);	/* MCIP off: the next one is not a shutdown */
	return act;
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
