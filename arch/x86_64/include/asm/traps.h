/* Exceptions: names, the oops report, and catching an expected fault. */
#ifndef ASM_TRAPS_H
#define ASM_TRAPS_H

#include <quire/types.h>
#include <asm/ptrace.h>
#include <asm/setjmp.h>

#define X86_TRAP_DE	0	/* divide error */
#define X86_TRAP_DB	1
#define X86_TRAP_NMI	2
#define X86_TRAP_BP	3	/* int3 */
#define X86_TRAP_OF	4
#define X86_TRAP_BR	5
#define X86_TRAP_UD	6	/* invalid opcode */
#define X86_TRAP_NM	7
#define X86_TRAP_DF	8	/* double fault */
#define X86_TRAP_TS	10
#define X86_TRAP_NP	11
#define X86_TRAP_SS	12
#define X86_TRAP_GP	13	/* general protection */
#define X86_TRAP_PF	14	/* page fault */
#define X86_TRAP_MF	16
#define X86_TRAP_AC	17
#define X86_TRAP_MC	18	/* machine check */
#define X86_TRAP_XF	19
#define X86_TRAP_VE	20
#define X86_TRAP_CP	21

/* Page-fault error code bits. */
#define X86_PF_PROT	(1 << 0)	/* 0: page not present */
#define X86_PF_WRITE	(1 << 1)
#define X86_PF_USER	(1 << 2)
#define X86_PF_RSVD	(1 << 3)
#define X86_PF_INSTR	(1 << 4)

/* "#PF Page fault" style name of an exception vector (0-31). */
const char *trap_name(unsigned int vector);

/* Print the full report of an exception: vector, error code, CR2, registers, backtrace. */
void show_trap_report(const struct pt_regs *regs, u64 cr2);

/*
 * Catch an exception the caller expects (tests of the trap path, and later
 * probing of memory that may not be there):
 *
 *	struct fault_catch fc;
 *	if (fault_catch_begin(&fc) == 0) {
 *		... code that should fault ...
 *		fault_catch_end(&fc);		// it did not
 *	} else {
 *		... fc.vector, fc.error_code, fc.cr2, fc.rip say what happened
 *	}
 *
 * The exception handler unwinds to fault_catch_begin (like longjmp), which
 * then returns 1. Catches nest; the innermost one wins. They belong to the
 * running task (another CPU's faults are never caught here), and catch
 * exceptions (vectors 0-31) raised in kernel mode; fault_catch_begin_vector
 * also catches one interrupt vector, for tests that raise it with "int".
 */
struct fault_catch {
	jmp_buf env;
	struct fault_catch *outer;
	int want_vector;	/* an interrupt vector (>= 32) to catch too, or -1 */
	u64 flags;		/* RFLAGS when armed: interrupts come back on if they were */
	int irq_depth;		/* interrupt nesting when armed */
	u64 vector, error_code, cr2, rip;
	u64 regs_addr;		/* where the handler's pt_regs lay: shows the stack used */
};

void fault_catch_push(struct fault_catch *fc, int want_vector);
void fault_catch_end(struct fault_catch *fc);
#define fault_catch_begin(fc) (fault_catch_push(fc, -1), setjmp((fc)->env))
#define fault_catch_begin_vector(fc, v) (fault_catch_push(fc, v), setjmp((fc)->env))

struct pt_regs;
/* What the #MC handler must do next (mce.c). */
enum mce_action {
	MCE_FATAL,		/* panic: the banks are logged */
	MCE_CORRECTED,		/* logged; resume */
	MCE_RESUME_AT_FIXUP,	/* inside a machine-check-safe copy */
	MCE_KILL_USER,		/* the thread consumed poison: queued on it (task->mce_addr) */
	MCE_RESUME_COPYIN,	/* copy_from_user read poison: fixup, then memory_failure(0) */
};
enum mce_action do_machine_check(const struct pt_regs *regs);
void mce_cpu_init(void);
/* A machine check (or the copy_mc test hook's) ended a safe copy (mce.c). */
void mce_recovered_in_copy(const struct pt_regs *regs, unsigned long addr, bool simulated);

#endif
