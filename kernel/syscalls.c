/*
 * The system-call table: Linux x86-64 numbers, arguments in rdi, rsi, rdx,
 * r10, r8, r9, the result (or -errno) in rax. docs/syscalls.md lists each
 * call and its status. A number without an entry returns -ENOSYS and is
 * logged once.
 *
 * Files: until the VFS lands, descriptors 0, 1 and 2 are the console and
 * every other descriptor is -EBADF.
 */
#define pr_fmt(fmt) "syscall: " fmt
#include <quire/process.h>
#include <quire/mmap.h>
#include <quire/uaccess.h>
#include <quire/console.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/time.h>
#include <quire/smp.h>
#include <quire/power.h>
#include <asm/ptrace.h>
#include <asm/cpu.h>

#define NR_SYSCALLS 335

typedef long (*syscall_fn_t)(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5);

/* ---- console-backed descriptors ---- */

static long sys_write(u64 fd, u64 ubuf, u64 len, u64 a3, u64 a4, u64 a5)
{
	char chunk[256];
	u64 done = 0;

	if (fd != 1 && fd != 2)
		return fd == 0 ? -EBADF : -EBADF;
	if (!access_ok((void *)ubuf, len))
		return -EFAULT;
	while (done < len) {
		u64 n = min(len - done, (u64)sizeof(chunk));

		if (copy_from_user(chunk, (void *)(ubuf + done), n))
			return done ? (long)done : -EFAULT;
		console_write(chunk, n);
		done += n;
	}
	return (long)done;
}

static long sys_read(u64 fd, u64 ubuf, u64 len, u64 a3, u64 a4, u64 a5)
{
	char chunk[256];
	size_t n;

	if (fd != 0)
		return -EBADF;
	if (!access_ok((void *)ubuf, len))
		return -EFAULT;
	if (len == 0)
		return 0;
	n = console_read(chunk, min(len, (u64)sizeof(chunk)));
	if (copy_to_user((void *)ubuf, chunk, n))
		return -EFAULT;
	return (long)n;
}

struct iovec {
	u64 iov_base;
	u64 iov_len;
};

static long sys_writev(u64 fd, u64 uiov, u64 iovcnt, u64 a3, u64 a4, u64 a5)
{
	long total = 0;

	if (iovcnt > 1024)
		return -EINVAL;
	for (u64 i = 0; i < iovcnt; i++) {
		struct iovec iov;
		long n;

		if (copy_from_user(&iov, (void *)(uiov + i * sizeof(iov)), sizeof(iov)))
			return total ? total : -EFAULT;
		n = sys_write(fd, iov.iov_base, iov.iov_len, 0, 0, 0);
		if (n < 0)
			return total ? total : n;
		total += n;
	}
	return total;
}

#define TCGETS		0x5401
#define TIOCGWINSZ	0x5413

static long sys_ioctl(u64 fd, u64 cmd, u64 arg, u64 a3, u64 a4, u64 a5)
{
	if (fd > 2)
		return -EBADF;
	if (cmd == TIOCGWINSZ) {
		u16 ws[4] = { 24, 80, 0, 0 };	/* a serial console, as Linux reports it */

		return copy_to_user((void *)arg, ws, sizeof(ws)) ? -EFAULT : 0;
	}
	return -ENOTTY;
}

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

static long sys_mmap(u64 addr, u64 len, u64 prot, u64 flags, u64 fd, u64 off)
{
	struct mm_struct *mm = current->mm;
	long ret;

	if (prot & ~(u64)(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	if ((flags & MAP_ANONYMOUS) && off)
		return -EINVAL;
	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, len, prot, flags);
	up_write(&mm->mmap_lock);
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

static long sys_exit(u64 code, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	do_exit(W_EXITCODE((int)code, 0));
}

static long sys_getpid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return current->tid;
}

static long sys_getppid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *p = current->parent;

	return p ? p->tid : 0;	/* 0: started by the kernel, or orphaned */
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

struct kernel_timespec {
	s64 tv_sec;
	s64 tv_nsec;
};

static long sys_clock_gettime(u64 clock, u64 uts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns = ktime_get_ns();
	struct kernel_timespec ts = { (s64)(ns / NSEC_PER_SEC), (s64)(ns % NSEC_PER_SEC) };

	if (clock > 7)	/* REALTIME, MONOTONIC, ...: all run from boot for now */
		return -EINVAL;
	return copy_to_user((void *)uts, &ts, sizeof(ts)) ? -EFAULT : 0;
}

static long sys_nanosleep(u64 ureq, u64 urem, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct kernel_timespec ts;

	if (copy_from_user(&ts, (void *)ureq, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (s64)NSEC_PER_SEC)
		return -EINVAL;
	msleep(((u64)ts.tv_sec * NSEC_PER_SEC + (u64)ts.tv_nsec + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
	return 0;
}

struct new_utsname {
	char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
};

static long sys_uname(u64 ubuf, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	static const struct new_utsname u = {
		"Quire", "quire", "0.1", "#1 SMP", "x86_64", "(none)"
	};

	return copy_to_user((void *)ubuf, &u, sizeof(u)) ? -EFAULT : 0;
}

static long sys_getrandom(u64 ubuf, u64 len, u64 flags, u64 a3, u64 a4, u64 a5)
{
	static u64 state = 0x5157495245ULL;
	u64 done = 0;

	if (flags & ~7ULL)
		return -EINVAL;
	/* Not cryptographic: a TSC-seeded xorshift (no entropy source yet; docs/syscalls.md). */
	while (done < len) {
		u64 v;
		u64 n = min(len - done, (u64)8);

		state ^= rdtsc();
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		v = state;
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
	pr_info("power off requested by pid %d\n", current->tid);
	machine_power_off(QUIRE_EXIT_SUCCESS);
}

static const syscall_fn_t syscall_table[NR_SYSCALLS] = {
	[0] = sys_read,
	[1] = sys_write,
	[9] = sys_mmap,
	[10] = sys_mprotect,
	[11] = sys_munmap,
	[12] = sys_brk,
	[16] = sys_ioctl,
	[20] = sys_writev,
	[24] = sys_sched_yield,
	[28] = sys_madvise,
	[35] = sys_nanosleep,
	[39] = sys_getpid,
	[56] = sys_clone,
	[57] = sys_fork,
	[58] = sys_fork,		/* vfork: a full copy is a correct vfork */
	[61] = sys_wait4,
	[62] = sys_kill,
	[60] = sys_exit,
	[63] = sys_uname,
	[110] = sys_getppid,
	[158] = sys_arch_prctl,
	[169] = sys_reboot,
	[186] = sys_getpid,		/* gettid: one thread per process */
	[218] = sys_set_tid_address,
	[228] = sys_clock_gettime,
	[231] = sys_exit,		/* exit_group */
	[309] = sys_getcpu,
	[318] = sys_getrandom,
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
		return;
	}
	current->user_regs = regs;
	regs->rax = (u64)fn(regs->rdi, regs->rsi, regs->rdx, regs->r10, regs->r8, regs->r9);
	if (current->pending_kill)
		do_exit(W_EXITCODE(0, current->pending_kill));
}
