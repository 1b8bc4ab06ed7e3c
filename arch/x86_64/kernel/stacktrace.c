/*
 * Backtraces by frame pointer: each frame starts with the caller's rbp and
 * the return address. A frame pointer is followed only while it points into
 * memory that can hold a kernel stack (the image: the boot and BSP IST
 * stacks; the direct map: every other stack), so a corrupted chain ends the
 * trace instead of faulting.
 */
#include <quire/stacktrace.h>
#include <quire/ksyms.h>
#include <quire/printk.h>
#include <quire/mm.h>
#include <asm/direct_map.h>

#define MAX_FRAMES 32

extern const char _stext[], _end[];

static bool plausible_frame(u64 fp)
{
	if (!fp || (fp & 7))
		return false;
	if (fp >= (u64)(uintptr_t)_stext && fp + 16 <= (u64)(uintptr_t)_end)
		return true;
	return direct_map_ready && fp >= PAGE_OFFSET && fp < PAGE_OFFSET + DIRECT_MAP_SIZE &&
	       pfn_valid(PHYS_PFN(fp - PAGE_OFFSET));
}

int stack_trace_save(u64 rbp, u64 *out, int max)
{
	int n = 0;

	while (n < max && plausible_frame(rbp)) {
		const u64 *frame = (const u64 *)(uintptr_t)rbp;
		u64 next = frame[0], ret = frame[1];

		if (!ret)
			break;
		out[n++] = ret;
		if (next <= rbp)	/* stacks grow down: callers are higher */
			break;
		rbp = next;
	}
	return n;
}

static void print_frame(u64 addr)
{
	char sym[128];

	ksym_format(sym, sizeof(sym), addr);
	printk(KERN_EMERG " [<%016llx>] %s\n", (unsigned long long)addr, sym);
}

void show_stack_trace(u64 rip, u64 rbp)
{
	u64 frames[MAX_FRAMES];
	int n = stack_trace_save(rbp, frames, MAX_FRAMES);

	printk(KERN_EMERG "Call Trace:\n");
	if (rip)
		print_frame(rip);
	for (int i = 0; i < n; i++)
		print_frame(frames[i]);
}

void dump_stack(void)
{
	u64 rbp = (u64)(uintptr_t)__builtin_frame_address(0);

	show_stack_trace(0, rbp);
}
