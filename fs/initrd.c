/*
 * The initrd boot module: find it, unpack it into the root, give its
 * memory back to the page allocator.
 *
 * GRUB passes it as the multiboot2 module named "initrd" (scripts/mkiso.sh);
 * QEMU's direct (PVH) boot passes -initrd as module 0, without a name. The
 * module is reached through the direct map, which covers all RAM; memblock
 * reserved it at boot, and its whole pages go back to the buddy allocator
 * once the files are copied out (a partial page at either end stays
 * reserved: it may share its frame with something else).
 */
#define pr_fmt(fmt) "initrd: " fmt
#include <quire/initrd.h>
#include <quire/bootinfo.h>
#include <quire/fs.h>
#include <quire/memblock.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <asm/page.h>

struct initrd_info initrd_info;

static int find_module(void)
{
	for (u32 i = 0; i < boot_info.nr_modules; i++)
		if (!strcmp(boot_info.modules[i].cmdline, "initrd"))
			return (int)i;
	return boot_info.nr_modules ? 0 : -1;
}

void initrd_unpack(void)
{
	struct initramfs_stats *st = &initrd_info.stats;
	int i = find_module();
	u64 start, end;

	if (i < 0) {
		pr_info("no initrd (no boot module)\n");
		return;
	}
	vfs_init();
	start = boot_info.modules[i].start;
	end = boot_info.modules[i].end;
	initrd_info.found = true;
	initrd_info.start = start;
	initrd_info.end = end;
	pr_info("module %d at %#llx-%#llx (%llu bytes)\n", i, (unsigned long long)start,
		(unsigned long long)end, (unsigned long long)(end - start));
	initrd_info.result = unpack_to_rootfs(vfs_root, __va(start), end - start, st);
	pr_info("unpacked %lu files (%llu bytes), %lu directories, %lu symlinks, %lu device nodes; %lu skipped\n",
		st->files, (unsigned long long)st->bytes, st->dirs, st->symlinks, st->nodes,
		st->skipped);
	initrd_info.freed_pages = memblock_free_late(start, end - start);
	pr_info("freed %lu KiB of module memory\n", initrd_info.freed_pages * (PAGE_SIZE / 1024));
}
