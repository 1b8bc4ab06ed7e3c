/*
 * init, pid 1. Runs /bin/sh, or its arguments as a command
 * (init="/bin/init /prog arg..." on the kernel command line), with the
 * console as stdin, stdout and stderr, and reaps every child that ends
 * meanwhile (orphans come to pid 1). Like a getty, it first starts a
 * session whose controlling terminal is the console (setsid, TIOCSCTTY),
 * its process group in the foreground: the command starts there, and a
 * shell then moves its jobs in and out of the foreground (docs/signals.md).
 * When the command ends, init powers the machine off with
 * reboot(LINUX_REBOOT_CMD_POWER_OFF), passing the command's exit status
 * (128 + signal if it was killed) as reboot's fourth argument, which Linux
 * ignores for POWER_OFF and Quire may use as the guest's exit status; if
 * reboot fails, init exits with that status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* reboot(2)'s magic numbers (linux/reboot.h, which musl-gcc does not ship). */
#define LINUX_REBOOT_MAGIC1	0xfee1deadUL
#define LINUX_REBOOT_MAGIC2	672274793UL

static void console_fds(void)
{
	struct stat st;
	int fd;

	if (fstat(0, &st) == 0)
		return;		/* the kernel opened them already */
	fd = open("/dev/console", O_RDWR);
	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

/* ramfs has nothing to write back, so no sync() first. */
static __attribute__((noreturn)) void power_off(int status)
{
	syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
		RB_POWER_OFF, (long)status);
	fprintf(stderr, "init: reboot failed: %s; exiting with status %d\n",
		strerror(errno), status);
	exit(status);
}

int main(int argc, char **argv)
{
	static char *shell[] = { "/bin/sh", NULL };
	char **cmd = argc > 1 ? argv + 1 : shell;
	int status = 0;
	pid_t child, pid;

	console_fds();
	if (setsid() >= 0)
		ioctl(0, TIOCSCTTY, 0);	/* no terminal (a file, a pipe): no job control */
	setenv("PATH", "/bin:/sbin:/usr/bin:/usr/sbin:/tests", 0);
	setenv("HOME", "/", 0);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "init: fork: %s\n", strerror(errno));
		power_off(1);
	}
	if (child == 0) {
		execv(cmd[0], cmd);
		fprintf(stderr, "init: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	/* Wait for the program, reaping whatever else ends on the way. */
	while ((pid = waitpid(-1, &status, 0)) != child) {
		if (pid < 0 && errno != EINTR) {
			fprintf(stderr, "init: waitpid: %s\n", strerror(errno));
			power_off(1);
		}
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "init: %s killed by signal %d (%s)\n", cmd[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));
		power_off(128 + WTERMSIG(status));
	}
	power_off(WEXITSTATUS(status));
}
