/*
 * /proc: a pseudofs tree (include/quire/pseudofs.h) mounted at boot.
 *
 *   /proc/vmstat          memory counters and THP events (vmstat_show, mm/thp_settings.c)
 *   /proc/meminfo         the memory counters Quire keeps, Linux's format (mm/vmstat.c)
 *   /proc/self/status     the reader's process: ids, memory, signals (fs/proc_status.c)
 *   /proc/self/pagemap    the caller's page tables, 8 bytes a page (mm/task_mmu.c)
 *   /proc/self/mem        the caller's memory at the file position (FOLL_FORCE GUP)
 *   /proc/self/clear_refs write 1-4: clear accessed or soft-dirty bits (mm/clear_refs.c)
 *   /proc/self/smaps      the caller's VMAs and what they map (mm/task_mmu.c)
 *   /proc/self/maps       the caller's VMAs, one line each (the smaps header lines)
 *   /proc/self/exe        a symlink to the caller's program (its path at execve)
 *   /proc/mounts, /proc/self/mounts   the mount table (fs/mount.c)
 *   /proc/kpageflags      8 bytes of KPF_* flags per page frame (mm/task_mmu.c)
 *   /proc/sys/vm/drop_caches   accepts 1-4; nothing is reclaimable
 *   /proc/sys/vm/memory_failure_early_kill   0 or 1 (mm/memory-failure.c)
 *   /proc/self/{stat,statm,cmdline,comm}   Linux's formats (fs/proc_pid.c)
 *   /proc/<pid>           every process: self's files about that pid (fs/proc_pid.c)
 *   /proc/loadavg, uptime, stat, cpuinfo   system-wide, Linux's formats (fs/proc_sys.c)
 *   /proc/quire/mm_verify Quire's own, no Linux file: reading it runs
 *                         mm_verify_system() and returns the problems found
 *
 * /proc/self is a directory here, not Linux's symlink to /proc/<pid>:
 * its files act on the address space of whoever opens them; the same
 * files in /proc/<pid> act on that process's. The open takes a reference on that mm, as
 * Linux does, so a file handed to another process (fork) keeps showing the
 * opener's; a kernel thread (no mm) reads them as empty.
 */
#define pr_fmt(fmt) "procfs: " fmt
#include <quire/pseudofs.h>
#include <quire/huge_mm.h>
#include <quire/task_mmu.h>
#include <quire/mmap.h>
#include <quire/sched.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/mm.h>
#include <quire/gup.h>
#include <quire/string.h>
#include <quire/memory-failure.h>
#include <quire/pid.h>
#include <quire/slab.h>
#include <quire/mempolicy.h>
#include "internal.h"

struct pseudo_node *proc_root;

static int proc_get_tree(const char *options, struct super_block **out)
{
	return pseudo_get_tree(proc_root, options, out);
}

const struct file_system_type proc_fs_type = { .name = "proc", .get_tree = proc_get_tree };

/* /proc/mounts and /proc/self/mounts (Linux's is a link to the latter): the mount table. */
static ssize_t mounts_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return mounts_show(buf, size);
}

static const struct pseudo_ops mounts_ops = { .show = mounts_file_show };

static ssize_t vmstat_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return vmstat_show(buf, size);
}

static const struct pseudo_ops vmstat_ops = { .show = vmstat_file_show };

static ssize_t meminfo_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return meminfo_proc_show(buf, size);
}

static const struct pseudo_ops meminfo_ops = { .show = meminfo_file_show };

/*
 * /proc/quire/mm_verify: the count of problems, "0\n" when consistent (the
 * problems themselves go to the kernel log). Each read at position 0 runs a
 * new check.
 */
static ssize_t mm_verify_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return scnprintf(buf, size, "%d\n", mm_verify_system());
}

static const struct pseudo_ops mm_verify_ops = { .show = mm_verify_file_show };

/* /proc/kpageflags: 8 bytes of flags per page frame (mm/task_mmu.c). */
static ssize_t kpageflags_file_read(struct pseudo_file *pf, void *buf, size_t count, loff_t pos)
{
	return kpageflags_read(buf, count, pos);
}

static const struct pseudo_ops kpageflags_ops = { .read = kpageflags_file_read };

/*
 * /proc/sys/vm/drop_caches: Linux's 1 (the clean page cache), 2 (reclaimable
 * slab objects), 3 (both) or 4 (quiet). Quire has neither to drop: every
 * page-cache folio is a RAM file's only copy (dirty for good, as tmpfs's are
 * on Linux) and no slab cache can be shrunk. Anything else is EINVAL.
 */
static int drop_caches_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	size_t n = strnlen(buf, len);

	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (n != 1 || buf[0] < '1' || buf[0] > '4')
		return -EINVAL;
	pr_info("drop_caches: %c: nothing to drop (RAM files and the slab are not reclaimable)\n",
		buf[0]);
	return 0;
}

static const struct pseudo_ops drop_caches_ops = { .store = drop_caches_store };

/*
 * /proc/sys/vm/memory_failure_early_kill: 0 (late kill, the default) or 1:
 * what threads that made no prctl(PR_MCE_KILL) choice get when a page
 * they map is poisoned (include/quire/memory-failure.h). Else EINVAL.
 */
static ssize_t early_kill_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return scnprintf(buf, size, "%d\n", READ_ONCE(sysctl_memory_failure_early_kill));
}

static int early_kill_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	char val[24];
	size_t n = strnlen(buf, len);
	long long v;

	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (!n || n >= sizeof(val))
		return -EINVAL;
	memcpy(val, buf, n);
	val[n] = '\0';
	if (kstrtoll(val, 10, &v) || v < 0 || v > 1)
		return -EINVAL;
	WRITE_ONCE(sysctl_memory_failure_early_kill, (int)v);
	return 0;
}

static const struct pseudo_ops early_kill_ops = { .show = early_kill_show, .store = early_kill_store };

/* ---- /proc/self: the opener's mm ---- */

/*
 * The mm of the file's process (/proc/<pid>: that pid; /proc/self: the
 * opener), with a reference that self_release drops. A process that has
 * gone: ENOENT; a zombie: none (the files read empty, as on Linux).
 */
static int self_open(struct pseudo_file *pf)
{
	struct mm_struct *mm = NULL;		/* (no task in a host test) */
	int err = current ? get_process_mm(proc_pid_of(pf), &mm) : 0;

	if (err == -ESRCH)
		return -ENOENT;
	pf->private = err ? NULL : mm;
	return 0;
}

static void self_release(struct pseudo_file *pf)
{
	if (pf->private)
		mmput(pf->private);
}

static ssize_t pagemap_file_read(struct pseudo_file *pf, void *buf, size_t count, loff_t pos)
{
	if (!pf->private)
		return 0;
	return pagemap_read(pf->private, buf, count, pos);
}

/*
 * /proc/self/clear_refs (write only): one of Linux's numbers 1-5 per write
 * (mm/clear_refs.c says what each resets). As Linux, only the first 12
 * bytes of a write are read, blanks around the number ignored, and the
 * count returned is of the bytes read.
 */
static ssize_t clear_refs_file_write(struct pseudo_file *pf, const void *buf, size_t count,
				     loff_t pos)
{
	char val[13] = "", *s = val, *e;
	long long type;
	int err;

	count = min(count, sizeof(val) - 1);
	memcpy(val, buf, count);
	for (e = val + strlen(val); e > s && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t'); e--)
		e[-1] = '\0';
	while (*s == ' ' || *s == '\n' || *s == '\t')
		s++;
	err = kstrtoll(s, 10, &type);
	if (!err && (type < -2147483648LL || type > 2147483647LL))
		err = -ERANGE;
	if (!err && (type < CLEAR_REFS_ALL || type >= CLEAR_REFS_LAST))
		err = -EINVAL;
	/* A zombie's (no mm): nothing to clear, the write succeeds (Linux's). */
	if (!err && pf->private)
		err = clear_refs(pf->private, (enum clear_refs_type)type);
	(void)pos;
	return err ? err : (ssize_t)count;
}

static const struct pseudo_ops clear_refs_ops = {
	.open = self_open, .release = self_release, .write = clear_refs_file_write,
};

/*
 * /proc/self/mem (and /proc/<own pid>/mem): the opener's memory at the
 * file position, read and written through GUP with FOLL_FORCE as Linux's
 * mem_rw does: a read-only private mapping can be written (the write
 * breaks copy-on-write and the page stays read-only to the process), a
 * shared read-only one cannot. A position where nothing can be had: EIO
 * (when nothing moved); an mm that has exited: 0.
 */
static ssize_t mem_rw(struct pseudo_file *pf, void *buf, size_t count, loff_t pos, bool write)
{
	struct mm_struct *mm = pf->private;
	ssize_t done = 0;

	if (!mm || !atomic_read(&mm->mm_users))
		return 0;
	if (pos < 0)
		return -EIO;
	while (count) {
		int n = (int)min(count, (size_t)PAGE_SIZE), got;

		got = access_remote_vm(mm, (unsigned long)pos + (unsigned long)done,
				       (u8 *)buf + done, n, FOLL_FORCE | (write ? FOLL_WRITE : 0));
		done += got;
		count -= (size_t)got;
		if (got < n)
			break;
	}
	return done ? done : -EIO;
}

static ssize_t mem_read(struct pseudo_file *pf, void *buf, size_t count, loff_t pos)
{
	return mem_rw(pf, buf, count, pos, false);
}

static ssize_t mem_write(struct pseudo_file *pf, const void *buf, size_t count, loff_t pos)
{
	return mem_rw(pf, (void *)buf, count, pos, true);
}

static const struct pseudo_ops mem_ops = {
	.open = self_open, .release = self_release, .read = mem_read, .write = mem_write,
};

/* A text file about the opener's mm (none in a host test: empty). */
static ssize_t self_mm_show(struct pseudo_file *pf, char *buf, size_t size,
			    ssize_t (*show)(struct mm_struct *mm, char *buf, size_t size))
{
	if (!pf->private) {
		buf[0] = '\0';
		return 0;
	}
	return show(pf->private, buf, size);
}

static ssize_t smaps_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return self_mm_show(pf, buf, size, smaps_show);
}

static ssize_t maps_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return self_mm_show(pf, buf, size, maps_show);
}

/*
 * numa_maps: the mm and, for VMAs without a policy, the task's policy as it
 * was at open (Linux shows the /proc/<pid> task's; /proc/self: the reader's).
 */
struct numa_maps_file {
	struct mm_struct *mm;
	struct mempolicy pol;
};

static int copy_policy(struct task *t, void *arg)
{
	*(struct mempolicy *)arg = t->mempolicy;
	return 0;
}

static int numa_maps_open(struct pseudo_file *pf)
{
	struct numa_maps_file *nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	int err;

	if (!nf)
		return -ENOMEM;
	err = self_open(pf);
	if (!err && current && with_process_by_pid(proc_pid_of(pf), copy_policy, &nf->pol))
		err = -ENOENT;
	if (err) {
		if (pf->private)
			mmput(pf->private);
		kfree(nf);
		return err;
	}
	nf->mm = pf->private;
	pf->private = nf;
	return 0;
}

static void numa_maps_release(struct pseudo_file *pf)
{
	struct numa_maps_file *nf = pf->private;

	if (nf->mm)
		mmput(nf->mm);
	kfree(nf);
}

static ssize_t numa_maps_file_show(struct pseudo_file *pf, char *buf, size_t size)
{
	struct numa_maps_file *nf = pf->private;

	if (!nf->mm) {
		buf[0] = '\0';
		return 0;
	}
	return numa_maps_show(nf->mm, &nf->pol, buf, size);
}

static const struct pseudo_ops numa_maps_ops = {
	.open = numa_maps_open, .release = numa_maps_release, .show = numa_maps_file_show,
};

static const struct pseudo_ops maps_ops = {
	.open = self_open, .release = self_release, .show = maps_file_show,
};

static const struct pseudo_ops pagemap_ops = {
	.open = self_open, .release = self_release, .read = pagemap_file_read,
};

static const struct pseudo_ops smaps_ops = {
	.open = self_open, .release = self_release, .show = smaps_file_show,
};

/*
 * The program of the link's process (data: its pid, 0 for the caller):
 * its absolute path, fixed at execve, copied out under process_lock into
 * a buffer that vfs_ns_mutex (held by every reader of a link) guards.
 */
static char exe_buf[4096];

static int exe_fill(struct task *t, void *arg)
{
	struct task *leader = t->group_leader ? t->group_leader : t;

	if (!leader->exe_path)
		return -ENOENT;
	strscpy(exe_buf, leader->exe_path, sizeof(exe_buf));
	return 0;
}

static const char *self_exe_target(void *data)
{
	if (!current || with_process_by_pid((int)(long)data, exe_fill, NULL))
		return NULL;
	return exe_buf;
}

/* The tree, in the order a listing shows it: a NULL ops makes the directory `dir`. */
enum { ROOT, SELF, QUIRE, SYS, VM, NR_DIRS };

static const struct {
	int parent;
	const char *name;
	umode_t mode;
	const struct pseudo_ops *ops;
	int dir;
} proc_entries[] = {
	{ .parent = ROOT, .name = "self", .dir = SELF },
	{ .parent = ROOT, .name = "vmstat", .mode = 0444, .ops = &vmstat_ops },
	{ .parent = SELF, .name = "pagemap", .mode = 0400, .ops = &pagemap_ops },
	{ .parent = SELF, .name = "mem", .mode = 0600, .ops = &mem_ops },
	{ .parent = SELF, .name = "clear_refs", .mode = 0200, .ops = &clear_refs_ops },
	{ .parent = SELF, .name = "smaps", .mode = 0444, .ops = &smaps_ops },
	{ .parent = ROOT, .name = "quire", .dir = QUIRE },
	{ .parent = QUIRE, .name = "mm_verify", .mode = 0444, .ops = &mm_verify_ops },
	{ .parent = SELF, .name = "maps", .mode = 0444, .ops = &maps_ops },
	{ .parent = SELF, .name = "numa_maps", .mode = 0444, .ops = &numa_maps_ops },
	{ .parent = ROOT, .name = "mounts", .mode = 0444, .ops = &mounts_ops },
	{ .parent = SELF, .name = "mounts", .mode = 0444, .ops = &mounts_ops },
	{ .parent = ROOT, .name = "meminfo", .mode = 0444, .ops = &meminfo_ops },
	{ .parent = SELF, .name = "status", .mode = 0444, .ops = &proc_status_ops },
	{ .parent = SELF, .name = "stat", .mode = 0444, .ops = &proc_stat_ops },
	{ .parent = SELF, .name = "statm", .mode = 0444, .ops = &proc_statm_ops },
	{ .parent = SELF, .name = "cmdline", .mode = 0444, .ops = &proc_cmdline_ops },
	{ .parent = SELF, .name = "comm", .mode = 0444, .ops = &proc_comm_ops },
	{ .parent = ROOT, .name = "kpageflags", .mode = 0400, .ops = &kpageflags_ops },
	{ .parent = ROOT, .name = "loadavg", .mode = 0444, .ops = &proc_loadavg_ops },
	{ .parent = ROOT, .name = "uptime", .mode = 0444, .ops = &proc_uptime_ops },
	{ .parent = ROOT, .name = "stat", .mode = 0444, .ops = &proc_stat_sys_ops },
	{ .parent = ROOT, .name = "cpuinfo", .mode = 0444, .ops = &proc_cpuinfo_ops },
	{ .parent = ROOT, .name = "sys", .dir = SYS },
	{ .parent = SYS, .name = "vm", .dir = VM },
	{ .parent = VM, .name = "drop_caches", .mode = 0200, .ops = &drop_caches_ops },
	{ .parent = VM, .name = "memory_failure_early_kill", .mode = 0644, .ops = &early_kill_ops },
};

int procfs_init(void)
{
	struct pseudo_node *dirs[NR_DIRS] = { NULL };
	int err = -ENOMEM;

	if (proc_root)
		return 0;
	proc_root = dirs[ROOT] = pseudo_new_root(&proc_fs_type);
	for (size_t i = 0; i < ARRAY_SIZE(proc_entries) && proc_root; i++) {
		struct pseudo_node *parent = dirs[proc_entries[i].parent];

		if (proc_entries[i].ops)
			err = pseudo_create(parent, proc_entries[i].name, proc_entries[i].mode,
					    proc_entries[i].ops, NULL);
		else
			err = (dirs[proc_entries[i].dir] = pseudo_mkdir(parent, proc_entries[i].name))
				? 0 : -ENOMEM;
		if (err)
			goto fail;
	}
	if (!proc_root)
		goto fail;
	err = pseudo_symlink(dirs[SELF], "exe", self_exe_target, NULL);
	if (err)
		goto fail;
	proc_pid_dirs_init(proc_root, dirs[SELF]);
	err = vfs_mount("/proc", pseudo_inode(proc_root));
	if (!err)
		return 0;
fail:
	pr_err("cannot build /proc: error %d\n", err);
	return err;
}
