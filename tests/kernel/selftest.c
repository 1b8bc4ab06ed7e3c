/*
 * The test harness's own self-tests. They fail on purpose, so they never run
 * under "ktest=all": tests/plan.txt boots each one by name and checks that
 * the runner reports it as the failure it is (a crash must never look like
 * a pass).
 */
#include <quire/ktest.h>
#include <quire/panic.h>
#include <asm/cpu.h>

static void passes(struct ktest *t)
{
	KEXPECT_EQ(t, 2 + 2, 4);
}

static void null_dereference(struct ktest *t)
{
	volatile u64 *p = NULL;

	*p = 1;		/* the runner reports "not ok" with the Oops and trace */
	KEXPECT_TRUE(t, !"not reached");
}

/* A kernel fault inside a case fails that case; the following cases still run. */
KTEST_SUITE_EXPLICIT(selftest_fault,
		     KTEST_CASE(passes),
		     KTEST_CASE(null_dereference),
		     KTEST_CASE(passes));

static void wrong_sum(struct ktest *t)
{
	int sum = 2 + 2;

	KEXPECT_EQ(t, sum, 5);	/* prints expected and actual values */
}

KTEST_SUITE_EXPLICIT(selftest_fail, KTEST_CASE(wrong_sum), KTEST_CASE(passes));

static void deliberate_panic(struct ktest *t)
{
	panic("selftest: deliberate panic");
}

KTEST_SUITE_EXPLICIT(selftest_panic, KTEST_CASE(deliberate_panic));

static void hang(struct ktest *t)
{
	local_irq_disable();
	for (;;)
		halt();
}

KTEST_SUITE_EXPLICIT(selftest_hang, KTEST_CASE(hang));
