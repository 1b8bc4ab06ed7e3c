/*
 * KTAP for the ring-3 test programs (built with musl): a program is one
 * suite of named cases, printed the way the kernel's runner prints its
 * suites so that tests/qemu/runner.py reads it.
 *
 *	ktap_begin("hello", 2);		the plan: two cases
 *	CHECK(x == 1);			a failure prints where and fails the case
 *	ktap_report("first", NULL);	ends a case ("reason" instead of NULL: SKIP)
 *	...
 *	return ktap_finish();		0 when every planned case ran and passed
 *
 * The exit status is only a summary, 0 or 1, never a count (a count of 256
 * would read as 0): the runner counts the KTAP lines, and fails the job
 * when they and the status disagree.
 */
#ifndef QUIRE_USER_KTAP_H
#define QUIRE_USER_KTAP_H

#include <stdio.h>

static const char *ktap_suite;
static int ktap_planned, ktap_ran, ktap_failed, ktap_case_failed;

static inline void ktap_begin(const char *suite, int ncases)
{
	setvbuf(stdout, NULL, _IOLBF, 0);	/* keep order with write(2) */
	ktap_suite = suite;
	ktap_planned = ncases;
	printf("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: %s\n    1..%d\n",
	       suite, ncases);
}

/* A check inside a case: a failure prints where and what, and fails the case. */
#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			printf("    # %s:%d: check failed: %s\n",	\
			       __func__, __LINE__, #cond);		\
			ktap_case_failed = 1;				\
		}							\
	} while (0)

/* Ends the current case: ok, not ok (a CHECK failed), or SKIP with a reason. */
static inline void ktap_report(const char *name, const char *skip)
{
	ktap_ran++;
	if (skip)
		printf("    ok %d %s # SKIP %s\n", ktap_ran, name, skip);
	else
		printf("    %sok %d %s\n", ktap_case_failed ? "not " : "", ktap_ran, name);
	ktap_failed |= ktap_case_failed && !skip;
	ktap_case_failed = 0;
}

/* The suite's own result line; the exit status for main to return. */
static inline int ktap_finish(void)
{
	if (ktap_ran != ktap_planned) {
		printf("    # %s: the plan said %d cases, %d ran\n", ktap_suite,
		       ktap_planned, ktap_ran);
		ktap_failed = 1;
	}
	printf("%sok 1 %s\n", ktap_failed ? "not " : "", ktap_suite);
	return ktap_failed ? 1 : 0;
}

#endif
