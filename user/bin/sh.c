/*
 * sh: a small shell. Reads lines (a "$ " prompt on a terminal), splits
 * them into words (quotes '...' and "..." group, \ escapes one character),
 * and runs commands separated by ';', each a pipeline of programs joined
 * by '|', with fork, execve and wait4. A program not found is status 127,
 * one that cannot be run 126. A non-zero exit status or a killing signal
 * is printed. Builtins: help, cd [DIR], exit [N], fg. End of input exits
 * with the last status. `sh -c 'LINE'` runs one line and exits with its
 * status, printing nothing of its own (system(3) and popen(3) run their
 * commands so: Linux's mm selftests pipe `cat ... | grep ...` through it).
 *
 * Job control, when interactive on its controlling terminal (init makes
 * the console one): the shell takes a process group of its own and
 * ignores the terminal's signals; each pipeline runs in a new group put
 * in the foreground (tcsetpgrp), so ^C (SIGINT), ^\ (SIGQUIT) and ^Z
 * (SIGTSTP) reach it and not the shell, which takes the terminal back
 * when the pipeline ends or stops. One stopped pipeline is kept: `fg`
 * continues it in the foreground (docs/signals.md, "The terminal").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/wait.h>

#define SH_LINE_MAX	1024
#define MAX_WORDS	64
#define MAX_STAGES	8

extern char **environ;
static int last_status;
static int quiet;		/* sh -c: no "[prog: exit status N]" lines */
static int job_control;		/* pipelines get the terminal in turn */
static pid_t shell_pgid;

/* A pipeline: its process group, and the processes not yet reaped (0: reaped). */
struct job {
	pid_t pgid;
	int n;
	pid_t pids[MAX_STAGES];
	char names[MAX_STAGES][32];
};
static struct job stopped;	/* the stopped pipeline `fg` continues (pgid 0: none) */

/* The terminal's signals, ignored by an interactive shell and back to default in what it runs. */
static const int job_signals[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU };

static void set_job_signals(void (*action)(int))
{
	for (size_t i = 0; i < sizeof(job_signals) / sizeof(job_signals[0]); i++)
		signal(job_signals[i], action);
}

/*
 * Split s into words, copied into out (at least as long as s, plus one per
 * word); '|' and ';' become words of their own, with ops[i] set.
 */
static int split(const char *s, char *out, char **words, char *ops)
{
	int n = 0;

	for (;;) {
		char quote = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s || n == MAX_WORDS - 1)
			break;
		if (*s == '|' || *s == ';') {
			ops[n] = *s++;
			words[n++] = "";
			continue;
		}
		ops[n] = 0;
		words[n++] = out;
		for (; *s && (quote || !strchr(" \t\n|;", *s)); s++) {
			if (quote && *s == quote)
				quote = 0;
			else if (!quote && (*s == '\'' || *s == '"'))
				quote = *s;
			else if (*s == '\\' && s[1] && quote != '\'')
				*out++ = *++s;
			else
				*out++ = *s;
		}
		*out++ = '\0';
	}
	words[n] = NULL;
	return n;
}

static void run_child(char **argv)
{
	const char *path = getenv("PATH");
	char buf[4096];
	int err = ENOENT;

	if (strchr(argv[0], '/')) {
		execve(argv[0], argv, environ);
		err = errno;
	} else {
		for (const char *p = path ? path : "/bin"; *p;) {
			size_t len = strcspn(p, ":");

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, argv[0]);
			execve(buf, argv, environ);
			if (errno != ENOENT)
				err = errno;
			p += len + (p[len] == ':');
		}
	}
	fprintf(stderr, "sh: %s: %s\n", argv[0], err == ENOENT ? "command not found" : strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

static void report(const char *name, int status)
{
	if (quiet)
		return;
	/* After the ^C, ^\ or ^Z the terminal echoed, on a line of its own. */
	if (job_control && ((WIFSIGNALED(status) &&
			     (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGQUIT)) ||
			    WIFSTOPPED(status)))
		putchar('\n');
	if (WIFSTOPPED(status))
		printf("[%s: stopped by signal %d (%s); fg continues it]\n", name, WSTOPSIG(status),
		       strsignal(WSTOPSIG(status)));
	else if (WIFSIGNALED(status))
		printf("[%s: killed by signal %d (%s)]\n", name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status))
		printf("[%s: exit status %d]\n", name, WEXITSTATUS(status));
}

/*
 * Wait for job in the foreground until every process of it has ended
 * (0; last_status is the last stage's) or one has stopped (1: the job is
 * kept for fg, and the one kept before is killed: there is room for one).
 * Then the shell takes the terminal back.
 */
static int wait_job(struct job *j)
{
	int status = 0, ret = 0;

	for (int i = 0; i < j->n; i++) {
		pid_t w;

		if (j->pids[i] <= 0)
			continue;
		while ((w = waitpid(j->pids[i], &status, job_control ? WUNTRACED : 0)) < 0 &&
		       errno == EINTR)
			;
		if (w < 0) {
			j->pids[i] = 0;
			continue;
		}
		report(j->names[i], status);
		if (WIFSTOPPED(status)) {
			if (stopped.pgid && stopped.pgid != j->pgid) {
				kill(-stopped.pgid, SIGKILL);	/* it wakes a stopped process too */
				for (int k = 0; k < stopped.n; k++)
					if (stopped.pids[k] > 0)
						waitpid(stopped.pids[k], NULL, 0);
				fprintf(stderr, "sh: the stopped %s was killed\n", stopped.names[0]);
			}
			stopped = *j;
			ret = 128 + WSTOPSIG(status);	/* as a shell's $? says it */
			break;
		}
		j->pids[i] = 0;
	}
	if (job_control)
		tcsetpgrp(0, shell_pgid);
	if (ret)
		last_status = ret;
	else
		last_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	return ret != 0;
}

/* fg: the stopped pipeline, continued in the foreground. */
static void fg(void)
{
	struct job j = stopped;

	if (!j.pgid) {
		fprintf(stderr, "sh: fg: no stopped job\n");
		last_status = 1;
		return;
	}
	stopped.pgid = 0;
	tcsetpgrp(0, j.pgid);
	kill(-j.pgid, SIGCONT);
	printf("[%s: continued]\n", j.names[0]);
	fflush(stdout);
	wait_job(&j);
}

static int builtin(char **argv)
{
	if (!strcmp(argv[0], "exit"))
		exit(argv[1] ? atoi(argv[1]) : last_status);
	if (!strcmp(argv[0], "cd")) {
		const char *dir = argv[1] ? argv[1] : getenv("HOME") ? getenv("HOME") : "/";

		if (chdir(dir) < 0) {
			fprintf(stderr, "sh: cd: %s: %s\n", dir, strerror(errno));
			last_status = 1;
		} else {
			last_status = 0;
		}
		return 1;
	}
	if (!strcmp(argv[0], "fg")) {
		fg();
		return 1;
	}
	if (!strcmp(argv[0], "help")) {
		printf("Quire sh: run programs with arguments; 'a | b' pipes, 'a ; b' sequences.\n"
		       "Builtins: help, cd [DIR], exit [N], fg. Programs are looked up in $PATH (%s).\n"
		       "^C interrupts, ^Z stops (fg continues).\n",
		       getenv("PATH") ? getenv("PATH") : "/bin");
		last_status = 0;
		return 1;
	}
	return 0;
}

/* Run the pipeline argv[0] | argv[1] | ... in a process group of its own, and wait for it. */
static void pipeline(char **stages[], int n)
{
	struct job j = { 0 };
	int in = -1;

	fflush(stdout);
	for (int i = 0; i < n; i++) {
		int fds[2] = { -1, -1 };
		pid_t pid;

		if (i + 1 < n && pipe(fds) < 0) {
			fprintf(stderr, "sh: pipe: %s\n", strerror(errno));
			break;
		}
		pid = fork();
		if (pid == 0) {
			if (job_control) {
				/* Both sides set the group and give it the terminal: no race. */
				setpgid(0, j.pgid);
				tcsetpgrp(0, j.pgid ? j.pgid : getpid());
				set_job_signals(SIG_DFL);
			}
			if (in >= 0) {
				dup2(in, 0);
				close(in);
			}
			if (fds[1] >= 0) {
				dup2(fds[1], 1);
				close(fds[1]);
				close(fds[0]);
			}
			run_child(stages[i]);
		}
		if (pid < 0) {
			fprintf(stderr, "sh: fork: %s\n", strerror(errno));
		} else {
			if (job_control) {
				setpgid(pid, j.pgid ? j.pgid : pid);
				if (!j.pgid)
					tcsetpgrp(0, pid);
			}
			if (!j.pgid)
				j.pgid = pid;
			snprintf(j.names[j.n], sizeof(j.names[0]), "%s", stages[i][0]);
			j.pids[j.n++] = pid;
		}
		if (in >= 0)
			close(in);
		if (fds[1] >= 0)
			close(fds[1]);
		in = fds[0];
	}
	wait_job(&j);
}

static void run_line(const char *line)
{
	char *words[MAX_WORDS], ops[MAX_WORDS], store[2 * SH_LINE_MAX];
	char **stages[MAX_STAGES];
	int n = split(line, store, words, ops), nstages = 0, start = 0;

	for (int i = 0; i <= n; i++) {
		if (i < n && !ops[i])
			continue;
		words[i < n ? i : n] = NULL;	/* end this command's argv */
		if (i > start) {
			if (nstages == MAX_STAGES) {
				fprintf(stderr, "sh: pipeline too long\n");
				return;
			}
			stages[nstages++] = &words[start];
		}
		start = i + 1;
		if (i < n && ops[i] == '|')
			continue;
		if (nstages == 1 && builtin(stages[0]))
			nstages = 0;
		if (nstages)
			pipeline(stages, nstages);
		nstages = 0;
	}
}

int main(int argc, char **argv)
{
	char line[SH_LINE_MAX];
	int tty = isatty(0);

	if (argc >= 3 && strcmp(argv[1], "-c") == 0) {
		if (strlen(argv[2]) >= SH_LINE_MAX) {
			fprintf(stderr, "sh: -c: command longer than %d bytes\n", SH_LINE_MAX - 1);
			return 2;
		}
		quiet = 1;
		run_line(argv[2]);
		return last_status;
	}
	/* Job control where the terminal is this shell's controlling one. */
	if (tty && tcgetpgrp(0) >= 0) {
		set_job_signals(SIG_IGN);
		setpgid(0, 0);
		shell_pgid = getpgrp();
		job_control = tcsetpgrp(0, shell_pgid) == 0;
		if (!job_control)
			set_job_signals(SIG_DFL);
	}
	for (;;) {
		if (tty) {
			fputs("$ ", stdout);
			fflush(stdout);
		}
		if (!fgets(line, sizeof(line), stdin))
			break;
		run_line(line);
	}
	return last_status;
}
