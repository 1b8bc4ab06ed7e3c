/*
 * The simulated machine of a host test (asm/host_mm.h): DESIGN.md's three
 * nodes scaled down (0 and 1 DRAM with the CPUs, 2 slow), with the page
 * allocator and slab up, and on request the file systems and the zero page.
 *
 *	static void setup(void)
 *	{
 *		host_setup(32, 0, HOST_ROOTFS);
 *	}
 *
 * host_setup() builds it once per binary, for cases that share it;
 * host_machine_init() builds it afresh (host_mm_exit() tears it down).
 */
#ifndef QUIRE_HOST_SETUP_H
#define QUIRE_HOST_SETUP_H

#include <asm/host_mm.h>
#include <quire/fs.h>
#include <quire/mmap.h>
#include <quire/pseudofs.h>

/* What to bring up besides mm (flags). */
#define HOST_ROOTFS	(1u << 0)	/* ramfs on / (init_rootfs) */
#define HOST_PSEUDOFS	(1u << 1)	/* /proc and /sys on it (procfs_init, sysfs_init) */
#define HOST_ZERO_PAGE	(1u << 2)	/* the shared zero page (zero_page_init) */
#define HOST_DEVMEM	(1u << 3)	/* 4 MiB of node 0 kept for device memory (memremap.h) */

/*
 * Build the machine: mib MiB on each node, node0_mib on node 0 when not 0,
 * then what flags ask for. Returns 0, or the first error.
 */
static __attribute__((unused))
int host_machine_init(unsigned long mib, unsigned long node0_mib, unsigned int flags)
{
	struct host_topology topo;
	int err;

	host_topology_numa3(&topo, mib);
	if (node0_mib)
		topo.mib[0] = node0_mib;
	if (flags & HOST_DEVMEM)
		topo.devmem_mib = 4;
	err = host_mm_init(&topo);
	if (!err && (flags & HOST_ROOTFS))
		err = init_rootfs();
	if (!err && (flags & HOST_PSEUDOFS))
		err = procfs_init() ?: sysfs_init();
	if (!err && (flags & HOST_ZERO_PAGE))
		zero_page_init();
	return err;
}

/*
 * The machine the cases of this binary share: built by the first call
 * (abort() if it cannot be), which returns true; later calls do nothing.
 */
static __attribute__((unused))
bool host_setup(unsigned long mib, unsigned long node0_mib, unsigned int flags)
{
	static bool done;

	if (done)
		return false;
	done = true;
	if (host_machine_init(mib, node0_mib, flags))
		abort();
	return true;
}

#endif
