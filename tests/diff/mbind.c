/*
 * mbind and set_mempolicy_home_node: every errno rule in Linux's order
 * (mode and mask first, then flags, start, length, policy, holes),
 * MPOL_DEFAULT spanning holes, MPOL_MF_STRICT on pages already present
 * (EIO, the policy left as it was), what get_mempolicy(MPOL_F_ADDR) reads
 * back, VMAs split and merged by policy (counted in /proc/self/maps),
 * interleave by page offset after mremap, and the home node's rules. Node
 * 0 and node 1 are the numa3 machine's DRAM nodes. MPOL_MF_MOVE moving
 * misplaced pages, and MPOL_WEIGHTED_INTERLEAVE with the weights of
 * /sys/kernel/mm/mempolicy/weighted_interleave (put back as found).
 */
#include "diff.h"
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "mempolicy_uapi.h"

#define PAGE			4096UL

static long mbind_(char *start, unsigned long len, long mode, unsigned long mask, unsigned long flags)
{
	return syscall(SYS_mbind, start, len, mode, mask ? &mask : NULL, mask ? 64UL : 0UL, flags);
}

#define show_mbind(label, ...)	show(label, mbind_(__VA_ARGS__))
#define show_home(label, start, len, node, flags) \
	show(label, syscall(SYS_set_mempolicy_home_node, start, len, node, flags))

/* get_mempolicy(MPOL_F_ADDR) at addr: "mode M nodes 0xN" or the error. */
static void show_policy(const char *label, char *addr)
{
	unsigned long nodes = 0;
	int mode = -1;

	if (syscall(SYS_get_mempolicy, &mode, &nodes, 64UL, addr, MPOL_F_ADDR))
		say("%s: -1 %s", label, errname(errno));
	else
		say("%s: mode %#x nodes %#lx", label, mode, nodes);
}

static void show_node(const char *label, char *addr)
{
	int node = -1;

	if (syscall(SYS_get_mempolicy, &node, NULL, 0UL, addr, MPOL_F_NODE | MPOL_F_ADDR))
		say("%s: -1 %s", label, errname(errno));
	else
		say("%s: node %d", label, node);
}

/* How many VMAs of /proc/self/maps meet [p, p + len). */
static void show_vmas(const char *label, char *p, unsigned long len)
{
	static char buf[65536];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	int count = 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long s = strtoul(l, NULL, 16), e = strtoul(strchr(l, '-') + 1, NULL, 16);

		count += s < (unsigned long)p + len && e > (unsigned long)p;
	}
	say("%s: %d VMAs", label, count);
}

/* Four pages at an address of our choosing: room made first, so that no neighbour merges. */
static char *map4(void)
{
	char *room = mmap(NULL, 6 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = room + PAGE;

	if (room == MAP_FAILED)
		return NULL;
	munmap(room, 6 * PAGE);
	return mmap(p, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		    -1, 0);
}

static void errors(void)
{
	char *p = map4();

	say("-- errors");
	show_mbind("unaligned start", p + 1, PAGE, MPOL_BIND, 1, 0);
	show_mbind("mode past the last", p, PAGE, 7, 1, 0);
	show_mbind("static and relative", p, PAGE, MPOL_BIND | MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES, 1, 0);
	show_mbind("flag MPOL_MF_LAZY", p, PAGE, MPOL_BIND, 1, 8);
	show_mbind("flag bit 20", p, PAGE, MPOL_BIND, 1, 1UL << 20);
	show_mbind("default with a node", p, PAGE, MPOL_DEFAULT, 1, 0);
	show_mbind("bind with no node", p, PAGE, MPOL_BIND, 0, 0);
	show_mbind("local with a node", p, PAGE, MPOL_LOCAL, 1, 0);
	show_mbind("bind to node 40", p, PAGE, MPOL_BIND, 1UL << 40, 0);
	show("bad mask pointer", syscall(SYS_mbind, p, PAGE, MPOL_BIND, (void *)16, 64UL, 0UL));
	show("bad mask pointer, bad flag, unaligned",
	     syscall(SYS_mbind, p + 1, PAGE, MPOL_BIND, (void *)16, 64UL, 8UL));
	show_mbind("bad flag and unaligned", p + 1, PAGE, MPOL_BIND, 1, 8);
	show_mbind("length 0, no node", p, 0, MPOL_BIND, 0, 0);
	show_mbind("length wrapping", p + PAGE, -2 * PAGE, MPOL_BIND, 1, 0);
	show_mbind("length -1 (rounds to 0)", p, -1UL, MPOL_BIND, 1, 0);
	show_mbind("MOVE_ALL, nothing present", p, 4 * PAGE, MPOL_BIND, 1, MPOL_MF_MOVE_ALL);
	show_policy("policy after it", p + 3 * PAGE);
	show_mbind("back to default", p, 4 * PAGE, MPOL_DEFAULT, 0, MPOL_MF_STRICT);
	munmap(p + PAGE, PAGE);
	show_mbind("all in the hole", p + PAGE, PAGE, MPOL_BIND, 1, 0);
	show_mbind("hole at the head", p + PAGE, 2 * PAGE, MPOL_BIND, 1, 0);
	show_mbind("hole in the middle", p, 3 * PAGE, MPOL_BIND, 1, 0);
	show_mbind("hole at the tail (length rounded up)", p, PAGE + 1, MPOL_BIND, 1, 0);
	show_policy("first page after the failures", p);
	show_mbind("default over the hole", p, 4 * PAGE, MPOL_DEFAULT, 0, 0);
	show_mbind("default all in the hole", p + PAGE, PAGE, MPOL_DEFAULT, 0, 0);
	show_policy("policy in the hole", p + PAGE);
	munmap(p, 4 * PAGE);
}

static void policies(void)
{
	char *p = map4();

	say("-- policies and VMAs");
	show_vmas("fresh", p, 4 * PAGE);
	show_mbind("bind pages 1-2 to node 1", p + PAGE, 2 * PAGE, MPOL_BIND, 2, 0);
	show_vmas("after", p, 4 * PAGE);
	show_policy("page 0", p);
	show_policy("page 1", p + PAGE);
	show_mbind("the same on page 2", p + 2 * PAGE, PAGE, MPOL_BIND, 2, 0);
	show_vmas("after", p, 4 * PAGE);
	show_mbind("the same on page 0", p, PAGE, MPOL_BIND, 2, 0);
	show_vmas("after", p, 4 * PAGE);
	show_mbind("static on page 0", p, PAGE, MPOL_BIND | MPOL_F_STATIC_NODES, 2, 0);
	show_vmas("after", p, 4 * PAGE);
	show_policy("page 0", p);
	show_mbind("interleave on page 3", p + 3 * PAGE, PAGE, MPOL_INTERLEAVE, 3, 0);
	show_policy("page 3", p + 3 * PAGE);
	show_mbind("preferred with no node on page 3", p + 3 * PAGE, PAGE, MPOL_PREFERRED, 0, 0);
	show_policy("page 3", p + 3 * PAGE);
	p[PAGE] = 1;
	show_node("page 1 written", p + PAGE);
	show_mbind("default, static flag", p, 4 * PAGE, MPOL_DEFAULT | MPOL_F_STATIC_NODES, 0, 0);
	show_vmas("after", p, 4 * PAGE);
	show_policy("page 0", p);
	munmap(p, 4 * PAGE);
}

static void strict(void)
{
	char *p = map4();

	say("-- MPOL_MF_STRICT");
	show_mbind("bind to node 0", p, 4 * PAGE, MPOL_BIND, 1, 0);
	memset(p, 1, 4 * PAGE);
	show_node("page 0", p);
	show_mbind("strict, nodes 0-1", p, 4 * PAGE, MPOL_BIND, 3, MPOL_MF_STRICT);
	show_mbind("strict, node 1", p, 4 * PAGE, MPOL_BIND, 2, MPOL_MF_STRICT);
	show_policy("policy kept", p);
	show_vmas("VMAs", p, 4 * PAGE);
	show_mbind("strict, node 1, untouched part", p + 4 * PAGE, 0, MPOL_BIND, 2, MPOL_MF_STRICT);
	show_mbind("default, strict dropped", p, 4 * PAGE, MPOL_DEFAULT, 0, MPOL_MF_STRICT);
	show_policy("policy", p);
	munmap(p, 4 * PAGE);
}

/*
 * mremap of an anonymous VMA with pages keeps its page offsets: interleave
 * goes by them (Linux's index), so the pages faulted after the move land
 * where their old addresses say. The new place is chosen an odd number of
 * pages away, so that the two answers differ over nodes 0 and 1.
 */
static void moved(void)
{
	char *room = mmap(NULL, 7 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = map4(), *q;

	say("-- mremap");
	show_mbind("interleave over nodes 0-1", p, 4 * PAGE, MPOL_INTERLEAVE, 3, 0);
	p[0] = 1;
	q = room + PAGE;
	if ((((unsigned long)q - (unsigned long)p) / PAGE) % 2 == 0)
		q += PAGE;
	yesno("moved", mremap(p, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, q) == q);
	show_policy("policy at the new place", q);
	for (int i = 0; i < 4; i++) {
		int node = -1, want = (int)(((unsigned long)p / PAGE + i) % 2);
		char label[64];

		q[i * PAGE] = 1;
		syscall(SYS_get_mempolicy, &node, NULL, 0UL, q + i * PAGE, MPOL_F_NODE | MPOL_F_ADDR);
		snprintf(label, sizeof(label), "page %d where its old offset says", i);
		yesno(label, node == want);
	}
	munmap(room, 7 * PAGE);
}

static void home(void)
{
	char *p = map4();

	say("-- set_mempolicy_home_node");
	show_home("unaligned", p + 1, PAGE, 0, 0);
	show_home("flags 1", p, PAGE, 0, 1);
	show_home("node 64", p, PAGE, 64, 0);
	show_home("node 5", p, PAGE, 5, 0);
	show_home("length 0", p, 0, 0, 0);
	show_home("no policy", p, 4 * PAGE, 0, 0);
	show_mbind("preferred on page 1", p + PAGE, PAGE, MPOL_PREFERRED, 1, 0);
	show_home("over preferred", p, 4 * PAGE, 0, 0);
	show_mbind("bind on pages 0-3", p, 4 * PAGE, MPOL_BIND, 3, 0);
	show_home("over bind, node 1", p, 2 * PAGE, 1, 0);
	show_vmas("after", p, 4 * PAGE);
	show_policy("page 0", p);
	p[0] = 1;
	show_node("page 0 written", p);
	show_mbind("preferred many on pages 2-3", p + 2 * PAGE, 2 * PAGE, MPOL_PREFERRED_MANY, 3, 0);
	show_home("over preferred many, node 1", p + 2 * PAGE, 2 * PAGE, 1, 0);
	show_vmas("after", p, 4 * PAGE);
	munmap(p, 4 * PAGE);
}

static void move(void)
{
	char *p = map4();

	say("-- MPOL_MF_MOVE");
	show_mbind("bind to node 0", p, 4 * PAGE, MPOL_BIND, 1, 0);
	memset(p, 7, 4 * PAGE);
	show_node("page 0", p);
	show_mbind("node 1, strict, no move", p, 4 * PAGE, MPOL_BIND, 2, MPOL_MF_STRICT);
	show_mbind("node 1, move", p, 4 * PAGE, MPOL_BIND, 2, MPOL_MF_MOVE);
	show_node("page 0", p);
	show_node("page 3", p + 3 * PAGE);
	show_mbind("node 1, strict and move (all there)", p, 4 * PAGE, MPOL_BIND, 2,
		   MPOL_MF_STRICT | MPOL_MF_MOVE);
	/* Pages on a node of the new mask are where they may be: they stay (Linux). */
	show_mbind("pages 0-1 interleave 0-1, move", p, 2 * PAGE, MPOL_INTERLEAVE, 3, MPOL_MF_MOVE);
	show_node("page 0", p);
	show_node("page 1", p + PAGE);
	/* Misplaced ones go where the interleave index says: nodes 0 and 2 by its parity. */
	show_mbind("pages 2-3 interleave 0,2, move", p + 2 * PAGE, 2 * PAGE, MPOL_INTERLEAVE, 5,
		   MPOL_MF_MOVE_ALL);
	for (int i = 2; i < 4; i++) {
		int node = -1, want = (int)(((unsigned long)p / PAGE + i) % 2) * 2;
		char label[64];

		syscall(SYS_get_mempolicy, &node, NULL, 0UL, p + i * PAGE, MPOL_F_NODE | MPOL_F_ADDR);
		snprintf(label, sizeof(label), "page %d where its offset says", i);
		yesno(label, node == want);
	}
	yesno("bytes kept", p[0] == 7 && p[2 * PAGE + 100] == 7 && p[4 * PAGE - 1] == 7);
	munmap(p, 4 * PAGE);
}

static void show_file(const char *label, const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		say("%s: %s", label, errname(errno));
	else
		say("%s: %.*s", label, (int)strcspn(buf, "\n"), buf);
}

static void store_file(const char *label, const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0) {
		say("%s: open %s", label, errname(errno));
		return;
	}
	show(label, write(fd, value, strlen(value)));
	close(fd);
}

#define WEIGHT0	"/sys/kernel/mm/mempolicy/weighted_interleave/node0"
#define WEIGHT1	"/sys/kernel/mm/mempolicy/weighted_interleave/node1"

/* Weights 3 and 1 over nodes 0-1: page i by index mod 4, three on node 0, one on node 1. */
static void weighted(void)
{
	char *p = map4(), was0[32] = "", was1[32] = "";
	int fd;

	say("-- weighted interleave");
	fd = open(WEIGHT0, O_RDONLY);
	if (fd >= 0 && read(fd, was0, sizeof(was0) - 1) < 0)
		was0[0] = '\0';
	close(fd);
	fd = open(WEIGHT1, O_RDONLY);
	if (fd >= 0 && read(fd, was1, sizeof(was1) - 1) < 0)
		was1[0] = '\0';
	close(fd);
	show_file("node0 weight", WEIGHT0);
	show_file("node2 weight", "/sys/kernel/mm/mempolicy/weighted_interleave/node2");
	store_file("node0 = 256", WEIGHT0, "256");
	store_file("node0 = -1", WEIGHT0, "-1");
	store_file("node0 = three", WEIGHT0, "three");
	store_file("node0 = 0", WEIGHT0, "0");
	show_file("node0 weight", WEIGHT0);
	store_file("node0 = 0x3", WEIGHT0, "0x3\n");
	show_file("node0 weight", WEIGHT0);
	store_file("node1 = 1", WEIGHT1, "1");
	show_mbind("weighted interleave 0-1", p, 4 * PAGE, MPOL_WEIGHTED_INTERLEAVE, 3, 0);
	show_policy("policy", p);
	for (int i = 0; i < 4; i++) {
		int node = -1, want = ((unsigned long)p / PAGE + i) % 4 < 3 ? 0 : 1;
		char label[64];

		p[i * PAGE] = 1;
		syscall(SYS_get_mempolicy, &node, NULL, 0UL, p + i * PAGE, MPOL_F_NODE | MPOL_F_ADDR);
		snprintf(label, sizeof(label), "page %d where the weights say", i);
		yesno(label, node == want);
	}
	store_file("node0 back", WEIGHT0, was0[0] ? was0 : "1");
	store_file("node1 back", WEIGHT1, was1[0] ? was1 : "1");
	munmap(p, 4 * PAGE);
}

int main(void)
{
	diff_begin("mbind");
	errors();
	policies();
	strict();
	moved();
	home();
	move();
	weighted();
	return 0;
}
