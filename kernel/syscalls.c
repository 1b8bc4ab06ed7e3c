/*
 * The system-call table: Linux x86-64 numbers, arguments in rdi, rsi, rdx,
 * r10, r8, r9, the result (or -errno) in rax. docs/syscalls.md lists each
 * call and its status. A number without an entry returns -ENOSYS and is
 * logged once.
 * The file calls are in kernel/fs_syscalls.c, fork/wait4/kill in kernel/fork.c,
 * futex and the robust-list calls in kernel/futex.c.
 */
#define pr_fmt(fmt) "syscall: " fmt
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/syscalls.h>
#include <quire/random.h>
#include <quire/fs.h>
#include <quire/fdtable.h>
#include <quire/mmap.h>
#include <quire/uaccess.h>
#include <quire/console.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/time.h>
#include <quire/smp.h>
#include <quire/power.h>
#include <quire/mempolicy.h>
#include <quire/migrate.h>
#include <quire/mmzone.h>
#include <quire/numa.h>
#include <quire/sched.h>
#include <quire/uapi/sysinfo.h>
#include <asm/ptrace.h>
#include <asm/cpu.h>

#define NR_SYSCALLS 463	/* Linux 6.12 x86-64 numbers 0-462 (mseal is 462): clone3 (435) is in range */

typedef long (*syscall_fn_t)(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5);

/* ---- memory ---- */

static long sys_brk(u64 brk, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct mm_struct *mm = current->mm;
	long ret;

	down_write(&mm->mmap_lock);
	ret = (long)do_brk(mm, brk);
	up_write(&mm->mmap_lock);
	return ret;
}

/* The flags Linux 6.12's MAP_SHARED_VALIDATE accepts (its LEGACY_MAP_MASK and the rest). */
#define MAP_KNOWN_FLAGS	(MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_GROWSDOWN |	\
			 MAP_DENYWRITE | MAP_EXECUTABLE | MAP_LOCKED | MAP_NORESERVE |		\
			 MAP_POPULATE | MAP_NONBLOCK | MAP_STACK | MAP_HUGETLB | MAP_SYNC |	\
			 MAP_FIXED_NOREPLACE | (0x3fUL << MAP_HUGE_SHIFT))

/*
 * mmap's flags that do more than place the mapping: MAP_SHARED_VALIDATE
 * (unknown flags -EOPNOTSUPP; MAP_SYNC too: no file here is DAX), and
 * MAP_HUGETLB, which needs a hugetlb pool Quire does not have: -ENOMEM, as
 * Linux answers when the pool is empty (its default), logged once.
 */
static long mmap_check_flags(u64 *flags)
{
	static bool hugetlb_reported;

	if ((*flags & MAP_SHARED_VALIDATE) == MAP_SHARED_VALIDATE) {
		if ((*flags & ~(u64)MAP_KNOWN_FLAGS) || (*flags & MAP_SYNC))
			return -EOPNOTSUPP;
		*flags &= ~(u64)MAP_PRIVATE;	/* MAP_SHARED from here on */
	}
	if (*flags & MAP_HUGETLB) {
		if (!__atomic_exchange_n(&hugetlb_reported, true, __ATOMIC_RELAXED))
			pr_warn("pid %d (%s): mmap MAP_HUGETLB: there are no hugetlb pages "
				"(not implemented; -ENOMEM as with an empty pool)\n",
				current->tgid, current->comm);
		return -ENOMEM;
	}
	return 0;
}

static long sys_mmap(u64 addr, u64 len, u64 prot, u64 flags, u64 fd, u64 off)
{
	struct mm_struct *mm = current->mm;
	struct file *file = NULL;
	bool prefault = false;
	long ret;

	if (prot & ~(u64)(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	if (off & (PAGE_SIZE - 1))
		return -EINVAL;
	ret = mmap_check_flags(&flags);
	if (ret)
		return ret;
	if (flags & MAP_ANONYMOUS) {
		if ((flags & MAP_SHARED) && len) {
			/* Shared anonymous memory is an unnamed RAM file, as on Linux (shmem). */
			ret = shmem_file_setup(len, &file);
			if (ret)
				return ret;
		}
		off = 0;
	} else {
		struct file *f = fget(current->files, (int)fd);

		if (!f)
			return -EBADF;
		ret = mmap_file_prepare(f, len, prot, flags, &file);
		if (file != f)
			off = 0;	/* a device's stand-in (/dev/zero) is mapped from its start */
		prefault = f->f_op && f->f_op->mmap_prefault;
		fput(f);
		if (ret)
			return ret;
	}
	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, len, prot, flags, file, off >> PAGE_SHIFT);
	up_write(&mm->mmap_lock);
	if (file)
		fput(file);	/* the VMA holds its own reference */
	/*
	 * MAP_POPULATE (and MAP_LOCKED: with no swap a page, once there, stays)
	 * faults the range in, as Linux's mm_populate: writing for a private
	 * writable mapping (COW broken now), reading otherwise; failures are
	 * not reported, the mapping stands.
	 */
	if (ret >= 0 && (flags & (MAP_POPULATE | MAP_LOCKED)) && !(flags & MAP_NONBLOCK) &&
	    (prot & (PROT_READ | PROT_WRITE | PROT_EXEC)))
		madvise_populate(mm, (u64)ret, len,
				 (prot & PROT_WRITE) && !(flags & MAP_SHARED));
	else if (ret >= 0 && prefault && (prot & PROT_READ))
		madvise_populate(mm, (u64)ret, len, false);
	return ret;
}

static long sys_mprotect(u64 addr, u64 len, u64 prot, u64 a3, u64 a4, u64 a5)
{
	struct mm_struct *mm = current->mm;
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_mprotect(mm, addr, len, prot);
	up_write(&mm->mmap_lock);
	return ret;
}

static long sys_madvise(u64 addr, u64 len, u64 advice, u64 a3, u64 a4, u64 a5)
{
	struct mm_struct *mm = current->mm;
	int ret;

	/* Populating faults pages in, and a fault takes mmap_lock itself. */
	if (advice == MADV_POPULATE_READ || advice == MADV_POPULATE_WRITE)
		return madvise_populate(mm, addr, len, advice == MADV_POPULATE_WRITE);
	if (advice == MADV_HWPOISON || advice == MADV_SOFT_OFFLINE)
		return madvise_inject_error(mm, addr, len, (int)advice);
	down_write(&mm->mmap_lock);
	ret = do_madvise(mm, addr, len, (int)advice);
	up_write(&mm->mmap_lock);
	return ret;
}

static long sys_munmap(u64 addr, u64 len, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct mm_struct *mm = current->mm;
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_munmap(mm, addr, len);
	up_write(&mm->mmap_lock);
	return ret;
}

/* ---- the process ---- */

/* exit ends the calling thread; exit_group (what libc's exit calls) the process. */
static long sys_exit(u64 code, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	do_exit(W_EXITCODE((int)code, 0));
}

static long sys_exit_group(u64 code, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	do_group_exit(W_EXITCODE((int)code, 0));
}

static long sys_getpid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return current->tgid;
}

static long sys_gettid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return current->tid;
}

static long sys_getppid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *p = current->group_leader->parent;

	return p ? p->tgid : 0;	/* 0: started by the kernel, or orphaned */
}

/* getuid, geteuid, getgid, getegid: every process runs as root. */
static long sys_getuid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return 0;
}

/*
 * getgroups (115): no process has supplementary groups (everyone is root,
 * group 0): 0, whatever the size but a negative one (EINVAL, as Linux).
 * setgroups (116): an empty list is accepted; a list of groups is not
 * kept (-ENOSYS, logged).
 */
static long sys_getgroups(u64 size, u64 ulist, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return (int)size < 0 ? -EINVAL : 0;
}

static long sys_setgroups(u64 size, u64 ulist, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if ((int)size < 0 || (int)size > 65536)	/* NGROUPS_MAX */
		return -EINVAL;
	if (!size)
		return 0;
	pr_warn("pid %d (%s): setgroups with %d groups is not implemented (-ENOSYS)\n",
		current->tgid, current->comm, (int)size);
	return -ENOSYS;
}

static long sys_set_tid_address(u64 uptr, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	current->clear_child_tid = (int *)uptr;
	return current->tid;
}

#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

static long sys_arch_prctl(u64 code, u64 addr, u64 a2, u64 a3, u64 a4, u64 a5)
{
	switch (code) {
	case ARCH_SET_FS:
		if (addr >= USER_TOP)
			return -EPERM;
		current->fs_base = addr;
		wrmsr(MSR_FS_BASE, addr);
		return 0;
	case ARCH_GET_FS:
		return copy_to_user((void *)addr, &current->fs_base, sizeof(u64)) ? -EFAULT : 0;
	default:
		return -EINVAL;
	}
}

static long sys_sched_yield(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	yield();
	return 0;
}

static long sys_getcpu(u64 ucpu, u64 unode, u64 a2, u64 a3, u64 a4, u64 a5)
{
	unsigned int cpu, node;

	preempt_disable();
	cpu = (unsigned int)smp_processor_id();
	node = (unsigned int)this_cpu()->node;
	preempt_enable();
	if (ucpu && copy_to_user((void *)ucpu, &cpu, sizeof(cpu)))
		return -EFAULT;
	if (unode && copy_to_user((void *)unode, &node, sizeof(node)))
		return -EFAULT;
	return 0;
}

/*
 * sysinfo(2): memory in bytes (mem_unit 1, as Linux gives it on 64-bit),
 * uptime rounded up to a second, every task in procs (kernel threads
 * too, as Linux counts nr_threads), the load averages (kernel/loadavg.c)
 * scaled by 1 << SI_LOAD_SHIFT. No swap, no highmem; sharedram and
 * bufferram 0: no shmem, no buffer cache.
 */
static long sys_sysinfo(u64 uinfo, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct sysinfo si = { .mem_unit = 1 };
	u64 ns = ktime_get_ns();
	long tasks = sched_nr_tasks();
	unsigned long loads[3];
	int nid;

	_Static_assert(sizeof(struct sysinfo) == 112, "Linux's x86-64 struct sysinfo");
	for_each_online_node(nid) {
		si.totalram += (node_page_state(nid, NR_PRESENT_PAGES) -
				node_page_state(nid, NR_RESERVED_PAGES)) * PAGE_SIZE;
		si.freeram += node_page_state(nid, NR_FREE_PAGES) * PAGE_SIZE;
	}
	si.uptime = (long)((ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC);
	get_avenrun(loads);
	for (int i = 0; i < 3; i++)
		si.loads[i] = loads[i] << (SI_LOAD_SHIFT - FSHIFT);
	si.procs = (u16)min(tasks, 65535L);
	return copy_to_user((void *)uinfo, &si, sizeof(si)) ? -EFAULT : 0;
}

static long sys_getrandom(u64 ubuf, u64 len, u64 flags, u64 a3, u64 a4, u64 a5)
{
	u64 done = 0;

	if (flags & ~7ULL)
		return -EINVAL;
	/* Not cryptographic (drivers/random.c; docs/syscalls.md). */
	while (done < len) {
		u64 v = get_random_u64();
		u64 n = min(len - done, (u64)8);

		if (copy_to_user((void *)(ubuf + done), &v, n))
			return done ? (long)done : -EFAULT;
		done += n;
	}
	return (long)done;
}

#define LINUX_REBOOT_MAGIC1	0xfee1dead
#define LINUX_REBOOT_CMD_POWER_OFF 0x4321fedc

static long sys_reboot(u64 magic1, u64 magic2, u64 cmd, u64 arg, u64 a4, u64 a5)
{
	if ((u32)magic1 != LINUX_REBOOT_MAGIC1)
		return -EINVAL;
	if ((u32)cmd != LINUX_REBOOT_CMD_POWER_OFF)
		return -EINVAL;
	/*
	 * Quire's extension: the fourth argument, when it is a status from 0
	 * to 255, becomes the guest's exit status (init passes its child's,
	 * 128 + the signal for one that was killed), so a script learns how
	 * the program ended. Linux ignores it for POWER_OFF, and libc's
	 * reboot() leaves garbage there: a value above 255 is no status, and
	 * powers off with 0, as Linux would.
	 */
	if (arg > QUIRE_EXIT_STATUS_MAX) {
		pr_info("power off requested by pid %d without a status (argument %#llx)\n",
			current->tid, (unsigned long long)arg);
		arg = 0;
	}
	pr_info("power off requested by pid %d (status %llu)\n", current->tid,
		(unsigned long long)arg);
	machine_power_off((int)arg);
}

/* Affinity of the caller (pid 0 or its own pid): Linux's byte masks. */
static long sys_sched_setaffinity(u64 pid, u64 len, u64 umask, u64 a3, u64 a4, u64 a5)
{
	u64 mask = 0;

	if (pid && pid != (u64)current->tid)
		return -ESRCH;
	if (len < sizeof(mask))
		return -EINVAL;
	if (copy_from_user(&mask, (void *)umask, sizeof(mask)))
		return -EFAULT;
	return set_cpus_allowed(current, mask);
}

static long sys_sched_getaffinity(u64 pid, u64 len, u64 umask, u64 a3, u64 a4, u64 a5)
{
	u64 mask;

	if (pid && pid != (u64)current->tid)
		return -ESRCH;
	if (len < sizeof(mask) || (len & 7))
		return -EINVAL;
	mask = current->cpus_allowed & cpu_online_mask();
	if (copy_to_user((void *)umask, &mask, sizeof(mask)))
		return -EFAULT;
	return sizeof(mask);	/* Linux returns the bytes written */
}

static const syscall_fn_t syscall_table[NR_SYSCALLS] = {
	[0] = sys_read,
	[1] = sys_write,
	[2] = sys_open,
	[3] = sys_close,
	[4] = sys_stat,
	[5] = sys_fstat,
	[6] = sys_lstat,
	[8] = sys_lseek,
	[9] = sys_mmap,
	[10] = sys_mprotect,
	[11] = sys_munmap,
	[12] = sys_brk,
	[13] = sys_rt_sigaction,
	[14] = sys_rt_sigprocmask,
	[15] = sys_rt_sigreturn,
	[34] = sys_pause,
	[127] = sys_rt_sigpending,
	[130] = sys_rt_sigsuspend,
	[131] = sys_sigaltstack,
	[137] = sys_statfs,
	[138] = sys_fstatfs,
	[200] = sys_tkill,
	[202] = sys_futex,
	[234] = sys_tgkill,
	[16] = sys_ioctl,
	[17] = sys_pread64,
	[18] = sys_pwrite64,
	[19] = sys_readv,
	[20] = sys_writev,
	[21] = sys_access,
	[22] = sys_pipe,
	[24] = sys_sched_yield,
	[25] = sys_mremap,
	[26] = sys_msync,
	[27] = sys_mincore,
	[28] = sys_madvise,
	[35] = sys_nanosleep,
	[36] = sys_getitimer,
	[37] = sys_alarm,
	[38] = sys_setitimer,
	[32] = sys_dup,
	[33] = sys_dup2,
	[39] = sys_getpid,
	[56] = sys_clone,
	[57] = sys_fork,
	[58] = sys_fork,		/* vfork: a full copy is a correct vfork */
	[59] = sys_execve,
	[61] = sys_wait4,
	[62] = sys_kill,
	[60] = sys_exit,
	[63] = sys_uname,
	[170] = sys_sethostname,
	[171] = sys_setdomainname,
	[99] = sys_sysinfo,
	[97] = sys_getrlimit,
	[102] = sys_getuid,
	[104] = sys_getuid,		/* getgid */
	[107] = sys_getuid,		/* geteuid */
	[108] = sys_getuid,		/* getegid */
	[115] = sys_getgroups,
	[116] = sys_setgroups,
	[280] = sys_utimensat,
	[90] = sys_chmod,
	[91] = sys_fchmod,
	[268] = sys_fchmodat,
	[72] = sys_fcntl,
	[74] = sys_fsync,
	[95] = sys_umask,
	[128] = sys_rt_sigtimedwait,
	[129] = sys_rt_sigqueueinfo,
	[76] = sys_truncate,
	[77] = sys_ftruncate,
	[75] = sys_fdatasync,
	[80] = sys_chdir,
	[83] = sys_mkdir,
	[84] = sys_rmdir,
	[87] = sys_unlink,
	[110] = sys_getppid,
	[157] = sys_prctl,
	[158] = sys_arch_prctl,
	[162] = sys_sync,
	[169] = sys_reboot,
	[186] = sys_gettid,
	[217] = sys_getdents64,
	[218] = sys_set_tid_address,
	[228] = sys_clock_gettime,
	[230] = sys_clock_nanosleep,
	[231] = sys_exit_group,
	[247] = sys_waitid,
	[257] = sys_openat,
	[262] = sys_newfstatat,
	[269] = sys_faccessat,
	[285] = sys_fallocate,
	[292] = sys_dup3,
	[293] = sys_pipe2,
	[295] = sys_preadv,
	[296] = sys_pwritev,
	[297] = sys_rt_tgsigqueueinfo,
	[306] = sys_syncfs,
	[327] = sys_preadv2,
	[328] = sys_pwritev2,
	[203] = sys_sched_setaffinity,
	[204] = sys_sched_getaffinity,
	[273] = sys_set_robust_list,
	[274] = sys_get_robust_list,
	[302] = sys_prlimit64,
	[237] = sys_mbind,
	[238] = sys_set_mempolicy,
	[239] = sys_get_mempolicy,
	[256] = sys_migrate_pages,
	[278] = sys_vmsplice,
	[279] = sys_move_pages,
	[310] = sys_process_vm_readv,
	[311] = sys_process_vm_writev,
	[450] = sys_set_mempolicy_home_node,
	[309] = sys_getcpu,
	[319] = sys_memfd_create,
	[318] = sys_getrandom,
	/* kernel/time.c, kernel/cputime.c */
	[96] = sys_gettimeofday,
	[98] = sys_getrusage,
	[100] = sys_times,
	[201] = sys_time,
	[227] = sys_clock_settime,
	[229] = sys_clock_getres,
	/* kernel/fs_syscalls.c: where am I */
	[79] = sys_getcwd,
	[81] = sys_fchdir,
	[89] = sys_readlink,
	[267] = sys_readlinkat,
	[88] = sys_symlink,
	[266] = sys_symlinkat,
	[160] = sys_setrlimit,
	/* Process groups, sessions, job control (kernel/pgrp.c, kernel/signal.c). */
	[109] = sys_setpgid,
	[111] = sys_getpgrp,
	[112] = sys_setsid,
	[121] = sys_getpgid,
	[124] = sys_getsid,
	[219] = sys_restart_syscall,
	/* mounts (kernel/fs_syscalls.c, fs/mount.c) */
	[165] = sys_mount,
	[166] = sys_umount2,
	/* fs/select.c */
	[7] = sys_poll,
	[23] = sys_select,
	[270] = sys_pselect6,
	[271] = sys_ppoll,
};

static u8 reported[NR_SYSCALLS];

void do_syscall(struct pt_regs *regs);

void do_syscall(struct pt_regs *regs)
{
	u64 nr = regs->vector;
	syscall_fn_t fn = nr < NR_SYSCALLS ? syscall_table[nr] : NULL;

	if (!fn) {
		if (nr >= NR_SYSCALLS || !__atomic_exchange_n(&reported[nr], 1, __ATOMIC_RELAXED))
			pr_warn("pid %d (%s): system call %llu is not implemented (-ENOSYS)\n",
				current->tid, current->comm, (unsigned long long)nr);
		regs->rax = (u64)-ENOSYS;
		exit_to_user_mode(regs, true);
		return;
	}
	current->user_regs = regs;
	regs->rax = (u64)fn(regs->rdi, regs->rsi, regs->rdx, regs->r10, regs->r8, regs->r9);
	exit_to_user_mode(regs, true);
}
