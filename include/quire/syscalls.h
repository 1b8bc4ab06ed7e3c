/*
 * System calls implemented outside kernel/syscalls.c (the table): all take
 * the six argument registers and return a value or -errno.
 */
#ifndef QUIRE_SYSCALLS_H
#define QUIRE_SYSCALLS_H

#include <quire/types.h>

#define SYSCALL_ARGS u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5

/* kernel/rw_syscalls.c */
struct iovec {
	u64 iov_base;
	u64 iov_len;
};
#define UIO_MAXIOV	1024
/*
 * A user iovec array in a kmalloc'd copy (*iovp, NULL when count is 0),
 * checked as Linux's import_iovec (EINVAL, EFAULT), the total in *total.
 */
long import_iovec(u64 uiov, u32 count, struct iovec **iovp, u64 *total);
long sys_read(SYSCALL_ARGS);
/* kernel/fs_syscalls.c */
long sys_utimensat(SYSCALL_ARGS);
long sys_chmod(SYSCALL_ARGS);
long sys_fchmod(SYSCALL_ARGS);
long sys_fchmodat(SYSCALL_ARGS);
/* kernel/utsname.c */
long sys_uname(SYSCALL_ARGS);
long sys_sethostname(SYSCALL_ARGS);
long sys_setdomainname(SYSCALL_ARGS);
/* fs/select.c */
long sys_poll(SYSCALL_ARGS);
long sys_ppoll(SYSCALL_ARGS);
long sys_select(SYSCALL_ARGS);
long sys_pselect6(SYSCALL_ARGS);
long sys_pread64(SYSCALL_ARGS);
long sys_write(SYSCALL_ARGS);
long sys_pwrite64(SYSCALL_ARGS);
long sys_readv(SYSCALL_ARGS);
long sys_writev(SYSCALL_ARGS);
long sys_preadv(SYSCALL_ARGS);
long sys_pwritev(SYSCALL_ARGS);
long sys_preadv2(SYSCALL_ARGS);
long sys_pwritev2(SYSCALL_ARGS);
/* kernel/process_vm.c */
long sys_process_vm_readv(SYSCALL_ARGS);
long sys_process_vm_writev(SYSCALL_ARGS);
/* kernel/fs_syscalls.c */
long sys_fsync(SYSCALL_ARGS);
long sys_umask(SYSCALL_ARGS);
long sys_rt_sigtimedwait(SYSCALL_ARGS);
long sys_truncate(SYSCALL_ARGS);
long sys_ftruncate(SYSCALL_ARGS);
long sys_fallocate(SYSCALL_ARGS);
long sys_statfs(SYSCALL_ARGS);
long sys_fstatfs(SYSCALL_ARGS);
long sys_fdatasync(SYSCALL_ARGS);
long sys_syncfs(SYSCALL_ARGS);
long sys_sync(SYSCALL_ARGS);
long sys_openat(SYSCALL_ARGS);
long sys_open(SYSCALL_ARGS);
long sys_close(SYSCALL_ARGS);
long sys_lseek(SYSCALL_ARGS);
long sys_fstat(SYSCALL_ARGS);
long sys_newfstatat(SYSCALL_ARGS);
long sys_stat(SYSCALL_ARGS);
long sys_lstat(SYSCALL_ARGS);
long sys_faccessat(SYSCALL_ARGS);
long sys_access(SYSCALL_ARGS);
long sys_getdents64(SYSCALL_ARGS);
long sys_ioctl(SYSCALL_ARGS);
long sys_dup(SYSCALL_ARGS);
long sys_dup3(SYSCALL_ARGS);
long sys_dup2(SYSCALL_ARGS);
long sys_mkdir(SYSCALL_ARGS);
long sys_unlink(SYSCALL_ARGS);
long sys_rmdir(SYSCALL_ARGS);
long sys_chdir(SYSCALL_ARGS);
long sys_fchdir(SYSCALL_ARGS);
long sys_symlink(SYSCALL_ARGS);
long sys_symlinkat(SYSCALL_ARGS);
long sys_getcwd(SYSCALL_ARGS);
long sys_readlink(SYSCALL_ARGS);
long sys_readlinkat(SYSCALL_ARGS);
long sys_execve(SYSCALL_ARGS);
long sys_fork(SYSCALL_ARGS);
long sys_clone(SYSCALL_ARGS);
long sys_wait4(SYSCALL_ARGS);
long sys_waitid(SYSCALL_ARGS);
long sys_kill(SYSCALL_ARGS);
long sys_tkill(SYSCALL_ARGS);
long sys_tgkill(SYSCALL_ARGS);
long sys_rt_sigqueueinfo(SYSCALL_ARGS);
long sys_rt_tgsigqueueinfo(SYSCALL_ARGS);
/* kernel/pgrp.c */
long sys_setpgid(SYSCALL_ARGS);
long sys_getpgid(SYSCALL_ARGS);
long sys_getpgrp(SYSCALL_ARGS);
long sys_setsid(SYSCALL_ARGS);
long sys_getsid(SYSCALL_ARGS);
/* kernel/signal.c */
long sys_rt_sigaction(SYSCALL_ARGS);
long sys_restart_syscall(SYSCALL_ARGS);
long sys_rt_sigprocmask(SYSCALL_ARGS);
long sys_rt_sigreturn(SYSCALL_ARGS);
long sys_rt_sigpending(SYSCALL_ARGS);
long sys_rt_sigsuspend(SYSCALL_ARGS);
long sys_sigaltstack(SYSCALL_ARGS);
long sys_pause(SYSCALL_ARGS);
/* kernel/futex.c */
long sys_futex(SYSCALL_ARGS);
long sys_set_robust_list(SYSCALL_ARGS);
long sys_get_robust_list(SYSCALL_ARGS);
/* kernel/time.c */
long sys_clock_gettime(SYSCALL_ARGS);
long sys_clock_getres(SYSCALL_ARGS);
long sys_clock_settime(SYSCALL_ARGS);
long sys_gettimeofday(SYSCALL_ARGS);
long sys_time(SYSCALL_ARGS);
long sys_nanosleep(SYSCALL_ARGS);
long sys_clock_nanosleep(SYSCALL_ARGS);
/* kernel/rlimit.c */
long sys_getrlimit(SYSCALL_ARGS);
long sys_setrlimit(SYSCALL_ARGS);
long sys_prlimit64(SYSCALL_ARGS);
/* kernel/cputime.c */
long sys_getrusage(SYSCALL_ARGS);
long sys_times(SYSCALL_ARGS);
/* kernel/itimer.c */
long sys_getitimer(SYSCALL_ARGS);
long sys_setitimer(SYSCALL_ARGS);
long sys_alarm(SYSCALL_ARGS);

/* mm/mremap.c, mm/msync.c, mm/mincore.c */
long sys_mremap(SYSCALL_ARGS);
long sys_msync(SYSCALL_ARGS);
long sys_mincore(SYSCALL_ARGS);

long sys_fcntl(SYSCALL_ARGS);
long sys_pipe(SYSCALL_ARGS);
long sys_pipe2(SYSCALL_ARGS);
/* fs/splice.c */
long sys_vmsplice(SYSCALL_ARGS);
long sys_memfd_create(SYSCALL_ARGS);
long sys_mount(SYSCALL_ARGS);
long sys_umount2(SYSCALL_ARGS);

struct file;
/*
 * mmap's checks of a file, and what to map for it (*mapped: a referenced
 * file, or NULL for anonymous memory); the RAM file behind shared
 * anonymous memory (MAP_SHARED|MAP_ANONYMOUS, /dev/zero's MAP_SHARED).
 */
long mmap_file_prepare(struct file *f, u64 len, u64 prot, u64 flags, struct file **mapped);
long shmem_file_setup(u64 size, struct file **out);

/* kernel/prctl.c */
long sys_prctl(SYSCALL_ARGS);

#endif
