/*
 * User processes (kernel/process.c, kernel/exec.c): a task with an address
 * space, started from a static ELF64 image, running on the Linux x86-64
 * system-call ABI. See docs/userspace.md and docs/syscalls.md.
 */
#ifndef QUIRE_PROCESS_H
#define QUIRE_PROCESS_H

#include <quire/types.h>
#include <quire/sched.h>

/* Linux's wait status encoding. */
#define W_EXITCODE(code, sig)	(((code) & 0xff) << 8 | ((sig) & 0x7f))
#define WIFEXITED(s)		(((s) & 0x7f) == 0)
#define WEXITSTATUS(s)		(((s) >> 8) & 0xff)
#define WIFSIGNALED(s)		(((s) & 0x7f) != 0)
#define WTERMSIG(s)		((s) & 0x7f)

#define SIGKILL	9
#define SIGSEGV	11
#define SIGBUS	7

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
/* Kill the current process with a signal, after a one-line report on the console. */
__attribute__((noreturn)) void force_sig_fault(int sig, unsigned long addr, unsigned long ip,
					       const char *why);

/* do_exit's part in the process tree: orphans to the reaper, wake wait4. */
void exit_notify(struct task *t);

/* Boot: SYSCALL/SYSRET on this CPU. */
void syscall_init(void);
/* Start user mode at rip with stack rsp (arch/x86_64/kernel/syscall.S). */
__attribute__((noreturn)) void enter_user_mode(unsigned long rip, unsigned long rsp);
/* Set up a forked child's kernel stack to return to user mode like its parent. */
void arch_fork_frame(struct task *child, const struct task *parent);

/* Give the current task a fresh FPU/SSE state (exec). */
void fpu_reset_current(void);
/* Back to the kernel's page tables (a failed first exec). */
void arch_load_kernel_pgd(void);

#endif
