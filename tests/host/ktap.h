/*
 * A header-only KTAP version 1 harness for the host unit tests, printing
 * what kernel/ktest.c prints so that tests/qemu/runner.py reads both:
 *
 *	HOST_TEST(adds_up)
 *	{
 *		EXPECT_EQ(1 + 1, 2);
 *	}
 *	HOST_TEST_MAIN(host_math, HOST_CASE(adds_up));
 *
 * One suite per binary, nested under a one-test top level. EXPECT_* record
 * a failure with its file and line and go on. HOST_SKIP("reason") ends a
 * case whose precondition is missing, as the kernel's ktest_skip():
 * "ok N name # SKIP reason" (a failure recorded before it stands). The
 * binary exits 0 iff no case failed. A crash (ASan, UBSan) ends the
 * process: the KTAP is then incomplete and the exit status non-zero, which
 * the runner reports.
 *
 * The harness only uses the C library (printf, __builtin_vsnprintf,
 * setjmp), never the kernel code under test.
 */
#ifndef QUIRE_HOST_KTAP_H
#define QUIRE_HOST_KTAP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct host_case {
	const char *name;
	void (*run)(void);
};

#define HOST_TEST(fn)		static void fn(void)
#define HOST_CASE(fn)		{ #fn, fn }

/* Details are printed for this many failures per case, then only counted. */
#define HOST_MAX_REPORTS	20

static struct {
	const char *name;	/* the case being run */
	int failures;
	bool skipped;
	char skip_reason[128];
	jmp_buf env;		/* back to host_run, to end the case */
} host_case_state __attribute__((unused));

/* Print s quoted, with anything unprintable escaped: one KTAP line. */
static __attribute__((unused)) void host_put_str(const char *s)
{
	if (!s) {
		printf("(null)");
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
	putchar('"');
}

/* Count a failure; true when its details should still be printed. */
static __attribute__((unused)) bool host_fail(const char *file, int line)
{
	if (++host_case_state.failures > HOST_MAX_REPORTS)
		return false;
	printf("    # %s: EXPECTATION FAILED at %s:%d\n",
	       host_case_state.name, file, line);
	return true;
}

static __attribute__((unused)) void host_fail_int(const char *file, int line,
	const char *left, const char *op, const char *right,
	long long lv, long long rv)
{
	if (!host_fail(file, line))
		return;
	printf("    Expected %s %s %s, but\n", left, op, right);
	printf("        %s == %lld (0x%llx)\n", left, lv, (unsigned long long)lv);
	printf("        %s == %lld (0x%llx)\n", right, rv, (unsigned long long)rv);
}

static __attribute__((unused)) void host_fail_str(const char *file, int line,
	const char *left, const char *op, const char *right,
	const char *lv, const char *rv)
{
	if (!host_fail(file, line))
		return;
	printf("    Expected %s %s %s, but\n", left, op, right);
	printf("        %s == ", left);
	host_put_str(lv);
	printf("\n        %s == ", right);
	host_put_str(rv);
	printf("\n");
}

static __attribute__((unused, format(printf, 3, 4)))
void host_fail_msg(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (!host_fail(file, line))
		return;
	printf("    ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* End the case as skipped, with a reason (printf format); does not return. */
static __attribute__((unused, noreturn, format(printf, 1, 2)))
void host_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	__builtin_vsnprintf(host_case_state.skip_reason,
			    sizeof(host_case_state.skip_reason), fmt, ap);
	va_end(ap);
	host_case_state.skipped = true;
	longjmp(host_case_state.env, 1);
}

/* Integers are compared as long long, as in the kernel's KEXPECT_*. */
#define __HOST_INT(a, op, b)						\
	do {								\
		long long __a = (long long)(a), __b = (long long)(b);	\
		if (!(__a op __b))					\
			host_fail_int(__FILE__, __LINE__, #a, #op, #b,	\
				      __a, __b);			\
	} while (0)

#define __HOST_STR(a, op, b)						\
	do {								\
		const char *__a = (a), *__b = (b);			\
		if (!(__a && __b && __builtin_strcmp(__a, __b) op 0))	\
			host_fail_str(__FILE__, __LINE__, #a, #op, #b,	\
				      __a, __b);			\
	} while (0)

#define EXPECT_EQ(a, b)		__HOST_INT(a, ==, b)
#define EXPECT_NE(a, b)		__HOST_INT(a, !=, b)
#define EXPECT_LE(a, b)		__HOST_INT(a, <=, b)
#define EXPECT_GE(a, b)		__HOST_INT(a, >=, b)
#define EXPECT_PTR_EQ(a, b)	__HOST_INT((uintptr_t)(a), ==, (uintptr_t)(b))
#define EXPECT_STREQ(a, b)	__HOST_STR(a, ==, b)
#define EXPECT_TRUE(c)							\
	do {								\
		if (!(c))						\
			host_fail_msg(__FILE__, __LINE__,		\
				      "Expected %s to be true", #c);	\
	} while (0)
#define EXPECT_FALSE(c)							\
	do {								\
		if (c)							\
			host_fail_msg(__FILE__, __LINE__,		\
				      "Expected %s to be false", #c);	\
	} while (0)
/* A failure with a message of its own (printf format). */
#define HOST_FAIL(fmt, ...)	host_fail_msg(__FILE__, __LINE__, fmt, ##__VA_ARGS__)
/* The case cannot run here: skip it, saying why (printf format). */
#define HOST_SKIP(fmt, ...)	host_skip(fmt, ##__VA_ARGS__)

/* One case, ended by its return or by host_skip(); apart, so setjmp clobbers no counter. */
static __attribute__((unused, noinline)) void host_run_case(const struct host_case *c)
{
	host_case_state.name = c->name;
	host_case_state.failures = 0;
	host_case_state.skipped = false;
	if (!setjmp(host_case_state.env))
		c->run();
}

static __attribute__((unused))
int host_run(const char *suite, const struct host_case *cases, size_t n)
{
	int pass = 0, fail = 0, skip = 0;

	/* Line by line, so that a crash report follows the last case run. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..1\n");
	printf("    KTAP version 1\n");
	printf("    # Subtest: %s\n", suite);
	printf("    1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		host_run_case(&cases[i]);
		if (host_case_state.failures > HOST_MAX_REPORTS)
			printf("    # %s: %d more failures not shown\n", cases[i].name,
			       host_case_state.failures - HOST_MAX_REPORTS);
		if (host_case_state.failures) {
			fail++;
			printf("    not ok %zu %s\n", i + 1, cases[i].name);
		} else if (host_case_state.skipped) {
			skip++;
			printf("    ok %zu %s # SKIP %s\n", i + 1, cases[i].name,
			       host_case_state.skip_reason);
		} else {
			pass++;
			printf("    ok %zu %s\n", i + 1, cases[i].name);
		}
	}
	printf("# %s: pass:%d fail:%d skip:%d total:%zu\n", suite, pass, fail, skip, n);
	if (fail)
		printf("not ok 1 %s\n", suite);
	else if (skip && skip == (int)n)
		printf("ok 1 %s # SKIP\n", suite);
	else
		printf("ok 1 %s\n", suite);
	fflush(stdout);
	return fail ? 1 : 0;
}

#define HOST_TEST_MAIN(suite, ...)					\
	int main(void)							\
	{								\
		static const struct host_case cases[] = { __VA_ARGS__ }; \
		return host_run(#suite, cases,				\
				sizeof(cases) / sizeof(cases[0]));	\
	}

#endif
