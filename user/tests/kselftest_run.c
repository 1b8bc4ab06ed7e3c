/*
 * kselftest_run: runs test programs one after the other and reports them as
 * one KTAP suite, linux_mm_selftests (or -N's name), with a case per
 * program. Written for Linux's mm selftests (scripts/linux-selftests.sh
 * builds them), on Quire and, as /init, on Linux itself
 * (docs/linux-selftests.md); it also runs the differential programs of
 * tests/diff (-d, -o: docs/difftest.md).
 *
 *	kselftest_run [-i] [-S] [-t SECONDS] [-H NR_HUGEPAGES] [-N SUITE]
 *		      [-d DIR | -o] [-f LIST] [PROG[,ARG...]...]
 *
 * The programs come from the command line, or from LIST, a file with one
 * a line ('#' starts a comment; a name without '/' is in LIST's directory;
 * "timeout=S" after it gives that one its own limit): Quire's init= takes
 * 255 characters, and Linux's command line 2047. Each PROG runs in a child (fork, execve) with its arguments (the commas
 * of "uffd-stress,anon,20,16" separate them: a kernel command line cannot
 * quote a space inside init="..."), in /tmp, stdout and stderr on a pipe;
 * every line it prints comes out as a "# " diagnostic of its case. Its end
 * gives the case's result:
 *	exit 0			ok
 *	exit 4 (KSFT_SKIP)	ok ... # SKIP with the reason it printed last
 *				(not ok if it printed "not ok", "FAIL" or "Fail"
 *				with no kselftest count: khugepaged's status is
 *				its count of failures)
 *	anything else		not ok, with the status, the signal, or
 *				"timed out" (SIGKILL after -t seconds, 600 by default)
 * and kselftest's own count, its last "# Totals: pass:P fail:F ... skip:S"
 * line, overrides a status 0 or 4: a failed or erroneous subcase is not ok,
 * and a program that passed no subcase (all skipped, or none ran: kselftest
 * exits 0 then) is a SKIP, never a pass.
 * -S: a skip is a failure too (for a list that is expected to pass).
 * -H N: before each program, write N to /proc/sys/vm/nr_hugepages unless it
 * holds N already (a diagnostic says what changed, or once that it cannot),
 * as Linux's run_vmtests.sh reserves huge pages for the hugetlb tests.
 * -d DIR: differential mode. Only a program's stdout is taken (its stderr is
 * the runner's), whole, with a last line of its own for how it ended
 * ("[exit status N]", "[killed by signal N]", "[timed out after S s]"), and
 * compared with DIR/NAME.out (NAME: the case's name, spaces as '_'): ok when
 * they are the same byte for byte, else not ok with the lines that differ
 * ("# -  12| expected", "# +  12| got"); with no DIR/NAME.out, not ok and
 * the whole output (user/tests/output_diff.h).
 * -o: recording mode: the same output (stdout and the last line), printed
 * whole as "#| LINE" diagnostics, then "# NAME: N lines, fnv1a 0xHASH" (the
 * 32-bit FNV-1a of the lines, each with its '\n') so that whoever reads it
 * off a serial console can tell it arrived whole; ok unless it timed out.
 * -N SUITE: the suite's name.
 * -i: the program is init on Linux: mount /proc, /sys, /sys/kernel/debug,
 * /dev and /tmp first, and power off at the end (reboot(2)). Without it
 * (Quire, whose kernel mounts /proc and /sys, /dev and /tmp being its root
 * file system's), only debugfs is mounted, as a Linux system's init
 * (systemd) would have: the selftests write to it.
 * The exit status is 0 when no case failed, 1 otherwise.
 *
 * The system calls are the few Quire has: a child's end is polled with
 * waitpid(WNOHANG) between non-blocking reads of the pipe and short
 * nanosleeps (no poll, alarm or process groups needed; where setpgid
 * works, the whole group is killed after each program).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "output_diff.h"

#define SUITE		"linux_mm_selftests"
#define KSFT_SKIP	4		/* kselftest.h's exit status for a skip */
#define MAX_ARGS	32
#define LINE_MAX_SHOWN	1000		/* longer lines are cut */
#define LINES_SHOWN	5000		/* per program; the rest is counted */
#define REASON_MAX	200
#define MAX_CASES	256

struct test_case {
	char *spec;			/* PROG[,ARG...] */
	int timeout_s;			/* 0: -t's */
};

static int timeout_s = 600;
static int strict_skip;
static int as_init;
static const char *suite = SUITE;
static const char *expected_dir;	/* -d: differential mode */
static int recording;			/* -o */

/* What one program printed, line by line, as it comes through the pipe. */
struct output {
	char line[LINE_MAX_SHOWN + 1];
	size_t len;
	int cut;			/* the current line was longer than shown */
	long lines, hidden;
	char last[REASON_MAX];		/* the last non-empty line */
	char first_skip[REASON_MAX];	/* the first line that mentions a skip */
	char last_skip[REASON_MAX];	/* the last one */
	int totals;			/* a kselftest "Totals:" line was seen */
	int said_fail;			/* a line said "not ok", "FAIL" or "Fail" */
	int pass, fail, xfail, xpass, skip, error;
	char *all;			/* -d, -o: the whole output, without '\r' */
	size_t all_len, all_cap;
	int short_of_memory;		/* some of it could not be kept */
};

/* Differential (-d) and recording (-o) modes take stdout whole, not as diagnostics. */
static int whole_output(void)
{
	return expected_dir || recording;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* src without its colour escapes (ESC [ ... final byte), cut to size. */
static void strip_escapes(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; *src && n < size - 1; src++) {
		if (src[0] == '\033' && src[1] == '[') {
			for (src += 2; *src && (*src < '@' || *src > '~'); src++)
				;
			if (!*src)
				break;
			continue;
		}
		dst[n++] = *src;
	}
	dst[n] = '\0';
}

/* A line as a reason: no escapes, no '#' (it would start a KTAP directive). */
static void copy_reason(char *dst, const char *src)
{
	while (*src == ' ' || *src == '#' || *src == '\t')
		src++;
	strip_escapes(dst, REASON_MAX, src);
	for (char *p = dst; *p; p++)
		if (*p == '#' || (unsigned char)*p < ' ')
			*p = ' ';
}

static int mentions_skip(const char *s)
{
	/* kselftest's summary line counts skips; it is no reason. */
	return strcasestr(s, "skip") && !strstr(s, "Totals:");
}

/* "ok 1 # SKIP why" or "# SKIP why": the reason is what follows SKIP. */
static void skip_reason(char *dst, const char *line)
{
	const char *p = strstr(line, "SKIP");

	if (p && p[4 + strspn(p + 4, " :")])
		line = p + 4 + strspn(p + 4, " :");
	copy_reason(dst, line);
}

/* kselftest's summary: "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:2 error:0" */
static void read_totals(struct output *o, const char *line)
{
	const char *t = strstr(line, "Totals: pass:");

	if (t && sscanf(t, "Totals: pass:%d fail:%d xfail:%d xpass:%d skip:%d error:%d",
			&o->pass, &o->fail, &o->xfail, &o->xpass, &o->skip, &o->error) == 6)
		o->totals = 1;
}

/* "Fail" or "FAIL" as a word ("Failed to open" is no verdict), or TAP's "not ok". */
static int says_fail(const char *line)
{
	static const char *const words[] = { "Fail", "FAIL" };

	if (strstr(line, "not ok "))
		return 1;
	for (size_t i = 0; i < 2; i++)
		for (const char *p = strstr(line, words[i]); p; p = strstr(p + 1, words[i]))
			if ((p == line || !isalpha((unsigned char)p[-1])) && !isalpha((unsigned char)p[4]))
				return 1;
	return 0;
}

static void end_line(struct output *o)
{
	char plain[LINE_MAX_SHOWN + 1];

	o->line[o->len] = '\0';
	read_totals(o, o->line);
	strip_escapes(plain, sizeof(plain), o->line);
	o->said_fail |= says_fail(plain);
	if (whole_output())
		o->lines++;
	else if (o->lines++ < LINES_SHOWN)
		printf("    # %s%s\n", o->line, o->cut ? " [cut]" : "");
	else
		o->hidden++;
	if (o->len && !strstr(o->line, "Totals:")) {	/* a count is no reason */
		copy_reason(o->last, o->line);
		if (mentions_skip(o->line)) {
			skip_reason(o->last_skip, o->line);
			if (!o->first_skip[0])
				strcpy(o->first_skip, o->last_skip);
		}
	}
	o->len = 0;
	o->cut = 0;
}

/* Appends to the whole output (-d, -o); 0 when out of memory. */
static int keep(struct output *o, const char *buf, size_t n)
{
	if (o->all_len + n + 1 > o->all_cap) {
		size_t cap = (o->all_len + n + 1) * 2;
		char *p = realloc(o->all, cap);

		if (!p) {
			o->short_of_memory = 1;
			return 0;
		}
		o->all = p;
		o->all_cap = cap;
	}
	memcpy(o->all + o->all_len, buf, n);
	o->all_len += n;
	o->all[o->all_len] = '\0';
	return 1;
}

static void take(struct output *o, const char *buf, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		if (whole_output() && buf[i] != '\r')
			keep(o, buf + i, 1);
		if (buf[i] == '\n') {
			end_line(o);
		} else if (buf[i] != '\r') {
			if (o->len < LINE_MAX_SHOWN)
				o->line[o->len++] = buf[i];
			else
				o->cut = 1;
		}
	}
}

/* Reads what the pipe holds now; returns 0 at end of file. */
static int drain(int fd, struct output *o)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			take(o, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n != 0;		/* EAGAIN: nothing now, more may come */
	}
}

/* "path,arg,arg" into argv (in place); returns argc. */
static int split_args(char *spec, char **argv)
{
	int argc = 0;

	for (char *p = spec; p && argc < MAX_ARGS; ) {
		argv[argc++] = p;
		p = strchr(p, ',');
		if (p)
			*p++ = '\0';
	}
	argv[argc] = NULL;
	return argc;
}

/* The case's name: the program's file name, then its arguments. */
static void case_name(char *name, size_t size, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	size_t len;

	snprintf(name, size, "%s", base ? base + 1 : argv[0]);
	for (int i = 1; argv[i]; i++) {
		len = strlen(name);
		snprintf(name + len, size - len, " %s", argv[i]);
	}
}

static pid_t start(char **argv, int out)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	setpgid(0, 0);			/* where there are process groups */
	dup2(out, 1);
	if (!whole_output())		/* -d, -o: stdout only; stderr stays the runner's */
		dup2(out, 2);
	close(out);
	if (chdir("/tmp") != 0)
		chdir("/");
	execv(argv[0], argv);
	fprintf(stderr, "kselftest_run: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* -d, -o: how the program ended, as the last line of its whole output. */
static void ending_line(struct output *o, int status, int timed_out, int limit_s)
{
	static const char unended[] = "\n[no newline at the end]\n";
	char line[64];

	if (o->all_len && o->all[o->all_len - 1] != '\n')
		keep(o, unended, strlen(unended));
	if (timed_out)
		snprintf(line, sizeof(line), "[timed out after %d s]\n", limit_s);
	else if (WIFSIGNALED(status))
		snprintf(line, sizeof(line), "[killed by signal %d]\n", WTERMSIG(status));
	else
		snprintf(line, sizeof(line), "[exit status %d]\n", WEXITSTATUS(status));
	keep(o, line, strlen(line));
}

/* -d, -o: the case's verdict on the whole output; returns 1 when it failed. */
static int whole_verdict(struct output *o, const char *name, int status, int timed_out,
			 int limit_s, char *why, size_t size)
{
	why[0] = '\0';
	ending_line(o, status, timed_out, limit_s);
	if (o->short_of_memory) {
		snprintf(why, size, "runner: out of memory for the output");
		return 1;
	}
	if (expected_dir)
		return compare_whole(o->all, o->all_len, expected_dir, name, why, size);
	print_whole(o->all, o->all_len, name);
	if (timed_out) {
		snprintf(why, size, "timed out after %d s: not recorded", limit_s);
		return 1;
	}
	return 0;
}

/*
 * Runs one program; prints its case line; returns 1 when the case failed.
 * Every child that ends on the way is reaped (as init, orphans come here).
 */
static int run_one(int number, char *spec, int limit_s)
{
	char *argv[MAX_ARGS + 1], name[256], why[REASON_MAX + 128];
	struct output *o = calloc(1, sizeof(*o));
	int fds[2], status = 0, open_pipe = 1, timed_out = 0, groups, failed;
	long idle_ms = 1;
	double t0 = now();
	pid_t pid, w;

	split_args(spec, argv);
	case_name(name, sizeof(name), argv);
	printf("    # ---- %s\n", name);	/* a hang shows where it is */
	if (!o || pipe2(fds, O_CLOEXEC) != 0) {
		printf("    not ok %d %s # runner: pipe: %s\n", number, name, strerror(errno));
		free(o);
		return 1;
	}
	pid = start(argv, fds[1]);
	close(fds[1]);
	if (pid < 0) {
		printf("    not ok %d %s # runner: fork: %s\n", number, name, strerror(errno));
		close(fds[0]);
		free(o);
		return 1;
	}
	groups = setpgid(pid, pid) == 0 || errno == EACCES;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		long before = o->lines + (o->len != 0);

		if (open_pipe)
			open_pipe = drain(fds[0], o);
		while ((w = waitpid(-1, &status, WNOHANG)) > 0 && w != pid)
			;		/* an orphan */
		if (w == pid)
			break;
		if (!timed_out && now() - t0 > limit_s) {
			timed_out = 1;
			if (groups)
				kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
		/* Poll fast while it prints, up to 50 ms apart when it is quiet. */
		idle_ms = o->lines + (o->len != 0) != before ? 1 : (idle_ms * 2 > 50 ? 50 : idle_ms * 2);
		sleep_ms(idle_ms);
	}
	if (groups)
		kill(-pid, SIGKILL);	/* what it left running */
	if (open_pipe)
		drain(fds[0], o);	/* what is left; a grandchild may hold it open */
	close(fds[0]);
	if (o->len)
		end_line(o);
	if (o->hidden)
		printf("    # (%ld more lines not shown)\n", o->hidden);

	failed = 1;
	if (whole_output()) {
		failed = whole_verdict(o, name, status, timed_out, limit_s, why, sizeof(why));
	} else if (timed_out) {
		snprintf(why, sizeof(why), "timed out after %d s", limit_s);
	} else if (WIFSIGNALED(status)) {
		snprintf(why, sizeof(why), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	} else if (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != KSFT_SKIP) {
		snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(status));
	} else if (WEXITSTATUS(status) == KSFT_SKIP && o->said_fail && !o->totals) {
		/* khugepaged exits with its count of failures: 4 is no skip */
		snprintf(why, sizeof(why), "exit status 4 (KSFT_SKIP) after it reported failures");
	} else if (o->totals && (o->fail || o->error)) {
		snprintf(why, sizeof(why), "exit status %d, but %d subcases failed, %d errors",
			 WEXITSTATUS(status), o->fail, o->error);
	} else if (WEXITSTATUS(status) == KSFT_SKIP || (o->totals && !o->pass && !o->xfail)) {
		/* A program's own skip says why last; of many subcases, the first says it best. */
		const char *reason = o->skip > 1 ? o->first_skip : o->last_skip;

		if (!reason[0])
			reason = o->last;
		char counted[REASON_MAX + 64];

		if (WEXITSTATUS(status) != KSFT_SKIP && !o->skip)	/* kselftest's exit 0 */
			snprintf(counted, sizeof(counted), "no subcase ran");
		else if (WEXITSTATUS(status) != KSFT_SKIP)
			snprintf(counted, sizeof(counted), "no subcase passed, %d skipped%s%s",
				 o->skip, reason[0] ? ": " : "", reason);
		else
			snprintf(counted, sizeof(counted), "%s",
				 reason[0] ? reason : "exit status 4 (KSFT_SKIP)");
		failed = strict_skip;
		snprintf(why, sizeof(why), "%s%s", strict_skip ? "skipped, expected to pass: " : "SKIP ",
			 counted);
	} else {
		failed = 0;
		why[0] = '\0';
	}
	if (o->totals)
		printf("    # %s: kselftest counted pass:%d fail:%d xfail:%d xpass:%d skip:%d error:%d\n",
		       name, o->pass, o->fail, o->xfail, o->xpass, o->skip, o->error);
	printf("    # %s: %.1f s\n", name, now() - t0);
	if (why[0])
		printf("    %sok %d %s # %s\n", failed ? "not " : "", number, name, why);
	else
		printf("    ok %d %s\n", number, name);
	fflush(stdout);
	free(o->all);
	free(o);
	return failed;
}

/* As Linux's init: the file systems the tests read, before any of them. */
static void mount_all(void)
{
	static const struct { const char *type, *dir; } fs[] = {
		{ "proc", "/proc" }, { "sysfs", "/sys" }, { "debugfs", "/sys/kernel/debug" },
		{ "devtmpfs", "/dev" }, { "tmpfs", "/tmp" },
	};

	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		mkdir(fs[i].dir, 0755);
		if (mount(fs[i].type, fs[i].dir, fs[i].type, 0, NULL) != 0 && errno != EBUSY)
			printf("# kselftest_run: mount %s on %s: %s\n", fs[i].type, fs[i].dir,
			       strerror(errno));
	}
}

/* debugfs on /sys/kernel/debug, unless it is there already (EBUSY). */
static void mount_debugfs(void)
{
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) != 0 && errno != EBUSY)
		printf("# kselftest_run: mount debugfs on /sys/kernel/debug: %s\n", strerror(errno));
}

static void console_fds(void)
{
	int fd;

	if (fcntl(1, F_GETFD) >= 0)
		return;
	fd = open("/dev/console", O_RDWR);
	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

/* The number in /proc/sys/vm/nr_hugepages, or -1 (with errno) when it cannot be read. */
static long read_hugepages(void)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/*
 * Before each program: N huge pages again, as run_vmtests.sh reserves
 * them, whatever the one before left (compaction_test sets the count to 0
 * while it runs, and a crash leaves it so). Said when it had to change, and
 * once when it cannot be done.
 */
static void set_hugepages(long count)
{
	static int said;
	long was = read_hugepages();
	FILE *f;

	if (was == count)
		return;
	f = fopen("/proc/sys/vm/nr_hugepages", "w");
	if (!f || fprintf(f, "%ld\n", count) < 0 || fclose(f) != 0) {
		if (!said++)
			printf("    # kselftest_run: cannot set /proc/sys/vm/nr_hugepages: %s\n",
			       strerror(errno));
		return;
	}
	printf("    # kselftest_run: nr_hugepages was %ld, set to %ld, now %ld\n",
	       was, count, read_hugepages());
}

/* Appends LIST's programs, one a line, to cases; returns the new count or -1. */
static int read_list(const char *path, struct test_case *cases, int n)
{
	FILE *f = fopen(path, "r");
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path) : 1;
	char line[512], *p, *end, *opt;

	if (!f) {
		printf("# kselftest_run: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\n")] = '\0';
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t'); )
			*--end = '\0';
		if (!*p)
			continue;
		if (n == MAX_CASES) {
			printf("# kselftest_run: %s: more than %d programs\n", path, MAX_CASES);
			fclose(f);
			return -1;
		}
		cases[n].timeout_s = 0;
		for (opt = strtok(p + strcspn(p, " \t"), " \t"); opt; opt = strtok(NULL, " \t")) {
			if (sscanf(opt, "timeout=%d", &cases[n].timeout_s) != 1 || cases[n].timeout_s <= 0) {
				printf("# kselftest_run: %s: '%s': only timeout=SECONDS may follow a program\n",
				       path, opt);
				fclose(f);
				return -1;
			}
		}
		p[strcspn(p, " \t")] = '\0';
		if (*p == '/' || asprintf(&cases[n].spec, "%.*s/%s", dir_len, slash ? path : ".", p) < 0)
			cases[n].spec = strdup(p);
		n++;
	}
	fclose(f);
	return n;
}

static void usage(void)
{
	fprintf(stderr, "usage: kselftest_run [-i] [-S] [-t SECONDS] [-H NR_HUGEPAGES] [-N SUITE] "
		"[-d DIR | -o] [-f LIST] [PROG[,ARG...]...]\n");
}

static int finish(int failed)
{
	if (as_init) {
		sync();
		reboot(RB_POWER_OFF);
		printf("# kselftest_run: reboot: %s\n", strerror(errno));
	}
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct test_case cases[MAX_CASES];
	const char *list = NULL;
	long hugepages = -1;
	int opt, failed = 0, n = 0;

	while ((opt = getopt(argc, argv, "iSt:H:f:N:d:o")) != -1) {
		switch (opt) {
		case 'i': as_init = 1; break;
		case 'N': suite = optarg; break;
		case 'd': expected_dir = optarg; break;
		case 'o': recording = 1; break;
		case 'S': strict_skip = 1; break;
		case 't': timeout_s = atoi(optarg); break;
		case 'H': hugepages = atol(optarg); break;
		case 'f': list = optarg; break;
		default: usage(); return 2;
		}
	}
	if (as_init) {
		console_fds();
		mount_all();
	} else {
		mount_debugfs();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (timeout_s <= 0)
		timeout_s = 600;
	if (expected_dir && recording) {
		usage();
		return finish(1);
	}
	if (list && (n = read_list(list, cases, 0)) < 0)
		return finish(1);
	for (int i = optind; i < argc && n < MAX_CASES; i++)
		cases[n++].spec = argv[i];
	mkdir("/tmp", 01777);
	printf("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: %s\n    1..%d\n", suite, n);
	for (int i = 0; i < n; i++) {
		if (hugepages >= 0)
			set_hugepages(hugepages);
		failed += run_one(i + 1, cases[i].spec, cases[i].timeout_s ? cases[i].timeout_s : timeout_s);
	}
	printf("%sok 1 %s\n", failed || n == 0 ? "not " : "", suite);
	printf("# kselftest_run: %d of %d failed%s\n", failed, n, n == 0 ? " (no program given)" : "");
	return finish(failed || n == 0);
}
