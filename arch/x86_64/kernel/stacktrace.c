/*
 * Backtraces by frame pointer: each frame starts with the caller's rbp and
 * the return address. A frame pointer is followed only while it points into
 * memory that can hold a kernel stack (the image: the boot and BSP IST
 * stacks; the direct map: every other stack), so a corrupted chain ends the
 * trace instead of faulting.
 *
 * The entry code calls do_trap and do_syscall with the stack pointing at a
 * struct pt_regs, so the frame of that call lies right below it. A trace
 * that reaches such a frame ends there when the registers are user mode's
 * (the user's rbp is the program's, not a kernel frame), and goes on at the
 * interrupted rip and rbp when they are the kernel's.
 */
#include <quire/stacktrace.h>
#include <quire/ksyms.h>
#include <quire/printk.h>
#include <quire/mm.h>
#include <asm/direct_map.h>
#include <asm/ptrace.h>

#define MAX_FRAMES 32

extern const char _stext[], _end[];
/* Return addresses of the entry code's calls (entry.S, syscall.S). */
extern const u64 trap_entry_return[1], syscall_entry_return[1];

static bool plausible_frame(u64 fp)
{
	if (!fp || (fp & 7))
		return false;
	if (fp >= (u64)(uintptr_t)_stext && fp + 16 <= (u64)(uintptr_t)_end)
		return true;
	return direct_map_ready && fp >= PAGE_OFFSET && fp < PAGE_OFFSET + DIRECT_MAP_SIZE &&
	       pfn_valid(PHYS_PFN(fp - PAGE_OFFSET));
}

/* The registers the entry code saved, when frame is its call's frame; else NULL. */
static const struct pt_regs *entry_frame_regs(const u64 *frame)
{
	if (frame[1] != trap_entry_return[0] && frame[1] != syscall_entry_return[0])
		return NULL;
	return (const struct pt_regs *)(frame + 2);
}

/*
 * Up to max return addresses from rbp into out; returns how many. *user:
 * the registers of the user-mode entry the walk ended at, or NULL.
 */
static int unwind(u64 rbp, u64 *out, int max, const struct pt_regs **user)
{
	int n = 0;

	*user = NULL;
	while (n < max && plausible_frame(rbp)) {
		const u64 *frame = (const u64 *)(uintptr_t)rbp;
		const struct pt_regs *regs = entry_frame_regs(frame);
		u64 next = frame[0], ret = frame[1];

		if (!ret)
			break;
		out[n++] = ret;
		if (regs && user_mode(regs)) {
			*user = regs;
			break;
		}
		if (regs) {		/* an interrupt or exception in the kernel */
			if (n < max)
				out[n++] = regs->rip;
			next = regs->rbp;
		}
		if (next <= rbp)	/* stacks grow down: callers are higher */
			break;
		rbp = next;
	}
	return n;
}

int stack_trace_save(u64 rbp, u64 *out, int max)
{
	const struct pt_regs *user;

	return unwind(rbp, out, max, &user);
}

static void print_frame(u64 addr)
{
	char sym[128];

	ksym_format(sym, sizeof(sym), addr);
	printk(KERN_EMERG " [<%016llx>] %s\n", (unsigned long long)addr, sym);
}

static void print_user_end(const struct pt_regs *regs)
{
	printk(KERN_EMERG " <user space: RIP %04llx:%016llx RSP %016llx>\n",
	       (unsigned long long)regs->cs, (unsigned long long)regs->rip,
	       (unsigned long long)regs->rsp);
}

void show_stack_trace(u64 rip, u64 rbp)
{
	u64 frames[MAX_FRAMES];
	const struct pt_regs *user;
	int n = unwind(rbp, frames, MAX_FRAMES, &user);

	printk(KERN_EMERG "Call Trace:\n");
	if (rip)
		print_frame(rip);
	for (int i = 0; i < n; i++)
		print_frame(frames[i]);
	if (user)
		print_user_end(user);
}

void show_regs_stack_trace(const struct pt_regs *regs)
{
	if (user_mode(regs)) {
		printk(KERN_EMERG "Call Trace:\n");
		print_user_end(regs);
		return;
	}
	show_stack_trace(regs->rip, regs->rbp);
}

void dump_stack(void)
{
	u64 rbp = (u64)(uintptr_t)__builtin_frame_address(0);

	show_stack_trace(0, rbp);
}
