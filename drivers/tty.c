/*
 * /dev/console (5:1): the serial console as a terminal, with a small line
 * discipline in the spirit of Linux's n_tty.
 *
 * Input comes from console_read (the serial port's receive ring). In
 * canonical mode (ICANON, the default) bytes are edited into a line: erase
 * (VERASE, and ^H) removes a character, kill (VKILL) the line, VEOF (^D)
 * ends the line without a newline or, on an empty line, reads as end of
 * file; a read returns at most one line. ICRNL turns the Enter key's \r
 * into \n. With ECHO each byte is echoed as it is taken, control
 * characters as ^X (ECHOCTL). VINTR/VQUIT (ISIG) discard the line and echo
 * ^C: there are no signals to send yet. Without ICANON a read returns what
 * has arrived, at least one byte when VMIN > 0 (VTIME is ignored).
 *
 * Output goes straight to console_write, the polled path printk uses,
 * which always turns \n into \r\n (OPOST|ONLCR cannot be turned off).
 *
 * ioctls: TCGETS/TCSETS/TCSETSW/TCSETSF (struct termios, the values of a
 * Linux serial console at 115200 baud), TIOCGWINSZ/TIOCSWINSZ (24 x 80
 * until set), FIONREAD; anything else is ENOTTY. Not seekable (ESPIPE).
 */
#define pr_fmt(fmt) "tty: " fmt
#include <quire/fs.h>
#include <quire/console.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/mutex.h>
#include <quire/spinlock.h>
#include <quire/uapi/termios.h>

#define TTY_LINE_MAX	4096	/* Linux's N_TTY_BUF_SIZE */
#define TTY_RAW_MAX	256

#define CTRL(c)		((c) & 0x1f)

static const struct termios default_termios = {
	.c_iflag = ICRNL | IXON,
	.c_oflag = OPOST | ONLCR,
	.c_cflag = B115200 | CS8 | CREAD | HUPCL | CLOCAL,
	.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
	.c_cc = {
		[VINTR] = CTRL('C'), [VQUIT] = CTRL('\\'), [VERASE] = 0x7f,
		[VKILL] = CTRL('U'), [VEOF] = CTRL('D'), [VTIME] = 0, [VMIN] = 1,
		[VSTART] = CTRL('Q'), [VSTOP] = CTRL('S'), [VSUSP] = CTRL('Z'),
		[VREPRINT] = CTRL('R'), [VDISCARD] = CTRL('O'), [VWERASE] = CTRL('W'),
		[VLNEXT] = CTRL('V'),
	},
};

static DEFINE_SPINLOCK(termios_lock);
static struct termios termios;
static struct winsize winsize = { .ws_row = 24, .ws_col = 80 };

/* Input state, under read_mutex: one reader at a time. */
static DEFINE_MUTEX(read_mutex);
static char raw[TTY_RAW_MAX];		/* taken from the console, not yet processed */
static size_t raw_head, raw_len;
static char line[TTY_LINE_MAX];		/* the line being edited, or the finished one */
static size_t line_len, line_pos;	/* line_pos: bytes of a finished line already read */
static bool line_done;

static DEFINE_MUTEX(write_mutex);

static struct termios get_termios(void)
{
	struct termios t;

	spin_lock(&termios_lock);
	t = termios;
	spin_unlock(&termios_lock);
	return t;
}

static void echo_char(const struct termios *t, char c)
{
	if (!(t->c_lflag & ECHO))
		return;
	if ((u8)c < 0x20 && c != '\n' && c != '\t' && (t->c_lflag & ECHOCTL)) {
		char s[2] = { '^', (char)(c + '@') };

		console_write(s, 2);
	} else {
		console_write(&c, 1);
	}
}

static bool is_ctrl_echoed(const struct termios *t, char c)
{
	return (u8)c < 0x20 && c != '\t' && (t->c_lflag & ECHOCTL);
}

/* Erase the last character of the line, on the screen too. */
static void erase_one(const struct termios *t)
{
	char c;

	if (!line_len)
		return;
	c = line[--line_len];
	if ((t->c_lflag & (ECHO | ECHOE)) == (ECHO | ECHOE)) {
		console_write("\b \b", 3);
		if (is_ctrl_echoed(t, c))
			console_write("\b \b", 3);
	}
}

static void append(const struct termios *t, char c)
{
	if (line_len < TTY_LINE_MAX - 1 || c == '\n') {
		line[line_len++] = c;
		echo_char(t, c);
	}
}

/* One input byte through the canonical line discipline. */
static void canon_char(const struct termios *t, char c)
{
	const u8 *cc = t->c_cc;

	if (c == cc[VERASE] || c == '\b') {
		erase_one(t);
	} else if (c == cc[VKILL]) {
		while (line_len)
			erase_one(t);
	} else if (c == cc[VEOF]) {
		line_done = true;	/* the line so far, or end of file when empty */
	} else if ((t->c_lflag & ISIG) && (c == cc[VINTR] || c == cc[VQUIT])) {
		echo_char(t, c);
		echo_char(t, '\n');
		line_len = 0;
	} else if (c == '\n' || (cc[VEOL] && c == cc[VEOL])) {
		append(t, c);
		line_done = true;
	} else {
		append(t, c);
	}
}

static char input_map(const struct termios *t, char c, bool *drop)
{
	*drop = c == '\r' && (t->c_iflag & IGNCR);
	if (c == '\r' && (t->c_iflag & ICRNL))
		return '\n';
	if (c == '\n' && (t->c_iflag & INLCR))
		return '\r';
	return c;
}

/* Refill raw from the console: block for at least one byte, or take what is there. */
static void fill_raw(bool block)
{
	raw_head = 0;
	raw_len = 0;
	if (block) {
		raw_len = console_read(raw, sizeof(raw));
		return;
	}
	while (raw_len < sizeof(raw)) {
		int c = console_getc(false);

		if (c < 0)
			break;
		raw[raw_len++] = (char)c;
	}
}

static ssize_t read_canonical(const struct termios *t, char *buf, size_t count, bool nonblock)
{
	size_t n;

	while (!line_done) {
		bool drop;
		char c;

		if (raw_head == raw_len) {
			fill_raw(!nonblock);
			if (!raw_len)
				return -EAGAIN;
		}
		c = input_map(t, raw[raw_head++], &drop);
		if (!drop)
			canon_char(t, c);
	}
	n = min(count, line_len - line_pos);
	memcpy(buf, line + line_pos, n);
	line_pos += n;
	if (line_pos == line_len) {
		line_done = false;
		line_len = line_pos = 0;
	}
	return (ssize_t)n;
}

static ssize_t read_raw(const struct termios *t, char *buf, size_t count, bool nonblock)
{
	size_t n = 0;

	if (raw_head == raw_len)
		fill_raw(t->c_cc[VMIN] > 0 && !nonblock);
	while (n < count && raw_head < raw_len) {
		bool drop;
		char c = input_map(t, raw[raw_head++], &drop);

		if (drop)
			continue;
		echo_char(t, c);
		buf[n++] = c;
	}
	if (!n && nonblock)
		return -EAGAIN;
	return (ssize_t)n;
}

static ssize_t tty_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	struct termios t;
	bool nonblock = f->f_flags & O_NONBLOCK;
	ssize_t ret;

	mutex_lock(&read_mutex);
	t = get_termios();
	if (t.c_lflag & ICANON)
		ret = read_canonical(&t, buf, count, nonblock);
	else
		ret = read_raw(&t, buf, count, nonblock);
	mutex_unlock(&read_mutex);
	return ret;
}

static ssize_t tty_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	mutex_lock(&write_mutex);
	console_write(buf, count);
	mutex_unlock(&write_mutex);
	return (ssize_t)count;
}

static long tty_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case TCGETS:
		*(struct termios *)arg = get_termios();
		return 0;
	case TCSETS:
	case TCSETSW:		/* output is synchronous: nothing to drain */
	case TCSETSF:		/* pending input is not flushed (a reader may hold it) */
		spin_lock(&termios_lock);
		termios = *(const struct termios *)arg;
		spin_unlock(&termios_lock);
		return 0;
	case TIOCGWINSZ:
		spin_lock(&termios_lock);
		*(struct winsize *)arg = winsize;
		spin_unlock(&termios_lock);
		return 0;
	case TIOCSWINSZ:
		spin_lock(&termios_lock);
		winsize = *(const struct winsize *)arg;
		spin_unlock(&termios_lock);
		return 0;
	case FIONREAD:
		/* A snapshot: the finished line not yet read, or the raw bytes. */
		*(int *)arg = (int)(READ_ONCE(line_done) ? READ_ONCE(line_len) - READ_ONCE(line_pos)
				     : READ_ONCE(raw_len) - READ_ONCE(raw_head));
		return 0;
	default:
		return -ENOTTY;
	}
}

void tty_flush_input(void)
{
	mutex_lock(&read_mutex);
	raw_head = raw_len = 0;
	line_len = line_pos = 0;
	line_done = false;
	mutex_unlock(&read_mutex);
}

static const struct file_operations console_fops = {
	.read = tty_read,
	.write = tty_write,
	.ioctl = tty_ioctl,
	.llseek = no_llseek,
};

void tty_init(void)
{
	termios = default_termios;
	register_chrdev_region(5, 1, 1, "console", &console_fops);
}
