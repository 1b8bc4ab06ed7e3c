/*
 * Bringing up the other CPUs. The boot CPU (BSP) starts each application
 * processor (AP) the MADT lists, one at a time: it prepares the AP's
 * per-CPU area, GDT/TSS/IST stacks and first stack on the AP's own node,
 * fills the trampoline's data area, and sends INIT, then STARTUP twice (the
 * Intel SDM's INIT-SIPI-SIPI sequence). The AP runs the trampoline into
 * ap_entry(), sets itself up and says it is online. An AP that does not
 * answer within AP_START_TIMEOUT_MS is put back to sleep with INIT, reported
 * and left out.
 */
#define pr_fmt(fmt) "smp: " fmt
#include <quire/smp.h>
#include <quire/percpu.h>
#include <quire/sched.h>
#include <quire/numa.h>
#include <quire/acpi.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/time.h>
#include <quire/cmdline.h>
#include <asm/apic.h>
#include <asm/cpu.h>
#include <asm/desc.h>
#include <asm/direct_map.h>
#include <quire/process.h>

#define TRAMPOLINE_BASE		0x8000UL	/* must match trampoline.S */
#define TRAMP_PML4		0x9000UL	/* trampoline page tables, in the reserved low 1 MiB */
#define TRAMP_PDPT		0xa000UL
#define TRAMP_PD		0xb000UL
#define AP_START_TIMEOUT_MS	2000	/* generous: TCG on a loaded host is slow */

extern const char trampoline_start[], trampoline_end[];
extern const char tramp_cr3[], tramp_stack[], tramp_percpu[], tramp_entry[], tramp_alive[];

struct percpu boot_percpu;
struct percpu *percpu_areas[MAX_CPUS];
int nr_cpus_online = 1;

unsigned long max_cpus = MAX_CPUS;
CMDLINE_UINT("maxcpus", max_cpus, 1, MAX_CPUS, "start at most this many CPUs (1 = no SMP)");

void ap_entry(struct percpu *pc);

/* The boot CPU's per-CPU area, before anything else runs. */
void percpu_early_init(void)
{
	boot_percpu.self = &boot_percpu;
	boot_percpu.arch = &boot_cpu_arch;
	boot_percpu.online = true;
	percpu_areas[0] = &boot_percpu;
	wrmsr(MSR_GS_BASE, (u64)(uintptr_t)&boot_percpu);
}

/* Once ACPI is read: the boot CPU's logical id, APIC id and node. */
static void fix_boot_cpu(void)
{
	u32 apic = lapic_id();

	boot_percpu.apic_id = apic;
	for (int i = 0; i < acpi_madt.nr_cpus; i++)
		if (acpi_madt.apic_id[i] == apic && i != 0)
			pr_warn("the boot CPU is MADT entry %d, not 0; numbering it 0 anyway\n", i);
	boot_percpu.node = cpu_to_node(0);
}

static void *tramp_field(const char *sym)
{
	return __va(TRAMPOLINE_BASE + (unsigned long)(sym - trampoline_start));
}

/* Page tables for the trampoline: the low 2 MiB one to one, plus the kernel half. */
static void setup_trampoline(void)
{
	u64 *pml4 = __va(TRAMP_PML4), *pdpt = __va(TRAMP_PDPT), *pd = __va(TRAMP_PD);
	const u64 *kernel = __va(kernel_pml4_phys);

	memcpy(__va(TRAMPOLINE_BASE), trampoline_start, (size_t)(trampoline_end - trampoline_start));
	memset(pml4, 0, PAGE_SIZE);
	memset(pdpt, 0, PAGE_SIZE);
	memset(pd, 0, PAGE_SIZE);
	for (int i = 256; i < 512; i++)
		pml4[i] = kernel[i];
	pml4[0] = TRAMP_PDPT | 0x3;
	pdpt[0] = TRAMP_PD | 0x3;
	pd[0] = 0x83;				/* 2 MiB at 0, present, writable */
	*(u64 *)tramp_field(tramp_cr3) = TRAMP_PML4;
	*(u64 *)tramp_field(tramp_entry) = (u64)(uintptr_t)ap_entry;
}

/* The first C code of an AP, on its own stack, still on the trampoline's tables. */
enum { AP_STARTING, AP_ONLINE, AP_ABANDONED };

/*
 * The AP and the BSP agree on the AP's fate with one compare-and-swap: the
 * AP claims "online", or the BSP, having waited too long, claims
 * "abandoned" and a late AP stops.
 */
static bool ap_claim(struct percpu *pc, int to)
{
	int expected = AP_STARTING;

	return __atomic_compare_exchange_n(&pc->boot_state, &expected, to, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

void ap_entry(struct percpu *pc)
{
	if (!ap_claim(pc, AP_ONLINE))
		for (;;)
			__asm__ __volatile__("cli; hlt");	/* too late: left out */
	write_cr3(kernel_pml4_phys);
	wrmsr(MSR_GS_BASE, (u64)(uintptr_t)pc);
	gdt_init(pc->arch);
	idt_load();
	syscall_init();
	lapic_setup_cpu();
	sched_init_ap();
	__atomic_fetch_add(&nr_cpus_online, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&pc->online, true, __ATOMIC_RELEASE);
	local_irq_enable();
	cpu_idle_loop();
}

static bool wait_for(volatile const u64 *flag, const bool *online, u64 ms)
{
	u64 end = ktime_get_ns() + ms * NSEC_PER_MSEC;

	while (ktime_get_ns() < end) {
		if (flag && *flag)
			return true;
		if (online && __atomic_load_n(online, __ATOMIC_ACQUIRE))
			return true;
		cpu_relax();
	}
	return false;
}

/* A CPU's per-CPU area, in memory of mem_node (its node, or the nearest with memory). */
static struct percpu *alloc_cpu(int cpu, int mem_node)
{
	struct percpu *pc = kzalloc_node(sizeof(*pc), GFP_KERNEL, mem_node);
	unsigned int order = 0;
	struct page *arch;

	while ((PAGE_SIZE << order) < sizeof(struct cpu_arch))
		order++;
	if (!pc)
		return NULL;
	arch = alloc_pages_node(mem_node, __GFP_ZERO, order);
	if (!arch) {
		kfree(pc);
		return NULL;
	}
	pc->arch = page_address(arch);
	pc->self = pc;
	pc->cpu = cpu;
	pc->node = cpu_to_node(cpu);
	pc->apic_id = acpi_madt.apic_id[cpu];
	return pc;
}

static bool start_ap(int cpu)
{
	int node = numa_mem_id_of(cpu_to_node(cpu));	/* memoryless nodes borrow */
	struct percpu *pc = alloc_cpu(cpu, node);
	struct page *stack = alloc_pages_node(node, GFP_KERNEL, KERNEL_STACK_ORDER);
	volatile u64 *alive = tramp_field(tramp_alive);

	if (!pc || !stack) {
		pr_err("CPU %d: out of memory to start it\n", cpu);
		return false;
	}
	*(u64 *)tramp_field(tramp_stack) = (u64)(uintptr_t)page_address(stack) + KERNEL_STACK_SIZE;
	*(u64 *)tramp_field(tramp_percpu) = (u64)(uintptr_t)pc;
	*alive = 0;
	percpu_areas[cpu] = pc;

	lapic_send_init(pc->apic_id);
	mdelay(10);
	lapic_send_sipi(pc->apic_id, TRAMPOLINE_BASE >> 12);
	if (!wait_for(alive, NULL, 1))
		lapic_send_sipi(pc->apic_id, TRAMPOLINE_BASE >> 12);	/* the SDM sends two */
	if (wait_for(NULL, &pc->online, AP_START_TIMEOUT_MS))
		return true;
	if (!ap_claim(pc, AP_ABANDONED)) {
		/* It made it just now: it is coming online, wait for that. */
		while (!__atomic_load_n(&pc->online, __ATOMIC_ACQUIRE))
			cpu_relax();
		return true;
	}
	/*
	 * Park it with INIT, so that it cannot wake up later and run the
	 * trampoline with the next CPU's stack. Its memory is kept.
	 */
	lapic_send_init(pc->apic_id);
	pr_err("CPU %d (APIC id %u) did not come online within %d ms; left out\n",
	       cpu, pc->apic_id, AP_START_TIMEOUT_MS);
	percpu_areas[cpu] = NULL;
	return false;
}

void smp_boot_cpus(void)
{
	u64 start = ktime_get_ns();
	int wanted = acpi_madt.nr_cpus ? acpi_madt.nr_cpus : 1;

	fix_boot_cpu();
	smp_ipi_init();
	if ((unsigned long)wanted > max_cpus)
		wanted = (int)max_cpus;
	setup_trampoline();
	for (int cpu = 1; cpu < wanted; cpu++) {
		if (acpi_madt.apic_id[cpu] == boot_percpu.apic_id)
			continue;
		if (start_ap(cpu))
			pr_info("CPU %d (APIC id %u, node %d) online\n", cpu,
				percpu_areas[cpu]->apic_id, percpu_areas[cpu]->node);
	}
	pr_info("%d of %d CPUs online in %llu ms\n", nr_cpus_online,
		acpi_madt.nr_cpus ? acpi_madt.nr_cpus : 1,
		(unsigned long long)((ktime_get_ns() - start) / NSEC_PER_MSEC));
}

_Static_assert(offsetof(struct percpu, kernel_stack) == PERCPU_KERNEL_STACK, "syscall.S offsets");
_Static_assert(offsetof(struct percpu, user_rsp) == PERCPU_USER_RSP, "syscall.S offsets");
