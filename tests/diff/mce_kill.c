/*
 * prctl(PR_MCE_KILL) and early kill: the policy read back with
 * PR_MCE_KILL_GET after each choice, every EINVAL (and what a failed SET
 * leaves behind), fork keeping it; then a page shared by a parent and three
 * forked children poisoned by the parent's MADV_HWPOISON: the parent gets
 * SIGBUS BUS_MCEERR_AR at once, the child that asked for early kill gets
 * BUS_MCEERR_AO at the page at once, the late and the default ones nothing
 * until they touch it (BUS_MCEERR_AR then); with
 * /proc/sys/vm/memory_failure_early_kill at 1 the default child is told
 * early too. Root only (MADV_HWPOISON).
 */
#include "diff.h"
#include "hwpoison_user.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define EARLY_KILL		"/proc/sys/vm/memory_failure_early_kill"

static const char *bus_code_name(int code)
{
	switch (code) {
	case BUS_MCEERR_AR: return "BUS_MCEERR_AR";
	case BUS_MCEERR_AO: return "BUS_MCEERR_AO";
	}
	return "other";
}

static void show_policy(const char *label)
{
	show(label, prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
}

static void policies(void)
{
	int status = -1;
	pid_t pid;

	show_policy("at start");
	show("SET EARLY", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0));
	show_policy("after SET EARLY");
	pid = fork();
	if (pid == 0)
		_exit(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
	yesno("a forked child keeps it", waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == PR_MCE_KILL_EARLY);
	show("SET LATE", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0));
	show_policy("after SET LATE");
	show("SET DEFAULT", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_DEFAULT, 0, 0));
	show_policy("after SET DEFAULT");
	show("SET EARLY again", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0));
	show("CLEAR", prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 0, 0, 0));
	show_policy("after CLEAR");
	show("CLEAR with arg3 1", prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 1, 0, 0));
	show("SET 3", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, 3, 0, 0));
	show_policy("after a failed SET");
	show("SET EARLY, arg4 1", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 1, 0));
	show("SET EARLY, arg5 1", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 1));
	show("how 2", prctl(PR_MCE_KILL, 2, 0, 0, 0));
	show("GET, arg2 1", prctl(PR_MCE_KILL_GET, 1, 0, 0, 0));
	show("GET, arg5 1", prctl(PR_MCE_KILL_GET, 0, 0, 0, 1));
	show("back to DEFAULT", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_DEFAULT, 0, 0));
	show_policy("at the end");
}

/* A child that set policy (-1: none): what it heard, as an exit code. */
enum { HEARD_NOTHING_THEN_AR = 1, HEARD_AO = 2, HEARD_WRONG = 3, HEARD_NOTHING = 4 };

static void child(char *p, int policy, int ready, int go)
{
	char c;

	if (policy >= 0 && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, policy, 0, 0))
		_exit(10);
	alarm(20);
	buses = 0;
	if (sigsetjmp(env, 1)) {	/* SIGBUS while waiting: early kill */
		_exit(bus_code == BUS_MCEERR_AO && bus_addr == p && bus_lsb == 12 ?
		      HEARD_AO : HEARD_WRONG);
	}
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(11);
	if (sigsetjmp(env, 1)) {	/* the touch after */
		_exit(bus_code == BUS_MCEERR_AR && bus_addr == p + 8 && bus_lsb == 12 ?
		      HEARD_NOTHING_THEN_AR : HEARD_WRONG);
	}
	c = *(volatile char *)(p + 8);
	_exit(c == 'k' ? HEARD_NOTHING : HEARD_WRONG);
}

static const char *heard(int status)
{
	if (!WIFEXITED(status))
		return "killed";
	switch (WEXITSTATUS(status)) {
	case HEARD_NOTHING_THEN_AR: return "nothing at once, BUS_MCEERR_AR at its touch";
	case HEARD_AO: return "BUS_MCEERR_AO at the page at once";
	case HEARD_NOTHING: return "nothing, and read the page";
	}
	return "something else";
}

static int write_early_kill(const char *text)
{
	int fd = open(EARLY_KILL, O_WRONLY);
	long n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (long)strlen(text) ? 0 : -1;
}

static void poison_shared(const char *title, const int policies[3])
{
	static const char *const names[3] = { "early child", "late child", "default child" };
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ready[2], go[2], status;
	pid_t pids[3];
	char c;

	say("-- %s", title);
	memset(p, 'k', 2 * PAGE);
	if (pipe(ready) || pipe(go))
		return;
	for (int i = 0; i < 3; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child(p, policies[i], ready[1], go[0]);
	}
	for (int i = 0; i < 3; i++)
		if (read(ready[0], &c, 1) != 1)
			say("a child did not start");
	buses = 0;
	if (sigsetjmp(env, 1) == 0) {
		errno = 0;
		long r = madvise(p, PAGE, MADV_HWPOISON);

		show_result("parent: MADV_HWPOISON", r, errno);
	} else {
		say("parent: SIGBUS %s at the page: %s, lsb %d", bus_code_name(bus_code),
		    bus_addr == p ? "yes" : "no", bus_lsb);
	}
	/* The early child ends on its SIGBUS; wait for it before the others go on. */
	if (policies[0] == PR_MCE_KILL_EARLY &&
	    waitpid(pids[0], &status, 0) == pids[0]) {
		say("%s: %s", names[0], heard(status));
		pids[0] = 0;
	}
	for (int i = 0; i < 3; i++)
		if (write(go[1], "g", 1) != 1)
			say("cannot start a child");
	for (int i = 0; i < 3; i++)
		if (pids[i] && waitpid(pids[i], &status, 0) == pids[i])
			say("%s: %s", names[i], heard(status));
	yesno("parent: the other page kept", p[PAGE] == 'k');
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	munmap(p, 2 * PAGE);
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	const int by_prctl[3] = { PR_MCE_KILL_EARLY, PR_MCE_KILL_LATE, -1 };
	char buf[8] = "";
	int fd;

	diff_begin("mce_kill");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	policies();
	fd = open(EARLY_KILL, O_RDONLY);
	yesno("memory_failure_early_kill reads 0", fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 &&
	      strcmp(buf, "0\n") == 0);
	if (fd >= 0)
		close(fd);
	yesno("memory_failure_early_kill takes 2", write_early_kill("2\n") == 0);
	yesno("memory_failure_early_kill takes x", write_early_kill("x\n") == 0);
	poison_shared("late kill by default", by_prctl);
	yesno("memory_failure_early_kill takes 1", write_early_kill("1\n") == 0);
	poison_shared("memory_failure_early_kill 1", by_prctl);
	yesno("memory_failure_early_kill takes 0", write_early_kill("0\n") == 0);
	return 0;
}
