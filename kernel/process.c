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
	files_free(current->files);
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

void do_exit(int status)
{
	struct task *t = current;
	struct mm_struct *mm = t->mm;

	/* First: an alarm firing now must be done with t before t can be freed. */
	exit_itimers(t);
	if (t->arg && t->fn == spawn_thread) {
		free_spawn_args(t->arg);
		t->arg = NULL;
	}
	if (mm) {
		preempt_disable();
		t->mm = NULL;
		arch_load_kernel_pgd();
		preempt_enable();
		mmput(mm);
	}
	if (t->files) {
		files_free(t->files);
		t->files = NULL;
	}
	exit_notify(t);
	kthread_exit(status);
}
