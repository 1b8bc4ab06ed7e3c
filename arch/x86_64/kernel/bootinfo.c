/*
 * Read the loader's boot information into struct boot_info.
 *
 * multiboot2 (GRUB): a list of 8-byte aligned tags (Multiboot2 spec, section
 * 3.6). PVH (QEMU -kernel): struct hvm_start_info, version 1, whose memory
 * map uses E820 types. Everything the loader gave lies below 4 GiB, which the
 * early page tables map one to one.
 */
#define pr_fmt(fmt) "boot: " fmt
#include <quire/bootinfo.h>
#include <quire/numa_desc.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <asm/boot.h>

struct boot_info boot_info;

#define EARLY_MAP_LIMIT	(4ULL << 30)

/* The loader's memory, through the early identity map. */
static const void *early_ptr(u64 phys, u64 len)
{
	if (phys == 0 || phys + len > EARLY_MAP_LIMIT || phys + len < phys)
		return NULL;
	return (const void *)(uintptr_t)phys;
}

static void warn_once_more(const char *what, u64 v)
{
	boot_info.warnings++;
	pr_warn("%s (0x%llx); ignored\n", what, (unsigned long long)v);
}

static void add_region(u64 base, u64 len, u32 type)
{
	struct boot_mem_region *r;

	if (len == 0)
		return;
	if (boot_info.nr_mmap == BOOT_MMAP_MAX) {
		warn_once_more("memory map has too many entries, dropping one at", base);
		return;
	}
	if (type < BOOT_MEM_AVAILABLE || type > BOOT_MEM_BAD)
		type = BOOT_MEM_RESERVED;	/* unknown types are not RAM */
	r = &boot_info.mmap[boot_info.nr_mmap++];
	r->base = base;
	r->len = len;
	r->type = type;
}

static void add_module(u64 start, u64 end, const char *cmdline)
{
	struct boot_module *m;

	if (boot_info.nr_modules == BOOT_MODULES_MAX) {
		warn_once_more("too many boot modules, dropping one at", start);
		return;
	}
	if (end < start) {
		warn_once_more("boot module ends before it starts, at", start);
		return;
	}
	m = &boot_info.modules[boot_info.nr_modules++];
	m->start = start;
	m->end = end;
	if (cmdline)
		strscpy(m->cmdline, cmdline, sizeof(m->cmdline));
}

static void save_cmdline(const char *s, u64 max)
{
	if (!s)
		return;
	if (strnlen(s, max) >= sizeof(boot_info.cmdline)) {
		boot_info.warnings++;
		pr_warn("command line longer than %zu bytes; cut\n",
			sizeof(boot_info.cmdline) - 1);
	}
	strscpy(boot_info.cmdline, s, sizeof(boot_info.cmdline));
}

static void save_rsdp(const void *rsdp, u32 len)
{
	if (len > sizeof(boot_info.rsdp))
		len = sizeof(boot_info.rsdp);
	memcpy(boot_info.rsdp, rsdp, len);
	boot_info.rsdp_len = len;
}

/* ---- multiboot2 ---- */

enum {
	MB2_TAG_END = 0,
	MB2_TAG_CMDLINE = 1,
	MB2_TAG_LOADER = 2,
	MB2_TAG_MODULE = 3,
	MB2_TAG_MMAP = 6,
	MB2_TAG_EFI32 = 11,
	MB2_TAG_EFI64 = 12,
	MB2_TAG_ACPI_OLD = 14,
	MB2_TAG_ACPI_NEW = 15,
};

struct mb2_tag {
	u32 type;
	u32 size;
};

struct mb2_mmap_entry {
	u64 base;
	u64 len;
	u32 type;
	u32 reserved;
};

static void mb2_parse_mmap(const u8 *tag, u32 size)
{
	u32 entry_size = *(const u32 *)(tag + 8);
	const u8 *p = tag + 16, *end = tag + size;

	if (entry_size < sizeof(struct mb2_mmap_entry)) {
		warn_once_more("multiboot2 memory map entry size too small", entry_size);
		return;
	}
	for (; p + sizeof(struct mb2_mmap_entry) <= end; p += entry_size) {
		const struct mb2_mmap_entry *e = (const void *)p;

		add_region(e->base, e->len, e->type);
	}
}

static int mb2_parse(u64 info_phys)
{
	const u8 *info = early_ptr(info_phys, 8);
	const u8 *p, *end;
	u32 total;
	bool seen_new_acpi = false;

	if (!info) {
		pr_err("multiboot2 information at 0x%llx is not addressable\n",
		       (unsigned long long)info_phys);
		return -EINVAL;
	}
	total = *(const u32 *)info;
	if (total < 16 || total > (1 << 20) || !early_ptr(info_phys, total)) {
		pr_err("multiboot2 information has a bad size (%u)\n", total);
		return -EINVAL;
	}
	end = info + total;
	for (p = info + 8; p + sizeof(struct mb2_tag) <= end;
	     p += ALIGN_UP(((const struct mb2_tag *)p)->size, 8)) {
		const struct mb2_tag *tag = (const void *)p;

		if (tag->size < 8 || p + tag->size > end) {
			warn_once_more("malformed multiboot2 tag, stopping at type", tag->type);
			break;
		}
		switch (tag->type) {
		case MB2_TAG_END:
			return 0;
		case MB2_TAG_CMDLINE:
			save_cmdline((const char *)(p + 8), tag->size - 8);
			break;
		case MB2_TAG_LOADER:
			strscpy(boot_info.loader, (const char *)(p + 8),
				min(sizeof(boot_info.loader), (size_t)tag->size - 8));
			break;
		case MB2_TAG_MODULE:
			add_module(*(const u32 *)(p + 8), *(const u32 *)(p + 12),
				   (const char *)(p + 16));
			break;
		case MB2_TAG_MMAP:
			if (tag->size >= 16)
				mb2_parse_mmap(p, tag->size);
			break;
		case MB2_TAG_EFI32:
		case MB2_TAG_EFI64:
			boot_info.efi = true;
			break;
		case MB2_TAG_ACPI_OLD:
			/* The new tag (ACPI 2.0+, with the XSDT) wins when both come. */
			if (!seen_new_acpi)
				save_rsdp(p + 8, min(20u, tag->size - 8));
			break;
		case MB2_TAG_ACPI_NEW:
			seen_new_acpi = true;
			save_rsdp(p + 8, min(36u, tag->size - 8));
			break;
		default:
			break;	/* framebuffer, ELF sections, ...: not needed */
		}
	}
	boot_info.warnings++;
	pr_warn("multiboot2 information has no end tag\n");
	return 0;
}

/* ---- PVH ---- */

struct hvm_start_info {
	u32 magic;
	u32 version;
	u32 flags;
	u32 nr_modules;
	u64 modlist_paddr;
	u64 cmdline_paddr;
	u64 rsdp_paddr;
	u64 memmap_paddr;	/* version 1 and later */
	u32 memmap_entries;
	u32 reserved;
};

struct hvm_modlist_entry {
	u64 paddr;
	u64 size;
	u64 cmdline_paddr;
	u64 reserved;
};

struct hvm_memmap_entry {
	u64 addr;
	u64 size;
	u32 type;
	u32 reserved;
};

static int pvh_parse(u64 info_phys)
{
	const struct hvm_start_info *si = early_ptr(info_phys, sizeof(*si));

	if (!si || si->magic != PVH_BOOT_MAGIC) {
		pr_err("PVH start_info at 0x%llx is missing or has a bad magic\n",
		       (unsigned long long)info_phys);
		return -EINVAL;
	}
	strscpy(boot_info.loader, "QEMU PVH (direct boot)", sizeof(boot_info.loader));
	if (si->cmdline_paddr)
		save_cmdline(early_ptr(si->cmdline_paddr, 1), CMDLINE_MAX);

	if (si->nr_modules) {
		const struct hvm_modlist_entry *m =
			early_ptr(si->modlist_paddr, si->nr_modules * sizeof(*m));

		for (u32 i = 0; m && i < si->nr_modules; i++)
			add_module(m[i].paddr, m[i].paddr + m[i].size,
				   m[i].cmdline_paddr ? early_ptr(m[i].cmdline_paddr, 1) : NULL);
	}

	if (si->version >= 1 && si->memmap_entries) {
		const struct hvm_memmap_entry *e =
			early_ptr(si->memmap_paddr, si->memmap_entries * sizeof(*e));

		for (u32 i = 0; e && i < si->memmap_entries; i++)
			add_region(e[i].addr, e[i].size, e[i].type);
	} else {
		boot_info.warnings++;
		pr_warn("PVH start_info version %u has no memory map\n", si->version);
	}

	if (si->rsdp_paddr) {
		const u8 *rsdp = early_ptr(si->rsdp_paddr, 36);

		if (rsdp) {
			boot_info.rsdp_phys = si->rsdp_paddr;
			save_rsdp(rsdp, rsdp[15] >= 2 ? 36 : 20);	/* byte 15: revision */
		}
	}
	return 0;
}

int bootinfo_parse(u32 magic, u64 info_phys)
{
	memset(&boot_info, 0, sizeof(boot_info));
	switch (magic) {
	case MULTIBOOT2_BOOT_MAGIC:
		boot_info.protocol = BOOT_MULTIBOOT2;
		return mb2_parse(info_phys);
	case PVH_BOOT_MAGIC:
		boot_info.protocol = BOOT_PVH;
		return pvh_parse(info_phys);
	default:
		pr_err("unknown boot magic 0x%x: boot Quire with a multiboot2 loader (GRUB) or QEMU -kernel (PVH)\n",
		       magic);
		return -EINVAL;
	}
}

const char *boot_protocol_name(enum boot_protocol p)
{
	return p == BOOT_PVH ? "pvh" : "multiboot2";
}

u64 bootinfo_available_bytes(void)
{
	u64 total = 0;

	for (u32 i = 0; i < boot_info.nr_mmap; i++)
		if (boot_info.mmap[i].type == BOOT_MEM_AVAILABLE)
			total += boot_info.mmap[i].len;
	return total;
}
