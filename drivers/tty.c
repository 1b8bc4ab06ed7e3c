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
 * characters as ^X (ECHOCTL). Without ICANON a read returns what has
 * arrived, at least one byte when VMIN > 0 (VTIME is ignored). A read
 * waiting for input is interrupted by a signal (-ERESTARTSYS).
 *
 * Job control (docs/signals.md, "The terminal"): a session leader makes
 * the console its session's controlling terminal with TIOCSCTTY; the
 * session's foreground process group is set with TIOCSPGRP (tcsetpgrp).
 * With ISIG, VINTR (^C), VQUIT (^\) and VSUSP (^Z) send SIGINT, SIGQUIT
 * and SIGTSTP to that group, straight from the serial interrupt (through
 * the tty-isig thread), so a program that never reads is reached too;
 * the input not yet read is dropped and the character echoed (^C). A
 * background process of the session that reads gets SIGTTIN, one that
 * changes the settings or the foreground group (or writes, with TOSTOP)
 * SIGTTOU, with Linux's rules (kernel/pgrp.c, tty_job_control). With no
 * foreground group, VINTR/VQUIT only discard the line being edited.
 *
 * Output goes straight to console_write, the polled path printk uses,
 * which always turns \n into \r\n (OPOST|ONLCR cannot be turned off).
 *
 * ioctls: TCGETS/TCSETS/TCSETSW/TCSETSF (struct termios, the values of a
 * Linux serial console at 115200 baud), TIOCGWINSZ/TIOCSWINSZ (24 x 80
 * until set), FIONREAD, TIOCSCTTY, TIOCGPGRP/TIOCSPGRP, TIOCGSID; anything
 * else (TIOCNOTTY among them) is ENOTTY. Not seekable (ESPIPE).
 */
#define pr_fmt(fmt) "tty: " fmt
#include <quire/fs.h>
#include <quire/console.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/mutex.h>
#include <quire/spinlock.h>
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/uapi/termios.h>
#include <quire/poll.h>

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

/*
 * Job control: the session whose controlling terminal the console is
 * (0: none, or its leader has died) and its foreground process group,
 * written under ctrl_lock and read with READ_ONCE (the serial interrupt
 * too). isig_chars: VINTR, VQUIT and VSUSP in bytes 0-2 while ISIG is
 * on (0: off), for the interrupt, which cannot take termios_lock.
 */
static DEFINE_SPINLOCK(ctrl_lock);
static int ctrl_session, ctrl_pgrp;
static u32 isig_chars;
static struct task *isig_task;		/* sends what the interrupt saw */
static u32 isig_pending;		/* bit n: signal n to send */
static bool isig_flush;			/* the line and input before a ^C are void */

static void set_termios(const struct termios *t)
{
	spin_lock(&termios_lock);
	termios = *t;
	WRITE_ONCE(isig_chars, (t->c_lflag & ISIG) ?
		   (u32)t->c_cc[VINTR] | (u32)t->c_cc[VQUIT] << 8 | (u32)t->c_cc[VSUSP] << 16 : 0);
	spin_unlock(&termios_lock);
}

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

/*
 * A ^C voided the line and the input taken before it. At the start of a
 * read everything held predates it (raw too); after a refill, raw is
 * newer (the interrupt emptied the ring at the ^C) and only the line goes.
 */
static void isig_discard(bool raw_too)
{
	if (!__atomic_exchange_n(&isig_flush, false, __ATOMIC_ACQ_REL))
		return;
	if (raw_too)
		raw_head = raw_len = 0;
	line_len = line_pos = 0;
	line_done = false;
}

/*
 * Refill raw from the console: block for at least one byte (0, or
 * -ERESTARTSYS for a signal), or take what is there.
 */
static int fill_raw(bool block)
{
	raw_head = 0;
	raw_len = 0;
	if (block) {
		long n = console_read_interruptible(raw, sizeof(raw));

		if (n < 0)
			return (int)n;
		raw_len = (size_t)n;
	}
	while (raw_len < sizeof(raw)) {
		int c = console_getc(false);

		if (c < 0)
			break;
		raw[raw_len++] = (char)c;
	}
	isig_discard(false);
	return 0;
}

static ssize_t read_canonical(const struct termios *t, char *buf, size_t count, bool nonblock)
{
	size_t n;

	while (!line_done) {
		bool drop;
		char c;

		if (raw_head == raw_len) {
			int err = fill_raw(!nonblock);

			if (err)
				return err;	/* the line so far is kept */
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

	if (raw_head == raw_len) {
		int err = fill_raw(t->c_cc[VMIN] > 0 && !nonblock);

		if (err)
			return err;
	}
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

/* The session whose controlling terminal the console is, if it is the caller's; else 0. */
static int ctty_session(void)
{
	int sid = READ_ONCE(ctrl_session);

	if (!sid || !current->sighand || task_sid(current) != sid || !session_leader_alive(sid))
		return 0;
	return sid;
}

int tty_of_session(int sid, int *tpgid)
{
	if (!sid || READ_ONCE(ctrl_session) != sid) {
		*tpgid = -1;
		return 0;
	}
	*tpgid = READ_ONCE(ctrl_pgrp);
	return (5 << 8) | 1;	/* the console, 5:1, as Linux encodes tty_nr */
}

/* A background process reads (SIGTTIN) or changes the terminal (SIGTTOU): 0 if it may. */
static int job_control(int sig)
{
	int sid = ctty_session();

	return sid ? tty_job_control(sid, READ_ONCE(ctrl_pgrp), sig) : 0;
}

static ssize_t tty_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	struct termios t;
	bool nonblock = f->f_flags & O_NONBLOCK;
	ssize_t ret = job_control(SIGTTIN);

	if (ret)
		return ret;
	mutex_lock(&read_mutex);
	isig_discard(true);
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
	if (get_termios().c_lflag & TOSTOP) {
		int err = job_control(SIGTTOU);

		if (err)
			return err;
	}
	mutex_lock(&write_mutex);
	console_write(buf, count);
	mutex_unlock(&write_mutex);
	return (ssize_t)count;
}

/* ---- job control ---- */

/* The tty-isig thread: the signals the interrupt saw, echoed and sent to the foreground group. */
static int isig_thread(void *unused)
{
	static const int sigs[3] = { SIGINT, SIGQUIT, SIGTSTP };	/* VINTR, VQUIT, VSUSP */

	for (;;) {
		struct termios t;
		u32 pending;

		set_current_state(TASK_UNINTERRUPTIBLE);
		pending = __atomic_exchange_n(&isig_pending, 0, __ATOMIC_ACQ_REL);
		if (!pending) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		t = get_termios();
		for (int i = 0; i < 3; i++) {
			int pgrp = READ_ONCE(ctrl_pgrp);

			if (!(pending & (1u << sigs[i])))
				continue;
			mutex_lock(&write_mutex);
			echo_char(&t, (char)t.c_cc[i == 0 ? VINTR : i == 1 ? VQUIT : VSUSP]);
			mutex_unlock(&write_mutex);
			if (pgrp)
				kill_pgrp(pgrp, sigs[i], true);
		}
	}
	return 0;
}

bool tty_receive_signal_char(char c)
{
	u32 chars = READ_ONCE(isig_chars);
	struct task *thread = READ_ONCE(isig_task);
	int sig;

	if (!c || !chars || !thread || !READ_ONCE(ctrl_pgrp))
		return false;		/* 0 is _POSIX_VDISABLE: no character */
	if ((u8)c == (chars & 0xff))
		sig = SIGINT;
	else if ((u8)c == ((chars >> 8) & 0xff))
		sig = SIGQUIT;
	else if ((u8)c == ((chars >> 16) & 0xff))
		sig = SIGTSTP;
	else
		return false;
	__atomic_store_n(&isig_flush, true, __ATOMIC_RELEASE);
	__atomic_fetch_or(&isig_pending, 1u << sig, __ATOMIC_RELEASE);
	wake_up_process(thread);
	return true;
}

/*
 * TIOCSCTTY: a session leader makes the console its controlling terminal,
 * its group the foreground; taken from another live session only with arg
 * 1 (Linux asks CAP_SYS_ADMIN too: every process is root here).
 */
static long tiocsctty(unsigned long arg)
{
	struct task *t = current;
	int sid = t->sighand ? task_sid(t) : 0, owner;
	bool taken;

	if (!sid || sid != t->tgid)
		return -EPERM;
	owner = READ_ONCE(ctrl_session);
	taken = owner && owner != sid && session_leader_alive(owner);
	if (taken && arg != 1)
		return -EPERM;
	if (!READ_ONCE(isig_task)) {
		struct task *k = kthread_run(isig_thread, NULL, "tty-isig");

		if (k && __atomic_exchange_n(&isig_task, k, __ATOMIC_SEQ_CST))
			pr_warn("two tty-isig threads started\n");	/* harmless: both work */
	}
	spin_lock(&ctrl_lock);
	if (ctrl_session != sid) {
		WRITE_ONCE(ctrl_session, sid);
		WRITE_ONCE(ctrl_pgrp, task_pgid(t));
	}
	spin_unlock(&ctrl_lock);
	return 0;
}

/* TIOCSPGRP (tcsetpgrp): Linux's order of checks and errno values. */
static long tiocspgrp(int pgrp)
{
	int sid = ctty_session(), psid;
	long ret = job_control(SIGTTOU);

	if (ret == -EIO)
		return -ENOTTY;		/* an orphaned background group: as Linux */
	if (ret)
		return ret;
	if (pgrp < 0)
		return -EINVAL;
	if (!sid)
		return -ENOTTY;
	psid = pgrp_session(pgrp);
	if (psid < 0)
		return psid;
	if (psid != sid)
		return -EPERM;
	spin_lock(&ctrl_lock);
	if (ctrl_session == sid)
		WRITE_ONCE(ctrl_pgrp, pgrp);
	spin_unlock(&ctrl_lock);
	return 0;
}

static long tty_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	long ret;

	switch (cmd) {
	case TCGETS:
		*(struct termios *)arg = get_termios();
		return 0;
	case TCSETS:
	case TCSETSW:		/* output is synchronous: nothing to drain */
	case TCSETSF:		/* pending input is not flushed (a reader may hold it) */
		ret = job_control(SIGTTOU);
		if (ret)
			return ret;
		set_termios((const struct termios *)arg);
		return 0;
	case TIOCSCTTY:
		return tiocsctty(arg);
	case TIOCGPGRP:
	case TIOCGSID:
		if (!ctty_session())
			return -ENOTTY;
		*(int *)arg = cmd == TIOCGPGRP ? READ_ONCE(ctrl_pgrp) : READ_ONCE(ctrl_session);
		return 0;
	case TIOCSPGRP:
		return tiocspgrp(*(const int *)arg);
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

/*
 * Whether input is there for a read: a finished line, bytes taken from the
 * console and not yet read, or bytes in the console's ring. In canonical
 * mode that may be part of a line, which a read then waits to see ended
 * (Linux's n_tty edits input as it arrives and says readable only for a
 * whole line; Quire edits it in read, and doing it here would leave a
 * half-edited line behind when the reader turns ICANON off). A reader
 * inside tty_read holds read_mutex: then only the ring is looked at.
 */
static bool tty_input_ready(void)
{
	bool ready;

	if (!mutex_trylock(&read_mutex))
		return console_input_available() > 0;
	ready = line_done || raw_head < raw_len || console_input_available() > 0;
	mutex_unlock(&read_mutex);
	return ready;
}

/* poll (fs/select.c): always writable (output is polled out at once); readable as above. */
static unsigned int tty_poll(struct file *f, poll_table *pt)
{
	struct wait_queue_head *wq = console_input_wait_queue();
	unsigned int mask = POLLOUT | POLLWRNORM;

	if (wq)
		poll_wait(f, wq, pt);
	else
		poll_recheck_after(pt, 10 * NSEC_PER_MSEC);
	if (tty_input_ready())
		mask |= POLLIN | POLLRDNORM;
	return mask;
}

static const struct file_operations console_fops = {
	.poll = tty_poll,
	.read = tty_read,
	.write = tty_write,
	.ioctl = tty_ioctl,
	.llseek = no_llseek,
};

/*
 * /dev/tty (5:0): the opener's controlling terminal, which can only be the
 * console; ENXIO for a process without one, as Linux says.
 */
static int tty_dev_open(struct inode *inode, struct file *f)
{
	if (!ctty_session())
		return -ENXIO;
	f->f_op = &console_fops;
	return 0;
}

static const struct file_operations tty_dev_fops = {
	.open = tty_dev_open,
};

void tty_init(void)
{
	set_termios(&default_termios);
	register_chrdev_region(5, 1, 1, "console", &console_fops);
	register_chrdev_region(5, 0, 1, "tty", &tty_dev_fops);
}
