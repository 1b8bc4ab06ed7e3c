/*
 * User processes (kernel/process.c, kernel/exec.c): a task with an address
 * space, started from a static ELF64 image, running on the Linux x86-64
 * system-call ABI. See docs/userspace.md and docs/syscalls.md.
 */
#ifndef QUIRE_PROCESS_H
#define QUIRE_PROCESS_H

#include <quire/pid.h>
#include <quire/types.h>
#include <quire/sched.h>
#include <quire/spinlock.h>
#include <quire/list.h>
#include <quire/compiler.h>
#include <quire/uapi/signal.h>

/* Linux's wait status encoding. */
#define W_EXITCODE(code, sig)	(((code) & 0xff) << 8 | ((sig) & 0x7f))
#define WIFEXITED(s)		(((s) & 0x7f) == 0)
#define WEXITSTATUS(s)		(((s) >> 8) & 0xff)
#define WIFSIGNALED(s)		(((s) & 0x7f) != 0)	/* of a dead process's status */
#define WTERMSIG(s)		((s) & 0x7f)
#define W_STOPCODE(sig)		((sig) << 8 | 0x7f)
#define W_CONTINUED		0xffff


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
/* exec's part: the task becomes a process that kill(pid) can find, marked as having exec'd. */
void process_list_add(struct task *t);

/*
 * The process tree (kernel/fork.c): live processes (their leaders) on
 * process_list; process_lock guards it, every parent/children link and
 * every pgid and sid. For kernel/fork.c and kernel/pgrp.c only.
 */
extern spinlock_t process_lock;
extern struct list_head process_list;

/* A task's mm changes (exec, exit) under process_lock, for get_process_mm (quire/mmap.h). */
void set_task_mm(struct task *t, struct mm_struct *mm);


/*
 * Send sig to every process of group pgid: from user space (si_code
 * SI_USER, the sender's pid) or, priv, from the kernel (SI_KERNEL: the
 * terminal's signals). sig 0 only checks. 0, or -ESRCH when the group has
 * no process.
 */
int kill_pgrp(int pgid, int sig, bool priv);
/* kill(-1, sig): every process but pid 1 and the caller's. */
int kill_all(int sig);
/* Whether the caller's process group is orphaned (no member's parent is in another group of its session). */
bool current_pgrp_orphaned(void);
/* exit_notify, under process_lock: a process group this exit orphans that has a stopped process gets SIGHUP and SIGCONT. */
void exit_orphaned_pgrps(struct task *leader);
/* The session of process group (or process) id: a sid, or -ESRCH (TIOCSPGRP). */
int pgrp_session(int id);
/* Whether the process sid (a session's leader) is alive: the terminal's owner. */
bool session_leader_alive(int sid);
/*
 * The terminal's job control (Linux's __tty_check_change): the caller
 * reads (SIGTTIN) or changes (SIGTTOU) the terminal of session tty_sid,
 * whose foreground group is fg_pgrp. 0: go on; -EIO: it may not (the
 * signal ignored for SIGTTIN, or an orphaned group); -ERESTARTSYS: its
 * group was sent sig.
 */
int tty_job_control(int tty_sid, int fg_pgrp, int sig);
/* A process stopped or continued (kernel/signal.c): tell its parent and wake wait4. */
void job_notify_parent(struct task *leader, int why, int sig);
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
