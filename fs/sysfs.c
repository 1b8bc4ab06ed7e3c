/*
 * /sys: a pseudofs tree (include/quire/pseudofs.h) mounted at boot. Today
 * it holds the THP controls and counters, with Linux's paths and formats
 * (mm/thp_settings.c, docs/mm/thp.md):
 *
 *   /sys/kernel/mm/transparent_hugepage/enabled                      [always] madvise never
 *   /sys/kernel/mm/transparent_hugepage/hpage_pmd_size               2097152
 *   /sys/kernel/mm/transparent_hugepage/use_zero_page                0 (no huge zero page)
 *   /sys/kernel/mm/transparent_hugepage/khugepaged/<name>            Linux's numbers, no effect
 *   /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/enabled   always inherit madvise [never]
 *   /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/<name>   a number
 *
 * for the sizes 16kB .. 2048kB (orders 2..9) and the names of
 * mthp_stat_names[]; Quire's own batching switches (docs/bench.md), each
 * "1" (on, the default) or "0", the same as the command line's:
 *
 *   /sys/kernel/mm/quire/migrate_batch    (migrate_batch=)
 *   /sys/kernel/mm/quire/rmap_batch       (rmap_batch=)
 *   /sys/kernel/mm/quire/gup_batch        (gup_batch=)
 *   /sys/kernel/mm/quire/copy_mc_batch    (copy_mc_batch=)
 *   /sys/kernel/mm/quire/migrate_device_collect_unmap    (migrate_device_collect_unmap=)
 *
 * MPOL_WEIGHTED_INTERLEAVE's weights (mm/mempolicy.c), one file a node:
 *
 *   /sys/kernel/mm/mempolicy/weighted_interleave/nodeN   1..255 (0 stores the default, 1)
 *
 * /sys/kernel/debug, empty, where debugfs is mounted
 * (fs/debugfs.c); and the node and CPU topology under
 * /sys/devices/system (fs/sysfs_node.c). A write of a value the setting does not know is
 * EINVAL, and the setting stays as it was.
 */
#define pr_fmt(fmt) "sysfs: " fmt
#include <quire/pseudofs.h>
#include <quire/huge_mm.h>
#include <quire/migrate.h>
#include <quire/rmap.h>
#include <quire/copy_mc.h>
#include <quire/mempolicy.h>
#include <quire/numa.h>
#include <quire/gup.h>
#include <quire/string.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

struct pseudo_node *sysfs_root;

static int sysfs_get_tree(const char *options, struct super_block **out)
{
	return pseudo_get_tree(sysfs_root, options, out);
}

const struct file_system_type sysfs_fs_type = { .name = "sysfs", .get_tree = sysfs_get_tree };

/* data of a per-size file: order, and for a stats file the item too */
#define ORDER_ITEM(order, item)	((void *)(((unsigned long)(item) << 8) | (order)))
#define DATA_ORDER(data)	((unsigned int)((unsigned long)(data) & 0xff))
#define DATA_ITEM(data)		((enum mthp_stat_item)((unsigned long)(data) >> 8))

static ssize_t enabled_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return thp_enabled_show(buf, size);
}

static int enabled_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	return thp_enabled_store(buf, len);
}

static ssize_t order_enabled_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return thp_order_enabled_show(DATA_ORDER(pf->data), buf, size);
}

static int order_enabled_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	return thp_order_enabled_store(DATA_ORDER(pf->data), buf, len);
}

static ssize_t stat_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return scnprintf(buf, size, "%lu\n", mthp_stat_read(DATA_ORDER(pf->data),
							    DATA_ITEM(pf->data)));
}

static ssize_t defrag_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return thp_defrag_show(buf, size);
}

static int defrag_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	return thp_defrag_store(buf, len);
}

static ssize_t shmem_enabled_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return thp_shmem_enabled_show(buf, size);
}

static int shmem_enabled_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	return thp_shmem_enabled_store(buf, len);
}

static ssize_t hpage_pmd_size_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return thp_hpage_pmd_size_show(buf, size);
}

static const struct pseudo_ops enabled_ops = { .show = enabled_show, .store = enabled_store };
static const struct pseudo_ops hpage_pmd_size_ops = { .show = hpage_pmd_size_show };
static const struct pseudo_ops defrag_ops = { .show = defrag_show, .store = defrag_store };
static const struct pseudo_ops shmem_enabled_ops = {
	.show = shmem_enabled_show, .store = shmem_enabled_store,
};
static const struct pseudo_ops order_enabled_ops = {
	.show = order_enabled_show, .store = order_enabled_store,
};
static const struct pseudo_ops stat_ops = { .show = stat_show };

/* use_zero_page and khugepaged/<name>: data is the enum thp_num_setting. */
static ssize_t num_setting_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return thp_num_setting_show((enum thp_num_setting)(unsigned long)pf->data, buf, size);
}

static int num_setting_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	return thp_num_setting_store((enum thp_num_setting)(unsigned long)pf->data, buf, len);
}

static const struct pseudo_ops num_setting_ops = {
	.show = num_setting_show, .store = num_setting_store,
};

static int add_num_settings(struct pseudo_node *thp)
{
	struct pseudo_node *khugepaged = pseudo_mkdir(thp, "khugepaged");
	int err = khugepaged ? 0 : -ENOMEM;

	for (int i = 0; i < NR_THP_NUM_SETTINGS && !err; i++)
		err = pseudo_create(i == THP_USE_ZERO_PAGE ? thp : khugepaged,
				    thp_num_setting_names[i], 0644, &num_setting_ops,
				    (void *)(unsigned long)i);
	return err;
}

/* A batching switch: data points at its bool. */
static ssize_t switch_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return scnprintf(buf, size, "%d\n", READ_ONCE(*(bool *)pf->data));
}

static int switch_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	if (len && buf[len - 1] == '\n')
		len--;
	if (len != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	WRITE_ONCE(*(bool *)pf->data, buf[0] == '1');
	return 0;
}

static const struct pseudo_ops switch_ops = { .show = switch_show, .store = switch_store };

static int add_switches(struct pseudo_node *mm)
{
	static const struct { const char *name; bool *value; } switches[] = {
		{ "migrate_batch", &migrate_batching },
		{ "rmap_batch", &rmap_batching },
		{ "copy_mc_batch", &copy_mc_batching },
		{ "gup_batch", &gup_batching },
		{ "migrate_device_collect_unmap", &migrate_device_collect_unmap },
	};
	struct pseudo_node *dir = pseudo_mkdir(mm, "quire");
	int err = dir ? 0 : -ENOMEM;

	for (size_t i = 0; i < ARRAY_SIZE(switches) && !err; i++)
		err = pseudo_create(dir, switches[i].name, 0644, &switch_ops, switches[i].value);
	return err;
}

/* weighted_interleave/nodeN: data is the node id. */
static ssize_t il_weight_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return mpol_il_weight_show((int)(unsigned long)pf->data, buf, size);
}

static int il_weight_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	return mpol_il_weight_store((int)(unsigned long)pf->data, buf, len);
}

static const struct pseudo_ops il_weight_ops = { .show = il_weight_show, .store = il_weight_store };

/* /sys/kernel/mm/mempolicy/weighted_interleave/nodeN for every node the firmware described. */
static int add_weighted_interleave(struct pseudo_node *mm)
{
	struct pseudo_node *pol = pseudo_mkdir(mm, "mempolicy");
	struct pseudo_node *dir = pol ? pseudo_mkdir(pol, "weighted_interleave") : NULL;
	int err = dir ? 0 : -ENOMEM;

	for (int nid = 0; nid < MAX_NUMNODES && !err; nid++) {
		char name[16];

		if (!node_online(nid))
			continue;
		snprintf(name, sizeof(name), "node%d", nid);
		err = pseudo_create(dir, name, 0644, &il_weight_ops, (void *)(unsigned long)nid);
	}
	return err;
}

/* hugepages-<size>kB/{enabled,stats/...} of one order. */
static int add_size_dir(struct pseudo_node *thp, unsigned int order)
{
	struct pseudo_node *dir, *stats;
	char name[32];
	int err;

	snprintf(name, sizeof(name), "hugepages-%lukB", (PAGE_SIZE << order) >> 10);
	dir = pseudo_mkdir(thp, name);
	if (!dir)
		return -ENOMEM;
	err = pseudo_create(dir, "enabled", 0644, &order_enabled_ops, ORDER_ITEM(order, 0));
	stats = err ? NULL : pseudo_mkdir(dir, "stats");
	if (!err && !stats)
		err = -ENOMEM;
	for (int i = 0; i < NR_MTHP_STAT_ITEMS && !err; i++)
		err = pseudo_create(stats, mthp_stat_names[i], 0444, &stat_ops,
				    ORDER_ITEM(order, i));
	return err;
}

int sysfs_init(void)
{
	struct pseudo_node *kernel, *mm, *thp = NULL;
	int err = -ENOMEM;

	if (sysfs_root)
		return 0;
	sysfs_root = pseudo_new_root(&sysfs_fs_type);
	kernel = sysfs_root ? pseudo_mkdir(sysfs_root, "kernel") : NULL;
	/* Where debugfs is mounted (mount -t debugfs none /sys/kernel/debug): empty until then. */
	mm = kernel && pseudo_mkdir(kernel, "debug") ? pseudo_mkdir(kernel, "mm") : NULL;
	thp = mm ? pseudo_mkdir(mm, "transparent_hugepage") : NULL;
	if (!thp)
		goto fail;
	err = pseudo_create(thp, "enabled", 0644, &enabled_ops, NULL);
	if (!err)
		err = pseudo_create(thp, "defrag", 0644, &defrag_ops, NULL);
	if (!err)
		err = pseudo_create(thp, "hpage_pmd_size", 0444, &hpage_pmd_size_ops, NULL);
	if (!err)
		err = pseudo_create(thp, "shmem_enabled", 0644, &shmem_enabled_ops, NULL);
	if (!err)
		err = add_num_settings(thp);
	for (unsigned int order = THP_ORDER_MIN; order <= HPAGE_PMD_ORDER && !err; order++)
		if (THP_ORDERS_ANON & (1UL << order))
			err = add_size_dir(thp, order);
	if (!err)
		err = add_switches(mm);
	if (!err)
		err = add_weighted_interleave(mm);
	if (!err)
		err = sysfs_node_init(sysfs_root);
	if (!err)
		err = vfs_mount("/sys", pseudo_inode(sysfs_root));
	if (!err)
		return 0;
fail:
	pr_err("cannot build /sys: error %d\n", err);
	return err;
}
