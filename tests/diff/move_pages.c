/*
 * move_pages and migrate_pages: the per-page statuses of query and move
 * mode (node, -ENOENT, -EFAULT, -EACCES, -EBUSY), the call's errors in
 * Linux's order, small pages, a 64 KiB mTHP and a 2 MiB THP moving whole
 * between the DRAM nodes and onto the slow CPU-less node 2, a page shared
 * after fork (refused without MPOL_MF_MOVE_ALL, moved with it, copy-on-write
 * right after), another process's pages by pid, and migrate_pages between
 * node masks. Every byte is checked after each move. Pages are first bound
 * to a node with mbind, so that where they start does not depend on the CPU
 * the program runs on. Automatic NUMA balancing (on by default in Linux on
 * a NUMA machine) is turned off first where it exists, so that nothing else
 * moves the pages while the program looks at them.
 */
#include "diff.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "mempolicy_uapi.h"

#define PAGE		4096UL
#define THP_DIR		"/sys/kernel/mm/transparent_hugepage"

static long move_pages_(int pid, unsigned long n, void **pages, const int *nodes, int *status,
			int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

static long migrate_pages_(int pid, unsigned long maxnode, unsigned long old, unsigned long new)
{
	return syscall(SYS_migrate_pages, pid, maxnode, &old, &new);
}

/* An errno value of a status as its name, a node as its number. */
static const char *status_name(int s)
{
	static char buf[16];

	if (s >= 0) {
		snprintf(buf, sizeof(buf), "%d", s);
		return buf;
	}
	return errname(-s);
}

static void show_statuses(const char *label, const int *status, unsigned long n)
{
	char line[512];
	int len = snprintf(line, sizeof(line), "%s:", label);

	for (unsigned long i = 0; i < n && len < (int)sizeof(line) - 16; i++)
		len += snprintf(line + len, sizeof(line) - len, " %s", status_name(status[i]));
	say("%s", line);
}

/* move_pages of n pages from p with one target (or none: a query); its return and the statuses. */
static void move_range(const char *label, char *p, unsigned long n, int node, int flags)
{
	void *pages[64];
	int nodes[64], status[64];
	char what[128];

	for (unsigned long i = 0; i < n; i++) {
		pages[i] = p + i * PAGE;
		nodes[i] = node;
		status[i] = -1000;
	}
	snprintf(what, sizeof(what), "%s returns", label);
	show(what, move_pages_(0, n, pages, node < 0 ? NULL : nodes, status, flags));
	snprintf(what, sizeof(what), "%s statuses", label);
	show_statuses(what, status, n);
}

#define query(label, p, n)	move_range(label, p, n, -1, 0)

static void fill(char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i += 64)
		p[i] = (char)(seed + i / 64);
}

static int same(const char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i += 64)
		if (p[i] != (char)(seed + i / 64))
			return 0;
	return 1;
}

/* n pages bound to node, written: they are on node. */
static char *map_on(unsigned long n, int node, int shared)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	unsigned long mask = 1UL << node;

	if (p == MAP_FAILED)
		return NULL;
	syscall(SYS_mbind, p, n * PAGE, MPOL_BIND, &mask, 64UL, 0UL);
	return p;
}

static long vmstat(const char *name)
{
	static char buf[16384];
	int fd = open("/proc/vmstat", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	size_t len = strlen(name);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, len) && l[len] == ' ')
			return atol(l + len + 1);
	return -1;
}

static void write_setting(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, value, strlen(value)) < 0)
			say("writing %s: %s", path, errname(errno));
		close(fd);
	} else {
		say("opening %s: %s", path, errname(errno));
	}
}

/* The word in brackets of a THP setting ("always [madvise] never"), to put it back after. */
static void read_setting(const char *path, char *word, size_t size)
{
	char buf[128] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	char *open_ = n > 0 ? strchr(buf, '[') : NULL, *close_ = open_ ? strchr(open_, ']') : NULL;

	if (fd >= 0)
		close(fd);
	snprintf(word, size, "%.*s", close_ ? (int)(close_ - open_ - 1) : 5, close_ ? open_ + 1 : "never");
}

static void query_mode(void)
{
	char *p = map_on(5, 1, 0);
	volatile char c;

	say("-- query");
	p[0] = 1;			/* a page on node 1 */
	c = p[2 * PAGE];		/* the zero page */
	(void)c;
	p[4 * PAGE] = 1;
	munmap(p + 3 * PAGE, PAGE);	/* no VMA */
	query("page, untouched, zero page, hole, page", p, 5);
	{
		void *pages[1] = { p + 123 };	/* an address inside the page */
		int status = -1000;

		show("unaligned address returns", move_pages_(0, 1, pages, NULL, &status, 0));
		say("unaligned address status: %s", status_name(status));
	}
	show("no pages", move_pages_(0, 0, NULL, NULL, NULL, 0));
	munmap(p, 3 * PAGE);
	munmap(p + 4 * PAGE, PAGE);
}

static void errors(void)
{
	char *p = map_on(1, 0, 0);
	void *pages[1] = { p };
	int node = 1, bad = 7, neg = -1, huge = 5000, status = -1000;

	say("-- errors");
	p[0] = 1;
	show("flag 8", move_pages_(0, 1, pages, &node, &status, 8));
	show("flag MPOL_MF_STRICT", move_pages_(0, 1, pages, &node, &status, MPOL_MF_STRICT));
	show("node 7 (none)", move_pages_(0, 1, pages, &bad, &status, MPOL_MF_MOVE));
	show("node -1", move_pages_(0, 1, pages, &neg, &status, MPOL_MF_MOVE));
	show("node 5000", move_pages_(0, 1, pages, &huge, &status, MPOL_MF_MOVE));
	say("status after the node errors: %s", status_name(status));
	show("no such pid", move_pages_(999999, 1, pages, &node, &status, MPOL_MF_MOVE));
	show("pages unreadable", move_pages_(0, 1, (void **)8, &node, &status, MPOL_MF_MOVE));
	show("nodes unreadable", move_pages_(0, 1, pages, (int *)8, &status, MPOL_MF_MOVE));
	show("status unwritable, query", move_pages_(0, 1, pages, NULL, (int *)8, 0));
	show("status unwritable, move", move_pages_(0, 1, pages, &node, (int *)8, MPOL_MF_MOVE));
	show("migrate_pages, no new node", migrate_pages_(0, 8, 1, 0));
	show("migrate_pages, new node 7", migrate_pages_(0, 8, 1, 1UL << 7));
	show("migrate_pages, no such pid", migrate_pages_(999999, 8, 1, 2));
	show("migrate_pages, maxnode huge", migrate_pages_(0, 1UL << 40, 1, 2));
	munmap(p, PAGE);
}

static void small_pages(void)
{
	unsigned long n = 8;
	char *p = map_on(n, 0, 0);
	void *pages[4];
	int nodes[4] = { 1, 2, 0, 1 }, status[4];

	say("-- small pages");
	fill(p, n * PAGE, 3);
	query("bound to node 0", p, n);
	move_range("to node 1", p, n, 1, MPOL_MF_MOVE);
	query("after", p, n);
	yesno("bytes kept", same(p, n * PAGE, 3));
	move_range("to node 2 (slow)", p, n, 2, MPOL_MF_MOVE);
	query("after", p, n);
	yesno("bytes kept", same(p, n * PAGE, 3));
	move_range("to node 2 again", p, 2, 2, MPOL_MF_MOVE);
	for (int i = 0; i < 4; i++)
		pages[i] = p + i * PAGE;
	show("each to its own node returns", move_pages_(0, 4, pages, nodes, status, MPOL_MF_MOVE));
	show_statuses("each to its own node statuses", status, 4);
	query("after", p, 4);
	yesno("bytes kept", same(p, n * PAGE, 3));
	p[5 * PAGE] = 9;
	yesno("writable after the moves", p[5 * PAGE] == 9);
	munmap(p, n * PAGE);
}

/* One 64 KiB folio (the 64 KiB size enabled through sysfs on both kernels). */
static void mthp(void)
{
	char *raw = map_on(64, 0, 0), *p, was[16];
	long before;

	say("-- 64 KiB mTHP");
	read_setting(THP_DIR "/hugepages-64kB/enabled", was, sizeof(was));
	write_setting(THP_DIR "/hugepages-64kB/enabled", "always");
	p = (char *)(((uintptr_t)raw + 65535) & ~65535UL);
	fill(p, 65536, 11);
	before = vmstat("pgmigrate_success");
	{
		void *pages[2] = { p, p + 5 * PAGE };
		int nodes[2] = { 1, 1 }, status[2] = { -1000, -1000 };

		show("two pages of the folio returns", move_pages_(0, 2, pages, nodes, status, MPOL_MF_MOVE));
		show_statuses("two pages of the folio statuses", status, 2);
	}
	query("all 16 pages", p, 16);
	yesno("bytes kept", same(p, 65536, 11));
	yesno("pgmigrate_success grew by at least 16", vmstat("pgmigrate_success") >= before + 16);
	move_range("the last page to node 2", p + 15 * PAGE, 1, 2, MPOL_MF_MOVE);
	query("all 16 pages", p, 16);
	yesno("bytes kept", same(p, 65536, 11));
	write_setting(THP_DIR "/hugepages-64kB/enabled", was);
	munmap(raw, 64 * PAGE);
}

static void thp(void)
{
	size_t len = 4UL << 20;
	char *raw = map_on(len / PAGE, 0, 0), *p, was[16];
	long before;

	say("-- 2 MiB THP");
	read_setting(THP_DIR "/enabled", was, sizeof(was));
	write_setting(THP_DIR "/enabled", "madvise");
	p = (char *)(((uintptr_t)raw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	madvise(p, 2UL << 20, MADV_HUGEPAGE);
	fill(p, 2UL << 20, 21);
	before = vmstat("thp_migration_success");
	move_range("its page 7 to node 1", p + 7 * PAGE, 1, 1, MPOL_MF_MOVE);
	query("first, middle and last", p, 1);
	query("middle", p + 256 * PAGE, 1);
	query("last", p + 511 * PAGE, 1);
	yesno("bytes kept", same(p, 2UL << 20, 21));
	yesno("thp_migration_success grew", vmstat("thp_migration_success") > before);
	move_range("its first page to node 2", p, 1, 2, MPOL_MF_MOVE);
	query("last", p + 511 * PAGE, 1);
	yesno("bytes kept", same(p, 2UL << 20, 21));
	write_setting(THP_DIR "/enabled", was);
	munmap(raw, len);
}

/* A private page shared after fork; then another process's pages by pid. */
static void other_processes(void)
{
	char *p = map_on(4, 0, 0);
	int go[2], done[2], wst;
	pid_t pid;
	char c;

	say("-- fork and other processes");
	fill(p, 4 * PAGE, 31);
	if (pipe(go) || pipe(done))
		say("pipe: %s", errname(errno));
	pid = fork();
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)	/* the parent moved page 0 */
			_exit(2);
		p[3 * PAGE] = 'x';		/* the child's own copy of page 3 */
		if (write(done[1], "x", 1) != 1)
			_exit(2);
		if (read(go[0], &c, 1) != 1)	/* the parent moved our page 3 */
			_exit(2);
		_exit(p[0] == 31 && p[3 * PAGE] == 'x' ? 0 : 1);
	}
	move_range("shared page 0, MOVE", p, 1, 1, MPOL_MF_MOVE);
	move_range("shared page 0, MOVE_ALL", p, 1, 1, MPOL_MF_MOVE_ALL);
	p[PAGE] = 'p';			/* the parent's own copy of page 1 */
	move_range("page 1, copied, MOVE", p + PAGE, 1, 2, MPOL_MF_MOVE);
	if (write(go[1], "x", 1) != 1 || read(done[0], &c, 1) != 1)
		say("pipe: %s", errname(errno));
	{
		void *pages[2] = { p, p + 3 * PAGE };
		int nodes[2] = { 2, 2 }, status[2] = { -1000, -1000 };

		show("the child's pages 0 and 3 to node 2 returns",
		     move_pages_(pid, 2, pages, nodes, status, MPOL_MF_MOVE));
		show_statuses("the child's pages 0 and 3 to node 2 statuses", status, 2);
		show("query of the child returns", move_pages_(pid, 2, pages, NULL, status, 0));
		show_statuses("query of the child statuses", status, 2);
	}
	if (write(go[1], "x", 1) != 1)
		say("pipe: %s", errname(errno));
	yesno("child saw its bytes",
	      waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	yesno("parent keeps its bytes", p[0] == 31 && p[PAGE] == 'p');
	query("parent's pages", p, 4);
	{
		void *pages[1] = { p };
		int node = 1, status = -1000;

		show("the reaped child", move_pages_(pid, 1, pages, &node, &status, MPOL_MF_MOVE));
	}
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	munmap(p, 4 * PAGE);
}

/* A MAP_SHARED page: alone it moves with MOVE; mapped by two processes it needs MOVE_ALL. */
static void shared_mapping(void)
{
	char *p = map_on(2, 0, 1);
	int go[2], wst;
	pid_t pid;
	char c;

	say("-- MAP_SHARED");
	fill(p, 2 * PAGE, 41);
	move_range("page 0, one process, MOVE", p, 1, 1, MPOL_MF_MOVE);
	if (pipe(go))
		say("pipe: %s", errname(errno));
	pid = fork();
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(same(p, PAGE, 41) && p[PAGE + 64] == 'z' ? 0 : 1);
	}
	move_range("both pages, two processes, MOVE", p, 2, 2, MPOL_MF_MOVE);
	move_range("both pages, two processes, MOVE_ALL", p, 2, 2, MPOL_MF_MOVE_ALL);
	p[PAGE + 64] = 'z';
	if (write(go[1], "x", 1) != 1)
		say("pipe: %s", errname(errno));
	yesno("the other process sees the moved pages and the write",
	      waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	close(go[0]);
	close(go[1]);
	munmap(p, 2 * PAGE);
}

static void migrate_between_masks(void)
{
	unsigned long n = 8;
	char *p = map_on(n, 0, 0);
	long r;

	say("-- migrate_pages");
	fill(p, n * PAGE, 51);
	/* Its own policy is bind to node 0: mbind a default one so that the pages may go. */
	syscall(SYS_mbind, p, n * PAGE, MPOL_DEFAULT, NULL, 0UL, 0UL);
	r = migrate_pages_(0, 8, 1UL << 0, 1UL << 2);
	yesno("node 0 to node 2 returns 0 or more", r >= 0);
	query("after", p, n);
	yesno("bytes kept", same(p, n * PAGE, 51));
	r = migrate_pages_(0, 64, (1UL << 1) | (1UL << 2), 1UL << 1);
	yesno("nodes 1-2 to node 1 returns 0 or more", r >= 0);
	query("after", p, n);
	yesno("bytes kept", same(p, n * PAGE, 51));
	show("node 1 to node 1", migrate_pages_(0, 8, 1UL << 1, 1UL << 1));
	query("after", p, n);
	munmap(p, n * PAGE);
}

int main(void)
{
	diff_begin("move_pages");
	{
		int fd = open("/proc/sys/kernel/numa_balancing", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "0", 1) < 0)
				say("numa_balancing: %s", errname(errno));
			close(fd);
		}
	}
	query_mode();
	errors();
	small_pages();
	mthp();
	thp();
	other_processes();
	shared_mapping();
	migrate_between_masks();
	return 0;
}
