/*
 * prctl(2) (157): operations on the calling thread or process, by option.
 * Implemented: PR_SET_NAME and PR_GET_NAME (the calling thread's command
 * name, at most 15 bytes and a NUL: /proc/<pid>/comm, ps), PR_MCE_KILL and
 * PR_MCE_KILL_GET (kernel/mce_kill.c). Every
 * other option Linux 6.12 knows is -ENOSYS here, with a log line the first
 * time each is asked for; an option Linux does not know is -EINVAL, as there.
 */
#include <quire/syscalls.h>
#include <quire/memory-failure.h>
#include <quire/sched.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/uaccess.h>

#define PR_SET_NAME		15
#define PR_GET_NAME		16
#define PR_MCE_KILL		33
#define PR_MCE_KILL_GET		34
#define PR_LINUX_LAST		73		/* Linux 6.12's highest small option number */
#define PR_SET_PTRACER		0x59616d61	/* its one large one */

static u8 reported[PR_LINUX_LAST + 1];

long sys_prctl(u64 option, u64 a2, u64 a3, u64 a4, u64 a5, u64 unused)
{
	char comm[TASK_COMM_LEN];

	switch (option) {
	case PR_SET_NAME: {
		/* At most 15 bytes are read, as Linux: a longer name is cut. */
		long n = strncpy_from_user(comm, (const char *)a2, sizeof(comm) - 1);

		if (n == -ENAMETOOLONG)
			n = sizeof(comm) - 1;
		if (n < 0)
			return -EFAULT;
		comm[n] = '\0';
		strscpy(current->comm, comm, sizeof(current->comm));
		return 0;
	}
	case PR_GET_NAME:
		strscpy(comm, current->comm, sizeof(comm));
		return copy_to_user((void *)a2, comm, sizeof(comm)) ? -EFAULT : 0;
	case PR_MCE_KILL:
		return prctl_mce_kill(a2, a3, a4, a5);
	case PR_MCE_KILL_GET:
		return prctl_mce_kill_get(a2, a3, a4, a5);
	}
	if (option == PR_SET_PTRACER || (option >= 1 && option <= PR_LINUX_LAST)) {
		if (option == PR_SET_PTRACER ||
		    !__atomic_exchange_n(&reported[option], 1, __ATOMIC_RELAXED))
			pr_warn("pid %d (%s): prctl option %#llx is not implemented (-ENOSYS)\n",
				current->tid, current->comm, (unsigned long long)option);
		return -ENOSYS;
	}
	return -EINVAL;
}
