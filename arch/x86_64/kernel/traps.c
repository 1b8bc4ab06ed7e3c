/*
 * do_trap: where every exception and interrupt vector lands. Interrupts
 * (vectors 32-255) and NMIs go to arch/x86_64/kernel/irq.c. An exception is
 * fatal unless someone expected it:
 *   1. a fault_catch armed by the code that raised it, or
 *   2. the crash hook (set by the test runner: a running test case is
 *      recorded as crashed and the next one runs),
 * and otherwise the report is printed and the kernel panics.
 */
#define pr_fmt(fmt) fmt
#include <asm/traps.h>
#include <asm/cpu.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/panic.h>
#include <quire/ksyms.h>
#include <quire/stacktrace.h>
#include <quire/arch_hooks.h>
#include <quire/percpu.h>
#include <quire/sched.h>
#include <asm/irq.h>
#include <asm/pgtable.h>
#include <quire/mmap.h>
#include <quire/uaccess.h>
#include <quire/copy_mc.h>
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/errno.h>

static trap_crash_hook_t trap_crash_hook;

void set_trap_crash_hook(trap_crash_hook_t hook)
{
	__atomic_store_n(&trap_crash_hook, hook, __ATOMIC_RELEASE);
}

/* Returns only when there is no hook or the hook declined the crash. */
static void call_trap_crash_hook(const char *what)
{
	trap_crash_hook_t hook = __atomic_load_n(&trap_crash_hook, __ATOMIC_ACQUIRE);

	if (hook)
		hook(what);
}

static const char *const names[32] = {
	[X86_TRAP_DE] = "#DE Divide error",
	[X86_TRAP_DB] = "#DB Debug",
	[X86_TRAP_NMI] = "NMI Non-maskable interrupt",
	[X86_TRAP_BP] = "#BP Breakpoint",
	[X86_TRAP_OF] = "#OF Overflow",
	[X86_TRAP_BR] = "#BR Bound range exceeded",
	[X86_TRAP_UD] = "#UD Invalid opcode",
	[X86_TRAP_NM] = "#NM Device not available",
	[X86_TRAP_DF] = "#DF Double fault",
	[9] = "Coprocessor segment overrun",
	[X86_TRAP_TS] = "#TS Invalid TSS",
	[X86_TRAP_NP] = "#NP Segment not present",
	[X86_TRAP_SS] = "#SS Stack-segment fault",
	[X86_TRAP_GP] = "#GP General protection fault",
	[X86_TRAP_PF] = "#PF Page fault",
	[X86_TRAP_MF] = "#MF x87 floating-point error",
	[X86_TRAP_AC] = "#AC Alignment check",
	[X86_TRAP_MC] = "#MC Machine check",
	[X86_TRAP_XF] = "#XM SIMD floating-point error",
	[X86_TRAP_VE] = "#VE Virtualization exception",
	[X86_TRAP_CP] = "#CP Control protection",
	[28] = "#HV Hypervisor injection",
	[29] = "#VC VMM communication",
	[30] = "#SX Security exception",
};

const char *trap_name(unsigned int vector)
{
	if (vector < 32)
		return names[vector] ? names[vector] : "Reserved exception";
	return "Interrupt";
}

/* Before the scheduler runs there is no task: the boot CPU keeps the catches. */
static struct fault_catch *boot_fault_catch;

static struct fault_catch **catch_top(void)
{
	struct task *t = this_cpu_read(current_task);

	return t ? (struct fault_catch **)&t->fault_catch : &boot_fault_catch;
}

void fault_catch_push(struct fault_catch *fc, int want_vector)
{
	struct fault_catch **top = catch_top();

	fc->outer = *top;
	fc->want_vector = want_vector;
	fc->flags = read_flags();
	fc->irq_depth = this_cpu()->irq_depth;
	fc->vector = fc->error_code = fc->cr2 = fc->rip = fc->regs_addr = 0;
	*top = fc;
}

void fault_catch_end(struct fault_catch *fc)
{
	struct fault_catch **top = catch_top();

	BUG_ON(*top != fc);
	*top = fc->outer;
}

static void describe_pf(u64 err, char *buf, size_t len)
{
	scnprintf(buf, len, " [%s, %s, %s%s%s]",
		  err & X86_PF_WRITE ? "write" : "read",
		  err & X86_PF_PROT ? "protection" : "not-present",
		  err & X86_PF_USER ? "user" : "kernel",
		  err & X86_PF_INSTR ? ", instruction fetch" : "",
		  err & X86_PF_RSVD ? ", reserved bit" : "");
}

void show_trap_report(const struct pt_regs *r, u64 cr2)
{
	char sym[128], detail[96] = "";

	if (r->vector == X86_TRAP_PF)
		describe_pf(r->error_code, detail, sizeof(detail));
	pr_emerg("Oops: %s (vector %llu), error code 0x%llx%s\n", trap_name((unsigned)r->vector),
		 (unsigned long long)r->vector, (unsigned long long)r->error_code, detail);
	if (r->vector == X86_TRAP_PF)
		pr_emerg("CR2: %016llx (the address that faulted)\n", (unsigned long long)cr2);
	ksym_format(sym, sizeof(sym), r->rip);
	pr_emerg("CPU: %d %s mode\n", smp_processor_id(), user_mode(r) ? "user" : "kernel");
	pr_emerg("RIP: %04llx:%016llx %s\n", (unsigned long long)r->cs,
		 (unsigned long long)r->rip, sym);
	pr_emerg("RSP: %04llx:%016llx EFLAGS: %08llx\n", (unsigned long long)r->ss,
		 (unsigned long long)r->rsp, (unsigned long long)r->rflags);
	pr_emerg("RAX: %016llx RBX: %016llx RCX: %016llx\n", (unsigned long long)r->rax,
		 (unsigned long long)r->rbx, (unsigned long long)r->rcx);
	pr_emerg("RDX: %016llx RSI: %016llx RDI: %016llx\n", (unsigned long long)r->rdx,
		 (unsigned long long)r->rsi, (unsigned long long)r->rdi);
	pr_emerg("RBP: %016llx R08: %016llx R09: %016llx\n", (unsigned long long)r->rbp,
		 (unsigned long long)r->r8, (unsigned long long)r->r9);
	pr_emerg("R10: %016llx R11: %016llx R12: %016llx\n", (unsigned long long)r->r10,
		 (unsigned long long)r->r11, (unsigned long long)r->r12);
	pr_emerg("R13: %016llx R14: %016llx R15: %016llx\n", (unsigned long long)r->r13,
		 (unsigned long long)r->r14, (unsigned long long)r->r15);
	pr_emerg("CR0: %016llx CR3: %016llx CR4: %016llx\n", (unsigned long long)read_cr0(),
		 (unsigned long long)read_cr3(), (unsigned long long)read_cr4());
	show_regs_stack_trace(r);
}

void do_trap(struct pt_regs *regs);

/*
 * A trap about to send the user a signal: what its sigcontext will say (the
 * vector, the error code, and for a page fault the address), as Linux
 * reports them: the user bit set, and a kernel address read as a
 * protection fault whether or not a page is there.
 */
static void note_user_trap(const struct pt_regs *regs, u64 cr2)
{
	struct task *t = this_cpu_read(current_task);

	t->trap_nr = regs->vector;
	t->trap_err = regs->error_code;
	if (regs->vector == X86_TRAP_PF) {
		t->trap_err |= X86_PF_USER | (cr2 >= USER_TOP ? X86_PF_PROT : 0);
		t->trap_cr2 = cr2;
	}
}

/*
 * A page fault on a user address, from user mode or from a kernel user copy
 * (which has an exception-table entry): let the process's address space
 * resolve it. Returns 0 when resolved, else handle_mm_fault's error
 * (-EFAULT: nothing mapped, -EACCES: mapped without that permission).
 * Interrupts go back on while it works (it may sleep on mmap_lock), as
 * they were at the fault.
 */
static int do_user_page_fault(struct pt_regs *regs, u64 cr2)
{
	struct task *t = this_cpu_read(current_task);
	unsigned int flags = 0;
	int err;

	const struct exception_table_entry *e = search_exception_tables(regs->rip);

	if (cr2 >= USER_TOP || !t || !t->mm ||
	    (!user_mode(regs) && !(e && (e->type & EX_TYPE_UACCESS))))
		return -EFAULT;
	if (regs->error_code & X86_PF_WRITE)
		flags |= FAULT_FLAG_WRITE;
	if (regs->error_code & X86_PF_INSTR)
		flags |= FAULT_FLAG_INSTRUCTION;
	if (user_mode(regs))
		flags |= FAULT_FLAG_USER;
	if (regs->rflags & X86_EFLAGS_IF)
		local_irq_enable();
	err = handle_mm_fault(t->mm, cr2, flags);
	if (!err)
		account_page_fault();
	if (err == -EIO && user_mode(regs)) {	/* a file page past the end of the file */
		note_user_trap(regs, cr2);
		force_sig_fault(SIGBUS, BUS_ADRERR, cr2, "access beyond the end of a mapped file");
		err = 0;			/* handled: the signal is on its way */
	}
	if (err == -ENOMEM && user_mode(regs)) {
		/*
		 * No memory for the page (or its page table). Linux's OOM
		 * killer would pick a victim and the fault would run again;
		 * Quire has none: the faulting process goes, and says why
		 * (not a SIGSEGV for an address that is mapped).
		 */
		note_user_trap(regs, cr2);
		force_sig_fault(SIGKILL, SI_KERNEL, cr2, "out of memory at a page fault");
		err = 0;
	}
	if (err == -EHWPOISON && user_mode(regs)) {	/* a page lost to a memory error */
		note_user_trap(regs, cr2);
		force_sig_mceerr(BUS_MCEERR_AR, cr2, PAGE_SHIFT,
				 "access to a page lost to a memory error (hwpoison)");
		err = 0;
	}
	local_irq_disable();
	return err;
}

/*
 * An exception in user mode becomes the signal Linux sends, with its
 * si_code and si_addr; it is delivered on the way back to user mode (a
 * handler that returns runs the instruction again).
 */
static void user_exception(struct pt_regs *regs, u64 cr2, int fault_err)
{
	int sig = SIGSEGV, code = SI_KERNEL;
	const char *why = trap_name((unsigned)regs->vector);
	u64 addr = 0;

	switch (regs->vector) {
	case X86_TRAP_DE: sig = SIGFPE; code = FPE_INTDIV; addr = regs->rip; break;
	case X86_TRAP_UD: sig = SIGILL; code = ILL_ILLOPN; addr = regs->rip; break;
	case X86_TRAP_BP: sig = SIGTRAP; break;
	case X86_TRAP_PF:
		addr = cr2;
		/* As Linux: ACCERR when a VMA covers the address but forbids the access. */
		code = fault_err == -EACCES ? SEGV_ACCERR : SEGV_MAPERR;
		why = fault_err == -EACCES ?
		      (regs->error_code & X86_PF_WRITE ? "write to a read-only page" :
		       "access against the page's protection") :
		      "access to an unmapped address";
		break;
	}
	note_user_trap(regs, cr2);
	local_irq_enable();
	force_sig_fault(sig, code, addr, why);
	local_irq_disable();
}

/*
 * An exception at an instruction of the exception table that may take it
 * resumes at the entry's fixup: a user copy takes #PF and #GP (a bad user
 * pointer: the copy returns short, the caller says -EFAULT); a machine-
 * check-safe copy takes #MC, and the copy_mc test hook's page fault on a
 * poisoned address (include/quire/copy_mc.h); a user copy also takes the
 * #MC of a poisoned user page it reads (copyin: do_machine_check said so).
 * Anything else is a bug.
 */
static bool fixup_exception(struct pt_regs *regs, u64 cr2, bool copyin)
{
	const struct exception_table_entry *e = search_exception_tables(regs->rip);
	bool simulated = regs->vector == X86_TRAP_PF && copy_mc_test_poisoned(cr2);
	unsigned long takes;

	if (!e)
		return false;
	if (regs->vector == X86_TRAP_MC && copyin)
		takes = EX_TYPE_UACCESS;
	else if (regs->vector == X86_TRAP_MC || simulated)
		takes = EX_TYPE_MCE_SAFE;
	else if (regs->vector == X86_TRAP_PF || regs->vector == X86_TRAP_GP)
		takes = EX_TYPE_UACCESS;
	else
		return false;
	if (!(e->type & takes))
		return false;
	if (takes == EX_TYPE_MCE_SAFE)
		mce_recovered_in_copy(regs, cr2, simulated);
	regs->rip = e->fixup;
	return true;
}

static void __do_trap(struct pt_regs *regs)
{
	u64 cr2 = regs->vector == X86_TRAP_PF ? read_cr2() : 0;
	struct fault_catch **top = catch_top();
	int fault_err = -EFAULT;
	struct fault_catch *fc = *top;

	/* A real NMI (panic stop, backtrace) is never mistaken for a caught fault. */
	if (regs->vector == X86_TRAP_NMI && nmi_is_for_us()) {
		handle_nmi(regs);
		return;
	}
	/* A catch belongs to the code that armed it, not to an interrupt handler on top. */
	if (fc && !user_mode(regs) && fc->irq_depth == this_cpu()->irq_depth &&
	    (regs->vector < 32 || (int)regs->vector == fc->want_vector)) {
		*top = fc->outer;
		fc->vector = regs->vector;
		fc->error_code = regs->error_code;
		fc->cr2 = cr2;
		fc->rip = regs->rip;
		fc->regs_addr = (u64)(uintptr_t)regs;
		if (fc->flags & X86_EFLAGS_IF)
			longjmp_irq_on(fc->env, 1);
		longjmp(fc->env, 1);
	}

	if (regs->vector >= 32) {
		handle_irq(regs);
		return;
	}
	if (regs->vector == X86_TRAP_NMI) {
		handle_nmi(regs);
		return;
	}
	if (regs->vector == X86_TRAP_PF) {
		fault_err = do_user_page_fault(regs, cr2);
		if (fault_err == 0)
			return;
	}
	if (regs->vector == X86_TRAP_MC) {
		switch (do_machine_check(regs)) {
		case MCE_CORRECTED:
			return;
		case MCE_RESUME_AT_FIXUP:
			if (fixup_exception(regs, 0, false))
				return;
			break;
		case MCE_RESUME_COPYIN:
			/* The copy returns short; exit_to_user_mode runs memory_failure(). */
			if (fixup_exception(regs, 0, true))
				return;
			break;
		case MCE_KILL_USER:
			/*
			 * On the task's own stack (entry.S left the IST one):
			 * exit_to_user_mode runs memory_failure() and the SIGBUS.
			 */
			return;
		case MCE_FATAL:
			break;
		}
		/* No crash hook: after a fatal machine check nothing may go on. */
		show_trap_report(regs, cr2);
		panic("do_trap: fatal machine check in %s mode (the banks are above)",
		      user_mode(regs) ? "user" : "kernel");
	}
	if (!user_mode(regs)) {
		if (fixup_exception(regs, cr2, false))
			return;
	} else {
		user_exception(regs, cr2, fault_err);
		return;
	}
	show_trap_report(regs, cr2);
	call_trap_crash_hook(trap_name((unsigned)regs->vector));
	panic("Fatal exception: %s in %s mode", trap_name((unsigned)regs->vector),
	      user_mode(regs) ? "user" : "kernel");
}

void do_trap(struct pt_regs *regs)
{
	__do_trap(regs);
	/* Back to user mode: signals first (a fault's, or one a kick IPI announced). */
	if (user_mode(regs) && regs->vector != X86_TRAP_NMI)
		exit_to_user_mode(regs, false);
}
