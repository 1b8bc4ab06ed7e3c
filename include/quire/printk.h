/*
 * printk: the kernel log. Each message may start with a level (KERN_ERR ...,
 * Linux's values); messages at or above console_loglevel are not shown on the
 * console but are still kept in the log buffer, which tests can search.
 */
#ifndef QUIRE_PRINTK_H
#define QUIRE_PRINTK_H

#include <stdarg.h>
#include <quire/types.h>
#include <quire/compiler.h>

#define KERN_SOH	"\001"
#define KERN_EMERG	KERN_SOH "0"
#define KERN_ALERT	KERN_SOH "1"
#define KERN_CRIT	KERN_SOH "2"
#define KERN_ERR	KERN_SOH "3"
#define KERN_WARNING	KERN_SOH "4"
#define KERN_NOTICE	KERN_SOH "5"
#define KERN_INFO	KERN_SOH "6"
#define KERN_DEBUG	KERN_SOH "7"
/* Continue the previous line: no level, no timestamp. */
#define KERN_CONT	KERN_SOH "c"
/* Always shown, without a timestamp: KTAP output and last words. */
#define KERN_RAW	KERN_SOH "r"

#define LOGLEVEL_DEFAULT 4	/* a message without a level is a warning */

extern unsigned long console_loglevel;

int printk(const char *fmt, ...) __printf(1, 2);
int vprintk(const char *fmt, va_list ap);

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

#define pr_emerg(fmt, ...)  printk(KERN_EMERG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...)  printk(KERN_ALERT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...)   printk(KERN_CRIT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)    printk(KERN_ERR pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)   printk(KERN_WARNING pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...) printk(KERN_NOTICE pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)   printk(KERN_INFO pr_fmt(fmt), ##__VA_ARGS__)
#define pr_debug(fmt, ...)  printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_cont(fmt, ...)   printk(KERN_CONT fmt, ##__VA_ARGS__)

/*
 * The log buffer keeps the most recent messages (with their level and
 * timestamp prefix stripped) whatever the console level. A position is a
 * count of bytes logged since boot; tests take one before doing something
 * and then ask whether a message appeared after it.
 */
u64 printk_log_pos(void);
bool printk_log_contains(u64 since, const char *needle);
/* How many times needle occurs in the log since 'since'. */
unsigned int printk_log_count(u64 since, const char *needle);

/* Panic only: forget a printk lock owner that was stopped. */
void printk_bust_lock(void);

/* Provided by the architecture / console driver. */
void console_write(const char *s, size_t len);
u64 ktime_get_ns(void);

#endif
