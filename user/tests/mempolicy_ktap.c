/*
 * NUMA memory policy from ring 3, through the raw system calls (the same
 * binary runs on Linux 6.12, whose rules these are): set_mempolicy and
 * get_mempolicy errors, what get_mempolicy reports back, and where pages
 * really go under MPOL_BIND, MPOL_PREFERRED and MPOL_INTERLEAVE on every
 * node with memory (read from /sys/devices/system/node/has_memory), and
 * that fork inherits the policy. Prints KTAP; exits 0 when all passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "mempolicy_uapi.h"
#include "proc_files.h"

#define PAGE			4096UL
#define NPAGES			16

static unsigned long mem_nodes;		/* nodes with memory, from sysfs */

static long set_pol(int mode, const unsigned long *mask, unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

static long get_pol(int *mode, unsigned long *mask, unsigned long maxnode, void *addr, int flags)
{
	return syscall(SYS_get_mempolicy, mode, mask, maxnode, addr, flags);
}

static int nth_node(unsigned long mask, unsigned long n)
{
	n %= (unsigned long)__builtin_popcountl(mask);
	while (n--)
		mask &= mask - 1;
	return __builtin_ctzl(mask);
}

/* The node of each of NPAGES fresh pages written under the current policy: 0 if all as want(). */
static int misplaced_pages(int (*want)(unsigned long addr, unsigned long arg), unsigned long arg)
{
	char *p = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int bad = 0;

	if (p == MAP_FAILED)
		return NPAGES;
	for (int i = 0; i < NPAGES; i++) {
		int node = -1;

		p[i * PAGE] = 1;
		if (get_pol(&node, NULL, 0, p + i * PAGE, MPOL_F_NODE | MPOL_F_ADDR) ||
		    node != want((unsigned long)(p + i * PAGE), arg)) {
			if (bad++ < 3)
				printf("    # page %d at %p on node %d, want %d\n", i, (void *)(p + i * PAGE),
				       node, want((unsigned long)(p + i * PAGE), arg));
		}
	}
	munmap(p, NPAGES * PAGE);
	return bad;
}

static int want_node(unsigned long addr, unsigned long node)
{
	return (int)node;
}

static int want_interleave(unsigned long addr, unsigned long mask)
{
	return nth_node(mask, addr / PAGE);
}

static void errors(void)
{
	unsigned long m = 1, big[64] = { 0 };

	CHECK(set_pol(MPOL_MAX, &m, 64) == -1 && errno == EINVAL);
	CHECK(set_pol(MPOL_BIND | MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES, &m, 64) == -1 && errno == EINVAL);
	CHECK(set_pol(MPOL_INTERLEAVE | MPOL_F_NUMA_BALANCING, &m, 64) == -1 && errno == EINVAL);
	CHECK(set_pol(MPOL_BIND, NULL, 0) == -1 && errno == EINVAL);		/* empty */
	CHECK(set_pol(MPOL_DEFAULT, &m, 64) == -1 && errno == EINVAL);	/* DEFAULT takes no nodes */
	CHECK(set_pol(MPOL_LOCAL, &m, 64) == -1 && errno == EINVAL);
	m = 1UL << 7;							/* no such node here */
	CHECK(set_pol(MPOL_BIND, &m, 64) == -1 && errno == EINVAL);
	CHECK(set_pol(MPOL_BIND, &m, 32768 + 2) == -1 && errno == EINVAL);	/* maxnode too big */
	big[2000 / 64] = 1UL << (2000 % 64);				/* past 1024 nodes */
	big[0] = 1;
	CHECK(set_pol(MPOL_BIND, big, 4096) == -1 && errno == EINVAL);
	CHECK(set_pol(MPOL_BIND, (unsigned long *)16, 64) == -1 && errno == EFAULT);
	CHECK(get_pol(NULL, &m, 0, NULL, 0) == -1 && errno == EINVAL);	/* maxnode < nodes */
	CHECK(get_pol(NULL, NULL, 0, NULL, 8) == -1 && errno == EINVAL);	/* unknown flag */
	CHECK(get_pol(NULL, NULL, 0, NULL, MPOL_F_MEMS_ALLOWED | MPOL_F_NODE) == -1 && errno == EINVAL);
	CHECK(get_pol(NULL, NULL, 0, (void *)&m, 0) == -1 && errno == EINVAL);	/* addr without F_ADDR */
	CHECK(get_pol(NULL, NULL, 0, (void *)16, MPOL_F_ADDR) == -1 && errno == EFAULT);
	CHECK(set_pol(MPOL_DEFAULT, NULL, 0) == 0);
	CHECK(get_pol(NULL, NULL, 0, NULL, MPOL_F_NODE) == -1 && errno == EINVAL);
	ktap_report("errors", NULL);
}

static void reported_back(void)
{
	unsigned long m = mem_nodes, got = 0;
	int mode = -1;

	CHECK(get_pol(&mode, &got, 64, NULL, MPOL_F_MEMS_ALLOWED) == 0 && mode == 0 && got == mem_nodes);
	CHECK(set_pol(MPOL_BIND | MPOL_F_STATIC_NODES, &m, 64) == 0);
	CHECK(get_pol(&mode, &got, 64, NULL, 0) == 0);
	CHECK(mode == (MPOL_BIND | MPOL_F_STATIC_NODES) && got == mem_nodes);
	m |= 1UL << 9;			/* a node number that is not here drops out */
	CHECK(set_pol(MPOL_INTERLEAVE, &m, 64) == 0);
	CHECK(get_pol(&mode, &got, 64, NULL, 0) == 0 && mode == MPOL_INTERLEAVE && got == mem_nodes);
	CHECK(get_pol(&mode, NULL, 0, NULL, MPOL_F_NODE) == 0 && mode == __builtin_ctzl(mem_nodes));
	CHECK(set_pol(MPOL_PREFERRED, NULL, 0) == 0);		/* empty: local */
	CHECK(get_pol(&mode, &got, 64, NULL, 0) == 0 && mode == MPOL_LOCAL && got == 0);
	CHECK(set_pol(MPOL_DEFAULT, NULL, 0) == 0);
	CHECK(get_pol(&mode, &got, 64, NULL, 0) == 0 && mode == MPOL_DEFAULT && got == 0);
	ktap_report("reported_back", NULL);
}

static void bind_and_preferred_place_pages(void)
{
	for (int n = 0; n < 64; n++) {
		unsigned long m = 1UL << n;

		if (!(mem_nodes & m))
			continue;
		CHECK(set_pol(MPOL_BIND, &m, 64) == 0);
		CHECK(misplaced_pages(want_node, (unsigned long)n) == 0);
		CHECK(set_pol(MPOL_PREFERRED, &m, 64) == 0);
		CHECK(misplaced_pages(want_node, (unsigned long)n) == 0);
	}
	CHECK(set_pol(MPOL_DEFAULT, NULL, 0) == 0);
	ktap_report("bind_and_preferred_place_pages", NULL);
}

static void interleave_spreads_pages(void)
{
	unsigned long m = mem_nodes;

	if (__builtin_popcountl(mem_nodes) < 2) {
		ktap_report("interleave_spreads_pages", "one node with memory");
		return;
	}
	CHECK(set_pol(MPOL_INTERLEAVE, &m, 64) == 0);
	CHECK(misplaced_pages(want_interleave, mem_nodes) == 0);
	CHECK(set_pol(MPOL_DEFAULT, NULL, 0) == 0);
	ktap_report("interleave_spreads_pages", NULL);
}

static void fork_inherits(void)
{
	unsigned long m = 1UL << (63 - __builtin_clzl(mem_nodes));	/* the last node */
	int status = -1;
	pid_t pid;

	CHECK(set_pol(MPOL_BIND, &m, 64) == 0);
	pid = fork();
	if (pid == 0) {
		unsigned long got = 0;
		int mode = -1;

		_exit(get_pol(&mode, &got, 64, NULL, 0) || mode != MPOL_BIND || got != m ||
		      misplaced_pages(want_node, (unsigned long)__builtin_ctzl(m)) ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(set_pol(MPOL_DEFAULT, NULL, 0) == 0);
	ktap_report("fork_inherits", NULL);
}

int main(void)
{
	char buf[64] = "";
	int fd = open("/sys/devices/system/node/has_memory", O_RDONLY);

	ktap_begin("mempolicy", 5);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = '\0';
		close(fd);
	}
	mem_nodes = parse_id_list(buf);
	printf("    # nodes with memory: %s", buf[0] ? buf : "(unknown)\n");
	if (!mem_nodes)
		mem_nodes = 1;
	errors();
	reported_back();
	bind_and_preferred_place_pages();
	interleave_spreads_pages();
	fork_inherits();
	return ktap_finish();
}
