/* Boot: the root file system, the drivers behind its device nodes, /proc and /sys, debugfs's tree. */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/pseudofs.h>
#include <quire/panic.h>
#include <quire/printk.h>

void vfs_init(void)
{
	int err;

	if (vfs_root)
		return;
	err = init_rootfs();
	if (err)
		panic("vfs: cannot create the root file system (error %d)", err);
	mem_devices_init();
	tty_init();
	procfs_init();		/* failures are logged; the system runs without them */
	sysfs_init();
	debugfs_init();		/* not mounted: mount -t debugfs none /sys/kernel/debug */
	hmm_dmirror_init();	/* /dev/hmm_dmirror*, and its debugfs file */
	pr_info("root file system: ramfs, with /dev/console, /dev/null, /dev/zero, /tmp; "
		"procfs on /proc, sysfs on /sys\n");
}
