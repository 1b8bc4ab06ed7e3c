/* What the loader handed over was read and kept (struct boot_info). */
#include <quire/ktest.h>
#include <quire/bootinfo.h>
#include <quire/string.h>
#include <asm/boot.h>
#include <asm/page.h>
#include <asm/cpu.h>

static void protocol_known(struct ktest *t)
{
	KEXPECT_TRUE(t, boot_info.protocol == BOOT_MULTIBOOT2 ||
			boot_info.protocol == BOOT_PVH);
	KEXPECT_EQ(t, boot_info.warnings, 0);
}

/* The test runs because "ktest=" was on the command line we saved. */
static void cmdline_saved(struct ktest *t)
{
	KEXPECT_TRUE(t, strstr(boot_info.cmdline, "ktest=") != NULL);
}

static void memory_map_sane(struct ktest *t)
{
	u64 avail = 0;

	KASSERT_GT(t, boot_info.nr_mmap, 0);
	for (u32 i = 0; i < boot_info.nr_mmap; i++) {
		const struct boot_mem_region *r = &boot_info.mmap[i];

		KEXPECT_GT(t, r->len, 0);
		KEXPECT_TRUE(t, r->type >= BOOT_MEM_AVAILABLE && r->type <= BOOT_MEM_BAD);
		if (r->type == BOOT_MEM_AVAILABLE)
			avail += r->len;
	}
	KEXPECT_EQ(t, avail, bootinfo_available_bytes());
	/* Every machine in tests/qemu/topologies has at least 256 MiB. */
	KEXPECT_GE(t, avail >> 20, 256);
}

/* The kernel image itself must lie in available memory. */
static void kernel_in_available_memory(struct ktest *t)
{
	extern const char _kernel_phys_start[], _kernel_phys_end[];
	u64 start = (u64)(uintptr_t)_kernel_phys_start;
	u64 end = (u64)(uintptr_t)_kernel_phys_end;
	bool found = false;

	for (u32 i = 0; i < boot_info.nr_mmap; i++) {
		const struct boot_mem_region *r = &boot_info.mmap[i];

		if (r->type == BOOT_MEM_AVAILABLE && r->base <= start &&
		    end <= r->base + r->len)
			found = true;
	}
	KEXPECT_TRUE(t, found);
}

static void rsdp_valid(struct ktest *t)
{
	u8 sum = 0;

	if (!boot_info.rsdp_len)
		ktest_skip(t, "the loader gave no RSDP");
	KASSERT_GE(t, boot_info.rsdp_len, 20);
	KEXPECT_EQ(t, memcmp(boot_info.rsdp, "RSD PTR ", 8), 0);
	/* ACPI 1.0 checksum: the first 20 bytes sum to zero. */
	for (int i = 0; i < 20; i++)
		sum += boot_info.rsdp[i];
	KEXPECT_EQ(t, sum, 0);
	if (boot_info.rsdp[15] >= 2) {
		KASSERT_EQ(t, boot_info.rsdp_len, 36);
		sum = 0;
		for (int i = 0; i < 36; i++)
			sum += boot_info.rsdp[i];
		KEXPECT_EQ(t, sum, 0);	/* extended checksum */
	}
}

/*
 * The kernel image is mapped at KERNEL_VMA + its load address (it starts with
 * the multiboot2 header at 1 MiB), and the direct map shows the same bytes
 * at PAGE_OFFSET + physical address.
 */
static void image_and_direct_map_agree(struct ktest *t)
{
	extern const char _kernel_phys_start[];
	phys_addr_t pa = (phys_addr_t)(uintptr_t)_kernel_phys_start;
	const volatile u32 *image = (const u32 *)((uintptr_t)pa + KERNEL_VMA);
	const volatile u32 *direct = __va(pa);

	KEXPECT_EQ(t, *image, MULTIBOOT2_HEADER_MAGIC);
	KEXPECT_EQ(t, *direct, MULTIBOOT2_HEADER_MAGIC);
	KEXPECT_EQ(t, __pa((const void *)image), pa);
	KEXPECT_EQ(t, __pa((const void *)direct), pa);
}

/* SMEP and SMAP are on exactly when the CPU has them; NX is always on. */
static void smep_smap_nx_enabled(struct ktest *t)
{
	u32 a, b, c, d;
	u64 cr4 = read_cr4();

	cpuid(7, 0, &a, &b, &c, &d);
	KEXPECT_EQ(t, !!(cr4 & (1UL << 20)), !!(b & (1u << 7)));
	KEXPECT_EQ(t, !!(cr4 & (1UL << 21)), !!(b & (1u << 20)));
	KEXPECT_TRUE(t, rdmsr(MSR_EFER) & EFER_NXE);
}

KTEST_SUITE(boot,
	    KTEST_CASE(smep_smap_nx_enabled),
	    KTEST_CASE(protocol_known),
	    KTEST_CASE(cmdline_saved),
	    KTEST_CASE(memory_map_sane),
	    KTEST_CASE(kernel_in_available_memory),
	    KTEST_CASE(rsdp_valid),
	    KTEST_CASE(image_and_direct_map_agree));
