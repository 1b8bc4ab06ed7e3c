/*
 * The exception path: each kind of fault reaches do_trap with the right
 * vector, error code, CR2 and RIP; double fault, NMI and machine check run on
 * their IST stacks; the report names the faulting function.
 */
#include <quire/ktest.h>
#include <quire/ksyms.h>
#include <quire/printk.h>
#include <quire/stacktrace.h>
#include <asm/traps.h>
#include <asm/desc.h>

void test_ud2(void);
void test_stack_overflow(void);
extern const char test_ud2_site[];

/* A pointer the compiler cannot see through (it would warn about 0x10). */
static volatile u64 *opaque_ptr(u64 addr)
{
	__asm__("" : "+r"(addr));
	return (volatile u64 *)(uintptr_t)addr;
}

static void invalid_opcode(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		test_ud2();
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"ud2 did not fault");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_UD);
	KEXPECT_EQ(t, fc.rip, (u64)(uintptr_t)test_ud2_site);
}

static void null_pointer_write(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		*opaque_ptr(0x10) = 1;
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"a write near NULL did not fault");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_PF);
	KEXPECT_EQ(t, fc.cr2, 0x10);
	KEXPECT_EQ(t, fc.error_code, X86_PF_WRITE);	/* not present, kernel */
}

static void unmapped_kernel_read(struct ktest *t)
{
	const u64 addr = 0xffff800000001000ULL;	/* no mapping there */
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		(void)*opaque_ptr(addr);
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"read of an unmapped address did not fault");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_PF);
	KEXPECT_EQ(t, fc.cr2, addr);
	KEXPECT_EQ(t, fc.error_code & (X86_PF_WRITE | X86_PF_PROT | X86_PF_USER), 0);
}

static void non_canonical_is_gp(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		(void)*opaque_ptr(0x8000000000000000ULL);
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"non-canonical read did not fault");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_GP);
	KEXPECT_EQ(t, fc.error_code, 0);
}

static void divide_by_zero(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		__asm__ __volatile__("xorl %%ecx, %%ecx\n\tdivl %%ecx" ::: "eax", "ecx", "edx");
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"div by zero did not fault");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_DE);
}

static void breakpoint(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		__asm__ __volatile__("int3");
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"int3 did not trap");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_BP);
}

static bool on_ist(const struct fault_catch *fc, int ist)
{
	u64 lo, hi;

	ist_stack_bounds(ist, &lo, &hi);
	return fc->regs_addr >= lo && fc->regs_addr < hi;
}

static void double_fault_on_ist(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		test_stack_overflow();
		fault_catch_end(&fc);
		KASSERT_TRUE(t, !"no double fault");
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_DF);
	KEXPECT_EQ(t, fc.error_code, 0);	/* #DF always pushes 0 */
	KEXPECT_TRUE(t, on_ist(&fc, IST_DOUBLE_FAULT));
}

/* "int $n" enters through the same gate, so it shows which stack it uses. */
static void nmi_and_mce_gates_on_ist(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin(&fc) == 0) {
		__asm__ __volatile__("int $2");
		fault_catch_end(&fc);
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_NMI);
	KEXPECT_TRUE(t, on_ist(&fc, IST_NMI));

	if (fault_catch_begin(&fc) == 0) {
		__asm__ __volatile__("int $18");
		fault_catch_end(&fc);
	}
	KEXPECT_EQ(t, fc.vector, X86_TRAP_MC);
	KEXPECT_TRUE(t, on_ist(&fc, IST_MACHINE_CHECK));

	/* An ordinary fault stays on the current stack. */
	if (fault_catch_begin(&fc) == 0) {
		test_ud2();
		fault_catch_end(&fc);
	}
	KEXPECT_FALSE(t, on_ist(&fc, IST_DOUBLE_FAULT) || on_ist(&fc, IST_NMI) ||
			 on_ist(&fc, IST_MACHINE_CHECK));
}

static void stray_vector_caught(struct ktest *t)
{
	struct fault_catch fc;

	if (fault_catch_begin_vector(&fc, 0x80) == 0) {
		__asm__ __volatile__("int $0x80");
		fault_catch_end(&fc);
	}
	KEXPECT_EQ(t, fc.vector, 0x80);
}

static void nested_catches(struct ktest *t)
{
	struct fault_catch outer, inner;
	volatile int reached_inner = 0;

	if (fault_catch_begin(&outer) == 0) {
		if (fault_catch_begin(&inner) == 0) {
			reached_inner = 1;
			test_ud2();
			fault_catch_end(&inner);
		}
		KEXPECT_EQ(t, inner.vector, X86_TRAP_UD);
		__asm__ __volatile__("int3");
		fault_catch_end(&outer);
	}
	KEXPECT_EQ(t, reached_inner, 1);
	KEXPECT_EQ(t, outer.vector, X86_TRAP_BP);
}

/* The report a fatal fault prints: registers, CR2, a symbolized trace. */
static __noinline void report_names_function(struct ktest *t)
{
	struct pt_regs regs = { 0 };
	u64 pos = printk_log_pos();

	regs.vector = X86_TRAP_PF;
	regs.error_code = X86_PF_WRITE;
	regs.rip = (u64)(uintptr_t)report_names_function + 4;
	regs.rbp = (u64)(uintptr_t)__builtin_frame_address(0);
	regs.cs = GDT_KERNEL_CS;
	show_trap_report(&regs, 0xdead000);
	KEXPECT_TRUE(t, printk_log_contains(pos, "Oops: #PF Page fault (vector 14)"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "[write, not-present, kernel]"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "CR2: 000000000dead000"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "RIP: 0008:"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "report_names_function+0x4/"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "Call Trace:"));
	/* The walk continues into the caller: the test runner. */
	KEXPECT_TRUE(t, printk_log_contains(pos, "run_case+"));
}

extern const u64 trap_entry_return[1];

/*
 * The unwinder at the entry code's frame (built here on the stack): from
 * user mode the trace ends with a user-space line, whatever the user's
 * rbp points at; from kernel mode it goes on at the interrupted rip.
 */
static void trace_ends_at_user_entry(struct ktest *t)
{
	struct {
		u64 frame[2];		/* do_trap's frame: saved rbp, return address */
		struct pt_regs regs;	/* what the entry code saved */
		u64 next[2];		/* a frame the saved rbp points at */
	} s = { 0 };
	u64 out[8], pos = printk_log_pos();
	u64 base = (u64)(uintptr_t)s.frame;

	s.next[1] = (u64)(uintptr_t)report_names_function;
	s.frame[0] = (u64)(uintptr_t)s.next;	/* a user's rbp may point anywhere */
	s.frame[1] = trap_entry_return[0];
	s.regs.cs = GDT_USER_CS | 3;
	s.regs.rip = 0x401000;
	s.regs.rbp = s.frame[0];
	KEXPECT_EQ(t, stack_trace_save(base, out, 8), 1);
	KEXPECT_EQ(t, out[0], trap_entry_return[0]);
	show_stack_trace(0, base);
	KEXPECT_TRUE(t, printk_log_contains(pos, "<user space: RIP 002b:0000000000401000"));
	KEXPECT_FALSE(t, printk_log_contains(pos, "report_names_function"));
	/* A report on user-mode registers symbolizes no user address. */
	pos = printk_log_pos();
	show_trap_report(&s.regs, 0);
	KEXPECT_TRUE(t, printk_log_contains(pos, "<user space: RIP 002b:0000000000401000"));
	KEXPECT_EQ(t, printk_log_count(pos, "[<"), 0);

	s.regs.cs = GDT_KERNEL_CS;
	s.regs.rip = (u64)(uintptr_t)invalid_opcode + 4;
	KASSERT_EQ(t, stack_trace_save(base, out, 8), 3);
	KEXPECT_EQ(t, out[1], s.regs.rip);
	KEXPECT_EQ(t, out[2], s.next[1]);
}

KTEST_SUITE(traps,
	    KTEST_CASE(invalid_opcode),
	    KTEST_CASE(null_pointer_write),
	    KTEST_CASE(unmapped_kernel_read),
	    KTEST_CASE(non_canonical_is_gp),
	    KTEST_CASE(divide_by_zero),
	    KTEST_CASE(breakpoint),
	    KTEST_CASE(double_fault_on_ist),
	    KTEST_CASE(nmi_and_mce_gates_on_ist),
	    KTEST_CASE(stray_vector_caught),
	    KTEST_CASE(nested_catches),
	    KTEST_CASE(report_names_function),
	    KTEST_CASE(trace_ends_at_user_entry));
