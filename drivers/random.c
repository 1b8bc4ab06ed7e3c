/*
 * Random numbers and /dev/random (1:8), /dev/urandom (1:9), as Linux's
 * drivers/char/random.c offers them to programs: reads give random bytes
 * (never blocking: Linux's random no longer blocks once seeded), writes
 * are accepted and counted (Linux mixes them in; here they are dropped),
 * both seek to 0 and may not be mapped (ENODEV). The generator is a
 * TSC-seeded xorshift: NOT cryptographic (include/quire/random.h).
 */
#include <quire/random.h>
#include <quire/fs.h>
#include <quire/spinlock.h>
#include <quire/string.h>
#include <quire/kernel.h>
#include <asm/cpu.h>

static DEFINE_SPINLOCK(random_lock);
static u64 state = 0x5157495245ULL;

u64 get_random_u64(void)
{
	unsigned long flags;
	u64 v;

	spin_lock_irqsave(&random_lock, flags);
	state ^= rdtsc();
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	v = state;
	spin_unlock_irqrestore(&random_lock, flags);
	return v;
}

void get_random_bytes(void *buf, size_t len)
{
	for (size_t done = 0; done < len; done += 8) {
		u64 v = get_random_u64();

		memcpy((u8 *)buf + done, &v, min(len - done, (size_t)8));
	}
}

static ssize_t random_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	get_random_bytes(buf, count);
	return (ssize_t)count;
}

static ssize_t random_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	return (ssize_t)count;
}

static loff_t random_lseek(struct file *f, loff_t offset, int whence)
{
	return f->f_pos = 0;
}

static const struct file_operations random_fops = {
	.read = random_read,
	.write = random_write,
	.llseek = random_lseek,
};

void random_devices_init(void)
{
	register_chrdev_region(1, 8, 2, "random", &random_fops);
}
