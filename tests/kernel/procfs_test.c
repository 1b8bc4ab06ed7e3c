/*
 * The procfs suite: /proc and /sys through the VFS (the THP controls with
 * their defaults, writes and refusals, the per-size counters, /proc/vmstat,
 * listings, the errno of every refused operation, no memory kept by an
 * open and close), and pagemap and smaps of an address space built here
 * (anonymous pages, the zero page, pages shared with a fork copy, a
 * PMD-mapped THP when the fault path makes one). Every THP setting a case
 * changes is restored before it ends. The same files seen from ring 3:
 * user/tests/procfs_ktap.c.
 */
#include <quire/ktest.h>
#include <quire/fs.h>
#include <quire/pseudofs.h>
#include <quire/task_mmu.h>
#include <quire/huge_mm.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/rmap.h>
#include <quire/pte.h>
#include <quire/slab.h>
#include "smaps_text.h"
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include "vfs_test.h"

#define THP_DIR	"/sys/kernel/mm/transparent_hugepage"

/* The whole content of a file (NUL-terminated) into buf: its length or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	struct file *f;
	ssize_t n, len = 0;
	int err = vfs_open(NULL, path, O_RDONLY, 0, &f);

	if (err)
		return err;
	while ((size_t)len + 1 < size &&
	       (n = vfs_read(f, buf + len, size - 1 - (size_t)len, NULL)) > 0)
		len += n;
	buf[len] = '\0';
	fput(f);
	return len;
}

/* One write(2) of s: its result (the length, or -errno), or the open's error. */
static ssize_t write_file(const char *path, const char *s)
{
	struct file *f;
	ssize_t n;
	int err = vfs_open(NULL, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, &f);

	if (err)
		return err;
	n = vfs_write(f, s, strlen(s), NULL);
	fput(f);
	return n;
}

static int open_err(const char *path, int flags)
{
	struct file *f;
	int err = vfs_open(NULL, path, flags, 0644, &f);

	if (!err)
		fput(f);
	return err;
}

static void thp_enabled_default_write_refuse(struct ktest *t)
{
	enum thp_mode saved = thp_global_mode();
	char buf[64];

	/* Linux's default, unless a boot option or a suite that did not clean up changed it. */
	KEXPECT_EQ(t, read_file(THP_DIR "/enabled", buf, sizeof(buf)), 23);
	KEXPECT_STREQ(t, buf, "[always] madvise never\n");
	KEXPECT_EQ(t, write_file(THP_DIR "/enabled", "madvise"), 7);
	KEXPECT_EQ(t, thp_global_mode(), THP_MADVISE);
	read_file(THP_DIR "/enabled", buf, sizeof(buf));
	KEXPECT_STREQ(t, buf, "always [madvise] never\n");
	/* Refused values leave the setting alone; inherit is per size only. */
	KEXPECT_EQ(t, write_file(THP_DIR "/enabled", "bogus"), -EINVAL);
	KEXPECT_EQ(t, write_file(THP_DIR "/enabled", "inherit\n"), -EINVAL);
	KEXPECT_EQ(t, write_file(THP_DIR "/enabled", "never\n\n"), -EINVAL);
	read_file(THP_DIR "/enabled", buf, sizeof(buf));
	KEXPECT_STREQ(t, buf, "always [madvise] never\n");
	KEXPECT_EQ(t, write_file(THP_DIR "/enabled", "never\n"), 6);	/* echo's newline */
	read_file(THP_DIR "/enabled", buf, sizeof(buf));
	KEXPECT_STREQ(t, buf, "always madvise [never]\n");
	/* Linux's sysfs store: the value ends at a NUL; an empty write stores nothing. */
	KEXPECT_EQ(t, thp_enabled_store("madvise\0x", 9), 0);
	KEXPECT_EQ(t, thp_global_mode(), THP_MADVISE);
	KEXPECT_EQ(t, thp_enabled_store("never\nx", 8), -EINVAL);
	KEXPECT_EQ(t, write_file(THP_DIR "/enabled", ""), 0);
	KEXPECT_EQ(t, thp_global_mode(), THP_MADVISE);
	thp_set_global_mode(saved);
}

static void thp_size_enabled_defaults_and_writes(struct ktest *t)
{
	enum thp_mode saved2m = thp_order_mode(HPAGE_PMD_ORDER), saved64k = thp_order_mode(4);
	char buf[64];

	/* Linux's defaults (see above) */
	read_file(THP_DIR "/hugepages-2048kB/enabled", buf, sizeof(buf));
	KEXPECT_STREQ(t, buf, "always [inherit] madvise never\n");
	read_file(THP_DIR "/hugepages-64kB/enabled", buf, sizeof(buf));
	KEXPECT_STREQ(t, buf, "always inherit madvise [never]\n");
	KEXPECT_EQ(t, write_file(THP_DIR "/hugepages-64kB/enabled", "always\n"), 7);
	KEXPECT_EQ(t, thp_order_mode(4), THP_ALWAYS);
	read_file(THP_DIR "/hugepages-64kB/enabled", buf, sizeof(buf));
	KEXPECT_STREQ(t, buf, "[always] inherit madvise never\n");
	KEXPECT_EQ(t, write_file(THP_DIR "/hugepages-64kB/enabled", "sometimes"), -EINVAL);
	KEXPECT_EQ(t, thp_order_mode(4), THP_ALWAYS);
	KEXPECT_EQ(t, write_file(THP_DIR "/hugepages-2048kB/enabled", "madvise"), 7);
	KEXPECT_EQ(t, thp_order_mode(HPAGE_PMD_ORDER), THP_MADVISE);
	/* Only these sizes exist: 8kB (order 1) and 4096kB have no directory. */
	KEXPECT_EQ(t, open_err(THP_DIR "/hugepages-8kB/enabled", O_RDONLY), -ENOENT);
	KEXPECT_EQ(t, open_err(THP_DIR "/hugepages-4096kB/enabled", O_RDONLY), -ENOENT);
	for (unsigned int order = THP_ORDER_MIN; order <= HPAGE_PMD_ORDER; order++) {
		char path[96];

		snprintf(path, sizeof(path), THP_DIR "/hugepages-%lukB/enabled",
			 (PAGE_SIZE << order) >> 10);
		KEXPECT_EQ(t, read_file(path, buf, sizeof(buf)) > 0, true);
		KEXPECT_TRUE(t, strstr(buf, "inherit") != NULL);
	}
	thp_set_order_mode(HPAGE_PMD_ORDER, saved2m);
	thp_set_order_mode(4, saved64k);
}

/* "123\n": the number; -1 when it is anything else. */
static long parse_number_line(const char *s)
{
	long v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return p != s && p[0] == '\n' && p[1] == '\0' ? v : -1;
}

static void thp_stats_are_numbers(struct ktest *t)
{
	char path[128], buf[64];

	for (unsigned int order = THP_ORDER_MIN; order <= HPAGE_PMD_ORDER; order++)
		for (int i = 0; i < NR_MTHP_STAT_ITEMS; i++) {
			unsigned long before = mthp_stat_read(order, i);
			long v;

			snprintf(path, sizeof(path), THP_DIR "/hugepages-%lukB/stats/%s",
				 (PAGE_SIZE << order) >> 10, mthp_stat_names[i]);
			KASSERT_GT(t, read_file(path, buf, sizeof(buf)), 0);
			v = parse_number_line(buf);
			KEXPECT_GE(t, v, (long)before);
			KEXPECT_LE(t, v, (long)mthp_stat_read(order, i));
			KEXPECT_EQ(t, open_err(path, O_WRONLY), -EACCES);
		}
	/* A counter moved by hand is what the file then shows. */
	mod_mthp_stat(4, MTHP_STAT_SPLIT_FAILED, 5);
	read_file(THP_DIR "/hugepages-64kB/stats/split_failed", buf, sizeof(buf));
	KEXPECT_EQ(t, parse_number_line(buf), (long)mthp_stat_read(4, MTHP_STAT_SPLIT_FAILED));
	mod_mthp_stat(4, MTHP_STAT_SPLIT_FAILED, -5);
}

/* "name value" lines of /proc/vmstat: the value of name, or -1 when absent. */
static long vmstat_value(const char *text, const char *name)
{
	size_t len = strlen(name);

	for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
		if (!strncmp(l, name, len) && l[len] == ' ') {
			long v = 0;
			const char *p = l + len + 1;

			if (*p < '0' || *p > '9')
				return -1;
			for (; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (*p - '0');
			return *p == '\n' ? v : -1;
		}
	}
	return -1;
}

static void proc_vmstat_lines(struct ktest *t)
{
	char *buf = kmalloc(4096, GFP_KERNEL);

	KASSERT_TRUE(t, buf != NULL);
	KEXPECT_GT(t, read_file("/proc/vmstat", buf, 4096), 0);
	KEXPECT_GE(t, vmstat_value(buf, "thp_fault_alloc"), (long)thp_event_read(THP_FAULT_ALLOC));
	KEXPECT_GE(t, vmstat_value(buf, "thp_split_pmd"), (long)thp_event_read(THP_SPLIT_PMD));
	KEXPECT_GT(t, vmstat_value(buf, "nr_free_pages"), 0);
	for (int i = 0; i < NR_THP_VM_EVENTS; i++)
		KEXPECT_GE(t, vmstat_value(buf, thp_vm_event_names[i]), 0);
	KEXPECT_EQ(t, vmstat_value(buf, "no_such_counter"), -1);
	/* A read at an offset continues the snapshot; past the end is 0. */
	{
		struct file *f;
		char part[8];
		loff_t pos = 3;

		KASSERT_EQ(t, vfs_open(NULL, "/proc/vmstat", O_RDONLY, 0, &f), 0);
		KEXPECT_EQ(t, vfs_read(f, part, 5, &pos), 5);
		KEXPECT_EQ(t, memcmp(part, buf + 3, 5), 0);
		pos = 1 << 20;
		KEXPECT_EQ(t, vfs_read(f, part, 5, &pos), 0);
		fput(f);
	}
	kfree(buf);
}

/* The names a directory lists (less . and ..), joined with spaces, and their count. */
static int list_dir(const char *path, char *names, size_t size, bool *all_dirs)
{
	char buf[512];
	struct file *f;
	ssize_t n;
	int count = 0;
	size_t len = 0;

	*all_dirs = true;
	names[0] = '\0';
	if (vfs_open(NULL, path, O_RDONLY | O_DIRECTORY, 0, &f))
		return -1;
	while ((n = vfs_getdents64(f, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			len += scnprintf(names + len, size - len, " %s", d->d_name);
			if (!strncmp(d->d_name, "hugepages-", 10) && d->d_type != DT_DIR)
				*all_dirs = false;
			count++;
		}
	fput(f);
	return count;
}

static void sys_and_proc_listings(struct ktest *t)
{
	char names[512];
	bool dirs;

	KEXPECT_EQ(t, list_dir(THP_DIR, names, sizeof(names), &dirs), 14);
	KEXPECT_STREQ(t, names, " enabled defrag hpage_pmd_size shmem_enabled khugepaged use_zero_page "
		      "hugepages-16kB hugepages-32kB hugepages-64kB "
		      "hugepages-128kB hugepages-256kB hugepages-512kB hugepages-1024kB "
		      "hugepages-2048kB");
	KEXPECT_TRUE(t, dirs);
	KEXPECT_EQ(t, list_dir(THP_DIR "/hugepages-2048kB", names, sizeof(names), &dirs), 2);
	KEXPECT_STREQ(t, names, " enabled stats");
	KEXPECT_EQ(t, list_dir(THP_DIR "/hugepages-16kB/stats", names, sizeof(names), &dirs),
		   NR_MTHP_STAT_ITEMS);
	KEXPECT_TRUE(t, strstr(names, " anon_fault_alloc") != NULL);
	KEXPECT_TRUE(t, strstr(names, " nr_anon_partially_mapped") != NULL);
	/* /proc's own entries, then a directory per process (none or some: numbers only) */
	{
		static const char own[] = " self vmstat quire mounts meminfo kpageflags loadavg uptime "
					  "stat cpuinfo sys";

		KEXPECT_TRUE(t, list_dir("/proc", names, sizeof(names), &dirs) >= 11);
		KEXPECT_TRUE(t, !strncmp(names, own, sizeof(own) - 1));
		for (const char *p = names + sizeof(own) - 1; *p; p++)
			KEXPECT_TRUE(t, *p == ' ' || (*p >= '0' && *p <= '9'));
	}
	KEXPECT_EQ(t, list_dir("/proc/quire", names, sizeof(names), &dirs), 1);
	KEXPECT_STREQ(t, names, " mm_verify");
	KEXPECT_EQ(t, list_dir("/proc/self", names, sizeof(names), &dirs), 13);
	KEXPECT_STREQ(t, names, " pagemap mem clear_refs smaps maps numa_maps mounts status stat "
		      "statm cmdline comm exe");
	KEXPECT_EQ(t, list_dir("/proc/sys/vm", names, sizeof(names), &dirs), 2);
	KEXPECT_STREQ(t, names, " drop_caches memory_failure_early_kill");
	KEXPECT_EQ(t, list_dir("/sys/kernel/debug", names, sizeof(names), &dirs), 0);
	KEXPECT_EQ(t, list_dir("/sys", names, sizeof(names), &dirs), 2);
	KEXPECT_STREQ(t, names, " kernel devices");
	KEXPECT_EQ(t, list_dir("/sys/devices/system", names, sizeof(names), &dirs), 2);
	KEXPECT_STREQ(t, names, " node cpu");
}

static void refusals_and_lookups(struct ktest *t)
{
	struct stat st, root;
	struct inode *dir;

	/* Unknown names */
	KEXPECT_EQ(t, open_err("/proc/nope", O_RDONLY), -ENOENT);
	KEXPECT_EQ(t, open_err(THP_DIR "/nope", O_RDONLY), -ENOENT);
	KEXPECT_EQ(t, open_err("/sys/kernel/mm/nope/enabled", O_RDONLY), -ENOENT);
	KEXPECT_EQ(t, open_err("/proc/vmstat/x", O_RDONLY), -ENOTDIR);
	/* Read-only files refuse writers at open; O_TRUNC too. */
	KEXPECT_EQ(t, open_err("/proc/vmstat", O_WRONLY), -EACCES);
	KEXPECT_EQ(t, open_err("/proc/vmstat", O_RDWR), -EACCES);
	KEXPECT_EQ(t, open_err("/proc/vmstat", O_RDONLY | O_TRUNC), -EACCES);
	KEXPECT_EQ(t, open_err("/proc/self/smaps", O_WRONLY), -EACCES);
	KEXPECT_EQ(t, open_err("/proc/self/pagemap", O_WRONLY), -EACCES);
	KEXPECT_EQ(t, open_err(THP_DIR "/enabled", O_RDWR), 0);
	/* Nothing is created, removed or renamed here. */
	KEXPECT_EQ(t, open_err("/proc/new", O_WRONLY | O_CREAT), -EACCES);
	KEXPECT_EQ(t, vfs_mkdir(NULL, "/sys/kernel/new", 0755), -EPERM);
	KEXPECT_EQ(t, vfs_mknod(NULL, "/proc/node", S_IFCHR | 0600, MKDEV(1, 3)), -EPERM);
	KEXPECT_EQ(t, vfs_symlink(NULL, "/tmp", "/proc/link"), -EPERM);
	KEXPECT_EQ(t, vfs_unlink(NULL, "/proc/vmstat"), -EPERM);
	KEXPECT_EQ(t, vfs_unlink(NULL, "/proc/nope"), -ENOENT);
	KEXPECT_EQ(t, vfs_rmdir(NULL, "/proc/self"), -EPERM);
	KEXPECT_EQ(t, vfs_rmdir(NULL, "/proc"), -EBUSY);
	KEXPECT_EQ(t, vfs_rmdir(NULL, "/sys/"), -EBUSY);
	KEXPECT_EQ(t, vfs_mkdir(NULL, "/proc", 0755), -EEXIST);
	KEXPECT_EQ(t, open_err("/sys", O_WRONLY), -EISDIR);
	/* The mounts: /proc is the tree's root, its ".." the real root. */
	KEXPECT_EQ(t, vfs_stat(NULL, "/proc", 0, &st), 0);
	KEXPECT_EQ(t, st.st_ino, pseudo_inode(proc_root)->i_ino);
	KEXPECT_EQ(t, st.st_mode, S_IFDIR | 0555);
	KEXPECT_EQ(t, vfs_stat(NULL, "/proc/..", 0, &st), 0);
	KEXPECT_EQ(t, vfs_stat(NULL, "/", 0, &root), 0);
	KEXPECT_EQ(t, st.st_ino, root.st_ino);
	KEXPECT_EQ(t, vfs_stat(NULL, THP_DIR "/../../../../sys/kernel/mm", 0, &st), 0);
	KEXPECT_TRUE(t, S_ISDIR(st.st_mode));
	KEXPECT_EQ(t, vfs_stat(NULL, THP_DIR "/enabled", 0, &st), 0);
	KEXPECT_EQ(t, st.st_mode, S_IFREG | 0644);
	KEXPECT_EQ(t, vfs_stat(NULL, "/proc/self/pagemap", 0, &st), 0);
	KEXPECT_EQ(t, st.st_mode, S_IFREG | 0400);
	/* Relative walks from inside the tree. */
	KASSERT_EQ(t, vfs_lookup(NULL, "/sys/kernel", &dir), 0);
	KEXPECT_EQ(t, vfs_stat(dir, "mm/transparent_hugepage/enabled", 0, &st), 0);
	KEXPECT_EQ(t, vfs_stat(dir, "../../proc/vmstat", 0, &st), 0);
	iput(dir);
}

/* Opening and reading every kind of file keeps no memory and no inode. */
static void open_read_close_keeps_nothing(struct ktest *t)
{
	static const char *const paths[] = {
		"/proc/vmstat", "/proc/self/smaps", "/proc/self/pagemap",
		THP_DIR "/enabled", THP_DIR "/hugepages-2048kB/stats/nr_anon",
	};
	struct vt_mem before;
	char *buf = kmalloc(8192, GFP_KERNEL);

	KASSERT_TRUE(t, buf != NULL);
	vt_mem_snapshot(&before);
	for (int round = 0; round < 20; round++)
		for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
			KEXPECT_GE(t, read_file(paths[i], buf, 8192), 0);
	/* A kernel thread has no mm: its /proc/self files are empty. */
	KEXPECT_EQ(t, read_file("/proc/self/smaps", buf, 8192), 0);
	KEXPECT_EQ(t, read_file("/proc/self/pagemap", buf, 8192), 0);
	vt_mem_expect_same(t, &before);		/* buf's slab still counted in both */
	kfree(buf);
}

/*
 * A tmpfs mounted, filled (files with pages, a directory, a file in it) and
 * unmounted gives back every page, inode and tree node: plainly, and with
 * MNT_DETACH while a file is open, once that file is closed. Open, it is
 * EBUSY without MNT_DETACH.
 */
static void tmpfs_mount_keeps_nothing(struct ktest *t)
{
	static const char dir[] = "/tmp/ktest-tmpfs";
	char page[PAGE_SIZE];
	struct vt_mem before;
	struct file *f;

	memset(page, 't', sizeof(page));
	vfs_rmdir(NULL, dir);
	KASSERT_EQ(t, vfs_mkdir(NULL, dir, 0755), 0);
	vt_mem_snapshot(&before);
	for (int lazy = 0; lazy < 2; lazy++) {
		KASSERT_EQ(t, do_mount(NULL, "tmpfs", dir, "tmpfs", 0, "size=1m"), 0);
		KEXPECT_EQ(t, do_mount(NULL, "tmpfs", "/tmp/ktest-none", "tmpfs", 0, NULL), -ENOENT);
		KEXPECT_EQ(t, vt_write_file(NULL, "/tmp/ktest-tmpfs/a", page, sizeof(page)), 0);
		KEXPECT_EQ(t, vfs_mkdir(NULL, "/tmp/ktest-tmpfs/d", 0755), 0);
		KEXPECT_EQ(t, vfs_mkdir(NULL, "/tmp/ktest-tmpfs/d/e", 0755), 0);
		KEXPECT_EQ(t, vt_write_file(NULL, "/tmp/ktest-tmpfs/d/b", page, sizeof(page)), 0);
		KASSERT_EQ(t, vfs_open(NULL, "/tmp/ktest-tmpfs/d/e/c", O_RDWR | O_CREAT, 0600, &f), 0);
		KEXPECT_EQ(t, vfs_write(f, page, sizeof(page), NULL), (ssize_t)sizeof(page));
		KEXPECT_EQ(t, do_umount(NULL, dir, 0), -EBUSY);
		if (lazy) {
			KEXPECT_EQ(t, do_umount(NULL, dir, MNT_DETACH), 0);
			KEXPECT_EQ(t, vfs_write(f, page, sizeof(page), NULL), (ssize_t)sizeof(page));
		}
		fput(f);
		if (!lazy)
			KEXPECT_EQ(t, do_umount(NULL, dir, 0), 0);
		KEXPECT_EQ(t, do_umount(NULL, dir, 0), -EINVAL);	/* a plain directory again */
		vt_mem_expect_same(t, &before);
	}
	KEXPECT_EQ(t, vfs_rmdir(NULL, dir), 0);
}

/* ---- pagemap and smaps of an address space built here ---- */

#define BASE	0x20000000UL
#define NPAGES	16

static struct mm_struct *mm_with_region(struct ktest *t, unsigned long base, unsigned long len,
					unsigned long prot)
{
	struct mm_struct *mm = mm_alloc();
	long r;

	if (!mm)
		return NULL;
	down_write(&mm->mmap_lock);
	r = do_mmap(mm, base, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&mm->mmap_lock);
	KEXPECT_EQ(t, r, (long)base);
	return mm;
}

static unsigned long pfn_mapped(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pte = pte_lookup(mm->pgd, addr, false);

	return pte && pte_present(*pte) ? pte_pfn(*pte) : 0;
}

/* The smaps block (header to VmFlags) of the VMA starting at start, into out. */
static bool smaps_block(struct mm_struct *mm, unsigned long start, char *out, size_t size)
{
	char *buf = kmalloc(16384, GFP_KERNEL), head[32], *b, *e;
	ssize_t n;
	bool ok = false;

	if (!buf)
		return false;
	n = smaps_show(mm, buf, 16384);
	snprintf(head, sizeof(head), "%08lx-", start);
	b = n > 0 ? strstr(buf, head) : NULL;
	e = b ? strstr(b, "VmFlags:") : NULL;
	e = e ? strchr(e, '\n') : NULL;
	if (e && (size_t)(e + 1 - b) < size) {
		memcpy(out, b, (size_t)(e + 1 - b));
		out[e + 1 - b] = '\0';
		ok = true;
	}
	kfree(buf);
	return ok;
}

static void pagemap_anon_pages(struct ktest *t)
{
	struct mm_struct *mm = mm_with_region(t, BASE, NPAGES * PAGE_SIZE, PROT_READ | PROT_WRITE);
	u64 pm[NPAGES + 2];
	loff_t pos = (BASE >> PAGE_SHIFT) * 8;

	KASSERT_TRUE(t, mm != NULL);
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE, FAULT_FLAG_WRITE), 0);
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE + 2 * PAGE_SIZE + 100, FAULT_FLAG_WRITE), 0);
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE + 5 * PAGE_SIZE, 0), 0);	/* the zero page */
	/* One entry before the region and one after it too. */
	KASSERT_EQ(t, pagemap_read(mm, pm, sizeof(pm), pos - 8), (ssize_t)sizeof(pm));
	KEXPECT_EQ(t, pm[0], 0);
	KEXPECT_EQ(t, pm[NPAGES + 1], 0);
	for (int i = 0; i < NPAGES; i++) {
		u64 e = pm[i + 1];

		if (i == 0 || i == 2) {
			KEXPECT_TRUE(t, e & PM_PRESENT);
			KEXPECT_NE(t, e & PM_PFRAME_MASK, 0);
			KEXPECT_EQ(t, e & PM_PFRAME_MASK, pfn_mapped(mm, BASE + i * PAGE_SIZE));
			KEXPECT_TRUE(t, e & PM_MMAP_EXCLUSIVE);
			KEXPECT_FALSE(t, e & PM_FILE);
		} else if (i == 5) {
			/* (a new mapping: VM_SOFTDIRTY, so every entry of it is soft-dirty) */
			KEXPECT_EQ(t, e, PM_PRESENT | PM_SOFT_DIRTY |
					 pfn_mapped(mm, BASE + 5 * PAGE_SIZE));
		} else {
			KEXPECT_EQ(t, e, PM_SOFT_DIRTY);	/* nothing mapped, in the VMA */
		}
	}
	KEXPECT_NE(t, pm[1], pm[3]);
	/* Positions and sizes not a multiple of 8; past the user range; nothing. */
	KEXPECT_EQ(t, pagemap_read(mm, pm, 8, pos + 1), -EINVAL);
	KEXPECT_EQ(t, pagemap_read(mm, pm, 7, pos), -EINVAL);
	KEXPECT_EQ(t, pagemap_read(mm, pm, 12, pos), -EINVAL);
	KEXPECT_EQ(t, pagemap_read(mm, pm, 0, pos), 0);
	KEXPECT_EQ(t, pagemap_read(mm, pm, 8, (USER_TOP >> PAGE_SHIFT) * 8), 0);
	/* The last page of the user range is the last entry: a read across it is cut. */
	KEXPECT_EQ(t, pagemap_read(mm, pm, 16, ((USER_TOP >> PAGE_SHIFT) - 1) * 8), 8);
	mmput(mm);
}

static void smaps_anon_region(struct ktest *t)
{
	struct mm_struct *mm = mm_with_region(t, BASE, NPAGES * PAGE_SIZE, PROT_READ | PROT_WRITE);
	char *blk = kmalloc(2048, GFP_KERNEL), header[96];
	enum thp_mode saved = thp_global_mode(), saved64k = thp_order_mode(4);

	KASSERT_TRUE(t, mm != NULL && blk != NULL);
	for (int i = 0; i < 3; i++)
		KEXPECT_EQ(t, handle_mm_fault(mm, BASE + (i + 4) * PAGE_SIZE, FAULT_FLAG_WRITE), 0);
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE + 9 * PAGE_SIZE, 0), 0);	/* zero page: no Rss */
	thp_set_global_mode(THP_ALWAYS);
	KASSERT_TRUE(t, smaps_block(mm, BASE, blk, 2048));
	snprintf(header, sizeof(header), "%08lx-%08lx rw-p 00000000 00:00 0 \n",
		 BASE, BASE + NPAGES * PAGE_SIZE);
	KEXPECT_EQ(t, strncmp(blk, header, strlen(header)), 0);
	KEXPECT_TRUE(t, strstr(blk, "\nSize:                 64 kB\n") != NULL);
	KEXPECT_TRUE(t, strstr(blk, "\nRss:                  12 kB\n") != NULL);
	KEXPECT_EQ(t, smaps_kb(blk, "KernelPageSize:"), 4);
	KEXPECT_EQ(t, smaps_kb(blk, "MMUPageSize:"), 4);
	KEXPECT_EQ(t, smaps_kb(blk, "Pss:"), 12);
	KEXPECT_EQ(t, smaps_kb(blk, "Private_Dirty:"), 12);
	KEXPECT_EQ(t, smaps_kb(blk, "Private_Clean:"), 0);
	KEXPECT_EQ(t, smaps_kb(blk, "Shared_Clean:"), 0);
	KEXPECT_EQ(t, smaps_kb(blk, "Shared_Dirty:"), 0);
	KEXPECT_EQ(t, smaps_kb(blk, "Referenced:"), 12);
	KEXPECT_EQ(t, smaps_kb(blk, "Anonymous:"), 12);
	KEXPECT_EQ(t, smaps_kb(blk, "AnonHugePages:"), 0);
	/* Only 2 MiB is enabled (the defaults) and no 2 MiB block fits in 64 KiB. */
	KEXPECT_TRUE(t, strstr(blk, "\nTHPeligible:           0\n") != NULL);
	KEXPECT_TRUE(t, strstr(blk, "\nVmFlags: rd wr sd \n") != NULL);
	/* THPeligible follows the settings of every size, the VMA's flags and its room. */
	thp_set_order_mode(4, THP_ALWAYS);
	KASSERT_TRUE(t, smaps_block(mm, BASE, blk, 2048));
	KEXPECT_TRUE(t, strstr(blk, "\nTHPeligible:           1\n") != NULL);
	thp_set_order_mode(4, THP_MADVISE);
	thp_set_global_mode(THP_NEVER);
	KASSERT_TRUE(t, smaps_block(mm, BASE, blk, 2048));
	KEXPECT_TRUE(t, strstr(blk, "\nTHPeligible:           0\n") != NULL);
	down_write(&mm->mmap_lock);
	KEXPECT_EQ(t, do_madvise(mm, BASE, NPAGES * PAGE_SIZE, MADV_HUGEPAGE), 0);
	up_write(&mm->mmap_lock);
	KASSERT_TRUE(t, smaps_block(mm, BASE, blk, 2048));
	KEXPECT_TRUE(t, strstr(blk, "\nTHPeligible:           1\n") != NULL);
	KEXPECT_TRUE(t, strstr(blk, "\nVmFlags: rd wr sd hg \n") != NULL);
	thp_set_order_mode(4, THP_NEVER);
	thp_set_global_mode(THP_MADVISE);
	KASSERT_TRUE(t, smaps_block(mm, BASE, blk, 2048));
	KEXPECT_TRUE(t, strstr(blk, "\nTHPeligible:           0\n") != NULL);
	thp_set_global_mode(saved);
	thp_set_order_mode(4, saved64k);
	/* A buffer too small is cut and says so (the caller grows it). */
	KEXPECT_EQ(t, smaps_show(mm, blk, 100), 99);
	KEXPECT_EQ(t, strlen(blk), 99);
	kfree(blk);
	mmput(mm);
}

/* After a fork copy both mms share the pages: not exclusive, Pss halved. */
static void shared_with_fork_copy(struct ktest *t)
{
	struct mm_struct *mm = mm_with_region(t, BASE, NPAGES * PAGE_SIZE, PROT_READ | PROT_WRITE);
	struct mm_struct *child;
	char *blk = kmalloc(2048, GFP_KERNEL);
	u64 pm[2];

	KASSERT_TRUE(t, mm != NULL && blk != NULL);
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE, FAULT_FLAG_WRITE), 0);
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE + PAGE_SIZE, FAULT_FLAG_WRITE), 0);
	child = dup_mm(mm);
	KASSERT_TRUE(t, child != NULL);
	KASSERT_EQ(t, pagemap_read(child, pm, sizeof(pm), (BASE >> PAGE_SHIFT) * 8), 16);
	KEXPECT_TRUE(t, pm[0] & PM_PRESENT);
	KEXPECT_FALSE(t, pm[0] & PM_MMAP_EXCLUSIVE);
	KEXPECT_EQ(t, pm[0] & PM_PFRAME_MASK, pfn_mapped(mm, BASE));
	KASSERT_TRUE(t, smaps_block(child, BASE, blk, 2048));
	KEXPECT_EQ(t, smaps_kb(blk, "Rss:"), 8);
	KEXPECT_EQ(t, smaps_kb(blk, "Pss:"), 4);
	KEXPECT_EQ(t, smaps_kb(blk, "Private_Clean:") + smaps_kb(blk, "Private_Dirty:"), 0);
	KEXPECT_EQ(t, smaps_kb(blk, "Shared_Clean:") + smaps_kb(blk, "Shared_Dirty:"), 8);
	/* The parent writes page 0: its own copy, exclusive again in both. */
	KEXPECT_EQ(t, handle_mm_fault(mm, BASE + 8, FAULT_FLAG_WRITE), 0);
	KASSERT_EQ(t, pagemap_read(mm, pm, sizeof(pm), (BASE >> PAGE_SHIFT) * 8), 16);
	KEXPECT_TRUE(t, pm[0] & PM_MMAP_EXCLUSIVE);
	KEXPECT_FALSE(t, pm[1] & PM_MMAP_EXCLUSIVE);
	KASSERT_TRUE(t, smaps_block(mm, BASE, blk, 2048));
	KEXPECT_EQ(t, smaps_kb(blk, "Pss:"), 6);
	KEXPECT_EQ(t, smaps_kb(blk, "Private_Dirty:"), 4);
	mmput(child);
	KASSERT_EQ(t, pagemap_read(mm, pm, sizeof(pm), (BASE >> PAGE_SHIFT) * 8), 16);
	KEXPECT_TRUE(t, pm[1] & PM_MMAP_EXCLUSIVE);
	kfree(blk);
	mmput(mm);
}

static int vma_count(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	struct vm_area_struct *v;
	int n = 0;

	list_for_each_entry(v, &mm->vmas, vm_list)
		n += v->vm_start < end && v->vm_end > start;
	return n;
}

/*
 * Linux's VMA merging: mprotect, madvise and mmap join a VMA to compatible
 * neighbours (same flags, contiguous, anon_vmas the same or one NULL while
 * the neighbour has exactly one); the rmap still finds every folio.
 */
static void vmas_merge(struct ktest *t)
{
	const unsigned long len = NPAGES * PAGE_SIZE, end = BASE + len;
	struct mm_struct *mm = mm_with_region(t, BASE, len, PROT_READ | PROT_WRITE);
	struct mm_struct *child;

	KASSERT_TRUE(t, mm != NULL);
	for (unsigned long a = BASE; a < end; a += PAGE_SIZE)
		KEXPECT_EQ(t, handle_mm_fault(mm, a, FAULT_FLAG_WRITE), 0);
	down_write(&mm->mmap_lock);
	KEXPECT_EQ(t, do_mprotect(mm, BASE + 4 * PAGE_SIZE, 4 * PAGE_SIZE, PROT_READ), 0);
	KEXPECT_EQ(t, vma_count(mm, BASE, end), 3);
	KEXPECT_EQ(t, do_mprotect(mm, BASE + 4 * PAGE_SIZE, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE), 0);
	KEXPECT_EQ(t, vma_count(mm, BASE, end), 1);
	/* The same protection again changes nothing and splits nothing. */
	KEXPECT_EQ(t, do_mprotect(mm, BASE + PAGE_SIZE, PAGE_SIZE, PROT_READ | PROT_WRITE), 0);
	KEXPECT_EQ(t, vma_count(mm, BASE, end), 1);
	KEXPECT_EQ(t, do_madvise(mm, BASE, 2 * PAGE_SIZE, MADV_DONTFORK), 0);
	KEXPECT_EQ(t, vma_count(mm, BASE, end), 2);
	KEXPECT_EQ(t, do_madvise(mm, BASE, 2 * PAGE_SIZE, MADV_DOFORK), 0);
	KEXPECT_EQ(t, vma_count(mm, BASE, end), 1);
	/* A new mapping joins a neighbour linked to one anon_vma. */
	KEXPECT_EQ(t, do_mmap(mm, end, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0), (long)end);
	KEXPECT_EQ(t, vma_count(mm, BASE, end + len), 1);
	up_write(&mm->mmap_lock);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A fork child's VMA is linked to its parent's anon_vma too: a new neighbour stays apart. */
	child = dup_mm(mm);
	KASSERT_TRUE(t, child != NULL);
	down_write(&child->mmap_lock);
	KEXPECT_EQ(t, do_mmap(child, end + len, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0), (long)(end + len));
	KEXPECT_EQ(t, vma_count(child, BASE, end + 2 * len), 2);
	/* Split and joined again, it keeps every chain: the pages stay reachable. */
	KEXPECT_EQ(t, do_mprotect(child, BASE, 2 * PAGE_SIZE, PROT_READ), 0);
	KEXPECT_EQ(t, do_mprotect(child, BASE, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE), 0);
	KEXPECT_EQ(t, vma_count(child, BASE, end + len), 1);
	up_write(&child->mmap_lock);
	KEXPECT_EQ(t, handle_mm_fault(child, BASE, FAULT_FLAG_WRITE), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	mmput(child);
	mmput(mm);
}

/* A PMD-mapped THP: 512 entries of consecutive frames, AnonHugePages 2 MiB. */
static void pmd_mapped_thp(struct ktest *t)
{
	const unsigned long base = 0x40000000UL;
	enum thp_mode saved = thp_global_mode(), saved2m = thp_order_mode(HPAGE_PMD_ORDER);
	struct mm_struct *mm;
	char *blk = kmalloc(2048, GFP_KERNEL);
	u64 *pm = kmalloc(HPAGE_PMD_NR * 8, GFP_KERNEL);
	unsigned long before;
	pte_t *pmd;
	bool leaf;

	KASSERT_TRUE(t, blk != NULL && pm != NULL);
	thp_set_global_mode(THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
	mm = mm_with_region(t, base, PMD_SIZE, PROT_READ | PROT_WRITE);
	KASSERT_TRUE(t, mm != NULL);
	before = nr_anon_thps();
	KEXPECT_EQ(t, handle_mm_fault(mm, base + 12345, FAULT_FLAG_WRITE), 0);
	thp_set_global_mode(saved);
	thp_set_order_mode(HPAGE_PMD_ORDER, saved2m);
	pmd = pmd_lookup(mm->pgd, base, false);
	leaf = pmd && pmd_leaf(*pmd);
	if (leaf) {
		unsigned long pfn = pmd_pfn(*pmd);

		KEXPECT_EQ(t, pagemap_read(mm, pm, HPAGE_PMD_NR * 8, (base >> PAGE_SHIFT) * 8),
			   HPAGE_PMD_NR * 8);
		KEXPECT_EQ(t, pfn % HPAGE_PMD_NR, 0);
		for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
			if (pm[i] != (PM_PRESENT | PM_SOFT_DIRTY | PM_MMAP_EXCLUSIVE | (pfn + i))) {
				KEXPECT_EQ(t, pm[i],
					   PM_PRESENT | PM_SOFT_DIRTY | PM_MMAP_EXCLUSIVE | (pfn + i));
				break;
			}
		KASSERT_TRUE(t, smaps_block(mm, base, blk, 2048));
		KEXPECT_EQ(t, smaps_kb(blk, "Rss:"), 2048);
		KEXPECT_EQ(t, smaps_kb(blk, "Pss:"), 2048);
		KEXPECT_EQ(t, smaps_kb(blk, "Anonymous:"), 2048);
		KEXPECT_EQ(t, smaps_kb(blk, "AnonHugePages:"), 2048);
		/* nr_anon_transparent_hugepages counts PMD mappings: a split ends it. */
		KEXPECT_EQ(t, nr_anon_thps(), before + 1);
		down_write(&mm->mmap_lock);
		KEXPECT_EQ(t, do_madvise(mm, base, PAGE_SIZE, MADV_DONTNEED), 0);
		up_write(&mm->mmap_lock);
		KEXPECT_EQ(t, nr_anon_thps(), before);
		KEXPECT_FALSE(t, pmd_leaf(*pmd));
	}
	kfree(pm);
	kfree(blk);
	mmput(mm);
	if (!leaf)
		ktest_skip(t, "the fault did not map a PMD-sized folio");
}

/*
 * /sys/devices/system: each node list and per-node file against the node
 * model, written out here independently (and the refusals of a read-only
 * sysfs file).
 */
static void sys_devices_system_node(struct ktest *t)
{
	char buf[256], want[256], path[96];
	size_t len = 0;
	int online = 0, last = -1;

	for (int n = 0; n < MAX_NUMNODES; n++)
		if (node_online(n)) {
			online++;
			last = n;
		}
	/* Quire's nodes are numbered 0..last without gaps. */
	snprintf(want, sizeof(want), last ? "0-%d\n" : "0\n", last);
	KEXPECT_EQ(t, read_file("/sys/devices/system/node/online", buf, sizeof(buf)), (long)strlen(want));
	KEXPECT_STREQ(t, buf, want);
	KEXPECT_EQ(t, read_file("/sys/devices/system/node/possible", buf, sizeof(buf)), (long)strlen(want));
	KEXPECT_STREQ(t, buf, want);
	KEXPECT_EQ(t, online, last + 1);
	KEXPECT_GT(t, read_file("/sys/devices/system/node/has_cpu", buf, sizeof(buf)), 0);
	KEXPECT_GT(t, read_file("/sys/devices/system/cpu/online", buf, sizeof(buf)), 0);
	{
		int up = 0;

		for (int c = 0; c < MAX_CPUS; c++)
			up += cpu_online(c);
		snprintf(want, sizeof(want), nr_cpu_ids > 1 ? "0-%d\n" : "0\n", nr_cpu_ids - 1);
		if (up == nr_cpu_ids)	/* not with maxcpus= */
			KEXPECT_STREQ(t, buf, want);
	}
	if (nr_cpu_ids <= 32) {
		snprintf(want, sizeof(want), "%0*llx\n", (nr_cpu_ids + 3) / 4,
			 (unsigned long long)numa_nodes[0].cpus);
		KEXPECT_GT(t, read_file("/sys/devices/system/node/node0/cpumap", buf, sizeof(buf)), 0);
		KEXPECT_STREQ(t, buf, want);
	}
	for (int n = 0; n <= last; n++) {
		len = 0;
		for (int m = 0; m <= last; m++)
			len += scnprintf(want + len, sizeof(want) - len, "%s%d", m ? " " : "",
					 node_distance(n, m));
		scnprintf(want + len, sizeof(want) - len, "\n");
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", n);
		KEXPECT_GT(t, read_file(path, buf, sizeof(buf)), 0);
		KEXPECT_STREQ(t, buf, want);
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", n);
		KEXPECT_GT(t, read_file(path, buf, sizeof(buf)), 0);
		snprintf(want, sizeof(want), "Node %d MemTotal:       %8lu kB\n", n,
			 (node_page_state(n, NR_PRESENT_PAGES) - node_page_state(n, NR_RESERVED_PAGES)) * 4);
		KEXPECT_TRUE(t, strncmp(buf, want, strlen(want)) == 0);
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		KEXPECT_GE(t, read_file(path, buf, sizeof(buf)), 1);
		if (!numa_nodes[n].cpus)
			KEXPECT_STREQ(t, buf, "\n");
		KEXPECT_EQ(t, write_file(path, "0"), -EACCES);
	}
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", last + 1);
	KEXPECT_EQ(t, read_file(path, buf, sizeof(buf)), -ENOENT);
}

/*
 * /proc/quire/mm_verify: "0\n" on a consistent system, the count of problems
 * when an invariant is broken (the frame below belongs to no state), and 0
 * again once it is mended; read-only.
 */
static void quire_mm_verify_file(struct ktest *t)
{
	struct page *p = alloc_pages(GFP_KERNEL, 0);
	char buf[32];
	long long problems = 0;

	KASSERT_TRUE(t, p != NULL);
	KEXPECT_EQ(t, read_file("/proc/quire/mm_verify", buf, sizeof(buf)), 2);
	KEXPECT_STREQ(t, buf, "0\n");
	atomic_set(&p->_refcount, 0);
	KEXPECT_GT(t, read_file("/proc/quire/mm_verify", buf, sizeof(buf)), 0);
	atomic_set(&p->_refcount, 1);
	KEXPECT_EQ(t, buf[strlen(buf) - 1], '\n');
	buf[strlen(buf) - 1] = '\0';
	KEXPECT_EQ(t, kstrtoll(buf, 10, &problems), 0);	/* only digits before it */
	KEXPECT_GE(t, problems, 1);
	__free_pages(p, 0);
	KEXPECT_EQ(t, read_file("/proc/quire/mm_verify", buf, sizeof(buf)), 2);
	KEXPECT_STREQ(t, buf, "0\n");
	KEXPECT_EQ(t, open_err("/proc/quire/mm_verify", O_WRONLY), -EACCES);
	KEXPECT_EQ(t, vfs_unlink(NULL, "/proc/quire/mm_verify"), -EPERM);
}

KTEST_SUITE(procfs,
	    KTEST_CASE(thp_enabled_default_write_refuse),
	    KTEST_CASE(thp_size_enabled_defaults_and_writes),
	    KTEST_CASE(thp_stats_are_numbers),
	    KTEST_CASE(proc_vmstat_lines),
	    KTEST_CASE(sys_and_proc_listings),
	    KTEST_CASE(refusals_and_lookups),
	    KTEST_CASE(open_read_close_keeps_nothing),
	    KTEST_CASE(tmpfs_mount_keeps_nothing),
	    KTEST_CASE(pagemap_anon_pages),
	    KTEST_CASE(smaps_anon_region),
	    KTEST_CASE(shared_with_fork_copy),
	    KTEST_CASE(vmas_merge),
	    KTEST_CASE(pmd_mapped_thp),
	    KTEST_CASE(sys_devices_system_node),
	    KTEST_CASE(quire_mm_verify_file));
