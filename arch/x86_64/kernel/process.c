/*
 * The x86-64 side of switching tasks: the kernel stack the CPU uses when it
 * enters the kernel from user mode (TSS rsp0 for interrupts, the per-CPU
 * copy for SYSCALL), the address space (CR3) and the user's FS base (TLS).
 * Kernel threads run on the kernel's page tables.
 */
#include <quire/sched.h>
#include <quire/mmap.h>
#include <quire/percpu.h>
#include <asm/desc.h>
#include <asm/cpu.h>
#include <asm/traps.h>
#include <asm/pgtable.h>
#include <asm/direct_map.h>
#include <quire/process.h>
#include <quire/printk.h>
#include <asm/ptrace.h>

/*
 * The kernel never touches the FPU/SSE registers (it is built without
 * them), so only user tasks' state needs saving, at the switch.
 */
static void fpu_save(struct task *t)
{
	__asm__ __volatile__("fxsave64 (%0)" : : "r"(t->fpu_state) : "memory");
}

static void fpu_restore(struct task *t)
{
	__asm__ __volatile__("fxrstor64 (%0)" : : "r"(t->fpu_state) : "memory");
}

/* The signal frame's copy of the live FPU/SSE state (preemption off). */
void fpu_save_current(void *buf)
{
	__asm__ __volatile__("fxsave64 (%0)" : : "r"(buf) : "memory");
}

void fpu_restore_current(const void *buf)
{
	__asm__ __volatile__("fxrstor64 (%0)" : : "r"(buf) : "memory");
}

/* A new program's FPU state: the x87 defaults and SSE's (MXCSR 0x1f80). */
void fpu_reset_current(void)
{
	u32 mxcsr = 0x1f80;

	__asm__ __volatile__("fninit; ldmxcsr %0" : : "m"(mxcsr));
}

void arch_switch_to(struct task *prev, struct task *next)
{
	struct percpu *pc = this_cpu();

	if (prev->mm && prev != next)
		fpu_save(prev);
	if (next->mm && prev != next)
		fpu_restore(next);

	if (next->stack) {
		u64 top = (u64)(uintptr_t)next->stack + KERNEL_STACK_SIZE;

		pc->kernel_stack = top;
		((struct cpu_arch *)pc->arch)->tss.rsp[0] = top;
	}
	if (next->mm) {
		__atomic_fetch_or(&next->mm->cpus, cpumask_of(pc->cpu), __ATOMIC_SEQ_CST);
		load_pgd(next->mm->pgd);
		wrmsr(MSR_FS_BASE, next->fs_base);
	} else if (prev->mm) {
		load_pgd(kernel_pml4_phys);
	}
}

void arch_load_kernel_pgd(void)
{
	load_pgd(kernel_pml4_phys);
}

/* Set when the CPU has SMAP: user copies then open the window with stac/clac. */
u8 smap_enabled;

/*
 * SMEP (the kernel never runs user code) and SMAP (the kernel touches user
 * memory only inside the user-copy routines), when the CPU has them.
 */
static void protection_init(void)
{
	u32 a, b, c, d;

	cpuid(0, 0, &a, &b, &c, &d);
	if (a < 7)
		return;
	cpuid(7, 0, &a, &b, &c, &d);
	if (b & (1u << 7))
		write_cr4(read_cr4() | (1UL << 20));	/* SMEP */
	if (b & (1u << 20)) {
		write_cr4(read_cr4() | (1UL << 21));	/* SMAP */
		smap_enabled = 1;
	}
	if (this_cpu()->cpu == 0)
		pr_info("x86: SMEP %s, SMAP %s, NX on\n", b & (1u << 7) ? "on" : "absent",
			b & (1u << 20) ? "on" : "absent");
}

/* SYSCALL/SYSRET set-up, on every CPU. */
void syscall_init(void)
{
	extern char syscall_entry[];

	/* SSE for user programs: CR0.MP on, EM off; CR4.OSFXSR and OSXMMEXCPT. */
	__asm__ __volatile__("movq %%cr0, %%rax; andq $~4, %%rax; orq $2, %%rax; movq %%rax, %%cr0"
			     ::: "rax");
	write_cr4(read_cr4() | (1UL << 9) | (1UL << 10));

	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	/* STAR: kernel CS in 47:32; user base in 63:48 (SS = base + 8, CS = base + 16). */
	wrmsr(0xc0000081, ((u64)GDT_KERNEL_CS << 32) | ((u64)(GDT_USER32_CS | 3) << 48));
	wrmsr(0xc0000082, (u64)(uintptr_t)syscall_entry);	/* LSTAR */
	/* FMASK: interrupts, direction, trap and alignment-check flags off on entry. */
	wrmsr(0xc0000084, (1UL << 9) | (1UL << 10) | (1UL << 8) | (1UL << 18));
	wrmsr(MSR_KERNEL_GS_BASE, 0);
	protection_init();
	mce_cpu_init();		/* machine checks on this CPU (mce.c) */
}

/*
 * Prepare a forked child's kernel stack: a copy of the parent's system-call
 * frame at the top (returning 0), and below it the frame switch_to pops,
 * whose return address is ret_from_fork. The child also inherits the
 * parent's FPU registers and TLS base.
 */
void arch_set_user_sp(struct task *child, u64 sp)
{
	struct pt_regs *regs = (struct pt_regs *)((u8 *)child->stack + KERNEL_STACK_SIZE) - 1;

	regs->rsp = sp;
}

void arch_fork_frame(struct task *child, const struct task *parent)
{
	extern char ret_from_fork[];
	const struct pt_regs *pregs = parent->user_regs;
	struct pt_regs *regs;
	u64 *sp;

	regs = (struct pt_regs *)((u8 *)child->stack + KERNEL_STACK_SIZE) - 1;
	*regs = *pregs;
	regs->rax = 0;
	sp = (u64 *)regs;
	*--sp = (u64)(uintptr_t)ret_from_fork;
	for (int i = 0; i < 6; i++)
		*--sp = 0;
	child->rsp = (u64)(uintptr_t)sp;
	child->fs_base = parent->fs_base;
	child->blocked = parent->blocked;
	/* The parent is running: its FPU registers are live. */
	__asm__ __volatile__("fxsave64 (%0)" : : "r"(child->fpu_state) : "memory");
}
