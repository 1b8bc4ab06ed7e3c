/*
 * Per-VMA memory policies from ring 3, through the raw system calls (the
 * same binary runs on Linux 6.12, whose rules these are): mbind's errno
 * rules, VMAs split and merged by policy (counted in /proc/self/maps),
 * where pages land under each VMA policy (get_mempolicy with
 * MPOL_F_NODE | MPOL_F_ADDR), what get_mempolicy(MPOL_F_ADDR) reports,
 * MPOL_MF_STRICT and MPOL_MF_MOVE on pages already there, fork keeping VMA
 * policies, set_mempolicy_home_node, /proc/self/numa_maps lines and the
 * nodes' numastat and vmstat counters, and MPOL_WEIGHTED_INTERLEAVE with
 * the sysfs weights. Prints KTAP; exits 0 when all passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "proc_files.h"
#include "mempolicy_uapi.h"

#define PAGE			4096UL
#define NPAGES			16

static unsigned long mem_nodes;		/* nodes with memory, from sysfs */
static int first_node, last_node;

static long mbind_(void *start, unsigned long len, int mode, unsigned long mask, unsigned int flags)
{
	return syscall(SYS_mbind, start, len, mode, mask ? &mask : NULL, mask ? 64 : 0, flags);
}

static long home_node(void *start, unsigned long len, unsigned long node, unsigned long flags)
{
	return syscall(SYS_set_mempolicy_home_node, start, len, node, flags);
}

static long set_pol(int mode, unsigned long mask)
{
	return syscall(SYS_set_mempolicy, mode, mask ? &mask : NULL, mask ? 64 : 0);
}

/* The VMA policy at addr: its mode (with flags) and nodes in *nodes; -1 on error. */
static int vma_pol(void *addr, unsigned long *nodes)
{
	unsigned long m = 0;
	int mode = -1;

	if (syscall(SYS_get_mempolicy, &mode, &m, 64, addr, MPOL_F_ADDR))
		return -1;
	if (nodes)
		*nodes = m;
	return mode;
}

/* The node of the page at addr (faulted in by a read if need be), or -1. */
static int node_of(void *addr)
{
	int node = -1;

	return syscall(SYS_get_mempolicy, &node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR) ? -1 : node;
}

static char *map(unsigned long pages)
{
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void touch(char *p, unsigned long pages)
{
	for (unsigned long i = 0; i < pages; i++)
		p[i * PAGE] = 1;
}

/*
 * Pages of [p, p + pages) not on node want; want < 0: interleaved over
 * mask, page i on the n-th node for its interleave index first + i.
 */
static int misplaced_from(char *p, unsigned long pages, int want, unsigned long mask,
			  unsigned long first)
{
	int bad = 0;

	for (unsigned long i = 0; i < pages; i++) {
		int node = node_of(p + i * PAGE), w = want;

		if (w < 0) {
			unsigned long m = mask, n = (first + i) % (unsigned long)__builtin_popcountl(mask);

			while (n--)
				m &= m - 1;
			w = __builtin_ctzl(m);
		}
		if (node != w && bad++ < 3)
			printf("    # page %lu at %p on node %d, want %d\n", i, (void *)(p + i * PAGE),
			       node, w);
	}
	return bad;
}

/* The same, the interleave index of a page its page number (an anonymous VMA never moved). */
static int misplaced(char *p, unsigned long pages, int want, unsigned long mask)
{
	return misplaced_from(p, pages, want, mask, (unsigned long)p / PAGE);
}

/* How many VMAs of /proc/self/maps meet [p, p + len). */
static int vmas_in(char *p, unsigned long len)
{
	static char buf[65536];
	int n = 0;

	if (slurp("/proc/self/maps", buf, sizeof(buf)) <= 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long s = strtoul(l, NULL, 16), e = strtoul(strchr(l, '-') + 1, NULL, 16);

		n += s < (unsigned long)p + len && e > (unsigned long)p;
	}
	return n;
}

/* The /proc/self/numa_maps line of the VMA starting at p, without its newline ("" if none). */
static const char *numa_maps_line(char *p)
{
	static char buf[65536], line[512];
	char want[32];

	line[0] = '\0';
	snprintf(want, sizeof(want), "%08lx ", (unsigned long)p);
	if (slurp("/proc/self/numa_maps", buf, sizeof(buf)) <= 0)
		return line;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, want, strlen(want))) {
			size_t n = strcspn(l, "\n");
			char *active;

			snprintf(line, sizeof(line), "%.*s", (int)n, l);
			/* Linux's LRU state, which Quire does not have: left out of the comparison. */
			active = strstr(line, " active=");
			if (active)
				memmove(active, active + 1 + strcspn(active + 1, " "),
					strlen(active + 1 + strcspn(active + 1, " ")) + 1);
			break;
		}
	return line;
}

static void errors(void)
{
	char *p = map(3);
	unsigned long one = 1UL << first_node;

	CHECK(p != NULL);
	CHECK(mbind_(p + 1, PAGE, MPOL_BIND, one, 0) == -1 && errno == EINVAL);	/* unaligned */
	CHECK(mbind_(p, PAGE, MPOL_MAX, one, 0) == -1 && errno == EINVAL);
	CHECK(mbind_(p, PAGE, MPOL_BIND | MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES, one, 0) == -1 &&
	      errno == EINVAL);
	CHECK(mbind_(p, PAGE, MPOL_BIND, one, MPOL_MF_LAZY) == -1 && errno == EINVAL);
	CHECK(mbind_(p, PAGE, MPOL_BIND, one, 1u << 20) == -1 && errno == EINVAL);
	CHECK(mbind_(p, PAGE, MPOL_DEFAULT, one, 0) == -1 && errno == EINVAL);	/* DEFAULT takes no nodes */
	CHECK(mbind_(p, PAGE, MPOL_BIND, 0, 0) == -1 && errno == EINVAL);	/* empty */
	CHECK(mbind_(p, PAGE, MPOL_LOCAL, one, 0) == -1 && errno == EINVAL);
	CHECK(mbind_(p, PAGE, MPOL_BIND, 1UL << 40, 0) == -1 && errno == EINVAL);	/* no such node */
	CHECK(syscall(SYS_mbind, p, PAGE, MPOL_BIND, (void *)16, 64, 0) == -1 && errno == EFAULT);
	/* The mode and the mask are checked before the flags and the range. */
	CHECK(syscall(SYS_mbind, p + 1, PAGE, MPOL_BIND, (void *)16, 64, 0) == -1 && errno == EFAULT);
	CHECK(mbind_(p + 1, PAGE, MPOL_BIND, one, MPOL_MF_LAZY) == -1 && errno == EINVAL);
	/* An empty range succeeds before the policy is checked; one that wraps is EINVAL. */
	CHECK(mbind_(p, 0, MPOL_BIND, 0, 0) == 0);
	CHECK(mbind_(p + PAGE, -2 * PAGE, MPOL_BIND, one, 0) == -1 && errno == EINVAL);
	/* MPOL_MF_MOVE_ALL: root (CAP_SYS_NICE) may; nothing present, nothing to move. */
	CHECK(mbind_(p, 3 * PAGE, MPOL_BIND, one, MPOL_MF_MOVE_ALL | MPOL_MF_STRICT) == 0);
	CHECK(vma_pol(p + 2 * PAGE, NULL) == MPOL_BIND);
	CHECK(mbind_(p, 3 * PAGE, MPOL_DEFAULT, 0, 0) == 0);
	/* Holes: none mapped, at the head, in the middle, at the tail (len rounded up). */
	CHECK(munmap(p + PAGE, PAGE) == 0);
	CHECK(mbind_(p + PAGE, PAGE, MPOL_BIND, one, 0) == -1 && errno == EFAULT);
	CHECK(mbind_(p + PAGE, 2 * PAGE, MPOL_BIND, one, 0) == -1 && errno == EFAULT);
	CHECK(mbind_(p, 3 * PAGE, MPOL_BIND, one, 0) == -1 && errno == EFAULT);
	CHECK(mbind_(p, PAGE + 1, MPOL_BIND, one, 0) == -1 && errno == EFAULT);
	CHECK(mbind_(p, PAGE - 1, MPOL_BIND, one, 0) == 0);
	CHECK(vma_pol(p + 2 * PAGE, NULL) == MPOL_DEFAULT);	/* the failed calls changed nothing */
	/* MPOL_DEFAULT may span holes, but not a range with no VMA at all. */
	CHECK(mbind_(p, 3 * PAGE, MPOL_DEFAULT, 0, MPOL_MF_STRICT) == 0);
	CHECK(vma_pol(p, NULL) == MPOL_DEFAULT);
	CHECK(mbind_(p + PAGE, PAGE, MPOL_DEFAULT, 0, 0) == -1 && errno == EFAULT);
	CHECK(vma_pol(p + PAGE, NULL) == -1 && errno == EFAULT);	/* get_mempolicy: unmapped */
	munmap(p, 3 * PAGE);
	ktap_report("errors", NULL);
}

static void split_and_merge(void)
{
	char *p = map(4);
	unsigned long one = 1UL << first_node, got = 0;

	CHECK(p != NULL && vmas_in(p, 4 * PAGE) == 1);
	CHECK(mbind_(p + PAGE, 2 * PAGE, MPOL_BIND, one, 0) == 0);
	CHECK(vmas_in(p, 4 * PAGE) == 3);
	CHECK(vma_pol(p, NULL) == MPOL_DEFAULT && vma_pol(p + 3 * PAGE, NULL) == MPOL_DEFAULT);
	CHECK(vma_pol(p + PAGE, &got) == MPOL_BIND && got == one);
	CHECK(vma_pol(p + 2 * PAGE, &got) == MPOL_BIND && got == one);
	/* The same policy again: nothing splits. */
	CHECK(mbind_(p + 2 * PAGE, PAGE, MPOL_BIND, one, 0) == 0);
	CHECK(vmas_in(p, 4 * PAGE) == 3);
	/* The first page gets it too: it joins its neighbour. */
	CHECK(mbind_(p, PAGE, MPOL_BIND, one, 0) == 0);
	CHECK(vmas_in(p, 4 * PAGE) == 2);
	/* Equal modes with other flags are other policies. */
	CHECK(mbind_(p, PAGE, MPOL_BIND | MPOL_F_STATIC_NODES, one, 0) == 0);
	CHECK(vmas_in(p, 4 * PAGE) == 3);
	CHECK(vma_pol(p, &got) == (MPOL_BIND | MPOL_F_STATIC_NODES) && got == one);
	/* Back to the default (whose flags are not kept): one VMA again. */
	CHECK(mbind_(p, 4 * PAGE, MPOL_DEFAULT | MPOL_F_STATIC_NODES, 0, 0) == 0);
	CHECK(vmas_in(p, 4 * PAGE) == 1);
	CHECK(vma_pol(p, &got) == MPOL_DEFAULT && got == 0);
	munmap(p, 4 * PAGE);
	ktap_report("split_and_merge", NULL);
}

/* NPAGES fresh pages under a VMA policy, the task's policy pointing elsewhere. */
static int placed(int mode, unsigned long mask, int want)
{
	char *p = map(NPAGES);
	int bad;

	if (!p || mbind_(p, NPAGES * PAGE, mode, mask, 0))
		return -1;
	touch(p, NPAGES);
	bad = misplaced(p, NPAGES, want, mask);
	munmap(p, NPAGES * PAGE);
	return bad;
}

static void vma_policy_places_pages(void)
{
	for (int n = 0; n < 64; n++) {
		unsigned long m = 1UL << n;
		int other = n == first_node ? last_node : first_node;

		if (!(mem_nodes & m))
			continue;
		CHECK(set_pol(MPOL_BIND, 1UL << other) == 0);	/* the VMA's policy wins */
		CHECK(placed(MPOL_BIND, m, n) == 0);
		CHECK(placed(MPOL_PREFERRED, m, n) == 0);
		CHECK(placed(MPOL_PREFERRED_MANY, m, n) == 0);
		/* A VMA with the default policy follows the task's. */
		CHECK(placed(MPOL_DEFAULT, 0, other) == 0);
	}
	if (__builtin_popcountl(mem_nodes) > 1)
		CHECK(placed(MPOL_INTERLEAVE, mem_nodes, -1) == 0);
	CHECK(set_pol(MPOL_DEFAULT, 0) == 0);
	ktap_report("vma_policy_places_pages", NULL);
}

static void strict_and_move(void)
{
	unsigned long a = 1UL << first_node, b = 1UL << last_node;
	char *p = map(NPAGES);
	int pipefd[2], status = -1;
	long r;
	pid_t pid;

	if (a == b) {
		munmap(p, NPAGES * PAGE);
		ktap_report("strict_and_move", "one node with memory");
		return;
	}
	CHECK(p != NULL && mbind_(p, NPAGES * PAGE, MPOL_BIND, a, 0) == 0);
	touch(p, NPAGES);
	CHECK(misplaced(p, NPAGES, first_node, 0) == 0);
	/* Pages where the policy wants them: STRICT is content. */
	CHECK(mbind_(p, NPAGES * PAGE, MPOL_BIND, a | b, MPOL_MF_STRICT) == 0);
	/* Misplaced under STRICT alone: EIO, and the policy stays as it was. */
	CHECK(mbind_(p, NPAGES * PAGE, MPOL_BIND, b, MPOL_MF_STRICT) == -1 && errno == EIO);
	CHECK(vma_pol(p, NULL) == MPOL_BIND);
	{
		unsigned long got = 0;

		CHECK(vma_pol(p, &got) == MPOL_BIND && got == (a | b));
	}
	/* A page mapped twice (after fork) is left by MOVE, and that is no failure. */
	CHECK(pipe(pipefd) == 0);
	pid = fork();
	if (pid == 0) {
		char c;

		close(pipefd[1]);
		_exit(read(pipefd[0], &c, 1) == 0 ? 0 : 1);
	}
	close(pipefd[0]);
	CHECK(mbind_(p, PAGE, MPOL_BIND, b, MPOL_MF_MOVE | MPOL_MF_STRICT) == 0);
	CHECK(node_of(p) == first_node);
	CHECK(strstr(numa_maps_line(p), " mapmax=2 ") != NULL);	/* numa_maps sees it shared */
	close(pipefd[1]);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Mapped once: MOVE moves it, with its bytes; STRICT is then satisfied. */
	p[PAGE + 100] = 'm';
	r = mbind_(p + PAGE, PAGE, MPOL_BIND, b, MPOL_MF_MOVE | MPOL_MF_STRICT);
	CHECK(r == 0);
	CHECK(node_of(p + PAGE) == last_node);
	CHECK(p[PAGE + 100] == 'm');
	CHECK(vma_pol(p + PAGE, NULL) == MPOL_BIND);
	munmap(p, NPAGES * PAGE);
	ktap_report("strict_and_move", NULL);
}

/*
 * mremap takes the policy along; an anonymous VMA that has pages keeps
 * its page offsets, and interleave goes by them (Linux's index), not by
 * the new addresses.
 */
static void mremap_keeps_vma_policy(void)
{
	char *room = map(NPAGES + 2), *p = map(NPAGES), *q;
	unsigned long got = 0, first = (unsigned long)p / PAGE;

	CHECK(room && p && mbind_(p, NPAGES * PAGE, MPOL_INTERLEAVE, mem_nodes, 0) == 0);
	p[0] = 1;					/* an anon_vma: the offsets stay */
	q = mremap(p, NPAGES * PAGE, NPAGES * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, room + PAGE);
	CHECK(q == room + PAGE);
	CHECK(vma_pol(q, &got) == MPOL_INTERLEAVE && got == mem_nodes);
	touch(q, NPAGES);
	CHECK(misplaced_from(q, NPAGES, -1, mem_nodes, first) == 0);
	munmap(room, (NPAGES + 2) * PAGE);
	ktap_report("mremap_keeps_vma_policy", NULL);
}

static void fork_keeps_vma_policy(void)
{
	unsigned long m = 1UL << last_node;
	char *p = map(NPAGES);
	int status = -1;
	pid_t pid;

	CHECK(p != NULL && mbind_(p, NPAGES * PAGE, MPOL_BIND, m, 0) == 0);
	pid = fork();
	if (pid == 0) {
		unsigned long got = 0;

		touch(p, NPAGES);
		_exit(vma_pol(p, &got) != MPOL_BIND || got != m || vmas_in(p, NPAGES * PAGE) != 1 ||
		      misplaced(p, NPAGES, last_node, 0) ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	munmap(p, NPAGES * PAGE);
	ktap_report("fork_keeps_vma_policy", NULL);
}

static void home_node_rules(void)
{
	char *p = map(NPAGES), *q = map(2);
	unsigned long one = 1UL << first_node;

	CHECK(p != NULL && q != NULL);
	CHECK(home_node(p + 1, PAGE, first_node, 0) == -1 && errno == EINVAL);
	CHECK(home_node(p, PAGE, first_node, 1) == -1 && errno == EINVAL);
	CHECK(home_node(p, PAGE, 64, 0) == -1 && errno == EINVAL);
	CHECK(home_node(p, PAGE, 1UL << 32, 0) == -1 && errno == EINVAL);
	CHECK(home_node(p, 0, first_node, 0) == 0);
	/* No VMA with a policy: ENOENT. A policy that is not BIND or PREFERRED_MANY: EOPNOTSUPP. */
	CHECK(home_node(q, 2 * PAGE, first_node, 0) == -1 && errno == ENOENT);
	CHECK(mbind_(q, PAGE, MPOL_PREFERRED, one, 0) == 0);
	CHECK(home_node(q, 2 * PAGE, first_node, 0) == -1 && errno == EOPNOTSUPP);
	CHECK(mbind_(q, 2 * PAGE, MPOL_PREFERRED_MANY, one, 0) == 0);
	CHECK(home_node(q, 2 * PAGE, first_node, 0) == 0);
	/* BIND over every node: pages go to the home node first. */
	CHECK(mbind_(p, NPAGES * PAGE, MPOL_BIND, mem_nodes, 0) == 0);
	CHECK(home_node(p, NPAGES / 2 * PAGE, last_node, 0) == 0);
	CHECK(home_node(p + NPAGES / 2 * PAGE, NPAGES / 2 * PAGE, first_node, 0) == 0);
	CHECK(vmas_in(p, NPAGES * PAGE) == (first_node == last_node ? 1 : 2));
	CHECK(vma_pol(p, NULL) == MPOL_BIND);
	touch(p, NPAGES);
	CHECK(misplaced(p, NPAGES / 2, last_node, 0) == 0);
	CHECK(misplaced(p + NPAGES / 2 * PAGE, NPAGES / 2, first_node, 0) == 0);
	munmap(p, NPAGES * PAGE);
	munmap(q, 2 * PAGE);
	ktap_report("home_node_rules", NULL);
}

/* numa_maps' line for a fresh VMA of 4 pages, 3 of them written, under mode and mask. */
static int numa_maps_is(int mode, unsigned long mask, const char *policy, int want_node)
{
	char *p = map(4), want[256];
	const char *line;

	if (!p || mbind_(p, 4 * PAGE, mode, mask, 0))
		return 0;
	snprintf(want, sizeof(want), "%08lx %s", (unsigned long)p, policy);
	line = numa_maps_line(p);
	if (strcmp(line, want)) {
		printf("    # untouched: \"%s\", want \"%s\"\n", line, want);
		return 0;
	}
	touch(p, 3);
	snprintf(want, sizeof(want), "%08lx %s anon=3 dirty=3 N%d=3 kernelpagesize_kB=4",
		 (unsigned long)p, policy, want_node);
	line = numa_maps_line(p);
	munmap(p, 4 * PAGE);
	if (strcmp(line, want))
		printf("    # \"%s\", want \"%s\"\n", line, want);
	return !strcmp(line, want);
}

static void numa_maps_lines(void)
{
	char bind[64], stat[64], rel[64], pref[64], many[64], wil[64], il[64];
	static char buf[65536];
	unsigned long m = 1UL << last_node;

	snprintf(bind, sizeof(bind), "bind:%d", last_node);
	snprintf(stat, sizeof(stat), "bind=static:%d", last_node);
	snprintf(rel, sizeof(rel), "bind=relative:%d", first_node);	/* bit 0: the first node */
	snprintf(pref, sizeof(pref), "prefer:%d", last_node);
	snprintf(many, sizeof(many), "prefer (many):%d", last_node);
	snprintf(wil, sizeof(wil), "weighted interleave:%d", last_node);
	CHECK(numa_maps_is(MPOL_BIND, m, bind, last_node));
	CHECK(numa_maps_is(MPOL_BIND | MPOL_F_STATIC_NODES, m, stat, last_node));
	CHECK(numa_maps_is(MPOL_BIND | MPOL_F_RELATIVE_NODES, 1, rel, first_node));
	CHECK(numa_maps_is(MPOL_PREFERRED, m, pref, last_node));
	CHECK(numa_maps_is(MPOL_PREFERRED_MANY, m, many, last_node));
	CHECK(numa_maps_is(MPOL_WEIGHTED_INTERLEAVE, m, wil, last_node));
	/* No VMA policy: the task's. */
	CHECK(set_pol(MPOL_BIND, m) == 0);
	CHECK(numa_maps_is(MPOL_DEFAULT, 0, bind, last_node));
	CHECK(set_pol(MPOL_DEFAULT, 0) == 0);
	if (__builtin_popcountl(mem_nodes) > 1) {
		char *p = map(1);
		const char *line;

		CHECK(p && mbind_(p, PAGE, MPOL_INTERLEAVE, mem_nodes, 0) == 0);
		line = numa_maps_line(p);
		snprintf(il, sizeof(il), "%08lx interleave:", (unsigned long)p);
		CHECK(!strncmp(line, il, strlen(il)) && parse_id_list(line + strlen(il)) == mem_nodes);
		CHECK(p && mbind_(p, PAGE, MPOL_LOCAL, 0, 0) == 0);
		snprintf(il, sizeof(il), "%08lx local", (unsigned long)p);
		CHECK(!strcmp(numa_maps_line(p), il));
		munmap(p, PAGE);
	}
	/* The stack is named; every line starts with an address and a policy. */
	CHECK(slurp("/proc/self/numa_maps", buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, " default stack") != NULL);
	ktap_report("numa_maps_lines", NULL);
}

static void node_counters(void)
{
	static const char *const names[] = { "numa_hit", "numa_miss", "numa_foreign",
					     "interleave_hit", "local_node", "other_node" };
	char numastat[96], node_vmstat[96], status[4096];
	long hit, il, vm_hit;
	char *p = map(NPAGES);

	snprintf(numastat, sizeof(numastat), "/sys/devices/system/node/node%d/numastat", last_node);
	snprintf(node_vmstat, sizeof(node_vmstat), "/sys/devices/system/node/node%d/vmstat", last_node);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(named_value(numastat, names[i], ' ') >= 0);
	CHECK(named_value(node_vmstat, "nr_free_pages", ' ') > 0);
	hit = named_value(numastat, "numa_hit", ' ');
	vm_hit = named_value(node_vmstat, "numa_hit", ' ');
	CHECK(p && mbind_(p, NPAGES * PAGE, MPOL_BIND, 1UL << last_node, 0) == 0);
	touch(p, NPAGES);
	CHECK(named_value(numastat, "numa_hit", ' ') >= hit + NPAGES);
	CHECK(named_value(node_vmstat, "numa_hit", ' ') >= vm_hit + NPAGES);
	il = named_value(numastat, "interleave_hit", ' ');
	CHECK(mbind_(p, NPAGES * PAGE, MPOL_INTERLEAVE, 1UL << last_node, 0) == 0);
	CHECK(madvise(p, NPAGES * PAGE, MADV_DONTNEED) == 0);
	touch(p, NPAGES);
	CHECK(named_value(numastat, "interleave_hit", ' ') >= il + NPAGES);
	munmap(p, NPAGES * PAGE);
	/* /proc/self/status: every node with memory is allowed (no cpusets). */
	CHECK(slurp("/proc/self/status", status, sizeof(status)) > 0);
	CHECK(strstr(status, "Mems_allowed_list:\t") &&
	      parse_id_list(strstr(status, "Mems_allowed_list:\t") + 19) == mem_nodes);
	CHECK(strstr(status, "Cpus_allowed_list:\t") != NULL);
	ktap_report("node_counters", NULL);
}

/* Writes value to a sysfs file: 0, or the errno. */
static int write_file(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return errno;
	if (fputs(value, f) < 0)
		err = errno;
	if (fclose(f) && !err)
		err = errno;
	return err;
}

/*
 * MPOL_WEIGHTED_INTERLEAVE with the sysfs weights: page i of the VMA goes
 * to the node whose run of weight-many indexes holds (its index mod the
 * sum of the weights). Weights 3 on the first node and 1 on the last: three
 * pages on the first, one on the last, over and over; every weight 1 is
 * plain interleave. 0 stores the default (reads back 1); 256 and text are
 * EINVAL and change nothing.
 */
static void weighted_interleave(void)
{
	char first[96], last[96], buf[16];
	unsigned long mask = (1UL << first_node) | (1UL << last_node);
	char *p = map(NPAGES);
	int bad = 0;

	snprintf(first, sizeof(first), "/sys/kernel/mm/mempolicy/weighted_interleave/node%d", first_node);
	snprintf(last, sizeof(last), "/sys/kernel/mm/mempolicy/weighted_interleave/node%d", last_node);
	CHECK(slurp(first, buf, sizeof(buf)) > 0 && !strcmp(buf, "1\n"));
	CHECK(write_file(first, "256") == EINVAL);
	CHECK(write_file(first, "three") == EINVAL);
	CHECK(write_file(first, "0") == 0);
	CHECK(slurp(first, buf, sizeof(buf)) > 0 && !strcmp(buf, "1\n"));
	CHECK(write_file(first, "3\n") == 0);
	CHECK(slurp(first, buf, sizeof(buf)) > 0 && !strcmp(buf, "3\n"));
	if (first_node != last_node) {
		CHECK(p && mbind_(p, NPAGES * PAGE, MPOL_WEIGHTED_INTERLEAVE, mask, 0) == 0);
		touch(p, NPAGES);
		for (unsigned long i = 0; i < NPAGES; i++) {
			int want = ((unsigned long)p / PAGE + i) % 4 < 3 ? first_node : last_node;

			if (node_of(p + i * PAGE) != want && bad++ < 3)
				printf("    # page %lu on node %d, want %d\n", i, node_of(p + i * PAGE), want);
		}
		CHECK(bad == 0);
		/* Back to weight 1 everywhere: the same as MPOL_INTERLEAVE. */
		CHECK(write_file(first, "1") == 0);
		CHECK(madvise(p, NPAGES * PAGE, MADV_DONTNEED) == 0);
		touch(p, NPAGES);
		CHECK(misplaced(p, NPAGES, -1, mask) == 0);
	}
	CHECK(write_file(first, "0") == 0);
	if (p)
		munmap(p, NPAGES * PAGE);
	ktap_report("weighted_interleave", NULL);
}

int main(void)
{
	char buf[64] = "";

	ktap_begin("mbind", 10);
	if (slurp("/sys/devices/system/node/has_memory", buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	mem_nodes = parse_id_list(buf);
	printf("    # nodes with memory: %s", buf[0] ? buf : "(unknown)\n");
	if (!mem_nodes)
		mem_nodes = 1;
	first_node = __builtin_ctzl(mem_nodes);
	last_node = 63 - __builtin_clzl(mem_nodes);
	errors();
	split_and_merge();
	vma_policy_places_pages();
	strict_and_move();
	mremap_keeps_vma_policy();
	fork_keeps_vma_policy();
	home_node_rules();
	numa_maps_lines();
	node_counters();
	weighted_interleave();
	return ktap_finish();
}
