/*
 * printk: format a message, prefix it with a timestamp, send it to the
 * console when its level is below console_loglevel, and keep it in the log
 * buffer either way.
 */
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/cmdline.h>
#include <quire/percpu.h>
#include <asm/irqflags.h>

static int vprintk_locked(const char *fmt, va_list ap);

/* This CPU's id, or 0 before per-CPU data exists. */
static int printk_cpu_id(void)
{
	return this_cpu() ? this_cpu()->cpu : 0;
}

static void printk_relax(void)
{
	__asm__ __volatile__("" ::: "memory");
#if defined(__x86_64__)
	__builtin_ia32_pause();
#endif
}

unsigned long console_loglevel = 7;	/* show everything but debug */
CMDLINE_UINT("loglevel", console_loglevel, 0, 8,
	     "console log level: messages with a lower level number are shown (0-8)");

#define LOG_BUF_SIZE (64 * 1024)
static char log_buf[LOG_BUF_SIZE];
static u64 log_head;		/* bytes ever logged; log_buf[pos % size] */
static bool at_line_start = true;
static bool last_shown = true;	/* whether the line a KERN_CONT continues was shown */

static void log_store(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		log_buf[(log_head + i) % LOG_BUF_SIZE] = s[i];
	log_head += len;
}

u64 printk_log_pos(void)
{
	return log_head;
}

unsigned int printk_log_count(u64 since, const char *needle)
{
	size_t n = strlen(needle);
	unsigned int count = 0;

	if (log_head > LOG_BUF_SIZE && since < log_head - LOG_BUF_SIZE)
		since = log_head - LOG_BUF_SIZE;	/* older text is gone */
	if (n == 0)
		return 0;
	for (u64 pos = since; pos + n <= log_head; pos++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (log_buf[(pos + i) % LOG_BUF_SIZE] != needle[i])
				break;
		if (i == n)
			count++;
	}
	return count;
}

bool printk_log_contains(u64 since, const char *needle)
{
	return printk_log_count(since, needle) > 0;
}

#define LEVEL_CONT	(-1)
#define LEVEL_RAW	(-2)

/* Split the level prefix off a message: 0-7, LEVEL_CONT or LEVEL_RAW. */
static int parse_level(const char **fmt)
{
	const char *f = *fmt;

	if (f[0] == KERN_SOH[0] && f[1]) {
		*fmt = f + 2;
		if (f[1] == 'c')
			return LEVEL_CONT;
		if (f[1] == 'r')
			return LEVEL_RAW;
		if (f[1] >= '0' && f[1] <= '7')
			return f[1] - '0';
	}
	return LOGLEVEL_DEFAULT;
}

/*
 * One CPU prints at a time, so lines do not interleave. The lock is a raw
 * one (printk runs inside the spinlock debugging code and in NMIs) that
 * knows its owner: a CPU that re-enters printk (an NMI or a fault inside
 * printk) goes ahead, and a waiter that waits too long (a CPU stopped while
 * holding it) takes it over, because a lost panic message is worse than a
 * garbled one.
 */
static int printk_owner = -1;

static bool printk_lock(void)
{
	int me = printk_cpu_id();
	long spins = 0;

	if (__atomic_load_n(&printk_owner, __ATOMIC_RELAXED) == me)
		return false;		/* nested on this CPU */
	for (;;) {
		int free = -1;

		if (__atomic_compare_exchange_n(&printk_owner, &free, me, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
		if (++spins > 50000000) {	/* about a second or more: take it */
			__atomic_store_n(&printk_owner, me, __ATOMIC_RELAXED);
			return true;
		}
		printk_relax();
	}
}

/* Panic: the other CPUs are stopped; one of them may have stopped inside printk. */
void printk_bust_lock(void)
{
	__atomic_store_n(&printk_owner, -1, __ATOMIC_RELEASE);
}

static void printk_unlock(bool taken)
{
	if (taken)
		__atomic_store_n(&printk_owner, -1, __ATOMIC_RELEASE);
}

int vprintk(const char *fmt, va_list ap)
{
	unsigned long flags = arch_local_irq_save();
	bool taken = printk_lock();
	int len = vprintk_locked(fmt, ap);

	printk_unlock(taken);
	arch_local_irq_restore(flags);
	return len;
}

static int vprintk_locked(const char *fmt, va_list ap)
{
	char line[1024];
	char stamp[32];
	int level = parse_level(&fmt);
	int len, slen = 0;
	bool show;

	len = vsnprintf(line, sizeof(line), fmt, ap);
	if (len >= (int)sizeof(line))
		len = sizeof(line) - 1;

	/* Continuations print at the level of whatever came before them. */
	if (level == LEVEL_CONT)
		show = last_shown;
	else
		show = level == LEVEL_RAW || (unsigned long)level < console_loglevel;
	last_shown = show;
	if (at_line_start && level >= 0) {
		u64 ns = ktime_get_ns();

		slen = snprintf(stamp, sizeof(stamp), "[%5llu.%06llu] ",
				(unsigned long long)(ns / 1000000000),
				(unsigned long long)(ns % 1000000000) / 1000);
	}
	if (show) {
		if (slen)
			console_write(stamp, (size_t)slen);
		console_write(line, (size_t)len);
	}
	log_store(line, (size_t)len);
	if (len > 0)
		at_line_start = line[len - 1] == '\n';
	return len;
}

int printk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintk(fmt, ap);
	va_end(ap);
	return n;
}
