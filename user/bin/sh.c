/*
 * sh: a small shell. Reads lines (a "$ " prompt on a terminal), splits
 * them into words (quotes '...' and "..." group, \ escapes one character),
 * and runs commands separated by ';', each a pipeline of programs joined
 * by '|', with fork, execve and wait4. A program not found is status 127,
 * one that cannot be run 126. A non-zero exit status or a killing signal
 * is printed. Builtins: help, cd [DIR], exit [N]. End of input exits with
 * the last status. `sh -c 'LINE'` runs one line and exits with its status,
 * printing nothing of its own (system(3) and popen(3) run their commands
 * so: Linux's mm selftests pipe `cat ... | grep ...` through it).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define SH_LINE_MAX	1024
#define MAX_WORDS	64
#define MAX_STAGES	8

extern char **environ;
static int last_status;
static int quiet;		/* sh -c: no "[prog: exit status N]" lines */

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
	if (WIFSIGNALED(status))
		printf("[%s: killed by signal %d (%s)]\n", name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status))
		printf("[%s: exit status %d]\n", name, WEXITSTATUS(status));
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
	if (!strcmp(argv[0], "help")) {
		printf("Quire sh: run programs with arguments; 'a | b' pipes, 'a ; b' sequences.\n"
		       "Builtins: help, cd [DIR], exit [N]. Programs are looked up in $PATH (%s).\n",
		       getenv("PATH") ? getenv("PATH") : "/bin");
		last_status = 0;
		return 1;
	}
	return 0;
}

/* Run the pipeline argv[0] | argv[1] | ... and wait for all of it. */
static void pipeline(char **stages[], int n)
{
	pid_t pids[MAX_STAGES];
	int in = -1, status = 0;

	fflush(stdout);
	for (int i = 0; i < n; i++) {
		int fds[2] = { -1, -1 };

		if (i + 1 < n && pipe(fds) < 0) {
			fprintf(stderr, "sh: pipe: %s\n", strerror(errno));
			n = i;
			break;
		}
		pids[i] = fork();
		if (pids[i] == 0) {
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
		if (pids[i] < 0)
			fprintf(stderr, "sh: fork: %s\n", strerror(errno));
		if (in >= 0)
			close(in);
		if (fds[1] >= 0)
			close(fds[1]);
		in = fds[0];
	}
	for (int i = 0; i < n; i++) {
		if (pids[i] < 0 || wait4(pids[i], &status, 0, NULL) < 0)
			continue;
		report(stages[i][0], status);
	}
	last_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
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
