/*
 * User processes (kernel/process.c, kernel/exec.c): a task with an address
 * space, started from a static ELF64 image, running on the Linux x86-64
 * system-call ABI. See docs/userspace.md and docs/syscalls.md.
 */
#ifndef QUIRE_PROCESS_H
#define QUIRE_PROCESS_H

#include <quire/types.h>
#include <quire/sched.h>
#include <quire/uapi/signal.h>

/* Linux's wait status encoding. */
#define W_EXITCODE(code, sig)	(((code) & 0xff) << 8 | ((sig) & 0x7f))
#define WIFEXITED(s)		(((s) & 0x7f) == 0)
#define WEXITSTATUS(s)		(((s) >> 8) & 0xff)
#define WIFSIGNALED(s)		(((s) & 0x7f) != 0)
#define WTERMSIG(s)		((s) & 0x7f)


/*
 * Start a process running the ELF image (copied: the caller keeps its
 * buffer) with argv and envp (NULL-terminated). It is a kernel thread until
 * exec succeeds; kthread_join on it returns its Linux wait status, or a
 * negative errno when the image could not be started (ENOEXEC, ENOMEM, E2BIG).
 * The first process started is pid 1.
 */
struct task *process_spawn(const char *name, const void *elf, size_t size,
			   const char *const argv[], const char *const envp[]);

/* Replace the current task's user image (execve's core). Returns only on failure. */
int exec_image(const char *filename, const void *elf, size_t size,
	       const char *const argv[], const char *const envp[]);
/* End the current process with a wait status (W_EXITCODE). */
__attribute__((noreturn)) void do_exit(int status);

/* do_exit's part in the process tree: orphans to the reaper, wake wait4. */
void exit_notify(struct task *t, bool group_dead, int status);
/* exec's part: the task becomes a process that kill(pid) can find. */
void process_list_add(struct task *t);

/* kernel/rlimit.c: Linux's default limits (every new task); t's process's soft limit. */
void rlimit_init_defaults(struct task *leader);
u64 task_rlimit(struct task *t, unsigned int resource);

/* Boot: SYSCALL/SYSRET on this CPU. */
void syscall_init(void);
/* Start user mode at rip with stack rsp (arch/x86_64/kernel/syscall.S). */
__attribute__((noreturn)) void enter_user_mode(unsigned long rip, unsigned long rsp);
/* Set up a forked child's kernel stack to return to user mode like its parent. */
void arch_fork_frame(struct task *child, const struct task *parent);
/* A new thread's user stack pointer (clone's stack argument), after arch_fork_frame. */
void arch_set_user_sp(struct task *child, u64 sp);

/* The live FPU/SSE registers to or from a 16-byte aligned fxsave image (preemption off). */
void fpu_save_current(void *buf);
void fpu_restore_current(const void *buf);
/* Give the current task a fresh FPU/SSE state (exec). */
void fpu_reset_current(void);
/* Back to the kernel's page tables (a failed first exec). */
void arch_load_kernel_pgd(void);

#endif
