/*
 * /dev/null (1:3) and /dev/zero (1:5), as Linux's drivers/char/mem.c:
 * null reads as end of file and swallows writes; zero reads as zeroes and
 * swallows writes. Seeking either always lands at 0. Mapping /dev/zero
 * gives anonymous memory; /dev/null cannot be mapped (ENODEV).
 */
#include <quire/fs.h>
#include <quire/string.h>
#include <quire/mmap.h>
#include <quire/syscalls.h>
#include <quire/random.h>

static ssize_t null_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	return 0;
}

static ssize_t null_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	return (ssize_t)count;
}

static ssize_t zero_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	memset(buf, 0, count);
	return (ssize_t)count;
}

static loff_t null_lseek(struct file *f, loff_t offset, int whence)
{
	return f->f_pos = 0;
}

static const struct file_operations null_fops = {
	.read = null_read,
	.write = null_write,
	.llseek = null_lseek,
};

/*
 * mmap of /dev/zero is anonymous memory, as on Linux: a private mapping is
 * private anonymous memory, a shared one the same unnamed RAM file that
 * MAP_SHARED|MAP_ANONYMOUS gets.
 */
static int zero_mmap_backing(struct file *f, u64 len, u64 flags, struct file **backing)
{
	*backing = NULL;
	if ((flags & MAP_SHARED) && len)
		return (int)shmem_file_setup(len, backing);
	return 0;	/* private (or a length mmap refuses) */
}

static const struct file_operations zero_fops = {
	.read = zero_read,
	.write = null_write,
	.llseek = null_lseek,
	.mmap_backing = zero_mmap_backing,
};

void mem_devices_init(void)
{
	register_chrdev_region(1, 3, 1, "null", &null_fops);
	register_chrdev_region(1, 5, 1, "zero", &zero_fops);
	random_devices_init();
}
