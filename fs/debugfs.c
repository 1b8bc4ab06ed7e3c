/*
 * debugfs: a pseudofs tree (include/quire/pseudofs.h) that nothing mounts
 * at boot, as on Linux: `mount -t debugfs none /sys/kernel/debug` (or
 * mount(2) with type "debugfs") puts it there. It holds what Linux's
 * selftests write to:
 *
 *   split_huge_pages   0200: "<pid>,0x<start>,0x<end>[,<order>]" splits the
 *                      large folios mapped in that range of that process,
 *                      "<path>,0x<off>,0x<end>[,<order>]" those of a file's
 *                      page cache, "1" every one (parsed here, split by
 *                      mm/huge_memory.c)
 *   hwpoison/corrupt-pfn 0200: a frame number: memory_failure() on it, as a
 *                      software-made error (Linux's hwpoison-inject module)
 *   hwpoison/unpoison-pfn 0200: a frame number: unpoison_memory() on it
 *                      (not while a hwpoison entry names it: EBUSY)
 *   gup_test           0600: Linux's CONFIG_GUP_TEST ioctls, for its gup_test,
 *                      gup_longterm and cow selftests (mm/gup_test.c)
 *   mm_cost            0444: Quire's cost counters (include/quire/rmap.h), a
 *                      "name value" line each: rmap calls, page-table lock
 *                      acquisitions, TLB flushes, rmap-walk steps since boot
 *                      (for ring-3 benchmarks: hmm_migrate_bench)
 *
 * and what drivers add (drivers/hmm_dmirror.c: hmm_dmirror).
 */
#define pr_fmt(fmt) "debugfs: " fmt
#include <quire/pseudofs.h>
#include <quire/huge_mm.h>
#include <quire/memory-failure.h>
#include <quire/gup.h>
#include <quire/rmap.h>
#include <quire/sched.h>
#include <quire/mutex.h>
#include <quire/string.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

struct pseudo_node *debugfs_root;

static int debugfs_get_tree(const char *options, struct super_block **out)
{
	return pseudo_get_tree(debugfs_root, options, out);
}

const struct file_system_type debugfs_fs_type = { .name = "debugfs", .get_tree = debugfs_get_tree };

/* ---- split_huge_pages ---- */

#define SPLIT_INPUT_MAX	255	/* Linux reads at most this much of one write, NUL included */

/* One conversion of Linux's sscanf: spaces, then a decimal int (%d). */
static bool scan_int(const char **pp, long *v)
{
	const char *p = *pp;
	bool neg = false;
	long n = 0;

	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		n = n * 10 + (*p++ - '0');
	*v = neg ? -n : n;
	*pp = p;
	return true;
}

/* "0x" then %lx (which itself takes spaces and one more "0x"). */
static bool scan_hex(const char **pp, unsigned long *v)
{
	const char *p = *pp;
	unsigned long n = 0;
	int digits = 0;

	if (p[0] != '0' || p[1] != 'x')
		return false;
	p += 2;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (;; p++, digits++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
			*p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;

		if (d < 0)
			break;
		n = n * 16 + (unsigned long)d;
	}
	if (!digits)
		return false;
	*v = n;
	*pp = p;
	return true;
}

/*
 * What Linux's sscanf(s, "0x%lx,0x%lx,%d") or, with pid, "%d,0x%lx,0x%lx,%d"
 * converts: the number of fields matched before the first mismatch.
 */
static int scan_split_args(const char *s, long *pid, unsigned long *start, unsigned long *end,
			   long *order)
{
	int n = 0;

	if (pid) {
		if (!scan_int(&s, pid))
			return n;
		n++;
		if (*s++ != ',')
			return n;
	}
	if (!scan_hex(&s, start))
		return n;
	n++;
	if (*s++ != ',' || !scan_hex(&s, end))
		return n;
	n++;
	if (*s++ != ',' || !scan_int(&s, order))
		return n;
	return n + 1;
}

/*
 * Linux 6.12's split_huge_pages (mm/huge_memory.c there), the same input:
 *   "<pid>,0x<vaddr_start>,0x<vaddr_end>[,<new_order>]"   a process's range
 *   "</path>,0x<pgoff_start>,0x<pgoff_end>[,<new_order>]"  a file's page cache
 *   "1"                                                    every large folio
 * Anything else is EINVAL; a path that cannot be opened is EINVAL. Quire
 * knows the writer's own process only: another pid is EINVAL (logged),
 * where Linux would look the process up (ESRCH when there is none).
 */
static int split_huge_pages_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	static DEFINE_MUTEX(split_mutex);
	char input[SPLIT_INPUT_MAX];
	unsigned long start = 0, end = 0, split = 0, total = 0;
	long pid = 0, order = 0;
	struct task *t = current;
	int n, err = 0;

	memset(input, 0, sizeof(input));
	memcpy(input, buf, min(len, sizeof(input) - 1));
	mutex_lock(&split_mutex);
	if (input[0] == '/') {
		char *comma = strchr(input, ',');
		struct file *f;

		if (comma)
			*comma = '\0';
		n = comma ? scan_split_args(comma + 1, NULL, &start, &end, &order) : 0;
		if ((n != 2 && n != 3) || vfs_open(NULL, input, O_RDONLY, 0, &f)) {
			err = -EINVAL;
		} else {
			split_huge_pages_in_mapping(f->f_mapping, start, end, (unsigned int)order,
						    &split, &total);
			fput(f);
		}
	} else {
		n = scan_split_args(input, &pid, &start, &end, &order);
		if (n == 1 && pid == 1) {
			split_huge_pages_all(&split, &total);
		} else if (n != 3 && n != 4) {
			err = -EINVAL;
		} else if (!t || !t->mm || pid != t->tgid) {
			pr_warn("split_huge_pages: pid %ld: only the writer's own process (%d) can be "
				"named (EINVAL)\n", pid, t ? t->tgid : 0);
			err = -EINVAL;
		} else {
			split_huge_pages_in_mm(t->mm, start, end, (unsigned int)order, &split, &total);
		}
	}
	mutex_unlock(&split_mutex);
	if (!err)
		pr_debug("split_huge_pages: %lu of %lu large folios split\n", split, total);
	return err;
}

static const struct pseudo_ops split_huge_pages_ops = { .store = split_huge_pages_store };

/* ---- hwpoison/corrupt-pfn ---- */

/*
 * Linux's hwpoison-inject: a frame number (decimal, 0x hex or 0 octal, as
 * Linux's debugfs attributes read it) goes to memory_failure() as a
 * software-made error: its result is the write's (-EHWPOISON for a frame
 * poisoned already, -ENXIO for no frame). Unlike MADV_HWPOISON nobody is
 * signalled at once: a process meets the hwpoison entry when it touches
 * the page.
 */
/* A frame number as Linux's debugfs attributes read it; -EINVAL if it is none. */
static int parse_pfn(const char *buf, size_t len, long long *pfn)
{
	char text[32];

	len = strnlen(buf, len);
	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, buf, len);
	text[len] = '\0';
	return kstrtoll(text, 0, pfn) ? -EINVAL : 0;
}

static int corrupt_pfn_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	long long pfn;

	if (parse_pfn(buf, len, &pfn))
		return -EINVAL;
	pr_info("Injecting memory failure at pfn %#llx\n", pfn);
	return memory_failure((unsigned long)pfn, MF_SW_SIMULATED);
}

static const struct pseudo_ops corrupt_pfn_ops = { .store = corrupt_pfn_store };

/*
 * hwpoison/unpoison-pfn, Linux's: the frame goes back to the allocator
 * (unpoison_memory: EBUSY while anything holds it or, Quire's rule, a
 * hwpoison entry names it; EOPNOTSUPP after a real machine check).
 */
static int unpoison_pfn_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	long long pfn;

	if (parse_pfn(buf, len, &pfn))
		return -EINVAL;
	return unpoison_memory((unsigned long)pfn);
}

static const struct pseudo_ops unpoison_pfn_ops = { .store = unpoison_pfn_store };

/* ---- gup_test (mm/gup_test.c) ---- */

static long gup_test_file_ioctl(struct pseudo_file *pf, unsigned int cmd, unsigned long arg)
{
	return gup_test_ioctl(cmd, arg);
}

static void gup_test_file_release(struct pseudo_file *pf)
{
	gup_test_release();
}

static const struct pseudo_ops gup_test_ops = {
	.ioctl = gup_test_file_ioctl, .release = gup_test_file_release,
};

/* ---- mm_cost ---- */

static ssize_t mm_cost_show(struct pseudo_file *pf, char *buf, size_t size)
{
	size_t n = 0;

	for (int i = 0; i < NR_MM_COST_ITEMS; i++)
		n += scnprintf(buf + n, size - n, "%s %ld\n", mm_cost_names[i],
			       atomic_long_read(&mm_cost[i]));
	return (ssize_t)n;
}

static const struct pseudo_ops mm_cost_ops = { .show = mm_cost_show };

int debugfs_init(void)
{
	struct pseudo_node *hwpoison = NULL;
	int err = -ENOMEM;

	if (debugfs_root)
		return 0;
	debugfs_root = pseudo_new_root(&debugfs_fs_type);
	if (debugfs_root)
		err = pseudo_create(debugfs_root, "split_huge_pages", 0200, &split_huge_pages_ops,
				    NULL);
	if (!err)
		hwpoison = pseudo_mkdir(debugfs_root, "hwpoison");
	if (!err && !hwpoison)
		err = -ENOMEM;
	if (!err)
		err = pseudo_create(hwpoison, "corrupt-pfn", 0200, &corrupt_pfn_ops, NULL);
	if (!err)
		err = pseudo_create(hwpoison, "unpoison-pfn", 0200, &unpoison_pfn_ops, NULL);
	if (!err)
		err = pseudo_create(debugfs_root, "gup_test", 0600, &gup_test_ops, NULL);
	if (!err)
		err = pseudo_create(debugfs_root, "mm_cost", 0444, &mm_cost_ops, NULL);
	if (err)
		pr_err("cannot build the debugfs tree: error %d\n", err);
	return err;
}
