/*
 * MADV_HWPOISON and MADV_SOFT_OFFLINE (root only on both kernels): the
 * SIGBUS of a poisoned page (si_code, si_addr, si_addr_lsb) at madvise and
 * at every later touch, what /proc/self/pagemap says of it, the pages
 * around it, a poisoned page of a 2 MiB THP, of a file (read(2) is EIO
 * there) and one shared with a forked child; soft offlining of an
 * anonymous page (twice), of one page of a THP and of a 64 KiB mTHP, and
 * of a page-cache page: the same bytes at another frame, nobody signalled;
 * /proc/meminfo's HardwareCorrupted going up by 4 kB a frame; the errors.
 * Frame numbers are never printed, only whether they changed.
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
#include <sys/wait.h>

#define THP_DIR			"/sys/kernel/mm/transparent_hugepage"

static long corrupted_before;

/* HardwareCorrupted's growth since the last call, in kB. */
static void show_corrupted(const char *label)
{
	long now = hardware_corrupted_kb();

	say("%s: HardwareCorrupted +%ld kB", label, now - corrupted_before);
	corrupted_before = now;
}

static const char *bus_code_name(int code)
{
	switch (code) {
	case BUS_ADRERR: return "BUS_ADRERR";
	case BUS_MCEERR_AR: return "BUS_MCEERR_AR";
	case BUS_MCEERR_AO: return "BUS_MCEERR_AO";
	}
	return "other";
}

/* madvise(advice) of one page at p: its result, or the SIGBUS it raised. */
static void advise(const char *label, char *p, unsigned long len, int advice)
{
	buses = 0;
	if (sigsetjmp(env, 1) == 0) {
		errno = 0;
		long r = madvise(p, len, advice);

		show_result(label, r, errno);
		return;
	}
	say("%s: SIGBUS %s at the page: %s, lsb %d", label, bus_code_name(bus_code),
	    bus_addr == (void *)((uintptr_t)p & ~(PAGE - 1)) ? "yes" : "no", bus_lsb);
}

/* Read a byte of p: "read" and whether it was SIGBUS at the page. */
static void touch(const char *label, volatile char *p)
{
	buses = 0;
	if (sigsetjmp(env, 1) == 0) {
		char c = *p;

		say("%s: read %s", label, c ? "a byte" : "zero");
		return;
	}
	say("%s: SIGBUS %s at the page: %s", label, bus_code_name(bus_code),
	    bus_addr == (void *)((uintptr_t)p & ~(PAGE - 1)) ? "yes" : "no");
}

static void show_entry(const char *label, const void *p)
{
	uint64_t e = pagemap_of(p);

	say("%s: present %s, swap %s", label, e & PM_PRESENT ? "yes" : "no",
	    e & PM_SWAP ? "yes" : "no");
}

static int filled(const char *p, unsigned long len, char c, unsigned long skip_page)
{
	for (unsigned long i = 0; i < len; i++)
		if (i / PAGE != skip_page && p[i] != c)
			return 0;
	return 1;
}

static char *thp(char **raw)
{
	char *t;

	*raw = mmap(NULL, 4UL << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t = (char *)(((uintptr_t)*raw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	madvise(t, 2UL << 20, MADV_HUGEPAGE);
	memset(t, 't', 2UL << 20);
	return t;
}

static void errors(void)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	say("-- errors");
	munmap(p + PAGE, PAGE);
	advise("hwpoison, unaligned", p + 1, PAGE, MADV_HWPOISON);
	advise("soft offline, unaligned", p + 1, PAGE, MADV_SOFT_OFFLINE);
	advise("hwpoison, length 0", p, 0, MADV_HWPOISON);
	advise("soft offline, no mapping", p + PAGE, PAGE, MADV_SOFT_OFFLINE);
	advise("hwpoison, no mapping", p + PAGE, PAGE, MADV_HWPOISON);
	munmap(p, PAGE);
}

static void hwpoison(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *raw, *t;

	say("-- MADV_HWPOISON");
	memset(p, 'a', 4 * PAGE);
	advise("page 1", p + PAGE, PAGE, MADV_HWPOISON);
	show_corrupted("after it");
	show_entry("its entry", p + PAGE);
	touch("touch", p + PAGE + 100);
	touch("again", p + PAGE);
	yesno("the other pages kept", filled(p, 4 * PAGE, 'a', 1));
	advise("page 1 again", p + PAGE, PAGE, MADV_HWPOISON);
	show_corrupted("after it");
	munmap(p, 4 * PAGE);
	p = mmap(p, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	touch("mapped again", p + PAGE);
	munmap(p, 4 * PAGE);

	t = thp(&raw);
	advise("THP page 5", t + 5 * PAGE, PAGE, MADV_HWPOISON);
	show_corrupted("after it");
	touch("touch", t + 5 * PAGE);
	yesno("the other 511 pages kept", filled(t, 2UL << 20, 't', 5));
	show_entry("page 6", t + 6 * PAGE);
	munmap(raw, 4UL << 20);
}

static void shared_with_child(void)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int go[2], status = 0;
	pid_t pid;
	char c;

	say("-- a page shared with a child");
	memset(p, 'f', 2 * PAGE);
	if (pipe(go))
		say("pipe: %s", errname(errno));
	pid = fork();
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		touch("the child's touch", p);
		_exit(p[PAGE] == 'f' ? 0 : 5);
	}
	advise("page 0", p, PAGE, MADV_HWPOISON);
	show_corrupted("after it");
	if (write(go[1], "x", 1) != 1)
		say("pipe: %s", errname(errno));
	yesno("the child exited 0", waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	close(go[0]);
	close(go[1]);
	munmap(p, 2 * PAGE);
}

static void file_page(void)
{
	int fd = open("/tmp/diff-hwpoison", O_RDWR | O_CREAT | O_TRUNC, 0644);
	static char buf[2 * PAGE];
	char *p;

	say("-- a file page");
	memset(buf, 'F', PAGE);
	for (int i = 0; i < 4; i++)
		if (write(fd, buf, PAGE) != (ssize_t)PAGE)
			say("write: %s", errname(errno));
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	touch("page 1", p + PAGE);
	advise("page 1", p + PAGE, PAGE, MADV_HWPOISON);
	show_corrupted("after it");
	touch("touch", p + PAGE);
	yesno("pages 0 and 2 kept", p[0] == 'F' && p[2 * PAGE] == 'F');
	show("pread of page 1", pread(fd, buf, PAGE, PAGE));
	show("pread of pages 0-1", pread(fd, buf, 2 * PAGE, 0));
	show("pread of page 2", pread(fd, buf, PAGE, 2 * PAGE));
	munmap(p, 4 * PAGE);
	close(fd);
	unlink("/tmp/diff-hwpoison");
}

static void soft_offline(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *raw, *t, was[16] = "never", buf[16] = "";
	uint64_t old, first;
	int fd;

	say("-- MADV_SOFT_OFFLINE");
	memset(p, 's', 4 * PAGE);
	old = PM_PFN(pagemap_of(p + 2 * PAGE));
	advise("page 2", p + 2 * PAGE, PAGE, MADV_SOFT_OFFLINE);
	show_corrupted("after it");
	first = PM_PFN(pagemap_of(p + 2 * PAGE));
	yesno("another frame", first != old);
	show_entry("its entry", p + 2 * PAGE);
	yesno("every byte kept", filled(p, 4 * PAGE, 's', ~0UL));
	p[2 * PAGE] = 'w';
	yesno("written", p[2 * PAGE] == 'w');
	advise("page 2 again", p + 2 * PAGE, PAGE, MADV_SOFT_OFFLINE);
	show_corrupted("after it");
	yesno("another frame again", PM_PFN(pagemap_of(p + 2 * PAGE)) != first);
	munmap(p, 4 * PAGE);

	t = thp(&raw);
	old = PM_PFN(pagemap_of(t + 9 * PAGE));
	advise("THP page 9", t + 9 * PAGE, PAGE, MADV_SOFT_OFFLINE);
	show_corrupted("after it");
	yesno("page 9 on another frame", PM_PFN(pagemap_of(t + 9 * PAGE)) != old);
	yesno("page 8 where it was", PM_PFN(pagemap_of(t + 8 * PAGE)) == old - 1);
	yesno("every byte kept", filled(t, 2UL << 20, 't', ~0UL));
	munmap(raw, 4UL << 20);

	fd = open(THP_DIR "/hugepages-64kB/enabled", O_RDONLY);
	if (fd >= 0) {
		char line[64] = "", *open_, *close_;

		if (read(fd, line, sizeof(line) - 1) > 0 && (open_ = strchr(line, '[')) &&
		    (close_ = strchr(open_, ']')))
			snprintf(was, sizeof(was), "%.*s", (int)(close_ - open_ - 1), open_ + 1);
		close(fd);
	}
	fd = open(THP_DIR "/hugepages-64kB/enabled", O_WRONLY);
	if (fd < 0 || write(fd, "always", 6) != 6)
		say("64 KiB mTHP: %s", errname(errno));
	if (fd >= 0)
		close(fd);
	raw = mmap(NULL, 256 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t = (char *)(((uintptr_t)raw + 65535) & ~65535UL);
	memset(t, 'm', 65536);
	old = PM_PFN(pagemap_of(t + 3 * PAGE));
	yesno("mTHP pages 3 and 4 contiguous", PM_PFN(pagemap_of(t + 4 * PAGE)) == old + 1);
	advise("mTHP page 3", t + 3 * PAGE, PAGE, MADV_SOFT_OFFLINE);
	show_corrupted("after it");
	yesno("page 3 on another frame", PM_PFN(pagemap_of(t + 3 * PAGE)) != old);
	yesno("page 4 where it was", PM_PFN(pagemap_of(t + 4 * PAGE)) == old + 1);
	yesno("every byte kept", filled(t, 65536, 'm', ~0UL));
	munmap(raw, 256 * 1024);
	fd = open(THP_DIR "/hugepages-64kB/enabled", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, was, strlen(was)) < 0)
			say("64 KiB mTHP back: %s", errname(errno));
		close(fd);
	}

	fd = open("/tmp/diff-soft-offline", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (ftruncate(fd, 2 * PAGE))
		say("ftruncate: %s", errname(errno));
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	strcpy(p + PAGE, "cache bytes");
	old = PM_PFN(pagemap_of(p + PAGE));
	advise("file page 1", p + PAGE, PAGE, MADV_SOFT_OFFLINE);
	show_corrupted("after it");
	yesno("another frame", PM_PFN(pagemap_of(p + PAGE)) != old);
	show("pread", pread(fd, buf, 11, PAGE));
	yesno("the bytes", !memcmp(buf, "cache bytes", 11));
	strcpy(p + PAGE, "after");
	show("pread after a write", pread(fd, buf, 5, PAGE));
	yesno("the new bytes", !memcmp(buf, "after", 5));
	munmap(p, 2 * PAGE);
	close(fd);
	unlink("/tmp/diff-soft-offline");
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };

	diff_begin("hwpoison");
	sigaction(SIGBUS, &sa, NULL);
	corrupted_before = hardware_corrupted_kb();
	say("HardwareCorrupted there: %s", corrupted_before >= 0 ? "yes" : "no");
	errors();
	hwpoison();
	shared_with_child();
	file_page();
	soft_offline();
	show_corrupted("at the end");
	return 0;
}
