/*
 * Machine checks and the processes they touch (docs/mm/memory-failure.md):
 *
 *   mce_kill_me_maybe   a machine check a thread took in user mode, handled
 *                       on its way back to user mode (Linux's kill_me_maybe
 *                       task work): memory_failure(MF_ACTION_REQUIRED) on
 *                       the frame, which unmaps it and sends the thread
 *                       SIGBUS BUS_MCEERR_AR at its own address for it.
 *                       One the kernel took reading the thread's memory in
 *                       copy_from_user (the syscall got -EFAULT): Linux's
 *                       kill_me_never, memory_failure(0), which unmaps the
 *                       page and signals only the early-kill processes; the
 *                       thread's next touch of it is SIGBUS.
 *   memory_failure_kill_early
 *                       SIGBUS BUS_MCEERR_AO to the processes of an address
 *                       space that lost a page, when they asked for it.
 *   prctl PR_MCE_KILL, PR_MCE_KILL_GET
 *                       a thread's early/late choice (Linux's values and
 *                       errors).
 */
#define pr_fmt(fmt) "mce: " fmt
#include <quire/memory-failure.h>
#include <quire/sched.h>
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/mm.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/debug_locks.h>
#include <quire/panic.h>
#include <asm/irqflags.h>

void mce_kill_me_maybe(void)
{
	struct task *t = current;
	u64 addr = t->mce_addr;
	int ret;

	might_sleep();
	/* Never on the #MC's own stack: entry.S moved a user-mode one to the task's. */
	BUG_ON((unsigned long)__builtin_frame_address(0) - (unsigned long)t->stack >=
	       KERNEL_STACK_SIZE);
	t->mce_count = 0;
	if (t->mce_copyin) {
		t->mce_copyin = false;
		pr_err("Kernel accessed poison in user space at %llx\n", (unsigned long long)addr);
		if (addr != MCE_ADDR_NONE)
			memory_failure(addr >> PAGE_SHIFT, 0);
		return;
	}
	if (addr == MCE_ADDR_NONE) {
		ret = -ENXIO;
	} else {
		pr_err("uncorrected hardware memory error in user-access at %#llx (pid %d)\n",
		       (unsigned long long)addr, t->tid);
		ret = memory_failure(addr >> PAGE_SHIFT, MF_ACTION_REQUIRED);
	}
	/*
	 * 0: memory_failure() sent SIGBUS BUS_MCEERR_AR where this thread maps
	 * the page (or, poisoned already, found no mapping of it here: nothing
	 * to tell). -EHWPOISON: poisoned already, and memory_failure() found
	 * where this thread maps it, or its hwpoison entry, and sent the SIGBUS
	 * there (Linux's kill_accessing_process).
	 */
	if (!ret || ret == -EHWPOISON)
		return;
	pr_err("memory error not recovered: SIGBUS for pid %d\n", t->tid);
	force_sig_fault(SIGBUS, SI_KERNEL, 0, "machine check: memory error not recovered");
}

void memory_failure_kill_early(struct mm_struct *mm, unsigned long addr)
{
	struct task *p;

	spin_lock(&process_lock);
	list_for_each_entry(p, &process_list, process_node)
		if (p->mm == mm && !p->exiting &&
		    send_sig_mceerr_early(p, addr, PAGE_SHIFT,
					  READ_ONCE(sysctl_memory_failure_early_kill)))
			pr_err("%#llx: sending SIGBUS (BUS_MCEERR_AO) to %s:%d\n",
			       (unsigned long long)addr, p->comm, p->tgid);
	spin_unlock(&process_lock);
}

/* prctl's options and arguments for the machine-check policy (Linux's values). */
#define PR_MCE_KILL_CLEAR	0
#define PR_MCE_KILL_SET		1
#define PR_MCE_KILL_LATE	0
#define PR_MCE_KILL_EARLY	1
#define PR_MCE_KILL_DEFAULT	2

/*
 * PR_MCE_KILL: CLEAR (arg3 0) drops the thread's own choice; SET with
 * LATE, EARLY or DEFAULT makes one (DEFAULT: none, follow the sysctl).
 * As Linux, SET with a bad arg3 is EINVAL after the thread is marked as
 * having chosen (its "late" then).
 */
long prctl_mce_kill(u64 how, u64 policy, u64 a4, u64 a5)
{
	struct task *t = current;

	if (a4 | a5)
		return -EINVAL;
	switch (how) {
	case PR_MCE_KILL_CLEAR:
		if (policy)
			return -EINVAL;
		WRITE_ONCE(t->mce_kill, t->mce_kill & ~MCE_KILL_PROCESS);
		return 0;
	case PR_MCE_KILL_SET:
		WRITE_ONCE(t->mce_kill, t->mce_kill | MCE_KILL_PROCESS);
		if (policy == PR_MCE_KILL_EARLY)
			WRITE_ONCE(t->mce_kill, t->mce_kill | MCE_KILL_EARLY);
		else if (policy == PR_MCE_KILL_LATE)
			WRITE_ONCE(t->mce_kill, t->mce_kill & ~MCE_KILL_EARLY);
		else if (policy == PR_MCE_KILL_DEFAULT)
			WRITE_ONCE(t->mce_kill, 0);
		else
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

long prctl_mce_kill_get(u64 a2, u64 a3, u64 a4, u64 a5)
{
	u8 policy = READ_ONCE(current->mce_kill);

	if (a2 | a3 | a4 | a5)
		return -EINVAL;
	if (!(policy & MCE_KILL_PROCESS))
		return PR_MCE_KILL_DEFAULT;
	return policy & MCE_KILL_EARLY ? PR_MCE_KILL_EARLY : PR_MCE_KILL_LATE;
}
