/*
 * The vfs suite, devices: /dev/null, /dev/zero, the console's ioctls and
 * line discipline (input injected into the serial receive ring, with echo
 * off so nothing reaches the log), device numbers without a driver.
 */
#include <quire/fs.h>
#include <quire/serial.h>
#include <quire/printk.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <quire/uapi/termios.h>
#include "vfs_test.h"

void dev_null_zero(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("dev");
	struct file *f;
	struct termios tio;
	u8 buf[100];
	int n;

	KASSERT_TRUE(t, dir != NULL);
	KASSERT_EQ(t, vfs_open(NULL, "/dev/null", O_RDWR, 0, &f), 0);
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), NULL), 0);
	KEXPECT_EQ(t, vfs_write(f, "gone", 4, NULL), 4);
	KEXPECT_EQ(t, vfs_llseek(f, 100, SEEK_SET), 0);
	KEXPECT_EQ(t, vfs_ioctl(f, TCGETS, (unsigned long)&tio), -ENOTTY);
	fput(f);
	KASSERT_EQ(t, vfs_open(NULL, "/dev/zero", O_RDWR, 0, &f), 0);
	memset(buf, 0xff, sizeof(buf));
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), NULL), sizeof(buf));
	KEXPECT_EQ(t, buf[0] | buf[50] | buf[99], 0);
	KEXPECT_EQ(t, vfs_write(f, buf, 7, NULL), 7);
	KEXPECT_EQ(t, vfs_ioctl(f, TIOCGWINSZ, (unsigned long)buf), -ENOTTY);
	fput(f);
	/* A regular file: not a tty, but FIONREAD answers as on Linux. */
	KEXPECT_EQ(t, vt_write_file(dir, "f", "12345", 5), 0);
	KASSERT_EQ(t, vfs_open(dir, "f", O_RDONLY, 0, &f), 0);
	KEXPECT_EQ(t, vfs_ioctl(f, TCGETS, (unsigned long)&tio), -ENOTTY);
	KEXPECT_EQ(t, vfs_llseek(f, 1, SEEK_SET), 1);
	KEXPECT_EQ(t, vfs_ioctl(f, FIONREAD, (unsigned long)&n), 0);
	KEXPECT_EQ(t, n, 4);
	fput(f);
	/* Numbers nobody registered and block devices: ENXIO; FIFOs: not yet. */
	KEXPECT_EQ(t, vfs_mknod(dir, "c42", S_IFCHR | 0600, MKDEV(42, 0)), 0);
	KEXPECT_EQ(t, vfs_open(dir, "c42", O_RDONLY, 0, &f), -ENXIO);
	KEXPECT_EQ(t, vfs_mknod(dir, "b8", S_IFBLK | 0600, MKDEV(8, 0)), 0);
	KEXPECT_EQ(t, vfs_open(dir, "b8", O_RDONLY, 0, &f), -ENXIO);
	KEXPECT_EQ(t, vfs_mknod(dir, "fifo", S_IFIFO | 0600, 0), 0);
	KEXPECT_EQ(t, vfs_open(dir, "fifo", O_RDONLY, 0, &f), -ENOSYS);
	KEXPECT_EQ(t, register_chrdev_region(1, 3, 1, "again", &def_chr_fops), -EBUSY);
	/* What the syscall layer copies around each ioctl. */
	{
		bool in, out;

		KEXPECT_EQ(t, ioctl_arg_size(TCGETS, &in, &out), 36);
		KEXPECT_TRUE(t, out && !in);
		KEXPECT_EQ(t, ioctl_arg_size(TIOCSWINSZ, &in, &out), 8);
		KEXPECT_TRUE(t, in && !out);
		KEXPECT_EQ(t, ioctl_arg_size(0x1234, &in, &out), 0);
	}
	vt_done(dir, "dev");
}

void console_ioctls(struct ktest *t)
{
	struct termios tio, saved;
	struct winsize ws, big = { 50, 132, 0, 0 };
	struct stat st;
	struct file *f;

	KASSERT_EQ(t, vfs_open(NULL, "/dev/console", O_RDWR, 0, &f), 0);
	KEXPECT_EQ(t, vfs_fstat(f, &st), 0);
	KEXPECT_EQ(t, st.st_rdev, 0x501);
	KEXPECT_EQ(t, vfs_ioctl(f, TCGETS, (unsigned long)&tio), 0);
	/* A Linux serial console: canonical, echoing, CR to NL, 115200 8N1. */
	KEXPECT_EQ(t, tio.c_lflag & (ICANON | ECHO | ISIG), ICANON | ECHO | ISIG);
	KEXPECT_EQ(t, tio.c_iflag & ICRNL, ICRNL);
	KEXPECT_EQ(t, tio.c_oflag, OPOST | ONLCR);
	KEXPECT_EQ(t, tio.c_cflag & (CSIZE | CREAD | 0010017), CS8 | CREAD | B115200);
	KEXPECT_EQ(t, tio.c_cc[VEOF], 4);
	KEXPECT_EQ(t, tio.c_cc[VERASE], 0x7f);
	KEXPECT_EQ(t, tio.c_cc[VINTR], 3);
	KEXPECT_EQ(t, tio.c_cc[VMIN], 1);
	KEXPECT_EQ(t, vfs_ioctl(f, TIOCGWINSZ, (unsigned long)&ws), 0);
	KEXPECT_EQ(t, ws.ws_row, 24);
	KEXPECT_EQ(t, ws.ws_col, 80);
	/* Set and read back; then put everything back. */
	saved = tio;
	tio.c_lflag &= ~ECHO;
	KEXPECT_EQ(t, vfs_ioctl(f, TCSETS, (unsigned long)&tio), 0);
	KEXPECT_EQ(t, vfs_ioctl(f, TCGETS, (unsigned long)&tio), 0);
	KEXPECT_EQ(t, tio.c_lflag & ECHO, 0);
	KEXPECT_EQ(t, vfs_ioctl(f, TCSETSW, (unsigned long)&saved), 0);
	KEXPECT_EQ(t, vfs_ioctl(f, TIOCSWINSZ, (unsigned long)&big), 0);
	KEXPECT_EQ(t, vfs_ioctl(f, TIOCGWINSZ, (unsigned long)&ws), 0);
	KEXPECT_EQ(t, ws.ws_col, 132);
	ws = (struct winsize){ 24, 80, 0, 0 };
	KEXPECT_EQ(t, vfs_ioctl(f, TIOCSWINSZ, (unsigned long)&ws), 0);
	KEXPECT_EQ(t, vfs_ioctl(f, 0x5499, 0), -ENOTTY);
	KEXPECT_EQ(t, vfs_ioctl(f, TIOCGPGRP, (unsigned long)&ws), -ENOTTY);
	KEXPECT_EQ(t, vfs_llseek(f, 0, SEEK_SET), -ESPIPE);
	fput(f);
}

/*
 * The console with echo off (and maybe more flags cleared). Skips the case
 * without serial input by interrupt; a console that does not open fails it.
 */
static struct file *quiet_console(struct ktest *t, u32 clear, int oflags,
				  struct termios *saved)
{
	struct termios tio;
	struct file *f;

	if (!serial_present() || !serial_irq_vector())
		ktest_skip(t, "no serial input by interrupt");
	KASSERT_EQ(t, vfs_open(NULL, "/dev/console", O_RDWR | oflags, 0, &f), 0);
	vfs_ioctl(f, TCGETS, (unsigned long)saved);
	tio = *saved;
	tio.c_lflag &= ~(ECHO | clear);
	vfs_ioctl(f, TCSETS, (unsigned long)&tio);
	tty_flush_input();
	serial_rx_flush();
	return f;
}

static void loud_console(struct file *f, struct termios *saved)
{
	tty_flush_input();
	vfs_ioctl(f, TCSETS, (unsigned long)saved);
	fput(f);
}

static ssize_t read_str(struct file *f, char *buf, size_t size)
{
	ssize_t n = vfs_read(f, buf, size - 1, NULL);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

#define INJECT(s) serial_rx_inject(s, sizeof(s) - 1)

void console_read_canonical(struct ktest *t)
{
	struct termios saved;
	struct file *f = quiet_console(t, 0, 0, &saved);
	char buf[64];

	/* Erase, Enter as \r, ^D ending a line without a newline, ^D alone: EOF. */
	INJECT("abc\x7f" "d\rline2\nxy\x04\x04");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 4);
	KEXPECT_STREQ(t, buf, "abd\n");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 6);
	KEXPECT_STREQ(t, buf, "line2\n");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 2);
	KEXPECT_STREQ(t, buf, "xy");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 0);
	/* A line read in small pieces; kill (^U) and interrupt (^C) drop the line. */
	INJECT("hello\njunk\x15ok\nbad\x03good\n");
	KEXPECT_EQ(t, read_str(f, buf, 3), 2);
	KEXPECT_STREQ(t, buf, "he");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 4);
	KEXPECT_STREQ(t, buf, "llo\n");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 3);
	KEXPECT_STREQ(t, buf, "ok\n");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 5);
	KEXPECT_STREQ(t, buf, "good\n");
	loud_console(f, &saved);
}

void console_write_and_raw(struct ktest *t)
{
	static const char line[] = "    # vfs: this line was written to /dev/console\n";
	struct termios saved, tio;
	struct file *f;
	char buf[16];

	KASSERT_EQ(t, vfs_open(NULL, "/dev/console", O_WRONLY, 0, &f), 0);
	KEXPECT_EQ(t, vfs_write(f, line, sizeof(line) - 1, NULL), sizeof(line) - 1);
	fput(f);
	f = quiet_console(t, ICANON, O_NONBLOCK, &saved);
	/* Raw mode: what has arrived, CR mapped to NL; nothing: EAGAIN (O_NONBLOCK). */
	INJECT("q\r");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 2);
	KEXPECT_STREQ(t, buf, "q\n");
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), NULL), -EAGAIN);
	/* VMIN 0: a read returns at once, with 0 bytes when none came. */
	vfs_ioctl(f, TCGETS, (unsigned long)&tio);
	tio.c_cc[VMIN] = 0;
	vfs_ioctl(f, TCSETS, (unsigned long)&tio);
	f->f_flags &= ~O_NONBLOCK;
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), NULL), 0);
	/* Canonical and O_NONBLOCK with no full line: EAGAIN, the partial line kept. */
	tio.c_lflag |= ICANON;
	vfs_ioctl(f, TCSETS, (unsigned long)&tio);
	f->f_flags |= O_NONBLOCK;
	INJECT("par");
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), NULL), -EAGAIN);
	INJECT("tial\n");
	KEXPECT_EQ(t, read_str(f, buf, sizeof(buf)), 8);
	KEXPECT_STREQ(t, buf, "partial\n");
	loud_console(f, &saved);
}
