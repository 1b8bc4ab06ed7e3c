/*
 * echo_console=1: a kernel thread reads the console (console_read, which
 * sleeps until the serial interrupt brings input) and writes each byte back,
 * until Ctrl-D. A check by hand that typing reaches the kernel, and the
 * smallest example of a reader for students.
 */
#define pr_fmt(fmt) "echo_console: " fmt
#include <quire/console.h>
#include <quire/serial.h>
#include <quire/cmdline.h>
#include <quire/printk.h>
#include <quire/sched.h>

#define CTRL_D	0x04

static bool echo_console;
CMDLINE_BOOL("echo_console", echo_console,
	     "echo what is typed on the serial console back, from a kernel thread, until Ctrl-D");

static void echo_byte(char c)
{
	char ctl[2] = { '^', (char)(c + '@') };

	if (c == '\r' || c == '\n')
		console_write("\n", 1);		/* becomes \r\n */
	else if (c == 0x7f || c == '\b')
		console_write("\b \b", 3);	/* erase the last character on the terminal */
	else if ((unsigned char)c < 0x20)
		console_write(ctl, 2);		/* other control characters as ^X */
	else
		console_write(&c, 1);
}

static int echo_thread(void *unused)
{
	struct serial_stats st;
	u64 echoed = 0;
	char buf[64];

	pr_info("type, and each byte comes back from a kernel thread; Ctrl-D ends\n");
	for (;;) {
		size_t n = console_read(buf, sizeof(buf));

		for (size_t i = 0; i < n; i++) {
			if (buf[i] == CTRL_D)
				goto done;
			echo_byte(buf[i]);
			echoed++;
		}
	}
done:
	serial_get_stats(&st);
	console_write("\n", 1);	/* the cursor may be mid-line */
	pr_info("%llu bytes echoed; serial: %llu interrupts, %llu bytes received, "
		"%llu overruns, %llu reader sleeps\n",
		(unsigned long long)echoed, (unsigned long long)st.interrupts,
		(unsigned long long)st.rx_bytes, (unsigned long long)st.overruns,
		(unsigned long long)st.reader_sleeps);
	return 0;
}

void console_echo_run(void)
{
	struct task *t;

	if (!echo_console)
		return;
	t = kthread_run(echo_thread, NULL, "echo_console");
	if (!t) {
		pr_err("cannot start the echo thread\n");
		return;
	}
	kthread_join(t);
}
