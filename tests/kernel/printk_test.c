/* printk levels, the log buffer and timestamps. */
#include <quire/ktest.h>
#include <quire/printk.h>
#include <quire/time.h>

static void log_buffer_keeps_messages(struct ktest *t)
{
	u64 pos = printk_log_pos();

	pr_info("printk_test: marker %d\n", 4711);
	KEXPECT_TRUE(t, printk_log_contains(pos, "printk_test: marker 4711"));
	KEXPECT_FALSE(t, printk_log_contains(pos, "marker 4712"));
	KEXPECT_EQ(t, printk_log_count(pos, "marker"), 1);
}

/* A message above the console level is hidden but still logged. */
static void hidden_levels_still_logged(struct ktest *t)
{
	unsigned long saved = console_loglevel;
	u64 pos;

	console_loglevel = 1;	/* only emergencies */
	pos = printk_log_pos();
	pr_debug("printk_test: quiet message\n");
	console_loglevel = saved;
	KEXPECT_TRUE(t, printk_log_contains(pos, "quiet message"));
}

static void levels_are_stripped(struct ktest *t)
{
	u64 pos = printk_log_pos();

	pr_err("printk_test: level check\n");
	KEXPECT_FALSE(t, printk_log_contains(pos, KERN_SOH));
}

static void clock_is_monotonic(struct ktest *t)
{
	u64 prev = ktime_get_ns();

	KEXPECT_GT(t, tsc_khz(), 100000);	/* more than 100 MHz */
	KEXPECT_LT(t, tsc_khz(), 20000000);	/* less than 20 GHz */
	for (int i = 0; i < 1000; i++) {
		u64 now = ktime_get_ns();

		KASSERT_GE(t, now, prev);
		prev = now;
	}
	KEXPECT_GT(t, prev, 0);
}

static void mdelay_waits(struct ktest *t)
{
	u64 start = ktime_get_ns();

	mdelay(5);
	KEXPECT_GE(t, ktime_get_ns() - start, 5 * NSEC_PER_MSEC);
}

KTEST_SUITE(printk,
	    KTEST_CASE(log_buffer_keeps_messages),
	    KTEST_CASE(hidden_levels_still_logged),
	    KTEST_CASE(levels_are_stripped),
	    KTEST_CASE(clock_is_monotonic),
	    KTEST_CASE(mdelay_waits));
