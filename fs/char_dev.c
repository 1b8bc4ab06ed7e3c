/*
 * Character devices: a small table from device numbers to the operations
 * of the driver that owns them. A device inode's file starts with
 * def_chr_fops, whose open looks the number up and swaps in the driver's
 * operations (Linux's chrdev_open); a number nobody registered is ENXIO.
 */
#define pr_fmt(fmt) "chrdev: " fmt
#include <quire/fs.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/spinlock.h>

#define MAX_CHRDEV_REGIONS	16

struct chrdev_region {
	dev_t first;
	unsigned int count;
	const char *name;
	const struct file_operations *fops;
};

static DEFINE_SPINLOCK(chrdevs_lock);
static struct chrdev_region chrdevs[MAX_CHRDEV_REGIONS];

int register_chrdev_region(unsigned int major, unsigned int minor, unsigned int count,
			   const char *name, const struct file_operations *fops)
{
	dev_t first = MKDEV(major, minor);
	struct chrdev_region *free = NULL;
	int err = 0;

	if (!count || !fops || minor + count > MINORMASK + 1)
		return -EINVAL;
	spin_lock(&chrdevs_lock);
	for (int i = 0; i < MAX_CHRDEV_REGIONS; i++) {
		struct chrdev_region *r = &chrdevs[i];

		if (!r->count) {
			free = free ? free : r;
			continue;
		}
		if (first < r->first + r->count && r->first < first + count)
			err = -EBUSY;
	}
	if (!err && !free)
		err = -ENOSPC;
	if (!err)
		*free = (struct chrdev_region){ first, count, name, fops };
	spin_unlock(&chrdevs_lock);
	if (err)
		pr_warn("cannot register %s (%u:%u, %u numbers): error %d\n",
			name, major, minor, count, err);
	return err;
}

void unregister_chrdev_region(unsigned int major, unsigned int minor, unsigned int count)
{
	dev_t first = MKDEV(major, minor);

	spin_lock(&chrdevs_lock);
	for (int i = 0; i < MAX_CHRDEV_REGIONS; i++)
		if (chrdevs[i].count && chrdevs[i].first == first && chrdevs[i].count == count)
			chrdevs[i] = (struct chrdev_region){ 0 };
	spin_unlock(&chrdevs_lock);
}

static const struct file_operations *lookup(dev_t dev)
{
	const struct file_operations *fops = NULL;

	spin_lock(&chrdevs_lock);
	for (int i = 0; i < MAX_CHRDEV_REGIONS; i++)
		if (chrdevs[i].count && dev >= chrdevs[i].first &&
		    dev < chrdevs[i].first + chrdevs[i].count)
			fops = chrdevs[i].fops;
	spin_unlock(&chrdevs_lock);
	return fops;
}

static int chrdev_open(struct inode *inode, struct file *f)
{
	const struct file_operations *fops = lookup(inode->i_rdev);

	if (!S_ISCHR(inode->i_mode) || !fops)
		return -ENXIO;
	f->f_op = fops;
	return fops->open ? fops->open(inode, f) : 0;
}

const struct file_operations def_chr_fops = {
	.open = chrdev_open,
	.llseek = no_llseek,
};
