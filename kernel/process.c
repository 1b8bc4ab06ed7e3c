/*
 * Processes: a kernel thread that execs a user image becomes a process; it
 * ends with do_exit (the exit and exit_group system calls, or a fatal
 * signal), which releases its address space and hands its Linux wait status
 * to whoever joins it.
 */
#define pr_fmt(fmt) "process: " fmt
#include <quire/process.h>
#include <quire/itimer.h>
#include <quire/mmap.h>
#include <quire/fdtable.h>
#include <quire/signal.h>
#include <quire/uaccess.h>
#include <quire/futex.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/errno.h>

struct spawn_args {
	void *image;
	size_t size;
	char **argv;
	char **envp;
};

static void free_strings(char **v)
{
	for (int i = 0; v && v[i]; i++)
		kfree(v[i]);
	kfree(v);
}

/* A kernel copy of a NULL-terminated string vector (the spawner's may go away). */
static char **copy_strings(const char *const v[])
{
	int n = 0;
	char **out;

	while (v && v[n])
		n++;
	out = kzalloc((n + 1) * sizeof(char *), GFP_KERNEL);
	if (!out)
		return NULL;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;

		out[i] = kmalloc(len, GFP_KERNEL);
		if (!out[i]) {
			free_strings(out);
			return NULL;
		}
		memcpy(out[i], v[i], len);
	}
	return out;
}

static void free_spawn_args(struct spawn_args *a)
{
	kfree(a->image);
	free_strings(a->argv);
	free_strings(a->envp);
	kfree(a);
}

static int spawn_thread(void *arg)
{
	struct spawn_args *a = arg;
	int err;

	/* Descriptors 0, 1 and 2 on the console, as a login would have it. */
	current->files = files_alloc_console("/dev/console");
	if (!current->files) {
		free_spawn_args(a);
		return -ENOMEM;
	}
	err = exec_image(a->argv[0] ? a->argv[0] : "", a->image, a->size,
			 (const char *const *)a->argv, (const char *const *)a->envp);
	files_put(current->files);
	current->files = NULL;

	/* Only a failed exec returns here. */
	free_spawn_args(a);
	return err;
}

struct task *process_spawn(const char *name, const void *elf, size_t size,
			   const char *const argv[], const char *const envp[])
{
	struct spawn_args *a = kzalloc(sizeof(*a), GFP_KERNEL);
	struct task *t;

	if (!a)
		return NULL;
	a->image = kmalloc(size ? size : 1, GFP_KERNEL);
	a->size = size;
	a->argv = copy_strings(argv);
	a->envp = copy_strings(envp);
	if (!a->image || !a->argv || !a->envp) {
		free_spawn_args(a);
		return NULL;
	}
	memcpy(a->image, elf, size);
	t = kthread_create(spawn_thread, a, name);
	if (!t) {
		free_spawn_args(a);
		return NULL;
	}
	/* Once running user code, the image copy is no longer needed: freed at exit. */
	t->arg = a;
	sched_take_pid_1(t);	/* the first process the kernel starts is pid 1 */
	wake_up_process(t);
	return t;
}

/*
 * CLONE_CHILD_CLEARTID / set_tid_address: a thread's exit zeroes the word
 * and wakes one futex waiter there (pthread_join sleeps on it). Only while
 * others still use the address space, as Linux: a dying mm is not written.
 */
static void exit_clear_child_tid(struct task *t, struct mm_struct *mm)
{
	int zero = 0;

	if (!t->clear_child_tid || atomic_read(&mm->mm_users) <= 1)
		return;
	/* A fault is ignored, as Linux does (a shared futex wake, as Linux's). */
	if (copy_to_user(t->clear_child_tid, &zero, sizeof(zero)) == 0)
		futex_wake((u32 *)t->clear_child_tid, false, 1, FUTEX_BITSET_MATCH_ANY);
	t->clear_child_tid = NULL;
}

void do_exit(int status)
{
	struct task *t = current;
	struct mm_struct *mm = t->mm;

	bool group_dead;

	if (t->arg && t->fn == spawn_thread) {
		free_spawn_args(t->arg);
		t->arg = NULL;
	}
	if (mm) {
		/* In the address space it is about to leave, in Linux's order. */
		futex_exit_robust_list();
		exit_clear_child_tid(t, mm);
		preempt_disable();
		set_task_mm(t, NULL);
		arch_load_kernel_pgd();
		preempt_enable();
		mmput(mm);
	}
	if (t->files) {
		files_put(t->files);
		t->files = NULL;
	}
	group_dead = !t->sighand || sighand_leave_group(t);
	/*
	 * The process's timers are its leader's and last as long as it does:
	 * cancelled (waiting for one firing now) before anyone can reap it.
	 */
	if (group_dead)
		exit_itimers(t->group_leader);
	exit_notify(t, group_dead, status);
	kthread_exit(status);
}
